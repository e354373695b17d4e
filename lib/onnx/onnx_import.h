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

#include "ir/diagnostic.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt {

struct OnnxImportOptions {
  // Symbolic dim name -> value (qnn `--define_symbol`, qaic `-onnx-define-symbol`).
  std::map<std::string, int64_t, std::less<>> define_symbols;
  // Graph input name -> full static shape (`-d/--input_dim`).
  std::map<std::string, std::vector<int64_t>, std::less<>> input_dims;
  // Fold BatchNormalization into the preceding Conv/ConvTranspose/Gemm when
  // it is that op's only consumer and the weights are static.
  bool fold_batchnorm = true;
  // int64 graph inputs, int64 constants read by ops and Casts to int64 become
  // int32 (the vendor converter's default; its --keep_int64_inputs keeps them).
  bool int64_to_int32 = false;
  // Upper bound on the model file / buffer size (protobuf itself caps a
  // message at 2 GiB; bigger models keep weights in external data).
  uint64_t max_model_bytes = uint64_t{2} << 30;
};

struct OnnxImportReport {
  int64_t ir_version = 0;
  std::string producer;               // "pytorch 2.1"
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::map<std::string, size_t> onnx_ops;  // ONNX op type -> count
  std::vector<std::string> unsupported;    // "node 'n1' (com.foo::Bar)"
  size_t qdq_folded = 0;                   // Q/DQ nodes folded into encodings
  size_t constants_folded = 0;             // nodes evaluated at import time
  // Symbolic dims left after applying the options: "tensor 'x' dim 0 ('batch')".
  std::vector<std::string> dynamic_dims;
  Diagnostics diagnostics;  // every error and warning, in the order found
};

// Imports the model at `path`. External data is resolved relative to the
// model's directory. On failure the Status message lists every error; the
// report (if given) is filled either way.
Result<Graph> ImportOnnxFile(const std::string& path, const OnnxImportOptions& options, OnnxImportReport* report);

// Imports a serialized model. `model_dir` is where external data may be read
// from; empty means a model referencing external data is rejected.
Result<Graph> ImportOnnxBytes(const void* data, size_t size, const std::string& model_dir,
                              const OnnxImportOptions& options, OnnxImportReport* report);

}  // namespace qairt
