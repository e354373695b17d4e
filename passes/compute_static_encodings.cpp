// Compute static / bias encodings (spec "Quantize static tensors"; TRACE
// "Compute Static / Bias Encodings"). A fixed-point bias takes scale = input
// scale x weight scale (per channel where the weight is), offset 0, in the
// kernel's bias type (int32 by default); with --bias_bitwidth 8 it is
// computed from its own data instead. A user-given bias encoding that breaks
// the kernel's product rule is replaced, with a warning.
#include <fmt/format.h>

#include "passes/adapt.h"
#include "passes/quant_log.h"
#include "passes/passes.h"
#include "quant/quantize.h"

namespace qairt::pass {

namespace {

const target::Slot* KernelInputSlot(const target::Target& tgt, const Op& op, const std::string& kernel, size_t i) {
  const target::OpKernels* ok = tgt.FindOp(op.type);
  if (!ok) return nullptr;
  for (const target::Kernel& k : ok->kernels)
    if (k.name == kernel) return k.input(i);
  return nullptr;
}

}  // namespace

Status ComputeStaticEncodings(Session& s) {
  Graph& g = s.graph();
  const target::Target& tgt = s.target();
  for (OpId id = 0; id < g.op_count(); ++id) {
    OpRecord& rec = s.op_record(id);
    if (rec.injected || rec.failed || rec.kernel.empty()) continue;
    const Op& op = g.op(id);
    for (size_t i = 0; i < op.inputs.size() && i < rec.selected_in.size(); ++i) {
      const TensorId b = op.inputs[i];
      if (b == kInvalidId || !IsBiasSlot(tgt, op, i)) continue;
      const Tensor& bias = g.tensor(b);
      if (bias.kind != TensorKind::kStatic) continue;
      const DType want = rec.selected_in[i];
      TensorRecord& br = s.tensor_record(b);
      if (IsFloat(want)) {
        if (!bias.encoding) {
          QAIRT_RETURN_IF_ERROR(g.SetEncoding(b, FloatEncoding(want)));
          rec.needed_in[i] = FloatEncoding(want);
        }
        continue;
      }
      const target::Slot* slot = KernelInputSlot(tgt, op, rec.kernel, i);
      const bool product_rule = slot && slot->scale_rule == target::ScaleRule::kProductOfInputs;
      Encoding enc;
      if (DTypeBits(want) >= 32 || product_rule) {
        const auto& in = rec.needed_in.size() > 0 ? rec.needed_in[0] : std::nullopt;
        const auto& w = rec.needed_in.size() > 1 ? rec.needed_in[1] : std::nullopt;
        // LPBQ weights sit on a common per-channel grid (the per-channel
        // float scales; the block integer scales are multiples of it): the
        // bias takes that grid's scale like a per-channel weight's.
        if (!in || !w || !IsFixedPoint(in->dtype) || !IsFixedPoint(w->dtype) || in->scales.size() != 1 ||
            (w->kind != EncodingKind::kPerTensor && w->kind != EncodingKind::kPerChannel &&
             w->kind != EncodingKind::kLpbq)) {
          s.Error("bias-encoding", fmt::format("{} ({}): cannot compute the encoding of bias '{}': the input and weight need per-tensor "
                              "/ per-channel / LPBQ fixed-point encodings",
                              op.name, op.type, bias.name),
                  op.name, bias.name);
          continue;
        }
        enc.kind = w->scales.size() > 1 ? EncodingKind::kPerChannel : EncodingKind::kPerTensor;
        enc.dtype = want;
        enc.symmetry = Symmetry::kSymmetric;
        enc.axis = enc.kind == EncodingKind::kPerChannel ? 0 : -1;
        for (float ws : w->scales) enc.scales.push_back(in->scales[0] * ws);
        enc.offsets.assign(enc.scales.size(), 0);
      } else {
        if (bias.dtype != DType::kFloat32 || !bias.data) {
          s.Error("bias-encoding",
                  fmt::format("{} ({}): bias '{}' has no float data to compute a {} encoding from", op.name, op.type,
                              bias.name, DTypeShortName(want)),
                  op.name, bias.name);
          continue;
        }
        quant::EncodingRequest req;
        req.dtype = want;
        req.symmetry = Symmetry::kSymmetric;
        auto e = quant::ComputeEncoding(bias.name, reinterpret_cast<const float*>(bias.data->data()),
                                        bias.shape.extents(), req);
        if (!e.ok()) {
          s.Error("bias-encoding", e.status().message(), op.name, bias.name);
          continue;
        }
        enc = e.value();
      }
      if (bias.encoding && IsFixedPoint(bias.encoding->dtype)) {
        Encoding given = *bias.encoding;
        given.overridden = false;
        if (given == enc) {
          rec.needed_in[i] = enc;
          continue;
        }
        s.Warn("bias-encoding-replaced",
               fmt::format("bias '{}': the given encoding is replaced by scale = input scale x weight scale for {} "
                           "({})",
                           bias.name, op.name, rec.kernel),
               op.name, bias.name);
      }
      QAIRT_RETURN_IF_ERROR(g.SetEncoding(b, enc));
      rec.needed_in[i] = enc;
      br.computed = true;
      s.Trace("[WARN: COMP. ENC.] {} {}", bias.name, EncodingTraceText(enc));
    }
  }
  return Status::Ok();
}

}  // namespace qairt::pass
