// Handle data movement ops (spec): the input and output of a data-movement op
// must share one encoding, and a chain of them takes one encoding. With
// different bit widths at the ends the chain takes the minimum, and a Convert
// is placed at the boundary whose encoding differs (queued here, injected by
// the next Inject Convert Ops pass).
#include <fmt/format.h>

#include <map>

#include "passes/adapt.h"
#include "passes/quant_log.h"
#include "passes/passes.h"

namespace qairt::pass {

Status PropagateDataMovementEncodings(Session& s) {
  Graph& g = s.graph();
  const target::Target& tgt = s.target();
  auto order = g.TopologicalOrder();
  if (!order.ok()) return order.status();

  // Group data-movement ops chained through their data input (slot 0) and
  // data output (slot 0).
  std::map<OpId, size_t> group_of;
  std::vector<std::vector<OpId>> groups;
  for (OpId id : order.value()) {
    const Op& op = g.op(id);
    if (!tgt.IsDataMovement(op.type) || op.inputs.empty() || op.outputs.empty() || op.inputs[0] == kInvalidId)
      continue;
    s.Trace("[INV. OP ] {} ({})", op.name, op.type);
    const Tensor& in = g.tensor(op.inputs[0]);
    size_t gi;
    if (in.producer != kInvalidId && in.producer_slot == 0 && group_of.count(in.producer)) {
      gi = group_of[in.producer];
    } else {
      gi = groups.size();
      groups.emplace_back();
    }
    group_of[id] = gi;
    groups[gi].push_back(id);
  }

  for (const std::vector<OpId>& ops : groups) {
    // Entry: data inputs produced outside the group; inner: the ops' data outputs.
    std::vector<TensorId> entries, inner;
    for (OpId id : ops) {
      const Op& op = g.op(id);
      const Tensor& in = g.tensor(op.inputs[0]);
      if (in.producer == kInvalidId || !group_of.count(in.producer)) {
        if (std::find(entries.begin(), entries.end(), op.inputs[0]) == entries.end()) entries.push_back(op.inputs[0]);
      }
      inner.push_back(op.outputs[0]);
    }
    // The minimum bit width among the chain's fixed-point encodings; ties go
    // to the entry (the range does not change along the chain).
    const Encoding* chosen = nullptr;
    auto consider = [&](TensorId t) {
      const auto& e = g.tensor(t).encoding;
      if (!e || !IsFixedPoint(e->dtype) || e->kind == EncodingKind::kArrayOf) return;
      if (!chosen || e->effective_bitwidth() < chosen->effective_bitwidth()) chosen = &*e;
    };
    for (TensorId t : entries) consider(t);
    for (TensorId t : inner) consider(t);
    std::string names;
    for (OpId id : ops) names += (names.empty() ? "" : ", ") + g.op(id).name;
    if (!chosen) {
      s.Trace("[INV. OP GRP.] [ {} ] no fixed-point encoding in the chain: nothing to propagate", names);
      continue;
    }
    const Encoding selected = *chosen;
    s.Trace("[INV. OP GRP.] [ {} ] encoding: {} entry: {} exit: {}", names, EncodingTraceText(selected),
            EncodingTraceText(g.tensor(entries.front()).encoding), EncodingTraceText(g.tensor(inner.back()).encoding));

    for (TensorId t : entries) {
      const auto& e = g.tensor(t).encoding;
      if (e && *e == selected) continue;
      if (!e || !IsFixedPoint(e->dtype)) {
        // The producer writes the chain's encoding.
        Encoding copy = selected;
        copy.overridden = false;
        QAIRT_RETURN_IF_ERROR(g.SetEncoding(t, copy));
        s.AddReason(t, kReasonDataMovement);
        continue;
      }
      // Different encoding upstream: convert at the start of the chain.
      ConvertSite site;
      site.source = t;
      site.to = selected;
      site.to.overridden = false;
      for (const Use& u : g.tensor(t).consumers)
        if (group_of.count(u.op) && u.slot == 0) site.consumers.push_back(u);
      site.reason = kReasonDataMovement;
      site.why = fmt::format("start of data-movement chain [ {} ]: {} -> {}", names, DTypeShortName(e->dtype),
                             DTypeShortName(selected.dtype));
      s.pending_converts.push_back(std::move(site));
    }
    for (TensorId t : inner) {
      const Tensor& tensor = g.tensor(t);
      const std::optional<Encoding> before = tensor.encoding;
      if (before && *before == selected) continue;
      Encoding copy = selected;
      copy.overridden = false;
      QAIRT_RETURN_IF_ERROR(g.SetEncoding(t, copy));
      s.AddReason(t, kReasonDataMovement);
      if (!before || !IsFixedPoint(before->dtype)) continue;
      // The user asked for another encoding here: consumers outside the chain
      // (and the graph output) get it through a Convert at the end.
      ConvertSite site;
      site.source = t;
      site.to = *before;
      for (const Use& u : tensor.consumers)
        if (!group_of.count(u.op)) site.consumers.push_back(u);
      site.graph_output = tensor.is_output;
      if (site.consumers.empty() && !site.graph_output) continue;
      site.reason = kReasonDataMovement;
      site.why = fmt::format("end of data-movement chain [ {} ]: {} -> {}", names, DTypeShortName(selected.dtype),
                             DTypeShortName(before->dtype));
      s.pending_converts.push_back(std::move(site));
    }
  }
  return Status::Ok();
}

}  // namespace qairt::pass
