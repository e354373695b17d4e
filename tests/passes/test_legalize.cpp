// Legalization for a target: Conv1d (and its depthwise and transposed forms)
// on a target without 1-D convolution kernels runs as the 2-D op over
// [N, C, 1, L]; the weight keeps its name and encoding; the graph computes the
// same values; targets with the 1-D kernel keep the op.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "exec/executor.h"
#include "ir/graph.h"
#include "passes/legalize.h"

namespace qairt {
namespace {

std::shared_ptr<const StaticData> Floats(const std::vector<float>& v) {
  return StaticData::Copy(v.data(), v.size() * sizeof(float));
}

std::vector<float> Ramp(size_t n, float scale, float shift) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale) + shift;
  return v;
}

// x[1,4,10] -> Conv1d(6 out, k3, pad 1, stride 2) -> Relu -> DepthwiseConv1d(k5, dilation 2, pad 4) -> y
//           -> TransposeConv1d(4 -> 3, k4, stride 2) -> t
Graph Conv1dGraph() {
  Graph g("conv1d");
  auto x = g.AddInput("x", DType::kFloat32, Shape{1, 4, 10}).value();
  auto w = g.AddConstant("conv.weight", DType::kFloat32, Shape{6, 4, 3}, Floats(Ramp(72, 0.37f, 0.0f))).value();
  auto b = g.AddConstant("conv.bias", DType::kFloat32, Shape{6}, Floats(Ramp(6, 1.1f, 0.1f))).value();
  auto c = g.AddOp("Conv1d", "conv", {x, w, b}, {"c"},
                   {{"pads", std::vector<int64_t>{1, 1}}, {"strides", std::vector<int64_t>{2}}});
  REQUIRE(c.ok());
  auto r = g.AddOp("Relu", "relu", {g.op(c.value()).outputs[0]}, {"r"});
  auto dw = g.AddConstant("dw.weight", DType::kFloat32, Shape{6, 1, 5}, Floats(Ramp(30, 0.71f, 0.0f))).value();
  auto d = g.AddOp("Conv1d", "dwconv", {g.op(r.value()).outputs[0], dw}, {"y"},
                   {{"pads", std::vector<int64_t>{4, 4}}, {"dilations", std::vector<int64_t>{2}},
                    {"group", int64_t{6}}});
  REQUIRE(d.ok());
  REQUIRE(g.MarkOutput(g.op(d.value()).outputs[0]).ok());
  auto tw = g.AddConstant("up.weight", DType::kFloat32, Shape{4, 3, 4}, Floats(Ramp(48, 0.53f, 0.0f))).value();
  auto t = g.AddOp("TransposeConv1d", "up", {x, tw}, {"t"}, {{"strides", std::vector<int64_t>{2}}});
  REQUIRE(t.ok());
  REQUIRE(g.MarkOutput(g.op(t.value()).outputs[0]).ok());
  REQUIRE(g.Validate().empty());
  return g;
}

std::vector<std::vector<float>> Run(const Graph& g, const std::vector<float>& x) {
  auto ex = exec::Executor::Create(g);
  INFO((ex.ok() ? "" : ex.status().message()));
  REQUIRE(ex.ok());
  auto out = ex.value()->Run({x.data()}, {x.size() * 4});
  INFO((out.ok() ? "" : out.status().message()));
  REQUIRE(out.ok());
  std::vector<std::vector<float>> r;
  for (const auto& h : out.value()) {
    std::vector<float> v(h.bytes.size() / 4);
    std::memcpy(v.data(), h.bytes.data(), h.bytes.size());
    r.push_back(std::move(v));
  }
  return r;
}

size_t CountType(const Graph& g, const std::string& type) {
  size_t n = 0;
  for (OpId id = 0; id < g.op_count(); ++id) n += g.op(id).type == type;
  return n;
}

