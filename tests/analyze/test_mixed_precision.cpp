// Mixed precision from a W8A8 base: the noise estimate that ranks the
// candidates, and the search meeting its budget on samples it never saw,
// within its cap on promoted layers and its bound on work, and its
// configurations taking values and biases with encodings (bias correction).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <random>

#include "analyze/analysis_common.h"
#include "analyze/noise_estimate.h"
#include "analyze/sensitivity.h"
#include "calib/bias_correction.h"
#include "calib/calibrate.h"
#include "calib/sample_eval.h"
#include "../passes/pass_test_util.h"
#include "analysis_test_util.h"

using namespace qairt;

namespace {

using testing::FloatData;

// Ten FullyConnected + Relu layers of width 32. The layers in `loud` add a
// bias of 200 to one channel: their activations' 8-bit grid, stretched over
// that channel, is 40x coarser than the other channels need, so at W8A8 they
// cause most of the output error, and promoting their activations fixes it.
Graph Chain(const std::vector<int>& loud) {
  Graph g;
  TensorId h = g.AddInput("x", DType::kFloat32, Shape{1, 32}).value();
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 1.f / std::sqrt(32.f));
  for (int k = 0; k < 10; ++k) {
    const bool is_loud = std::find(loud.begin(), loud.end(), k) != loud.end();
    std::vector<float> w(32 * 32), b(32, 0.1f);
    for (float& v : w) v = 1.4f * nd(rng);
    // The loud channel reads nothing and feeds nothing: it only widens the range.
    if (is_loud) {
      for (int i = 0; i < 32; ++i) w[7 * 32 + i] = 0;
      b[7] = 200.f;
    }
    if (std::find(loud.begin(), loud.end(), k - 1) != loud.end())
      for (int j = 0; j < 32; ++j) w[j * 32 + 7] = 0;
    const std::string n = "fc" + std::to_string(k);
    const TensorId wt = g.AddConstant(n + "_w", DType::kFloat32, Shape{32, 32}, FloatData(w)).value();
    const TensorId bt = g.AddConstant(n + "_b", DType::kFloat32, Shape{32}, FloatData(b)).value();
    h = g.op(g.AddOp("FullyConnected", n, {h, wt, bt}, {n + "_out"}).value()).outputs[0];
    h = g.op(g.AddOp("Relu", "relu" + std::to_string(k), {h}, {n + "_relu"}).value()).outputs[0];
  }
  REQUIRE(g.MarkOutput(h).ok());
  return g;
}

double HeldOutSqnr(const Graph& float_graph, const Graph& quantized, const calib::SampleSource& samples) {
  auto ref = calib::RunSamples(float_graph, samples, false);
  auto got = calib::RunSamples(quantized, samples, true);
  REQUIRE(ref.ok());
  REQUIRE(got.ok());
  return calib::Worst(ref.value(), got.value()).sqnr_db;
}

// Each sample's SQNR (one output), in sample order, computed here from the
// two runs, as benchmarks/accuracy_vs_plain.py does.
std::vector<double> PerSampleSqnr(const Graph& float_graph, const Graph& quantized,
                                  const calib::SampleSource& samples) {
  auto ref = calib::RunSamples(float_graph, samples, false);
  auto got = calib::RunSamples(quantized, samples, true);
  REQUIRE(ref.ok());
  REQUIRE(got.ok());
  REQUIRE(ref.value().size() == 1);
  const std::vector<float>&r = ref.value()[0], &q = got.value()[0];
  const size_t n = samples.count, per = r.size() / n;
  std::vector<double> db;
  for (size_t i = 0; i < n; ++i) {
    double signal = 0, noise = 0;
    for (size_t j = i * per; j < (i + 1) * per; ++j) {
      signal += static_cast<double>(r[j]) * r[j];
      noise += (static_cast<double>(r[j]) - q[j]) * (static_cast<double>(r[j]) - q[j]);
    }
    db.push_back(10 * std::log10(signal / noise));
  }
  return db;
}

double Median(std::vector<double> db) {
  std::sort(db.begin(), db.end());
  const size_t n = db.size();
  return n % 2 ? db[n / 2] : 0.5 * (db[n / 2 - 1] + db[n / 2]);
}

}  // namespace

