// RealMinMax (branch-free over lanes) against the element-by-element
// definition: min/max of the values that are not mask sentinels, NaN
// ignored and counted, sentinel flags by sign; every tail length.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "calib/sentinel_range.h"

using namespace qairt::calib;

TEST_CASE("RealMinMax equals the element-by-element scan", "[calib][sentinel]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::nanf(""), -inf, inf, -3.4e38f, 2e30f, -0.0f, 0.0f, 1e29f, -1e29f};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-3.f, 3.f);
  for (size_t n : {0u, 1u, 15u, 16u, 17u, 33u, 100u, 1000u}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> x(n);
      for (float& v : x) v = d(rng);
      const size_t specials_in = trial % 4 == 0 ? 0 : 1 + rng() % 4;
      for (size_t k = 0; k < specials_in && n; ++k) x[rng() % n] = specials[rng() % std::size(specials)];
      TensorStats want, got;
      want.min = got.min = inf;
      want.max = got.max = -inf;
      size_t want_nans = 0;
      for (float v : x) {
        if (std::isnan(v)) {
          ++want_nans;
        } else if (!(std::fabs(v) < kMaskSentinel)) {
          (v < 0 ? want.low_sentinel : want.high_sentinel) = true;
        } else {
          want.min = std::min(want.min, v);
          want.max = std::max(want.max, v);
        }
      }
      INFO("n " << n << " trial " << trial);
      CHECK(RealMinMax(x.data(), n, &got) == want_nans);
      CHECK(got.min == want.min);  // -0 and +0 compare equal: both encode the same range
      CHECK(got.max == want.max);
      CHECK(got.low_sentinel == want.low_sentinel);
      CHECK(got.high_sentinel == want.high_sentinel);
    }
  }
}
