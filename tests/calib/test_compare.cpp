// qairt compare's diagnosis of where accuracy is lost: an op whose output is
// much less accurate than its least accurate measured input is named, with
// both figures; ops that only move values and tensors that merely inherit
// their producers' error are not.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "calib/compare.h"
#include "ir/fused_activation.h"

namespace qairt::calib {
namespace {

Encoding U16(float lo, float hi) {
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = DType::kUFixed16;
  e.symmetry = Symmetry::kAsymmetric;
  const float scale = (hi - lo) / 65535.0f;
  e.scales = {scale};
  e.offsets = {static_cast<int32_t>(std::lround(lo / scale))};
  return e;
}

// x [1, 64] in (0, 1]: a = x * 1000 -> b = Log(a) -> t = Transpose -> y = t + 1.
Graph PowerToLog() {
  Graph g("log");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 64}).value();
  const float k = 1000.0f;
  const TensorId c = g.AddConstant("k", DType::kFloat32, Shape{1}, StaticData::Copy(&k, 4)).value();
  const float one = 1.0f;
  const TensorId o = g.AddConstant("one", DType::kFloat32, Shape{1}, StaticData::Copy(&one, 4)).value();
  auto op = [&](const char* type, const char* name, std::vector<TensorId> in, const char* out, AttributeMap attrs = {}) {
    auto id = g.AddOp(type, name, std::move(in), {out}, std::move(attrs));
    REQUIRE(id.ok());
    return g.op(id.value()).outputs[0];
  };
  const TensorId a = op("ElementWiseMultiply", "scale", {x, c}, "a");
  const TensorId b = op("ElementWiseLog", "log", {a}, "b");
  const TensorId t = op("Transpose", "move", {b}, "t", {{"perm", std::vector<int64_t>{1, 0}}});
  const TensorId y = op("ElementWiseAdd", "shift", {t, o}, "y");
  REQUIRE(g.MarkOutput(y).ok());
  g.InferShapes();
  return g;
}

// n samples of one [1, 64] float input, x[k] = value(i, k) for sample i.
SampleSource Samples64(size_t n, float (*value)(size_t i, size_t k)) {
  SampleSource s;
  s.count = n;
  s.load = [value](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    std::vector<float> x(64);
    for (size_t k = 0; k < x.size(); ++k) x[k] = value(i, k);
    std::vector<uint8_t> b(x.size() * 4);
    std::memcpy(b.data(), x.data(), b.size());
    return std::vector<std::vector<uint8_t>>{b};
  };
  return s;
}

SampleSource Powers(size_t n) {
  return Samples64(n, [](size_t i, size_t k) {
    return std::pow(10.0f, -4.0f * static_cast<float>((k * 7 + i) % 64) / 64.0f);
  });
}

TEST_CASE("compare names the op that loses accuracy, not the ones that inherit or move it", "[calib][compare]") {
  Graph f = PowerToLog();
  Graph q = f;
  // 'a' spans [0, 1000] on a 16-bit grid (step 0.015): its small values
  // (0.1 .. 1) keep about 20 dB, Log of them much less.
  for (const auto& [name, enc] : {std::pair{"x", U16(0, 1)}, std::pair{"a", U16(0, 1000)},
                                  std::pair{"b", U16(-3, 7)}, std::pair{"t", U16(-3, 7)}, std::pair{"y", U16(-2, 8)}})
    REQUIRE(q.SetEncoding(*q.FindTensor(name), enc).ok());
  CompareReport r;
  const Status st = Compare(f, q, Powers(4), true, &r);
  INFO(st.message());
  REQUIRE(st.ok());
  REQUIRE_FALSE(r.losses.empty());
  const AccuracyLoss& worst = r.losses.front();
  CHECK(worst.op_type == "ElementWiseLog");
  CHECK(worst.tensor == "b");
  CHECK(worst.input == "a");
  CHECK(worst.input_sqnr_db > worst.sqnr_db + 10);
  for (const AccuracyLoss& l : r.losses) {
    CHECK(l.op_type != "Transpose");  // moves values: never a loss
    CHECK(l.loss_db() >= 1.0);
  }
  CHECK_THAT(CompareText(r), Catch::Contains("where accuracy is lost") &&
                                 Catch::Contains("ElementWiseLog 'log' -> 'b': 'a' "));
  CHECK_THAT(CompareJson(r), Catch::Contains("\"losses\":[{\"tensor\":\"b\",\"op\":\"log\""));
  // Without quantization nothing is lost.
  CompareReport same;
  REQUIRE(Compare(f, f, Powers(2), true, &same).ok());
  CHECK(same.losses.empty());
}

