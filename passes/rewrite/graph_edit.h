// What the rewrites share: a batch of edits to a graph (ops dropped, ops
// inserted, new constants) applied by rebuilding the graph, and the small
// pattern-matching queries every rewrite asks (the single consumer of a
// tensor, a scalar or per-channel float constant).
//
// The IR has no op removal: a fused op must produce the tensor the last op of
// its pattern produced (consumers, graph outputs and encodings files name
// it), and a tensor has one producer. So edits are collected against the
// original graph and Apply() builds a new graph that keeps every surviving
// tensor's name, dtype, shape, data and encoding, and the op order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt::rewrite {

struct NewOp {
  std::string type;
  std::string name;
  std::vector<TensorId> inputs;   // tensors of the source graph or ids from NewConstant/NewActivation
  std::vector<TensorId> outputs;  // the same
  AttributeMap attrs;
  std::string source_name;
  std::string source_op_type;
};

class GraphEdit {
 public:
  explicit GraphEdit(const Graph& src);

  const Graph& src() const { return src_; }
  // Ids >= src().tensor_count() name tensors created by the edit.
  TensorId NewConstant(std::string name, DType dtype, Shape shape, std::shared_ptr<const StaticData> data);
  TensorId NewConstantF32(std::string name, Shape shape, const std::vector<float>& values);
  TensorId NewActivation(std::string name);
  // The encoding a created tensor carries in the edited graph.
  void SetEncoding(TensorId created, Encoding encoding);
  void Drop(OpId op);
  // `op` is emitted where `anchor` stands in the op order (before it, when
  // the anchor is kept), so it sees every tensor the anchor saw.
  void InsertAt(OpId anchor, NewOp op);
  bool dropped(OpId op) const { return drop_[op]; }
  bool empty() const { return inserts_.empty() && !any_drop_; }

  // A name not used by any tensor or op of the source graph or the edit.
  std::string UniqueName(const std::string& base);

  // Drops the pattern `ops` and puts `fused` where the last of them stood;
  // returns "'a', 'b', 'c'" (the dropped ops' names) for the report.
  std::string Replace(const std::vector<OpId>& ops, NewOp fused);

  // The edited graph. Fails (naming the op) if an inserted op is refused.
  Result<Graph> Apply() const;
  // Replaces *graph by the edited graph when there are edits.
  Status ApplyTo(Graph* graph) const;

 private:
  struct Created {
    std::string name;
    DType dtype;
    Shape shape;
    std::shared_ptr<const StaticData> data;  // null: activation
    std::optional<Encoding> encoding;
  };
  const Graph& src_;
  std::vector<bool> drop_;
  bool any_drop_ = false;
  std::vector<std::pair<OpId, NewOp>> inserts_;
  std::vector<Created> created_;
  std::vector<std::string> taken_;  // names handed out by UniqueName
};

// ---- pattern queries ---------------------------------------------------------

// The op reading `t` when it is read by exactly one op, once, and is not a
// graph output and carries no encoding (an encoding pins the tensor).
std::optional<OpId> SoleConsumer(const Graph& g, TensorId t);
// Whether every read of `t` is by one of `ops` and it is no graph output nor encoded.
bool OnlyReadBy(const Graph& g, TensorId t, const std::vector<OpId>& ops);
// The producer of `t`, if any.
std::optional<OpId> ProducerOf(const Graph& g, TensorId t);
// A float32 static tensor without an encoding, as floats.
std::optional<std::vector<float>> FloatConstant(const Graph& g, TensorId t);
// A float32 constant holding one value (any shape whose rank does not exceed
// `max_rank`, so broadcasting it cannot change the other operand's shape).
std::optional<float> ScalarConstant(const Graph& g, TensorId t, size_t max_rank);
// A float32 constant that, broadcast against an output of rank `rank` whose
// channel axis is `axis` with `channels` entries, varies only along that
// axis (or is a scalar): its value per channel.
std::optional<std::vector<float>> PerChannelConstant(const Graph& g, TensorId t, size_t rank, size_t axis,
                                                     int64_t channels);
bool Near(float a, double b, double tol = 1e-4);
// Of a binary op (inputs 0 and 1), the input that is not `t`, or kInvalidId.
TensorId OtherInput(const Op& op, TensorId t);

}  // namespace qairt::rewrite
