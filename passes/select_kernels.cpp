// Kernel selection (spec "Select op precision"). For every op, each kernel
// the target lists is scored slot by slot against the requested dtype tuple:
// 0 for an exact match, a small cost for a sign flip through the offset, one
// per step up the precision order (int2 < int4 < int8 < int16 < int32 <
// float16 < float32), infinity for lower precision or a kernel that does not
// preserve accuracy. A slot is rejected outright when its encoding breaks a
// kernel constraint (symmetry, granularity, channel axis, block size) or when
// an activation would need a conversion the target cannot do. The cheapest
// kernel wins (first in descriptor order on ties). Symmetry and granularity
// are the user's choice and never adapted: if the requested dtypes had a
// kernel but for one of those, selecting anything else is an error (spec
// checks 1 and 2).
#include <fmt/format.h>

#include <cmath>

#include "passes/adapt.h"
#include "passes/quant_log.h"
#include "passes/passes.h"
#include "ir/op_registry.h"
#include "quant/quantize.h"

namespace qairt::pass {

namespace {

struct SlotChoice {
  double cost = kInfDistance;
  DType dtype = DType::kUndefined;
  std::optional<Encoding> enc;
  std::string reason;       // why no dtype of the slot works
  std::string hard_reason;  // symmetry/granularity failure at the requested dtype
  bool rescaled = false;    // output encoding replaced by the kernel's fixed/ranged one
  double kept_lo = 0, kept_hi = 0;  // with a ranged rescale: the real range the values had before it
};

std::string MaskNames(uint32_t mask, std::string_view (*name)(uint32_t)) {
  std::string s;
  for (uint32_t b = 0; b < 32; ++b)
    if ((mask >> b) & 1u) s += (s.empty() ? "" : "|") + std::string(name(b));
  return s;
}

// Returns the constraint the encoding breaks, or "".
std::string CheckConstraints(const Encoding& e, const target::Slot& slot, const Tensor& t, bool* hard) {
  *hard = false;
  const uint32_t kind = static_cast<uint32_t>(e.kind);
  if (slot.granularity_mask && !((slot.granularity_mask >> kind) & 1u)) {
    *hard = IsFixedPoint(e.dtype);
    return fmt::format("constraint violation (granularity: '{}' is {}, the kernel needs {})", t.name,
                       target::GranularityName(kind), MaskNames(slot.granularity_mask, target::GranularityName));
  }
  if (!IsFixedPoint(e.dtype)) return {};
  const uint32_t sym = static_cast<uint32_t>(e.symmetry);
  if (slot.symmetry_mask && !((slot.symmetry_mask >> sym) & 1u)) {
    *hard = true;
    return fmt::format("constraint violation (symmetry: '{}' is {}, the kernel needs {})", t.name,
                       target::SymmetryName(sym), MaskNames(slot.symmetry_mask, target::SymmetryName));
  }
  if (slot.channel_axis >= 0 && e.kind == EncodingKind::kPerChannel && t.shape.rank_known()) {
    auto a = NormalizeAxis(e.axis, t.shape.rank());
    auto want = NormalizeAxis(slot.channel_axis, t.shape.rank());
    if (a && want && *a != *want)
      return fmt::format("constraint violation (channel axis: '{}' is quantized along axis {}, the kernel needs {})",
                         t.name, *a, *want);
  }
  if ((e.kind == EncodingKind::kPerBlock || e.kind == EncodingKind::kLpbq) && e.axis >= 0 &&
      static_cast<size_t>(e.axis) < e.block_sizes.size()) {
    const int64_t bs = e.block_sizes[e.axis];
    if (slot.block_size_min && bs < slot.block_size_min)
      return fmt::format("constraint violation (block size: '{}' has blocks of {}, the kernel needs at least {})",
                         t.name, bs, slot.block_size_min);
    if (slot.block_size_multiple && bs % slot.block_size_multiple != 0)
      return fmt::format("constraint violation (block size: '{}' has blocks of {}, the kernel needs a multiple of {})",
                         t.name, bs, slot.block_size_multiple);
  }
  return {};
}

// Real range of a per-tensor encoding.
std::pair<double, double> RealRange(const Encoding& e) {
  const QuantRange r = QuantRangeOf(e.dtype, e.effective_bitwidth());
  const double s = e.scales.empty() ? 0.0 : e.scales[0];
  const double o = e.offsets.empty() ? 0.0 : e.offsets[0];
  return {(static_cast<double>(r.qmin) + o) * s, (static_cast<double>(r.qmax) + o) * s};
}

// The kernel's scale constraint on an output (spec check 3): a fixed
// encoding for the dtype, or a real range the encoding must match; the
// encoding is rescaled to it.
void ApplyScaleConstraint(const target::Slot& slot, const Tensor& t, SlotChoice* c) {
  if (!c->enc || !IsFixedPoint(c->dtype) || c->enc->kind != EncodingKind::kPerTensor) return;
  for (const target::FixedEncoding& f : slot.fixed_encodings) {
    if (f.dtype != c->dtype) continue;
    Encoding e = *c->enc;
    e.scales = {static_cast<float>(f.scale)};
    e.offsets = {f.offset};
    e.symmetry = Symmetry::kAsymmetric;
    e.bitwidth = 0;
    e.overridden = false;
    if (e != *c->enc) {
      c->enc = e;
      c->rescaled = true;
    }
    return;
  }
  if (!slot.has_range) return;
  auto [lo, hi] = RealRange(*c->enc);
  const double tol = 1e-6 * std::max(1.0, slot.range_max - slot.range_min);
  if (std::fabs(lo - slot.range_min) <= tol + std::fabs(c->enc->scales[0]) &&
      std::fabs(hi - slot.range_max) <= tol + std::fabs(c->enc->scales[0]))
    return;
  c->kept_lo = lo;
  c->kept_hi = hi;
  const float range[2] = {static_cast<float>(slot.range_min), static_cast<float>(slot.range_max)};
  quant::EncodingRequest req;
  req.dtype = c->dtype;
  auto e = quant::ComputeEncoding(t.name, range, {2}, req);
  if (!e.ok()) return;
  Encoding r = e.value();
  r.overridden = false;
  c->enc = r;
  c->rescaled = true;
}

// A kernel whose output range is fixed (Softmax and Sigmoid [0, 1] on HTP
// v73+) leaves most of a narrow grid unused when the values span a small
// part of that range: near-uniform attention over 32 keys reaches 0.03, so
// an 8-bit [0, 1] grid gives it 8 levels. The target does this, not the
// calibration, so the user is told which tensor and what a wider grid buys.
void WarnUnusedLevels(Session& s, const Op& op, const Tensor& t, const SlotChoice& c) {
  // Only narrow grids are worth a warning (and the level count below must not
  // shift a 32-bit type's width).
  const int bits = static_cast<int>(DTypeBits(c.dtype));
  if (bits > 8) return;
  const double fixed = static_cast<double>(c.enc->scales[0]) * ((1u << bits) - 1);
  const double span = c.kept_hi - c.kept_lo;
  if (!(span > 0) || !(fixed > 0)) return;
  const double unused = std::log2(fixed / span);
  if (unused < 2.0) return;
  s.Warn("fixed-range-unused-levels",
         fmt::format("'{}': the target's {} kernel fixes this {}-bit output to [{:g}, {:g}] but its values span "
                     "[{:g}, {:g}]: about {:.1f} of its {} bits are unused. Fix: give it 16 bits "
                     "(--wide_fixed_ranges, --mixed_precision, or a 16-bit encoding for it in "
                     "--quantization_overrides) where the target has a 16-bit kernel",
                     t.name, op.type, bits, RealRange(*c.enc).first, RealRange(*c.enc).second, c.kept_lo,
                     c.kept_hi, unused, bits),
         op.name, t.name);
}

SlotChoice ChooseSlot(Session& s, const Tensor& t, const TensorRecord& rec, const target::Slot& slot, bool is_input,
                      size_t index) {
  const target::Target& tgt = s.target();
  const DType r = rec.requested;
  const bool is_static = t.kind == TensorKind::kStatic;
  const char* where = is_input ? "input" : "output";
  SlotChoice best;
  auto consider = [&](SlotChoice c) {
    if (c.reason.empty() && c.cost < best.cost) {
      std::string hard = best.hard_reason;
      best = std::move(c);
      if (best.hard_reason.empty()) best.hard_reason = hard;
    } else if (!c.reason.empty() && best.reason.empty() && std::isinf(best.cost)) {
      best.reason = c.reason;
      best.dtype = c.dtype;  // shown in the rejected candidate's tuple
    }
    if (!c.hard_reason.empty() && best.hard_reason.empty()) best.hard_reason = c.hard_reason;
  };

  for (DType d : slot.dtypes) {
    SlotChoice c;
    c.dtype = d;
    // Integer and bool tensors (indices, shapes): exact, or a Cast.
    if (!IsFloat(r) && !IsFixedPoint(r)) {
      if (d == r) {
        c.cost = 0;
      } else if (is_static && IsInteger(d) && IsInteger(r)) {
        c.cost = 0;  // cast offline by Quantize Static Tensors
      } else if (is_input && IsInteger(d) && !ConvertOpType(tgt, r, d).empty()) {
        c.cost = kPromotionStepCost;
      } else {
        c.reason = fmt::format("no Cast/Convert from {} to {} for {} index {}", DTypeShortName(r), DTypeShortName(d),
                               where, index);
      }
      consider(std::move(c));
      continue;
    }
    const int rr = PrecisionRank(r), rd = PrecisionRank(d);
    if (rd < 0 || rr < 0) {
      c.reason = fmt::format("no Cast/Convert from {} to {} for {} index {}", DTypeShortName(r), DTypeShortName(d),
                             where, index);
      consider(std::move(c));
      continue;
    }
    if (d == r) {
      c.cost = 0;
    } else if (rd < rr || (IsFloat(r) && !IsFloat(d))) {
      c.cost = kInfDistance;
      c.reason = "INF distance, likely a non-accuracy preserving kernel";
      consider(std::move(c));
      continue;
    } else {
      c.cost = (rd - rr) * kPromotionStepCost;
      if (IsFixedPoint(d) && IsFixedPoint(r) && IsSigned(d) != IsSigned(r)) c.cost += kSignFlipCost;
    }
    // The encoding this slot would carry.
    if (rec.bias_fxp && IsFixedPoint(d)) {
      c.enc.reset();  // computed from the input and weight scales later
    } else if (rec.requested_encoding) {
      c.enc = d == r ? rec.requested_encoding : AdaptEncoding(*rec.requested_encoding, d);
      if (!c.enc) {
        c.reason = fmt::format("constraint violation (the encoding of '{}' cannot be carried from {} to {})", t.name,
                               DTypeShortName(r), DTypeShortName(d));
        consider(std::move(c));
        continue;
      }
      bool hard = false;
      std::string why = CheckConstraints(*c.enc, slot, t, &hard);
      if (!why.empty()) {
        if (hard && d == r) c.hard_reason = why;
        c.reason = std::move(why);
        consider(std::move(c));
        continue;
      }
    } else if (IsFloat(d)) {
      c.enc = FloatEncoding(d);
    }
    if (is_input && !is_static && d != r && ConvertOpType(tgt, r, d).empty()) {
      c.reason = fmt::format("no Cast/Convert from {} to {} for input index {}", DTypeShortName(r), DTypeShortName(d),
                             index);
      consider(std::move(c));
      continue;
    }
    if (!is_input) ApplyScaleConstraint(slot, t, &c);
    consider(std::move(c));
  }
  if (slot.dtypes.empty()) best.reason = fmt::format("constraint violation (no dtypes for {} index {})", where, index);
  return best;
}

struct Candidate {
  std::vector<SlotChoice> in, out;
  double total = 0;
  std::string reason;
  std::string hard_reason;
  bool exact_dtypes = true;  // every slot at its requested dtype
};

Candidate Score(Session& s, const Op& op, const OpRecord& rec, const target::Kernel& k) {
  const Graph& g = s.graph();
  Candidate c;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const target::Slot* slot = k.input(i);
    SlotChoice sc;
    if (op.inputs[i] == kInvalidId) {
      sc.cost = 0;
      if (slot && !slot->optional && c.reason.empty())
        c.reason = fmt::format("constraint violation (input index {} is required)", i);
    } else if (!slot && g.tensor(op.inputs[i]).kind == TensorKind::kStatic &&
               !IsFloat(g.tensor(op.inputs[i]).dtype) && !IsFixedPoint(g.tensor(op.inputs[i]).dtype)) {
      sc.cost = 0;  // a static shape/axes input: a parameter of the QNN op, not a tensor slot
    } else if (!slot) {
      if (c.reason.empty()) c.reason = fmt::format("constraint violation (the kernel has no input index {})", i);
    } else {
      const TensorId t = op.inputs[i];
      sc = ChooseSlot(s, g.tensor(t), s.tensor_record(t), *slot, true, i);
      if (!sc.reason.empty() && std::isinf(sc.cost) && c.reason.empty()) c.reason = sc.reason;
      if (c.hard_reason.empty()) c.hard_reason = sc.hard_reason;
      if (sc.dtype != rec.requested_in[i]) c.exact_dtypes = false;
    }
    if (sc.dtype == DType::kUndefined) sc.dtype = rec.requested_in[i];
    c.total += sc.cost;
    c.in.push_back(std::move(sc));
  }
  // Ops with a variable number of outputs (Split): the last slot repeats.
  const OpSchema* schema = FindOpSchema(op.type);
  const bool variadic_outputs = schema && schema->max_outputs == kVariadic && !k.outputs.empty();
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const target::Slot* slot = i < k.outputs.size() ? &k.outputs[i] : variadic_outputs ? &k.outputs.back() : nullptr;
    SlotChoice sc;
    if (!slot) {
      if (c.reason.empty()) c.reason = fmt::format("constraint violation (the kernel has no output index {})", i);
    } else {
      const TensorId t = op.outputs[i];
      sc = ChooseSlot(s, g.tensor(t), s.tensor_record(t), *slot, false, i);
      if (!sc.reason.empty() && std::isinf(sc.cost) && c.reason.empty()) c.reason = sc.reason;
      if (c.hard_reason.empty()) c.hard_reason = sc.hard_reason;
      if (sc.dtype != rec.requested_out[i]) c.exact_dtypes = false;
    }
    if (sc.dtype == DType::kUndefined) sc.dtype = rec.requested_out[i];
    c.total += sc.cost;
    c.out.push_back(std::move(sc));
  }
  if (!k.accuracy_preserving) {
    c.reason = "INF distance, likely a non-accuracy preserving kernel";
    c.total = kInfDistance;
    for (auto& x : c.in) x.cost = kInfDistance;
    for (auto& x : c.out) x.cost = kInfDistance;
  }
  if (!c.reason.empty()) c.total = kInfDistance;
  return c;
}

