#include "ir/graph.h"

#include <atomic>

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "ir/op_registry.h"
#include "support/shares.h"

namespace qairt {

std::string_view TensorRoleName(TensorRole r) {
  switch (r) {
    case TensorRole::kInput: return "APP_WRITE";
    case TensorRole::kOutput: return "APP_READ";
    case TensorRole::kInputOutput: return "APP_READWRITE";
    case TensorRole::kStatic: return "STATIC";
    case TensorRole::kActivation: return "NATIVE";
  }
  return "INVALID";
}

TensorRole Tensor::role() const {
  switch (kind) {
    case TensorKind::kInput: return is_output ? TensorRole::kInputOutput : TensorRole::kInput;
    case TensorKind::kStatic: return TensorRole::kStatic;
    case TensorKind::kActivation: return is_output ? TensorRole::kOutput : TensorRole::kActivation;
  }
  return TensorRole::kActivation;
}

// ---------------------------------------------------------------------------
// Construction
// ---------------------------------------------------------------------------

uint64_t Graph::NextVersion() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Result<TensorId> Graph::NewTensor(std::string name, DType dtype, Shape shape, TensorKind kind) {
  Touched();
  if (name.empty()) return InvalidArgument("failed to add tensor: name must be non-empty");
  if (!IsValidDType(static_cast<uint32_t>(dtype)))
    return InvalidArgument("failed to add tensor '{}' with dtype={}: not a known dtype", name,
                           static_cast<uint32_t>(dtype));
  if (tensors_.size() >= kInvalidId - 1) return InvalidArgument("failed to add tensor '{}': graph is full", name);
  const auto id = static_cast<TensorId>(tensors_.size());
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.kind = kind;
  tensors_.push_back(std::move(t));
  // Duplicates are allowed here and reported by Validate(); lookups keep the first.
  tensor_by_name_.Insert(tensors_.back().name, id, TensorNames());
  return id;
}

Result<TensorId> Graph::AddInput(std::string name, DType dtype, Shape shape) {
  if (dtype == DType::kUndefined) return InvalidArgument("failed to add input '{}': dtype must be defined", name);
  auto id = NewTensor(std::move(name), dtype, std::move(shape), TensorKind::kInput);
  if (id.ok()) inputs_.push_back(id.value());
  return id;
}

Result<TensorId> Graph::AddConstant(std::string name, DType dtype, Shape shape,
                                    std::shared_ptr<const StaticData> data) {
  if (dtype == DType::kUndefined) return InvalidArgument("failed to add constant '{}': dtype must be defined", name);
  if (!data) return InvalidArgument("failed to add constant '{}': data is missing", name);
  if (!shape.fully_known())
    return InvalidArgument("failed to add constant '{}' with shape {}: static tensors need a fully known shape", name,
                           shape.ToString());
  const auto count = shape.element_count();
  const auto bytes = count ? StorageBytes(dtype, *count) : std::nullopt;
  if (!bytes) return InvalidArgument("failed to add constant '{}' with shape {}: size overflows", name, shape.ToString());
  if (*bytes != data->size())
    return InvalidArgument("failed to add constant '{}' with shape {} and dtype {}: expected {} bytes of data, got {}",
                           name, shape.ToString(), DTypeName(dtype), *bytes, data->size());
  auto id = NewTensor(std::move(name), dtype, std::move(shape), TensorKind::kStatic);
  if (id.ok()) tensors_[id.value()].data = std::move(data);
  return id;
}

Result<TensorId> Graph::AddTensor(std::string name, DType dtype, Shape shape) {
  return NewTensor(std::move(name), dtype, std::move(shape), TensorKind::kActivation);
}

Result<OpId> Graph::AddOp(OpSpec spec) {
  Touched();
  if (spec.type.empty()) return InvalidArgument("failed to add op '{}': type must be non-empty", spec.name);
  if (spec.name.empty()) return InvalidArgument("failed to add op of type {}: name must be non-empty", spec.type);
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const TensorId t = spec.inputs[i];
    if (t != kInvalidId && !valid_tensor(t))
      return InvalidArgument("failed to add op '{}' ({}): inputs[{}]={} is not a tensor of this graph", spec.name,
                             spec.type, i, t);
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    const TensorId t = spec.outputs[i];
    if (!valid_tensor(t))
      return InvalidArgument("failed to add op '{}' ({}): outputs[{}]={} is not a tensor of this graph", spec.name,
                             spec.type, i, t);
  }
  if (ops_.size() >= kInvalidId - 1) return InvalidArgument("failed to add op '{}': graph is full", spec.name);

