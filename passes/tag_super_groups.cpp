// Tag super groups (spec): chains of ops matching a pattern the target lists
// run in one precision. A chain qualifies only if every intermediate tensor
// is consumed by the next op of the chain alone (and is no graph output).
// Intermediate tensors take the group's output encoding (any encoding given
// for them is dropped); static coefficient inputs of the later ops (a PReLU
// slope) without encodings get one computed from their data.
#include <fmt/format.h>

#include <algorithm>

#include "passes/adapt.h"
#include "passes/quant_log.h"
#include "passes/passes.h"
#include "quant/quantize.h"

namespace qairt::pass {

namespace {

// Ops of `pattern` starting at `first`, or empty if the chain does not match.
// `why` explains a near miss (types match but an intermediate escapes).
std::vector<OpId> MatchPattern(const Graph& g, OpId first, const std::vector<std::string>& pattern,
                               const std::vector<int32_t>& grouped, std::string* why) {
  std::vector<OpId> ops;
  OpId cur = first;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const Op& op = g.op(cur);
    if (op.type != pattern[i] || grouped[cur] >= 0) return {};
    ops.push_back(cur);
    if (i + 1 == pattern.size()) break;
    if (op.outputs.empty()) return {};
    const Tensor& t = g.tensor(op.outputs[0]);
    // The next op must read this tensor at its data input.
    OpId next = kInvalidId;
    for (const Use& u : t.consumers)
      if (u.slot == 0 && g.op(u.op).type == pattern[i + 1]) next = u.op;
    if (next == kInvalidId) return {};
    if (t.consumers.size() != 1 || t.is_output || op.outputs.size() != 1) {
      *why = fmt::format("intermediate tensor '{}' is consumed outside the group", t.name);
      return {};
    }
    cur = next;
  }
  return ops;
}

// The widest bit width at which a tensor enters the matched chain `ops`
// from outside (activations, and weights up to 16 bits; not the int32
// biases), with the tensor that sets it.
std::pair<uint32_t, TensorId> WidestEntry(const Graph& g, const std::vector<OpId>& ops) {
  std::vector<TensorId> inner;
  for (size_t i = 0; i + 1 < ops.size(); ++i) inner.push_back(g.op(ops[i]).outputs[0]);
  std::pair<uint32_t, TensorId> widest{0, kInvalidId};
  for (OpId id : ops)
    for (TensorId t : g.op(id).inputs) {
      if (t == kInvalidId || std::find(inner.begin(), inner.end(), t) != inner.end()) continue;
      const auto& e = g.tensor(t).encoding;
      if (!e || !IsFixedPoint(e->dtype) || e->kind == EncodingKind::kArrayOf || e->effective_bitwidth() > 16) continue;
      if (e->effective_bitwidth() > widest.first) widest = {e->effective_bitwidth(), t};
    }
  return widest;
}

}  // namespace

