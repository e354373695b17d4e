// Fill missing encodings (spec "Select op precision", first rule): every
// real-valued tensor without an encoding gets the default float type (the
// target's, fp16 unless --float_bitwidth 32). Biases without encodings are
// fixed point instead: their encoding is computed later from the input and
// weight scales. Integer and bool tensors (indices, shapes) need none.
#include "passes/adapt.h"
#include "passes/passes.h"

namespace qairt::pass {

Status FillMissingEncodings(Session& s) {
  Graph& g = s.graph();
  const target::Target& tgt = s.target();
  // A bias is fixed point when its op's weight is: a float conv keeps a float bias.
  std::vector<bool> weight_quantized(g.tensor_count(), false);
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    bool quantized_weight = false;
    for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
      const TensorId w = op.inputs[slot];
      if (w != kInvalidId && IsWeightSlot(tgt, op, slot) && g.tensor(w).encoding &&
          IsFixedPoint(g.tensor(w).encoding->dtype))
        quantized_weight = true;
    }
    for (size_t slot = 0; slot < op.inputs.size(); ++slot)
      if (op.inputs[slot] != kInvalidId && IsBiasSlot(tgt, op, slot) &&
          g.tensor(op.inputs[slot]).kind == TensorKind::kStatic) {
        s.tensor_record(op.inputs[slot]).bias = true;
        if (quantized_weight) weight_quantized[op.inputs[slot]] = true;
      }
  }
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    if (t.encoding) continue;
    if (!IsFloat(t.dtype) && !IsFixedPoint(t.dtype)) continue;
    TensorRecord& r = s.tensor_record(id);
    if (r.bias && IsFloat(t.dtype) && weight_quantized[id]) {
      r.bias_fxp = true;
      s.Trace("[BIAS FXP] {}: no encoding; fixed point, computed from the input and weight scales", t.name);
      continue;
    }
    if (IsFixedPoint(t.dtype)) {
      s.Error("missing-encoding",
              fmt::format("tensor '{}' holds {} data but has no encoding", t.name, DTypeShortName(t.dtype)), {},
              t.name);
      continue;
    }
    const DType f = s.float_dtype();
    QAIRT_RETURN_IF_ERROR(g.SetEncoding(id, FloatEncoding(f)));
    r.float_fallback = true;
    s.AddReason(id, kReasonFloatFallback);
    s.Trace("[WARN: FP FALL] {}: no encoding, assigned {}", t.name, DTypeShortName(f));
  }
  return Status::Ok();
}

}  // namespace qairt::pass
