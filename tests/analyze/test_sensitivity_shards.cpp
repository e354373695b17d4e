// Sharded sensitivity analysis: any split of the units, read back from each
// shard's JSON and merged, equals the unsharded report (every score bit for
// bit, and every rendering); merges of mismatched parts are refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "analyze/sensitivity.h"
#include "calib/sample_eval.h"

using namespace qairt;

namespace {

// x -> FC -> Relu -> FC (an outlier weight) -> Relu -> FC -> Relu -> FC -> y:
// seven units with distinct scores.
Graph Chain() {
  Graph g("chain");
  TensorId h = g.AddInput("x", DType::kFloat32, Shape{1, 16}).value();
  for (int i = 0; i < 4; ++i) {
    std::vector<float> w(16 * 16);
    for (size_t k = 0; k < w.size(); ++k) w[k] = 0.3f * std::sin(0.37f * static_cast<float>(k) + static_cast<float>(i));
    if (i == 1) w[21] = 25.f;
    std::vector<uint8_t> bytes(w.size() * 4);
    std::memcpy(bytes.data(), w.data(), bytes.size());
    const std::string n = "fc" + std::to_string(i);
    const TensorId wt =
        g.AddConstant(n + "_w", DType::kFloat32, Shape{16, 16}, StaticData::Adopt(std::move(bytes))).value();
    h = g.op(g.AddOp("FullyConnected", n, {h, wt}, {n + "_out"}).value()).outputs[0];
    if (i < 3) h = g.op(g.AddOp("Relu", "relu" + std::to_string(i), {h}, {"r" + std::to_string(i)}).value()).outputs[0];
  }
  REQUIRE(g.MarkOutput(h).ok());
  return g;
}

void RequireSame(const analyze::SensitivityReport& a, const analyze::SensitivityReport& b) {
  REQUIRE(a.units.size() == b.units.size());
  CHECK(a.samples == b.samples);
  CHECK(a.sqnr_base == b.sqnr_base);
  CHECK(a.sqnr_high == b.sqnr_high);
  for (size_t i = 0; i < a.units.size(); ++i) {
    INFO("unit " << i << " " << a.units[i].name);
    CHECK(a.units[i].name == b.units[i].name);
    CHECK(a.units[i].depth == b.units[i].depth);
    CHECK(a.units[i].evaluated);
    CHECK(b.units[i].evaluated);
    CHECK(a.units[i].sqnr_only_quantized == b.units[i].sqnr_only_quantized);
    CHECK(a.units[i].sqnr_only_high == b.units[i].sqnr_only_high);
  }
  CHECK(analyze::SensitivityJson(a) == analyze::SensitivityJson(b));
  CHECK(analyze::SensitivityText(a) == analyze::SensitivityText(b));
  CHECK(analyze::SensitivitySvg(a) == analyze::SensitivitySvg(b));
}

std::vector<analyze::SensitivityReport> Shards(const Graph& g, const calib::SampleSource& samples, uint32_t n) {
  std::vector<analyze::SensitivityReport> parts;
  for (uint32_t k = n; k-- > 0;) {  // reverse order: the merge takes any order
    analyze::Options o;
    o.shard_index = k;
    o.shard_count = n;
    analyze::SensitivityReport part;
    REQUIRE(analyze::AnalyzeSensitivity(g, samples, o, &part).ok());
    // Each travels as its JSON.
    analyze::SensitivityReport back;
    const auto st = analyze::ReadSensitivityJson(analyze::SensitivityJson(part), "shard", &back);
    INFO(st.message());
    REQUIRE(st.ok());
    parts.push_back(std::move(back));
  }
  return parts;
}

}  // namespace

TEST_CASE("sharded sensitivity merged from its JSON equals the unsharded analysis", "[analyze][shards]") {
  const Graph g = Chain();
  const auto samples = calib::SyntheticSamples(g, 8, 3).value();
  analyze::SensitivityReport whole;
  REQUIRE(analyze::AnalyzeSensitivity(g, samples, analyze::Options{}, &whole).ok());
  REQUIRE(whole.units.size() >= 5);
  // Scores differ from unit to unit (a merge taking the wrong shard's value would show).
  CHECK(whole.units[1].sqnr_only_quantized != whole.units[2].sqnr_only_quantized);

  for (uint32_t n : {1u, 2u, 3u, 7u}) {
    INFO(n << " shards");
    auto parts = Shards(g, samples, n);
    if (n > 1) {
      size_t evaluated = 0;
      for (const auto& u : parts[0].units) evaluated += u.evaluated;
      CHECK(evaluated < whole.units.size());
      CHECK(analyze::SensitivityText(parts[0]).find("units evaluated here") != std::string::npos);
    }
    analyze::SensitivityReport merged;
    const auto st = analyze::MergeSensitivity(parts, &merged);
    INFO(st.message());
    REQUIRE(st.ok());
    RequireSame(merged, whole);
  }
}

