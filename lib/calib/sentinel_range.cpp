#include "calib/sentinel_range.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace qairt::calib {

// Min/max of the values that are not sentinels (NaN ignored); flags for the
// sentinels seen; returns the number of NaNs. Branch-free over 16 lanes (the
// compiler vectorises it): an LLM's embedding table is 65M values.
size_t RealMinMax(const float* x, size_t n, TensorStats* s) {
  constexpr size_t kLanes = 16;
  const float inf = std::numeric_limits<float>::infinity();
  float lo[kLanes], hi[kLanes];
  int32_t low[kLanes] = {}, high[kLanes] = {}, nans[kLanes] = {};
  for (size_t l = 0; l < kLanes; ++l) lo[l] = inf, hi[l] = -inf;
  auto step = [&](size_t l, float v) {
    const bool nan = v != v;
    const bool sentinel = !(std::fabs(v) < kMaskSentinel) & !nan;
    low[l] |= sentinel & (v < 0);
    high[l] |= sentinel & (v > 0);
    nans[l] += nan;
    const bool skip = sentinel | nan;
    const float real_lo = skip ? lo[l] : v;  // a skipped value leaves lo and hi as they are
    const float real_hi = skip ? hi[l] : v;
    lo[l] = real_lo < lo[l] ? real_lo : lo[l];
    hi[l] = real_hi > hi[l] ? real_hi : hi[l];
  };
  size_t i = 0, nan_count = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) step(l, x[i + l]);
    if ((i & ((size_t{1} << 24) - 1)) == 0)  // the int32 counts never wrap
      for (size_t l = 0; l < kLanes; ++l) nan_count += static_cast<size_t>(nans[l]), nans[l] = 0;
  }
  for (size_t l = 0; i < n; ++i, l = 0) step(l, x[i]);
  for (size_t l = 0; l < kLanes; ++l) {
    s->min = std::min(s->min, lo[l]);
    s->max = std::max(s->max, hi[l]);
    s->low_sentinel = s->low_sentinel || low[l];
    s->high_sentinel = s->high_sentinel || high[l];
    nan_count += static_cast<size_t>(nans[l]);
  }
  return nan_count;
}

// The range a tensor with sentinels is quantized over (see kMaskSentinel).
std::pair<float, float> RangeWithSentinels(const TensorStats& s) {
  float lo = s.min, hi = s.max;
  if (!(hi >= lo)) lo = hi = 0.0f;  // sentinels only (a -inf fill constant)
  if (s.low_sentinel) lo = std::min(lo, hi - kMaskDepth);
  if (s.high_sentinel) hi = std::max(hi, lo + kMaskDepth);
  return {lo, hi};
}

}  // namespace qairt::calib
