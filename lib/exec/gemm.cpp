// GEMM for the executor. Default choice, made once:
//  - on an AVX-512 host (and QAIRT_FORCE_ISA not below it): our AVX-512
//    kernel (gemm_avx512.cpp, single-threaded, so results never depend on
//    the thread count), because Debian's OpenBLAS follows OPENBLAS_CORETYPE,
//    which environments often pin to an AVX2 core type (benchmarks/README.md
//    has the measurements);
//  - on an AVX2 + FMA3 host (QAIRT_FORCE_ISA not below avx2): our FMA
//    kernel (gemm_fma.cpp), which gives the AVX-512 kernel's bits;
//  - otherwise OpenBLAS (Debian's libopenblas0, runtime-dispatched) when the
//    process can load it;
//  - else a portable loop.
// OpenBLAS is loaded with dlopen so libqairt.so keeps no hard dependency on
// it (and the build needs no extra link flags).
//
// Summation order. A Q-DQ model exported by qairt runs in ONNX Runtime,
// whose CPU GEMM (MLAS) sums in a fixed order; with 16-bit activations one
// float rounding of difference moves a requantized value by a step often
// enough that ~50 layers later the outputs differ by tens of steps. So the
// SIMD backends follow MLAS's order for the product as ONNX Runtime sees
// it (`GemmView`: the exported op's transposes), single-threaded. MLAS
// takes the same kernels for M = 1 and N = 1 on every AVX host, and its
// FMA3 and AVX-512 kernels sum each element in the same order, so one
// order serves both:
//  - M = 1 (A not transposed): MLAS's M=1 kernels. B not transposed: per
//    output, products of four consecutive k summed left to right with
//    separate multiplies and adds, each group added to C (then a pair, then
//    a single product). B transposed: eight interleaved partial sums (k mod
//    8) reduced in a tree that depends on the output's position in the
//    kernel's 4/2/1-row blocks.
//  - N = 1, B a contiguous column (not transposed): the same kernels with
//    A and B swapped (MLAS's "transpose(A*B) = transpose(B)*transpose(A)").
//  - otherwise: K blocks of MlasGemmKBlock(n, k), each summed from zero by
//    sequential FMAs and then added to C (gemm_blocked.h).
// tests/exec/test_gemm.cpp checks each case against an independent model
// of those kernels; tests/calib checks ORT's outputs on the exported model.
// The M = 1 / N = 1 loops are written to vectorise (the module is built with
// -O3: CMakeLists.txt, qairt_exec).
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <mutex>
#include <string_view>
#include <vector>

#include "exec/gemm_blocked.h"
#include "exec/kernel.h"
#include "kernels/hardware.h"

namespace qairt::exec {
namespace {

// cblas enums (CBLAS_ORDER / CBLAS_TRANSPOSE).
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using SetThreadsFn = void (*)(int);

struct Blas {
  SgemmFn sgemm = nullptr;
  SetThreadsFn set_threads = nullptr;
  const char* name = "portable";
};

const Blas& GetBlas() {
  static const Blas blas = [] {
    Blas b;
    if (const char* env = std::getenv("QAIRT_EXEC_NO_BLAS"); env && *env && *env != '0') return b;
    for (const char* lib : {"libopenblas.so.0", "libopenblas.so"}) {
      void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
      if (!h) continue;
      auto sg = reinterpret_cast<SgemmFn>(dlsym(h, "cblas_sgemm"));
      auto st = reinterpret_cast<SetThreadsFn>(dlsym(h, "openblas_set_num_threads"));
      if (!sg) {
        dlclose(h);
        continue;
      }
      b.sgemm = sg;
      b.set_threads = st;
      b.name = "openblas";
      if (st) st(1);
      break;
    }
    return b;
  }();
  return blas;
}

void PortableGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* crow = c + i * ldc;
    if (beta == 0.0f) std::fill(crow, crow + n, 0.0f);
    else if (beta != 1.0f) for (int64_t j = 0; j < n; ++j) crow[j] *= beta;
  }
  std::vector<float> bt;
  const float* bp = b;
  int64_t ldbp = ldb;
  if (tb) {  // make B row-major [K, N]
    bt.resize(static_cast<size_t>(k * n));
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) bt[static_cast<size_t>(p * n + j)] = b[j * ldb + p];
    bp = bt.data();
    ldbp = n;
  }
  for (int64_t i = 0; i < m; ++i) {
    float* crow = c + i * ldc;
    for (int64_t p = 0; p < k; ++p) {
      const float av = alpha * (ta ? a[p * lda + i] : a[i * lda + p]);
      if (av == 0.0f) continue;
      const float* brow = bp + p * ldbp;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
    }
  }
}

