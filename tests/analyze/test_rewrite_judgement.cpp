// Rewrites judged on the quantized model: one exact in float but ruinous
// once quantized is kept off; one that costs nothing is kept; one the caller
// asked for by name is kept as asked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "calib/calibrate.h"
#include "calib/sample_eval.h"
#include "../passes/pass_test_util.h"
#include "passes/rewrite/rewrite.h"

using namespace qairt;

namespace {

using testing::FloatData;

// x -> FullyConnected -> h -> Relu -> FullyConnected -> y
Graph Mlp() {
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 16}).value();
  std::vector<float> w1(256), w2(256);
  for (size_t i = 0; i < 256; ++i) {
    w1[i] = 0.3f * std::sin(0.37f * static_cast<float>(i));
    w2[i] = 0.3f * std::cos(0.23f * static_cast<float>(i));
  }
  const TensorId a = g.AddConstant("w1", DType::kFloat32, Shape{16, 16}, FloatData(w1)).value();
  const TensorId b = g.AddConstant("w2", DType::kFloat32, Shape{16, 16}, FloatData(w2)).value();
  const TensorId h = g.op(g.AddOp("FullyConnected", "fc1", {x, a}, {"h"}).value()).outputs[0];
  const TensorId r = g.op(g.AddOp("Relu", "relu", {h}, {"r"}).value()).outputs[0];
  const TensorId y = g.op(g.AddOp("FullyConnected", "fc2", {r, b}, {"y"}).value()).outputs[0];
  REQUIRE(g.MarkOutput(y).ok());
  return g;
}

// (h + c) - c with c = [1000, 0, ...]: the same values in float (to float
// rounding), but the 8-bit grid of h + c spans a thousand, four units a step.
Result<size_t> AddAndSubtractOutlier(Graph* g, std::vector<std::string>* notes) {
  const auto h = g->FindTensor("h");
  const auto relu = g->FindOp("relu");
  if (!h || !relu) return size_t{0};
  std::vector<float> c(16, 0.f);
  c[0] = 1000.f;
  auto ct = g->AddConstant("c", DType::kFloat32, Shape{1, 16}, FloatData(c));
  if (!ct.ok()) return ct.status();
  auto plus = g->AddOp("ElementWiseAdd", "plus_c", {*h, ct.value()}, {"h_plus_c"});
  if (!plus.ok()) return plus.status();
  auto back = g->AddOp("ElementWiseSubtract", "minus_c", {g->op(plus.value()).outputs[0], ct.value()}, {"h_back"});
  if (!back.ok()) return back.status();
  QAIRT_RETURN_IF_ERROR(g->SetOpInput(*relu, 0, g->op(back.value()).outputs[0]));
  notes->push_back("h + c - c");
  return size_t{1};
}

// Renames the output of fc2's input Relu: changes nothing a quantizer sees.
Result<size_t> Rename(Graph* g, std::vector<std::string>* notes) {
  const auto r = g->FindTensor("r");
  if (!r) return size_t{0};
  QAIRT_RETURN_IF_ERROR(g->RenameTensor(*r, "r_renamed"));
  notes->push_back("renamed");
  return size_t{1};
}

}  // namespace

TEST_CASE("a rewrite exact in float that costs quantized accuracy is kept off", "[rewrite][judge]") {
  const Graph original = Mlp();
  const auto samples = calib::SyntheticSamples(original, 6, 21).value();
  const auto reference = calib::RunSamples(original, samples, false).value();
  size_t scored = 0;
  auto score = [&](const Graph& g) -> Result<double> {
    ++scored;
    Graph q = g;
    calib::Report rep;
    QAIRT_RETURN_IF_ERROR(calib::Calibrate(&q, samples, calib::Options{}, &rep));
    auto got = calib::RunSamples(q, samples, true);
    if (!got.ok()) return got.status();
    return calib::Worst(reference, got.value()).sqnr_db;
  };

  rewrite::Options o;
  o.verify = true;  // float verification still passes: the rewrite is exact to 1e-6
  o.samples = samples;
  o.replace_registry = {{"outlier", "(h + c) - c", AddAndSubtractOutlier, nullptr, true},
                        {"rename", "renames a tensor", Rename, nullptr, true}};
  o.quantized_score = score;
  Graph g = original;
  rewrite::Report r;
  REQUIRE(rewrite::RunRewrites(&g, o, &r).ok());
  REQUIRE(r.rewrites.size() == 2);
  const rewrite::Outcome& outlier = r.rewrites[0];
  const rewrite::Outcome& rename = r.rewrites[1];
  INFO(rewrite::ReportText(r, false));
  CHECK(r.judged);
  CHECK_FALSE(outlier.rolled_back);  // float verification passed it
  CHECK(outlier.cosine > 0.99999);
  CHECK(outlier.refused);
  CHECK(outlier.quantized_with < outlier.quantized_without - 10);
  CHECK_FALSE(rename.refused);
  CHECK(std::abs(rename.quantized_with - rename.quantized_without) < 0.1);
  // The graph: without the refused rewrite, with the kept one.
  CHECK_FALSE(g.FindOp("plus_c"));
  CHECK(g.FindTensor("r_renamed"));
  CHECK(scored == 3);  // everything, then each rewrite left out
  CHECK(std::any_of(r.warnings.begin(), r.warnings.end(),
                    [](const std::string& w) { return w.find("rewrite 'outlier' kept off") != std::string::npos; }));
  CHECK(rewrite::ReportText(r, false).find("KEPT OFF") != std::string::npos);
  CHECK(rewrite::ReportJson(r).find("\"refused\":true") != std::string::npos);

  // Asked for by name, it stays (its scores still reported).
  rewrite::Options asked = o;
  asked.replace_registry[0].on_by_default = false;
  asked.enabled = {"outlier"};
  Graph a = original;
  rewrite::Report ar;
  REQUIRE(rewrite::RunRewrites(&a, asked, &ar).ok());
  CHECK_FALSE(ar.rewrites[0].refused);
  CHECK(a.FindOp("plus_c"));

  // Only rewrites the caller asked for fired: nothing to judge, nothing run.
  rewrite::Options only_asked = asked;
  only_asked.replace_registry.pop_back();
  scored = 0;
  Graph oa = original;
  rewrite::Report oar;
  REQUIRE(rewrite::RunRewrites(&oa, only_asked, &oar).ok());
  CHECK(scored == 0);
  CHECK_FALSE(oar.judged);
  CHECK(oa.FindOp("plus_c"));

  // Not judged without a score: both kept.
  rewrite::Options plain = o;
  plain.quantized_score = nullptr;
  Graph p = original;
  rewrite::Report pr;
  REQUIRE(rewrite::RunRewrites(&p, plain, &pr).ok());
  CHECK_FALSE(pr.judged);
  CHECK(p.FindOp("plus_c"));
  CHECK(std::isnan(pr.rewrites[0].quantized_with));
}