  const auto id = static_cast<OpId>(ops_.size());
  Op op;
  op.type = std::move(spec.type);
  op.name = std::move(spec.name);
  op.inputs = std::move(spec.inputs);
  op.outputs = std::move(spec.outputs);
  op.attrs = std::move(spec.attrs);
  op.source_name = std::move(spec.source_name);
  op.source_op_type = std::move(spec.source_op_type);
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i] != kInvalidId) tensors_[op.inputs[i]].consumers.push_back({id, static_cast<uint32_t>(i)});
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    Tensor& t = tensors_[op.outputs[i]];
    // A second producer is a defect reported by Validate(); keep the first.
    if (t.producer == kInvalidId && t.kind == TensorKind::kActivation) {
      t.producer = id;
      t.producer_slot = static_cast<uint32_t>(i);
    }
  }
  ops_.push_back(std::move(op));
  op_by_name_.Insert(ops_.back().name, id, OpNames());
  FillOutputTypes(id);
  return id;
}

Result<OpId> Graph::AddOp(std::string type, std::string name, std::vector<TensorId> inputs,
                          const std::vector<std::string>& output_names, AttributeMap attrs) {
  OpSpec spec;
  spec.type = std::move(type);
  spec.name = std::move(name);
  spec.inputs = std::move(inputs);
  spec.attrs = std::move(attrs);
  for (const std::string& out : output_names) {
    auto t = AddTensor(out);
    if (!t.ok()) return t.status();
    spec.outputs.push_back(t.value());
  }
  return AddOp(std::move(spec));
}

Status Graph::MarkOutput(TensorId tensor) {
  Touched();
  if (!valid_tensor(tensor)) return InvalidArgument("failed to mark output: {} is not a tensor of this graph", tensor);
  Tensor& t = tensors_[tensor];
  if (t.kind == TensorKind::kStatic)
    return InvalidArgument("failed to mark tensor '{}' as output: static tensors cannot be graph outputs", t.name);
  if (t.is_output) return InvalidArgument("failed to mark tensor '{}' as output: it already is one", t.name);
  t.is_output = true;
  outputs_.push_back(tensor);
  return Status::Ok();
}

Status Graph::RollBack(const Checkpoint& mark) {
  Touched();
  if (mark.ops > ops_.size() || mark.tensors > tensors_.size() || mark.inputs > inputs_.size() ||
      mark.outputs > outputs_.size())
    return InvalidArgument("cannot roll back: the checkpoint is newer than the graph");
  for (size_t o = 0; o < mark.ops; ++o) {
    for (TensorId t : ops_[o].inputs)
      if (t != kInvalidId && t >= mark.tensors)
        return InvalidArgument("cannot roll back: op '{}' reads tensor '{}' added after the checkpoint", ops_[o].name,
                               tensors_[t].name);
    for (TensorId t : ops_[o].outputs)
      if (t >= mark.tensors)
        return InvalidArgument("cannot roll back: op '{}' writes tensor '{}' added after the checkpoint", ops_[o].name,
                               tensors_[t].name);
  }
  for (size_t k = mark.inputs; k < inputs_.size(); ++k)
    if (inputs_[k] < mark.tensors) return InvalidArgument("cannot roll back: an older tensor became a graph input");
  for (size_t k = mark.outputs; k < outputs_.size(); ++k)
    if (outputs_[k] < mark.tensors) tensors_[outputs_[k]].is_output = false;
  inputs_.resize(mark.inputs);
  outputs_.resize(mark.outputs);
  for (size_t o = ops_.size(); o-- > mark.ops;) {
    const Op& op = ops_[o];
    for (TensorId t : op.inputs) {
      if (t == kInvalidId || t >= mark.tensors) continue;
      auto& uses = tensors_[t].consumers;
      uses.erase(std::remove_if(uses.begin(), uses.end(), [&](const Use& u) { return u.op == o; }), uses.end());
    }
    for (TensorId t : op.outputs)
      if (t < mark.tensors && tensors_[t].producer == o) tensors_[t].producer = kInvalidId;
    op_by_name_.Erase(op.name, static_cast<OpId>(o), OpNames());
    ops_.pop_back();
  }
  for (size_t t = tensors_.size(); t-- > mark.tensors;) {
    tensor_by_name_.Erase(tensors_[t].name, static_cast<TensorId>(t), TensorNames());
    tensors_.pop_back();
  }
  if (encoding_checked_for_.size() > tensors_.size()) encoding_checked_for_.resize(tensors_.size());
  return Status::Ok();
}

