// Internal to the ONNX importer: the value table and the per-node context the
// lowering functions (lower_*.cpp) work through.
#pragma once

#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_import.h"
#include "onnx/onnx_tensor.h"
#include "ir/graph.h"

namespace qairt::onnx_import {

// What an ONNX value name stands for during import. Constants stay out of the
// IR until an emitted op reads them (folded subgraphs leave no trace).
struct Value {
  TensorId tensor = kInvalidId;             // IR tensor, once materialised
  DType dtype = DType::kUndefined;
  Shape shape;
  std::shared_ptr<const StaticData> data;   // constants only
  std::optional<Encoding> encoding;         // constants from DequantizeLinear
  std::string ir_name;                      // name to use when materialised
  bool is_const() const { return data != nullptr; }
};

class Importer;

// The node being lowered.
class NodeContext {
 public:
  NodeContext(Importer& imp, const onnx::NodeProto& node, std::string name) : imp_(imp), node_(node), name_(std::move(name)) {}

  const onnx::NodeProto& node() const { return node_; }
  const std::string& name() const { return name_; }  // node name (synthesised if empty)
  const std::string& op_type() const { return node_.op_type(); }
  int64_t opset() const;

  size_t num_inputs() const { return static_cast<size_t>(node_.input_size()); }
  size_t num_outputs() const { return static_cast<size_t>(node_.output_size()); }
  bool has_input(size_t i) const { return i < num_inputs() && !node_.input(static_cast<int>(i)).empty(); }
  bool has_output(size_t i) const { return i < num_outputs() && !node_.output(static_cast<int>(i)).empty(); }
  const Value& in(size_t i) const;                 // absent or unknown inputs: an empty Value
  // An error naming the first of inputs [0, n) the node leaves out (an empty
  // name or too few inputs), for lowerings that reach the importer's values
  // directly rather than through in().
  Status RequireInputs(size_t n);
  // Output i's name; empty when the node has no output i (a lowering
  // reading past the end would hit a protobuf CHECK).
  const std::string& output_name(size_t i) const;
  // IR tensor for input i (materialises a constant; kInvalidId if absent).
  TensorId in_tensor(size_t i);
  bool in_is_const(size_t i) const { return has_input(i) && in(i).is_const(); }
  std::optional<std::vector<int64_t>> in_ints(size_t i) const;   // constant int tensor as int64s
  std::optional<std::vector<double>> in_floats(size_t i) const;  // constant numeric tensor as doubles

  // Attributes.
  const onnx::AttributeProto* attr(std::string_view name) const;
  int64_t Int(std::string_view name, int64_t dflt) const;
  double Float(std::string_view name, double dflt) const;
  std::string String(std::string_view name, std::string dflt) const;
  std::vector<int64_t> Ints(std::string_view name, std::vector<int64_t> dflt = {}) const;
  std::vector<double> Floats(std::string_view name, std::vector<double> dflt = {}) const;

  // Emits an IR op; `outputs` are ONNX output indices (default: all) bound to
  // the new tensors. Returns the ids of the op's output tensors.
  Result<std::vector<TensorId>> Emit(const std::string& qnn_type, std::vector<TensorId> inputs, AttributeMap attrs = {},
                                     std::optional<std::vector<size_t>> outputs = std::nullopt);
  // Emits an intermediate op whose single output gets a derived name.
  Result<TensorId> EmitTemp(const std::string& qnn_type, const std::string& suffix, std::vector<TensorId> inputs,
                            AttributeMap attrs = {});
  // A new IR constant with a derived name.
  Result<TensorId> Constant(const std::string& suffix, DType dtype, Shape shape, std::shared_ptr<const StaticData> data);
  TensorId ScalarFloat(const std::string& suffix, float v);

  // Binds output i to a constant / an existing value (no op emitted).
  void SetConst(size_t i, DType dtype, Shape shape, std::shared_ptr<const StaticData> data);
  void Alias(size_t i, const Value& v);

