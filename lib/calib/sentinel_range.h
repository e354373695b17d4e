// Mask sentinels in calibration ranges: attention masks written as -inf or
// float32's lowest value are not data (see kMaskSentinel). Internal to calib.
#pragma once

#include <cstddef>
#include <utility>

#include "calib/stats.h"

namespace qairt::calib {

// Attention masks write "minus infinity" as -inf or as float32's lowest value
// (HF's finfo.min, -3.4e38). A range through such values leaves no resolution
// for the ones that matter (every real score rounds to one step of 5e33), and
// the Q-DQ model's DequantizeLinear overflows it to -inf (then 0 x -inf: NaN).
// So |x| >= kMaskSentinel is a sentinel, not data: ranges leave it out and
// reach kMaskDepth beyond the real values, so a sentinel saturates to a value
// that still vanishes after softmax (e^-20 ~ 2e-9 of the largest score).
inline constexpr float kMaskSentinel = 1e30f;
inline constexpr float kMaskDepth = 20.0f;

inline bool IsSentinel(float v) { return !(v > -kMaskSentinel && v < kMaskSentinel) && v == v; }

// Min/max of the values that are not sentinels (NaN ignored), folded into
// s->min / s->max; flags for the sentinels seen; returns the number of NaNs.
size_t RealMinMax(const float* x, size_t n, TensorStats* s);

// The range a tensor with sentinels is quantized over.
std::pair<float, float> RangeWithSentinels(const TensorStats& s);

}  // namespace qairt::calib
