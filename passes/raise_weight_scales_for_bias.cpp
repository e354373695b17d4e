// Raise weight scales for biases (runs before "Compute Static / Bias
// Encodings"). A fixed-point bias on the kernel's product rule takes scale =
// input scale x weight scale. With 16-bit activations and a channel of tiny
// weights that product is so small that the bias leaves its grid (int32) and
// saturates, which wrecks the channel's output. Where that would happen the
// channel's weight scale is raised just enough for the bias to fit: the
// weights lose a little resolution, the bias keeps its value (ONNX Runtime's
// quantizer does the same for int32 biases). Encodings the user gave are not
// touched (the saturation warning still says what happens to them).
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "passes/passes.h"

namespace qairt::pass {

namespace {

// The smallest float weight scale w >= `current` with |bias| / (s_in * w) <= qmax,
// computing s_in * w in float as the bias encoding does.
float ScaleForBias(float current, float s_in, double abs_bias, double qmax) {
  auto fits = [&](float w) {
    const float product = s_in * w;
    return product > 0 && abs_bias / static_cast<double>(product) <= qmax;
  };
  if (abs_bias == 0 || fits(current)) return current;
  float w = static_cast<float>(abs_bias / (static_cast<double>(s_in) * qmax));
  if (!(w > current)) w = current;
  while (!fits(w) && std::isfinite(w)) w = std::nextafter(w, std::numeric_limits<float>::infinity());
  // No finite float scale holds this bias: keep the scale (the saturation
  // warning of quantize-static-tensors then says so) rather than write inf.
  return std::isfinite(w) ? w : current;
}

// Largest |bias| per output channel (one value when `channels` is 1).
std::vector<double> AbsMaxPerChannel(const Tensor& bias, size_t channels) {
  const size_t n = bias.data->size() / sizeof(float);
  std::vector<double> out(channels, 0.0);
  for (size_t i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, bias.data->data() + i * sizeof v, sizeof v);
    double& m = out[channels == 1 ? 0 : i % channels];
    if (std::isfinite(v)) m = std::max(m, static_cast<double>(std::fabs(v)));
  }
  return out;
}

}  // namespace

Status RaiseWeightScalesForBias(Session& s) {
  if (!s.options().bias_aware_weight_scales) return Status::Ok();
  Graph& g = s.graph();
  const target::Target& tgt = s.target();
  for (OpId id = 0; id < g.op_count(); ++id) {
    OpRecord& rec = s.op_record(id);
    if (rec.injected || rec.failed || rec.kernel.empty() || rec.needed_in.size() < 3) continue;
    const Op& op = g.op(id);
    if (op.inputs.size() < 3) continue;
    const TensorId b = op.inputs[2], w = op.inputs[1];
    if (b == kInvalidId || w == kInvalidId || !IsBiasSlot(tgt, op, 2)) continue;
    const Tensor& bias = g.tensor(b);
    const DType bias_dtype = rec.selected_in.size() > 2 ? rec.selected_in[2] : DType::kUndefined;
    // Only biases on the product rule: 32-bit fixed point without a given encoding.
    if (bias.kind != TensorKind::kStatic || !bias.data || bias.dtype != DType::kFloat32 ||
        !IsFixedPoint(bias_dtype) || DTypeBits(bias_dtype) < 32 || (bias.encoding && bias.encoding->overridden))
      continue;
    const auto& in = rec.needed_in[0];
    auto& weight = rec.needed_in[1];
    if (!in || !weight || !IsFixedPoint(in->dtype) || in->scales.size() != 1 || !IsFixedPoint(weight->dtype) ||
        weight->overridden ||
        (weight->kind != EncodingKind::kPerTensor && weight->kind != EncodingKind::kPerChannel))
      continue;
    const size_t channels = weight->scales.size();
    const size_t bias_count = bias.data->size() / sizeof(float);
    if (channels != 1 && channels != bias_count) continue;
    const double qmax = std::ldexp(1.0, static_cast<int>(DTypeBits(bias_dtype)) - 1) - 1;
    const std::vector<double> need = AbsMaxPerChannel(bias, channels);
    Encoding raised = *weight;
    size_t changed = 0;
    double largest = 1;
    for (size_t c = 0; c < channels; ++c) {
      const float before = raised.scales[c];
      raised.scales.mut()[c] = ScaleForBias(before, in->scales[0], need[c], qmax);
      if (raised.scales[c] != before) {
        ++changed;
        largest = std::max(largest, static_cast<double>(raised.scales[c]) / before);
      }
    }
    if (!changed) continue;
    const std::string& wname = g.tensor(w).name;
    s.Trace("[BIAS SCALE] {}: {} of {} channel scales of weight '{}' raised (up to {:.3g}x) so bias '{}' fits the "
            "{}-bit grid at input scale x weight scale",
            op.name, changed, channels, wname, largest, bias.name, DTypeBits(bias_dtype));
    s.raised_weight_scales.push_back({wname, changed, channels, largest});
    // Every consumer of the weight that needed the old encoding gets the raised one.
    const Encoding old = *weight;
    for (const Use& u : g.tensor(w).consumers) {
      OpRecord& r = s.op_record(u.op);
      if (u.slot < r.needed_in.size() && r.needed_in[u.slot] && *r.needed_in[u.slot] == old) r.needed_in[u.slot] = raised;
    }
    QAIRT_RETURN_IF_ERROR(g.SetEncoding(w, raised));
    s.AddReason(w, kReasonBiasAwareScale);
  }
  return Status::Ok();
}

}  // namespace qairt::pass
