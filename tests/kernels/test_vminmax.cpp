// The element-wise min/max kernel over several rows: every ISA bit-exact
// with the scalar reference, rows `ld` apart (the gap between them never
// read), and its NaN/Inf check exactly the reference's.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "kernels/kernels.h"
#include "kernel_test_util.h"

namespace qairt::kernels::test {
namespace {

struct VMinMaxEntry {
  Isa isa;
  const char* name;
  void* fn;  // a VMinMaxFn
};

const std::vector<VMinMaxEntry>& VMinMaxEntries() {
  static const std::vector<VMinMaxEntry> v = [] {
    std::vector<VMinMaxEntry> all;
#define QAIRT_KERNEL(isa, name, op) \
  if (std::string(#op) == "vminmax") all.push_back({QAIRT_TEST_ISA_##isa, #name, reinterpret_cast<void*>(&name)});
#include "kernels/stats/kernels.inc"
#undef QAIRT_KERNEL
    return all;
  }();
  return v;
}

TEST_CASE("vminmax over rows matches the reference, NaN/Inf check included", "[kernels][stats]") {
  std::mt19937 rng(23);
  REQUIRE(VMinMaxEntries().size() == 4);
  for (const VMinMaxEntry& k : VMinMaxEntries()) {
    if (!CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : TestSizes()) {
      for (const size_t rows : {size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
        // Finite values only (the check returns 0), NaN, Inf and signed
        // zeros sprinkled (1), and one special value, the last row's last
        // lane (1).
        for (const int specials : {0, 1, 2}) {
          const size_t ld = n + (rows > 1 ? 5 : 0);
          std::vector<float> x(rows * ld);
          for (auto& v : x) {
            v = RandNormal(rng, 3.0f);
            if (specials == 1) {
              const unsigned pick = rng() % 10;
              if (pick == 0) v = NAN;
              if (pick == 1) v = (rng() & 1) ? INFINITY : -INFINITY;
              if (pick == 2) v = (rng() & 1) ? 0.0f : -0.0f;
            }
          }
          if (specials == 2 && n > 0) x[(rows - 1) * ld + n - 1] = (rng() & 1) ? NAN : -INFINITY;
          for (size_t r = 0; r + 1 < rows; ++r)  // the gaps: never read
            for (size_t i = n; i < ld; ++i) x[r * ld + i] = NAN;
          std::vector<float> gmin(n), gmax(n);
          for (size_t i = 0; i < n; ++i) {
            gmin[i] = RandNormal(rng, 1.0f);
            gmax[i] = gmin[i] + 1.0f;
          }
          std::vector<float> wmin = gmin, wmax = gmax;
          const size_t got = reinterpret_cast<VMinMaxFn>(k.fn)(n, rows, ld, x.data(), gmin.data(), gmax.data());
          const size_t want = ref::VMinMax(n, rows, ld, x.data(), wmin.data(), wmax.data());
          INFO("n=" << n << " rows=" << rows << " ld=" << ld << " specials=" << specials);
          REQUIRE(got == want);
          if (specials == 0) REQUIRE(got == 0);
          if (specials == 2 && n > 0) REQUIRE(got == 1);
          REQUIRE(Bytes(gmin.data(), 4 * n) == Bytes(wmin.data(), 4 * n));
          REQUIRE(Bytes(gmax.data(), 4 * n) == Bytes(wmax.data(), 4 * n));
        }
      }
    }
  }
}

}  // namespace
}  // namespace qairt::kernels::test
