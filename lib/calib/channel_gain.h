// What a per-tensor weight loses against per-channel scales (convert warns
// when per-channel scales would be worth it). Internal to calib.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/encoding.h"

namespace qairt::calib {

// What a per-tensor weight loses against per-channel scales, measured: the
// weight's quantization SQNR with its one scale and with one symmetric scale
// per output channel (the same bit width). A channel whose values are small
// next to the tensor's largest (a folded BatchNorm, a MatMul whose output
// columns differ in range) keeps few or no steps under the one scale.
// Per-channel SQNR is +inf for a tensor that per-channel scales hold
// exactly; a zero tensor loses nothing.
struct ChannelGain {
  double per_tensor_db = 0;
  double per_channel_db = 0;
};
ChannelGain PerChannelGain(const float* data, const std::vector<int64_t>& dims, int32_t axis, const Encoding& e);

}  // namespace qairt::calib