// x [1, 64] in [-1, 1): s = x + 0.5 -> a = s * 2 -> r = Relu(a) (an
// output), and h = HardSwish(s * 2) (another).
Graph FusedActivations() {
  Graph g("fused");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 64}).value();
  const float two = 2.0f, half = 0.5f;
  const TensorId k = g.AddConstant("two", DType::kFloat32, Shape{1}, StaticData::Copy(&two, 4)).value();
  const TensorId c = g.AddConstant("half", DType::kFloat32, Shape{1}, StaticData::Copy(&half, 4)).value();
  auto op = [&](const char* type, const char* name, std::vector<TensorId> in, const char* out) {
    auto id = g.AddOp(type, name, std::move(in), {out});
    REQUIRE(id.ok());
    return g.op(id.value()).outputs[0];
  };
  const TensorId shifted = op("ElementWiseAdd", "shift", {x, c}, "s");
  const TensorId a = op("ElementWiseMultiply", "scale", {shifted, k}, "a");
  REQUIRE(g.MarkOutput(op("Relu", "relu", {a}, "r")).ok());
  const TensorId b = op("ElementWiseMultiply", "scale2", {shifted, k}, "b");
  REQUIRE(g.MarkOutput(op("HardSwish", "hswish", {b}, "h")).ok());
  g.InferShapes();
  return g;
}

SampleSource Ramps(size_t n) {
  return Samples64(n, [](size_t i, size_t k) { return -1.0f + 2.0f * static_cast<float>((k * 5 + i) % 64) / 64.0f; });
}

TEST_CASE("compare measures a fused clamping activation's output, not its clamped input", "[calib][compare]") {
  const Graph f = FusedActivations();
  Graph q = f;
  // As target processing leaves a super group: the intermediate carries the
  // activation's output encoding. Relu's 8-bit grid over [0, 200] loses most
  // of its [0, 3) outputs; the simulation rounds 'a' to that grid too, which
  // also clamps its negative part (what Relu does anyway).
  Encoding coarse = U16(0, 200);
  coarse.dtype = DType::kUFixed8;
  coarse.scales = {200.0f / 255.0f};
  coarse.offsets = {0};
  for (const auto& [name, enc] : {std::pair{"x", U16(-1, 1)}, std::pair{"s", U16(-0.5f, 1.5f)}, std::pair{"a", coarse},
                                  std::pair{"r", coarse}, std::pair{"b", U16(-0.375f, 3)}, std::pair{"h", U16(-0.375f, 3)}})
    REQUIRE(q.SetEncoding(*q.FindTensor(name), enc).ok());
  REQUIRE(IsClampedActivationInput(q, *q.FindTensor("a")));
  REQUIRE_FALSE(IsClampedActivationInput(q, *q.FindTensor("b")));  // HardSwish's input: unrounded, measured
  CompareReport r;
  REQUIRE(Compare(f, q, Ramps(4), true, &r).ok());
  std::vector<std::string> measured;
  for (const Accuracy& a : r.layers) measured.push_back(a.name);
  CHECK(std::find(measured.begin(), measured.end(), "a") == measured.end());
  for (const char* name : {"s", "r", "b", "h"}) CHECK(std::find(measured.begin(), measured.end(), name) != measured.end());
  // The loss is the pair's, against the pair's input.
  const auto at_r = std::find_if(r.losses.begin(), r.losses.end(), [](const AccuracyLoss& l) { return l.tensor == "r"; });
  REQUIRE(at_r != r.losses.end());
  CHECK(at_r->op_type == "ElementWiseMultiply + Relu");
  CHECK(at_r->op_name == "scale + relu");
  CHECK(at_r->input == "s");
  CHECK(at_r->loss_db() > 20);
  for (const AccuracyLoss& l : r.losses) CHECK(l.tensor != "a");
  // Without the shared encoding the two are separate ops, each measured.
  Graph separate = q;
  REQUIRE(separate.SetEncoding(*separate.FindTensor("a"), U16(-1, 3)).ok());
  REQUIRE(Compare(f, separate, Ramps(4), true, &r).ok());
  measured.clear();
  for (const Accuracy& a : r.layers) measured.push_back(a.name);
  CHECK(std::find(measured.begin(), measured.end(), "a") != measured.end());
}

