// The blocked SGEMM loop nest (Goto/BLIS) shared by the executor's SIMD
// GEMM kernels, C = alpha * op(A) * op(B) + beta * C, row-major:
//
//   for jc over N by kNc:            B block (kc x kNc) packed in kNr-wide slivers
//     for pc over K by kc:
//       for ic over M by kMc:        A block (kMc x kc) packed in kMr-tall slivers
//         for jr, ir:                kMr x kNr register tile
//
// Each output element is the sum, K block by K block, of a block sum taken
// from zero by sequential FMAs (C = block sum, then C += block sum), the
// bias added after the last block. That order does not depend on the tile
// or the vector width, so every tile (gemm_avx512.cpp, gemm_fma.cpp) gives
// the same bits; with MLAS's K block (MlasGemmKBlock) they are ONNX
// Runtime's bits on FMA3 and AVX-512 hosts (see gemm.cpp).
//
// A tile type T provides: kTile (its GemmBackend value, recorded in what it
// packs); kMr, kNr, kMc, kNc (kMc a multiple of kMr, kNc of kNr); PackA(a, lda, ta, mc, kc, out) into kMr-tall slivers (zero padded,
// 16 floats of slack past the last); PackB(b, ldb, tb, kc, nc, out) into
// kNr-wide slivers (zero padded past nc); Kernel(kc, ap, bp, b_stride, c,
// ldc, mr, nr, TileStore) writing rows [0, mr) x columns [0, nr) of a tile.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace qairt::exec {

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using GemmBuffer = std::unique_ptr<float, FreeDeleter>;

inline GemmBuffer AllocateGemmBuffer(size_t floats) {
  return GemmBuffer(static_cast<float*>(std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64)));
}

// How a tile meets C: first K block (C = alpha*acc + beta*C, and C is not
// read when beta == 0, so garbage or NaN in C never leaks) or a later one
// (C += alpha*acc); after the last K block a per-row bias is added, the same
// two roundings as a GEMM followed by a separate bias pass.
struct TileStore {
  float alpha;
  float beta;
  bool first;
  bool last;
  const float* row_bias;  // null: none; else indexed by the tile's row
};

// op(A) packed once, block by block in the order RunBlocked visits them,
// for the tile it names.
struct PackedGemmA {
  int tile = 0;  // which kernel's slivers (gemm.cpp's GemmBackend value)
  int64_t m = 0, k = 0, kc = 0;  // kc: the K block it was packed for
  GemmBuffer data;
  std::vector<size_t> offsets;  // per (K block, M block), K-block-major
  int64_t m_blocks = 0;
};

// The largest B (bytes) read in place rather than packed (see RunBlocked).
constexpr uint64_t kDirectMaxBBytes = uint64_t{2} << 20;

template <class T>
int64_t PaddedRows(int64_t mc) {
  return (mc + T::kMr - 1) / T::kMr * T::kMr;
}

// The loop nest; `a_block(pc, ic, mc, kc)` returns the packed A block for
// rows [ic, ic + mc) and columns [pc, pc + kc). `b_warm`: the caller has
// just written B (a convolution's im2col buffer), so it is cached whatever
// its size.
template <class T, typename ABlock>
bool RunBlocked(int64_t m, int64_t n, int64_t k, int64_t kblock, float alpha, const float* b, int64_t ldb,
                bool trans_b, float beta, float* c, int64_t ldc, const float* row_bias, bool b_warm,
                ABlock&& a_block) {
  // B packing buffer per thread (executors may run on several threads),
  // kept between calls: a fresh multi-MiB buffer per call costs a page fault
  // per 4 KiB, which for small GEMMs is more than the arithmetic.
  thread_local GemmBuffer bpack;
  thread_local size_t bsize = 0;
  const size_t bneed =
      static_cast<size_t>(std::min(kblock, k) * std::min(T::kNc, (n + T::kNr - 1) / T::kNr * T::kNr));
  if (bsize < bneed) {
    bpack = AllocateGemmBuffer(bneed);
    bsize = bpack ? bneed : 0;
  }
  if (!bpack) return false;  // the caller falls back to another GEMM
  const auto b_bytes = static_cast<uint64_t>(k) * static_cast<uint64_t>(n) * sizeof(float);
  for (int64_t jc = 0; jc < n; jc += T::kNc) {
    const int64_t nc = std::min(T::kNc, n - jc);
    for (int64_t pc = 0; pc < k; pc += kblock) {
      const int64_t kc = std::min(kblock, k - pc);
      // With a single M block each B sliver is used by one pass of tiles:
      // full slivers of an untransposed B that is likely cached are then
      // read where they are (row stride ldb) instead of being copied first;
      // only a partial last sliver is packed (zero padded). A large B not
      // just written comes from memory (an LLM's weights, mapped): a sliver
      // there is one 128-byte piece of each of kc rows, a page apart, which
      // the prefetchers do not follow and which costs a TLB walk per row, so
      // it is packed by rows instead (a decoder's calibration: 3.7-4.0 s per
      // sample read in place, 3.3-3.4 s packed; ResNet-50's convolutions,
      // whose im2col B is warm, 25% slower packed).
      const bool direct = !trans_b && m <= T::kMc && (b_warm || b_bytes <= kDirectMaxBBytes);
      if (!direct) T::PackB(trans_b ? b + jc * ldb + pc : b + pc * ldb + jc, ldb, trans_b, kc, nc, bpack.get());
      else if (nc % T::kNr) T::PackB(b + pc * ldb + jc + nc / T::kNr * T::kNr, ldb, false, kc, nc % T::kNr, bpack.get());
      TileStore st{alpha, beta, pc == 0, pc + kc >= k, nullptr};
      for (int64_t ic = 0; ic < m; ic += T::kMc) {
        const int64_t mc = std::min(T::kMc, m - ic);
        const float* ablock = a_block(pc, ic, mc, kc);
        if (!ablock) return false;
        for (int64_t jr = 0; jr < nc; jr += T::kNr) {
          const bool in_place = direct && jr + T::kNr <= nc;
          const float* bs = in_place ? b + pc * ldb + jc + jr : bpack.get() + (direct ? 0 : (jr / T::kNr) * kc * T::kNr);
          const int64_t b_stride = in_place ? ldb : T::kNr;
          for (int64_t ir = 0; ir < mc; ir += T::kMr) {
            const float* as = ablock + (ir / T::kMr) * kc * T::kMr;
            st.row_bias = row_bias ? row_bias + ic + ir : nullptr;
            T::Kernel(kc, as, bs, b_stride, c + (ic + ir) * ldc + jc + jr, ldc, std::min(T::kMr, mc - ir),
                      std::min(T::kNr, nc - jr), st);
          }
        }
      }
    }
  }
  return true;
}

