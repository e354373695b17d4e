// Calibration techniques chosen by measurement (analyze/auto_quant.h), and
// the 16-bit outputs of fixed-range ops (calib::Options::wide_fixed_ranges).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analyze/analysis_common.h"
#include "analyze/auto_quant.h"
#include "calib/calibrate.h"
#include "calib/sample_eval.h"
#include "capi/capi_internal.h"
#include "qairt/qairt_analyze.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_target.h"
#include "../hostile/hostile_util.h"
#include "../passes/pass_test_util.h"
#include "analysis_test_util.h"

using namespace qairt;

namespace {

using testing::FloatData;

// x[1, 32] -> FullyConnected (weights scaled by `gain`) -> Softmax. A small
// gain gives near-uniform probabilities (about 1/32 each), a large one
// peaked ones that reach 1.
Graph Attention(float gain) {
  Graph g("attention");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 32}).value();
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> w(32 * 32), b(32, 0.f);
  for (float& v : w) v = gain * nd(rng) / std::sqrt(32.f);
  const TensorId wt = g.AddConstant("w", DType::kFloat32, Shape{32, 32}, FloatData(w)).value();
  const TensorId bt = g.AddConstant("b", DType::kFloat32, Shape{32}, FloatData(b)).value();
  const TensorId s = g.op(g.AddOp("FullyConnected", "scores", {x, wt, bt}, {"s"}).value()).outputs[0];
  const TensorId p = g.op(g.AddOp("Softmax", "softmax", {s}, {"p"}).value()).outputs[0];
  REQUIRE(g.MarkOutput(p).ok());
  return g;
}

// Two FullyConnected layers whose inputs are strongly correlated (every
// sample is one random direction plus small noise) and whose biases are
// large: the weights' rounding adds up along that direction and shifts the
// output mean, what adaptive rounding and bias correction remove.
Graph Correlated() { return testing::FullyConnectedChain("correlated", 2, 0.f, 1.f); }

calib::SampleSource CorrelatedSamples(size_t count, uint32_t seed) { return testing::DirectionSamples(count, seed); }

// Writes each sample as a raw file in `box` and `name` listing them.
void WriteSampleList(hostile::Sandbox& box, const calib::SampleSource& samples, const std::string& name) {
  std::string list;
  for (size_t i = 0; i < samples.count; ++i) {
    const auto bytes = samples.load(i).value()[0];
    const std::string file = "s" + std::to_string(i) + ".raw";
    std::FILE* f = std::fopen(box.In(file).c_str(), "wb");
    REQUIRE(f);
    REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    std::fclose(f);
    list += file + "\n";
  }
  std::FILE* f = std::fopen(box.In(name).c_str(), "w");
  REQUIRE(f);
  std::fputs(list.c_str(), f);
  std::fclose(f);
}

double Sqnr(const Graph& float_graph, const Graph& quantized, const calib::SampleSource& samples) {
  auto ref = calib::RunSamples(float_graph, samples, false);
  auto got = calib::RunSamples(quantized, samples, true);
  REQUIRE(ref.ok());
  REQUIRE(got.ok());
  return calib::Worst(ref.value(), got.value()).sqnr_db;
}

uint32_t BitsOf(const Graph& g, const char* tensor) {
  const auto& e = g.tensor(*g.FindTensor(tensor)).encoding;
  REQUIRE(e);
  return e->effective_bitwidth();
}

}  // namespace

TEST_CASE("wide fixed ranges: 16 bits for the outputs of fixed-range ops only, with 8-bit activations",
          "[calib][auto_quant]") {
  const calib::FixedOutputRange softmax{"Softmax", 0.0, 1.0};
  auto calibrate = [&](const Graph& model, bool wide, uint32_t act_bits) {
    Graph g = model;
    calib::Options o;
    o.act_bitwidth = act_bits;
    if (wide) o.wide_fixed_ranges = {softmax};
    calib::Report rep;
    REQUIRE(calib::Calibrate(&g, calib::SyntheticSamples(g, 8, 1).value(), o, &rep).ok());
    if (wide)
      CHECK(std::any_of(rep.notes.begin(), rep.notes.end(),
                        [](const std::string& n) { return n.find("wide fixed ranges") != std::string::npos; }));
    return g;
  };
  const Graph uniform = Attention(0.05f), peaked = Attention(20.f);
  const Graph widened = calibrate(uniform, true, 8);
  CHECK(BitsOf(widened, "p") == 16);
  CHECK(BitsOf(widened, "s") == 8);  // only the fixed-range output
  CHECK(BitsOf(calibrate(uniform, false, 8), "p") == 8);
  // Peaked probabilities too (most of them are still small).
  CHECK(BitsOf(calibrate(peaked, true, 8), "p") == 16);
  // 16-bit activations: nothing to widen.
  CHECK(BitsOf(calibrate(uniform, true, 16), "p") == 16);
}

