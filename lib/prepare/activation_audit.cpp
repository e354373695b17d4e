// The activation audit: the fp32 run on the input_list samples (overflow,
// headroom, underflow and non-finite values per tensor) and the fp16
// simulation of the whole model.
#include <algorithm>
#include <cmath>

#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

void Preparer::Activations() {
  if (graphs_.empty() || samples_.empty() || samples_generated_) return;
  const Graph& g = graphs_[audit_spec_];
  // IR op -> ONNX node: by the node name, else by an output name.
  const auto& og = model_.proto.graph();
  node_of_op_.assign(g.op_count(), -1);
  for (OpId i = 0; i < g.op_count(); ++i) {
    const Op& op = g.op(i);
    auto byname = ix_.by_name.find(op.source_name);
    if (!op.source_name.empty() && byname != ix_.by_name.end()) {
      node_of_op_[i] = byname->second;
      continue;
    }
    for (TensorId t : op.outputs) {
      auto p = ix_.producer.find(g.tensor(t).name);
      if (p != ix_.producer.end()) {
        node_of_op_[i] = p->second;
        break;
      }
    }
  }
  auto observe = [&](size_t si, const exec::ObservedTensor& t) -> Status {
    if (t.storage_dtype != DType::kFloat32) return Status::Ok();
    const float* p = static_cast<const float*>(t.data);
    const size_t n = t.bytes / 4;
    TensorStats& s = stats_[*t.name];
    for (size_t k = 0; k < n; ++k) {
      const float x = p[k];
      if (!std::isfinite(x)) { ++s.nonfinite; continue; }
      const double a = std::fabs(static_cast<double>(x));
      s.absmax = std::max(s.absmax, a);
      if (a > kFp16Max) ++s.over;
      if (x != 0.0f) {
        ++s.nonzero;
        if (a < kFp16MinSubnormal) ++s.under;
      }
    }
    s.n += n;
    if (si == 0) first_sample_[*t.name].assign(p, p + n);
    return Status::Ok();
  };
  auto ref = RunAll(g, samples_, false, observe);
  if (!ref.ok()) {
    Add(Severity::kError, "executor", BaseName(o_.model_path), "the executor cannot run the model: {}", ref.status().message());
    return;
  }
  ref_ = std::move(ref).value();
  r_.audit_samples = samples_.size();
  auto node_of_tensor = [&](const std::string& name) -> std::string {
    auto t = g.FindTensor(name);
    if (!t || g.tensor(*t).producer == kInvalidId) return "";
    const int n = node_of_op_[g.tensor(*t).producer];
    if (n < 0) return g.op(g.tensor(*t).producer).name;
    const auto& node = og.node(n);
    return node.name().empty() ? node.output(0) : node.name();
  };
  // Report in execution order.
  auto order = g.TopologicalOrder();
  std::vector<std::string> names;
  if (order.ok())
    for (OpId op : order.value())
      for (TensorId t : g.op(op).outputs) names.push_back(g.tensor(t).name);
  for (const std::string& name : names) {
    auto it = stats_.find(name);
    if (it == stats_.end()) continue;
    const TensorStats& s = it->second;
    const std::string node = node_of_tensor(name);
    if (s.nonfinite)
      Add(Severity::kWarning, "activation-nonfinite", name, "tensor '{}' (node '{}'): {} non-finite values already in fp32",
          name, node, s.nonfinite);
    if (s.over) {
      Add(Severity::kWarning, "activation-overflow", name, "tensor '{}' (node '{}'): max |x| = {} in fp32, beyond the "
          "fp16 limit 65504 ({} of {} values); keep it in fp32 (--fp32_nodes) or rescale", name, node, Num(s.absmax),
          s.over, s.n);
    } else if (s.absmax > kFp16Max / o_.headroom_margin) {
      Add(Severity::kWarning, "activation-headroom", name, "tensor '{}' (node '{}'): max |x| = {} is within {}x of the "
          "fp16 limit 65504", name, node, Num(s.absmax), Num(o_.headroom_margin));
    }
    if (s.nonzero && s.under) {
      const double frac = static_cast<double>(s.under) / static_cast<double>(s.nonzero);
      // As for constants: a warning only when the tensor's scale is below
      // fp16's normal range (tiny softmax probabilities next to ~1 are fine).
      if (frac >= o_.underflow_fraction)
        Add(frac >= o_.underflow_fraction && s.absmax < kFp16MinNormal ? Severity::kWarning : Severity::kInfo,
            "activation-underflow", name, "tensor '{}' (node '{}'): {:.3g}% of nonzero values are below 2^-24 and flush "
            "to zero in fp16 (max |x| {})", name, node, 100.0 * frac, Num(s.absmax));
    }
  }
  std::string first;
  const std::vector<bool> none(static_cast<size_t>(og.node_size()), false);
  r_.fp16_error = Simulate(none, samples_, &first);
  r_.first_diverging_tensor = first;
  r_.first_diverging_node = first.empty() ? "" : node_of_tensor(first);
  if (r_.fp16_error <= o_.fp16_budget)
    Add(Severity::kInfo, "fp16-simulation", BaseName(o_.model_path), "fp16 simulation vs fp32: output error {} (budget "
        "{}) on {} samples", Num(r_.fp16_error), Num(o_.fp16_budget), samples_.size());
  else
    Add(o_.fp32_nodes.empty() ? Severity::kWarning : Severity::kInfo, "fp16-divergence", first.empty() ? BaseName(o_.model_path) : first,
        "fp16 simulation vs fp32: output error {} exceeds the budget {}; first diverging tensor '{}' (node '{}'){}",
        Num(r_.fp16_error), Num(o_.fp16_budget), first, r_.first_diverging_node,
        o_.fp32_nodes.empty() ? "; --fp32_nodes auto picks nodes to keep in fp32" : "");
}

}  // namespace qairt::prepare::internal