TEST_CASE("noise estimate: the loud layers' activations rank first, the total near the simulated error",
          "[analyze][mixed][threads]") {
  const Graph g = Chain({3, 6});
  const auto samples = calib::SyntheticSamples(g, 8, 5).value();
  analyze::Options o;
  analyze::detail::Prepared p;
  REQUIRE(analyze::detail::Prepare(g, samples, samples, o, &p, /*split_parts=*/true).ok());
  analyze::NoiseEstimate est;
  REQUIRE(analyze::EstimateNoise(p.low, p.low, p.high, p.units, {g.outputs()[0]}, {}, samples, 1, &est).ok());
  REQUIRE(est.base.size() == p.units.size());
  std::vector<size_t> order(p.units.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return est.base[a] > est.base[b]; });
  auto label = [&](size_t i) { return p.units[i].name + " (" + p.units[i].part + ")"; };
  INFO(label(order[0]) << ", " << label(order[1]) << ", " << label(order[2]));
  // fc3 and fc6's outputs, or the Relu after each, which carries the same range.
  auto loud = [&](size_t i) {
    const std::string& n = p.units[i].name;
    return p.units[i].part == "activations" && (n == "fc3" || n == "fc6" || n == "relu3" || n == "relu6");
  };
  CHECK(loud(order[0]));
  CHECK(loud(order[1]));
  // Every estimate is work on the samples: one float run, one quantized
  // run and a few runs of each op per sample.
  CHECK(est.op_runs >= 2 * samples.count * g.op_count());
  CHECK(est.op_runs <= 8 * samples.count * g.op_count());
  // The estimated total against the simulated W8A8 error: the same order.
  auto base = analyze::detail::Score(p.low, samples, p, o);
  REQUIRE(base.ok());
  const double simulated = std::pow(10.0, -base.value().sqnr / 10);
  INFO("estimated " << est.total_base << ", simulated " << simulated);
  CHECK(est.total_base > simulated / 2);
  CHECK(est.total_base < simulated * 2);
  // At the high precision the top unit's own noise all but vanishes. (Not
  // every unit's: each is measured with its neighbours at the base
  // precision, so a Relu re-rounding its input's 8-bit values keeps some.)
  CHECK(est.high[order[0]] < est.base[order[0]] / 100);
  // With threads (the next sample's quantized run beside this one's float
  // run): the same estimate, bit for bit, and the same work.
  for (const uint32_t threads : {2u, 0u}) {
    analyze::NoiseEstimate mt;
    REQUIRE(analyze::EstimateNoise(p.low, p.low, p.high, p.units, {g.outputs()[0]}, {}, samples, threads, &mt).ok());
    INFO("threads " << threads);
    CHECK(mt.op_runs == est.op_runs);
    CHECK(std::memcmp(&mt.total_base, &est.total_base, sizeof(double)) == 0);
    CHECK(std::memcmp(&mt.total_high, &est.total_high, sizeof(double)) == 0);
    REQUIRE(mt.base.size() == est.base.size());
    CHECK(std::memcmp(mt.base.data(), est.base.data(), est.base.size() * sizeof(double)) == 0);
    CHECK(std::memcmp(mt.high.data(), est.high.data(), est.high.size() * sizeof(double)) == 0);
  }
  // A sample that cannot be loaded is reported, with or without threads.
  calib::SampleSource broken = samples;
  broken.load = [samples](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    if (i == 3) return InvalidArgument("sample 3 is unreadable");
    return samples.load(i);
  };
  for (const uint32_t threads : {1u, 2u}) {
    analyze::NoiseEstimate bad;
    const Status st = analyze::EstimateNoise(p.low, p.low, p.high, p.units, {g.outputs()[0]}, {}, broken, threads, &bad);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("sample 3"));
  }
  // One that throws on the helper thread: an error, not a terminated process.
  calib::SampleSource throwing = samples;
  throwing.load = [samples](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    if (i == 2) throw std::bad_alloc();
    return samples.load(i);
  };
  analyze::NoiseEstimate thrown;
  const Status st = analyze::EstimateNoise(p.low, p.low, p.high, p.units, {g.outputs()[0]}, {}, throwing, 2, &thrown);
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == StatusCode::kOutOfMemory);
}

