// Single-threaded AVX-512 SGEMM for the executor: a 14 x 32 register tile
// (28 zmm accumulators, one sliver of B reused across the rows of A; the
// last, shorter tile of an M block computes only its rows) in the blocked
// loop nest of gemm_blocked.h, which fixes the summation order.
// Why our own: the executor's convolutions are GEMMs, and the OpenBLAS that
// Debian ships dispatches on OPENBLAS_CORETYPE, which many environments pin
// to an AVX2 core type; this kernel uses the host's AVX-512 whatever that
// variable says. Results are not bit-identical to OpenBLAS (summation order
// differs); tests compare against a double-precision reference and against
// the MLAS order (tests/exec/test_gemm.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/gemm_blocked.h"
#include "exec/kernel.h"

namespace qairt::exec {
namespace {

constexpr int64_t kMr = 14;
constexpr int64_t kNr = 32;

// A(i, p) of op(A).
inline float AElem(const float* a, int64_t lda, bool ta, int64_t i, int64_t p) {
  return ta ? a[p * lda + i] : a[i * lda + p];
}

// Packs rows [0, mc) x cols [0, kc) of op(A) (already offset) into MR-tall
// slivers: sliver s holds, for each p, kMr consecutive row values (zero
// padded past mc). Without a transpose each step gathers one column of 14
// rows (the weights of a convolution: this runs once per GEMM call over the
// whole weight matrix, so a scalar loop here costs a third of the kernel).
// `out` has 16 floats of slack past the last sliver (full-vector stores).
__attribute__((target("avx512f"))) void PackA(const float* a, int64_t lda, bool ta, int64_t mc, int64_t kc,
                                              float* out) {
  for (int64_t i0 = 0; i0 < mc; i0 += kMr) {
    const int64_t rows = std::min(kMr, mc - i0);
    if (!ta && lda <= (int64_t{1} << 24)) {  // 13 * lda * 4 bytes fits the 32-bit gather offsets
      const __mmask16 live = static_cast<__mmask16>((1u << rows) - 1);
      const __m512i index = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                               _mm512_set1_epi32(static_cast<int32_t>(lda)));
      const float* base = a + i0 * lda;
      for (int64_t p = 0; p < kc; ++p, out += kMr)
        _mm512_storeu_ps(out, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, index, base + p, 4));
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t i = 0; i < rows; ++i) out[i] = AElem(a, lda, ta, i0 + i, p);
      for (int64_t i = rows; i < kMr; ++i) out[i] = 0.0f;
      out += kMr;
    }
  }
}

// Packs rows [0, kc) x cols [0, nc) of op(B) into NR-wide slivers (sliver
// s, row p at out + (s * kc + p) * kNr). Without a transpose, B is read
// row by row (sequential, prefetch-friendly) and scattered into slivers.
__attribute__((target("avx512f"))) void PackB(const float* b, int64_t ldb, bool tb, int64_t kc, int64_t nc,
                                              float* out) {
  const int64_t full = nc / kNr;
  const int64_t rest = nc - full * kNr;
  if (!tb) {
    const __mmask16 m0 = rest >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << rest) - 1);
    const __mmask16 m1 = rest > 16 ? static_cast<__mmask16>((1u << (rest - 16)) - 1) : static_cast<__mmask16>(0);
    for (int64_t p = 0; p < kc; ++p) {
      const float* row = b + p * ldb;
      float* dst = out + p * kNr;
      for (int64_t s = 0; s < full; ++s, dst += kc * kNr) {
        _mm512_store_ps(dst, _mm512_loadu_ps(row + s * kNr));
        _mm512_store_ps(dst + 16, _mm512_loadu_ps(row + s * kNr + 16));
      }
      if (rest) {  // zero padded past nc
        _mm512_store_ps(dst, _mm512_maskz_loadu_ps(m0, row + full * kNr));
        _mm512_store_ps(dst + 16, _mm512_maskz_loadu_ps(m1, row + full * kNr + 16));
      }
    }
    return;
  }
  for (int64_t j0 = 0; j0 < nc; j0 += kNr) {
    const int64_t cols = std::min(kNr, nc - j0);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t j = 0; j < cols; ++j) out[j] = b[(j0 + j) * ldb + p];
      for (int64_t j = cols; j < kNr; ++j) out[j] = 0.0f;
      out += kNr;
    }
  }
}