Status Graph::RenameTensor(TensorId tensor, std::string new_name) {
  Touched();
  if (!valid_tensor(tensor)) return InvalidArgument("failed to rename tensor: {} is not a tensor of this graph", tensor);
  if (new_name.empty()) return InvalidArgument("failed to rename tensor '{}': new name is empty", tensors_[tensor].name);
  Tensor& t = tensors_[tensor];
  if (tensor_by_name_.Erase(t.name, tensor, TensorNames())) {
    // Another tensor with the old name (a duplicate) becomes the one found.
    for (TensorId other = 0; other < tensors_.size(); ++other)
      if (other != tensor && tensors_[other].name == t.name) {
        tensor_by_name_.Insert(t.name, other, TensorNames());
        break;
      }
  }
  t.name = std::move(new_name);
  tensor_by_name_.Insert(t.name, tensor, TensorNames());
  return Status::Ok();
}

Status Graph::SetOpInput(OpId op_id, size_t slot, TensorId tensor) {
  Touched();
  if (!valid_op(op_id)) return InvalidArgument("failed to set op input: {} is not an op of this graph", op_id);
  Op& op = ops_[op_id];
  if (slot > op.inputs.size())
    return InvalidArgument("failed to set input {} of op '{}': the op has {} inputs (append at index {} at most)", slot,
                           op.name, op.inputs.size(), op.inputs.size());
  if (tensor != kInvalidId && !valid_tensor(tensor))
    return InvalidArgument("failed to set input {} of op '{}': {} is not a tensor of this graph", slot, op.name,
                           tensor);
  if (slot == op.inputs.size()) op.inputs.push_back(kInvalidId);
  const TensorId old = op.inputs[slot];
  if (old != kInvalidId) {
    auto& uses = tensors_[old].consumers;
    uses.erase(std::remove(uses.begin(), uses.end(), Use{op_id, static_cast<uint32_t>(slot)}), uses.end());
  }
  op.inputs[slot] = tensor;
  if (tensor != kInvalidId) tensors_[tensor].consumers.push_back({op_id, static_cast<uint32_t>(slot)});
  return Status::Ok();
}

namespace {
// Real-valued types: float and fixed-point (a quantized real number).
bool IsRealValued(DType d) { return IsFloat(d) || IsFixedPoint(d); }
}  // namespace

Status Graph::SetTensorDType(TensorId tensor, DType dtype) {
  Touched();
  if (!valid_tensor(tensor)) return InvalidArgument("failed to set dtype: {} is not a tensor of this graph", tensor);
  Tensor& t = tensors_[tensor];
  if (t.dtype == dtype) return Status::Ok();
  if (!IsRealValued(t.dtype) || !IsRealValued(dtype))
    return InvalidArgument("failed to set dtype of tensor '{}' from {} to {}: only float and fixed-point types interchange",
                           t.name, DTypeShortName(t.dtype), DTypeShortName(dtype));
  if (t.kind == TensorKind::kStatic)
    return InvalidArgument("failed to set dtype of static tensor '{}': use SetStaticData", t.name);
  t.dtype = dtype;
  return Status::Ok();
}

Status Graph::SetStaticData(TensorId tensor, DType dtype, std::shared_ptr<const StaticData> data) {
  Touched();
  if (!valid_tensor(tensor)) return InvalidArgument("failed to set data: {} is not a tensor of this graph", tensor);
  Tensor& t = tensors_[tensor];
  if (t.kind != TensorKind::kStatic) return InvalidArgument("failed to set data of tensor '{}': it is not static", t.name);
  if (!data) return InvalidArgument("failed to set data of tensor '{}': no data", t.name);
  auto count = t.shape.element_count();
  auto bytes = count ? StorageBytes(dtype, *count) : std::nullopt;
  if (!bytes || *bytes != data->size())
    return InvalidArgument("failed to set data of tensor '{}': {} bytes given, {} {} needs {}", t.name, data->size(),
                           t.shape.ToString(), DTypeShortName(dtype), bytes ? std::to_string(*bytes) : "?");
  t.dtype = dtype;
  t.data = std::move(data);
  return Status::Ok();
}