TEST_CASE("mixed precision meets its budget on held-out samples within its layer cap and work bound",
          "[analyze][mixed]") {
  const Graph g = Chain({3, 6});
  const auto samples = calib::SyntheticSamples(g, 48, 7).value();
  const auto held_out = calib::SyntheticSamples(g, 32, 1234).value();

  // The two extremes (percent mode simulates both).
  analyze::MixedOptions probe;
  probe.mode = analyze::MixedMode::kPercent;
  probe.value = 0;
  Graph pg = g;
  analyze::MixedReport pr;
  REQUIRE(analyze::ChooseMixedPrecision(&pg, samples, probe, &pr).ok());
  CHECK_FALSE(pr.high_estimated);
  REQUIRE(pr.sqnr_high > pr.sqnr_base + 10);

  analyze::MixedOptions m;
  m.mode = analyze::MixedMode::kBudget;
  m.value = pr.sqnr_base + 8;
  size_t calls = 0;
  m.progress = [&](size_t, size_t, const char*) { ++calls; };
  Graph mg = g;
  analyze::MixedReport mr;
  REQUIRE(analyze::ChooseMixedPrecision(&mg, samples, m, &mr).ok());
  INFO(analyze::MixedText(mr));
  CHECK(mr.met);
  CHECK(mr.sqnr_chosen >= m.value);
  CHECK(mr.high_estimated);
  CHECK(calls > 0);
  // At most 20% of the layers (the input, ten FullyConnected, ten Relu).
  CHECK(mr.units == 21);
  CHECK(mr.promoted_layers >= 1);
  CHECK(mr.promoted_layers <= 4);
  // The model as returned, at its median sample: the figure the accuracy
  // tables give, on the samples it was calibrated and scored on.
  const std::vector<double> per_sample = PerSampleSqnr(g, mg, samples);
  CHECK(mr.returned_median_sqnr == Approx(Median(per_sample)).epsilon(1e-6));
  CHECK(mr.returned_median_sqnr > mr.returned_sqnr);
  CHECK_THAT(analyze::MixedText(mr), Catch::Contains("dB at the median sample"));
  CHECK(analyze::MixedJson(mr).find("\"returned_median_sqnr_db\":") != std::string::npos);
  // And its worst samples, by their place in the input: the three lowest
  // of the per-sample figures, worst first.
  std::vector<size_t> order(per_sample.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return per_sample[a] < per_sample[b]; });
  REQUIRE(mr.returned_worst_samples.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    INFO("worst sample " << k);
    CHECK(mr.returned_worst_samples[k].first == order[k]);
    CHECK(mr.returned_worst_samples[k].second == Approx(per_sample[order[k]]).epsilon(1e-6));
  }
  CHECK(per_sample[order[0]] < per_sample[order[2]]);  // the order is the samples', not an artifact of ties
  const std::string first = "#" + std::to_string(order[0]) + " ";
  CHECK_THAT(analyze::MixedText(mr), Catch::Contains("the worst samples (input-list order, from 0): " + first));
  CHECK(analyze::MixedJson(mr).find("\"returned_worst_samples\":[{\"sample\":" + std::to_string(order[0]) + ",") !=
        std::string::npos);
  // On samples the search never saw, the chosen model holds the budget and
  // the base misses it.
  const double chosen = HeldOutSqnr(g, mg, held_out);
  const double base = HeldOutSqnr(g, pg, held_out);
  INFO("held out: chosen " << chosen << " dB, base " << base << " dB, budget " << m.value);
  CHECK(chosen >= m.value);
  CHECK(base < m.value);
  // Work: at most ten passes over the samples, calibrations included
  // (the benchmark measures the time, benchmarks/accuracy_vs_plain.py).
  CHECK(mr.sample_runs <= 10.0 * static_cast<double>(samples.count));
  CHECK(mr.evaluations <= 1 + m.max_evaluations);
  CHECK(analyze::MixedJson(mr).find("\"sample_runs\":") != std::string::npos);

  // A budget out of reach within the cap: not met, the best configuration
  // found within it kept, still at most 20% of the layers.
  analyze::MixedOptions far = m;
  far.value = pr.sqnr_high + 20;
  far.raise_base = false;  // promotions only (the test below raises the base)
  Graph fg = g;
  analyze::MixedReport fr;
  REQUIRE(analyze::ChooseMixedPrecision(&fg, samples, far, &fr).ok());
  CHECK_FALSE(fr.met);
  CHECK(fr.promoted_layers <= 4);
  CHECK(fr.sqnr_chosen >= fr.sqnr_base);
  // A cap out of range is refused.
  far.max_layers_percent = 120;
  CHECK_FALSE(analyze::ChooseMixedPrecision(&fg, samples, far, &fr).ok());
}

