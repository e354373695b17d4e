// Graph::Validate: every structural problem of a graph in one pass, so a user
// (or an IDE) sees all of them at once instead of fixing them one by one.
#include <fmt/format.h>

#include <unordered_map>

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace qairt {
namespace {

void Add(Diagnostics* d, DiagKind kind, uint32_t op, uint32_t tensor, std::string field, std::string message) {
  d->push_back({Severity::kError, kind, op, tensor, std::move(field), std::move(message)});
}

std::string ArityText(uint32_t lo, uint32_t hi) {
  if (hi == kVariadic) return fmt::format("at least {}", lo);
  if (lo == hi) return fmt::format("{}", lo);
  return fmt::format("{} to {}", lo, hi);
}

}  // namespace

Diagnostics Graph::Validate() const {
  Diagnostics d;

  if (outputs_.empty())
    Add(&d, DiagKind::kNoOutputs, kInvalidId, kInvalidId, "outputs",
        fmt::format("graph '{}' has no outputs: mark at least one tensor as output", name_));

  // Duplicate names: report each later definition against the first.
  {
    std::unordered_map<std::string_view, TensorId> first;
    for (TensorId i = 0; i < tensors_.size(); ++i) {
      auto [it, inserted] = first.emplace(tensors_[i].name, i);
      if (!inserted)
        Add(&d, DiagKind::kDuplicateTensorName, kInvalidId, i, "name",
            fmt::format("tensor name '{}' is defined more than once (tensors #{} and #{})", tensors_[i].name, it->second,
                        i));
    }
  }
  {
    std::unordered_map<std::string_view, OpId> first;
    for (OpId i = 0; i < ops_.size(); ++i) {
      auto [it, inserted] = first.emplace(ops_[i].name, i);
      if (!inserted)
        Add(&d, DiagKind::kDuplicateOpName, i, kInvalidId, "name",
            fmt::format("op name '{}' is used more than once (ops #{} and #{})", ops_[i].name, it->second, i));
    }
  }

  // Per-op checks: known type, arity, producers.
  for (OpId id = 0; id < ops_.size(); ++id) {
    const Op& op = ops_[id];
    const OpSchema* schema = FindOpSchema(op.type);
    if (!schema) {
      Add(&d, DiagKind::kUnknownOpType, id, kInvalidId, "type",
          fmt::format("op '{}' has unknown type '{}' (see qairt_op_type_name for the vocabulary)", op.name, op.type));
    } else {
      if (op.inputs.size() < schema->min_inputs ||
          (schema->max_inputs != kVariadic && op.inputs.size() > schema->max_inputs))
        Add(&d, DiagKind::kArity, id, kInvalidId, "inputs",
            fmt::format("op '{}' ({}) has {} inputs but takes {}", op.name, op.type, op.inputs.size(),
                        ArityText(schema->min_inputs, schema->max_inputs)));
      if (op.outputs.size() < schema->min_outputs ||
          (schema->max_outputs != kVariadic && op.outputs.size() > schema->max_outputs))
        Add(&d, DiagKind::kArity, id, kInvalidId, "outputs",
            fmt::format("op '{}' ({}) has {} outputs but produces {}", op.name, op.type, op.outputs.size(),
                        ArityText(schema->min_outputs, schema->max_outputs)));
      for (size_t i = 0; i < op.inputs.size() && i < schema->min_inputs; ++i)
        if (op.inputs[i] == kInvalidId)
          Add(&d, DiagKind::kArity, id, kInvalidId, fmt::format("inputs[{}]", i),
              fmt::format("op '{}' ({}): required input {} is absent", op.name, op.type, i));
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const TensorId tid = op.outputs[i];
      const Tensor& t = tensors_[tid];
      if (t.kind != TensorKind::kActivation) {
        Add(&d, DiagKind::kMultipleProducers, id, tid, fmt::format("outputs[{}]", i),
            fmt::format("op '{}' writes tensor '{}', which is a graph {}", op.name, t.name,
                        t.kind == TensorKind::kInput ? "input" : "constant"));
      } else if (t.producer != id || t.producer_slot != i) {
        Add(&d, DiagKind::kMultipleProducers, id, tid, fmt::format("outputs[{}]", i),
            fmt::format("tensor '{}' is produced by both op '{}' and op '{}'", t.name, ops_[t.producer].name, op.name));
      }
    }
  }

  // Per-tensor checks: every activation needs a producer; static data size.
  for (TensorId id = 0; id < tensors_.size(); ++id) {
    const Tensor& t = tensors_[id];
    if (t.kind == TensorKind::kActivation && t.producer == kInvalidId) {
      if (!t.consumers.empty()) {
        const Op& reader = ops_[t.consumers.front().op];
        Add(&d, DiagKind::kDanglingTensor, t.consumers.front().op, id, fmt::format("inputs[{}]", t.consumers.front().slot),
            fmt::format("op '{}' reads tensor '{}', which is never defined (not an input, constant or op output)",
                        reader.name, t.name));
      } else {
        Add(&d, DiagKind::kMissingProducer, kInvalidId, id, "producer",
            fmt::format("tensor '{}' is {} but no op produces it", t.name,
                        t.is_output ? "a graph output" : "declared"));
      }
    }
    if (t.kind == TensorKind::kStatic) {
      const auto count = t.shape.element_count();
      const auto bytes = count ? StorageBytes(t.dtype, *count) : std::nullopt;
      if (!t.data || !bytes || *bytes != t.data->size())
        Add(&d, DiagKind::kStaticData, kInvalidId, id, "data",
            fmt::format("static tensor '{}' ({} {}) needs {} bytes of data, has {}", t.name, DTypeName(t.dtype),
                        t.shape.ToString(), bytes ? fmt::format("{}", *bytes) : "an unknown number of",
                        t.data ? t.data->size() : 0));
    }
    if (t.encoding && !EncodingCheckedForShape(id)) ValidateEncoding(*t.encoding, t.name, t.shape, id, &d);
  }

  // Cycles.
  auto order = TopologicalOrder();
  if (!order.ok()) Add(&d, DiagKind::kCycle, kInvalidId, kInvalidId, "", order.status().message());

  // dtype/shape agreement of every op with its declared outputs.
  for (OpId id = 0; id < ops_.size(); ++id) CheckOutputTypes(id, &d);
  return d;
}

}  // namespace qairt
