// A lookup in a static table (Gather) outputs the table's values: calibration
// gives its output the table's encoding, so the target runs the chain without
// a Convert (a second rounding of every embedding looked up).
#include <catch2/catch.hpp>

#include <cstring>

#include "calib/calibrate.h"
#include "../passes/pass_test_util.h"

using namespace qairt;

namespace {

// ids [1, 4] -> Gather(table [32, 6]) -> e -> Relu -> y. Rows 0..3, the only
// ones the samples look up, are small; the table spans [-4, 4].
Graph Embedding() {
  Graph g("embedding");
  const TensorId ids = g.AddInput("ids", DType::kInt32, Shape{1, 4}).value();
  std::vector<float> table = testing::Ramp(32 * 6, -4.f, 4.f);
  for (size_t i = 0; i < 4 * 6; ++i) table[i] = 0.01f * static_cast<float>(i);
  const TensorId t = g.AddConstant("table", DType::kFloat32, Shape{32, 6}, testing::FloatData(table)).value();
  const TensorId e = g.op(g.AddOp("Gather", "embed", {t, ids}, {"e"}, {{"axis", int64_t{0}}}).value()).outputs[0];
  const TensorId y = g.op(g.AddOp("Relu", "relu", {e}, {"y"}).value()).outputs[0];
  REQUIRE(g.MarkOutput(y).ok());
  return g;
}

calib::SampleSource Ids() {
  calib::SampleSource s;
  s.count = 4;
  s.load = [](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    const int32_t ids[4] = {static_cast<int32_t>(i % 4), 1, 2, 3};
    std::vector<uint8_t> bytes(sizeof ids);
    std::memcpy(bytes.data(), ids, sizeof ids);
    return std::vector<std::vector<uint8_t>>{std::move(bytes)};
  };
  return s;
}

}  // namespace

TEST_CASE("a Gather from a static table takes the table's encoding; the target adds no Convert for it", "[calib]") {
  Graph g = Embedding();
  calib::Report rep;
  REQUIRE(calib::Calibrate(&g, Ids(), calib::Options{}, &rep).ok());
  const auto& table = g.tensor(*g.FindTensor("table")).encoding;
  const auto& e = g.tensor(*g.FindTensor("e")).encoding;
  REQUIRE(table);
  REQUIRE(e);
  CHECK(*e == *table);
  // The whole table's range (every row, looked up in calibration or not), not rows 0..3's.
  CHECK(e->scales[0] * 255 > 6.5f);  // rows 4..31 span about [-3, 4]
  auto r = testing::RunProcess(&g, testing::Builtin("htp_v73"));
  for (const auto& err : r.errors) UNSCOPED_INFO(err);
  CHECK(r.errors.empty());
  CHECK(testing::CountOps(g, "Convert") == 0);
}

TEST_CASE("a Gather output with its own encoding (an override) keeps it", "[calib]") {
  Graph g = Embedding();
  const TensorId e = *g.FindTensor("e");
  const Encoding given = testing::PerTensor(DType::kUFixed8, 0.001f, -10);
  REQUIRE(g.SetEncoding(e, given).ok());
  calib::Report rep;
  REQUIRE(calib::Calibrate(&g, Ids(), calib::Options{}, &rep).ok());
  CHECK(*g.tensor(e).encoding == given);
  CHECK(*g.tensor(*g.FindTensor("table")).encoding != given);
}
