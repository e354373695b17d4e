#include "passes/rewrite/graph_edit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

namespace qairt::rewrite {

GraphEdit::GraphEdit(const Graph& src) : src_(src), drop_(src.op_count(), false) {}

TensorId GraphEdit::NewConstant(std::string name, DType dtype, Shape shape, std::shared_ptr<const StaticData> data) {
  created_.push_back({std::move(name), dtype, std::move(shape), std::move(data), std::nullopt});
  return static_cast<TensorId>(src_.tensor_count() + created_.size() - 1);
}

TensorId GraphEdit::NewConstantF32(std::string name, Shape shape, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return NewConstant(std::move(name), DType::kFloat32, std::move(shape), StaticData::Adopt(std::move(bytes)));
}

TensorId GraphEdit::NewActivation(std::string name) {
  created_.push_back({std::move(name), DType::kUndefined, Shape(), nullptr, std::nullopt});
  return static_cast<TensorId>(src_.tensor_count() + created_.size() - 1);
}

void GraphEdit::SetEncoding(TensorId created, Encoding encoding) {
  if (created >= src_.tensor_count() && created - src_.tensor_count() < created_.size())
    created_[created - src_.tensor_count()].encoding = std::move(encoding);
}

void GraphEdit::Drop(OpId op) {
  drop_[op] = true;
  any_drop_ = true;
}

void GraphEdit::InsertAt(OpId anchor, NewOp op) { inserts_.emplace_back(anchor, std::move(op)); }

std::string GraphEdit::UniqueName(const std::string& base) {
  auto used = [&](const std::string& n) {
    if (src_.FindTensor(n) || src_.FindOp(n)) return true;
    if (std::find(taken_.begin(), taken_.end(), n) != taken_.end()) return true;
    for (const Created& c : created_)
      if (c.name == n) return true;
    for (const auto& [anchor, op] : inserts_)
      if (op.name == n) return true;
    return false;
  };
  std::string name = base;
  for (int k = 1; used(name); ++k) name = fmt::format("{}_{}", base, k);
  taken_.push_back(name);
  return name;
}

std::string GraphEdit::Replace(const std::vector<OpId>& ops, NewOp fused) {
  std::string names;
  for (OpId o : ops) {
    names += (names.empty() ? "'" : ", '") + src_.op(o).name + "'";
    Drop(o);
  }
  InsertAt(ops.back(), std::move(fused));
  return names;
}

Status GraphEdit::ApplyTo(Graph* graph) const {
  if (empty()) return Status::Ok();
  auto rebuilt = Apply();
  if (!rebuilt.ok()) return rebuilt.status();
  *graph = std::move(rebuilt).value();
  return Status::Ok();
}

Result<Graph> GraphEdit::Apply() const {
  auto order = src_.TopologicalOrder();
  if (!order.ok()) return order.status();
  const size_t n_src = src_.tensor_count();
  Graph out(src_.name());
  std::vector<TensorId> map(n_src + created_.size(), kInvalidId);

  auto copy_encoding = [&](TensorId from, TensorId to) -> Status {
    const Tensor& t = src_.tensor(from);
    return t.encoding ? out.SetEncoding(to, *t.encoding) : Status::Ok();
  };
  for (TensorId t : src_.inputs()) {
    const Tensor& in = src_.tensor(t);
    auto id = out.AddInput(in.name, in.dtype, in.shape);
    if (!id.ok()) return id.status();
    map[t] = id.value();
    if (Status s = copy_encoding(t, id.value()); !s.ok()) return s;
  }
  auto ensure = [&](TensorId t) -> Result<TensorId> {
    if (t == kInvalidId) return kInvalidId;
    if (map[t] != kInvalidId) return map[t];
    Result<TensorId> id = kInvalidId;
    if (t >= n_src) {
      const Created& c = created_[t - n_src];
      id = c.data ? out.AddConstant(c.name, c.dtype, c.shape, c.data) : out.AddTensor(c.name);
    } else {
      const Tensor& s = src_.tensor(t);
      id = s.kind == TensorKind::kStatic ? out.AddConstant(s.name, s.dtype, s.shape, s.data)
                                         : out.AddTensor(s.name, s.dtype, s.shape);
      if (id.ok())
        if (Status st = copy_encoding(t, id.value()); !st.ok()) return st;
    }
    if (!id.ok()) return id.status();
    map[t] = id.value();
    return id.value();
  };
  auto emit = [&](OpSpec spec, const std::vector<TensorId>& ins, const std::vector<TensorId>& outs) -> Status {
    for (TensorId t : ins) {
      auto id = ensure(t);
      if (!id.ok()) return id.status();
      spec.inputs.push_back(id.value());
    }
    for (TensorId t : outs) {
      auto id = ensure(t);
      if (!id.ok()) return id.status();
      spec.outputs.push_back(id.value());
    }
    const std::string name = spec.name;
    auto op = out.AddOp(std::move(spec));
    if (!op.ok()) return InvalidArgument("rewrite: cannot add op '{}': {}", name, op.status().message());
    return Status::Ok();
  };
  for (OpId id : order.value()) {
    for (const auto& [anchor, nop] : inserts_) {
      if (anchor != id) continue;
      OpSpec spec{nop.type, nop.name, {}, {}, nop.attrs, nop.source_name, nop.source_op_type};
      if (Status s = emit(std::move(spec), nop.inputs, nop.outputs); !s.ok()) return s;
    }
    if (drop_[id]) continue;
    const Op& op = src_.op(id);
    OpSpec spec{op.type, op.name, {}, {}, op.attrs, op.source_name, op.source_op_type};
    if (Status s = emit(std::move(spec), op.inputs, op.outputs); !s.ok()) return s;
  }
  for (TensorId t : src_.outputs()) {
    auto id = ensure(t);
    if (!id.ok()) return id.status();
    if (Status s = out.MarkOutput(id.value()); !s.ok()) return s;
  }
  out.InferShapes();
  // After shape inference: an encoding is validated against its tensor's shape.
  for (size_t k = 0; k < created_.size(); ++k) {
    const TensorId t = map[n_src + k];
    if (t == kInvalidId || !created_[k].encoding) continue;
    if (Status s = out.SetEncoding(t, *created_[k].encoding); !s.ok()) return s;
  }
  return out;
}

// ---- pattern queries ---------------------------------------------------------

std::optional<OpId> SoleConsumer(const Graph& g, TensorId t) {
  const Tensor& tensor = g.tensor(t);
  if (tensor.is_output || tensor.encoding || tensor.consumers.size() != 1) return std::nullopt;
  return tensor.consumers[0].op;
}

bool OnlyReadBy(const Graph& g, TensorId t, const std::vector<OpId>& ops) {
  const Tensor& tensor = g.tensor(t);
  if (tensor.is_output || tensor.encoding) return false;
  for (const Use& u : tensor.consumers)
    if (std::find(ops.begin(), ops.end(), u.op) == ops.end()) return false;
  return true;
}

std::optional<OpId> ProducerOf(const Graph& g, TensorId t) {
  if (t == kInvalidId) return std::nullopt;
  const OpId p = g.tensor(t).producer;
  if (p == kInvalidId) return std::nullopt;
  return p;
}

std::optional<std::vector<float>> FloatConstant(const Graph& g, TensorId t) {
  if (t == kInvalidId) return std::nullopt;
  const Tensor& tensor = g.tensor(t);
  if (tensor.kind != TensorKind::kStatic || tensor.dtype != DType::kFloat32 || tensor.encoding || !tensor.data)
    return std::nullopt;
  const auto n = tensor.shape.element_count();
  if (!n || tensor.data->size() < *n * sizeof(float)) return std::nullopt;
  std::vector<float> v(*n);
  if (*n) std::memcpy(v.data(), tensor.data->data(), *n * sizeof(float));
  return v;
}

std::optional<float> ScalarConstant(const Graph& g, TensorId t, size_t max_rank) {
  if (t == kInvalidId || g.tensor(t).shape.rank() > max_rank) return std::nullopt;
  const auto n = g.tensor(t).shape.element_count();
  if (!n || *n != 1) return std::nullopt;
  auto v = FloatConstant(g, t);
  if (!v) return std::nullopt;
  return (*v)[0];
}

std::optional<std::vector<float>> PerChannelConstant(const Graph& g, TensorId t, size_t rank, size_t axis,
                                                     int64_t channels) {
  if (t == kInvalidId || channels <= 0) return std::nullopt;
  const Shape& s = g.tensor(t).shape;
  if (!s.fully_known() || s.rank() > rank) return std::nullopt;
  auto v = FloatConstant(g, t);
  if (!v) return std::nullopt;
  if (v->size() == 1) return std::vector<float>(static_cast<size_t>(channels), (*v)[0]);
  // Right-aligned broadcasting: every dim but the channel one must be 1.
  const size_t lead = rank - s.rank();
  for (size_t i = 0; i < s.rank(); ++i) {
    const int64_t d = s[i].value;
    if (lead + i == axis ? d != channels : d != 1) return std::nullopt;
  }
  if (static_cast<int64_t>(v->size()) != channels) return std::nullopt;
  return v;
}

bool Near(float a, double b, double tol) { return std::fabs(static_cast<double>(a) - b) <= tol * std::max(1.0, std::fabs(b)); }

TensorId OtherInput(const Op& op, TensorId t) {
  if (op.inputs.size() != 2) return kInvalidId;
  if (op.inputs[0] == t) return op.inputs[1];
  if (op.inputs[1] == t) return op.inputs[0];
  return kInvalidId;
}

}  // namespace qairt::rewrite