TEST_CASE("wide fixed ranges as the target runs them: the 16-bit Softmax kept, its output far more accurate",
          "[calib][auto_quant]") {
  const Graph g = Attention(0.05f);
  const calib::SampleSource samples = calib::SyntheticSamples(g, 8, 2).value();
  const auto realize = capi::RealizeFor(testing::Builtin("htp_v73"));
  auto run = [&](bool wide) {
    Graph q = g;
    calib::Options o;
    if (wide) o.wide_fixed_ranges = {{"Softmax", 0.0, 1.0}};
    calib::Report rep;
    REQUIRE(calib::Calibrate(&q, samples, o, &rep).ok());
    auto r = realize(q);
    REQUIRE(r.ok());
    return std::move(r).value();
  };
  const Graph narrow = run(false), wide = run(true);
  auto softmax_bits = [](const Graph& q) {
    for (OpId id = 0; id < q.op_count(); ++id)
      if (q.op(id).type == "Softmax") return DTypeBits(q.tensor(q.op(id).outputs[0]).dtype);
    return 0u;
  };
  CHECK(softmax_bits(wide) == 16);
  CHECK(softmax_bits(narrow) == 8);
  // Probabilities near 1/32 on the target's 8-bit [0, 1] grid keep about 8 levels.
  CHECK(Sqnr(g, wide, samples) > Sqnr(g, narrow, samples) + 20);
}

TEST_CASE("wide fixed ranges through the C API: the target's fixed-range ops, a target required",
          "[calib][auto_quant][capi]") {
  qairt_target_t* target = nullptr;
  REQUIRE(qairt_target_load_builtin("htp_v73", &target) == nullptr);
  const auto ranges = capi::FixedOutputRangesOf(*capi::TargetOf(target));
  auto has = [&](const char* op) {
    return std::any_of(ranges.begin(), ranges.end(), [&](const calib::FixedOutputRange& f) {
      return f.op_type == op && f.lo == 0.0 && f.hi == 1.0;
    });
  };
  CHECK(has("Softmax"));
  CHECK(has("Sigmoid"));
  CHECK_FALSE(has("Conv2d"));
  qairt_calibration_options co;
  qairt_calibration_options_init(&co);
  co.flags = QAIRT_CALIBRATION_WIDE_FIXED_RANGES;
  calib::Options o;
  qairt_status_t* s = capi::ToCalibrationOptions(&co, &o);
  REQUIRE(s != nullptr);
  CHECK(std::string(qairt_status_message(s)).find("needs qairt_calibration_options.target") != std::string::npos);
  qairt_status_free(s);
  co.target = target;
  REQUIRE(capi::ToCalibrationOptions(&co, &o) == nullptr);
  CHECK(o.wide_fixed_ranges.size() == ranges.size());
  qairt_target_destroy(target);
}

TEST_CASE("auto quant: every technique tried, the best chosen, and it holds on fresh samples",
          "[analyze][auto_quant]") {
  const Graph g = Correlated();
  const calib::SampleSource samples = CorrelatedSamples(32, 1), fresh = CorrelatedSamples(32, 99);
  analyze::AutoQuantOptions a;
  a.analysis.calibration.per_row = true;
  a.analysis.calibration.weights_bitwidth = 4;  // the weights' rounding dominates
  calib::Options chosen;
  analyze::AutoQuantReport r;
  REQUIRE(analyze::ChooseCalibration(g, samples, a, &chosen, &r).ok());
  REQUIRE(r.trials.size() == 6);  // no fixed-range op: no seventh
  std::set<std::string> labels;
  for (const auto& t : r.trials) labels.insert(t.label);
  CHECK(labels.size() == 6);
  CHECK(r.trials[0].label == "none (the options as given)");
  CHECK(r.held_out == 32);  // each half held out once
  CHECK(r.folds == 2);
  // The first within 0.05 dB of the best.
  double best = -1e9;
  for (const auto& t : r.trials) best = std::max(best, t.sqnr_db);
  for (size_t i = 0; i < r.chosen; ++i) CHECK(r.trials[i].sqnr_db < best - 0.05);
  CHECK(r.trials[r.chosen].sqnr_db >= best - 0.05);
  // Here the weights' rounding matters: a technique beats the options as given.
  CHECK(r.chosen != 0);
  CHECK(r.trials[r.chosen].sqnr_db > r.trials[0].sqnr_db + 1.0);
  CHECK(chosen.per_row);  // the user's options are kept
  // Calibrated on every sample, the chosen options beat the given ones on samples neither saw.
  Graph given_graph = g, chosen_graph = g;
  calib::Report rep;
  REQUIRE(calib::Calibrate(&given_graph, samples, a.analysis.calibration, &rep).ok());
  REQUIRE(calib::Calibrate(&chosen_graph, samples, chosen, &rep).ok());
  CHECK(Sqnr(g, chosen_graph, fresh) > Sqnr(g, given_graph, fresh) + 1.0);
  const std::string text = analyze::AutoQuantText(r);
  CHECK(text.find("<- chosen") != std::string::npos);
  CHECK(text.find(r.trials[r.chosen].label) != std::string::npos);
}

