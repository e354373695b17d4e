// Scratch buffers kept between uses, but not past kScratchKeepBytes.
#include <catch2/catch.hpp>

#include "support/thread_scratch.h"

using namespace qairt;

TEST_CASE("a scratch release keeps small buffers and frees those past the bound", "[support]") {
  std::vector<float> small, large;
  std::vector<int32_t> ints;
  {
    const ScratchRelease release(small, large, ints);
    small.resize(1000);
    large.resize(kScratchKeepBytes / sizeof(float) + 1);
    ints.resize(kScratchKeepBytes / sizeof(int32_t));  // exactly the bound: kept
  }
  CHECK(small.size() == 1000);
  CHECK(ints.size() == kScratchKeepBytes / sizeof(int32_t));
  CHECK(large.empty());
  CHECK(large.capacity() == 0);
}