TEST_CASE("Conv1d runs as Conv2d on a target without 1-D convolution kernels", "[passes][legalize]") {
  auto htp = target::LoadBuiltinTarget("htp_v73");
  REQUIRE(htp.ok());
  Graph g = Conv1dGraph();
  Encoding e;
  e.dtype = DType::kSFixed8;
  e.kind = EncodingKind::kPerChannel;
  e.axis = 0;
  e.symmetry = Symmetry::kSymmetric;
  e.scales.assign(6, 0.01f);
  e.offsets.assign(6, 0);
  REQUIRE(g.SetEncoding(g.FindTensor("conv.weight").value(), e).ok());
  const std::vector<float> x = Ramp(40, 0.29f, 0.2f);
  const auto before = Run(g, x);

  pass::LegalizeReport report;
  REQUIRE(pass::LegalizeForTarget(&g, *htp.value(), &report).ok());
  CHECK(report.changed == 3);
  CHECK(report.by_type["Conv1d -> Conv2d"] == 1);
  CHECK(report.by_type["Conv1d -> DepthWiseConv2d"] == 1);
  CHECK(report.by_type["TransposeConv1d -> TransposeConv2d"] == 1);
  CHECK(CountType(g, "Conv1d") == 0);
  CHECK(CountType(g, "TransposeConv1d") == 0);
  CHECK(CountType(g, "ExpandDims") == 3);
  CHECK(CountType(g, "Squeeze") == 3);
  CHECK(g.Validate().empty());
  // The weight keeps its name, bytes and encoding, viewed as [O, I, 1, K].
  const Tensor& w = g.tensor(g.FindTensor("conv.weight").value());
  CHECK(w.shape == Shape({6, 4, 1, 3}));
  REQUIRE(w.encoding.has_value());
  CHECK(*w.encoding == e);
  // Outputs keep their names and shapes, and the values.
  CHECK(g.tensor(g.outputs()[0]).name == "y");
  CHECK(g.tensor(g.outputs()[0]).shape == Shape({1, 6, 5}));
  CHECK(g.tensor(g.outputs()[1]).name == "t");
  const auto after = Run(g, x);
  REQUIRE(after.size() == before.size());
  for (size_t o = 0; o < after.size(); ++o) {
    REQUIRE(after[o].size() == before[o].size());
    for (size_t i = 0; i < after[o].size(); ++i) CHECK(after[o][i] == Approx(before[o][i]).margin(1e-5));
  }
  // Nothing left to do the second time.
  REQUIRE(pass::LegalizeForTarget(&g, *htp.value(), &report).ok());
  CHECK(report.changed == 0);
  CHECK(pass::LegalizeSummary(report, "htp_v73").empty());
}

TEST_CASE("a target with the 1-D kernel keeps Conv1d", "[passes][legalize]") {
  auto cpu = target::LoadBuiltinTarget("cpu");
  REQUIRE(cpu.ok());
  Graph g = Conv1dGraph();
  pass::LegalizeReport report;
  REQUIRE(pass::LegalizeForTarget(&g, *cpu.value(), &report).ok());
  CHECK(report.changed == 0);
  CHECK(CountType(g, "Conv1d") == 2);
}

}  // namespace
}  // namespace qairt


