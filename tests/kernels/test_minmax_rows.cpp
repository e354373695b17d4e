// MinMaxGrid over blocks down the rows (one scale per element of a row,
// rows sharing them: an LLM weight in its source layout): the row groups'
// ranges equal a per-element reference, and their NaN/Inf count equals
// CountNonFinite, for any chunking and thread count.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/ops.h"
#include "kernels/threadpool.h"

namespace qairt::kernels {
namespace {

TEST_CASE("MinMaxGrid over row blocks: ranges and NaN/Inf count for any split", "[kernels][quant][policy][threads]") {
  std::mt19937 rng(211);
  ThreadPool pool(2);
  // [rows, cols] with blocks of `bs` rows: rows that share their scales, a
  // last partial group, a row of more than one 4 KiB panel, odd widths.
  struct Case {
    int64_t rows, cols, bs;
  };
  for (const Case& c : {Case{64, 256, 8}, Case{40, 1500, 4}, Case{24, 17, 24}, Case{9, 3, 1}, Case{130, 64, 64}}) {
    const size_t n = static_cast<size_t>(c.rows * c.cols);
    for (const bool specials : {false, true}) {
      std::vector<float> x(n);
      for (auto& v : x) v = std::normal_distribution<float>(0.0f, 1.0f)(rng);
      if (specials) {
        const float special[] = {NAN, INFINITY, -INFINITY, -NAN};
        for (size_t i = 0; i < 1 + rng() % 9; ++i) x[rng() % n] = special[rng() % 4];
      }
      const size_t expected = CountNonFinite(x.data(), n);
      CHECK((expected > 0) == specials);
      const Grid grid = Grid::PerBlock({c.rows, c.cols}, {c.bs, 1});
      const size_t ns = grid.NumScales();
      REQUIRE(ns == static_cast<size_t>((c.rows + c.bs - 1) / c.bs * c.cols));
      std::vector<float> want_min(ns, INFINITY), want_max(ns, -INFINITY);
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t col = 0; col < c.cols; ++col) {
          const float v = x[static_cast<size_t>(r * c.cols + col)];
          if (std::isnan(v)) continue;
          const auto s = static_cast<size_t>((r / c.bs) * c.cols + col);
          want_min[s] = std::min(want_min[s], v);
          want_max[s] = std::max(want_max[s], v);
        }
      for (const size_t chunk : {size_t{64}, size_t{1000}, size_t{1} << 16}) {
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          INFO("rows " << c.rows << " cols " << c.cols << " bs " << c.bs << " specials " << specials << " chunk "
                       << chunk << " threads " << PoolSize(p));
          ExecOptions o;
          o.chunk = chunk;
          o.pool = p;
          size_t count = 12345;
          std::vector<float> mins(ns), maxs(ns);
          MinMaxGrid(x.data(), grid, mins.data(), maxs.data(), o, &count);
          CHECK(count == expected);
          CHECK(mins == want_min);
          CHECK(maxs == want_max);
          // Without a count: the same ranges.
          std::vector<float> mins2(ns), maxs2(ns);
          MinMaxGrid(x.data(), grid, mins2.data(), maxs2.data(), o);
          CHECK(std::memcmp(mins2.data(), mins.data(), ns * sizeof(float)) == 0);
          CHECK(std::memcmp(maxs2.data(), maxs.data(), ns * sizeof(float)) == 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace qairt::kernels
