// Shared helpers of the kernel tests.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/config.h"
#include "kernels/hardware.h"
#include "kernels/kernels.h"

namespace qairt::kernels::test {

#define QAIRT_TEST_ISA_scalar ::qairt::kernels::Isa::kScalar
#define QAIRT_TEST_ISA_sse41 ::qairt::kernels::Isa::kSse41
#define QAIRT_TEST_ISA_avx2 ::qairt::kernels::Isa::kAvx2
#define QAIRT_TEST_ISA_avx512 ::qairt::kernels::Isa::kAvx512

// True when the kernel can run here; otherwise WARNs (the Catch2 way to say
// "skipped" without failing) and the caller skips it.
inline bool CanRun(Isa isa, const char* name) {
  if (HostSupports(isa)) return true;
  WARN("SKIP " << name << ": this CPU lacks " << IsaName(isa));
  return false;
}

inline std::vector<uint8_t> Bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}

inline float RandNormal(std::mt19937& rng, float sigma) { return std::normal_distribution<float>(0.0f, sigma)(rng); }

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Sizes around every vector width and unroll: empty, tiny, odd, just below /
// at / above multiples of 4, 8, 16, 32, 64.
inline const std::vector<size_t>& TestSizes() {
  static const std::vector<size_t> s = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 257, 1000, 1023, 4099};
  return s;
}

}  // namespace qairt::kernels::test