namespace qairt {
namespace {

TEST_CASE("ReduceSumSquare runs as a square and a ReduceSum where the target lacks it", "[passes][legalize]") {
  auto htp = target::LoadBuiltinTarget("htp_v73");
  REQUIRE(htp.ok());
  Graph g("l2");
  auto x = g.AddInput("x", DType::kFloat32, Shape{2, 5}).value();
  auto r = g.AddOp("ReduceSumSquare", "sumsq", {x}, {"y"},
                   {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
  REQUIRE(r.ok());
  REQUIRE(g.MarkOutput(g.op(r.value()).outputs[0]).ok());
  const std::vector<float> xs = Ramp(10, 0.77f, -0.3f);
  const auto before = Run(g, xs);
  pass::LegalizeReport report;
  REQUIRE(pass::LegalizeForTarget(&g, *htp.value(), &report).ok());
  CHECK(report.changed == 1);
  CHECK(CountType(g, "ReduceSumSquare") == 0);
  CHECK(CountType(g, "ElementWiseMultiply") == 1);
  CHECK(CountType(g, "ReduceSum") == 1);
  CHECK(g.tensor(g.outputs()[0]).name == "y");
  const auto after = Run(g, xs);
  REQUIRE(after[0].size() == 2);
  for (size_t i = 0; i < 2; ++i) CHECK(after[0][i] == Approx(before[0][i]));
}

}  // namespace
}  // namespace qairt

namespace qairt {
namespace {

// X[seq=3, batch=2, I=4] through an Lstm or Gru of hidden size 5.
Graph RecurrentGraph(const std::string& type, const std::string& direction, bool linear_before_reset, bool with_state) {
  const int64_t dirs = direction == "bidirectional" ? 2 : 1, G = type == "Lstm" ? 4 : 3, H = 5, I = 4;
  Graph g(type);
  auto x = g.AddInput("x", DType::kFloat32, Shape{3, 2, I}).value();
  auto w = g.AddConstant("W", DType::kFloat32, Shape{dirs, G * H, I}, Floats(Ramp(dirs * G * H * I, 0.31f, 0.0f))).value();
  auto r = g.AddConstant("R", DType::kFloat32, Shape{dirs, G * H, H}, Floats(Ramp(dirs * G * H * H, 0.17f, 0.0f))).value();
  auto b = g.AddConstant("B", DType::kFloat32, Shape{dirs, 2 * G * H}, Floats(Ramp(dirs * 2 * G * H, 0.53f, 0.1f))).value();
  std::vector<TensorId> in = {x, w, r, b, kInvalidId};
  if (with_state) {
    in.push_back(g.AddConstant("h0", DType::kFloat32, Shape{dirs, 2, H}, Floats(Ramp(dirs * 2 * H, 0.9f, 0.0f))).value());
    if (type == "Lstm")
      in.push_back(g.AddConstant("c0", DType::kFloat32, Shape{dirs, 2, H}, Floats(Ramp(dirs * 2 * H, 1.3f, 0.0f))).value());
  }
  AttributeMap attrs = {{"hidden_size", H}, {"direction", direction}};
  if (type == "Gru") attrs["linear_before_reset"] = int64_t{linear_before_reset ? 1 : 0};
  std::vector<std::string> outs = {"y", "y_h"};
  if (type == "Lstm") outs.push_back("y_c");
  auto op = g.AddOp(type, "rnn", in, outs, attrs);
  REQUIRE(op.ok());
  for (TensorId t : g.op(op.value()).outputs) REQUIRE(g.MarkOutput(t).ok());
  REQUIRE(g.Validate().empty());
  return g;
}

TEST_CASE("Lstm and Gru are unrolled over their time steps for HTP, computing the same", "[passes][legalize]") {
  auto htp = target::LoadBuiltinTarget("htp_v73");
  REQUIRE(htp.ok());
  struct Case {
    std::string type, direction;
    bool lbr, state;
  };
  for (const Case& c : {Case{"Lstm", "forward", false, false}, Case{"Lstm", "bidirectional", false, true},
                        Case{"Lstm", "reverse", false, true}, Case{"Gru", "forward", false, true},
                        Case{"Gru", "bidirectional", true, false}}) {
    INFO(c.type << " " << c.direction << (c.lbr ? " linear_before_reset" : "") << (c.state ? " with state" : ""));
    Graph g = RecurrentGraph(c.type, c.direction, c.lbr, c.state);
    const std::vector<float> x = Ramp(24, 0.41f, -0.2f);
    const auto before = Run(g, x);
    pass::LegalizeReport report;
    REQUIRE(pass::LegalizeForTarget(&g, *htp.value(), &report).ok());
    CHECK(report.changed == 1);
    CHECK(CountType(g, c.type) == 0);
    CHECK(g.Validate().empty());
    const auto after = Run(g, x);
    REQUIRE(after.size() == before.size());
    for (size_t o = 0; o < after.size(); ++o) {
      CHECK(g.tensor(g.outputs()[o]).name == std::vector<std::string>{"y", "y_h", "y_c"}[o]);
      REQUIRE(after[o].size() == before[o].size());
      for (size_t i = 0; i < after[o].size(); ++i) CHECK(after[o][i] == Approx(before[o][i]).margin(1e-5));
    }
  }
  // A CPU target runs the op itself.
  auto cpu = target::LoadBuiltinTarget("cpu");
  REQUIRE(cpu.ok());
  Graph g = RecurrentGraph("Lstm", "forward", false, false);
  pass::LegalizeReport report;
  REQUIRE(pass::LegalizeForTarget(&g, *cpu.value(), &report).ok());
  CHECK(report.changed == 0);
}

}  // namespace
}  // namespace qairt