  template <typename... Args>
  Status Fail(std::string field, fmt::format_string<Args...> format, Args&&... args) {
    return Report(std::move(field), fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void Warn(fmt::format_string<Args...> format, Args&&... args) {
    WarnText(fmt::format(format, std::forward<Args>(args)...));
  }

  Importer& importer() { return imp_; }

 private:
  Status Report(std::string field, std::string message);
  void WarnText(std::string message);
  Importer& imp_;
  const onnx::NodeProto& node_;
  std::string name_;
};

using LowerFn = Status (*)(NodeContext&);

// Lowering tables, one per family (lower_*.cpp). Keys are ONNX op types of
// the ai.onnx domain (Q/DQ also accept com.microsoft).
void RegisterNnLowerings(std::unordered_map<std::string, LowerFn>* table);
void RegisterElementwiseLowerings(std::unordered_map<std::string, LowerFn>* table);
void RegisterShapeLowerings(std::unordered_map<std::string, LowerFn>* table);
void RegisterQdqLowerings(std::unordered_map<std::string, LowerFn>* table);

// Constant folding (fold.cpp). The folds the executor cannot express (nodes
// without an IR op, metadata-only ops on constants); true if the node was
// handled (bound, or an error reported).
bool TryFoldWithoutExecutor(NodeContext& ctx);
// Whether the node's outputs are to be computed at import: every input is a
// constant without an encoding and the node is not Q/DQ or control flow.
bool ShouldFoldByExecution(const NodeContext& ctx);
// The largest constant folding creates; bigger results stay ops (or, where no
// op can express them, are an error naming the node).
inline constexpr uint64_t kMaxFoldedBytes = uint64_t{256} << 20;
// ConstantOfShape has no op to stay as: its fill is allowed to be larger
// (generated weights of test models fill hundreds of MB).
inline constexpr uint64_t kMaxFilledBytes = uint64_t{16} << 30;

class Importer {
 public:
  Importer(std::shared_ptr<const onnx::ModelProto> model, std::string model_dir, const ImportOptions& options,
           ImportReport* report);
  Result<Graph> Run();

  Graph& graph() { return graph_; }
  const ImportOptions& options() const { return options_; }
  // Where external data may be read from (empty: a model given as bytes).
  const std::string& model_dir() const { return model_dir_; }
  ImportReport& report() { return *report_; }
  int64_t opset() const { return opset_; }

  Value* Find(const std::string& name);
  void Bind(const std::string& name, Value v);
  TensorId Materialize(const std::string& name);
  std::string UniqueName(const std::string& base);
  size_t ConsumerCount(const std::string& name) const;
  bool IsGraphOutput(const std::string& name) const;
  const onnx::NodeProto* SingleConsumer(const std::string& name) const;
  void MarkConsumed(const onnx::NodeProto* node) { skip_.insert(node); }

  void AddDiagnostic(Severity severity, DiagKind kind, std::string field, std::string message);
  // Lowers one node (top-level or from an inlined If branch).
  void LowerNode(const onnx::NodeProto& node, size_t index);
  void LowerNodeUnguarded(const onnx::NodeProto& node, size_t index, const std::string& name);
  // Runs the ops emitted since `mark` for ctx's node (all reading constants)
  // in the reference executor, binds the node's outputs to the results and
  // takes the ops back. False (graph unchanged): left as emitted.
  bool FoldEmitted(NodeContext& ctx, const Graph::Checkpoint& mark);
  // Keeps subgraph protos alive as long as values reference their bytes.
  void KeepAlive(std::shared_ptr<const void> p) { keepalive_.push_back(std::move(p)); }
  // Constants of ones made for Expand, by dtype and element count: shared
  // by every Expand to the same size (a transformer's repeated keys and
  // values: two per layer, megabytes each).
  std::map<std::pair<DType, uint64_t>, std::shared_ptr<const StaticData>>& ones() { return ones_; }

 private:
  Status LoadInitializers();
  Status LoadInputs();
  Result<std::vector<const onnx::NodeProto*>> OrderNodes();
  Status MarkOutputs();
  void CollectDynamicDims();
  // UniqueName's counters changed since the log was started, restored when a
  // folded node's ops are taken back (names stay those of a graph without them).
  void UndoNames();

  std::shared_ptr<const onnx::ModelProto> model_;
  std::string model_dir_;
  ImportOptions options_;
  ImportReport* report_;
  int64_t opset_ = 0;
  Graph graph_;
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, size_t> consumers_;
  std::unordered_map<std::string, const onnx::NodeProto*> single_consumer_;
  std::unordered_map<std::string, LowerFn> lowerings_;
  std::unordered_map<std::string, size_t> name_counter_;
  std::vector<std::pair<std::string, size_t>> name_log_;  // (base, count before)
  std::set<const onnx::NodeProto*> skip_;
  std::vector<std::shared_ptr<const void>> keepalive_;
  std::map<std::pair<DType, uint64_t>, std::shared_ptr<const StaticData>> ones_;
};

// Helpers shared by the lowering files.
std::shared_ptr<const StaticData> BytesOf(const void* p, size_t n);
template <typename T>
std::shared_ptr<const StaticData> VectorData(const std::vector<T>& v) {
  return StaticData::Copy(v.data(), v.size() * sizeof(T));
}
inline std::shared_ptr<const StaticData> VectorData(std::vector<float>&& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return StaticData::Adopt(std::move(bytes));
}
std::vector<float> ReadAsFloats(const Value& v);  // any numeric constant, converted
// A lowering's last Emit as its status.
inline Status Done(const Result<std::vector<TensorId>>& r) { return r.ok() ? Status::Ok() : r.status(); }

}  // namespace qairt::onnx_import