TEST_CASE("auto quant: techniques the user turned on stay on; a fixed-range candidate where the target has one",
          "[analyze][auto_quant]") {
  const Graph g = Attention(0.05f);
  const calib::SampleSource samples = calib::SyntheticSamples(g, 8, 4).value();
  analyze::AutoQuantOptions a;
  a.analysis.calibration.bias_correction = true;
  a.analysis.calibration.act_bitwidth = 8;
  a.fixed_ranges = {{"Softmax", 0.0, 1.0}};
  calib::Options chosen;
  analyze::AutoQuantReport r;
  REQUIRE(analyze::ChooseCalibration(g, samples, a, &chosen, &r).ok());
  // Bias correction in every configuration: the ones without it fold into ones with it.
  for (const auto& t : r.trials) CHECK(t.options.bias_correction);
  // Six candidates with bias correction added are four distinct ones, then the best with 16-bit fixed ranges.
  CHECK(r.trials.size() == 5);
  CHECK(r.trials.back().label.find("16-bit fixed ranges") != std::string::npos);
  CHECK_FALSE(r.trials.back().options.wide_fixed_ranges.empty());
  CHECK(chosen.bias_correction);
}

TEST_CASE("qairt_choose_calibration: arguments checked, the chosen options written back", "[analyze][auto_quant][capi]") {
  qairt_calibration_options small;
  qairt_calibration_options_init(&small);
  small.struct_size = 8;
  qairt_analysis_report_t* r = nullptr;
  auto* graph = new qairt_graph_t("g");
  graph->graph = Correlated();
  qairt_status_t* s = qairt_choose_calibration(nullptr, "list.txt", nullptr, nullptr, &r);
  REQUIRE(s != nullptr);
  qairt_status_free(s);
  s = qairt_choose_calibration(graph, nullptr, nullptr, nullptr, &r);
  REQUIRE(s != nullptr);
  qairt_status_free(s);
  s = qairt_choose_calibration(graph, "list.txt", nullptr, &small, &r);
  REQUIRE(s != nullptr);
  CHECK(std::string(qairt_status_message(s)).find("chosen->struct_size") != std::string::npos);
  qairt_status_free(s);
  s = qairt_choose_calibration(graph, "/nonexistent/list.txt", nullptr, nullptr, &r);
  REQUIRE(s != nullptr);
  CHECK(std::string(qairt_status_message(s)).find("/nonexistent/list.txt") != std::string::npos);
  qairt_status_free(s);
  // A good call: the chosen options are the user's with the chosen techniques.
  hostile::Sandbox box;
  WriteSampleList(box, CorrelatedSamples(12, 7), "list.txt");
  qairt_calibration_options given, chosen;
  qairt_calibration_options_init(&given);
  given.flags = QAIRT_CALIBRATION_PER_ROW;
  std::memset(&chosen, 0xab, sizeof chosen);
  chosen.struct_size = sizeof chosen;
  qairt_analysis_options a;
  qairt_analysis_options_init(&a);
  a.calibration = &given;
  REQUIRE(qairt_choose_calibration(graph, box.In("list.txt").c_str(), &a, &chosen, &r) == nullptr);
  qairt_analysis_summary sum;
  std::memset(&sum, 0, sizeof sum);
  sum.struct_size = sizeof sum;
  REQUIRE(qairt_analysis_report_summary(r, &sum) == nullptr);
  CHECK(sum.kind == QAIRT_ANALYSIS_AUTO_QUANT);
  CHECK(sum.units == qairt_analysis_report_item_count(r));
  CHECK(sum.sqnr_chosen_db >= sum.sqnr_base_db);
  std::string chosen_label;
  for (size_t i = 0; i < qairt_analysis_report_item_count(r); ++i) {
    qairt_analysis_item it;
    std::memset(&it, 0, sizeof it);
    it.struct_size = sizeof it;
    REQUIRE(qairt_analysis_report_item(r, i, &it) == nullptr);
    if (!it.kept_off) {
      CHECK(chosen_label.empty());
      chosen_label = it.name;
      CHECK(it.value == Approx(sum.sqnr_chosen_db));
    }
  }
  REQUIRE_FALSE(chosen_label.empty());
  auto has = [&](const char* what) { return chosen_label.find(what) != std::string::npos; };
  CHECK(bool(chosen.flags & QAIRT_CALIBRATION_PER_ROW));
  CHECK(bool(chosen.flags & QAIRT_CALIBRATION_ADAPTIVE_ROUNDING) == has("adaptive rounding"));
  CHECK(bool(chosen.flags & QAIRT_CALIBRATION_BIAS_CORRECTION) == has("bias correction"));
  CHECK((chosen.param_method == QAIRT_CALIBRATION_SEQMSE) == has("seqmse"));
  CHECK((chosen.act_method == QAIRT_CALIBRATION_MSE) == has("mse activation"));
  CHECK(chosen.act_bitwidth == given.act_bitwidth);
  CHECK(chosen.weights_bitwidth == given.weights_bitwidth);
  char text[4096];
  size_t len = 0;
  REQUIRE(qairt_analysis_report_render(r, QAIRT_ANALYSIS_JSON, text, sizeof text, &len) == nullptr);
  CHECK(std::string(text).find("\"trials\":[") != std::string::npos);
  qairt_analysis_report_destroy(r);
  qairt_graph_destroy(graph);
}

