// The executor's GEMM backends against a double-precision reference: every
// transpose combination, alpha/beta (beta 0 never reads C: NaN there must
// not leak), leading dimensions larger than the rows, and shapes that cut
// every blocking level of the SIMD kernels (tiles 14 x 32 and 6 x 16, MLAS's
// K block of 128-1024 by N, M blocks 336 and 288, N block 4096) at odd places.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "exec/gemm_blocked.h"
#include "exec/kernel.h"
#include "kernels/hardware.h"

namespace qairt::exec {
namespace {

const char* GemmBackendNameOf(GemmBackend b) { return b == GemmBackend::kAvx512 ? "avx512" : "fma"; }

// Selects a SIMD kernel with the dispatch level it needs, whatever
// QAIRT_FORCE_ISA says; RestoreBackend undoes both.
void UseBackend(GemmBackend b) {
  kernels::SetIsaOverride(b == GemmBackend::kAvx512 ? kernels::Isa::kAvx512 : kernels::Isa::kAvx2);
  SetGemmBackend(b);
}
void RestoreBackend() {
  SetGemmBackend(GemmBackend::kAuto);
  kernels::SetIsaOverride(std::nullopt);
}

// The SIMD GEMM kernels this host can run (none on a host without AVX2 + FMA3).
std::vector<GemmBackend> SimdBackends() {
  std::vector<GemmBackend> out;
  if (kernels::HostSupports(kernels::Isa::kAvx2)) out.push_back(GemmBackend::kFma);
  if (kernels::HostSupports(kernels::Isa::kAvx512)) out.push_back(GemmBackend::kAvx512);
  return out;
}

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
  for (GemmBackend b : SimdBackends()) backends.push_back(b);
  const std::vector<Case> cases = {
      {false, false, 1, 1, 1, 1.f, 0.f},      {false, false, 14, 32, 7, 1.f, 0.f},
      {false, false, 15, 33, 257, 1.f, 0.f},  {false, true, 13, 31, 255, 0.5f, 0.f},
      {true, false, 29, 65, 300, 1.f, 1.f},   {true, true, 170, 17, 513, 2.f, 0.25f},
      {false, false, 169, 4100, 40, 1.f, 0.f}, {false, true, 64, 49, 576, 1.f, 1.f},
      {false, false, 3, 3136, 64, 1.f, 0.f},  {false, false, 200, 16, 1, -1.f, 0.f},
      // One M block with a B over the in-place limit (2.6 MB): packed, with
      // a partial last sliver and a partial last K block.
      {false, false, 20, 4100, 161, 1.f, 0.5f},
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

TEST_CASE("a short last tile of rows computes them as a full tile does, bit for bit", "[exec][gemm]") {
  // M = 1..13: the AVX-512 kernel's tail tiles (14 rows a tile), the FMA
  // kernel's full and tail tiles (6); every row is summed in the same order
  // whatever tile it falls in, so the first r rows of a 14-row product are
  // the r-row product's. K over one K block, N with a partial sliver, beta.
  constexpr int64_t kFull = 14, kK = 300, kN = 70;
  std::mt19937 rng(20261204);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> a(kFull * kK), b(kK * kN), c0(kFull * kN);
  for (auto& v : a) v = d(rng);
  for (auto& v : b) v = d(rng);
  for (auto& v : c0) v = d(rng);
  for (GemmBackend be : SimdBackends()) {
    UseBackend(be);
    std::vector<float> full = c0;
    Gemm(false, false, kFull, kN, kK, 1.5f, a.data(), kK, b.data(), kN, 0.5f, full.data(), kN);
    for (int64_t r = 1; r < kFull; ++r) {
      INFO("backend " << GemmBackendNameOf(be) << ", " << r << " rows");
      std::vector<float> part(c0.begin(), c0.begin() + r * kN);
      Gemm(false, false, r, kN, kK, 1.5f, a.data(), kK, b.data(), kN, 0.5f, part.data(), kN);
      CHECK(std::memcmp(part.data(), full.data(), part.size() * sizeof(float)) == 0);
    }
    RestoreBackend();
  }
}

TEST_CASE("pre-packed weights give the same result as packing per call", "[exec][gemm]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (GemmBackend be : SimdBackends())
  for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 1}, {15, 33, 257}, {170, 49, 600}, {64, 4100, 27}, {300, 70, 40}}) {
    UseBackend(be);
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (auto& v : a) v = d(rng);
    for (auto& v : b) v = d(rng);
    std::vector<float> c1(static_cast<size_t>(m * n), 7.f), c2 = c1;
    const int64_t kb = MlasGemmKBlock(n, k, false);
    const BlockedGemm& simd = be == GemmBackend::kAvx512 ? Avx512Gemm() : FmaGemm();
    REQUIRE(simd.gemm(false, false, m, n, k, kb, 1.f, a.data(), k, b.data(), n, 0.f, c1.data(), n));
    auto packed = PackGemmA(false, m, k, kb, a.data(), k);
    RestoreBackend();
    REQUIRE(packed);
    REQUIRE(GemmPackedA(*packed, false, n, kb, 1.f, b.data(), n, 0.f, c2.data(), n));
    // Packed for another K block: refused, so the caller packs per call.
    CHECK_FALSE(GemmPackedA(*packed, false, n, kb * 2, 1.f, b.data(), n, 0.f, c2.data(), n));
    INFO("backend " << static_cast<int>(be) << " m " << m << " n " << n << " k " << k);
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

TEST_CASE("the default GEMM is the AVX-512 kernel on AVX-512 hosts and the FMA kernel on AVX2 hosts, whatever "
          "OPENBLAS_CORETYPE says", "[exec][gemm]") {
  SetGemmBackend(GemmBackend::kAuto);
  const std::string name = GemmBackendName();
  if (kernels::HostSupports(kernels::Isa::kAvx512) && kernels::ActiveIsa() == kernels::Isa::kAvx512)
    CHECK(name == "avx512");
  else if (kernels::HostSupports(kernels::Isa::kAvx2) && kernels::ActiveIsa() >= kernels::Isa::kAvx2)
    CHECK(name == "fma");
  else
    CHECK((name != "avx512" && name != "fma"));
  SetGemmBackend(GemmBackend::kPortable);
  CHECK(std::string(GemmBackendName()) == "portable");
  SetGemmBackend(GemmBackend::kAuto);
}

}  // namespace
}  // namespace qairt::exec

