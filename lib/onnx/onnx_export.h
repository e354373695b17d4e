// ONNX export: IR graph -> runnable ONNX ModelProto.
//
// The reverse of lib/onnx: every IR op type the importer produces maps
// back to standard ai.onnx ops (QNN-style ops with no ONNX twin are spelled
// with several ONNX nodes, e.g. Gelu below opset 20, LayerNorm below 17).
// Tensor layouts are the IR's, which are the source framework's (NCHW, OIHW),
// so no transposes are inserted. Static tensors become initializers
// (raw_data). Symbolic dims become dim_param.
//
// Quantization is written the way the executor simulates it (lib/exec), so
// the model computes what qairt computes:
//  - fixed-point static tensors (quantized weights, int32 biases) become an
//    integer initializer + DequantizeLinear: per-tensor, per-axis, blocked
//    (opset 21 block_size), and LPBQ as the two-level pattern the QNN
//    execution provider fuses (uint8 per-block scales dequantized by the
//    per-channel float scales give the blocked DequantizeLinear's scale);
//  - every other tensor with an integer encoding (fixed-point activations,
//    float tensors carrying an encoding) gets QuantizeLinear -> DequantizeLinear
//    after its producer; requantizations (Convert/Quantize/Dequantize ops)
//    therefore read DQ -> Q pairs;
//  - float tensors whose encoding is fp16 get a Cast to float16 and back.
// Fixed-point values travel as float32 between these nodes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt {

inline constexpr int64_t kOnnxExportMinOpset = 11;
inline constexpr int64_t kOnnxExportMaxOpset = 21;
// What opset 0 resolves to when no Q/DQ node needs opset 21.
inline constexpr int64_t kOnnxExportDefaultOpset = 17;
// OnnxExportOptions::opset's default: automatic.
inline constexpr int64_t kOnnxExportAutoOpset = 0;

struct OnnxExportOptions {
  // ai.onnx opset of the written model (11 to 21); 0 = automatic: 17, or 21
  // when a Q/DQ node needs it (4/16-bit types, blocks), unless qdq_ms_domain.
  int64_t opset = kOnnxExportAutoOpset;
  // Q/DQ nodes in the com.microsoft domain (16-bit types without opset 21,
  // the form older runtimes and the QNN EP at opset 13 read). No blocks.
  bool qdq_ms_domain = false;
  // ModelProto.metadata_props, in order (e.g. the resolved options).
  std::vector<std::pair<std::string, std::string>> metadata;
  // ModelProto.producer_name / producer_version.
  std::string producer_name = "qairt";
  std::string producer_version = QAIRT_VERSION_STRING;
  // GraphProto.name; empty = the IR graph's name.
  std::string graph_name;
  // Also write value_info (dtype and shape) for every intermediate tensor
  // whose type the IR knows.
  bool value_info = false;
  // External data (ExportOnnxFile only): initializers of at least
  // external_data_threshold bytes go to one file next to the model (ONNX's
  // external-data fields location/offset/length, offsets 64-byte aligned),
  // written as the exporter produces them. Models whose static tensors hold
  // more than kOnnxAutoExternalDataBytes are always written this way:
  // protobuf cannot hold 2 GiB.
  bool external_data = false;
  uint64_t external_data_threshold = 1024;
  // The data file's name in the model's folder; empty: "<model file name>.data".
  std::string external_data_name;
};

inline constexpr uint64_t kOnnxAutoExternalDataBytes = uint64_t{1} << 30;


// Serializes `graph` as an ONNX model into *out_bytes. Fails (naming the op
// or tensor) if the graph does not validate, an op type has no ONNX spelling
// at the chosen opset, or the model would exceed protobuf's 2 GiB limit.
Status ExportOnnx(const Graph& graph, const OnnxExportOptions& options, std::string* out_bytes);

// The same, written to `path` atomically: the bytes go to a temporary file in
// the same directory, which is fsynced and renamed over `path`. On failure no
// file (partial or temporary) is left and `path` is untouched; the error
// names the path. With external data, the data file and the model are both
// written before either is renamed into place, the data file first.
// *wrote_external_data (if not NULL) tells whether a data file was written.
Status ExportOnnxFile(const Graph& graph, const OnnxExportOptions& options, const std::string& path,
                      bool* wrote_external_data = nullptr);

}  // namespace qairt
