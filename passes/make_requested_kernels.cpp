// Make requested kernels: each op's requested dtype tuple, from the encodings
// as they stand after propagation, super groups and float fallback. Biases
// without encodings request the fixed-point bias type (s32, or s8 with
// --bias_bitwidth 8). No TRACE tokens (spec).
#include "passes/adapt.h"
#include "passes/passes.h"

namespace qairt::pass {

Status MakeRequestedKernels(Session& s) {
  Graph& g = s.graph();
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    TensorRecord& r = s.tensor_record(id);
    r.requested = r.bias_fxp ? *FixedPointDType(true, s.options().bias_bitwidth) : RequestedDType(t);
    r.requested_encoding = t.encoding;
  }
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    OpRecord& r = s.op_record(id);
    r.requested_in.clear();
    r.requested_out.clear();
    for (TensorId in : op.inputs)
      r.requested_in.push_back(in == kInvalidId ? DType::kUndefined : s.tensor_record(in).requested);
    for (TensorId out : op.outputs) r.requested_out.push_back(s.tensor_record(out).requested);
  }
  return Status::Ok();
}

}  // namespace qairt::pass
