// Single-threaded AVX2/FMA3 SGEMM for the executor: a 6 x 16 register tile
// (12 ymm accumulators; the last, shorter tile of an M block computes only
// its rows) in the blocked loop nest of gemm_blocked.h. Every
// output element is summed in the same order as by the AVX-512 tile (block
// sums from zero by sequential FMAs), so the two give the same bits, and
// with MLAS's K block the bits ONNX Runtime's FMA3 kernel gives on hosts
// without AVX-512: a Q-DQ export with 16-bit activations then runs in ONNX
// Runtime as qairt simulated it there too.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "exec/gemm_blocked.h"
#include "exec/kernel.h"

namespace qairt::exec {
namespace {

struct FmaTile {
  static constexpr int kTile = static_cast<int>(GemmBackend::kFma);
  static constexpr int64_t kMr = 6;
  static constexpr int64_t kNr = 16;
  static constexpr int64_t kMc = kMr * 48;   // 288 rows: 144..288 KiB of A in L2 (512 KiB on Zen 3)
  static constexpr int64_t kNc = kNr * 256;  // 4096 columns

  // Rows [0, mc) x cols [0, kc) of op(A) into kMr-tall slivers.
  static void PackA(const float* a, int64_t lda, bool ta, int64_t mc, int64_t kc, float* out) {
    for (int64_t i0 = 0; i0 < mc; i0 += kMr) {
      const int64_t rows = std::min(kMr, mc - i0);
      for (int64_t p = 0; p < kc; ++p, out += kMr) {
        for (int64_t i = 0; i < rows; ++i) out[i] = ta ? a[p * lda + i0 + i] : a[(i0 + i) * lda + p];
        for (int64_t i = rows; i < kMr; ++i) out[i] = 0.0f;
      }
    }
  }

  // Rows [0, kc) x cols [0, nc) of op(B) into kNr-wide slivers (sliver s,
  // row p at out + (s * kc + p) * kNr), zero padded past nc.
  static void PackB(const float* b, int64_t ldb, bool tb, int64_t kc, int64_t nc, float* out) {
    for (int64_t j0 = 0; j0 < nc; j0 += kNr) {
      const int64_t cols = std::min(kNr, nc - j0);
      for (int64_t p = 0; p < kc; ++p, out += kNr) {
        if (!tb) {
          std::copy(b + p * ldb + j0, b + p * ldb + j0 + cols, out);
        } else {
          for (int64_t j = 0; j < cols; ++j) out[j] = b[(j0 + j) * ldb + p];
        }
        std::fill(out + cols, out + kNr, 0.0f);
      }
    }
  }

  // One element as the vector path combines it (the same operations,
  // rounded the same way: std::fma is the fused multiply-add).
  static float CombineOne(float acc, const float* c, const TileStore& st) {
    const float scaled = acc * st.alpha;
    if (st.first) return st.beta == 0.0f ? scaled : std::fma(*c, st.beta, scaled);
    return *c + scaled;
  }

  __attribute__((target("avx2,fma"))) static __m256 Combine(__m256 acc, const float* c, const TileStore& st) {
    const __m256 scaled = _mm256_mul_ps(acc, _mm256_set1_ps(st.alpha));
    if (st.first) {
      if (st.beta == 0.0f) return scaled;
      return _mm256_fmadd_ps(_mm256_loadu_ps(c), _mm256_set1_ps(st.beta), scaled);
    }
    return _mm256_add_ps(_mm256_loadu_ps(c), scaled);
  }