__attribute__((target("avx512f"))) inline __m512 Combine(__m512 acc, const float* c, __mmask16 mask,
                                                         const TileStore& st) {
  const __m512 scaled = _mm512_mul_ps(acc, _mm512_set1_ps(st.alpha));
  if (st.first) {
    if (st.beta == 0.0f) return scaled;
    return _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, c), _mm512_set1_ps(st.beta), scaled);
  }
  return _mm512_add_ps(_mm512_maskz_loadu_ps(mask, c), scaled);
}

// The rows of a tile written to C: alpha, beta, the row bias; columns
// [0, nr).
template <int kRows>
__attribute__((target("avx512f"))) inline void StoreRows(const __m512 (&rows)[kRows][2], float* c, int64_t ldc,
                                                         int64_t mr, int64_t nr, const TileStore& st) {
  const __mmask16 m0 = nr >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << nr) - 1);
  const __mmask16 m1 = nr >= 32 ? static_cast<__mmask16>(0xFFFF)
                                : (nr > 16 ? static_cast<__mmask16>((1u << (nr - 16)) - 1) : static_cast<__mmask16>(0));
  const bool bias = st.last && st.row_bias;
  const int store_rows = static_cast<int>(std::min<int64_t>(mr, kRows));
  for (int i = 0; i < store_rows; ++i) {
    float* row = c + i * ldc;
    __m512 v0 = Combine(rows[i][0], row, m0, st);
    if (bias) v0 = _mm512_add_ps(v0, _mm512_set1_ps(st.row_bias[i]));
    _mm512_mask_storeu_ps(row, m0, v0);
    if (m1) {
      __m512 v1 = Combine(rows[i][1], row + 16, m1, st);
      if (bias) v1 = _mm512_add_ps(v1, _mm512_set1_ps(st.row_bias[i]));
      _mm512_mask_storeu_ps(row + 16, m1, v1);
    }
  }
}

// The last, shorter tile of an M block (M = 128 tokens: nine tiles of 14
// and one of 2): only its kRows rows are computed, each exactly as in the
// full tile (the same products, summed in the same order), where the full
// tile would spend 14 rows of work on them (a tenth of such a GEMM).
template <int kRows>
__attribute__((target("avx512f"))) void KernelRows(int64_t kc, const float* __restrict ap,
                                                   const float* __restrict bp, int64_t b_stride, float* c,
                                                   int64_t ldc, int64_t nr, const TileStore& st) {
  __m512 acc[kRows][2];
#pragma GCC unroll 14
  for (int i = 0; i < kRows; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(bp);
    const __m512 b1 = _mm512_loadu_ps(bp + 16);
#pragma GCC unroll 14
    for (int i = 0; i < kRows; ++i) {
      const __m512 a = _mm512_set1_ps(ap[i]);
      acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
    }
    ap += kMr;
    bp += b_stride;
  }
  StoreRows<kRows>(acc, c, ldc, kRows, nr, st);
}

using TailKernel = void (*)(int64_t, const float*, const float*, int64_t, float*, int64_t, int64_t,
                            const TileStore&);
constexpr TailKernel kTailKernels[kMr] = {nullptr,          &KernelRows<1>,  &KernelRows<2>,  &KernelRows<3>,
                                          &KernelRows<4>,   &KernelRows<5>,  &KernelRows<6>,  &KernelRows<7>,
                                          &KernelRows<8>,   &KernelRows<9>,  &KernelRows<10>, &KernelRows<11>,
                                          &KernelRows<12>,  &KernelRows<13>};

