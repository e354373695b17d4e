// Fill missing encodings (spec "Select op precision", first rule): every
// real-valued tensor without an encoding gets the default float type (the
// target's, fp16 unless --float_bitwidth 32). Biases without encodings are
// fixed point instead: their encoding is computed later from the input and
// weight scales. Integer and bool tensors (indices, shapes) need none.
#include "pass/adapt.h"
#include "passes/passes.h"

namespace qairt::pass {

Status FillMissingEncodings(Session& s) {
  Graph& g = s.graph();
  const target::Target& tgt = s.target();
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    for (size_t slot = 0; slot < op.inputs.size(); ++slot)
      if (op.inputs[slot] != kInvalidId && IsBiasSlot(tgt, op, slot) &&
          g.tensor(op.inputs[slot]).kind == TensorKind::kStatic)
        s.tensor_record(op.inputs[slot]).bias = true;
  }
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    if (t.encoding) continue;
    if (!IsFloat(t.dtype) && !IsFixedPoint(t.dtype)) continue;
    TensorRecord& r = s.tensor_record(id);
    if (r.bias && IsFloat(t.dtype)) {
      r.bias_fxp = true;
      s.Trace("[BIAS FXP] {}: no encoding; fixed point, computed from the input and weight scales", t.name);
      continue;
    }
    if (IsFixedPoint(t.dtype)) {
      s.Error(fmt::format("tensor '{}' holds {} data but has no encoding", t.name, DTypeShortName(t.dtype)));
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
