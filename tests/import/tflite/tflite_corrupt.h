// Random byte corruption of a TFLite model for the hostile-input tests:
// every corrupted copy must import into a valid graph or fail with a message.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "tflite/tflite_import.h"

namespace qairt::tflite_test {

struct CorruptionOutcome {
  size_t failed = 0;    // imports refused (each with a message)
  size_t imported = 0;  // imports that gave a graph (each valid)
};

// `iterations` copies of `bytes`, each with 1..max_flips bytes replaced.
inline CorruptionOutcome ImportCorrupted(const std::vector<uint8_t>& bytes, uint32_t seed, int max_flips,
                                         int iterations) {
  std::mt19937 rng(seed);
  CorruptionOutcome o;
  for (int iter = 0; iter < iterations; ++iter) {
    auto copy = bytes;
    const int flips = 1 + static_cast<int>(rng() % static_cast<uint32_t>(max_flips));
    for (int k = 0; k < flips; ++k) copy[rng() % copy.size()] = static_cast<uint8_t>(rng());
    ImportReport report;
    auto g = ImportTfliteBytes(copy.data(), copy.size(), {}, &report);
    if (!g.ok()) {
      ++o.failed;
      CHECK_FALSE(g.status().message().empty());
    } else {
      ++o.imported;
      CHECK(g.value().Validate().empty());
    }
  }
  return o;
}

}  // namespace qairt::tflite_test
