// lpbq-scales kernel, avx512 level (compiled with: -mavx512f -mavx512bw -mavx512vl -mavx2 -mfma -mf16c; see
// CMakeLists.txt). Block scales eight per step in double lanes (the rest in
// impl.h): the same IEEE
// operations as the reference, with MINPD/MAXPD operand order chosen to give
// std::min/std::max's result (ties and NaN included). The channel maximum is
// taken in a different order, which only matters for NaN or an all-zero
// channel: those rows are handed to the reference.
#include "kernels/isa/avx512.h"
//
#include "kernels/lpbq-scales/impl.h"

namespace qairt::kernels {

void qairt_f32_lpbqscales__avx512_u8(size_t nblocks, const float* bmins, const float* bmaxs, const LpbqParams* p,
                                     float* channel_scale, int32_t* int_scales, float* effective_scales) {
  const __m512d zero = _mm512_setzero_pd();
  const __m512d min_range = _mm512_set1_pd(static_cast<double>(p->min_range));
  const __m512d pos = _mm512_set1_pd(p->pos), neg = _mm512_set1_pd(p->neg);
  const __m512i sign = _mm512_set1_epi64(static_cast<int64_t>(0x8000000000000000ull));
  __m256 vmax = _mm256_setzero_ps();
  __mmask8 nan = 0;
  size_t b = 0;
  for (; b + 8 <= nblocks; b += 8) {
    const __m512d mn = _mm512_min_pd(zero, _mm512_cvtps_pd(_mm256_loadu_ps(bmins + b)));  // 0 < v ? 0 : v
    __m512d mx = _mm512_max_pd(zero, _mm512_cvtps_pd(_mm256_loadu_ps(bmaxs + b)));        // v < 0 ? 0 : v
    const __mmask8 narrow = _mm512_cmp_pd_mask(_mm512_sub_pd(mx, mn), min_range, _CMP_LT_OQ);
    mx = _mm512_mask_blend_pd(narrow, mx, _mm512_add_pd(mn, min_range));
    const __m512d up = _mm512_div_pd(mx, pos);
    const __m512d down = _mm512_div_pd(_mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(mn), sign)), neg);
    const __m256 bs = _mm512_cvtpd_ps(_mm512_max_pd(down, up));  // up < down ? down : up
    nan |= _mm256_cmp_ps_mask(bs, bs, _CMP_UNORD_Q);
    _mm256_storeu_ps(effective_scales + b, bs);
    vmax = _mm256_max_ps(vmax, bs);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  avx512::LpbqFinishChannel(b, lanes, 8, nan != 0, nblocks, bmins, bmaxs, p, channel_scale, int_scales,
                            effective_scales);
}

}  // namespace qairt::kernels
