// SSE4.1 vector traits (4 lanes). No F16C at this level: fp16 lanes are
// converted with the scalar helper.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/scalar.h"

#define QAIRT_ISA_NS sse41
#define QAIRT_IF_scalar(...)
#define QAIRT_IF_sse41(...) __VA_ARGS__
#define QAIRT_IF_avx2(...)
#define QAIRT_IF_avx512(...)

namespace qairt::kernels::sse41 {

struct V {
  static constexpr size_t kW = 4;
  using F = __m128;
  using I = __m128i;
  struct D {
    __m128d lo, hi;
  };

  static F Load(const float* p) { return _mm_loadu_ps(p); }
  static F Load(const Half* p) {
    return _mm_setr_ps(F16BitsToF32(p[0].bits), F16BitsToF32(p[1].bits), F16BitsToF32(p[2].bits),
                       F16BitsToF32(p[3].bits));
  }
  static F Load(const BFloat16* p) {
    return _mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))), 16));
  }
  static void Store(float* p, F a) { _mm_storeu_ps(p, a); }
  static F Set1(float s) { return _mm_set1_ps(s); }
  static I Set1I(int32_t s) { return _mm_set1_epi32(s); }
  static F Add(F a, F b) { return _mm_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm_div_ps(a, b); }
  static F Max(F a, F b) { return _mm_max_ps(a, b); }
  static F Min(F a, F b) { return _mm_min_ps(a, b); }
  static F RoundEven(F a) { return _mm_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F NanToZero(F a) { return _mm_and_ps(a, _mm_cmpord_ps(a, a)); }
  static F DivNanToZero(F a, F b) { return _mm_div_ps(NanToZero(a), b); }
  static I CvtF2I(F a) { return _mm_cvtps_epi32(a); }
  static I CvtRoundEven(F a) { return CvtF2I(RoundEven(a)); }
  static F CvtI2F(I a) { return _mm_cvtepi32_ps(a); }
  static I LoadI32(const int32_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static void StoreI32(int32_t* p, I a) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), a); }
  // acc | ((q & mask) << shift): one packed field of a dword per lane.
  static I OrField(I acc, I q, int32_t mask, int shift) {
    return _mm_or_si128(acc, _mm_sll_epi32(_mm_and_si128(q, _mm_set1_epi32(mask)), _mm_cvtsi32_si128(shift)));
  }
  static I AddI(I a, I b) { return _mm_add_epi32(a, b); }
  static I FixI32Max(F v, I q) {
    const I m = _mm_castps_si128(_mm_cmpge_ps(v, _mm_set1_ps(2147483648.0f)));
    return _mm_blendv_epi8(q, _mm_set1_epi32(INT32_MAX), m);
  }
  static void Store32(uint8_t* p, I a) {
    const int32_t v = _mm_cvtsi128_si32(a);
    __builtin_memcpy(p, &v, 4);
  }
  template <int kBits>
  static void StoreQ(uint8_t* p, I q) {
    if constexpr (kBits == 32) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), q);
    } else if constexpr (kBits == 16) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(p),
                       _mm_shuffle_epi8(q, _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1)));
    } else {
      const I b = _mm_shuffle_epi8(q, _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
      if constexpr (kBits == 8) {
        Store32(p, b);
      } else if constexpr (kBits == 4) {
        const I t = _mm_or_si128(_mm_and_si128(b, _mm_set1_epi16(0x000f)),
                                 _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi16(0x00f0)));
        const uint16_t v = static_cast<uint16_t>(_mm_cvtsi128_si32(_mm_packus_epi16(t, t)));
        __builtin_memcpy(p, &v, 2);
      } else {
        static_assert(kBits == 2);
        I t = _mm_and_si128(b, _mm_set1_epi8(3));
        t = _mm_or_si128(t, _mm_srli_epi32(t, 6));
        t = _mm_or_si128(t, _mm_srli_epi32(t, 12));
        p[0] = static_cast<uint8_t>(_mm_cvtsi128_si32(t));
      }
    }
  }
  template <int kBits, bool kSigned>
  static I LoadQ(const uint8_t* p) {
    if constexpr (kBits == 32) {
      return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    } else if constexpr (kBits == 16) {
      const I b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      return kSigned ? _mm_cvtepi16_epi32(b) : _mm_cvtepu16_epi32(b);
    } else if constexpr (kBits == 8) {
      int32_t v;
      __builtin_memcpy(&v, p, 4);
      const I b = _mm_cvtsi32_si128(v);
      return kSigned ? _mm_cvtepi8_epi32(b) : _mm_cvtepu8_epi32(b);
    } else if constexpr (kBits == 4) {
      uint16_t v;
      __builtin_memcpy(&v, p, 2);
      const I b = _mm_cvtsi32_si128(v);
      const I lo = _mm_and_si128(b, _mm_set1_epi8(0x0f));
      const I hi = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(0x0f));
      I r = _mm_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi));
      if (kSigned) r = _mm_sub_epi32(_mm_xor_si128(r, _mm_set1_epi32(8)), _mm_set1_epi32(8));
      return r;
    } else {
      static_assert(kBits == 2);
      const int32_t b = p[0];
      I r = _mm_setr_epi32(b & 3, (b >> 2) & 3, (b >> 4) & 3, (b >> 6) & 3);
      if (kSigned) r = _mm_sub_epi32(_mm_xor_si128(r, _mm_set1_epi32(2)), _mm_set1_epi32(2));
      return r;
    }
  }
  static F DequantS32(I q, I off, F s) {
    const __m128d lo = _mm_add_pd(_mm_cvtepi32_pd(q), _mm_cvtepi32_pd(off));
    const __m128d hi = _mm_add_pd(_mm_cvtepi32_pd(_mm_unpackhi_epi64(q, q)), _mm_cvtepi32_pd(_mm_unpackhi_epi64(off, off)));
    return _mm_mul_ps(_mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi)), s);
  }
  static float ReduceMin(F a) {
    a = _mm_min_ps(_mm_movehl_ps(a, a), a);
    a = _mm_min_ps(_mm_shuffle_ps(a, a, 1), a);
    return _mm_cvtss_f32(a);
  }
  static constexpr bool kTransposedRuns = false;  // see avx512.h
  static void ReduceMinMax(F vmin, F vmax, float* mn, float* mx) {
    *mn = ReduceMin(vmin);
    *mx = ReduceMax(vmax);
  }
  static float ReduceMax(F a) {
    a = _mm_max_ps(_mm_movehl_ps(a, a), a);
    a = _mm_max_ps(_mm_shuffle_ps(a, a, 1), a);
    return _mm_cvtss_f32(a);
  }
  static size_t CountNonFinite(F a) {
    const I e = _mm_set1_epi32(0x7f800000);
    const I m = _mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(a), e), e);
    return static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(m)))));
  }
  static void HistIdx(F x, F lo, F hi, F sc, int32_t maxbin, int32_t* out) {
    const F ok = _mm_and_ps(_mm_cmpge_ps(x, lo), _mm_cmple_ps(x, hi));
    I b = _mm_cvttps_epi32(_mm_mul_ps(_mm_sub_ps(x, lo), sc));
    b = _mm_min_epi32(b, _mm_set1_epi32(maxbin));
    b = _mm_blendv_epi8(_mm_set1_epi32(-1), b, _mm_castps_si128(ok));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), b);
  }
  static D ZeroD() { return D{_mm_setzero_pd(), _mm_setzero_pd()}; }
  static D AccSq(D acc, F e) {
    const __m128d lo = _mm_cvtps_pd(e);
    const __m128d hi = _mm_cvtps_pd(_mm_movehl_ps(e, e));
    acc.lo = _mm_add_pd(acc.lo, _mm_mul_pd(lo, lo));
    acc.hi = _mm_add_pd(acc.hi, _mm_mul_pd(hi, hi));
    return acc;
  }
  static double ReduceD(D a) {
    const __m128d s = _mm_add_pd(a.lo, a.hi);
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
};

}  // namespace qairt::kernels::sse41
