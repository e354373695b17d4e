// f32-quant-cols kernels, avx2 level (compiled with: -mavx2 -mfma -mf16c; see CMakeLists.txt).
// The quantize bodies are impl.h's on the avx2 vector traits.
#include "kernels/isa/avx2.h"
//
#include "kernels/f32-quant-cols/impl.h"

namespace qairt::kernels {
namespace {

// r[0..7] (8 dwords each) -> their transpose, in place: r[c] holds dword c
// of every input row (4 x 4 blocks within each 128-bit lane by the unpacks,
// then the lanes' halves swapped across).
inline void Transpose8x8(__m256i r[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {  // u[4 i + k], lane L: column 4 L + k of rows 4 i .. 4 i + 3
    u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x20);
    r[4 + k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x31);
  }
}

// Eight columns at a time: dwords 0-7 of each from rows 0-7, 8-15 from
// rows 8-15, two 32-byte halves of its line (streamed halves of one line
// are combined before they leave the core).
void Store16(size_t n, const uint32_t* dw, size_t ld, uint8_t* y, size_t y_stride, bool stream) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i lo[8], hi[8];
    for (size_t g = 0; g < 8; ++g) {
      lo[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dw + g * ld + i));
      hi[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dw + (g + 8) * ld + i));
    }
    Transpose8x8(lo);
    Transpose8x8(hi);
    for (size_t c = 0; c < 8; ++c) {
      auto* p = reinterpret_cast<__m256i*>(y + (i + c) * y_stride);
      if (stream && reinterpret_cast<uintptr_t>(p) % 64 == 0) {
        _mm256_stream_si256(p, lo[c]);
        _mm256_stream_si256(p + 1, hi[c]);
      } else {
        _mm256_storeu_si256(p, lo[c]);
        _mm256_storeu_si256(p + 1, hi[c]);
      }
    }
  }
  if (i < n) ref::ColsStore16(n - i, dw + i, ld, y + i * y_stride, y_stride);
}

}  // namespace

#define QAIRT_COLS_DEF_store16 QAIRT_COLS_STORE16_DEF
#define QAIRT_KERNEL QAIRT_COLS_KERNEL_DEF
#include "kernels/f32-quant-cols/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