// 14 x 32 tile over kc: ap = packed A sliver, bp = packed B sliver. Writes
// rows [0, mr) and columns [0, nr) of the tile at c.
__attribute__((target("avx512f"))) void Kernel(int64_t kc, const float* __restrict ap,
                                                                const float* __restrict bp, int64_t b_stride,
                                                                float* c, int64_t ldc,
                                                                int64_t mr, int64_t nr, const TileStore& st) {
  if (mr > 0 && mr < kMr) return kTailKernels[mr](kc, ap, bp, b_stride, c, ldc, nr, st);
  __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps(), c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
  __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps(), c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
  __m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps(), c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
  __m512 c60 = _mm512_setzero_ps(), c61 = _mm512_setzero_ps(), c70 = _mm512_setzero_ps(), c71 = _mm512_setzero_ps();
  __m512 c80 = _mm512_setzero_ps(), c81 = _mm512_setzero_ps(), c90 = _mm512_setzero_ps(), c91 = _mm512_setzero_ps();
  __m512 ca0 = _mm512_setzero_ps(), ca1 = _mm512_setzero_ps(), cb0 = _mm512_setzero_ps(), cb1 = _mm512_setzero_ps();
  __m512 cc0 = _mm512_setzero_ps(), cc1 = _mm512_setzero_ps(), cd0 = _mm512_setzero_ps(), cd1 = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(bp);
    const __m512 b1 = _mm512_loadu_ps(bp + 16);
#define QAIRT_ROW(i, r0, r1)                    \
  {                                             \
    const __m512 a = _mm512_set1_ps(ap[i]);     \
    r0 = _mm512_fmadd_ps(a, b0, r0);            \
    r1 = _mm512_fmadd_ps(a, b1, r1);            \
  }
    QAIRT_ROW(0, c00, c01) QAIRT_ROW(1, c10, c11) QAIRT_ROW(2, c20, c21) QAIRT_ROW(3, c30, c31)
    QAIRT_ROW(4, c40, c41) QAIRT_ROW(5, c50, c51) QAIRT_ROW(6, c60, c61) QAIRT_ROW(7, c70, c71)
    QAIRT_ROW(8, c80, c81) QAIRT_ROW(9, c90, c91) QAIRT_ROW(10, ca0, ca1) QAIRT_ROW(11, cb0, cb1)
    QAIRT_ROW(12, cc0, cc1) QAIRT_ROW(13, cd0, cd1)
#undef QAIRT_ROW
    ap += kMr;
    bp += b_stride;
  }
  const __m512 rows[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}, {c60, c61},
                               {c70, c71}, {c80, c81}, {c90, c91}, {ca0, ca1}, {cb0, cb1}, {cc0, cc1}, {cd0, cd1}};
  StoreRows<kMr>(rows, c, ldc, mr, nr, st);
}

struct Avx512Tile {
  static constexpr int kTile = static_cast<int>(GemmBackend::kAvx512);
  static constexpr int64_t kMr = 14;
  static constexpr int64_t kNr = 32;
  static constexpr int64_t kMc = kMr * 24;   // 336 rows: 168..336 KiB of A in L2 (1 MiB on Zen 4)
  static constexpr int64_t kNc = kNr * 128;  // 4096 columns: 4 MiB of B
  static void PackA(const float* a, int64_t lda, bool ta, int64_t mc, int64_t kc, float* out) {
    exec::PackA(a, lda, ta, mc, kc, out);
  }
  static void PackB(const float* b, int64_t ldb, bool tb, int64_t kc, int64_t nc, float* out) {
    exec::PackB(b, ldb, tb, kc, nc, out);
  }
  static void Kernel(int64_t kc, const float* ap, const float* bp, int64_t b_stride, float* c, int64_t ldc, int64_t mr,
                     int64_t nr, const TileStore& st) {
    exec::Kernel(kc, ap, bp, b_stride, c, ldc, mr, nr, st);
  }
};

}  // namespace

const BlockedGemm& Avx512Gemm() {
  static constexpr BlockedGemm kGemm = MakeBlockedGemm<Avx512Tile>();
  return kGemm;
}

}  // namespace qairt::exec
