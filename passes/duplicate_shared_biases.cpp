// Duplicate shared biases: a bias read by several ops gets one copy per
// consumer, so each can be quantized with its own input x weight scale. The
// copies share the bytes (StaticData is immutable and reference counted).
#include <fmt/format.h>

#include "passes/passes.h"

namespace qairt::pass {

Status DuplicateSharedBiases(Session& s) {
  Graph& g = s.graph();
  const target::Target& tgt = s.target();
  const size_t n = g.tensor_count();
  for (TensorId id = 0; id < n; ++id) {
    const Tensor& t = g.tensor(id);
    if (t.kind != TensorKind::kStatic || t.consumers.size() < 2) continue;
    std::vector<Use> bias_uses;
    for (const Use& u : t.consumers)
      if (IsBiasSlot(tgt, g.op(u.op), u.slot)) bias_uses.push_back(u);
    if (bias_uses.size() < 2) continue;
    // Every bias use but the first gets its own copy.
    for (size_t i = 1; i < bias_uses.size(); ++i) {
      const Use u = bias_uses[i];
      const Tensor& orig = g.tensor(id);
      const std::string name = s.UniqueTensorName(fmt::format("{}_{}", orig.name, g.op(u.op).name));
      auto copy = g.AddConstant(name, orig.dtype, orig.shape, orig.data);
      if (!copy.ok()) return copy.status();
      if (orig.encoding) QAIRT_RETURN_IF_ERROR(g.SetEncoding(copy.value(), *g.tensor(id).encoding));
      QAIRT_RETURN_IF_ERROR(g.SetOpInput(u.op, u.slot, copy.value()));
      const TensorRecord orig_rec = s.tensor_record(id);
      TensorRecord& r = s.tensor_record(copy.value());
      r.injected = true;
      r.origin = g.tensor(id).name;
      r.bias = true;
      r.bias_fxp = orig_rec.bias_fxp;
      r.original_dtype = orig_rec.original_dtype;
      s.AddReason(copy.value(), kReasonDuplicatedBias);
      s.Trace("[WARN: DUP. BIAS] {} is shared: '{}' created for {} ({})", g.tensor(id).name, name, g.op(u.op).name,
              g.op(u.op).type);
    }
  }
  return Status::Ok();
}

}  // namespace qairt::pass