Status Graph::ReplaceGraphOutput(TensorId output, TensorId replacement) {
  Touched();
  if (!valid_tensor(output) || !valid_tensor(replacement))
    return InvalidArgument("failed to replace graph output: not a tensor of this graph");
  auto it = std::find(outputs_.begin(), outputs_.end(), output);
  if (it == outputs_.end()) return InvalidArgument("failed to replace graph output: '{}' is not one", tensors_[output].name);
  if (tensors_[replacement].is_output)
    return InvalidArgument("failed to replace graph output: '{}' already is one", tensors_[replacement].name);
  if (tensors_[replacement].kind == TensorKind::kStatic)
    return InvalidArgument("failed to replace graph output with static tensor '{}'", tensors_[replacement].name);
  *it = replacement;
  tensors_[output].is_output = false;
  tensors_[replacement].is_output = true;
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Shape inference
// ---------------------------------------------------------------------------

namespace {

// Fills what `declared` leaves unknown from `inferred` (never overrides).
void MergeInto(Tensor& t, const TensorType& inferred) {
  if (t.dtype == DType::kUndefined) t.dtype = inferred.dtype;
  if (!t.shape.rank_known()) {
    t.shape = inferred.shape;
  } else if (inferred.shape.rank_known() && inferred.shape.rank() == t.shape.rank()) {
    for (size_t i = 0; i < t.shape.rank(); ++i)
      if (!t.shape[i].known() && t.shape[i].symbol.empty()) t.shape[i] = inferred.shape[i];
  }
}

bool SameDTypeClass(DType a, DType b) {
  // Quantized graphs mix s8/u8/u16 legitimately, and target processing sets
  // each tensor's datatype to its selected kernel's (f32 -> u8, f32 -> f16):
  // all are representations of one real value.
  auto real = [](DType d) { return IsFloat(d) || IsFixedPoint(d); };
  if (real(a) && real(b)) return true;
  return a == b;
}

}  // namespace

bool Graph::ComputeOutputTypes(OpId id, Diagnostics* diags, std::vector<TensorType>* out) const {
  const Op& op = ops_[id];
  const OpSchema* schema = FindOpSchema(op.type);
  if (!schema || !schema->infer) return false;
  if (op.inputs.size() < schema->min_inputs || op.outputs.size() < schema->min_outputs) return false;
  if (schema->max_inputs != kVariadic && op.inputs.size() > schema->max_inputs) return false;
  if (schema->max_outputs != kVariadic && op.outputs.size() > schema->max_outputs) return false;
  for (size_t i = 0; i < schema->min_inputs; ++i)
    if (op.inputs[i] == kInvalidId) return false;

  std::vector<TensorType> input_types(op.inputs.size());
  std::vector<const TensorType*> input_ptrs(op.inputs.size(), nullptr);
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (op.inputs[i] == kInvalidId) continue;
    const Tensor& t = tensors_[op.inputs[i]];
    input_types[i] = TensorType{t.dtype, t.shape, t.data.get()};
    input_ptrs[i] = &input_types[i];
  }
  out->assign(op.outputs.size(), TensorType{});
  InferContext ctx(op, id, std::move(input_ptrs), out, diags);
  schema->infer(ctx);
  return true;
}

void Graph::FillOutputTypes(OpId id) {
  Touched();
  std::vector<TensorType> outputs;
  if (!ComputeOutputTypes(id, nullptr, &outputs)) return;
  const Op& op = ops_[id];
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    Tensor& t = tensors_[op.outputs[i]];
    if (t.producer == id && t.producer_slot == i) MergeInto(t, outputs[i]);
  }
}

void Graph::CheckOutputTypes(OpId id, Diagnostics* diags) const {
  std::vector<TensorType> outputs;
  if (!ComputeOutputTypes(id, diags, &outputs)) return;
  const Op& op = ops_[id];
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const Tensor& t = tensors_[op.outputs[i]];
    if (t.dtype != DType::kUndefined && outputs[i].dtype != DType::kUndefined &&
        !SameDTypeClass(t.dtype, outputs[i].dtype)) {
      diags->push_back({Severity::kError, DiagKind::kDTypeMismatch, id, op.outputs[i], fmt::format("outputs[{}]", i),
                        fmt::format("op '{}' ({}): output {} '{}' is declared {} but the op produces {}", op.name,
                                    op.type, i, t.name, DTypeName(t.dtype), DTypeName(outputs[i].dtype))});
    }
    if (ShapesConflict(t.shape, outputs[i].shape)) {
      diags->push_back({Severity::kError, DiagKind::kShapeMismatch, id, op.outputs[i], fmt::format("outputs[{}]", i),
                        fmt::format("op '{}' ({}): output {} '{}' is declared with shape {} but the op produces {}",
                                    op.name, op.type, i, t.name, t.shape.ToString(), outputs[i].shape.ToString())});
    }
  }
}

