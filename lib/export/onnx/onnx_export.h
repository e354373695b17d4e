// ONNX export: IR graph -> runnable ONNX ModelProto.
//
// The reverse of lib/import/onnx: every IR op type the importer produces maps
// back to standard ai.onnx ops (QNN-style ops with no ONNX twin are spelled
// with several ONNX nodes, e.g. Gelu below opset 20, LayerNorm below 17).
// Tensor layouts are the IR's, which are the source framework's (NCHW, OIHW),
// so no transposes are inserted. Static tensors become initializers
// (raw_data); fixed-point static tensors (quantized weights with an
// encoding) become an integer initializer + DequantizeLinear (per-tensor or
// per-axis). Encodings on float activations are not written (the Q-DQ export
// of activations is a later issue). Symbolic dims become dim_param.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt {

struct OnnxExportOptions {
  // ai.onnx opset of the written model (11 to 21).
  int64_t opset = 17;
  // ModelProto.producer_name / producer_version.
  std::string producer_name = "qairt";
  std::string producer_version = QAIRT_VERSION_STRING;
  // GraphProto.name; empty = the IR graph's name.
  std::string graph_name;
  // Also write value_info (dtype and shape) for every intermediate tensor
  // whose type the IR knows.
  bool value_info = false;
};

inline constexpr int64_t kOnnxExportMinOpset = 11;
inline constexpr int64_t kOnnxExportMaxOpset = 21;

// Serializes `graph` as an ONNX model into *out_bytes. Fails (naming the op
// or tensor) if the graph does not validate, an op type has no ONNX spelling
// at the chosen opset, or the model would exceed protobuf's 2 GiB limit.
Status ExportOnnx(const Graph& graph, const OnnxExportOptions& options, std::string* out_bytes);

// The same, written to `path` atomically: the bytes go to a temporary file in
// the same directory, which is fsynced and renamed over `path`. On failure no
// file (partial or temporary) is left and `path` is untouched; the error
// names the path.
Status ExportOnnxFile(const Graph& graph, const OnnxExportOptions& options, const std::string& path);

}  // namespace qairt
