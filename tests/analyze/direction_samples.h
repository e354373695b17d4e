// Samples that are one fixed random direction scaled by a uniform factor in
// [-2, 2], plus a little noise: strongly correlated inputs, along which
// weights' rounding errors add up instead of averaging out (what adaptive
// rounding and bias correction remove). Shared by the analysis tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "calib/sample_eval.h"

namespace qairt::testing {

inline calib::SampleSource DirectionSamples(size_t count, uint32_t seed, size_t width = 24) {
  auto data = std::make_shared<std::vector<std::vector<float>>>();
  std::mt19937 rng(seed), fixed(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> dir(width);
  for (float& v : dir) v = nd(fixed);
  for (size_t i = 0; i < count; ++i) {
    const float a = std::uniform_real_distribution<float>(-2.f, 2.f)(rng);
    std::vector<float> x(width);
    for (size_t j = 0; j < x.size(); ++j) x[j] = a * dir[j] + 0.05f * nd(rng);
    data->push_back(std::move(x));
  }
  calib::SampleSource s;
  s.count = count;
  s.load = [data](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    const auto& x = (*data)[i];
    std::vector<uint8_t> bytes(x.size() * sizeof(float));
    std::memcpy(bytes.data(), x.data(), bytes.size());
    return std::vector<std::vector<uint8_t>>{std::move(bytes)};
  };
  return s;
}

}  // namespace qairt::testing
