// Models and samples the analysis tests share: chains of FullyConnected
// layers fed by strongly correlated inputs, along which the weights'
// rounding errors add up instead of averaging out (what adaptive rounding
// and bias correction remove).
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "calib/sample_eval.h"
#include "ir/graph.h"
#include "../passes/pass_test_util.h"

namespace qairt::testing {

// x[1, 24] through `layers` FullyConnected layers of width 24: weights
// identity * I + noise * N(0, 1/24), biases N(0, 0.25), from a fixed seed.
inline Graph FullyConnectedChain(const char* name, int layers, float identity, float noise) {
  Graph g(name);
  TensorId h = g.AddInput("x", DType::kFloat32, Shape{1, 24}).value();
  std::mt19937 rng(17);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int k = 0; k < layers; ++k) {
    std::vector<float> w(24 * 24), b(24);
    for (int i = 0; i < 24; ++i)
      for (int j = 0; j < 24; ++j) w[i * 24 + j] = (i == j ? identity : 0.f) + noise * nd(rng) / std::sqrt(24.f);
    for (float& v : b) v = 0.5f * nd(rng);
    const std::string n = "fc" + std::to_string(k);
    const TensorId wt = g.AddConstant(n + "_w", DType::kFloat32, Shape{24, 24}, FloatData(w)).value();
    const TensorId bt = g.AddConstant(n + "_b", DType::kFloat32, Shape{24}, FloatData(b)).value();
    h = g.op(g.AddOp("FullyConnected", n, {h, wt, bt}, {n + "_out"}).value()).outputs[0];
  }
  REQUIRE(g.MarkOutput(h).ok());
  return g;
}

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
