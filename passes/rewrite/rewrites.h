// The rewrites, one per file; passes/registry.cpp lists them in the order they run.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt::rewrite {

Result<size_t> MatMulToFullyConnected(Graph* graph, std::vector<std::string>* notes);  // matmul_to_fully_connected.cpp
Result<size_t> FoldAffineIntoConv(Graph* graph, std::vector<std::string>* notes);  // fold_affine_into_conv.cpp
Result<size_t> FuseHardSwish(Graph* graph, std::vector<std::string>* notes);       // fuse_hardswish.cpp
Result<size_t> FuseLayerNorm(Graph* graph, std::vector<std::string>* notes);       // fuse_norms.cpp
Result<size_t> FuseRmsNorm(Graph* graph, std::vector<std::string>* notes);         // fuse_norms.cpp
Result<size_t> FuseGelu(Graph* graph, std::vector<std::string>* notes);            // fuse_gelu.cpp

}  // namespace qairt::rewrite