// One product, A packed per call into a per-thread buffer.
template <class T>
bool GemmBlocked(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, int64_t kblock, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (kblock <= 0) return false;
  thread_local GemmBuffer apack;
  thread_local size_t asize = 0;
  const size_t aneed = static_cast<size_t>(std::min(kblock, k) * std::min(T::kMc, PaddedRows<T>(m))) + 16;
  if (asize < aneed) {
    apack = AllocateGemmBuffer(aneed);
    asize = apack ? aneed : 0;
  }
  if (!apack) return false;
  return RunBlocked<T>(m, n, k, kblock, alpha, b, ldb, trans_b, beta, c, ldc, nullptr, /*b_warm=*/false,
                       [&](int64_t pc, int64_t ic, int64_t mc, int64_t kc) {
                         T::PackA(trans_a ? a + pc * lda + ic : a + ic * lda + pc, lda, trans_a, mc, kc, apack.get());
                         return static_cast<const float*>(apack.get());
                       });
}

template <class T>
std::shared_ptr<const PackedGemmA> PackGemmABlocked(bool trans_a, int64_t m, int64_t k, int64_t kblock, const float* a,
                                                    int64_t lda) {
  if (m <= 0 || k <= 0 || kblock <= 0) return nullptr;
  auto p = std::make_shared<PackedGemmA>();
  p->tile = T::kTile;
  p->m = m;
  p->k = k;
  p->kc = kblock;
  p->m_blocks = (m + T::kMc - 1) / T::kMc;
  size_t total = 0;
  for (int64_t pc = 0; pc < k; pc += kblock)
    for (int64_t ic = 0; ic < m; ic += T::kMc) {
      p->offsets.push_back(total);
      total += static_cast<size_t>(PaddedRows<T>(std::min(T::kMc, m - ic)) * std::min(kblock, k - pc));
    }
  p->data = AllocateGemmBuffer(total + 16);
  if (!p->data) return nullptr;
  size_t blk = 0;
  for (int64_t pc = 0; pc < k; pc += kblock)
    for (int64_t ic = 0; ic < m; ic += T::kMc)
      T::PackA(trans_a ? a + pc * lda + ic : a + ic * lda + pc, lda, trans_a, std::min(T::kMc, m - ic),
               std::min(kblock, k - pc), p->data.get() + p->offsets[blk++]);
  return p;
}

template <class T>
bool GemmPackedABlocked(const PackedGemmA& a, bool trans_b, int64_t n, int64_t kblock, float alpha, const float* b,
                        int64_t ldb, float beta, float* c, int64_t ldc, const float* row_bias) {
  if (kblock != a.kc) return false;  // packed for another K block: the caller packs per call
  // Pre-packed A: a convolution's weights, B its freshly written im2col.
  return RunBlocked<T>(a.m, n, a.k, kblock, alpha, b, ldb, trans_b, beta, c, ldc, row_bias, /*b_warm=*/true,
                       [&](int64_t pc, int64_t ic, int64_t, int64_t) {
                         return static_cast<const float*>(
                             a.data.get() + a.offsets[static_cast<size_t>((pc / kblock) * a.m_blocks + ic / T::kMc)]);
                       });
}

// What a tile's translation unit exports (kernel.h: Avx512Gemm, FmaGemm).
struct BlockedGemm {
  bool (*gemm)(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, int64_t kblock, float alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
  std::shared_ptr<const PackedGemmA> (*pack)(bool trans_a, int64_t m, int64_t k, int64_t kblock, const float* a,
                                             int64_t lda);
  bool (*gemm_packed)(const PackedGemmA& a, bool trans_b, int64_t n, int64_t kblock, float alpha, const float* b,
                      int64_t ldb, float beta, float* c, int64_t ldc, const float* row_bias);
};

template <class T>
constexpr BlockedGemm MakeBlockedGemm() {
  return BlockedGemm{&GemmBlocked<T>, &PackGemmABlocked<T>, &GemmPackedABlocked<T>};
}

}  // namespace qairt::exec