Status TagSuperGroups(Session& s) {
  Graph& g = s.graph();
  const target::Target& tgt = s.target();
  auto order = g.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::vector<int32_t> grouped(g.op_count(), -1);

  for (OpId id : order.value()) {
    for (const target::SuperGroup& sg : tgt.super_groups) {
      if (sg.ops.empty() || g.op(id).type != sg.ops[0]) continue;
      std::string why;
      std::vector<OpId> ops = MatchPattern(g, id, sg.ops, grouped, &why);
      std::string pattern;
      for (const auto& p : sg.ops) pattern += (pattern.empty() ? "" : " + ") + p;
      if (ops.empty()) {
        if (!why.empty()) s.Trace("[SUPER GROUP] not formed at {} ({}): {}", g.op(id).name, pattern, why);
        continue;
      }

      const int32_t gid = static_cast<int32_t>(s.super_groups.size());
      std::string names;
      for (OpId o : ops) {
        grouped[o] = gid;
        s.op_record(o).super_group = gid;
        names += (names.empty() ? "" : ", ") + g.op(o).name;
      }
      s.super_groups.push_back({pattern, ops});
      s.Trace("[SUPER GROUP] {} : [ {} ]", pattern, names);

      const TensorId end = g.op(ops.back()).outputs[0];
      if (!g.tensor(end).encoding || !IsFixedPoint(g.tensor(end).encoding->dtype)) break;
      // A group runs in one precision: where something enters it wider than
      // its output (mixed precision promoted the input of a Conv + HardSwish
      // to 16 bits), the whole group runs at that width, its output carried
      // to the wider grid over the same range, and a Convert after the group
      // gives the consumers the encoding they had. Otherwise the kernels
      // would differ inside the group and its intermediate tensor, with the
      // output's range, would be materialized at a Convert between them,
      // cutting the convolution's outputs below HardSwish's floor of -0.375.
      if (auto [bits, by] = WidestEntry(g, ops); bits > g.tensor(end).encoding->effective_bitwidth()) {
        const Encoding original = *g.tensor(end).encoding;
        const auto wide_dtype = FixedPointDType(IsSigned(original.dtype), bits);
        auto wide = wide_dtype ? AdaptEncoding(original, *wide_dtype) : std::nullopt;
        if (wide) {
          wide->overridden = false;
          ConvertSite site;
          site.source = end;
          site.to = original;
          site.to.overridden = false;
          site.consumers = g.tensor(end).consumers;
          site.graph_output = g.tensor(end).is_output;
          site.reason = kReasonSuperGroup;
          site.why = fmt::format("super group [ {} ] runs at {} bits ('{}' enters it at {}): back to {} after it", names,
                                 bits, g.tensor(by).name, bits, DTypeShortName(original.dtype));
          QAIRT_RETURN_IF_ERROR(g.SetEncoding(end, *wide));
          s.AddReason(end, kReasonSuperGroup);
          s.Trace("[SUPER GRP. ENC.] {} {} (the group runs at {} bits)", g.tensor(end).name, EncodingTraceText(*wide),
                  bits);
          if (!site.consumers.empty() || site.graph_output) s.pending_converts.push_back(std::move(site));
        }
      }
      const auto& end_enc = g.tensor(end).encoding;
      for (size_t i = 0; i + 1 < ops.size(); ++i) {
        const TensorId mid = g.op(ops[i]).outputs[0];
        const auto& before = g.tensor(mid).encoding;
        if (before && *before == *end_enc) continue;
        Encoding e = *end_enc;
        e.overridden = false;
        QAIRT_RETURN_IF_ERROR(g.SetEncoding(mid, e));
        s.AddReason(mid, kReasonSuperGroup);
        s.Trace("[SUPER GRP. ENC.] {} {}{}", g.tensor(mid).name, EncodingTraceText(e),
                before ? " (encoding given for an intermediate tensor dropped: " + EncodingTraceText(before) + ")" : "");
      }
      // Coefficients of the later ops (PReLU slope, ...): static float inputs.
      for (size_t i = 1; i < ops.size(); ++i) {
        const Op& op = g.op(ops[i]);
        for (size_t slot = 1; slot < op.inputs.size(); ++slot) {
          const TensorId c = op.inputs[slot];
          if (c == kInvalidId) continue;
          const Tensor& ct = g.tensor(c);
          if (ct.kind != TensorKind::kStatic || ct.encoding || ct.dtype != DType::kFloat32 || !ct.data) continue;
          quant::EncodingRequest req;
          req.dtype = *FixedPointDType(true, end_enc->effective_bitwidth());
          req.symmetry = Symmetry::kSymmetric;
          auto count = ct.shape.element_count();
          if (!count || ct.data->size() != *count * sizeof(float)) continue;
          auto enc = quant::ComputeEncoding(ct.name, reinterpret_cast<const float*>(ct.data->data()),
                                            ct.shape.extents(), req);
          if (!enc.ok()) {
            s.Error("super-group-encoding", enc.status().message(), {}, ct.name);
            continue;
          }
          QAIRT_RETURN_IF_ERROR(g.SetEncoding(c, enc.value()));
          s.tensor_record(c).computed = true;
          s.AddReason(c, kReasonSuperGroup);
          s.Trace("[WARN: COMP. ENC.] {} {} (super-group coefficient)", ct.name, EncodingTraceText(enc.value()));
        }
      }
      break;
    }
  }
  // The converts after groups that run wider than their output.
  if (!s.pending_converts.empty()) return InjectDataMovementConverts(s);
  return Status::Ok();
}

}  // namespace qairt::pass
