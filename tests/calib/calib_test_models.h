// Small graphs shared by the calibration tests.
#pragma once

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/static_data.h"

namespace qairt::testing {

// n normal floats from a fixed seed.
inline std::vector<float> NormalFloats(size_t n, float mean, float sd, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(mean, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline std::vector<uint8_t> FloatBytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline std::shared_ptr<const StaticData> Floats(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return StaticData::Adopt(std::move(b));
}

// x[1,16] -> FullyConnected(w[8,16], b[8]) -> h -> Relu -> y; `scale` sets
// the weights' size (another scale is another model).
inline Graph SmallMlp(float scale = 0.5f) {
  Graph g("mlp");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 16}).value();
  std::vector<float> w(128), b(8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(static_cast<float>(i)) * scale;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * static_cast<float>(i) - 0.3f;
  const TensorId wt = g.AddConstant("w", DType::kFloat32, Shape{8, 16}, Floats(w)).value();
  const TensorId bt = g.AddConstant("b", DType::kFloat32, Shape{8}, Floats(b)).value();
  const OpId fc = g.AddOp("FullyConnected", "fc", {x, wt, bt}, {"h"}).value();
  const OpId relu = g.AddOp("Relu", "relu", {g.op(fc).outputs[0]}, {"y"}).value();
  (void)g.MarkOutput(g.op(relu).outputs[0]);
  return g;
}

// A processing hook (calib's Realize) putting weight `name` on a grid
// `factor` times coarser, as target processing may widen a scale.
inline std::function<Result<Graph>(const Graph&)> CoarserWeight(std::string name, float factor) {
  return [name, factor](const Graph& g) -> Result<Graph> {
    Graph out = g;
    const TensorId w = *out.FindTensor(name);
    Encoding e = *out.tensor(w).encoding;
    std::vector<float> scales = e.scales.to_vector();
    for (float& s : scales) s *= factor;
    e.scales = scales;
    QAIRT_RETURN_IF_ERROR(out.SetEncoding(w, e));
    return out;
  };
}

}  // namespace qairt::testing