// C[j] (+)= sum_k x(k) * b(k, j), j < n, in the order of MLAS's M=1 kernel
// (SgemmKernelM1Avx): products of k, k+1, k+2, k+3 summed left to right
// (separate roundings, no FMA), the group then added to C; a remaining pair,
// then a remaining single product, likewise. beta 0: C starts at +0.
template <typename X, typename B>
void GemvGroupsOfFour(int64_t n, int64_t k, X x, B b, float beta, float* c, int64_t c_stride) {
  for (int64_t j = 0; j < n; ++j) {
    float acc = beta == 0.0f ? 0.0f : c[j * c_stride];
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
      float t = x(p) * b(p, j);
      t = t + x(p + 1) * b(p + 1, j);
      t = t + x(p + 2) * b(p + 2, j);
      t = t + x(p + 3) * b(p + 3, j);
      acc = t + acc;
    }
    if (k - p >= 2) {
      const float t = x(p) * b(p, j) + x(p + 1) * b(p + 1, j);
      acc = t + acc;
      p += 2;
    }
    if (p < k) acc = x(p) * b(p, j) + acc;
    c[j * c_stride] = acc;
  }
}

// GemvGroupsOfFour for a row-major B (rows of N contiguous floats), C
// contiguous: the same operations, column loop innermost so it vectorises.
template <typename X>
void GemvRowsOfB(int64_t n, int64_t k, X x, const float* b, int64_t ldb, float beta, float* c) {
  if (beta == 0.0f) std::fill(c, c + n, 0.0f);
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    const float x0 = x(p), x1 = x(p + 1), x2 = x(p + 2), x3 = x(p + 3);
    const float *b0 = b + p * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
    for (int64_t j = 0; j < n; ++j) {
      float t = x0 * b0[j];
      t = t + x1 * b1[j];
      t = t + x2 * b2[j];
      t = t + x3 * b3[j];
      c[j] = t + c[j];
    }
  }
  if (k - p >= 2) {
    const float x0 = x(p), x1 = x(p + 1);
    const float *b0 = b + p * ldb, *b1 = b0 + ldb;
    for (int64_t j = 0; j < n; ++j) c[j] = (x0 * b0[j] + x1 * b1[j]) + c[j];
    p += 2;
  }
  if (p < k) {
    const float x0 = x(p);
    const float* b0 = b + p * ldb;
    for (int64_t j = 0; j < n; ++j) c[j] = x0 * b0[j] + c[j];
  }
}

// C[r] (+)= dot(x, row r), r < rows, in the order of MLAS's M=1 kernel for a
// transposed B (SgemmKernelM1TransposeBAvx): lane l sums the products of
// k = l, l+8, l+16, ... in order; the eight lanes are then reduced by the
// tree of the block the row falls in (rows go in blocks of 4 while 4 remain,
// then a block of 2, then of 1), and the result added to C.
template <typename X, typename R>
void DotsInEightLanes(int64_t rows, int64_t k, X x, R row, float beta, float* c, int64_t c_stride) {
  const int64_t fours = rows / 4 * 4;
  const int64_t twos = fours + (rows - fours) / 2 * 2;
  for (int64_t r = 0; r < rows; ++r) {
    float l[8] = {};
    int64_t p = 0;
    for (; p + 8 <= k; p += 8)
      for (int64_t i = 0; i < 8; ++i) l[i] = l[i] + x(p + i) * row(r, p + i);
    for (; p < k; ++p) l[p % 8] = l[p % 8] + x(p) * row(r, p);
    float t;
    if (r < fours) t = (((l[0] + l[1]) + l[2]) + l[3]) + (((l[4] + l[5]) + l[6]) + l[7]);
    else if (r < twos) t = ((l[0] + l[2]) + (l[4] + l[6])) + ((l[1] + l[3]) + (l[5] + l[7]));
    else t = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    c[r * c_stride] = t + (beta == 0.0f ? 0.0f : c[r * c_stride]);
  }
}