void Graph::InferShapes() {
  Touched();
  auto order = TopologicalOrder();
  if (!order.ok()) return;
  for (OpId id : order.value()) FillOutputTypes(id);
}

// ---------------------------------------------------------------------------
// Encodings
// ---------------------------------------------------------------------------

Status Graph::SetEncoding(TensorId tensor, Encoding encoding) {
  Touched();
  if (!valid_tensor(tensor)) return InvalidArgument("failed to set encoding: {} is not a tensor of this graph", tensor);
  Tensor& t = tensors_[tensor];
  // The encoding it has, checked for this shape, with the same tables (a
  // pass storing the weight it quantized): the check holds. An LLM's
  // integer scales are 13M values.
  const bool checked = EncodingCheckedForShape(tensor) && SameEncodingSharingTables(*t.encoding, encoding);
  Diagnostics diags;
  if (!checked && !ValidateEncoding(encoding, t.name, t.shape, tensor, &diags))
    return Status(StatusCode::kValidationFailed, JoinMessages(diags));
  t.encoding = std::move(encoding);
  if (encoding_checked_for_.size() < tensors_.size()) encoding_checked_for_.resize(tensors_.size());
  encoding_checked_for_[tensor] = t.shape;
  return Status::Ok();
}

Status Graph::SetValidatedEncoding(TensorId tensor, Encoding encoding) {
  Touched();
  if (!valid_tensor(tensor)) return InvalidArgument("failed to set encoding: {} is not a tensor of this graph", tensor);
  StoreValidatedEncoding(tensor, std::move(encoding));
  return Status::Ok();
}

void Graph::StoreValidatedEncoding(TensorId tensor, Encoding&& encoding) {
  tensors_[tensor].encoding = std::move(encoding);
  // The caller's check is not recorded: Validate() checks it again.
  if (tensor < encoding_checked_for_.size()) encoding_checked_for_[tensor].reset();
}

Graph::EncodingExchange::EncodingExchange(Graph* graph) : graph_(graph), version_before_(graph->version_) {
  graph_->Touched();
}

Graph::EncodingExchange::Held Graph::EncodingExchange::Exchange(TensorId tensor, std::optional<Encoding> encoding) {
  Held held;
  held.encoding = std::move(graph_->tensors_[tensor].encoding);
  graph_->tensors_[tensor].encoding = std::move(encoding);
  // Validate() checks it again; never resized here (other threads exchange).
  if (tensor < graph_->encoding_checked_for_.size()) {
    held.checked_for = std::move(graph_->encoding_checked_for_[tensor]);
    graph_->encoding_checked_for_[tensor].reset();
  }
  return held;
}

void Graph::EncodingExchange::Restore(TensorId tensor, Held held) {
  graph_->tensors_[tensor].encoding = std::move(held.encoding);
  if (tensor < graph_->encoding_checked_for_.size()) graph_->encoding_checked_for_[tensor] = std::move(held.checked_for);
}

void Graph::EncodingExchange::RestoreVersion() { graph_->version_ = version_before_; }

Status Graph::ClearEncoding(TensorId tensor) {
  Touched();
  if (!valid_tensor(tensor))
    return InvalidArgument("failed to clear encoding: {} is not a tensor of this graph", tensor);
  tensors_[tensor].encoding.reset();
  if (tensor < encoding_checked_for_.size()) encoding_checked_for_[tensor].reset();
  return Status::Ok();
}

bool Graph::EncodingCheckedForShape(TensorId tensor) const {
  return tensor < encoding_checked_for_.size() && tensors_[tensor].encoding && encoding_checked_for_[tensor] &&
         *encoding_checked_for_[tensor] == tensors_[tensor].shape;
}

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

std::optional<TensorId> Graph::FindTensor(std::string_view name) const {
  const uint32_t id = tensor_by_name_.Find(name, TensorNames());
  if (id == NameIndex::kNoId) return std::nullopt;
  return id;
}

