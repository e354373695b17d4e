// The executor's GEMM backends against a double-precision reference: every
// transpose combination, alpha/beta (beta 0 never reads C: NaN there must
// not leak), leading dimensions larger than the rows, and shapes that cut
// every blocking level of the AVX-512 kernel (tile 14 x 32, K block 256,
// M block 168, N block 4096) at odd places.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "exec/kernel.h"
#include "kernels/hardware.h"

namespace qairt::exec {
namespace {

struct Case {
  bool ta, tb;
  int64_t m, n, k;
  float alpha, beta;
};

// Max |got - want| / (sum over k of |a||b| + |beta c|): the error bound of a
// float32 dot product of length k is ~k * 2^-24 of that.
double RunCase(const Case& t, GemmBackend backend, std::mt19937* rng) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  const int64_t lda = (t.ta ? t.m : t.k) + 3, ldb = (t.tb ? t.k : t.n) + 5, ldc = t.n + 7;
  std::vector<float> a(static_cast<size_t>((t.ta ? t.k : t.m) * lda)), b(static_cast<size_t>((t.tb ? t.n : t.k) * ldb));
  std::vector<float> c(static_cast<size_t>(t.m * ldc));
  for (auto& v : a) v = d(*rng);
  for (auto& v : b) v = d(*rng);
  for (auto& v : c) v = t.beta == 0.f ? std::numeric_limits<float>::quiet_NaN() : d(*rng);
  const std::vector<float> c0 = c;
  SetGemmBackend(backend);
  Gemm(t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data(), lda, b.data(), ldb, t.beta, c.data(), ldc);
  SetGemmBackend(GemmBackend::kAuto);
  double worst = 0;
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.n; ++j) {
      double want = 0, mag = 0;
      for (int64_t p = 0; p < t.k; ++p) {
        const double av = t.ta ? a[p * lda + i] : a[i * lda + p];
        const double bv = t.tb ? b[j * ldb + p] : b[p * ldb + j];
        want += av * bv;
        mag += std::fabs(av * bv);
      }
      want *= t.alpha;
      mag *= std::fabs(t.alpha);
      if (t.beta != 0.f) {
        want += t.beta * static_cast<double>(c0[i * ldc + j]);
        mag += std::fabs(t.beta * c0[i * ldc + j]);
      }
      const double got = c[i * ldc + j];
      if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, std::fabs(got - want) / std::max(mag, 1e-30));
    }
  // Padding columns of C beyond n are untouched.
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = t.n; j < ldc && i * ldc + j < static_cast<int64_t>(c.size()); ++j)
      if (!(std::isnan(c0[i * ldc + j]) ? std::isnan(c[i * ldc + j]) : c[i * ldc + j] == c0[i * ldc + j]))
        return std::numeric_limits<double>::infinity();
  return worst;
}

TEST_CASE("executor GEMM backends match a double reference on every blocking edge", "[exec][gemm]") {
  std::vector<GemmBackend> backends = {GemmBackend::kPortable, GemmBackend::kOpenBlas};
  if (kernels::HostSupports(kernels::Isa::kAvx512)) backends.push_back(GemmBackend::kAvx512);
  const std::vector<Case> cases = {
      {false, false, 1, 1, 1, 1.f, 0.f},      {false, false, 14, 32, 7, 1.f, 0.f},
      {false, false, 15, 33, 257, 1.f, 0.f},  {false, true, 13, 31, 255, 0.5f, 0.f},
      {true, false, 29, 65, 300, 1.f, 1.f},   {true, true, 170, 17, 513, 2.f, 0.25f},
      {false, false, 169, 4100, 40, 1.f, 0.f}, {false, true, 64, 49, 576, 1.f, 1.f},
      {false, false, 3, 3136, 64, 1.f, 0.f},  {false, false, 200, 16, 1, -1.f, 0.f},
  };
  std::mt19937 rng(20261129);
  for (GemmBackend be : backends)
    for (const Case& t : cases) {
      INFO("backend " << static_cast<int>(be) << " ta " << t.ta << " tb " << t.tb << " m " << t.m << " n " << t.n
                      << " k " << t.k << " alpha " << t.alpha << " beta " << t.beta);
      const double err = RunCase(t, be, &rng);
      CHECK(err <= 1e-5 + static_cast<double>(t.k) * 6e-8);
    }
}

TEST_CASE("pre-packed weights give the same result as packing per call", "[exec][gemm]") {
  if (!kernels::HostSupports(kernels::Isa::kAvx512)) return;  // nothing to pack for
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 1}, {15, 33, 257}, {170, 49, 600}, {64, 4100, 27}}) {
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (auto& v : a) v = d(rng);
    for (auto& v : b) v = d(rng);
    std::vector<float> c1(static_cast<size_t>(m * n), 7.f), c2 = c1;
    const int64_t kb = MlasGemmKBlock(n, k, false);
    REQUIRE(GemmAvx512(false, false, m, n, k, kb, 1.f, a.data(), k, b.data(), n, 0.f, c1.data(), n));
    auto packed = PackGemmA(false, m, k, kb, a.data(), k);
    REQUIRE(packed);
    REQUIRE(GemmPackedA(*packed, false, n, kb, 1.f, b.data(), n, 0.f, c2.data(), n));
    // Packed for another K block: refused, so the caller packs per call.
    CHECK_FALSE(GemmPackedA(*packed, false, n, kb * 2, 1.f, b.data(), n, 0.f, c2.data(), n));
    INFO("m " << m << " n " << n << " k " << k);
    CHECK(c1 == c2);  // same blocks, same order: bit-identical
    // A fused row bias equals a separate pass after the GEMM, bit for bit.
    std::vector<float> bias(static_cast<size_t>(m));
    for (auto& v : bias) v = d(rng);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c1[static_cast<size_t>(i * n + j)] += bias[static_cast<size_t>(i)];
    REQUIRE(GemmPackedA(*packed, false, n, kb, 1.f, b.data(), n, 0.f, c2.data(), n, bias.data()));
    CHECK(c1 == c2);
  }
}

TEST_CASE("the default GEMM is the AVX-512 kernel on AVX-512 hosts, whatever OPENBLAS_CORETYPE says",
          "[exec][gemm]") {
  SetGemmBackend(GemmBackend::kAuto);
  const std::string name = GemmBackendName();
  if (kernels::HostSupports(kernels::Isa::kAvx512) && kernels::ActiveIsa() == kernels::Isa::kAvx512)
    CHECK(name == "avx512");
  else
    CHECK(name != "avx512");
  SetGemmBackend(GemmBackend::kPortable);
  CHECK(std::string(GemmBackendName()) == "portable");
  SetGemmBackend(GemmBackend::kAuto);
}

}  // namespace
}  // namespace qairt::exec
