// Internal to the ONNX exporter: the model being written and the per-op
// context the export functions (export_*.cpp) work through.
#pragma once

#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnx/onnx_export.h"
#include "ir/graph.h"

namespace qairt::onnx_export {

class Exporter;

// The IR op being written.
class OpContext {
 public:
  OpContext(Exporter& ex, const Op& op) : ex_(ex), op_(op) {}

  const Op& op() const { return op_; }
  int64_t opset() const;
  Exporter& exporter() { return ex_; }

  // Inputs / outputs of the IR op.
  size_t num_inputs() const { return op_.inputs.size(); }
  size_t num_outputs() const { return op_.outputs.size(); }
  bool has_in(size_t i) const { return i < op_.inputs.size() && op_.inputs[i] != kInvalidId; }
  const Tensor& in_tensor(size_t i) const;   // precondition: has_in(i)
  const Tensor& out_tensor(size_t i) const;  // precondition: i < num_outputs()
  // The dtype input / output i has in the exported model (fixed-point values
  // travel as float32 between Q/DQ nodes).
  DType in_dtype(size_t i) const;
  DType out_dtype(size_t i) const;
  // Output i is the value `name` (no node of its own); the exporter still
  // writes the output's Q-DQ pair, and an Identity if it is a graph output.
  void Alias(size_t i, const std::string& name);
  // ONNX value name of input i ("" if absent); of output i.
  std::string in(size_t i) const;
  std::string out(size_t i) const;
  // Rank of input i, if known.
  std::optional<size_t> in_rank(size_t i) const;
  // Static integer input i as int64s (nullopt if absent or not static integer).
  std::optional<std::vector<int64_t>> in_static_ints(size_t i) const;

  // IR attributes.
  bool has(std::string_view name) const { return op_.attrs.find(name) != op_.attrs.end(); }
  int64_t Int(std::string_view name, int64_t dflt) const;
  double Float(std::string_view name, double dflt) const;
  std::string String(std::string_view name, std::string dflt) const;
  std::optional<std::vector<int64_t>> Ints(std::string_view name) const;
  std::optional<std::vector<double>> Floats(std::string_view name) const;
  // Attribute `name` or static input `input`.
  std::optional<std::vector<int64_t>> IntsOrInput(std::string_view name, size_t input) const;

  // Adds an ONNX node. The first node added without a suffix is named like
  // the op; the others "<op>/<suffix or type>".
  onnx::NodeProto* Node(const std::string& type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                        const std::string& suffix = "");
  // A fresh intermediate value name derived from the op's name.
  std::string Temp(const std::string& suffix);
  // New initializers (names derived from the op's name).
  std::string Int64s(const std::string& suffix, const std::vector<int64_t>& values, bool scalar = false);
  std::string Floats1d(const std::string& suffix, const std::vector<float>& values, std::vector<int64_t> dims = {});
  // A scalar of `dtype` (float or integer) holding `v`.
  Result<std::string> Scalar(const std::string& suffix, DType dtype, double v);

  template <typename... Args>
  Status Fail(fmt::format_string<Args...> format, Args&&... args) const {
    return Status(StatusCode::kUnsupported, fmt::format("op '{}' ({}): {}", op_.name, op_.type,
                                                        fmt::format(format, std::forward<Args>(args)...)));
  }

 private:
  Exporter& ex_;
  const Op& op_;
  bool named_ = false;  // a node already carries the op's name
};

using ExportFn = Status (*)(OpContext&);

// Export tables, one per family (export_*.cpp), keyed by IR op type.
void RegisterNnExports(std::unordered_map<std::string, ExportFn>* table);
void RegisterElementwiseExports(std::unordered_map<std::string, ExportFn>* table);
void RegisterShapeExports(std::unordered_map<std::string, ExportFn>* table);

// ONNX attribute setters.
void SetAttr(onnx::NodeProto* n, const std::string& name, int64_t v);
void SetAttr(onnx::NodeProto* n, const std::string& name, double v);
void SetAttr(onnx::NodeProto* n, const std::string& name, const std::string& v);
void SetAttr(onnx::NodeProto* n, const std::string& name, const char* v);
void SetAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v);
void SetAttr(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v);

