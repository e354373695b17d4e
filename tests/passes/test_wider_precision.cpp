// Wider precision inside target processing. A super group runs in one
// precision: when mixed precision gives its input more bits than its
// output, the whole group runs at the wider width and a Convert after it
// restores the output's encoding; the intermediate tensor stays inside the
// fused kernel (never quantized to the output's range). A 16-bit asymmetric
// normalization scale (calibration's wide norm scales) runs on the a16w16
// kernel through the sign flip.
#include <catch2/catch.hpp>

#include <cmath>

#include "calib/sample_eval.h"
#include "exec/executor.h"
#include "pass_test_util.h"

using namespace qairt;
using namespace qairt::testing;

namespace {

// x -> Conv2d -> c -> HardSwish -> y; the convolution's outputs reach -4, far
// below HardSwish's floor of -0.375.
Graph ConvHardSwish(bool encodings, DType input_dtype) {
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 8, 4, 4}).value();
  const TensorId w = g.AddConstant("w", DType::kFloat32, Shape{8, 8, 1, 1}, FloatData(Ramp(64, -1.f, 1.f))).value();
  const TensorId b = g.AddConstant("b", DType::kFloat32, Shape{8}, FloatData(Ramp(8, -0.5f, 0.5f))).value();
  const OpId conv = g.AddOp("Conv2d", "conv", {x, w, b}, {"c"}).value();
  const OpId act = g.AddOp("HardSwish", "hswish", {g.op(conv).outputs[0]}, {"y"}).value();
  const TensorId y = g.op(act).outputs[0];
  REQUIRE(g.MarkOutput(y).ok());
  if (encodings) {
    const bool wide = input_dtype == DType::kUFixed16;
    REQUIRE(g.SetEncoding(x, PerTensor(input_dtype, wide ? 2.f / 65535 : 2.f / 255, wide ? -32768 : -128)).ok());
    REQUIRE(g.SetEncoding(w, PerChannel(DType::kSFixed8, std::vector<float>(8, 1.f / 127))).ok());
    const float scale = 4.375f / 255;
    REQUIRE(g.SetEncoding(y, PerTensor(DType::kUFixed8, scale, static_cast<int32_t>(std::lround(-0.375f / scale)))).ok());
  }
  return g;
}

std::vector<float> Run(const Graph& g, const std::vector<float>& input) {
  auto ex = exec::Executor::Create(g);
  REQUIRE(ex.ok());
  std::vector<uint8_t> bytes(input.size() * sizeof(float));
  std::memcpy(bytes.data(), input.data(), bytes.size());
  auto out = ex.value()->Run(std::vector<std::vector<uint8_t>>{bytes});
  REQUIRE(out.ok());
  const auto& h = out.value().at(0);
  REQUIRE(h.dtype == DType::kFloat32);
  std::vector<float> y(h.bytes.size() / 4);
  std::memcpy(y.data(), h.bytes.data(), h.bytes.size());
  return y;
}

}  // namespace

TEST_CASE("a super group entered wider than its output runs at the wider width, converted after", "[passes]") {
  const std::vector<float> input = Ramp(128, -1.f, 1.f);
  const std::vector<float> reference = Run(ConvHardSwish(false, DType::kFloat32), input);
  REQUIRE(*std::min_element(reference.begin(), reference.end()) < -0.3f);

  for (DType in : {DType::kUFixed8, DType::kUFixed16}) {
    const bool wide = in == DType::kUFixed16;
    INFO((wide ? "16-bit input" : "8-bit input"));
    Graph g = ConvHardSwish(true, in);
    auto r = RunProcess(&g, Builtin("htp_v73"));
    for (const auto& e : r.errors) UNSCOPED_INFO(e);
    CHECK(r.errors.empty());
    CHECK(Contains(r.log, "[SUPER GROUP] Conv2d + HardSwish : [ conv, hswish ]"));
    CHECK(Contains(r.log, "(the group runs at 16 bits)") == wide);
    // Both ops in the group, at one width.
    for (const auto& a : r.annotations) {
      if (a.op != "conv" && a.op != "hswish") continue;
      INFO(a.op << " " << a.kernel);
      CHECK(a.super_group == 0);
      CHECK(Contains(a.kernel, wide ? "a16" : "a8"));
    }
    // The group's output at 16 bits over the 8-bit range, and back to 8 bits after the group.
    const OpId act = *g.FindOp("hswish");
    const Tensor& y = g.tensor(g.op(act).outputs[0]);
    REQUIRE(y.encoding);
    CHECK(y.encoding->effective_bitwidth() == (wide ? 16u : 8u));
    CHECK(CountOps(g, "Convert") == (wide ? 1u : 0u));
    // The convolution's negative outputs survive the fused intermediate: the
    // result is as close to float as the input and output grids allow (cut at
    // -0.375 before the activation, the 16-bit input's result was 23 dB, no better than an 8-bit input's).
    const std::vector<float> got = Run(g, input);
    const double sqnr = calib::Agree(reference, got).sqnr_db;
    INFO("SQNR " << sqnr);
    CHECK(sqnr > (wide ? 35 : 20));
  }
}

TEST_CASE("a 16-bit asymmetric LayerNorm scale runs on HTP v73's a16w16 kernel", "[passes]") {
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 16}).value();
  const TensorId gamma = g.AddConstant("gamma", DType::kFloat32, Shape{16}, FloatData(Ramp(16, 0.5f, 1.5f))).value();
  const TensorId beta = g.AddConstant("beta", DType::kFloat32, Shape{16}, FloatData(Ramp(16, -0.2f, 0.2f))).value();
  const OpId ln = g.AddOp("LayerNorm", "ln", {x, gamma, beta}, {"y"}, {{"axes", std::vector<int64_t>{1}}}).value();
  REQUIRE(g.MarkOutput(g.op(ln).outputs[0]).ok());
  const std::vector<float> input = Ramp(16, -3.f, 5.f);
  const std::vector<float> reference = Run(g, input);
  REQUIRE(g.SetEncoding(x, PerTensor(DType::kUFixed16, 8.f / 65535, -24576)).ok());
  REQUIRE(g.SetEncoding(g.op(ln).outputs[0], PerTensor(DType::kUFixed16, 8.f / 65535, -32768)).ok());
  // gamma over [0, 1.5] (the grid holds zero), 16-bit asymmetric as calibration makes it.
  REQUIRE(g.SetEncoding(gamma, PerTensor(DType::kUFixed16, 1.5f / 65535, 0)).ok());
  auto r = RunProcess(&g, Builtin("htp_v73"));
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  CHECK(r.errors.empty());
  bool found = false;
  for (const auto& a : r.annotations) {
    if (a.op != "ln") continue;
    found = true;
    CHECK(a.kernel == "a16w16");
  }
  CHECK(found);
  const double sqnr = calib::Agree(reference, Run(g, input)).sqnr_db;
  INFO("SQNR " << sqnr);
  CHECK(sqnr > 70);
}
