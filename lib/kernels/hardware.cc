#include "kernels/hardware.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <atomic>
#include <cstdlib>

namespace qairt::kernels {

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kSse41: return "sse41";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "unknown";
}

std::optional<Isa> IsaFromName(std::string_view s) {
  for (uint32_t i = 0; i < kIsaCount; ++i)
    if (IsaName(static_cast<Isa>(i)) == s) return static_cast<Isa>(i);
  return std::nullopt;
}

namespace {

struct Detected {
  bool supports[kIsaCount] = {true, false, false, false};
  Isa best = Isa::kScalar;
  std::optional<Isa> env;
};

#if defined(__x86_64__) || defined(__i386__)
// CPUID.1:ECX.F16C (clang < 15 has no "f16c" for __builtin_cpu_supports);
// the AVX check before it covers the OS saving the YMM state.
bool HasF16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
#endif

Detected Detect() {
  Detected d;
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's cpu model also checks XCR0, i.e. that the OS saves the AVX /
  // AVX-512 register state.
  __builtin_cpu_init();
  d.supports[1] = __builtin_cpu_supports("sse4.1");
  d.supports[2] = d.supports[1] && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && HasF16c();
  d.supports[3] = d.supports[2] && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl");
#endif
  for (uint32_t i = 0; i < kIsaCount; ++i)
    if (d.supports[i]) d.best = static_cast<Isa>(i);
  if (const char* env = std::getenv("QAIRT_FORCE_ISA")) d.env = IsaFromName(env);
  return d;
}

const Detected& Host() {
  static const Detected d = Detect();
  return d;
}

// kIsaCount means "no override".
std::atomic<uint32_t> g_override{kIsaCount};

}  // namespace

bool HostSupports(Isa isa) {
  const auto i = static_cast<uint32_t>(isa);
  return i < kIsaCount && Host().supports[i];
}

Isa HostBestIsa() { return Host().best; }

Isa ActiveIsa() {
  const uint32_t o = g_override.load(std::memory_order_relaxed);
  std::optional<Isa> want = o < kIsaCount ? std::optional<Isa>(static_cast<Isa>(o)) : Host().env;
  if (!want) return Host().best;
  // Highest supported level not above the requested one.
  for (auto i = static_cast<int32_t>(*want); i >= 0; --i)
    if (Host().supports[i]) return static_cast<Isa>(i);
  return Isa::kScalar;
}

void SetIsaOverride(std::optional<Isa> isa) {
  g_override.store(isa ? static_cast<uint32_t>(*isa) : kIsaCount, std::memory_order_relaxed);
}

}  // namespace qairt::kernels
