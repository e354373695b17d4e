// ONNX import: ModelProto (float or Q-DQ) -> IR graph with QNN-style ops.
//
// Pipeline: parse (size-limited) -> resolve initializers (typed fields,
// raw_data, external data memory-mapped and confined to the model's folder)
// -> order nodes -> lower node by node, folding constant subgraphs (shape
// arithmetic, ConstantOfShape, Reshape of weights, Q/DQ pairs into encodings)
// -> mark outputs -> validate. Every problem found is reported, not just the
// first; nothing the file says can crash the importer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/import.h"
#include "support/status.h"

namespace qairt {

// Imports the model at `path`. External data is resolved relative to the
// model's directory. On failure the Status message lists every error; the
// report (if given) is filled either way.
Result<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options, ImportReport* report);

// Imports a serialized model. `model_dir` is where external data may be read
// from; empty means a model referencing external data is rejected.
Result<Graph> ImportOnnxBytes(const void* data, size_t size, const std::string& model_dir,
                              const ImportOptions& options, ImportReport* report);

}  // namespace qairt
