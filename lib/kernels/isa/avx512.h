// AVX-512 F/BW/VL vector traits (16 lanes). Uses no AVX512DQ instruction.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/scalar.h"

#define QAIRT_ISA_NS avx512
#define QAIRT_IF_scalar(...)
#define QAIRT_IF_sse41(...)
#define QAIRT_IF_avx2(...)
#define QAIRT_IF_avx512(...) __VA_ARGS__

namespace qairt::kernels::avx512 {

struct V {
  static constexpr size_t kW = 16;
  using F = __m512;
  using I = __m512i;
  struct D {
    __m512d lo, hi;
  };

  static F Load(const float* p) { return _mm512_loadu_ps(p); }
  static F Load(const Half* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static F Load(const BFloat16* p) {
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
  }
  static void Store(float* p, F a) { _mm512_storeu_ps(p, a); }
  static void StoreF16(Half* p, F a) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static F Set1(float s) { return _mm512_set1_ps(s); }
  static I Set1I(int32_t s) { return _mm512_set1_epi32(s); }
  static F Add(F a, F b) { return _mm512_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm512_div_ps(a, b); }
  static F Max(F a, F b) { return _mm512_max_ps(a, b); }
  static F Min(F a, F b) { return _mm512_min_ps(a, b); }
  static F RoundEven(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F NanToZero(F a) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a, a, _CMP_ORD_Q), a); }
  // NanToZero(a) / b in one masked division (b finite and > 0: 0 / b == +0).
  static F DivNanToZero(F a, F b) { return _mm512_maskz_div_ps(_mm512_cmp_ps_mask(a, a, _CMP_ORD_Q), a, b); }
  static I CvtF2I(F a) { return _mm512_cvtps_epi32(a); }
  // Round half to even and convert in one instruction (static rounding, not
  // the caller's MXCSR mode).
  static I CvtRoundEven(F a) { return _mm512_cvt_roundps_epi32(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F CvtI2F(I a) { return _mm512_cvtepi32_ps(a); }
  static I LoadI32(const int32_t* p) { return _mm512_loadu_si512(p); }
  static void StoreI32(int32_t* p, I a) { _mm512_storeu_si512(p, a); }
  // acc | ((q & mask) << shift): one packed field of a dword per lane.
  static I OrField(I acc, I q, int32_t mask, int shift) {
    return _mm512_or_si512(acc, _mm512_sll_epi32(_mm512_and_si512(q, _mm512_set1_epi32(mask)), _mm_cvtsi32_si128(shift)));
  }
  static I AddI(I a, I b) { return _mm512_add_epi32(a, b); }
  static I FixI32Max(F v, I q) {
    return _mm512_mask_mov_epi32(q, _mm512_cmp_ps_mask(v, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ),
                                 _mm512_set1_epi32(INT32_MAX));
  }
  template <int kBits>
  static void StoreQ(uint8_t* p, I q) {
    if constexpr (kBits == 32) {
      _mm512_storeu_si512(p, q);
    } else if constexpr (kBits == 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(q));
    } else if constexpr (kBits == 4) {
      // Lanes 2j and 2j+1 share qword j: move lane 2j+1's nibble next to lane
      // 2j's (bits 4..7), then keep the low byte of each qword.
      const __m512i hi = _mm512_srli_epi64(q, 28);
      const __m512i b = _mm512_ternarylogic_epi64(_mm512_set1_epi64(0x0f), q, hi, 0xca);  // m ? q : hi
      _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm512_cvtepi64_epi8(b));
    } else {
      const __m128i b = _mm512_cvtepi32_epi8(q);
      if constexpr (kBits == 8) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), b);
      } else if constexpr (kBits == 4) {
        const __m128i t = _mm_or_si128(_mm_and_si128(b, _mm_set1_epi16(0x000f)),
                                       _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi16(0x00f0)));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(t, t));
      } else {
        static_assert(kBits == 2);
        __m128i t = _mm_and_si128(b, _mm_set1_epi8(3));
        t = _mm_or_si128(t, _mm_srli_epi32(t, 6));
        t = _mm_or_si128(t, _mm_srli_epi32(t, 12));
        t = _mm_shuffle_epi8(t, _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
        const int32_t v = _mm_cvtsi128_si32(t);
        __builtin_memcpy(p, &v, 4);
      }
    }
  }
  template <int kBits, bool kSigned>
  static I LoadQ(const uint8_t* p) {
    if constexpr (kBits == 32) {
      return _mm512_loadu_si512(p);
    } else if constexpr (kBits == 16) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      return kSigned ? _mm512_cvtepi16_epi32(b) : _mm512_cvtepu16_epi32(b);
    } else if constexpr (kBits == 8) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return kSigned ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    } else if constexpr (kBits == 4) {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      const __m128i lo = _mm_and_si128(b, _mm_set1_epi8(0x0f));
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(0x0f));
      I r = _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi));
      if (kSigned) r = _mm512_sub_epi32(_mm512_xor_si512(r, _mm512_set1_epi32(8)), _mm512_set1_epi32(8));
      return r;
    } else {
      static_assert(kBits == 2);
      int32_t v;
      __builtin_memcpy(&v, p, 4);
      const __m128i b = _mm_shuffle_epi8(_mm_cvtsi32_si128(v),
                                         _mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
      I r = _mm512_srlv_epi32(_mm512_cvtepu8_epi32(b),
                              _mm512_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6));
      r = _mm512_and_si512(r, _mm512_set1_epi32(3));
      if (kSigned) r = _mm512_sub_epi32(_mm512_xor_si512(r, _mm512_set1_epi32(2)), _mm512_set1_epi32(2));
      return r;
    }
  }
  static F DequantS32(I q, I off, F s) {
    const __m512d lo = _mm512_add_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(q)),
                                     _mm512_cvtepi32_pd(_mm512_castsi512_si256(off)));
    const __m512d hi = _mm512_add_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(q, 1)),
                                     _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(off, 1)));
    const __m256 flo = _mm512_cvtpd_ps(lo);
    const __m256 fhi = _mm512_cvtpd_ps(hi);
    const __m512d both = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(flo)), _mm256_castps_pd(fhi), 1);
    return _mm512_mul_ps(_mm512_castpd_ps(both), s);
  }
  // Both reductions in one min tree: max(v) == -min(-v). Callers pass vectors
  // without NaN lanes and canonicalise zero signs, the only thing that differs.
  static void ReduceMinMax(F vmin, F vmax, float* mn, float* mx) {
    F c = TreeStep(vmin, Negate(vmax), 0);                      // [min | -max], 8 lanes each
    c = _mm512_min_ps(c, _mm512_shuffle_f32x4(c, c, 0xb1));  // [min | -max] in each 256-bit half
    c = _mm512_min_ps(c, _mm512_permute_ps(c, 0x4e));
    c = _mm512_min_ps(c, _mm512_permute_ps(c, 0xb1));
    *mn = _mm_cvtss_f32(_mm512_castps512_ps128(c));
    *mx = -_mm_cvtss_f32(_mm512_extractf32x4_ps(c, 2));
  }
  // Per-run min/max for kW consecutive runs in one transposed tree: vmin[k] /
  // vmax[k] hold run k's lane-wise partials (no NaN lanes); lane k of *mn /
  // *mx gets run k's min / max (zero signs may differ: callers canonicalise).
  // 15 shuffle pairs per tree instead of a horizontal reduction per run.
  static constexpr bool kTransposedRuns = true;
  static F TreeStep(F a, F b, int level) {
    switch (level) {
      case 0:  // 128-bit chunks 0,1 <- a, 2,3 <- b
        return _mm512_min_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xee));
      case 1:  // chunk j <- the j-th of the four runs
        return _mm512_min_ps(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xdd));
      case 2:
        return _mm512_min_ps(_mm512_shuffle_ps(a, b, 0x44), _mm512_shuffle_ps(a, b, 0xee));
      default:
        return _mm512_min_ps(_mm512_shuffle_ps(a, b, 0x88), _mm512_shuffle_ps(a, b, 0xdd));
    }
  }
  static F TreeMin(const F* v) {  // 16 vectors; lane 4j + l of the tree holds run j + 4l
    F oct[2];
    for (int h = 0; h < 2; ++h) {
      F quad[2];
      for (int q = 0; q < 2; ++q) {
        const F* r = v + 8 * h + 4 * q;
        quad[q] = TreeStep(TreeStep(r[0], r[1], 0), TreeStep(r[2], r[3], 0), 1);
      }
      oct[h] = TreeStep(quad[0], quad[1], 2);
    }
    const F t = TreeStep(oct[0], oct[1], 3);
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), t);
  }
  static F Negate(F a) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN))); }
  static void TransposeRunsMinMax(const F* vmin, F* vmax, F* mn, F* mx) {
    for (size_t k = 0; k < kW; ++k) vmax[k] = Negate(vmax[k]);
    *mn = TreeMin(vmin);
    *mx = Negate(TreeMin(vmax));
  }
  // v == 0 ? +0 : v, per lane (NaN kept).
  static F CanonicalZero(F a) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_NEQ_UQ), a); }
  static size_t CountNonFinite(F a) {
    const I e = _mm512_set1_epi32(0x7f800000);
    const __mmask16 m = _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(a), e), e);
    return static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(m)));
  }
  static void HistIdx(F x, F lo, F hi, F sc, int32_t maxbin, int32_t* out) {
    const __mmask16 ok = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ) & _mm512_cmp_ps_mask(x, hi, _CMP_LE_OQ);
    I b = _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_sub_ps(x, lo), sc));
    b = _mm512_min_epi32(b, _mm512_set1_epi32(maxbin));
    b = _mm512_mask_mov_epi32(_mm512_set1_epi32(-1), ok, b);
    _mm512_storeu_si512(out, b);
  }
  static D ZeroD() { return D{_mm512_setzero_pd(), _mm512_setzero_pd()}; }
  static D AccSq(D acc, F e) {
    const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(e));
    const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1)));
    acc.lo = _mm512_add_pd(acc.lo, _mm512_mul_pd(lo, lo));
    acc.hi = _mm512_add_pd(acc.hi, _mm512_mul_pd(hi, hi));
    return acc;
  }
  static double ReduceD(D a) { return _mm512_reduce_add_pd(_mm512_add_pd(a.lo, a.hi)); }
};

}  // namespace qairt::kernels::avx512
