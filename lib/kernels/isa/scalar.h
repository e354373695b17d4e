// Portable "vector" of 4 lanes in plain C++: the scalar ISA level. Included
// by the scalar.cc of each family before its common/*-impl.h template.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/scalar.h"

#define QAIRT_ISA_NS scalar
#define QAIRT_IF_scalar(...) __VA_ARGS__
#define QAIRT_IF_sse41(...)
#define QAIRT_IF_avx2(...)
#define QAIRT_IF_avx512(...)

namespace qairt::kernels::scalar {

struct V {
  static constexpr size_t kW = 4;
  struct F {
    float v[4];
  };
  struct I {
    int32_t v[4];
  };
  struct D {
    double v[4];
  };

  template <typename T>
  static F Load(const T* p) {
    F r;
    for (size_t j = 0; j < kW; ++j) r.v[j] = LoadScalar(p + j);
    return r;
  }
  static void Store(float* p, F a) {
    for (size_t j = 0; j < kW; ++j) p[j] = a.v[j];
  }
  static void StoreF16(Half* p, F a) {
    for (size_t j = 0; j < kW; ++j) p[j].bits = F32ToF16Bits(a.v[j]);
  }
  static F Set1(float s) { return F{{s, s, s, s}}; }
  static I Set1I(int32_t s) { return I{{s, s, s, s}}; }
#define QAIRT_SCALAR_BINOP(name, expr) \
  static F name(F a, F b) {            \
    F r;                               \
    for (size_t j = 0; j < kW; ++j) {  \
      const float x = a.v[j];          \
      const float y = b.v[j];          \
      r.v[j] = (expr);                 \
    }                                  \
    return r;                          \
  }
  QAIRT_SCALAR_BINOP(Add, x + y)
  QAIRT_SCALAR_BINOP(Sub, x - y)
  QAIRT_SCALAR_BINOP(Mul, x* y)
  QAIRT_SCALAR_BINOP(Div, x / y)
  QAIRT_SCALAR_BINOP(Max, MaxPs(x, y))
  QAIRT_SCALAR_BINOP(Min, MinPs(x, y))
#undef QAIRT_SCALAR_BINOP
  static F RoundEven(F a) {
    for (size_t j = 0; j < kW; ++j) a.v[j] = kernels::RoundEven(a.v[j]);
    return a;
  }
  static F NanToZero(F a) {
    for (size_t j = 0; j < kW; ++j) a.v[j] = kernels::NanToZero(a.v[j]);
    return a;
  }
  static F DivNanToZero(F a, F b) { return Div(NanToZero(a), b); }
  // Values are integral and in range when this is called.
  static I CvtF2I(F a) {
    I r;
    for (size_t j = 0; j < kW; ++j) r.v[j] = a.v[j] >= 2147483648.0f ? INT32_MIN : static_cast<int32_t>(a.v[j]);
    return r;
  }
  static I CvtRoundEven(F a) { return CvtF2I(RoundEven(a)); }
  static F CvtI2F(I a) {
    F r;
    for (size_t j = 0; j < kW; ++j) r.v[j] = static_cast<float>(a.v[j]);
    return r;
  }
  static I LoadI32(const int32_t* p) {
    I r;
    for (size_t j = 0; j < kW; ++j) r.v[j] = p[j];
    return r;
  }
  static void StoreI32(int32_t* p, I a) {
    for (size_t j = 0; j < kW; ++j) p[j] = a.v[j];
  }
  // acc | ((q & mask) << shift): one packed field of a dword per lane.
  static I OrField(I acc, I q, int32_t mask, int shift) {
    for (size_t j = 0; j < kW; ++j)
      acc.v[j] = static_cast<int32_t>(static_cast<uint32_t>(acc.v[j]) |
                                      ((static_cast<uint32_t>(q.v[j]) & static_cast<uint32_t>(mask)) << shift));
    return acc;
  }
  static I AddI(I a, I b) {
    for (size_t j = 0; j < kW; ++j) a.v[j] = static_cast<int32_t>(static_cast<uint32_t>(a.v[j]) + static_cast<uint32_t>(b.v[j]));
    return a;
  }
  static I FixI32Max(F v, I q) {
    for (size_t j = 0; j < kW; ++j)
      if (v.v[j] >= 2147483648.0f) q.v[j] = INT32_MAX;
    return q;
  }
  template <int kBits>
  static void StoreQ(uint8_t* p, I q) {
    if constexpr (kBits == 8) {
      for (size_t j = 0; j < kW; ++j) p[j] = static_cast<uint8_t>(q.v[j]);
    } else if constexpr (kBits == 16) {
      for (size_t j = 0; j < kW; ++j) {
        const uint16_t u = static_cast<uint16_t>(q.v[j]);
        __builtin_memcpy(p + 2 * j, &u, 2);
      }
    } else if constexpr (kBits == 32) {
      __builtin_memcpy(p, q.v, 16);
    } else if constexpr (kBits == 4) {
      p[0] = static_cast<uint8_t>((q.v[0] & 0xf) | ((q.v[1] & 0xf) << 4));
      p[1] = static_cast<uint8_t>((q.v[2] & 0xf) | ((q.v[3] & 0xf) << 4));
    } else {
      static_assert(kBits == 2);
      p[0] = static_cast<uint8_t>((q.v[0] & 3) | ((q.v[1] & 3) << 2) | ((q.v[2] & 3) << 4) | ((q.v[3] & 3) << 6));
    }
  }
  template <int kBits, bool kSigned>
  static I LoadQ(const uint8_t* p) {
    I r;
    for (size_t j = 0; j < kW; ++j) {
      int32_t v;
      if constexpr (kBits == 8) {
        v = kSigned ? static_cast<int8_t>(p[j]) : p[j];
      } else if constexpr (kBits == 16) {
        uint16_t u;
        __builtin_memcpy(&u, p + 2 * j, 2);
        v = kSigned ? static_cast<int16_t>(u) : u;
      } else if constexpr (kBits == 32) {
        __builtin_memcpy(&v, p + 4 * j, 4);
      } else if constexpr (kBits == 4) {
        v = (p[j / 2] >> (4 * (j % 2))) & 0xf;
        if (kSigned) v = (v ^ 8) - 8;
      } else {
        v = (p[0] >> (2 * j)) & 3;
        if (kSigned) v = (v ^ 2) - 2;
      }
      r.v[j] = v;
    }
    return r;
  }
  static F DequantS32(I q, I off, F s) {
    F r;
    for (size_t j = 0; j < kW; ++j)
      r.v[j] = static_cast<float>(static_cast<double>(q.v[j]) + static_cast<double>(off.v[j])) * s.v[j];
    return r;
  }
  static float ReduceMin(F a) {
    float m = a.v[0];
    for (size_t j = 1; j < kW; ++j) m = MinPs(a.v[j], m);
    return m;
  }
  static constexpr bool kTransposedRuns = false;  // see avx512.h
  static void ReduceMinMax(F vmin, F vmax, float* mn, float* mx) {
    *mn = ReduceMin(vmin);
    *mx = ReduceMax(vmax);
  }
  static float ReduceMax(F a) {
    float m = a.v[0];
    for (size_t j = 1; j < kW; ++j) m = MaxPs(a.v[j], m);
    return m;
  }
  static size_t CountNonFinite(F a) {
    size_t c = 0;
    for (size_t j = 0; j < kW; ++j) c += (BitsOf(a.v[j]) & 0x7f800000u) == 0x7f800000u;
    return c;
  }
  // Histogram bin per lane, -1 for values not counted.
  static void HistIdx(F x, F lo, F hi, F sc, int32_t maxbin, int32_t* out) {
    for (size_t j = 0; j < kW; ++j) {
      const float v = x.v[j];
      if (!(v >= lo.v[j] && v <= hi.v[j])) {
        out[j] = -1;
        continue;
      }
      const int32_t b = static_cast<int32_t>((v - lo.v[j]) * sc.v[j]);
      out[j] = b < maxbin ? b : maxbin;
    }
  }
  static D ZeroD() { return D{{0, 0, 0, 0}}; }
  static D AccSq(D acc, F e) {
    for (size_t j = 0; j < kW; ++j) acc.v[j] += static_cast<double>(e.v[j]) * static_cast<double>(e.v[j]);
    return acc;
  }
  static double ReduceD(D a) { return (a.v[0] + a.v[1]) + (a.v[2] + a.v[3]); }
};

}  // namespace qairt::kernels::scalar
