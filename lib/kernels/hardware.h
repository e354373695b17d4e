// CPU feature detection and the ISA ladder (slow -> fast). Detected once.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace qairt::kernels {

// Ordered slow -> fast; a kernel of level L needs every feature of L.
enum class Isa : uint32_t {
  kScalar = 0,
  kSse41 = 1,   // SSE4.1
  kAvx2 = 2,    // AVX2 + FMA + F16C
  kAvx512 = 3,  // AVX-512 F + BW + VL (+ AVX2/FMA/F16C)
};
// Orders non-temporal stores (QuantParams::stream, ColsStoreFn) before
// later ones: called at the end of each task that streamed, before the pool
// reports it done.
inline void StoreFence() {
#if defined(__SSE2__) && defined(__x86_64__)
  _mm_sfence();
#endif
}

inline constexpr uint32_t kIsaCount = 4;

std::string_view IsaName(Isa isa);                  // "scalar", "sse41", "avx2", "avx512"
std::optional<Isa> IsaFromName(std::string_view s);  // inverse of IsaName

// True when this CPU (and OS, for the AVX register state) can run `isa`.
bool HostSupports(Isa isa);
// Best level this host supports.
Isa HostBestIsa();

// The level kernels are dispatched at: the programmatic override if set, else
// QAIRT_FORCE_ISA=scalar|sse41|avx2|avx512 (read once; an unknown value is
// ignored), else the best level. A forced level above what the host supports
// is lowered to the host's best (never an illegal instruction).
Isa ActiveIsa();
// Pins (or with nullopt, unpins) the dispatch level for this process; meant
// for tests and bug reports. Takes effect for the next GetKernelConfig().
void SetIsaOverride(std::optional<Isa> isa);

}  // namespace qairt::kernels
