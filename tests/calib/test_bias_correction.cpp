// Empirical bias correction: the input first moment (w . mean(x) + b is the
// op's mean output), the correction itself (a quantized op's output mean per
// channel back on the float model's, downstream ops corrected on corrected
// inputs), measuring on the graph as a `realize` hook makes it run, and the
// calibration option (note, samples needed, an error leaving the graph),
// through the C API with and without a target.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "calib/bias_correction.h"
#include "capi/capi_internal.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_target.h"
#include "calib/calib_test_models.h"
#include "calib/calibrate.h"
#include "exec/executor.h"
#include "exec/input_gram.h"

using namespace qairt;
using namespace qairt::calib;
using testing::Floats;

namespace {

using testing::FloatBytes;
const auto& Normal = testing::NormalFloats;

// Output `k` of one run, float or with quantization simulated.
std::vector<float> Run(const Graph& g, const std::vector<float>& x, bool simulate, size_t k = 0) {
  auto ex = exec::Executor::Create(g, exec::Options{1, simulate});
  REQUIRE(ex.ok());
  const std::vector<uint8_t> b = FloatBytes(x);
  auto out = ex.value()->Run({b.data()}, {b.size()});
  REQUIRE(out.ok());
  std::vector<float> y(out.value()[k].bytes.size() / 4);
  std::memcpy(y.data(), out.value()[k].bytes.data(), y.size() * 4);
  return y;
}

// Mean of each channel (axis 1 of [N, C, ...], or the last axis of a
// FullyConnected's [rows, C]) over `xs` run through `g`.
std::vector<double> ChannelMeans(const Graph& g, const std::vector<std::vector<float>>& xs, bool simulate,
                                 int64_t channels, bool channels_last, int64_t batch = 1, size_t k = 0) {
  std::vector<double> sum(static_cast<size_t>(channels), 0.0);
  size_t per = 0;
  for (const auto& x : xs) {
    const std::vector<float> y = Run(g, x, simulate, k);
    const size_t inner = channels_last ? 1 : y.size() / static_cast<size_t>(channels * batch);
    for (size_t i = 0; i < y.size(); ++i) sum[channels_last ? i % channels : (i / inner) % channels] += y[i];
    per += y.size() / static_cast<size_t>(channels);
  }
  for (double& s : sum) s /= static_cast<double>(per);
  return sum;
}

SampleSource SamplesOf(const std::vector<std::vector<float>>& xs) {
  SampleSource s;
  s.count = xs.size();
  s.load = [xs](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    return std::vector<std::vector<uint8_t>>{FloatBytes(xs[i])};
  };
  return s;
}

// x -> op(w, b) -> y: w . mean(x) + b from the gathered first moment is the
// mean of y the executor computes, per channel.
void CheckMean(const std::string& type, Shape x_shape, Shape w_shape, AttributeMap attrs) {
  INFO(type);
  Graph g("mean");
  const TensorId x = g.AddInput("x", DType::kFloat32, x_shape).value();
  const std::vector<float> w = Normal(static_cast<size_t>(*w_shape.element_count()), 0.f, 1.f, 5);
  const int64_t cout = w_shape[0].value;
  const std::vector<float> b = Normal(static_cast<size_t>(cout), 0.f, 1.f, 6);
  const TensorId wt = g.AddConstant("w", DType::kFloat32, w_shape, Floats(w)).value();
  const TensorId bt = g.AddConstant("b", DType::kFloat32, Shape{cout}, Floats(b)).value();
  const OpId op = g.AddOp(type, "op", {x, wt, bt}, {"y"}, attrs).value();
  REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
  auto m = exec::InputGram::For(g, op, /*second_moment=*/false);
  REQUIRE(m.ok());
  std::vector<std::vector<float>> xs;
  for (uint32_t s = 0; s < 3; ++s) {
    xs.push_back(Normal(static_cast<size_t>(*x_shape.element_count()), 0.5f, 1.f, 40 + s));
    REQUIRE(m.value().Add(xs.back().data(), xs.back().size()).ok());
  }
  const bool fc = type == "FullyConnected";
  const std::vector<double> direct = ChannelMeans(g, xs, false, cout, fc, fc ? 1 : x_shape[0].value);
  const exec::WeightRows& r = m.value().rows();
  REQUIRE(m.value().vectors() > 0);
  for (int64_t n = 0; n < cout; ++n) {
    const double* sum = m.value().sum(n / r.rows_per_group);
    double mean = b[static_cast<size_t>(n)];
    for (int64_t j = 0; j < r.k; ++j)
      mean += w[static_cast<size_t>(n * r.k + j)] * sum[j] / static_cast<double>(m.value().vectors());
    CHECK(mean == Approx(direct[static_cast<size_t>(n)]).margin(1e-4));
  }
}

// x[1,4,10,10] -> Conv2d(w1, b1) -> h -> Relu -> Conv2d(w2, b2) -> y, with
// coarse 4-bit weights whose rounding shifts each channel's mean.
Graph TwoConvs() {
  Graph g("two_convs");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 4, 10, 10}).value();
  const AttributeMap pads{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  const TensorId w1 = g.AddConstant("w1", DType::kFloat32, Shape{6, 4, 3, 3}, Floats(Normal(216, 0.f, 0.3f, 1))).value();
  const TensorId b1 = g.AddConstant("b1", DType::kFloat32, Shape{6}, Floats(Normal(6, 0.2f, 0.1f, 2))).value();
  const OpId c1 = g.AddOp("Conv2d", "conv1", {x, w1, b1}, {"h"}, pads).value();
  const OpId relu = g.AddOp("Relu", "relu", {g.op(c1).outputs[0]}, {"r"}).value();
  const TensorId w2 = g.AddConstant("w2", DType::kFloat32, Shape{3, 6, 3, 3}, Floats(Normal(162, 0.f, 0.3f, 3))).value();
  const TensorId b2 = g.AddConstant("b2", DType::kFloat32, Shape{3}, Floats(Normal(3, 0.f, 0.1f, 4))).value();
  const OpId c2 = g.AddOp("Conv2d", "conv2", {g.op(relu).outputs[0], w2, b2}, {"y"}, pads).value();
  REQUIRE(g.MarkOutput(g.op(c2).outputs[0]).ok());
  return g;
}

