// FP16 audit (classic flow: "must be zero or the context binary will not
// build"): on a target without float compute (HTP v68, LPAI), any float
// tensor read or written by a compute op after processing is an error that
// lists the tensors. Conversions at the graph boundary are not compute.
#include <fmt/format.h>

#include <set>

#include "passes/passes.h"

namespace qairt::pass {

Status Fp16Audit(Session& s) {
  const target::Target& tgt = s.target();
  const bool fp16 = tgt.capabilities & target::kCapFp16Compute;
  const bool fp32 = tgt.capabilities & target::kCapFp32Compute;
  if (fp16 || fp32) {
    s.Trace("[FP16 AUDIT] target '{}' computes in float: nothing to check", tgt.name);
    return Status::Ok();
  }
  const Graph& g = s.graph();
  std::set<TensorId> seen;
  std::vector<std::string> names;
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    if (IsConvertOp(op)) continue;
    auto check = [&](TensorId t) {
      if (t == kInvalidId || seen.count(t)) return;
      const Tensor& tensor = g.tensor(t);
      const DType d = tensor.encoding ? tensor.encoding->dtype : tensor.dtype;
      if (!IsFloat(d)) return;
      seen.insert(t);
      names.push_back(fmt::format("'{}' ({}, {} ({}))", tensor.name, DTypeShortName(d), op.name, op.type));
    };
    for (TensorId t : op.inputs) check(t);
    for (TensorId t : op.outputs) check(t);
  }
  for (const auto& n : names) s.Trace("[FP16 AUDIT] float tensor on a target without float compute: {}", n);
  if (names.empty()) return Status::Ok();
  std::string list;
  for (size_t i = 0; i < names.size() && i < 20; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 20) list += fmt::format(", ... ({} in all)", names.size());
  s.Error("fp16-audit", fmt::format("FP16 audit: target '{}' has no float compute, but {} tensor(s) are float after processing: {}. "
                      "Give them encodings (--quantization_overrides) or calibrate them (--input_list)",
                      tgt.name, names.size(), list));
  return Status::Ok();
}

}  // namespace qairt::pass