TEST_CASE("merging sensitivity shards refuses mismatched parts", "[analyze][shards]") {
  const Graph g = Chain();
  const auto samples = calib::SyntheticSamples(g, 8, 3).value();
  auto parts = Shards(g, samples, 3);  // parts[i] is shard 2 - i
  analyze::SensitivityReport out;
  auto refused = [&](std::vector<analyze::SensitivityReport> in, const std::string& why) {
    const auto st = analyze::MergeSensitivity(in, &out);
    INFO(st.message());
    CHECK_FALSE(st.ok());
    CHECK(st.message().find(why) != std::string::npos);
  };
  refused({}, "no reports");
  refused({parts[0], parts[1]}, "shard 0 of 3 is missing");
  refused({parts[0], parts[0], parts[1]}, "both shard 2 of 3");
  auto two = Shards(g, samples, 2);
  refused({parts[0], parts[1], two[0]}, "one of 3");
  // Other samples: other base/high scores.
  const auto other_samples = calib::SyntheticSamples(g, 8, 4).value();
  auto foreign = Shards(g, other_samples, 3);
  refused({parts[0], parts[1], foreign[2]}, "another analysis");
  // Another model with as many units.
  auto renamed = parts[2];
  renamed.units[3].name = "elsewhere";
  refused({parts[0], parts[1], renamed}, "another model");
}

TEST_CASE("a sensitivity report's JSON is verified on read", "[analyze][shards]") {
  const Graph g = Chain();
  const auto samples = calib::SyntheticSamples(g, 4, 3).value();
  analyze::Options o;
  o.shard_index = 1;
  o.shard_count = 2;
  analyze::SensitivityReport part;
  REQUIRE(analyze::AnalyzeSensitivity(g, samples, o, &part).ok());
  const std::string json = analyze::SensitivityJson(part);
  analyze::SensitivityReport back;
  REQUIRE(analyze::ReadSensitivityJson(json, "p", &back).ok());
  CHECK(analyze::SensitivityJson(back) == json);

  auto refused = [&](const std::string& text, const std::string& why) {
    const auto st = analyze::ReadSensitivityJson(text, "part.json", &back);
    INFO(text.substr(0, 200) << "\n-> " << st.message());
    CHECK_FALSE(st.ok());
    CHECK(st.message().find("part.json") != std::string::npos);
    CHECK(st.message().find(why) != std::string::npos);
  };
  refused("", "document");
  refused(json.substr(0, json.size() / 2), "document");
  refused("[1,2]", "not a JSON object");
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = json;
    const size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  refused(edit("\"samples\":", "\"samplez\":"), "samples");
  refused(edit("\"shard_index\":1", "\"shard_index\":2"), "shard_index");
  refused(edit("\"units\":[", "\"units\":7,\"x\":["), "units");
  // Unit 0 belongs to shard 0: scores there mean an edited or foreign file.
  refused(edit("\"depth\":0}", "\"depth\":0,\"sqnr_only_quantized_db\":1,\"sqnr_only_high_db\":2}"),
          "belongs to another shard");
  refused(edit("\"sqnr_only_high_db\":", "\"sqnr_only_higher_db\":"), "one of its two scores");

  // A shard index at or above the count is an argument error.
  o.shard_index = 2;
  CHECK_FALSE(analyze::AnalyzeSensitivity(g, samples, o, &part).ok());
}

// `count` samples of x uniform in [-1, 1): bounded, so ranges fitted on
// half of them hold for the other half and the bit widths decide the score
// (normal samples put a held-out tail beyond the fitted ranges, and the
// clipping hides the difference between the precisions).
calib::SampleSource UniformSamples(size_t count) {
  calib::SampleSource s;
  s.count = count;
  s.load = [](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    std::vector<float> x(16);
    for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(static_cast<float>(i * 16 + k) * 1.7f + 0.3f);
    std::vector<uint8_t> b(x.size() * 4);
    std::memcpy(b.data(), x.data(), b.size());
    return std::vector<std::vector<uint8_t>>{b};
  };
  return s;
}

