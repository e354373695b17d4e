// GEMM for the executor. Default choice, made once:
//  - on an AVX-512 host (and QAIRT_FORCE_ISA not below it): our AVX-512
//    kernel (gemm_avx512.cpp, single-threaded, so results never depend on
//    the thread count), because Debian's OpenBLAS follows OPENBLAS_CORETYPE,
//    which environments often pin to an AVX2 core type (benchmarks/README.md
//    has the measurements);
//  - otherwise OpenBLAS (Debian's libopenblas0, runtime-dispatched) when the
//    process can load it;
//  - else a portable loop.
// OpenBLAS is loaded with dlopen so libqairt.so keeps no hard dependency on
// it (and the build needs no extra link flags).
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <mutex>
#include <string_view>
#include <vector>

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

std::atomic<int> g_backend{-1};  // GemmBackend, -1 = not read from the environment yet

GemmBackend Backend() {
  int v = g_backend.load(std::memory_order_relaxed);
  if (v < 0) {
    GemmBackend b = GemmBackend::kAuto;
    if (const char* env = std::getenv("QAIRT_EXEC_GEMM")) {
      const std::string_view e = env;
      if (e == "avx512") b = GemmBackend::kAvx512;
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

// The backend a call uses.
GemmBackend Choose() {
  const GemmBackend b = Backend();
  if (b == GemmBackend::kAvx512) return Avx512Usable() ? b : GemmBackend::kOpenBlas;
  if (b != GemmBackend::kAuto) return b;
  // Not dependent on the thread count: results must not change with it.
  if (Avx512Usable()) return GemmBackend::kAvx512;
  return GemmBackend::kOpenBlas;
}

}  // namespace

void SetGemmBackend(GemmBackend backend) { g_backend.store(static_cast<int>(backend)); }

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  const GemmBackend backend = Choose();
  if (backend == GemmBackend::kAvx512 && GemmAvx512(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
    return;
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

std::shared_ptr<const PackedGemmA> PackGemmAIfUseful(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda) {
  if (Choose() != GemmBackend::kAvx512) return nullptr;
  return PackGemmA(trans_a, m, k, a, lda);
}

void SetGemmThreads(uint32_t threads) {
  const Blas& blas = GetBlas();
  if (blas.set_threads) blas.set_threads(static_cast<int>(std::max<uint32_t>(threads, 1)));
}

const char* GemmBackendName() {
  switch (Choose()) {
    case GemmBackend::kAvx512: return "avx512";
    case GemmBackend::kPortable: return "portable";
    default: return GetBlas().name;
  }
}

}  // namespace qairt::exec
