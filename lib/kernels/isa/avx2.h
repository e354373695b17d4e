// AVX2 + FMA + F16C vector traits (8 lanes).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/scalar.h"

#define QAIRT_ISA_NS avx2
#define QAIRT_IF_scalar(...)
#define QAIRT_IF_sse41(...)
#define QAIRT_IF_avx2(...) __VA_ARGS__
#define QAIRT_IF_avx512(...)

namespace qairt::kernels::avx2 {

struct V {
  static constexpr size_t kW = 8;
  using F = __m256;
  using I = __m256i;
  struct D {
    __m256d lo, hi;
  };

  static F Load(const float* p) { return _mm256_loadu_ps(p); }
  static F Load(const Half* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static F Load(const BFloat16* p) {
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
  }
  static void Store(float* p, F a) { _mm256_storeu_ps(p, a); }
  static void StoreF16(Half* p, F a) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static F Set1(float s) { return _mm256_set1_ps(s); }
  static I Set1I(int32_t s) { return _mm256_set1_epi32(s); }
  static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm256_div_ps(a, b); }
  static F Max(F a, F b) { return _mm256_max_ps(a, b); }
  static F Min(F a, F b) { return _mm256_min_ps(a, b); }
  static F RoundEven(F a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F NanToZero(F a) { return _mm256_and_ps(a, _mm256_cmp_ps(a, a, _CMP_ORD_Q)); }
  static F DivNanToZero(F a, F b) { return _mm256_div_ps(NanToZero(a), b); }
  static I CvtF2I(F a) { return _mm256_cvtps_epi32(a); }
  static I CvtRoundEven(F a) { return CvtF2I(RoundEven(a)); }
  static F CvtI2F(I a) { return _mm256_cvtepi32_ps(a); }
  static I LoadI32(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void StoreI32(int32_t* p, I a) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), a); }
  // acc | ((q & mask) << shift): one packed field of a dword per lane.
  static I OrField(I acc, I q, int32_t mask, int shift) {
    return _mm256_or_si256(acc, _mm256_sll_epi32(_mm256_and_si256(q, _mm256_set1_epi32(mask)), _mm_cvtsi32_si128(shift)));
  }
  static I AddI(I a, I b) { return _mm256_add_epi32(a, b); }
  static I FixI32Max(F v, I q) {
    const I m = _mm256_castps_si256(_mm256_cmp_ps(v, _mm256_set1_ps(2147483648.0f), _CMP_GE_OQ));
    return _mm256_blendv_epi8(q, _mm256_set1_epi32(INT32_MAX), m);
  }
  // Low byte of each lane -> 8 bytes in the low half of an xmm.
  static __m128i Bytes(I q) {
    const I s = _mm256_shuffle_epi8(
        q, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1,
                            -1, -1, -1, -1, -1, -1, -1, -1));
    return _mm_unpacklo_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  }
  template <int kBits>
  static void StoreQ(uint8_t* p, I q) {
    if constexpr (kBits == 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), q);
    } else if constexpr (kBits == 16) {
      const I s = _mm256_shuffle_epi8(
          q, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9, 12, 13, -1, -1,
                              -1, -1, -1, -1, -1, -1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(_mm256_permute4x64_epi64(s, 0x08)));
    } else {
      const __m128i b = Bytes(q);
      if constexpr (kBits == 8) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(p), b);
      } else if constexpr (kBits == 4) {
        const __m128i t = _mm_or_si128(_mm_and_si128(b, _mm_set1_epi16(0x000f)),
                                       _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi16(0x00f0)));
        const int32_t v = _mm_cvtsi128_si32(_mm_packus_epi16(t, t));
        __builtin_memcpy(p, &v, 4);
      } else {
        static_assert(kBits == 2);
        __m128i t = _mm_and_si128(b, _mm_set1_epi8(3));
        t = _mm_or_si128(t, _mm_srli_epi32(t, 6));
        t = _mm_or_si128(t, _mm_srli_epi32(t, 12));
        t = _mm_shuffle_epi8(t, _mm_setr_epi8(0, 4, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
        const uint16_t v = static_cast<uint16_t>(_mm_cvtsi128_si32(t));
        __builtin_memcpy(p, &v, 2);
      }
    }
  }
  template <int kBits, bool kSigned>
  static I LoadQ(const uint8_t* p) {
    if constexpr (kBits == 32) {
      return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    } else if constexpr (kBits == 16) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return kSigned ? _mm256_cvtepi16_epi32(b) : _mm256_cvtepu16_epi32(b);
    } else if constexpr (kBits == 8) {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      return kSigned ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    } else if constexpr (kBits == 4) {
      int32_t v;
      __builtin_memcpy(&v, p, 4);
      const __m128i b = _mm_cvtsi32_si128(v);
      const __m128i lo = _mm_and_si128(b, _mm_set1_epi8(0x0f));
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(0x0f));
      I r = _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi));
      if (kSigned) r = _mm256_sub_epi32(_mm256_xor_si256(r, _mm256_set1_epi32(8)), _mm256_set1_epi32(8));
      return r;
    } else {
      static_assert(kBits == 2);
      uint16_t v;
      __builtin_memcpy(&v, p, 2);
      const __m128i b = _mm_shuffle_epi8(_mm_cvtsi32_si128(v), _mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, -1, -1, -1, -1, -1,
                                                                             -1, -1, -1));
      I r = _mm256_srlv_epi32(_mm256_cvtepu8_epi32(b), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
      r = _mm256_and_si256(r, _mm256_set1_epi32(3));
      if (kSigned) r = _mm256_sub_epi32(_mm256_xor_si256(r, _mm256_set1_epi32(2)), _mm256_set1_epi32(2));
      return r;
    }
  }
  static F DequantS32(I q, I off, F s) {
    const __m256d lo = _mm256_add_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(q)),
                                     _mm256_cvtepi32_pd(_mm256_castsi256_si128(off)));
    const __m256d hi = _mm256_add_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(q, 1)),
                                     _mm256_cvtepi32_pd(_mm256_extracti128_si256(off, 1)));
    return _mm256_mul_ps(_mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)), s);
  }
  static constexpr bool kTransposedRuns = false;  // see avx512.h
  // Both reductions in one min tree: max(v) == -min(-v) (see avx512.h).
  static void ReduceMinMax(F vmin, F vmax, float* mn, float* mx) {
    const __m256 nmax = _mm256_xor_ps(vmax, _mm256_set1_ps(-0.0f));
    __m256 c = _mm256_min_ps(_mm256_permute2f128_ps(vmin, nmax, 0x20), _mm256_permute2f128_ps(vmin, nmax, 0x31));
    c = _mm256_min_ps(c, _mm256_permute_ps(c, 0x4e));
    c = _mm256_min_ps(c, _mm256_permute_ps(c, 0xb1));
    *mn = _mm256_cvtss_f32(c);
    *mx = -_mm_cvtss_f32(_mm256_extractf128_ps(c, 1));
  }
  static size_t CountNonFinite(F a) {
    const I e = _mm256_set1_epi32(0x7f800000);
    const I m = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(a), e), e);
    return static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(m)))));
  }
  static void HistIdx(F x, F lo, F hi, F sc, int32_t maxbin, int32_t* out) {
    const F ok = _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_GE_OQ), _mm256_cmp_ps(x, hi, _CMP_LE_OQ));
    I b = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_sub_ps(x, lo), sc));
    b = _mm256_min_epi32(b, _mm256_set1_epi32(maxbin));
    b = _mm256_blendv_epi8(_mm256_set1_epi32(-1), b, _mm256_castps_si256(ok));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), b);
  }
  static D ZeroD() { return D{_mm256_setzero_pd(), _mm256_setzero_pd()}; }
  static D AccSq(D acc, F e) {
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(e));
    const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1));
    acc.lo = _mm256_add_pd(acc.lo, _mm256_mul_pd(lo, lo));
    acc.hi = _mm256_add_pd(acc.hi, _mm256_mul_pd(hi, hi));
    return acc;
  }
  static double ReduceD(D a) {
    const __m256d s = _mm256_add_pd(a.lo, a.hi);
    __m128d t = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(t, _mm_unpackhi_pd(t, t)));
  }
};

}  // namespace qairt::kernels::avx2
