// The halves mixed precision cross-validates with (calib::SplitInHalves):
// every sample in one half, each consecutive pair split, and no aliasing
// with a list whose kinds alternate.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "calib/sample_eval.h"

namespace qairt::calib {
namespace {

TEST_CASE("samples split in halves: a pair each, not by parity", "[calib][split]") {
  for (size_t n : {0u, 1u, 2u, 3u, 7u, 24u, 101u}) {
    INFO(n << " samples");
    const Halves h = SplitInHalves(n);
    CHECK(h.fit.size() == (n + 1) / 2);
    CHECK(h.held_out.size() == n / 2);
    CHECK(std::is_sorted(h.fit.begin(), h.fit.end()));
    CHECK(std::is_sorted(h.held_out.begin(), h.held_out.end()));
    std::vector<size_t> all = h.fit;
    all.insert(all.end(), h.held_out.begin(), h.held_out.end());
    std::sort(all.begin(), all.end());
    for (size_t i = 0; i < all.size(); ++i) CHECK(all[i] == i);  // each sample once
    for (size_t k = 0; k < h.held_out.size(); ++k) CHECK(h.fit[k] / 2 == h.held_out[k] / 2);  // pairs split
    const Halves again = SplitInHalves(n);
    CHECK(again.fit == h.fit);  // deterministic
  }
  // Kinds alternating by parity (upright, rotated, upright, ...): the even
  // half would hold one kind only; each half holds both.
  const Halves h = SplitInHalves(24);
  const auto evens = std::count_if(h.fit.begin(), h.fit.end(), [](size_t i) { return i % 2 == 0; });
  CHECK(evens >= 3);
  CHECK(evens <= 9);
}

TEST_CASE("a subset of samples loads the samples at its indices", "[calib][split]") {
  SampleSource s;
  s.count = 10;
  s.load = [](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    return std::vector<std::vector<uint8_t>>{{static_cast<uint8_t>(i)}};
  };
  const SampleSource sub = Subset(s, {7, 2, 9});
  REQUIRE(sub.count == 3);
  CHECK(sub.load(0).value()[0][0] == 7);
  CHECK(sub.load(1).value()[0][0] == 2);
  CHECK(sub.load(2).value()[0][0] == 9);
}

}  // namespace
}  // namespace qairt::calib