TEST_CASE("a configuration's weights take their values and their ops' biases with their encodings",
          "[analyze][mixed]") {
  const Graph g = Chain({3});
  const auto samples = calib::SyntheticSamples(g, 8, 5).value();
  calib::Options low_o, high_o;
  high_o.act_bitwidth = high_o.weights_bitwidth = 16;
  Graph low = g, high = g;
  calib::Report rep;
  REQUIRE(calib::Calibrate(&low, samples, low_o, &rep).ok());
  REQUIRE(calib::Calibrate(&high, samples, high_o, &rep).ok());
  calib::BiasCorrectionReport bc;
  REQUIRE(calib::CorrectBiases(&low, g, samples, 1, {}, &bc).ok());
  REQUIRE(calib::CorrectBiases(&high, g, samples, 1, {}, &bc).ok());
  const TensorId w3 = *g.FindTensor("fc3_w"), b3 = *g.FindTensor("fc3_b"), b4 = *g.FindTensor("fc4_b");
  // Bias correction gave each precision its own biases.
  REQUIRE(low.tensor(b3).data != high.tensor(b3).data);
  auto mix = analyze::detail::WithEncodingsOf(low, high, {w3});
  REQUIRE(mix.ok());
  CHECK(mix.value().tensor(w3).encoding == high.tensor(w3).encoding);
  CHECK(mix.value().tensor(b3).data == high.tensor(b3).data);
  CHECK(mix.value().tensor(b4).data == low.tensor(b4).data);
}

TEST_CASE("mixed precision with bias correction corrects each configuration as a whole", "[analyze][mixed]") {
  const Graph g = Chain({3, 6});
  const auto samples = calib::SyntheticSamples(g, 16, 7).value();
  const auto held_out = calib::SyntheticSamples(g, 32, 1234).value();
  analyze::MixedOptions m;
  m.mode = analyze::MixedMode::kBudget;
  m.analysis.calibration.bias_correction = true;
  m.value = 1000;  // out of reach: the best configuration within the cap
  m.raise_base = false;
  Graph mg = g;
  analyze::MixedReport mr;
  REQUIRE(analyze::ChooseMixedPrecision(&mg, samples, m, &mr).ok());
  INFO(analyze::MixedText(mr));
  CHECK(mr.promoted_layers >= 1);
  // The result is the mix corrected against the float model: correcting it
  // again (from the float biases) changes nothing.
  Graph again = mg;
  calib::BiasCorrectionReport bc;
  REQUIRE(calib::CorrectBiases(&again, g, samples, 1, {}, &bc).ok());
  CHECK(bc.corrected == 10);
  for (int k = 0; k < 10; ++k) {
    const TensorId b = *g.FindTensor("fc" + std::to_string(k) + "_b");
    const auto& x = mg.tensor(b).data;
    const auto& y = again.tensor(b).data;
    CHECK(std::memcmp(x->data(), y->data(), x->size()) == 0);
  }
  // And it holds on samples the search never saw at least as well as the
  // base with the same correction.
  Graph base = g;
  calib::Options o;
  o.bias_correction = true;
  calib::Report rep;
  REQUIRE(calib::Calibrate(&base, samples, o, &rep).ok());
  CHECK(HeldOutSqnr(g, mg, held_out) > HeldOutSqnr(g, base, held_out));
}

namespace {

// Ten FullyConnected layers of width 24 whose inputs are one random
// direction plus small noise, with 4-bit weights: every layer's rounding
// adds a like share of the output error along that direction, so no few
// promotions remove it, while adaptive rounding and bias correction take
// most of it out of every layer at once. Near-orthogonal layers (identity
// plus a little noise) keep the signal's scale.
Graph SpreadChain() { return testing::FullyConnectedChain("spread", 10, 1.f, 0.3f); }

}  // namespace

