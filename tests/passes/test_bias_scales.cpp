// raise-weight-scales-for-bias: a channel of near-zero weights with a large
// bias at 16-bit activations. Its int32 bias scale (input scale x weight
// scale) cannot hold the bias: by default the weight scale is raised so the
// bias keeps its value; with the option off the bias saturates, as warned.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "passes/pass_test_util.h"

using namespace qairt;
using namespace qairt::testing;

namespace {

constexpr float kInScale = 1e-4f;    // uint16 input: [0, 6.55]
constexpr float kTinyWeight = 1e-6f;  // channel 0's weights
constexpr float kBigBias = 5.0f;      // channel 0's bias: needs 5 / (1e-4 * 7.9e-9) = 6.3e12 > 2^31

// x[1,4,2,2] (uint16) -> Conv2d(w[4,4,1,1] per-channel int8 as calibrated, b[4]) -> y
struct TinyChannelConv {
  Graph g;
  TensorId x, w, b, y;
  OpId conv;
  std::vector<float> scales;
  explicit TinyChannelConv(bool weights_given_by_user) {
    x = g.AddInput("x", DType::kFloat32, Shape{1, 4, 2, 2}).value();
    std::vector<float> wv(16, 0.5f);
    for (size_t i = 0; i < 4; ++i) wv[i] = kTinyWeight * (i % 2 ? -1.f : 1.f);  // output channel 0
    w = g.AddConstant("w", DType::kFloat32, Shape{4, 4, 1, 1}, FloatData(wv)).value();
    b = g.AddConstant("b", DType::kFloat32, Shape{4}, FloatData({kBigBias, 0.1f, -0.2f, 0.3f})).value();
    conv = g.AddOp("Conv2d", "conv", {x, w, b}, {"y"}).value();
    y = g.op(conv).outputs[0];
    REQUIRE(g.MarkOutput(y).ok());
    REQUIRE(g.SetEncoding(x, PerTensor(DType::kUFixed16, kInScale, 0, false)).ok());
    scales = {kTinyWeight / 127, 0.5f / 127, 0.5f / 127, 0.5f / 127};
    Encoding we = PerChannel(DType::kSFixed8, scales);
    we.overridden = weights_given_by_user;  // calibration's encodings are not overrides
    REQUIRE(g.SetEncoding(w, we).ok());
    REQUIRE(g.SetEncoding(y, PerTensor(DType::kUFixed16, 1e-3f, 0, false)).ok());
  }
};

int32_t BiasValue(const Graph& g, TensorId bias, size_t i) {
  int32_t q;
  std::memcpy(&q, g.tensor(bias).data->data() + i * sizeof q, sizeof q);
  return q;
}

}  // namespace

TEST_CASE("a weight scale is raised just enough for its int32 bias to fit", "[passes][bias]") {
  TinyChannelConv m(false);
  const auto r = RunProcess(&m.g, Builtin("htp_v73"), pass::LogLevel::kInfo);
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  REQUIRE(r.errors.empty());
  const Encoding& we = *m.g.tensor(m.w).encoding;
  REQUIRE(we.scales.size() == 4);
  // Channel 0 raised to where the bias fits, and no further (within a few ulps).
  const double need = kBigBias / (static_cast<double>(kInScale) * 2147483647.0);
  CHECK(we.scales[0] > m.scales[0]);
  CHECK(static_cast<double>(we.scales[0]) >= need * (1 - 1e-6));
  CHECK(static_cast<double>(we.scales[0]) <= need * (1 + 1e-5));
  for (size_t c = 1; c < 4; ++c) CHECK(we.scales[c] == m.scales[c]);  // the others untouched
  // The bias keeps its value: quantized in range and dequantized back to 5.0.
  const TensorId bias = m.g.op(m.conv).inputs[2];
  const Encoding& be = *m.g.tensor(bias).encoding;
  CHECK(be.scales[0] == kInScale * we.scales[0]);
  const int32_t q0 = BiasValue(m.g, bias, 0);
  CHECK(q0 < INT32_MAX);
  CHECK(std::fabs(q0 * static_cast<double>(be.scales[0]) - kBigBias) < 1e-5 * kBigBias);
  CHECK_FALSE(HasWarning(r, "bias-saturation"));
  // Recorded: the INFO row of the weight, the stats line.
  CHECK(Contains(CsvRow(r.log, "w"), "BIAS_AWARE_SCALE"));
  CHECK(Contains(r.stats, "[BIAS-AWARE W. SCALES] 1 channels of 1 weights raised"));
}

TEST_CASE("with the option off the bias saturates, as the warning says", "[passes][bias]") {
  TinyChannelConv m(false);
  pass::Options o;
  o.bias_aware_weight_scales = false;
  const auto r = RunProcess(&m.g, Builtin("htp_v73"), pass::LogLevel::kInfo, o);
  REQUIRE(r.errors.empty());
  CHECK(m.g.tensor(m.w).encoding->scales[0] == m.scales[0]);
  CHECK(BiasValue(m.g, m.g.op(m.conv).inputs[2], 0) == INT32_MAX);
  CHECK(HasWarning(r, "bias-saturation"));
  CHECK_FALSE(Contains(r.stats, "[BIAS-AWARE W. SCALES]"));
}

TEST_CASE("a weight encoding the user gave is kept (and the saturation warned)", "[passes][bias]") {
  TinyChannelConv m(true);
  const auto r = RunProcess(&m.g, Builtin("htp_v73"), pass::LogLevel::kInfo);
  REQUIRE(r.errors.empty());
  CHECK(m.g.tensor(m.w).encoding->scales[0] == m.scales[0]);
  CHECK(HasWarning(r, "bias-saturation"));
}
