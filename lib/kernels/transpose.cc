// 2-D transpose of a static tensor (data movement, no arithmetic).
//
// Why tiles: a row-by-row loop writes one element per cache line of the
// output (16 lines touched per 16 floats), and at the sizes that matter (a
// projection of an LLM: 64M floats) each line is evicted before its
// neighbours arrive, so every byte moves ~16 times. 32x32 tiles keep a
// tile's rows and columns in L1 while they are read and written.
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "kernels/ops.h"

namespace qairt::kernels {
namespace {

constexpr int64_t kTile = 32;

// One tile goes through a local buffer: read row by row (each input row's
// piece is a few whole cache lines, read once), transposed in L1, written
// out row by row. Done in place, a tile's 32 rows or columns lie at a stride
// of the row length, which for power-of-two widths (8192 floats: 32 KiB)
// maps them all to one L1 set, so they evict each other (measured: 0.35 s
// for 8192x8192 floats in place, against the buffered tile's figure in
// benchmarks/README.md).
#if defined(__SSE2__)
// A whole 32x32 tile of 4-byte elements: rows copied in with a constant
// size (inlined vector moves, where a copy of a variable size is a call),
// transposed in L1 by 4x4 blocks of SSE shuffles, written out the same way.
// Data movement only: bit-identical to the element-by-element loop.
void FullTile4(const uint8_t* in, int64_t in_ld, uint8_t* out, int64_t out_ld, int64_t r0, int64_t c0) {
  alignas(64) float tile[kTile * kTile];   // [r - r0][c - c0]
  alignas(64) float tiled[kTile * kTile];  // [c - c0][r - r0]
  constexpr size_t kRowBytes = kTile * sizeof(float);
  for (int64_t r = 0; r < kTile; ++r) std::memcpy(tile + r * kTile, in + ((r0 + r) * in_ld + c0) * 4, kRowBytes);
  for (int64_t i = 0; i < kTile; i += 4)
    for (int64_t j = 0; j < kTile; j += 4) {
      __m128 a = _mm_load_ps(tile + (i + 0) * kTile + j), b = _mm_load_ps(tile + (i + 1) * kTile + j),
             c = _mm_load_ps(tile + (i + 2) * kTile + j), d = _mm_load_ps(tile + (i + 3) * kTile + j);
      _MM_TRANSPOSE4_PS(a, b, c, d);
      _mm_store_ps(tiled + (j + 0) * kTile + i, a);
      _mm_store_ps(tiled + (j + 1) * kTile + i, b);
      _mm_store_ps(tiled + (j + 2) * kTile + i, c);
      _mm_store_ps(tiled + (j + 3) * kTile + i, d);
    }
  for (int64_t c = 0; c < kTile; ++c) std::memcpy(out + ((c0 + c) * out_ld + r0) * 4, tiled + c * kTile, kRowBytes);
}

// A whole 32x32 tile of bytes (quantized int8 weights): four 16x16 blocks,
// each transposed in registers by four rounds of interleaving row i with row
// i + 8. A round moves the element at (row r3r2r1r0, column c3c2c1c0; bits)
// to (r2r1r0c3, c2c1c0r3): the 8 index bits rotate left by one, so four
// rounds swap row and column bits. Data movement only.
void Transpose16x16Bytes(const uint8_t* in, int64_t in_ld, uint8_t* out, int64_t out_ld) {
  __m128i a[16], b[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * in_ld));
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      b[2 * i] = _mm_unpacklo_epi8(a[i], a[i + 8]);
      b[2 * i + 1] = _mm_unpackhi_epi8(a[i], a[i + 8]);
    }
    for (int i = 0; i < 16; ++i) a[i] = b[i];
  }
  for (int i = 0; i < 16; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * out_ld), a[i]);
}

void FullTile1(const uint8_t* in, int64_t in_ld, uint8_t* out, int64_t out_ld, int64_t r0, int64_t c0) {
  for (int64_t i = 0; i < kTile; i += 16)
    for (int64_t j = 0; j < kTile; j += 16)
      Transpose16x16Bytes(in + (r0 + i) * in_ld + c0 + j, in_ld, out + (c0 + j) * out_ld + r0 + i, out_ld);
}
#endif

template <size_t E>
void TransposeBand(int64_t cols, const uint8_t* in, int64_t in_ld, uint8_t* out, int64_t out_ld, int64_t r0,
                   int64_t r1) {
  alignas(64) uint8_t tile[kTile * kTile * E];   // [r - r0][c - c0]
  alignas(64) uint8_t tiled[kTile * kTile * E];  // [c - c0][r - r0]
  const int64_t nr = r1 - r0;
  for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
    const int64_t nc = std::min(cols, c0 + kTile) - c0;
#if defined(__SSE2__)
    if constexpr (E == 4) {
      if (nc == kTile && nr == kTile) {
        FullTile4(in, in_ld, out, out_ld, r0, c0);
        continue;
      }
    }
    if constexpr (E == 1) {
      if (nc == kTile && nr == kTile) {
        FullTile1(in, in_ld, out, out_ld, r0, c0);
        continue;
      }
    }
#endif
    for (int64_t r = 0; r < nr; ++r)
      std::memcpy(tile + r * kTile * E, in + ((r0 + r) * in_ld + c0) * static_cast<int64_t>(E),
                  static_cast<size_t>(nc) * E);
    for (int64_t c = 0; c < nc; ++c)
      for (int64_t r = 0; r < nr; ++r) std::memcpy(tiled + (c * kTile + r) * E, tile + (r * kTile + c) * E, E);
    for (int64_t c = 0; c < nc; ++c)
      std::memcpy(out + ((c0 + c) * out_ld + r0) * static_cast<int64_t>(E), tiled + c * kTile * E,
                  static_cast<size_t>(nr) * E);
  }
}

}  // namespace

void Transpose2D(size_t elem, int64_t rows, int64_t cols, const void* in, void* out, const ExecOptions& o) {
  Transpose2DStrided(elem, rows, cols, in, cols, out, rows, o);
}

void Transpose2DStrided(size_t elem, int64_t rows, int64_t cols, const void* in, int64_t in_ld, void* out,
                        int64_t out_ld, const ExecOptions& o) {
  if (rows <= 0 || cols <= 0) return;
  const auto* x = static_cast<const uint8_t*>(in);
  auto* y = static_cast<uint8_t*>(out);
  // Bands of kTile input rows: each writes its own columns of every output row.
  const size_t bands = static_cast<size_t>((rows + kTile - 1) / kTile);
  ParallelFor(o.pool, bands, [&](size_t b, size_t) {
    const int64_t r0 = static_cast<int64_t>(b) * kTile, r1 = std::min(rows, r0 + kTile);
    switch (elem) {
      case 1: TransposeBand<1>(cols, x, in_ld, y, out_ld, r0, r1); break;
      case 2: TransposeBand<2>(cols, x, in_ld, y, out_ld, r0, r1); break;
      case 4: TransposeBand<4>(cols, x, in_ld, y, out_ld, r0, r1); break;
      case 8: TransposeBand<8>(cols, x, in_ld, y, out_ld, r0, r1); break;
      default:
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = 0; c < cols; ++c)
            std::memcpy(y + (c * out_ld + r) * static_cast<int64_t>(elem), x + (r * in_ld + c) * static_cast<int64_t>(elem),
                        elem);
    }
  });
}

}  // namespace qairt::kernels