TEST_CASE("mixed precision from sharded gains chooses exactly as unsharded", "[analyze][shards]") {
  const Graph g = Chain();
  const auto samples = UniformSamples(8);
  // A budget between the two extremes, so the search ranks and promotes.
  analyze::MixedOptions probe;
  probe.mode = analyze::MixedMode::kPercent;
  Graph pg = g;
  analyze::MixedReport pr;
  REQUIRE(analyze::ChooseMixedPrecision(&pg, samples, probe, &pr).ok());
  REQUIRE(pr.sqnr_high > pr.sqnr_base + 3);
  analyze::MixedOptions m;
  m.mode = analyze::MixedMode::kBudget;
  m.value = (pr.sqnr_base + pr.sqnr_high) / 2;
  Graph local = g;
  analyze::MixedReport lr;
  REQUIRE(analyze::ChooseMixedPrecision(&local, samples, m, &lr).ok());
  REQUIRE_FALSE(lr.promoted.empty());

  for (uint32_t n : {1u, 2u, 3u}) {
    INFO(n << " shards");
    std::vector<analyze::MixedGains> parts;
    for (uint32_t k = 0; k < n; ++k) {
      analyze::MixedOptions shard = m;
      shard.analysis.shard_index = k;
      shard.analysis.shard_count = n;
      analyze::MixedGains part, back;
      REQUIRE(analyze::MixedPrecisionGains(g, samples, shard, &part).ok());
      const std::string json = analyze::MixedGainsJson(part);
      CHECK(analyze::IsMixedGainsJson(json));
      REQUIRE(analyze::ReadMixedGainsJson(json, "gains", &back).ok());
      CHECK(analyze::MixedGainsJson(back) == json);
      parts.push_back(std::move(back));
    }
    auto merged = std::make_shared<analyze::MixedGains>();
    REQUIRE(analyze::MergeMixedGains(parts, merged.get()).ok());
    analyze::MixedOptions with = m;
    with.gains = merged;
    Graph sharded = g;
    analyze::MixedReport sr;
    REQUIRE(analyze::ChooseMixedPrecision(&sharded, samples, with, &sr).ok());
    CHECK(sr.promoted == lr.promoted);
    CHECK(sr.sqnr_chosen == lr.sqnr_chosen);
    // The same simulations verified the same choice.
    CHECK(sr.evaluations == lr.evaluations);
    for (TensorId t = 0; t < g.tensor_count(); ++t) CHECK(sharded.tensor(t).encoding == local.tensor(t).encoding);
  }

  // Gains of another search are refused.
  analyze::MixedOptions shard = m;
  const auto other = calib::SyntheticSamples(g, 8, 9).value();
  auto foreign = std::make_shared<analyze::MixedGains>();
  REQUIRE(analyze::MixedPrecisionGains(g, other, shard, foreign.get()).ok());
  analyze::MixedOptions with = m;
  with.gains = foreign;
  Graph x = g;
  analyze::MixedReport xr;
  const auto st = analyze::ChooseMixedPrecision(&x, samples, with, &xr);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("other samples or calibration options") != std::string::npos);
  // An unmerged shard is refused too.
  shard.analysis.shard_count = 2;
  auto half = std::make_shared<analyze::MixedGains>();
  REQUIRE(analyze::MixedPrecisionGains(g, samples, shard, half.get()).ok());
  with.gains = half;
  CHECK(analyze::ChooseMixedPrecision(&x, samples, with, &xr).message().find("merge every shard") !=
        std::string::npos);
  CHECK(analyze::ReadMixedGainsJson(analyze::SensitivityJson(analyze::SensitivityReport{}), "s", half.get())
            .message()
            .find("kind") != std::string::npos);
}

TEST_CASE("sensitivity of a base precision the target cannot run is its cause, not a score", "[analyze]") {
  const Graph g = Chain();
  const auto samples = calib::SyntheticSamples(g, 4, 3).value();
  analyze::Options o;
  o.realize = [](const Graph&) -> Result<Graph> {
    return Status(StatusCode::kUnsupported, "fc1 (FullyConnected): no kernel for these encodings");
  };
  analyze::SensitivityReport r;
  const Status s = analyze::AnalyzeSensitivity(g, samples, o, &r);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("the model at W8A8 does not run on the target") != std::string::npos);
  CHECK(s.message().find("fc1 (FullyConnected): no kernel") != std::string::npos);
  // The high precision alone unrunnable: its scores read "n/a", never a number.
  int calls = 0;
  o.realize = [&calls](const Graph& q) -> Result<Graph> {
    if (++calls == 1) return q;  // the base score (realized once)
    return Status(StatusCode::kUnsupported, "no 16-bit kernels");
  };
  REQUIRE(analyze::AnalyzeSensitivity(g, samples, o, &r).ok());
  const std::string text = analyze::SensitivityText(r);
  INFO(text);
  CHECK(text.find("not runnable on the target") != std::string::npos);
  CHECK(text.find("n/a") != std::string::npos);
  CHECK(text.find("-1000000000") == std::string::npos);
}
