// The part of the LPBQ-scales vector kernels (avx2.cc, avx512.cc) written
// once against the vector traits `V` of the including file's ISA
// (kernels/isa/<isa>.h, included first, as for common/impl.h): everything
// after the block-scale loop. That loop works in double lanes, which the
// traits do not cover, and stays in each kernel.
#ifndef QAIRT_ISA_NS
#error "include kernels/isa/<isa>.h first"
#endif

#include <cstddef>
#include <cstdint>

#include "kernels/common/scalar.h"

namespace qairt::kernels::QAIRT_ISA_NS {

// Finishes a channel whose block scales [0, b) the vector loop has written to
// effective_scales, keeping their maximum per lane in lane_max[0, lanes) and
// whether one was NaN in any_nan: the remaining blocks, the channel scale and
// the integer scales. A channel whose maximum may differ from the reference's
// (taken in block order) is handed to the reference whole.
static inline void LpbqFinishChannel(size_t b, const float* lane_max, size_t lanes, bool any_nan, size_t nblocks,
                                     const float* bmins, const float* bmaxs, const LpbqParams* p,
                                     float* channel_scale, int32_t* int_scales, float* effective_scales) {
  float cs = 0.0f;
  for (size_t l = 0; l < lanes; ++l) cs = cs < lane_max[l] ? lane_max[l] : cs;
  cs = LpbqTailBlockScales(b, nblocks, bmins, bmaxs, p, cs, &any_nan, effective_scales) / p->levels;
  if (!LpbqChannelScaleExact(cs, any_nan)) {
    ref::LpbqScales(nblocks, bmins, bmaxs, p, channel_scale, int_scales, effective_scales);
    return;
  }
  *channel_scale = cs;
  const V::F vcs = V::Set1(cs), one = V::Set1(1.0f), levels = V::Set1(p->levels);
  for (b = 0; b + V::kW <= nblocks; b += V::kW) {
    // std::clamp's value (MAXPS gives `one` for a NaN quotient). It is a whole
    // number (levels is a power of two), so the conversion's rounding mode
    // does not matter and it equals the reference's truncation.
    const V::F r = V::Min(V::Max(V::RoundEven(V::Div(V::Load(effective_scales + b), vcs)), one), levels);
    const V::I k = V::CvtF2I(r);
    V::StoreI32(int_scales + b, k);
    V::Store(effective_scales + b, V::Mul(V::CvtI2F(k), vcs));
  }
  LpbqTailIntScales(b, nblocks, cs, p->levels, int_scales, effective_scales);
}

}  // namespace qairt::kernels::QAIRT_ISA_NS