TEST_CASE("compare feeds int64 samples to a quantized model whose inputs convert made int32", "[calib][compare]") {
  auto build = [](DType ids_dtype) {
    Graph g("embed");
    const TensorId ids = g.AddInput("ids", ids_dtype, Shape{1, 4}).value();
    const OpId op = g.AddOp("Cast", "to_float", {ids}, {"y"}, {{"to", static_cast<int64_t>(DType::kFloat32)}}).value();
    REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
    return g;
  };
  Graph f = build(DType::kInt64), q = build(DType::kInt32);
  auto samples = [](int64_t big) {
    SampleSource s;
    s.count = 2;
    s.load = [big](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
      const std::vector<int64_t> v = {static_cast<int64_t>(i), 3, 9, big};
      std::vector<uint8_t> b(32);
      std::memcpy(b.data(), v.data(), 32);
      return std::vector<std::vector<uint8_t>>{b};
    };
    return s;
  };
  CompareReport r;
  const Status st = Compare(f, q, samples(5), false, &r);
  INFO(st.message());
  REQUIRE(st.ok());
  REQUIRE(r.outputs.size() == 1);
  CHECK(std::isinf(r.outputs[0].sqnr_db));  // the same values
  const Status wide = Compare(f, q, samples(int64_t{1} << 40), false, &r);
  CHECK_THAT(wide.message(), Catch::Contains("input 'ids': value 1099511627776 at index 3 does not fit"));
}

// x -> y = x * 1 in the given shape (64 values).
Graph Scaled(Shape shape) {
  Graph g("scaled");
  const TensorId x = g.AddInput("x", DType::kFloat32, std::move(shape)).value();
  const float one = 1.0f;
  const TensorId c = g.AddConstant("one", DType::kFloat32, Shape{1}, StaticData::Copy(&one, 4)).value();
  auto id = g.AddOp("ElementWiseMultiply", "scale", {x, c}, {"y"});
  REQUIRE(id.ok());
  REQUIRE(g.MarkOutput(g.op(id.value()).outputs[0]).ok());
  g.InferShapes();
  return g;
}

// Four rows of 16 scores per sample. Rows 0, 1 and 3 have one clear best
// class at 0.9984 + 0.0002 * row (all 255 on an 8-bit [0, 1] grid, so the
// quantized whole-output maximum ties and falls on row 0, the float one on
// row 3); row 2 has a near tie, 0.5005 at class 1 and 0.5010 at class 9,
// that the grid rounds to one value (the quantized argmax becomes class 1).
float Rows(size_t i, size_t k) {
  const size_t row = k / 16, col = k % 16;
  if (row == 2) return col == 1 ? 0.5005f : col == 9 ? 0.5010f : 0.1f;
  return col == (row * 3 + i) % 16 ? 0.9984f + 0.0002f * static_cast<float>(row) : 0.1f;
}

TEST_CASE("compare counts argmax agreement at every position of a sequence output", "[calib][compare]") {
  Encoding u8;
  u8.kind = EncodingKind::kPerTensor;
  u8.dtype = DType::kUFixed8;
  u8.symmetry = Symmetry::kAsymmetric;
  u8.scales = {1.0f / 255.0f};
  u8.offsets = {0};
  Graph f = Scaled(Shape{1, 4, 16});
  Graph q = f;
  REQUIRE(q.SetEncoding(*q.FindTensor("y"), u8).ok());
  CompareReport r;
  REQUIRE(Compare(f, q, Samples64(4, Rows), false, &r).ok());
  REQUIRE(r.outputs.size() == 1);
  const Accuracy& a = r.outputs[0];
  CHECK(a.argmax_agree == 0);  // the whole output's maximum: a tie in every quantized sample
  CHECK(a.positions == 16);
  CHECK(a.positions_agree == 12);  // the near tie of row 2 is lost, the clear rows are not
  CHECK(a.per_position());
  CHECK_THAT(CompareSummaryLine(r), Catch::Contains("argmax 12/16 positions (75.0%, last axis)"));
  CHECK_THAT(CompareText(r), Catch::Contains("argmax 12/16 positions"));
  CHECK_THAT(CompareJson(r), Catch::Contains("\"argmax_positions\":16,\"argmax_positions_agree\":12"));

  // One position per sample (a classifier's [1, classes]): per sample, as before.
  Graph f1 = Scaled(Shape{1, 64});
  Graph q1 = f1;
  REQUIRE(q1.SetEncoding(*q1.FindTensor("y"), u8).ok());
  CompareReport one;
  REQUIRE(Compare(f1, q1, Samples64(4, Rows), false, &one).ok());
  CHECK(one.outputs[0].positions == 4);
  CHECK(one.outputs[0].positions_agree == one.outputs[0].argmax_agree);
  CHECK_FALSE(one.outputs[0].per_position());
  CHECK_THAT(CompareSummaryLine(one), Catch::Contains("argmax 0/4") && !Catch::Contains("positions"));
}

}  // namespace
}  // namespace qairt::calib
