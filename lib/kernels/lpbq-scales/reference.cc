// Scalar specification of the LPBQ scales of one channel.
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

void LpbqScales(size_t nblocks, const float* bmins, const float* bmaxs, const LpbqParams* p, float* channel_scale,
                int32_t* int_scales, float* effective_scales) {
  float cs = 0.0f;
  for (size_t b = 0; b < nblocks; ++b) {
    const float bs = LpbqBlockScale(bmins[b], bmaxs[b], p);
    effective_scales[b] = bs;  // the block scale for now
    cs = cs < bs ? bs : cs;    // std::max(cs, bs)
  }
  cs /= p->levels;
  *channel_scale = cs;
  for (size_t b = 0; b < nblocks; ++b) {
    const int32_t k = LpbqIntScale(effective_scales[b], cs, p->levels);
    int_scales[b] = k;
    effective_scales[b] = static_cast<float>(k) * cs;
  }
}

}  // namespace qairt::kernels::ref
