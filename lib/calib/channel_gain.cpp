#include "calib/channel_gain.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qairt::calib {

ChannelGain PerChannelGain(const float* data, const std::vector<int64_t>& dims, int32_t axis, const Encoding& e) {
  ChannelGain g;
  if (axis < 0 || static_cast<size_t>(axis) >= dims.size() || e.scales.size() != 1 || e.offsets.size() != 1 ||
      !(e.scales[0] > 0))
    return g;
  size_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(dims[d]);
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= static_cast<size_t>(dims[d]);
  const size_t n = static_cast<size_t>(dims[axis]);
  const QuantRange r = QuantRangeOf(e.dtype, e.effective_bitwidth());
  // Symmetric reach of a signed grid (127 at 8 bits); an unsigned one centres on its middle.
  const double qmax = r.qmin < 0 ? static_cast<double>(std::min<int64_t>(r.qmax, -r.qmin))
                                 : static_cast<double>((r.qmax - r.qmin) / 2);
  std::vector<float> absmax(n, 0.f);
  for (size_t o = 0; o < outer; ++o)
    for (size_t c = 0; c < n; ++c)
      for (size_t i = 0; i < inner; ++i) absmax[c] = std::max(absmax[c], std::fabs(data[(o * n + c) * inner + i]));
  const double s = e.scales[0], offset = e.offsets[0];
  double signal = 0, noise_tensor = 0, noise_channel = 0;
  for (size_t o = 0; o < outer; ++o)
    for (size_t c = 0; c < n; ++c) {
      const double sc = absmax[c] > 0 ? absmax[c] / qmax : 1.0;
      for (size_t i = 0; i < inner; ++i) {
        const double x = data[(o * n + c) * inner + i];
        const double q = std::clamp(std::nearbyint(x / s) - offset, static_cast<double>(r.qmin),
                                    static_cast<double>(r.qmax));
        const double qc = std::nearbyint(x / sc);
        signal += x * x;
        const double et = (q + offset) * s - x, ec = qc * sc - x;
        noise_tensor += et * et;
        noise_channel += ec * ec;
      }
    }
  if (!(signal > 0)) return g;
  auto db = [&](double noise) {
    return noise > 0 ? 10 * std::log10(signal / noise) : std::numeric_limits<double>::infinity();
  };
  g.per_tensor_db = db(noise_tensor);
  g.per_channel_db = db(noise_channel);
  return g;
}

}  // namespace qairt::calib