namespace qairt::exec {
namespace {

// ---- An independent model of ONNX Runtime's (MLAS's) single-threaded SGEMM
// summation order on x86-64, written from its kernels' instruction sequences
// (sgemm.cpp MlasSgemmOperation, SgemmKernelM1Avx.S,
// SgemmKernelM1TransposeBAvx.S, the FMA kernels), to check that the
// executor's AVX-512 backend reproduces it bit for bit.

using Ymm = std::array<float, 8>;  // two 128-bit lanes of four floats
Ymm UnpackLoPs(const Ymm& a, const Ymm& b) { return {a[0], b[0], a[1], b[1], a[4], b[4], a[5], b[5]}; }
Ymm UnpackHiPs(const Ymm& a, const Ymm& b) { return {a[2], b[2], a[3], b[3], a[6], b[6], a[7], b[7]}; }
Ymm UnpackLoPd(const Ymm& a, const Ymm& b) { return {a[0], a[1], b[0], b[1], a[4], a[5], b[4], b[5]}; }
Ymm UnpackHiPd(const Ymm& a, const Ymm& b) { return {a[2], a[3], b[2], b[3], a[6], a[7], b[6], b[7]}; }
Ymm HAddPs(const Ymm& a, const Ymm& b) {
  return {a[0] + a[1], a[2] + a[3], b[0] + b[1], b[2] + b[3], a[4] + a[5], a[6] + a[7], b[4] + b[5], b[6] + b[7]};
}
Ymm Add(const Ymm& a, const Ymm& b) {
  Ymm r;
  for (int i = 0; i < 8; ++i) r[i] = a[i] + b[i];
  return r;
}

// SgemmKernelM1TransposeBAvx: C[r] = x . W[r] (W rows of K), beta 0 or 1.
void ModelM1TransposeB(const std::vector<float>& x, const std::vector<std::vector<float>>& w, float beta,
                       std::vector<float>* c) {
  const size_t k = x.size(), n = w.size();
  auto lanes = [&](size_t r) {
    Ymm acc{};
    for (size_t p0 = 0; p0 < k; p0 += 8) {
      Ymm prod{};
      for (size_t l = 0; l < 8; ++l) prod[l] = p0 + l < k ? x[p0 + l] * w[r][p0 + l] : 0.0f;  // masked tail: 0 * 0
      acc = Add(acc, prod);
    }
    return acc;
  };
  auto old = [&](size_t r) { return beta == 0.0f ? 0.0f : (*c)[r]; };
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {  // .LOutput4x1Block
    const Ymm a = lanes(r), b = lanes(r + 1), cc = lanes(r + 2), d = lanes(r + 3);
    const Ymm y6 = UnpackLoPs(a, b), y1 = UnpackHiPs(a, b), y2 = UnpackLoPs(cc, d), y3 = UnpackHiPs(cc, d);
    Ymm y4 = Add(UnpackLoPd(y6, y2), UnpackHiPd(y6, y2));
    y4 = Add(y4, UnpackLoPd(y1, y3));
    y4 = Add(y4, UnpackHiPd(y1, y3));
    const float o[4] = {old(r), old(r + 1), old(r + 2), old(r + 3)};
    for (size_t i = 0; i < 4; ++i) (*c)[r + i] = (y4[i] + y4[4 + i]) + o[i];
  }
  if (n - r >= 2) {  // .LOutput2x1Block
    const Ymm a = lanes(r), b = lanes(r + 1);
    const Ymm y2 = Add(UnpackHiPs(a, b), UnpackLoPs(a, b));
    const float x4[4] = {y2[0] + y2[4], y2[1] + y2[5], y2[2] + y2[6], y2[3] + y2[7]};
    const float o0 = old(r), o1 = old(r + 1);
    (*c)[r] = (x4[0] + x4[2]) + o0;
    (*c)[r + 1] = (x4[1] + x4[3]) + o1;
    r += 2;
  }
  if (r < n) {  // .LOutput1x1Block
    const Ymm a = lanes(r);
    const Ymm h = HAddPs(HAddPs(a, a), HAddPs(a, a));
    (*c)[r] = (h[0] + h[4]) + old(r);
  }
}

// The executor's product C = op(A) op(B) as ONNX Runtime sums it (alpha 1).
std::vector<float> ModelMlas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
                             int64_t lda, const std::vector<float>& b, int64_t ldb, float beta, std::vector<float> c,
                             int64_t ldc, bool view_ta, bool view_tb) {
  auto A = [&](int64_t i, int64_t p) { return ta ? a[p * lda + i] : a[i * lda + p]; };
  auto B = [&](int64_t p, int64_t j) { return tb ? b[j * ldb + p] : b[p * ldb + j]; };
  // SgemmKernelM1Avx, column by column: out[j] = sum_p x(p) * y(p, j).
  auto m1 = [&](int64_t outs, auto x, auto y, auto at) {
    for (int64_t j = 0; j < outs; ++j) {
      float cj = beta == 0.0f ? 0.0f : c[at(j)];
      int64_t p = 0;
      for (; p + 4 <= k; p += 4) {
        float y1 = x(p) * y(p, j);
        float y8 = x(p + 1) * y(p + 1, j);
        y1 = y1 + y8;
        y8 = x(p + 2) * y(p + 2, j);
        y1 = y1 + y8;
        y8 = x(p + 3) * y(p + 3, j);
        y1 = y1 + y8;
        cj = y1 + cj;
      }
      if (k - p >= 2) {
        float y1 = x(p) * y(p, j);
        const float y8 = x(p + 1) * y(p + 1, j);
        cj = (y1 + y8) + cj;
        p += 2;
      }
      if (p < k) cj = x(p) * y(p, j) + cj;
      c[at(j)] = cj;
    }
  };
  if (m == 1 && !view_ta && !view_tb) {
    m1(n, [&](int64_t p) { return A(0, p); }, B, [](int64_t j) { return j; });
    return c;
  }
  if (n == 1 && view_ta && !view_tb) {  // MLAS swaps A and B: KernelM1Routine(B, A, ...)
    m1(m, [&](int64_t p) { return B(p, 0); }, [&](int64_t p, int64_t i) { return A(i, p); },
       [&](int64_t i) { return i * ldc; });
    return c;
  }
  if ((m == 1 && !view_ta && view_tb) || (n == 1 && !view_ta && !view_tb)) {
    const bool rows_of_b = m == 1;
    const int64_t rows = rows_of_b ? n : m;
    std::vector<float> x(static_cast<size_t>(k));
    std::vector<std::vector<float>> w(static_cast<size_t>(rows), std::vector<float>(static_cast<size_t>(k)));
    for (int64_t p = 0; p < k; ++p) x[p] = rows_of_b ? A(0, p) : B(p, 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = 0; p < k; ++p) w[r][p] = rows_of_b ? B(p, r) : A(r, p);
    std::vector<float> out(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) out[r] = c[rows_of_b ? r : r * ldc];
    ModelM1TransposeB(x, w, beta, &out);
    for (int64_t r = 0; r < rows; ++r) c[rows_of_b ? r : r * ldc] = out[r];
    return c;
  }
  // MlasSgemmOperation: panels of StrideN x StrideK, one FMA chain per K block.
  int64_t stride_n = 128, stride_k = 128;
  if (n >= k) {
    while (stride_k / 2 >= k) stride_n *= 2, stride_k /= 2;
  } else if (!view_ta) {
    while (stride_n > 16 && stride_n / 2 >= n) stride_k *= 2, stride_n /= 2;
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float cij = c[i * ldc + j];
      for (int64_t k0 = 0; k0 < k; k0 += stride_k) {
        float acc = 0.0f;
        for (int64_t p = k0; p < std::min(k, k0 + stride_k); ++p) acc = std::fma(A(i, p), B(p, j), acc);
        cij = (k0 == 0 && beta == 0.0f) ? acc : acc + cij;
      }
      c[i * ldc + j] = cij;
    }
  return c;
}

TEST_CASE("the SIMD GEMMs sum in ONNX Runtime's (MLAS) order, bit for bit", "[exec][gemm][mlas]") {
  const std::vector<GemmBackend> backends = SimdBackends();
  REQUIRE_FALSE(backends.empty());  // x86-64 hosts without AVX2 + FMA3 are not supported by the test machines
  struct Shape {
    bool ta, tb;          // storage
    bool view_ta, view_tb;  // as the exported op has them
    int64_t m, n, k;
    float beta;
  };
  std::vector<Shape> shapes;
  for (int64_t k : {1, 2, 3, 4, 5, 6, 7, 9, 25, 200}) {
    shapes.push_back({false, false, false, false, 1, 37, k, 0.f});  // M = 1: groups of four
    shapes.push_back({false, true, false, false, 1, 19, k, 1.f});   // same order, B held transposed
  }
  for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 22})
    for (int64_t k : {1, 7, 8, 9, 17, 200}) {
      shapes.push_back({false, true, false, true, 1, n, k, 0.f});  // M = 1, B transposed: eight lanes
      if (n > 1) shapes.push_back({false, false, false, false, n, 1, k, 1.f});  // N = 1: A and B swapped
    }
  shapes.push_back({true, false, true, false, 9, 1, 30, 0.f});  // N = 1 with A transposed: groups of four
  // General: K blocks of 128, 256 (N <= 64), 512 (N <= 32), 1024 (N <= 16); none for a transposed A.
  for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {32, 192, 200}, {16, 64, 300}, {8, 20, 1100}, {5, 9, 2100}, {40, 128, 129}, {3, 300, 64},
           {20, 4100, 161}})  // the last: one M block, B too large to read in place
    for (float beta : {0.f, 1.f}) shapes.push_back({false, false, false, false, m, n, k, beta});
  shapes.push_back({true, false, true, false, 20, 30, 300, 0.f});
  shapes.push_back({false, true, false, true, 20, 30, 300, 1.f});

  std::mt19937 rng(20261130);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  size_t order_sensitive = 0;  // cases where another order would have given other bits
  for (const Shape& s : shapes) {
    const int64_t lda = (s.ta ? s.m : s.k) + 1, ldb = (s.tb ? s.k : s.n) + 2;
    const int64_t ldc = s.n == 1 ? 1 : s.n + 3;  // MLAS's N = 1 case needs a contiguous column of C
    std::vector<float> a(static_cast<size_t>((s.ta ? s.k : s.m) * lda)), b(static_cast<size_t>((s.tb ? s.n : s.k) * ldb));
    std::vector<float> c(static_cast<size_t>(s.m * ldc));
    for (auto& v : a) v = d(rng);
    for (auto& v : b) v = d(rng);
    for (auto& v : c) v = d(rng);
    const std::vector<float> want =
        ModelMlas(s.ta, s.tb, s.m, s.n, s.k, a, lda, b, ldb, s.beta, c, ldc, s.view_ta, s.view_tb);
    for (GemmBackend be : backends) {
      std::vector<float> got = c;
      UseBackend(be);
      Gemm(s.ta, s.tb, s.m, s.n, s.k, 1.f, a.data(), lda, b.data(), ldb, s.beta, got.data(), ldc,
           GemmView{s.view_ta, s.view_tb});
      RestoreBackend();
      INFO("backend " << GemmBackendNameOf(be) << " ta " << s.ta << " tb " << s.tb << " view " << s.view_ta
                      << s.view_tb << " m " << s.m << " n " << s.n << " k " << s.k << " beta " << s.beta);
      CHECK(got == want);
    }
    // The same product in plain sequential FMA order differs somewhere for
    // most shapes: the test tells the orders apart.
    std::vector<float> seq = c;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        float acc = s.beta == 0.f ? 0.f : seq[i * ldc + j];
        for (int64_t p = 0; p < s.k; ++p)
          acc = std::fma(s.ta ? a[p * lda + i] : a[i * lda + p], s.tb ? b[j * ldb + p] : b[p * ldb + j], acc);
        seq[i * ldc + j] = acc;
      }
    order_sensitive += seq != want;
  }
  CHECK(order_sensitive * 2 > shapes.size());
}

TEST_CASE("MLAS's K block follows the N of the product", "[exec][gemm][mlas]") {
  CHECK(MlasGemmKBlock(192, 200, false) == 128);
  CHECK(MlasGemmKBlock(64, 300, false) == 256);
  CHECK(MlasGemmKBlock(20, 1100, false) == 512);
  CHECK(MlasGemmKBlock(16, 2100, false) == 1024);
  CHECK(MlasGemmKBlock(1, 5000, false) == 1024);
  CHECK(MlasGemmKBlock(20, 1100, true) == 128);  // a transposed A keeps its 128-deep panel
  CHECK(MlasGemmKBlock(300, 64, false) >= 64);    // small K: one block
}

}  // namespace
}  // namespace qairt::exec