// Where initializers at or above `threshold` bytes go instead of raw_data:
// appended to `fd` (64-byte aligned), referenced as `location`.
struct ExternalDataSink {
  int fd = -1;
  std::string location;
  uint64_t threshold = 1024;
  uint64_t end = 0;  // bytes written so far (the next offset, before alignment)
  Status error;      // first write error
};

class Exporter {
 public:
  Exporter(const Graph& graph, const OnnxExportOptions& options, ExternalDataSink* sink = nullptr);
  Status Run(onnx::ModelProto* model);

  const Graph& graph() const { return graph_; }
  int64_t opset() const { return opset_; }
  onnx::GraphProto& proto() { return *proto_; }

  // ONNX value name standing for IR tensor `id` as an op input.
  const std::string& ValueName(TensorId id) const;
  void SetValueName(TensorId id, const std::string& name) { value_names_[id] = name; }
  // See OpContext::in_dtype.
  DType ValueDType(TensorId id) const;
  std::string FreshName(const std::string& base);
  std::string FreshNodeName(const std::string& base, bool own = false);
  // Adds an initializer; returns its (fresh) name.
  std::string AddInitializer(const std::string& base, int32_t elem_type, const std::vector<int64_t>& dims,
                             const void* bytes, size_t size);

 private:
  Status WriteInputs();
  Status WriteStatics();
  Status WriteStatic(TensorId id);
  Status WriteOutputs();
  Status WriteValueInfo();
  Status WriteOp(OpId id);

  // Quantization (export_qdq.cpp).
  Status WriteLpbq(TensorId id);
  enum class Sim : uint8_t { kNone, kFixed, kHalf };
  // What the executor does to tensor `id` after it is produced (see
  // lib/exec: SimOf): quantize-dequantize, round to fp16, or nothing.
  Sim SimOf(TensorId id) const;
  // The opset option resolved (0 = automatic); fails if an explicit opset
  // cannot express a Q/DQ node the graph needs.
  Status ResolveOpset();
  // Fixed-point static tensor or graph input: integer value + DequantizeLinear.
  Status WriteDequantized(TensorId id);
  // The executor's simulation of tensor `id` applied to `value`, written to
  // `result`: QuantizeLinear -> DequantizeLinear, or Cast fp16 -> Cast back.
  Status WriteSimulation(TensorId id, const std::string& value, const std::string& result);
  // A fresh name for the simulated value of tensor `id` ("<name>_dq" or "<name>_fp16").
  std::string SimulatedName(TensorId id);
  // A Q/DQ node (ai.onnx, or com.microsoft with qdq_ms_domain).
  onnx::NodeProto* QdqNode(const std::string& type, const std::string& name);

  const Graph& graph_;
  // The tensor's bytes: raw_data, or the external data file.
  void SetData(onnx::TensorProto* t, const void* bytes, size_t size);

  OnnxExportOptions options_;
  ExternalDataSink* sink_ = nullptr;
  int64_t opset_ = 0;  // resolved
  onnx::GraphProto* proto_ = nullptr;
  std::unordered_map<std::string, ExportFn> table_;
  std::unordered_set<std::string> used_;        // value names
  std::unordered_set<std::string> used_nodes_;  // IR op names (reserved for their first node)
  std::unordered_set<std::string> node_names_;  // node names written
  std::vector<std::string> value_names_;  // per TensorId
};

// Fills an ONNX TypeProto from an IR dtype and shape. False if the dtype has
// no ONNX type.
bool FillType(DType dtype, const Shape& shape, onnx::TypeProto* type);

}  // namespace qairt::onnx_export
