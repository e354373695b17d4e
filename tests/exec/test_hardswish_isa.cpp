// HardSwish's vectorized kernel against the scalar definition, bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "exec/executor.h"

using namespace qairt;

TEST_CASE("HardSwish: the vectorized kernel gives the scalar definition's bits", "[exec]") {
  std::vector<float> x = {0.0f, -0.0f, 3.0f, -3.0f, 2.9999998f, -2.9999998f, 1e30f, -1e30f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()};
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 4.f);
  while (x.size() < 1037) x.push_back(nd(rng));  // not a multiple of any vector width
  const int64_t n = static_cast<int64_t>(x.size());
  Graph g;
  const TensorId in = g.AddInput("x", DType::kFloat32, Shape{n}).value();
  const OpId op = g.AddOp("HardSwish", "hs", {in}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
  auto ex = exec::Executor::Create(g);
  REQUIRE(ex.ok());
  std::vector<uint8_t> bytes(x.size() * 4);
  std::memcpy(bytes.data(), x.data(), bytes.size());
  auto out = ex.value()->Run(std::vector<std::vector<uint8_t>>{bytes});
  REQUIRE(out.ok());
  const std::vector<uint8_t>& y = out.value()[0].bytes;
  REQUIRE(y.size() == bytes.size());
  size_t differ = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const float v = x[k];
    const float want = v * std::min(std::max(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);  // ONNX's definition
    uint32_t a, b;
    std::memcpy(&a, &want, 4);
    std::memcpy(&b, y.data() + 4 * k, 4);
    if (std::isnan(want)) {
      float got;
      std::memcpy(&got, &b, 4);
      differ += !std::isnan(got);
    } else {
      differ += a != b;
    }
  }
  CHECK(differ == 0);
}
