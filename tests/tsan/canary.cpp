// A deliberate data race, built only into the ThreadSanitizer test binary.
// ctest `tsan_detects_races` runs it and must see the binary fail: proof that
// the concurrency tests beside it really run instrumented (a build that lost
// -fsanitize=thread would pass them without checking anything).
#include <catch2/catch.hpp>

#include <thread>

namespace {
int g_unsynchronised_counter = 0;  // written by two threads without a lock, on purpose
}

TEST_CASE("TSan canary: two threads write one int without synchronisation", "[.tsan-canary]") {
  auto bump = [] {
    for (int i = 0; i < 1000; ++i) g_unsynchronised_counter = g_unsynchronised_counter + 1;
  };
  std::thread a(bump), b(bump);
  a.join();
  b.join();
  CHECK(g_unsynchronised_counter > 0);
}
