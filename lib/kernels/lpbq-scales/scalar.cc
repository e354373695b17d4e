// lpbq-scales kernel, scalar level: the reference itself (its divisions are
// the cost, and a scalar loop has no cheaper form of them).
#include "kernels/common/scalar.h"

namespace qairt::kernels {

void qairt_f32_lpbqscales__scalar_u1(size_t nblocks, const float* bmins, const float* bmaxs, const LpbqParams* p,
                                     float* channel_scale, int32_t* int_scales, float* effective_scales) {
  ref::LpbqScales(nblocks, bmins, bmaxs, p, channel_scale, int_scales, effective_scales);
}

}  // namespace qairt::kernels
