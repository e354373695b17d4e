// lpbq-scales kernel, avx2 level (compiled with: -mavx2 -mfma -mf16c; see
// CMakeLists.txt). Block scales four per step in double lanes, the rest in
// impl.h; see avx512.cc for how it matches the reference.
#include "kernels/isa/avx2.h"
//
#include "kernels/lpbq-scales/impl.h"

namespace qairt::kernels {

void qairt_f32_lpbqscales__avx2_u4(size_t nblocks, const float* bmins, const float* bmaxs, const LpbqParams* p,
                                   float* channel_scale, int32_t* int_scales, float* effective_scales) {
  const __m256d zero = _mm256_setzero_pd();
  const __m256d min_range = _mm256_set1_pd(static_cast<double>(p->min_range));
  const __m256d pos = _mm256_set1_pd(p->pos), neg = _mm256_set1_pd(p->neg);
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m128 vmax = _mm_setzero_ps();
  __m128 nan = _mm_setzero_ps();
  size_t b = 0;
  for (; b + 4 <= nblocks; b += 4) {
    const __m256d mn = _mm256_min_pd(zero, _mm256_cvtps_pd(_mm_loadu_ps(bmins + b)));  // 0 < v ? 0 : v
    __m256d mx = _mm256_max_pd(zero, _mm256_cvtps_pd(_mm_loadu_ps(bmaxs + b)));        // v < 0 ? 0 : v
    const __m256d narrow = _mm256_cmp_pd(_mm256_sub_pd(mx, mn), min_range, _CMP_LT_OQ);
    mx = _mm256_blendv_pd(mx, _mm256_add_pd(mn, min_range), narrow);
    const __m256d up = _mm256_div_pd(mx, pos);
    const __m256d down = _mm256_div_pd(_mm256_xor_pd(mn, sign), neg);
    const __m128 bs = _mm256_cvtpd_ps(_mm256_max_pd(down, up));  // up < down ? down : up
    nan = _mm_or_ps(nan, _mm_cmpunord_ps(bs, bs));
    _mm_storeu_ps(effective_scales + b, bs);
    vmax = _mm_max_ps(vmax, bs);
  }
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, vmax);
  avx2::LpbqFinishChannel(b, lanes, 4, _mm_movemask_ps(nan) != 0, nblocks, bmins, bmaxs, p, channel_scale, int_scales,
                          effective_scales);
}

}  // namespace qairt::kernels
