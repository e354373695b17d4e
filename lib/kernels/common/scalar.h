// Scalar helpers shared by reference.cc and the per-ISA kernel files. Every
// function is `static inline` so each translation unit (compiled with its own
// ISA flags) keeps a private copy: no inline function compiled for AVX-512 can
// be picked by the linker for the scalar path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace qairt::kernels {

static inline uint32_t BitsOf(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
static inline float FloatOf(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// binary32 -> binary16, round to nearest even; NaN -> quiet NaN keeping the
// top payload bits (what VCVTPS2PH does). After F. Giesen's float_to_half_fast3_rtne.
static inline uint16_t F32ToF16Bits(float f) {
  uint32_t u = BitsOf(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  uint32_t o;
  if (u >= 0x47800000u) {  // >= 65536 (rounds to inf), inf or NaN
    o = u > 0x7f800000u ? (0x7e00u | ((u >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (u < 0x38800000u) {  // half subnormal or zero: align with a magic add
    const float denorm_magic = FloatOf(((127u - 15u) + (23u - 10u) + 1u) << 23);
    const float g = FloatOf(u) + denorm_magic;
    o = BitsOf(g) - BitsOf(denorm_magic);
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += 0xc8000fffu;  // rebias exponent (15 - 127) << 23, plus rounding bias
    u += mant_odd;
    o = u >> 13;
  }
  return static_cast<uint16_t>(o | sign);
}

// binary16 -> binary32 (exact); NaN made quiet as VCVTPH2PS does.
static inline float F16BitsToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t m = h & 0x3ffu;
  if (e == 0) {
    if (m == 0) return FloatOf(sign);
    const float f = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return FloatOf(sign | BitsOf(f));
  }
  if (e == 31) return FloatOf(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));
  return FloatOf(sign | ((e + 112u) << 23) | (m << 13));
}

static inline float BF16BitsToF32(uint16_t h) { return FloatOf(static_cast<uint32_t>(h) << 16); }

static inline float LoadScalar(const float* p) { return *p; }
static inline float LoadScalar(const Half* p) { return F16BitsToF32(p->bits); }
static inline float LoadScalar(const BFloat16* p) { return BF16BitsToF32(p->bits); }

// The spec's steps, in scalar form.
static inline float NanToZero(float x) { return x == x ? x : 0.0f; }
static inline float MaxPs(float a, float b) { return a > b ? a : b; }  // MAXPS: NaN -> b
static inline float MinPs(float a, float b) { return a < b ? a : b; }  // MINPS: NaN -> b
// Round half to even, independent of the FP mode.
static inline float RoundEven(float v) {
#if defined(__has_builtin) && __has_builtin(__builtin_roundevenf)
  return __builtin_roundevenf(v);
#else  // clang < 15: round half away, then fix ties (v/2 is exact for |v| >= 0.5)
  const float r = __builtin_roundf(v);
  return __builtin_fabsf(r - v) == 0.5f ? 2.0f * __builtin_roundf(0.5f * v) : r;
#endif
}
static inline float CanonicalZero(float v) { return v == 0.0f ? 0.0f : v; }

// LPBQ (see LpbqParams): one block's scale, and its integer scale against the
// channel scale. Written as std::min/max/clamp evaluate, operand order included,
// so the vector kernels can match them lane for lane.
static inline float LpbqBlockScale(float bmin, float bmax, const LpbqParams* p) {
  const double mn = 0.0 < static_cast<double>(bmin) ? 0.0 : static_cast<double>(bmin);  // std::min(bmin, 0.0)
  double mx = static_cast<double>(bmax) < 0.0 ? 0.0 : static_cast<double>(bmax);        // std::max(bmax, 0.0)
  if (mx - mn < static_cast<double>(p->min_range)) mx = mn + static_cast<double>(p->min_range);
  const double up = mx / p->pos, down = -mn / p->neg;
  return static_cast<float>(up < down ? down : up);  // std::max(up, down)
}
static inline int32_t LpbqIntScale(float block_scale, float channel_scale, float levels) {
  const float r = RoundEven(block_scale / channel_scale);
  // std::clamp(r, 1, levels), with NaN (0 / 0: a channel of zero blocks and no
  // minimum range) taken as 1 rather than converted (undefined behaviour).
  return static_cast<int32_t>(!(r >= 1.0f) ? 1.0f : levels < r ? levels : r);
}

// The scalar steps the LPBQ vector kernels share: the blocks after the last
// full vector (block scales, folded into the channel maximum `cs`), and the
// integer scales from block `b` on.
static inline float LpbqTailBlockScales(size_t b, size_t nblocks, const float* bmins, const float* bmaxs,
                                        const LpbqParams* p, float cs, bool* any_nan, float* effective_scales) {
  for (; b < nblocks; ++b) {
    const float bs = LpbqBlockScale(bmins[b], bmaxs[b], p);
    *any_nan |= bs != bs;
    effective_scales[b] = bs;
    cs = cs < bs ? bs : cs;
  }
  return cs;
}
static inline void LpbqTailIntScales(size_t b, size_t nblocks, float cs, float levels, int32_t* int_scales,
                                     float* effective_scales) {
  for (; b < nblocks; ++b) {
    const int32_t k = LpbqIntScale(effective_scales[b], cs, levels);
    int_scales[b] = k;
    effective_scales[b] = static_cast<float>(k) * cs;
  }
}
// Whether a channel scale computed in another order than the reference's is
// certainly the reference's: no NaN met, and a positive finite maximum.
static inline bool LpbqChannelScaleExact(float cs, bool any_nan) { return !any_nan && cs > 0.0f && cs <= 3.40282347e38f; }

static inline int32_t QuantScalar(float x, float s, float zp, float lo, float hi) {
  float v = RoundEven(NanToZero(x) / s) + zp;
  v = MinPs(MaxPs(v, lo), hi);
  if (v >= 2147483648.0f) return INT32_MAX;
  return static_cast<int32_t>(v);
}

}  // namespace qairt::kernels
