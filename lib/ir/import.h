// What every model importer (lib/onnx, lib/tflite) takes and reports: the
// format-neutral contract of an import, so that the C boundary, the CLI and
// the preparation flow treat ONNX and TFLite models alike.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/diagnostic.h"

namespace qairt {

struct ImportOptions {
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

struct ImportReport {
  int64_t ir_version = 0;                 // ONNX IR version; TFLite: schema version
  std::string producer;                   // "pytorch 2.1"
  std::map<std::string, int64_t> opsets;  // ONNX domain ("" = ai.onnx) -> version
  // Source op type -> count: ONNX "domain::OpType" (ai.onnx without domain)
  // or TFLite builtin names. The report's JSON calls it "onnx_ops" for both.
  std::map<std::string, size_t> source_ops;
  std::vector<std::string> unsupported;    // "node 'n1' (com.foo::Bar)"
  size_t qdq_folded = 0;                   // Q/DQ nodes folded into encodings
  size_t constants_folded = 0;             // nodes evaluated at import time
  // Symbolic dims left after applying the options: "tensor 'x' dim 0 ('batch')".
  std::vector<std::string> dynamic_dims;
  Diagnostics diagnostics;  // every error and warning, in the order found
};

}  // namespace qairt
