// f32-quant-cols kernels, avx512 level (compiled with: -mavx512f -mavx512bw -mavx512vl -mavx2 -mfma -mf16c; see CMakeLists.txt).
// The quantize bodies are impl.h's on the avx512 vector traits.
#include "kernels/isa/avx512.h"
//
#include "kernels/f32-quant-cols/impl.h"

namespace qairt::kernels {
namespace {

// Rows r[0..15] of 16 dwords -> their transpose, in place: after it, r[c]
// holds dword c of every input row (the unpacks transpose 4x4 blocks within
// each 128-bit lane; the lane shuffles then gather a column's four blocks).
inline void Transpose16x16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  __m512i s[16];  // s[4 i + k], lane L: column 4 L + k of rows 4 i .. 4 i + 3
  for (int i = 0; i < 4; ++i) {
    s[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    s[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    s[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    s[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    const __m512i a = _mm512_shuffle_i32x4(s[k], s[4 + k], 0x44);       // lanes 0, 1 of each
    const __m512i b = _mm512_shuffle_i32x4(s[8 + k], s[12 + k], 0x44);
    const __m512i c = _mm512_shuffle_i32x4(s[k], s[4 + k], 0xee);       // lanes 2, 3 of each
    const __m512i d = _mm512_shuffle_i32x4(s[8 + k], s[12 + k], 0xee);
    r[k] = _mm512_shuffle_i32x4(a, b, 0x88);
    r[4 + k] = _mm512_shuffle_i32x4(a, b, 0xdd);
    r[8 + k] = _mm512_shuffle_i32x4(c, d, 0x88);
    r[12 + k] = _mm512_shuffle_i32x4(c, d, 0xdd);
  }
}

void Store16(size_t n, const uint32_t* dw, size_t ld, uint8_t* y, size_t y_stride, bool stream) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i r[16];
    for (size_t g = 0; g < 16; ++g) r[g] = _mm512_loadu_si512(dw + g * ld + i);
    Transpose16x16(r);
    for (size_t c = 0; c < 16; ++c) {
      uint8_t* p = y + (i + c) * y_stride;
      if (stream && reinterpret_cast<uintptr_t>(p) % 64 == 0) {
        _mm512_stream_si512(reinterpret_cast<__m512i*>(p), r[c]);
      } else {
        _mm512_storeu_si512(p, r[c]);
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
