// The fp16 simulation: the audit graph with fp16 storage for every tensor
// outside the fp32 nodes, run on samples and compared with the fp32 outputs.
#include <cmath>
#include <cstring>
#include <limits>

#include "exec/kernel.h"
#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

Result<Graph> Preparer::Fp16Graph(const std::vector<bool>& node_fp32) const {
  Graph g = graphs_[audit_spec_];
  auto op_fp32 = [&](OpId op) {
    const int n = op < node_of_op_.size() ? node_of_op_[op] : -1;
    return n >= 0 && node_fp32[static_cast<size_t>(n)];
  };
  for (TensorId t = 0; t < g.tensor_count(); ++t) {
    const Tensor& ten = g.tensor(t);
    if (ten.dtype != DType::kFloat32 || ten.kind == TensorKind::kInput) continue;
    // A tensor stays fp32 only when everything around it is fp32: an fp16
    // consumer would convert it (and overflow) on the device.
    bool fp32 = !ten.consumers.empty() || ten.is_output;
    for (const Use& u : ten.consumers) fp32 = fp32 && op_fp32(u.op);
    if (ten.kind == TensorKind::kActivation) fp32 = fp32 && ten.producer != kInvalidId && op_fp32(ten.producer);
    if (fp32) continue;
    if (ten.kind == TensorKind::kStatic) {
      std::vector<float> v(ten.data->size() / 4);
      if (!v.empty()) std::memcpy(v.data(), ten.data->data(), v.size() * 4);
      for (float& x : v) x = exec::HalfRound(x);
      std::vector<uint8_t> b(v.size() * 4);
      if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
      Status s = g.SetStaticData(t, DType::kFloat32, StaticData::Adopt(std::move(b)));
      if (!s.ok()) return s;
    } else {
      Status s = g.SetTensorDType(t, DType::kFloat16);
      if (!s.ok()) return s;
    }
  }
  return g;
}

double Preparer::Simulate(const std::vector<bool>& node_fp32, const std::vector<Sample>& samples,
                          std::string* first_tensor) {
  auto g = Fp16Graph(node_fp32);
  if (!g.ok()) {
    Add(Severity::kError, "fp16-simulation", BaseName(o_.model_path), "{}", g.status().message());
    return std::numeric_limits<double>::infinity();
  }
  std::string first;
  auto observe = [&](size_t si, const exec::ObservedTensor& t) -> Status {
    if (si != 0 || !first.empty() || t.storage_dtype != DType::kFloat32) return Status::Ok();
    auto it = first_sample_.find(*t.name);
    if (it == first_sample_.end() || it->second.size() * 4 != t.bytes) return Status::Ok();
    const float* p = static_cast<const float*>(t.data);
    double scale = 0.0, d = 0.0;
    for (size_t k = 0; k < it->second.size(); ++k) {
      const double a = it->second[k];
      if (!std::isfinite(a)) continue;
      scale = std::max(scale, std::fabs(a));
      const double diff = std::fabs(a - static_cast<double>(p[k]));
      d = std::isnan(diff) ? INFINITY : std::max(d, diff);
    }
    if (d / std::max(scale, 1e-12) > o_.fp16_budget) first = *t.name;
    return Status::Ok();
  };
  auto out = RunAll(g.value(), samples, true, observe);
  if (!out.ok()) {
    Add(Severity::kError, "fp16-simulation", BaseName(o_.model_path), "{}", out.status().message());
    return std::numeric_limits<double>::infinity();
  }
  if (first_tensor) *first_tensor = first;
  std::vector<RunOutputs> ref(ref_.begin(), ref_.begin() + static_cast<std::ptrdiff_t>(samples.size()));
  return OutputError(ref, out.value());
}

}  // namespace qairt::prepare::internal