std::vector<std::vector<float>> Images(size_t n, uint32_t seed) {
  std::vector<std::vector<float>> xs;
  for (size_t i = 0; i < n; ++i) xs.push_back(Normal(400, 0.3f, 1.f, seed + static_cast<uint32_t>(i)));
  return xs;
}

Options Coarse() {
  Options o;
  o.weights_bitwidth = 4;
  o.act_bitwidth = 16;  // the weights' rounding is the shift measured
  return o;
}

double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST_CASE("InputGram: the first moment gives each channel's mean output", "[calib][bias_correction]") {
  CheckMean("FullyConnected", Shape{2, 3, 8}, Shape{5, 8}, {});
  CheckMean("Conv2d", Shape{2, 4, 9, 7}, Shape{6, 2, 3, 3},
            {{"strides", std::vector<int64_t>{2, 1}}, {"pads", std::vector<int64_t>{1, 0, 1, 2}},
             {"dilations", std::vector<int64_t>{1, 2}}, {"group", int64_t{2}}});
  CheckMean("DepthWiseConv2d", Shape{1, 3, 6, 6}, Shape{3, 1, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  CheckMean("Conv1d", Shape{1, 3, 11}, Shape{4, 3, 3}, {{"strides", std::vector<int64_t>{2}}});
}

TEST_CASE("Bias correction puts each channel's quantized mean on the float one", "[calib][bias_correction]") {
  const Graph float_graph = TwoConvs();
  const std::vector<std::vector<float>> xs = Images(6, 100);
  Graph plain = float_graph;
  Report rep;
  REQUIRE(Calibrate(&plain, SamplesOf(xs), Coarse(), &rep).ok());

  Graph corrected = plain;
  BiasCorrectionReport bc;
  REQUIRE(CorrectBiases(&corrected, float_graph, SamplesOf(xs), 1, {}, &bc).ok());
  CHECK(bc.corrected == 2);
  CHECK(bc.levels == 2);
  CHECK(bc.largest_shift > 0);
  CHECK(bc.skipped.empty());

  // The output's channel means: the float ones, within 1% of the shift
  // quantization had caused. Correcting only each op's own weight rounding
  // ((w - q(w)) . mean(x_quantized)) leaves 10%: the shift ReLU makes of
  // conv1's rounding noise reaches conv2 through its input.
  const std::vector<double> f = ChannelMeans(float_graph, xs, false, 3, false);
  const std::vector<double> before = ChannelMeans(plain, xs, true, 3, false);
  const std::vector<double> after = ChannelMeans(corrected, xs, true, 3, false);
  INFO("shift before " << MaxAbsDiff(before, f) << ", after " << MaxAbsDiff(after, f));
  CHECK(MaxAbsDiff(before, f) > 1e-2);
  CHECK(MaxAbsDiff(after, f) < 0.01 * MaxAbsDiff(before, f));

  // Correcting again starts from the float biases: the same result.
  Graph twice = corrected;
  BiasCorrectionReport bc2;
  REQUIRE(CorrectBiases(&twice, float_graph, SamplesOf(xs), 2, {}, &bc2).ok());
  for (const char* b : {"b1", "b2"}) {
    const Tensor& t1 = corrected.tensor(*corrected.FindTensor(b));
    const Tensor& t2 = twice.tensor(*twice.FindTensor(b));
    CHECK(std::memcmp(t1.data->data(), t2.data->data(), t1.data->size()) == 0);
  }
}

TEST_CASE("Bias correction measures the graph a realize hook makes", "[calib][bias_correction]") {
  const Graph float_graph = TwoConvs();
  const std::vector<std::vector<float>> xs = Images(4, 300);
  Graph plain = float_graph;
  Report rep;
  REQUIRE(Calibrate(&plain, SamplesOf(xs), Coarse(), &rep).ok());
  // What "runs": conv2's weight on a coarser grid than calibration gave it
  // (as target processing may widen a scale).
  const auto coarser = testing::CoarserWeight("w2", 2.5f);
  Graph measured = plain, unmeasured = plain;
  BiasCorrectionReport a, b;
  REQUIRE(CorrectBiases(&measured, float_graph, SamplesOf(xs), 1, coarser, &a).ok());
  REQUIRE(CorrectBiases(&unmeasured, float_graph, SamplesOf(xs), 1, {}, &b).ok());
  const std::vector<double> f = ChannelMeans(float_graph, xs, false, 3, false);
  const Graph run_measured = coarser(measured).value(), run_unmeasured = coarser(unmeasured).value();
  const double with_hook = MaxAbsDiff(ChannelMeans(run_measured, xs, true, 3, false), f);
  const double without = MaxAbsDiff(ChannelMeans(run_unmeasured, xs, true, 3, false), f);
  INFO("with the hook " << with_hook << ", without " << without);
  CHECK(with_hook < 0.25 * without);
}

TEST_CASE("Calibration with bias correction: note, samples needed, errors", "[calib][bias_correction]") {
  const std::vector<std::vector<float>> xs = Images(4, 500);
  Options o = Coarse();
  o.bias_correction = true;
  Graph g = TwoConvs();
  Report rep;
  REQUIRE(Calibrate(&g, SamplesOf(xs), o, &rep).ok());
  REQUIRE(!rep.notes.empty());
  CHECK(rep.notes.back().find("bias correction: 2 biases in 2 levels") == 0);
  const Graph original = TwoConvs();
  const Tensor& b1 = g.tensor(*g.FindTensor("b1"));
  const Tensor& b0 = original.tensor(*original.FindTensor("b1"));
  CHECK(std::memcmp(b1.data->data(), b0.data->data(), b0.data->size()) != 0);
  CHECK(g.tensor(*g.FindTensor("w1")).encoding.has_value());

  // Without samples it is refused, naming the option, and the graph is as it was.
  Graph h = TwoConvs();
  SampleSource none;
  auto st = CorrectBiases(&h, original, none, 1, {}, nullptr);
  CHECK(!st.ok());
  BiasCorrectionReport r;
  st = CorrectBiases(&h, original, none, 1, {}, &r);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("--bias_correction") != std::string::npos);
  // A failing hook fails the pass and leaves the graph unchanged.
  Graph calibrated = TwoConvs();
  REQUIRE(Calibrate(&calibrated, SamplesOf(xs), Coarse(), &rep).ok());
  Graph copy = calibrated;
  auto fails = [](const Graph&) -> Result<Graph> { return InvalidArgument("no kernels for 'conv2'"); };
  st = CorrectBiases(&copy, original, SamplesOf(xs), 1, fails, &r);
  CHECK(st.message().find("no kernels for 'conv2'") != std::string::npos);
  const Tensor& kept = copy.tensor(*copy.FindTensor("b2"));
  const Tensor& was = calibrated.tensor(*calibrated.FindTensor("b2"));
  CHECK(std::memcmp(kept.data->data(), was.data->data(), was.data->size()) == 0);
}

TEST_CASE("C API: QAIRT_CALIBRATION_BIAS_CORRECTION, with and without a target", "[calib][bias_correction][capi]") {
  const std::vector<std::vector<float>> xs = Images(4, 700);
  std::vector<const void*> ptrs;
  std::vector<size_t> sizes;
  for (const auto& x : xs) ptrs.push_back(x.data()), sizes.push_back(x.size() * sizeof(float));
  qairt_target_t* target = nullptr;
  REQUIRE(qairt_target_load_builtin("htp_v73", &target) == nullptr);
  auto bias_of = [](const qairt_graph_t* g) {
    const Tensor& t = g->graph.tensor(*g->graph.FindTensor("b2"));
    const auto* f = reinterpret_cast<const float*>(t.data->data());
    return std::vector<float>(f, f + 3);
  };
  auto calibrate = [&](uint32_t flags, const qairt_target_t* tgt, qairt_graph_t* g) {
    qairt_calibration_options co;
    qairt_calibration_options_init(&co);
    co.flags = flags;
    co.weights_bitwidth = 4;
    co.act_bitwidth = 8;
    co.target = tgt;
    return qairt_calibrate_buffers(g, xs.size(), ptrs.data(), sizes.data(), &co, nullptr);
  };
  auto* plain = new qairt_graph_t("p");
  auto* corrected = new qairt_graph_t("c");
  auto* on_target = new qairt_graph_t("t");
  plain->graph = corrected->graph = on_target->graph = TwoConvs();
  CHECK(calibrate(QAIRT_CALIBRATION_PER_CHANNEL, nullptr, plain) == nullptr);
  CHECK(calibrate(QAIRT_CALIBRATION_PER_CHANNEL | QAIRT_CALIBRATION_BIAS_CORRECTION, nullptr, corrected) == nullptr);
  CHECK(calibrate(QAIRT_CALIBRATION_PER_CHANNEL | QAIRT_CALIBRATION_BIAS_CORRECTION, target, on_target) == nullptr);
  CHECK(bias_of(plain) != bias_of(corrected));
  CHECK(bias_of(plain) != bias_of(on_target));
  // Measured on the target's processing, the correction differs from the
  // calibrated graph's (HTP's super groups and kernels change what runs).
  CHECK(bias_of(corrected) != bias_of(on_target));
  qairt_graph_destroy(plain);
  qairt_graph_destroy(corrected);
  qairt_graph_destroy(on_target);
  qairt_target_destroy(target);
}

TEST_CASE("Bias correction of ops of different widths reading one input", "[calib][bias_correction]") {
  // Grouped-query attention's k and v projections are narrower than q: the
  // mean of their shared input serves each with its own rows.
  Graph g("gqa");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{8, 16}).value();
  const char* names[] = {"q", "k"};
  const int64_t widths[] = {12, 5};
  for (int i = 0; i < 2; ++i) {
    const std::string n = names[i];
    const auto w = static_cast<size_t>(widths[i] * 16);
    const TensorId wt =
        g.AddConstant(n + "_w", DType::kFloat32, Shape{widths[i], 16}, Floats(Normal(w, 0.f, 0.3f, 10 + i))).value();
    const TensorId bt = g.AddConstant(n + "_b", DType::kFloat32, Shape{widths[i]},
                                      Floats(Normal(static_cast<size_t>(widths[i]), 0.f, 0.1f, 20 + i)))
                            .value();
    const OpId op = g.AddOp("FullyConnected", n, {x, wt, bt}, {n + "_out"}).value();
    REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
  }
  std::vector<std::vector<float>> xs;
  for (uint32_t s = 0; s < 4; ++s) xs.push_back(Normal(128, 0.5f, 1.f, 900 + s));
  Graph q = g;
  Report rep;
  REQUIRE(Calibrate(&q, SamplesOf(xs), Coarse(), &rep).ok());
  const Graph plain = q;
  BiasCorrectionReport bc;
  REQUIRE(CorrectBiases(&q, g, SamplesOf(xs), 1, {}, &bc).ok());
  CHECK(bc.corrected == 2);
  for (size_t k = 0; k < 2; ++k) {
    const std::vector<double> f = ChannelMeans(g, xs, false, widths[k], true, 1, k);
    const double before = MaxAbsDiff(ChannelMeans(plain, xs, true, widths[k], true, 1, k), f);
    const double after = MaxAbsDiff(ChannelMeans(q, xs, true, widths[k], true, 1, k), f);
    INFO(names[k] << ": before " << before << ", after " << after);
    // What is left is the outputs' clipping: their ranges are the float
    // model's, and 4-bit weights spread the quantized outputs wider.
    CHECK(after < 0.1 * before);
  }
}

TEST_CASE("Bias correction does not depend on the thread count", "[calib][bias_correction][threads]") {
  const Graph float_graph = TwoConvs();
  const std::vector<std::vector<float>> xs = Images(5, 1000);
  Graph plain = float_graph;
  Report rep;
  REQUIRE(Calibrate(&plain, SamplesOf(xs), Coarse(), &rep).ok());
  Graph one = plain, two = plain;
  BiasCorrectionReport r1, r2;
  REQUIRE(CorrectBiases(&one, float_graph, SamplesOf(xs), 1, {}, &r1).ok());
  REQUIRE(CorrectBiases(&two, float_graph, SamplesOf(xs), 2, {}, &r2).ok());
  for (const char* b : {"b1", "b2"}) {
    const Tensor& t1 = one.tensor(*one.FindTensor(b));
    const Tensor& t2 = two.tensor(*two.FindTensor(b));
    CHECK(std::memcmp(t1.data->data(), t2.data->data(), t1.data->size()) == 0);
  }
}
