// Scalar specification of the LPBQ scales of one channel.
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

void LpbqScales(size_t nblocks, const float* bmins, const float* bmaxs, const LpbqParams* p, float* channel_scale,
                int32_t* int_scales, float* effective_scales) {
  // Block scales (kept in effective_scales for now), their maximum in block
  // order as std::max(cs, bs) takes it, then the integer scales.
  bool any_nan = false;
  const float cs = LpbqTailBlockScales(0, nblocks, bmins, bmaxs, p, 0.0f, &any_nan, effective_scales) / p->levels;
  *channel_scale = cs;
  LpbqTailIntScales(0, nblocks, cs, p->levels, int_scales, effective_scales);
}

}  // namespace qairt::kernels::ref