TEST_CASE("a budget the promotions miss raises the base by measurement and is met on held-out samples",
          "[analyze][mixed]") {
  const Graph g = SpreadChain();
  const auto samples = testing::DirectionSamples(32, 1), held_out = testing::DirectionSamples(32, 99);
  analyze::MixedOptions m;
  m.mode = analyze::MixedMode::kBudget;
  m.analysis.calibration.weights_bitwidth = 4;
  m.analysis.calibration.per_row = true;
  // The promotions alone: the best within the cap, short of a budget 6 dB
  // above the base.
  m.raise_base = false;
  // One search of g: the graph it returns and its report.
  auto search = [&](const analyze::MixedOptions& o, Graph* out, analyze::MixedReport* r) {
    *out = g;
    REQUIRE(analyze::ChooseMixedPrecision(out, samples, o, r).ok());
  };
  Graph base_graph, pg, mg, fg, eg;
  analyze::MixedReport probe, pr, mr, fr, er;
  m.value = 1000;
  search(m, &base_graph, &probe);
  m.value = probe.sqnr_base + 6;
  search(m, &pg, &pr);
  INFO(analyze::MixedText(pr));
  REQUIRE_FALSE(pr.met);
  CHECK_FALSE(pr.techniques_measured);
  CHECK(pr.promoted_layers <= 4);  // 20% of 11 layers (the input and ten FullyConnected), at least one
  // The same budget, the base raised (the default).
  m.raise_base = true;
  search(m, &mg, &mr);
  INFO(analyze::MixedText(mr));
  CHECK(mr.techniques_measured);
  CHECK(mr.base_raised);
  CHECK(mr.met);
  CHECK(mr.sqnr_chosen >= m.value);
  CHECK(mr.promoted_layers <= 2);
  CHECK(mr.promotions_only_sqnr == pr.sqnr_chosen);
  CHECK(mr.base_techniques.find("adaptive rounding") != std::string::npos);
  const std::string text = analyze::MixedText(mr), json = analyze::MixedJson(mr);
  CHECK(text.find("the promotions alone:") != std::string::npos);
  CHECK(text.find("searched again from W4A8 with " + mr.base_techniques) != std::string::npos);
  CHECK(json.find("\"base_raised\":true") != std::string::npos);
  CHECK(json.find("\"techniques\":{") != std::string::npos);
  // On samples neither search saw, the raised base's result beats the
  // promotions alone by most of the margin.
  const double raised = HeldOutSqnr(g, mg, held_out), promotions = HeldOutSqnr(g, pg, held_out);
  INFO("held out: raised " << raised << " dB, promotions only " << promotions << " dB, budget " << m.value);
  CHECK(raised > promotions + 3);
  CHECK(raised >= m.value - 1);
  // A budget out of reach either way: the better model as returned is kept.
  analyze::MixedOptions far = m;
  far.value = 1000;
  search(far, &fg, &fr);
  INFO(analyze::MixedText(fr));
  CHECK_FALSE(fr.met);
  CHECK(fr.techniques_measured);
  CHECK(fr.base_raised);  // the weights' rounding is the error here: the raised base is better
  CHECK(fr.returned_sqnr > fr.promotions_only_returned);
  CHECK(HeldOutSqnr(g, fg, held_out) > promotions + 3);
  // A budget the promotions meet measures nothing.
  analyze::MixedOptions easy = m;
  easy.value = probe.sqnr_base - 1;
  search(easy, &eg, &er);
  CHECK(er.met);
  CHECK_FALSE(er.techniques_measured);
}

TEST_CASE("a budget not met: the warning says when the median sample meets it and names the worst samples",
          "[analyze][mixed]") {
  analyze::MixedReport r;
  r.units = 209;
  r.promoted = std::vector<std::string>(41, "op (activations)");
  r.sqnr_chosen = 15.3;
  r.samples = 24;
  r.returned_sqnr = 14.02;
  r.returned_median_sqnr = 29.04;
  r.returned_worst_samples = {{7, 3.1}, {19, 8.25}, {2, 11.0}};
  const std::string held = analyze::MixedBudgetWarning(r, 25, 20, /*base_searches=*/true);
  CHECK_THAT(held, Catch::Contains("budget of 25.00 dB is not met even with 41 of 209 units promoted (15.30 dB"));
  CHECK_THAT(held, Catch::Contains("meets it at the median sample (29.04 dB)"));
  CHECK_THAT(held, Catch::Contains("worse half's aggregate (14.02 dB)"));
  CHECK_THAT(held, Catch::Contains("from 0: #7 3.10 dB, #19 8.25 dB, #2 11.00 dB)"));
  CHECK_THAT(held, Catch::Contains("Fix: if the median sample is what counts, use the model as it is"));
  CHECK_THAT(held, !Catch::Contains("--bias_correction"));
  // The median misses too: no such claim, and the base can still be raised.
  r.returned_median_sqnr = 24.9;
  const std::string missed = analyze::MixedBudgetWarning(r, 25, 20, /*base_searches=*/false);
  CHECK_THAT(missed, !Catch::Contains("median"));
  CHECK_THAT(missed, !Catch::Contains("#7"));
  CHECK_THAT(missed, Catch::Contains("Fix: raise the base it promotes from (--bias_correction --adaptive_rounding"));
  CHECK_THAT(missed, Catch::Contains("promote a fixed share instead (--mixed_precision percent=P), or lower the budget"));
}