// MLAS's M = 1 and N = 1 special cases (see the top of the file); false if
// the product is not one of them.
bool MlasSpecialCase(bool ta, bool tb, GemmView view, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (alpha != 1.0f || (beta != 0.0f && beta != 1.0f)) return false;
  auto a_at = [=](int64_t i, int64_t p) { return ta ? a[p * lda + i] : a[i * lda + p]; };
  auto b_at = [=](int64_t p, int64_t j) { return tb ? b[j * ldb + p] : b[p * ldb + j]; };
  if (m == 1 && !view.trans_a) {
    auto x = [&](int64_t p) { return a_at(0, p); };
    if (view.trans_b && tb && !ta) {  // contiguous rows of B (a FullyConnected's weights)
      DotsInEightLanes(n, k, x, [&](int64_t j, int64_t p) { return b[j * ldb + p]; }, beta, c, 1);
    } else if (view.trans_b) {
      DotsInEightLanes(n, k, x, [&](int64_t j, int64_t p) { return b_at(p, j); }, beta, c, 1);
    } else if (!tb) {
      GemvRowsOfB(n, k, x, b, ldb, beta, c);
    } else {
      GemvGroupsOfFour(n, k, x, b_at, beta, c, 1);
    }
    return true;
  }
  // MLAS also needs ldb == 1 and ldc == 1: B a column it reads contiguously.
  if (n == 1 && (!view.trans_b || k == 1)) {
    auto x = [&](int64_t p) { return b_at(p, 0); };
    if (view.trans_a) GemvGroupsOfFour(m, k, x, [&](int64_t p, int64_t i) { return a_at(i, p); }, beta, c, ldc);
    else DotsInEightLanes(m, k, x, a_at, beta, c, ldc);
    return true;
  }
  return false;
}

std::atomic<int> g_backend{-1};  // GemmBackend, -1 = not read from the environment yet

GemmBackend Backend() {
  int v = g_backend.load(std::memory_order_relaxed);
  if (v < 0) {
    GemmBackend b = GemmBackend::kAuto;
    if (const char* env = std::getenv("QAIRT_EXEC_GEMM")) {
      const std::string_view e = env;
      if (e == "avx512") b = GemmBackend::kAvx512;
      else if (e == "fma") b = GemmBackend::kFma;
      else if (e == "openblas") b = GemmBackend::kOpenBlas;
      else if (e == "portable") b = GemmBackend::kPortable;
    }
    int expected = -1;
    g_backend.compare_exchange_strong(expected, static_cast<int>(b));
    v = g_backend.load(std::memory_order_relaxed);
  }
  return static_cast<GemmBackend>(v);
}

bool Avx512Usable() {
  return kernels::HostSupports(kernels::Isa::kAvx512) && kernels::ActiveIsa() == kernels::Isa::kAvx512;
}

// The AVX2 level includes FMA3 (kernels/hardware.h).
bool FmaUsable() {
  return kernels::HostSupports(kernels::Isa::kAvx2) && kernels::ActiveIsa() >= kernels::Isa::kAvx2;
}

// The backend a call uses.
GemmBackend Choose() {
  const GemmBackend b = Backend();
  if (b == GemmBackend::kAvx512) return Avx512Usable() ? b : GemmBackend::kOpenBlas;
  if (b == GemmBackend::kFma) return FmaUsable() ? b : GemmBackend::kOpenBlas;
  if (b != GemmBackend::kAuto) return b;
  // Not dependent on the thread count: results must not change with it.
  if (Avx512Usable()) return GemmBackend::kAvx512;
  if (FmaUsable()) return GemmBackend::kFma;
  return GemmBackend::kOpenBlas;
}

}  // namespace

void SetGemmBackend(GemmBackend backend) { g_backend.store(static_cast<int>(backend)); }