std::vector<DType> Dtypes(const std::vector<SlotChoice>& v) {
  std::vector<DType> d;
  for (const auto& x : v) d.push_back(x.dtype);
  return d;
}
std::vector<double> Costs(const std::vector<SlotChoice>& v) {
  std::vector<double> d;
  for (const auto& x : v) d.push_back(x.cost);
  return d;
}

}  // namespace

// Every tensor the op reads or writes (static shape/axes parameters aside)
// is a plain integer or bool tensor without an encoding.
static bool OnlyIntegerTensors(const Graph& g, const Op& op) {
  auto plain_int = [&](TensorId t) {
    const Tensor& x = g.tensor(t);
    return (IsInteger(x.dtype) || x.dtype == DType::kBool) && !IsFixedPoint(x.dtype) && !x.encoding;
  };
  bool any = false;
  for (TensorId t : op.inputs) {
    if (t == kInvalidId) continue;
    if (!plain_int(t)) return false;
    any = true;
  }
  for (TensorId t : op.outputs)
    if (!plain_int(t)) return false;
  return any && !op.outputs.empty();
}

Status SelectKernels(Session& s) {
  Graph& g = s.graph();
  const target::Target& tgt = s.target();
  auto order = g.TopologicalOrder();
  if (!order.ok()) return order.status();
  for (OpId id : order.value()) {
    OpRecord& rec = s.op_record(id);
    if (rec.injected) continue;
    const Op& op = g.op(id);
    s.Trace("---- {} ({})", op.name, op.type);
    s.Trace("[REQUESTED KERN.] {}", DTypeTuple(rec.requested_in, rec.requested_out));
    const target::OpKernels* kernels = tgt.FindOp(op.type);
    if (kernels && !kernels->kernels.empty() && OnlyIntegerTensors(g, op)) {
      // Token ids, positions, indices: nothing to quantize. The op runs in
      // the backend's integer configuration (QNN's "OTHERS": INT_32), which
      // the descriptors' quantized/float kernel lists leave out.
      rec.kernel = "integer";
      rec.selected_in = rec.requested_in;
      rec.selected_out = rec.requested_out;
      rec.needed_in.assign(op.inputs.size(), std::nullopt);
      s.Trace("[SELECTED KERN.] integer {} (integer tensors are not quantized)",
              DTypeTuple(rec.selected_in, rec.selected_out));
      continue;
    }
    if (!kernels || kernels->kernels.empty()) {
      rec.failed = true;
      s.Trace("[REJ. KERN.] (none): the target has no kernels for {}", op.type);
      s.Error("no-kernel",
              fmt::format("No accuracy preserving kernels found for {}: target '{}' has no {} kernels", op.name,
                          tgt.name, op.type),
              op.name);
      continue;
    }
    std::optional<Candidate> best;
    size_t best_index = 0;
    std::string hard_reason;
    for (size_t ki = 0; ki < kernels->kernels.size(); ++ki) {
      const target::Kernel& k = kernels->kernels[ki];
      Candidate c = Score(s, op, rec, k);
      if (hard_reason.empty() && !c.hard_reason.empty()) hard_reason = c.hard_reason;
      const std::string tuple = DTypeTuple(Dtypes(c.in), Dtypes(c.out));
      const std::string dist = DistanceTuple(Costs(c.in), Costs(c.out));
      if (!c.reason.empty()) {
        s.Trace("[REJ. KERN.] {} {} reason: {} distance: {} total: {}", k.name, tuple, c.reason, dist,
                FormatDistance(c.total));
        continue;
      }
      if (best && c.total >= best->total) {
        s.Trace("[REJ. KERN.] {} {} reason: distance {} is not below the current best {} distance: {} total: {}",
                k.name, tuple, FormatDistance(c.total), FormatDistance(best->total), dist, FormatDistance(c.total));
        continue;
      }
      best = std::move(c);
      best_index = ki;
      if (best->total == 0) break;
      s.Trace("[CURR. BEST] {} {} distance: {} total: {}", k.name, tuple, dist, FormatDistance(best->total));
    }
    if (!best) {
      rec.failed = true;
      s.Error("no-kernel", fmt::format("No accuracy preserving kernels found for {}", op.name), op.name);
      continue;
    }
    const target::Kernel& k = kernels->kernels[best_index];
    s.Trace("[SELECTED KERN.] {} {} distance: {} total: {}", k.name, DTypeTuple(Dtypes(best->in), Dtypes(best->out)),
            DistanceTuple(Costs(best->in), Costs(best->out)), FormatDistance(best->total));
    if (best->total > 0 && !hard_reason.empty()) {
      // The requested precision exists but not for this symmetry/granularity:
      // the user's encoding is wrong for the target, not something to adapt.
      rec.failed = true;
      s.Error("precision-needs-encodings",
              fmt::format("{} ({}): the requested precision is supported only with other encodings: {}", op.name,
                          op.type, hard_reason),
              op.name);
      continue;
    }
    rec.kernel = k.name;
    rec.distance = best->total;
    rec.adapted = best->total > 0;
    rec.selected_in = Dtypes(best->in);
    rec.selected_out = Dtypes(best->out);
    for (size_t i = 0; i < op.inputs.size(); ++i) rec.needed_in.push_back(best->in[i].enc);
    // Containers of packed weights: the kernel dtype is logical, storage is bytes.
    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (op.inputs[i] != kInvalidId && DTypeBits(rec.selected_in[i]) < 8 && IsFixedPoint(rec.selected_in[i]))
        s.Trace("CONTAINER IN[{}]: {}", i, DTypeShortName(*FixedPointDType(IsSigned(rec.selected_in[i]), 8)));
    if (rec.adapted) s.Trace("[ADAPTED OP] {} {} -> {}", op.name, DTypeTuple(rec.requested_in, rec.requested_out),
                             DTypeTuple(rec.selected_in, rec.selected_out));
    // The op writes its selected encodings.
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const SlotChoice& c = best->out[i];
      const TensorId t = op.outputs[i];
      if (!c.enc || (g.tensor(t).encoding && *g.tensor(t).encoding == *c.enc)) continue;
      QAIRT_RETURN_IF_ERROR(g.SetEncoding(t, *c.enc));
      s.AddReason(t, kReasonOpAdaptation);
      if (c.rescaled) {
        s.tensor_record(t).computed = true;
        // A computed encoding (calibration's, not the user's) gives way to
        // the kernel's: its consumers read the output on the kernel's grid.
        // Converting it back to the calibrated grid of the same width would
        // round every value a second time for nothing (each SiLU's Sigmoid
        // in a decoder's MLP at W8A8).
        auto& requested = s.tensor_record(t).requested_encoding;
        if (requested && !requested->overridden) requested = c.enc;
        s.Trace("[WARN: COMP. ENC.] {} {} (rescaled to the kernel's output constraint)", g.tensor(t).name,
                EncodingTraceText(c.enc));
        WarnUnusedLevels(s, op, g.tensor(t), c);
      }
    }
  }
  return Status::Ok();
}

}  // namespace qairt::pass