Status Graph::SetValidatedEncodings(const std::vector<std::pair<TensorId, Encoding*>>& items, unsigned threads) {
  std::vector<bool> seen(tensors_.size(), false);
  for (const auto& [id, enc] : items) {
    if (!valid_tensor(id) || !enc)
      return InvalidArgument("failed to set encodings: {} is not a tensor of this graph", id);
    if (seen[id]) return InvalidArgument("failed to set encodings: tensor '{}' is given twice", tensors_[id].name);
    seen[id] = true;
  }
  Touched();
  RunShares(items.size(), ShareOf(items.size(), items.size() >= kItemsWorthAThread ? threads : 1u),
            [&](size_t begin, size_t end) {
              for (size_t i = begin; i < end; ++i) StoreValidatedEncoding(items[i].first, std::move(*items[i].second));
            });
  return Status::Ok();
}

std::vector<TensorId> Graph::FindTensors(const std::vector<std::string_view>& names, unsigned threads) const {
  std::vector<TensorId> ids(names.size());
  RunShares(names.size(), ShareOf(names.size(), names.size() >= kItemsWorthAThread ? threads : 1u),
            [&](size_t begin, size_t end) { FindTensorsIn(names, begin, end, ids.data()); });
  return ids;
}

void Graph::FindTensorsIn(const std::vector<std::string_view>& names, size_t begin, size_t end,
                          TensorId* ids) const {
  // Names, hashes and ids of [begin, end), indexed from 0.
  const std::string_view* name = names.data() + begin;
  const size_t n = end - begin;
  ids += begin;
  std::vector<uint32_t> hashes(n);
  for (size_t i = 0; i < n; ++i) hashes[i] = NameIndex::Hash(name[i]);
  // Three prefetch stages, each a few names ahead of the next: the slot, then
  // the Tensor it points to, then that tensor's name bytes.
  constexpr size_t kSlotAhead = 16, kTensorAhead = 8, kNameAhead = 4;
  for (size_t i = 0; i < n; ++i) {
    if (i + kSlotAhead < n) tensor_by_name_.Prefetch(hashes[i + kSlotAhead]);
    if (i + kTensorAhead < n)
      if (const uint32_t c = tensor_by_name_.HomeId(hashes[i + kTensorAhead]); c != NameIndex::kNoId)
        __builtin_prefetch(&tensors_[c]);
    if (i + kNameAhead < n)
      if (const uint32_t c = tensor_by_name_.HomeId(hashes[i + kNameAhead]); c != NameIndex::kNoId)
        __builtin_prefetch(tensors_[c].name.data());
    const uint32_t id = tensor_by_name_.FindHashed(name[i], hashes[i], TensorNames());
    ids[i] = id == NameIndex::kNoId ? kInvalidId : id;
  }
}

std::optional<OpId> Graph::FindOp(std::string_view name) const {
  const uint32_t id = op_by_name_.Find(name, OpNames());
  if (id == NameIndex::kNoId) return std::nullopt;
  return id;
}

namespace {

// In-degree of each op = number of present inputs produced by an op.
std::vector<uint32_t> InDegrees(const std::vector<Op>& ops, const std::vector<Tensor>& tensors) {
  std::vector<uint32_t> indegree(ops.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i)
    for (TensorId t : ops[i].inputs)
      if (t != kInvalidId && tensors[t].producer != kInvalidId) ++indegree[i];
  return indegree;
}

}  // namespace

Result<std::vector<OpId>> Graph::TopologicalOrder() const {
  std::vector<uint32_t> indegree = InDegrees(ops_, tensors_);
  // A min-ordered ready list keeps the order stable (insertion order on ties)
  // without a heap: ops become ready in increasing id when scanned in order.
  std::vector<OpId> order;
  order.reserve(ops_.size());
  std::deque<OpId> ready;
  for (OpId i = 0; i < ops_.size(); ++i)
    if (indegree[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    const OpId id = ready.front();
    ready.pop_front();
    order.push_back(id);
    for (TensorId out : ops_[id].outputs) {
      const Tensor& t = tensors_[out];
      if (t.producer != id) continue;  // only the registered producer releases consumers
      for (const Use& use : t.consumers)
        if (--indegree[use.op] == 0) ready.push_back(use.op);
    }
  }
  if (order.size() != ops_.size()) {
    std::string names;
    size_t listed = 0;
    for (OpId i = 0; i < ops_.size() && listed < 8; ++i) {
      if (indegree[i] == 0) continue;
      names += (listed++ ? ", '" : "'") + ops_[i].name + "'";
    }
    return Error(StatusCode::kValidationFailed, "graph '{}' has a cycle: {} ops cannot be ordered, including {}", name_,
                 ops_.size() - order.size(), names);
  }
  return order;
}

}  // namespace qairt