  // The rows of a tile written to C: alpha, beta, the row bias; columns
  // [0, nr).
  template <int kRows>
  __attribute__((target("avx2,fma"))) static void StoreRows(const __m256 (&rows)[kRows][2], float* c, int64_t ldc,
                                                            int64_t mr, int64_t nr, const TileStore& st) {
    const bool bias = st.last && st.row_bias;
    const int store_rows = static_cast<int>(std::min<int64_t>(mr, kRows));
    for (int i = 0; i < store_rows; ++i) {
      float* row = c + i * ldc;
      if (nr == kNr) {
        for (int h = 0; h < 2; ++h) {
          __m256 v = Combine(rows[i][h], row + 8 * h, st);
          if (bias) v = _mm256_add_ps(v, _mm256_set1_ps(st.row_bias[i]));
          _mm256_storeu_ps(row + 8 * h, v);
        }
        continue;
      }
      // A partial tile: element by element, C past nr never read or written.
      alignas(32) float acc[kNr];
      _mm256_store_ps(acc, rows[i][0]);
      _mm256_store_ps(acc + 8, rows[i][1]);
      for (int64_t j = 0; j < nr; ++j) {
        float v = CombineOne(acc[j], row + j, st);
        if (bias) v = v + st.row_bias[i];
        row[j] = v;
      }
    }
  }

  // The last, shorter tile of an M block: only its kRows rows, each summed
  // as in the full tile (see gemm_avx512.cpp).
  template <int kRows>
  __attribute__((target("avx2,fma"))) static void KernelRows(int64_t kc, const float* __restrict ap,
                                                             const float* __restrict bp, int64_t b_stride, float* c,
                                                             int64_t ldc, int64_t nr, const TileStore& st) {
    __m256 acc[kRows][2];
#pragma GCC unroll 6
    for (int i = 0; i < kRows; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int64_t p = 0; p < kc; ++p) {
      const __m256 b0 = _mm256_loadu_ps(bp);
      const __m256 b1 = _mm256_loadu_ps(bp + 8);
#pragma GCC unroll 6
      for (int i = 0; i < kRows; ++i) {
        const __m256 a = _mm256_broadcast_ss(ap + i);
        acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
      }
      ap += kMr;
      bp += b_stride;
    }
    StoreRows<kRows>(acc, c, ldc, kRows, nr, st);
  }

  __attribute__((target("avx2,fma"))) static void Kernel(int64_t kc, const float* __restrict ap,
                                                         const float* __restrict bp, int64_t b_stride, float* c,
                                                         int64_t ldc, int64_t mr, int64_t nr, const TileStore& st) {
    switch (mr) {
      case 1: return KernelRows<1>(kc, ap, bp, b_stride, c, ldc, nr, st);
      case 2: return KernelRows<2>(kc, ap, bp, b_stride, c, ldc, nr, st);
      case 3: return KernelRows<3>(kc, ap, bp, b_stride, c, ldc, nr, st);
      case 4: return KernelRows<4>(kc, ap, bp, b_stride, c, ldc, nr, st);
      case 5: return KernelRows<5>(kc, ap, bp, b_stride, c, ldc, nr, st);
      default: break;
    }
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(), c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int64_t p = 0; p < kc; ++p) {
      const __m256 b0 = _mm256_loadu_ps(bp);
      const __m256 b1 = _mm256_loadu_ps(bp + 8);
#define QAIRT_ROW(i, r0, r1)                    \
  {                                             \
    const __m256 a = _mm256_broadcast_ss(ap + i); \
    r0 = _mm256_fmadd_ps(a, b0, r0);            \
    r1 = _mm256_fmadd_ps(a, b1, r1);            \
  }
      QAIRT_ROW(0, c00, c01) QAIRT_ROW(1, c10, c11) QAIRT_ROW(2, c20, c21)
      QAIRT_ROW(3, c30, c31) QAIRT_ROW(4, c40, c41) QAIRT_ROW(5, c50, c51)
#undef QAIRT_ROW
      ap += kMr;
      bp += b_stride;
    }
    const __m256 rows[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    StoreRows<kMr>(rows, c, ldc, mr, nr, st);
  }
};

}  // namespace

const BlockedGemm& FmaGemm() {
  static constexpr BlockedGemm kGemm = MakeBlockedGemm<FmaTile>();
  return kGemm;
}

}  // namespace qairt::exec