int64_t MlasGemmKBlock(int64_t n, int64_t k, bool trans_a) {
  // MlasSgemmOperation: a 128 x 128 (N x K) panel of B, widened along N
  // when K is small, deepened along K when N is small (A not transposed).
  int64_t stride_n = 128, stride_k = 128;
  if (n >= k) {
    while (stride_k / 2 >= k) {
      stride_n *= 2;
      stride_k /= 2;
    }
  } else if (!trans_a) {
    while (stride_n > 16 && stride_n / 2 >= n) {
      stride_k *= 2;
      stride_n /= 2;
    }
  }
  return stride_k;
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  Gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, GemmView{trans_a, trans_b});
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc, GemmView view) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  const GemmBackend backend = Choose();
  if (backend == GemmBackend::kAvx512 || backend == GemmBackend::kFma) {
    if (MlasSpecialCase(trans_a, trans_b, view, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
    const BlockedGemm& simd = backend == GemmBackend::kAvx512 ? Avx512Gemm() : FmaGemm();
    if (simd.gemm(trans_a, trans_b, m, n, k, MlasGemmKBlock(n, k, view.trans_a), alpha, a, lda, b, ldb, beta, c, ldc))
      return;
  }
  const Blas& blas = GetBlas();
  constexpr int64_t kIntMax = 0x7fffffff;
  if (backend != GemmBackend::kPortable && blas.sgemm && m < kIntMax && n < kIntMax && k < kIntMax && lda < kIntMax && ldb < kIntMax && ldc < kIntMax) {
    blas.sgemm(kRowMajor, trans_a ? kTrans : kNoTrans, trans_b ? kTrans : kNoTrans, static_cast<int>(m),
               static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
               c, static_cast<int>(ldc));
    return;
  }
  PortableGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

std::shared_ptr<const PackedGemmA> PackGemmAIfUseful(bool trans_a, int64_t m, int64_t n, int64_t k, const float* a,
                                                     int64_t lda) {
  // M = 1 and N = 1 take MLAS's special kernels, which read A unpacked.
  if (m == 1 || n == 1) return nullptr;
  return PackGemmA(trans_a, m, k, MlasGemmKBlock(n, k, trans_a), a, lda);
}

std::shared_ptr<const PackedGemmA> PackGemmA(bool trans_a, int64_t m, int64_t k, int64_t kblock, const float* a,
                                             int64_t lda) {
  switch (Choose()) {
    case GemmBackend::kAvx512: return Avx512Gemm().pack(trans_a, m, k, kblock, a, lda);
    case GemmBackend::kFma: return FmaGemm().pack(trans_a, m, k, kblock, a, lda);
    default: return nullptr;
  }
}

bool GemmPackedA(const PackedGemmA& a, bool trans_b, int64_t n, int64_t kblock, float alpha, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc, const float* row_bias) {
  // The tile it was packed for, whatever the backend is now.
  if (a.tile == static_cast<int>(GemmBackend::kAvx512))
    return Avx512Gemm().gemm_packed(a, trans_b, n, kblock, alpha, b, ldb, beta, c, ldc, row_bias);
  if (a.tile == static_cast<int>(GemmBackend::kFma))
    return FmaGemm().gemm_packed(a, trans_b, n, kblock, alpha, b, ldb, beta, c, ldc, row_bias);
  return false;
}

void SetGemmThreads(uint32_t threads) {
  // Only where OpenBLAS computes the products: loading it starts its thread
  // pool, a thread per core that spins at start-up (~0.1 s of CPU taken from
  // whatever else runs), which the other backends never use.
  if (Choose() != GemmBackend::kOpenBlas) return;
  const Blas& blas = GetBlas();
  if (blas.set_threads) blas.set_threads(static_cast<int>(std::max<uint32_t>(threads, 1)));
}

const char* GemmBackendName() {
  switch (Choose()) {
    case GemmBackend::kAvx512: return "avx512";
    case GemmBackend::kFma: return "fma";
    case GemmBackend::kPortable: return "portable";
    default: return GetBlas().name;
  }
}

}  // namespace qairt::exec