TEST_CASE("qairt_mixed_precision: mixed_flags checked; a budget the promotions miss measures the techniques unless "
          "PROMOTIONS_ONLY",
          "[analyze][mixed][capi]") {
  hostile::Sandbox box;
  WriteSampleList(box, CorrelatedSamples(12, 7), "list.txt");
  qairt_calibration_options given;
  qairt_calibration_options_init(&given);
  given.weights_bitwidth = 4;
  qairt_analysis_options a;
  qairt_analysis_options_init(&a);
  CHECK(a.mixed_flags == 0);
  a.calibration = &given;
  a.mixed_mode = QAIRT_MIXED_BUDGET;
  a.mixed_value = 400;  // out of reach
  auto run = [&](std::string* text) -> std::string {
    auto* graph = new qairt_graph_t("g");
    graph->graph = Correlated();
    qairt_analysis_report_t* r = nullptr;
    qairt_status_t* s = qairt_mixed_precision(graph, box.In("list.txt").c_str(), &a, &r);
    qairt_graph_destroy(graph);
    if (s) {
      std::string m = qairt_status_message(s);
      qairt_status_free(s);
      return m;
    }
    std::vector<char> buf(1 << 16);
    size_t len = 0;
    REQUIRE(qairt_analysis_report_render(r, QAIRT_ANALYSIS_TEXT, buf.data(), buf.size(), &len) == nullptr);
    *text = buf.data();
    qairt_analysis_report_destroy(r);
    return "";
  };
  std::string text;
  a.mixed_flags = 2;
  CHECK(run(&text).find("mixed_flags") != std::string::npos);
  a.mixed_flags = 0;
  a.reserved2 = 1;
  CHECK(run(&text).find("reserved2") != std::string::npos);
  a.reserved2 = 0;
  REQUIRE(run(&text).empty());
  CHECK(text.find("the promotions alone:") != std::string::npos);
  CHECK(text.find("auto quant:") != std::string::npos);
  a.mixed_flags = QAIRT_MIXED_PROMOTIONS_ONLY;
  REQUIRE(run(&text).empty());
  CHECK(text.find("budget NOT met") != std::string::npos);
  CHECK(text.find("the promotions alone:") == std::string::npos);
  // A caller built against 1.19 (no mixed_flags): the default.
  a.mixed_flags = 0;
  a.struct_size = offsetof(qairt_analysis_options, mixed_flags);
  REQUIRE(run(&text).empty());
  CHECK(text.find("the promotions alone:") != std::string::npos);
}
