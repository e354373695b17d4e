// Runs of the reference executor over the samples, and the error of one set
// of runs against another.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "exec/kernel.h"
#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

namespace {

std::vector<float> ToFloats(const exec::HostTensor& t) {
  std::vector<float> v;
  const uint8_t* p = t.bytes.data();
  switch (t.dtype) {
    case DType::kFloat32:
      v.resize(t.bytes.size() / 4);
      if (!v.empty()) std::memcpy(v.data(), p, v.size() * 4);
      break;
    case DType::kFloat16:
      for (size_t k = 0; k + 1 < t.bytes.size() + 1 && 2 * k + 1 < t.bytes.size(); ++k) {
        uint16_t h;
        std::memcpy(&h, p + 2 * k, 2);
        v.push_back(exec::HalfBitsToFloat(h));
      }
      break;
    case DType::kFloat64:
      for (size_t k = 0; 8 * k + 7 < t.bytes.size(); ++k) {
        double d;
        std::memcpy(&d, p + 8 * k, 8);
        v.push_back(static_cast<float>(d));
      }
      break;
    default:
      break;  // integer / bool outputs are not compared numerically
  }
  return v;
}

}  // namespace

Result<std::vector<RunOutputs>> RunAll(const Graph& g, const std::vector<Sample>& samples, bool round_inputs,
                                      const std::function<Status(size_t sample, const exec::ObservedTensor&)>& observe) {
  auto ex = exec::Executor::Create(g);
  if (!ex.ok()) return ex.status();
  std::vector<RunOutputs> all;
  for (size_t si = 0; si < samples.size(); ++si) {
    Sample s = samples[si];
    if (round_inputs) {
      // -convert-to-fp16 converts float inputs too.
      for (size_t i = 0; i < s.size() && i < g.inputs().size(); ++i) {
        if (g.tensor(g.inputs()[i]).dtype != DType::kFloat32) continue;
        float* f = reinterpret_cast<float*>(s[i].data());
        for (size_t k = 0; k < s[i].size() / 4; ++k) f[k] = exec::HalfRound(f[k]);
      }
    }
    exec::Observer obs;
    if (observe) obs = [&](const exec::ObservedTensor& t) { return observe(si, t); };
    auto out = ex.value()->Run(s, observe ? &obs : nullptr);
    if (!out.ok()) return out.status();
    RunOutputs ro;
    for (const auto& h : out.value()) ro.outputs.push_back(ToFloats(h));
    all.push_back(std::move(ro));
  }
  return all;
}

double OutputError(const std::vector<RunOutputs>& a, const std::vector<RunOutputs>& b, double* max_abs) {
  double worst = 0.0, worst_abs = 0.0;
  if (a.empty() || a.size() != b.size()) return std::numeric_limits<double>::infinity();
  for (size_t o = 0; o < a[0].outputs.size(); ++o) {
    double scale = 0.0, d = 0.0;
    for (size_t s = 0; s < a.size(); ++s) {
      const auto& ra = a[s].outputs[o];
      const auto& rb = b[s].outputs[o];
      if (ra.size() != rb.size()) return std::numeric_limits<double>::infinity();
      for (size_t k = 0; k < ra.size(); ++k) {
        if (!std::isfinite(ra[k])) {
          if (!(std::isnan(ra[k]) && std::isnan(rb[k])) && ra[k] != rb[k]) d = std::numeric_limits<double>::infinity();
          continue;
        }
        scale = std::max(scale, std::fabs(static_cast<double>(ra[k])));
        const double diff = std::fabs(static_cast<double>(ra[k]) - static_cast<double>(rb[k]));
        d = std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(d, diff);
      }
    }
    worst_abs = std::max(worst_abs, d);
    worst = std::max(worst, d / std::max(scale, 1e-12));
  }
  if (max_abs) *max_abs = worst_abs;
  return worst;
}

}  // namespace qairt::prepare::internal
