// Calibration: range search, input_list checks, encodings from samples,
// determinism across thread counts, accuracy comparison.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "calib/calib_test_models.h"
#include "calib/calibrate.h"
#include "calib/compare.h"
#include "calib/sample_eval.h"
#include "passes/pass_manager.h"
#include "quant/quantize.h"
#include "target/target_descriptor.h"

using namespace qairt;
using namespace qairt::calib;

namespace {

using testing::Floats;
using testing::SmallMlp;

SampleSource Samples(size_t n, float amp = 1.f) {
  SampleSource s;
  s.count = n;
  s.load = [amp](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    std::mt19937 rng(static_cast<uint32_t>(1000 + i));
    std::normal_distribution<float> d(0.f, amp);
    std::vector<float> v(16);
    for (auto& x : v) x = d(rng);
    std::vector<uint8_t> b(64);
    std::memcpy(b.data(), v.data(), 64);
    return std::vector<std::vector<uint8_t>>{b};
  };
  return s;
}

std::pair<double, double> RealRange(const Encoding& e) {
  const QuantRange r = QuantRangeOf(e.dtype, e.effective_bitwidth());
  return {(r.qmin + e.offsets[0]) * static_cast<double>(e.scales[0]),
          (r.qmax + e.offsets[0]) * static_cast<double>(e.scales[0])};
}

}  // namespace

TEST_CASE("range search: min-max keeps the range; mse and percentile clip a long tail", "[calib]") {
  // 10^6 values in [0, 1] and one outlier at 100: 4096 bins over [0, 100].
  // Over the full range the rounding noise of the million (N (100/255)^2 / 12)
  // outweighs clipping the single outlier, so mse shrinks the range.
  std::vector<uint64_t> hist(4096, 0);
  for (size_t i = 0; i < 40; ++i) hist[i] = 25000;  // [0, ~1]
  hist[4095] = 1;
  auto mm = SearchRange(Method::kMinMax, hist, 0.f, 100.f, 8, Symmetry::kAsymmetric, 99.99);
  CHECK(mm.first == 0.f);
  CHECK(mm.second == 100.f);
  auto mse = SearchRange(Method::kMse, hist, 0.f, 100.f, 8, Symmetry::kAsymmetric, 99.99);
  CHECK(mse.second < 100.f);
  auto pc = SearchRange(Method::kPercentile, hist, 0.f, 100.f, 8, Symmetry::kAsymmetric, 99.9);
  CHECK(pc.second < 2.f);
  auto sq = SearchRange(Method::kSqnr, hist, 0.f, 100.f, 8, Symmetry::kAsymmetric, 99.99);
  CHECK(sq.second <= 100.f);
  CHECK(sq.second > 0.f);
}

TEST_CASE("calibration fills missing encodings, keeps given ones, skips biases", "[calib]") {
  Graph g = SmallMlp();
  Encoding given;
  given.kind = EncodingKind::kPerTensor;
  given.dtype = DType::kUFixed8;
  given.scales = {0.5f};
  given.offsets = {-128};
  given.overridden = true;
  REQUIRE(g.SetEncoding(*g.FindTensor("y"), given).ok());
  Options o;
  o.act_bitwidth = 16;
  o.per_row = true;
  Report r;
  REQUIRE(Calibrate(&g, Samples(8), o, &r).ok());
  CHECK(r.samples == 8);
  CHECK(r.kept == 1);
  CHECK(*g.tensor(*g.FindTensor("y")).encoding == given);
  const auto& h = g.tensor(*g.FindTensor("h")).encoding;
  REQUIRE(h);
  CHECK(h->dtype == DType::kUFixed16);
  const auto& x = g.tensor(*g.FindTensor("x")).encoding;
  REQUIRE(x);
  auto [lo, hi] = RealRange(*x);
  CHECK(lo < -1.0);  // 8 samples of N(0, 1) x 16
  CHECK(hi > 1.0);
  const auto& w = g.tensor(*g.FindTensor("w")).encoding;
  REQUIRE(w);
  CHECK(w->kind == EncodingKind::kPerChannel);
  CHECK(w->axis == 0);
  CHECK(w->dtype == DType::kSFixed8);
  CHECK_FALSE(g.tensor(*g.FindTensor("b")).encoding);  // computed by target processing
}

TEST_CASE("CalibrateParams encodes the weights as calibration does and leaves activations alone", "[calib]") {
  Graph full = SmallMlp();
  Options o;
  o.act_bitwidth = 16;
  o.per_row = true;
  Report fr;
  REQUIRE(Calibrate(&full, Samples(8), o, &fr).ok());
  Graph g = SmallMlp();
  Encoding given;  // an activation encoding from overrides stays
  given.kind = EncodingKind::kPerTensor;
  given.dtype = DType::kUFixed16;
  given.scales = {0.25f};
  given.offsets = {-32768};
  REQUIRE(g.SetEncoding(*g.FindTensor("x"), given).ok());
  Report r;
  REQUIRE(CalibrateParams(&g, o, &r).ok());
  CHECK(r.samples == 0);
  CHECK(r.activations.empty());
  CHECK(r.params == fr.params);
  REQUIRE_FALSE(r.params.empty());
  for (const std::string& name : r.params) {
    INFO(name);
    CHECK(g.tensor(*g.FindTensor(name)).encoding == full.tensor(*full.FindTensor(name)).encoding);
  }
  CHECK(*g.tensor(*g.FindTensor("x")).encoding == given);
  CHECK_FALSE(g.tensor(*g.FindTensor("h")).encoding);
  // Bad options leave the graph as it was.
  Graph before = SmallMlp();
  Graph bad = before;
  o.weights_bitwidth = 3;
  CHECK_FALSE(CalibrateParams(&bad, o, &r).ok());
  CHECK_FALSE(bad.tensor(*bad.FindTensor("w")).encoding);
}

TEST_CASE("calibration results do not depend on the thread count", "[calib][threads]") {
  for (Method m : {Method::kMinMax, Method::kMse}) {
    Graph a = SmallMlp(), b = SmallMlp();
    Options o;
    o.act_method = m;
    Report ra, rb;
    o.num_threads = 1;
    REQUIRE(Calibrate(&a, Samples(9), o, &ra).ok());
    o.num_threads = 3;
    REQUIRE(Calibrate(&b, Samples(9), o, &rb).ok());
    CHECK(Graph::Diff(a, b).empty());
  }
}

// A chain of FullyConnected ops: eight small weights of different sizes and
// one holding most of the bytes (the small ones are encoded several at
// once, the large one on every thread). `bad`: weights holding a NaN.
Graph ChainOfWeights(const std::vector<int>& bad = {}) {
  Graph g("chain");
  TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 64}).value();
  for (int l = 0; l < 9; ++l) {
    const int64_t out = l == 4 ? 1024 : 64 + 8 * l;
    const int64_t in = g.tensor(x).shape[1].value;
    std::vector<float> w(static_cast<size_t>(out * in));
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = std::sin(0.11f * static_cast<float>(i) + static_cast<float>(l)) * (1.0f + static_cast<float>(i % 7));
    if (std::count(bad.begin(), bad.end(), l)) w[w.size() / 2] = std::nanf("");
    const TensorId wt = g.AddConstant(fmt::format("w{}", l), DType::kFloat32, Shape{out, in}, Floats(w)).value();
    x = g.op(g.AddOp("FullyConnected", fmt::format("fc{}", l), {x, wt}, {fmt::format("h{}", l)}).value()).outputs[0];
  }
  REQUIRE(g.MarkOutput(x).ok());
  return g;
}

TEST_CASE("weight encodings made several at once equal those made one by one", "[calib][threads]") {
  for (const bool lpbq : {false, true}) {
    INFO((lpbq ? "LPBQ" : "per row"));
    Options o;
    o.per_row = true;
    if (lpbq) {
      o.weights_bitwidth = 4;
      o.block_size = 16;
      o.lpbq = true;
    }
    o.num_threads = 1;
    Graph one = ChainOfWeights();
    Report r1;
    REQUIRE(CalibrateParams(&one, o, &r1).ok());
    REQUIRE(r1.params.size() == 9);
    for (const uint32_t threads : {2u, 3u, 0u}) {
      INFO(threads << " threads");
      o.num_threads = threads;
      Graph many = ChainOfWeights();
      Report r;
      REQUIRE(CalibrateParams(&many, o, &r).ok());
      CHECK(r.params == r1.params);
      CHECK(Graph::Diff(one, many).empty());
      CHECK(r.warnings == r1.warnings);
    }
  }
  // Two weights that cannot be encoded: the first in graph order is the
  // error, whichever thread met it first.
  Options o;
  o.per_row = true;
  std::string first;
  for (const uint32_t threads : {1u, 2u, 3u}) {
    o.num_threads = threads;
    Graph g = ChainOfWeights({2, 6});
    Report r;
    const Status s = CalibrateParams(&g, o, &r);
    REQUIRE_FALSE(s.ok());
    INFO(s.message());
    CHECK(s.message().find("w2") != std::string::npos);
    if (threads == 1) first = s.message();
    CHECK(s.message() == first);
  }
}

TEST_CASE("LPBQ and block weights follow --weights_block_size", "[calib]") {
  Graph g("blocks");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 128}).value();
  std::vector<float> w(64 * 128);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.37f * static_cast<float>(i)) * (1 + (i % 128) / 64.f);
  const TensorId wt = g.AddConstant("w", DType::kFloat32, Shape{64, 128}, Floats(w)).value();
  const OpId fc = g.AddOp("FullyConnected", "fc", {x, wt}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(fc).outputs[0]).ok());
  Options o;
  o.weights_bitwidth = 4;
  o.block_size = 32;
  o.lpbq = true;
  Report r;
  SampleSource s;
  s.count = 2;
  s.load = [](size_t) -> Result<std::vector<std::vector<uint8_t>>> {
    return std::vector<std::vector<uint8_t>>{std::vector<uint8_t>(512, 0)};
  };
  REQUIRE(Calibrate(&g, s, o, &r).ok());
  const auto& e = g.tensor(wt).encoding;
  REQUIRE(e);
  CHECK(e->kind == EncodingKind::kLpbq);
  CHECK(e->axis == 1);
  CHECK(e->block_sizes == std::vector<int64_t>{1, 32});
  CHECK(e->block_int_scales.size() == 64 * 4);
  CHECK(e->scales.size() == 64);
}

TEST_CASE("convolution weights take blocks of input channels with all their taps, and HTP runs them",
          "[calib][lpbq]") {
  // conv: 32 input channels in blocks of 16; dw: depthwise, one block per
  // channel; odd: 24 input channels, not a multiple: per channel, with a
  // warning naming the weight.
  Graph g("conv_blocks");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 32, 6, 6}).value();
  const TensorId x2 = g.AddInput("x2", DType::kFloat32, Shape{1, 24, 6, 6}).value();
  auto weights = [](size_t n, float f) {
    std::vector<float> w(n);
    for (size_t i = 0; i < n; ++i) w[i] = std::sin(f * static_cast<float>(i)) * (1 + static_cast<float>(i % 288) / 96.f);
    return Floats(w);
  };
  const TensorId w = g.AddConstant("w", DType::kFloat32, Shape{8, 32, 3, 3}, weights(8 * 32 * 9, 0.61f)).value();
  const TensorId wd = g.AddConstant("wd", DType::kFloat32, Shape{8, 1, 3, 3}, weights(8 * 9, 0.37f)).value();
  const TensorId wo = g.AddConstant("wo", DType::kFloat32, Shape{8, 24, 1, 1}, weights(8 * 24, 0.23f)).value();
  const AttributeMap pad = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  const OpId conv = g.AddOp("Conv2d", "conv", {x, w}, {"y"}, pad).value();
  AttributeMap dw_attrs = pad;
  dw_attrs["group"] = int64_t{8};
  const OpId dw = g.AddOp("DepthWiseConv2d", "dw", {g.op(conv).outputs[0], wd}, {"z"}, dw_attrs).value();
  const OpId odd = g.AddOp("Conv2d", "odd", {x2, wo}, {"v"}).value();
  REQUIRE(g.MarkOutput(g.op(dw).outputs[0]).ok());
  REQUIRE(g.MarkOutput(g.op(odd).outputs[0]).ok());
  Options o;
  o.act_bitwidth = 16;
  o.weights_bitwidth = 4;
  o.per_channel = true;
  o.block_size = 16;
  o.lpbq = true;
  SampleSource s;
  s.count = 2;
  s.load = [](size_t k) -> Result<std::vector<std::vector<uint8_t>>> {
    return std::vector<std::vector<uint8_t>>{testing::FloatBytes(testing::NormalFloats(32 * 36, 0.f, 1.f, 10 + k)),
                                             testing::FloatBytes(testing::NormalFloats(24 * 36, 0.f, 1.f, 20 + k))};
  };
  Report r;
  REQUIRE(Calibrate(&g, s, o, &r).ok());
  const auto& e = g.tensor(w).encoding;
  REQUIRE(e);
  CHECK(e->kind == EncodingKind::kLpbq);
  CHECK(e->axis == 1);
  CHECK(e->block_sizes == std::vector<int64_t>{1, 16, 3, 3});
  CHECK(e->scales.size() == 8);
  CHECK(e->block_int_scales.size() == 8 * 2);
  const auto& ed = g.tensor(wd).encoding;
  REQUIRE(ed);
  CHECK(ed->kind == EncodingKind::kLpbq);
  CHECK(ed->block_sizes == std::vector<int64_t>{1, 1, 3, 3});
  const auto& eo = g.tensor(wo).encoding;
  REQUIRE(eo);
  CHECK(eo->kind == EncodingKind::kPerChannel);
  CHECK(eo->axis == 0);
  bool warned = false;
  for (const std::string& m : r.warnings) warned |= m.find("'wo'") != std::string::npos;
  CHECK(warned);

  // The blocked weight reads back within a 4-bit step of each block, and
  // HTP v75's processing takes the graph (the Conv2d a16w4 kernel runs LPBQ).
  std::vector<float> back(8 * 32 * 9);
  auto q = quant::QuantizeTensor("w", DType::kFloat32, reinterpret_cast<const float*>(g.tensor(w).data->data()), {8, 32, 3, 3}, *e);
  REQUIRE(q.ok());
  REQUIRE(quant::DequantizeTensor("w", q.value().data(), q.value().size(), {8, 32, 3, 3}, *e, back.data()).ok());
  const float* src = reinterpret_cast<const float*>(g.tensor(w).data->data());
  for (size_t i = 0; i < back.size(); ++i) {
    const size_t ch = i / 288, blk = (i % 288) / 144;
    const float step = e->scales[ch] * static_cast<float>(e->block_int_scales[ch * 2 + blk]);
    REQUIRE(std::fabs(back[i] - src[i]) <= 0.5f * step + 1e-6f);
  }
  auto v75 = target::LoadBuiltinTarget("htp_v75");
  REQUIRE(v75.ok());
  pass::Options po;
  po.target = v75.value();
  po.act_bitwidth = 16;
  po.weights_bitwidth = 4;
  pass::ProcessResult pr;
  REQUIRE(pass::Process(&g, po, &pr).ok());
  INFO((pr.errors.empty() ? std::string() : pr.errors[0]));
  CHECK(pr.errors.empty());
}

TEST_CASE("LPBQ: a row no longer than a block is one block; a FullyConnected bias takes the per-channel grid",
          "[calib][lpbq]") {
  // fc1: K = 128 in blocks of 64, with a bias; fc2: K = 32 < 64, one block per row.
  Graph g("lpbq");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 128}).value();
  const TensorId x2 = g.AddInput("x2", DType::kFloat32, Shape{1, 32}).value();
  std::vector<float> w(16 * 128), w2(8 * 32), b(16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.61f * static_cast<float>(i)) * (1 + (i % 128) / 32.f);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::cos(0.23f * static_cast<float>(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * static_cast<float>(i) - 0.7f;
  const TensorId wt = g.AddConstant("w", DType::kFloat32, Shape{16, 128}, Floats(w)).value();
  const TensorId bt = g.AddConstant("b", DType::kFloat32, Shape{16}, Floats(b)).value();
  const TensorId w2t = g.AddConstant("w2", DType::kFloat32, Shape{8, 32}, Floats(w2)).value();
  const OpId fc = g.AddOp("FullyConnected", "fc", {x, wt, bt}, {"y"}).value();
  const OpId fc2 = g.AddOp("FullyConnected", "fc2", {x2, w2t}, {"y2"}).value();
  REQUIRE(g.MarkOutput(g.op(fc).outputs[0]).ok());
  REQUIRE(g.MarkOutput(g.op(fc2).outputs[0]).ok());
  Options o;
  o.act_bitwidth = 16;
  o.weights_bitwidth = 4;
  o.block_size = 64;
  o.lpbq = true;
  Report r;
  SampleSource s;
  s.count = 2;
  s.load = [](size_t k) -> Result<std::vector<std::vector<uint8_t>>> {
    std::vector<float> a(128), c(32);
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(static_cast<float>(i + k));
    for (size_t i = 0; i < c.size(); ++i) c[i] = std::cos(static_cast<float>(i * (k + 1)));
    std::vector<uint8_t> ab(512), cb(128);
    std::memcpy(ab.data(), a.data(), 512);
    std::memcpy(cb.data(), c.data(), 128);
    return std::vector<std::vector<uint8_t>>{ab, cb};
  };
  REQUIRE(Calibrate(&g, s, o, &r).ok());
  const auto& e2 = g.tensor(w2t).encoding;
  REQUIRE(e2);
  CHECK(e2->kind == EncodingKind::kLpbq);
  CHECK(e2->block_sizes == std::vector<int64_t>{1, 32});

  auto v75 = target::LoadBuiltinTarget("htp_v75");
  REQUIRE(v75.ok());
  pass::Options po;
  po.target = v75.value();
  po.act_bitwidth = 16;
  po.weights_bitwidth = 4;
  pass::ProcessResult pr;
  REQUIRE(pass::Process(&g, po, &pr).ok());
  INFO((pr.errors.empty() ? std::string() : pr.errors[0]));
  CHECK(pr.errors.empty());
  // The bias scale is the FullyConnected's input scale times the weight's
  // per-channel grid scale (read from the op's own inputs after processing).
  const Op& fc_op = g.op(g.FindOp("fc").value());
  const Tensor& bias = g.tensor(fc_op.inputs[2]);
  REQUIRE(g.tensor(fc_op.inputs[0]).encoding);
  REQUIRE(g.tensor(fc_op.inputs[1]).encoding);
  const Encoding& xe = *g.tensor(fc_op.inputs[0]).encoding;
  const Encoding& we = *g.tensor(fc_op.inputs[1]).encoding;
  CHECK(we.kind == EncodingKind::kLpbq);
  REQUIRE(bias.encoding);
  CHECK(bias.encoding->kind == EncodingKind::kPerChannel);
  REQUIRE(bias.encoding->scales.size() == 16);
  for (size_t c = 0; c < 16; ++c) CHECK(bias.encoding->scales[c] == xe.scales[0] * we.scales[c]);
}

TEST_CASE("attention-mask sentinels stay out of ranges; masked entries still vanish after softmax", "[calib]") {
  // scores[1,4] -> Where(mask, scores, finfo.min) -> Softmax; and an additive
  // -inf fill constant: x + Where(mask, 0, -inf).
  Graph g("mask");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 4}).value();
  std::vector<uint8_t> m = {1, 1, 0, 0};
  const TensorId mask = g.AddConstant("mask", DType::kBool, Shape{1, 4}, StaticData::Copy(m.data(), 4)).value();
  const TensorId lowest =
      g.AddConstant("lowest", DType::kFloat32, Shape(std::vector<Dim>{}), Floats({std::numeric_limits<float>::lowest()})).value();
  const TensorId ninf =
      g.AddConstant("ninf", DType::kFloat32, Shape(std::vector<Dim>{}), Floats({-std::numeric_limits<float>::infinity()})).value();
  const TensorId zero = g.AddConstant("zero", DType::kFloat32, Shape(std::vector<Dim>{}), Floats({0.0f})).value();
  const OpId w = g.AddOp("ElementWiseSelect", "masked", {mask, x, lowest}, {"masked"}).value();
  const OpId sm = g.AddOp("Softmax", "softmax", {g.op(w).outputs[0]}, {"probs"}, {{"axis", int64_t{-1}}}).value();
  const OpId add_mask = g.AddOp("ElementWiseSelect", "additive", {mask, zero, ninf}, {"additive"}).value();
  const OpId add = g.AddOp("ElementWiseAdd", "add", {x, g.op(add_mask).outputs[0]}, {"biased"}).value();
  REQUIRE(g.MarkOutput(g.op(sm).outputs[0]).ok());
  REQUIRE(g.MarkOutput(g.op(add).outputs[0]).ok());
  Options o;
  o.act_bitwidth = 16;
  Report r;
  SampleSource s;
  s.count = 2;
  s.load = [](size_t k) -> Result<std::vector<std::vector<uint8_t>>> {
    std::vector<float> v = {1.0f + static_cast<float>(k), -2.0f, 0.5f, 3.0f};
    std::vector<uint8_t> b(16);
    std::memcpy(b.data(), v.data(), 16);
    return std::vector<std::vector<uint8_t>>{b};
  };
  {
    const Status st = Calibrate(&g, s, o, &r);
    INFO(st.message());
    REQUIRE(st.ok());
  }
  // Real values of 'masked' are x[0..1] in [-2, 2]: the range reaches 20 below
  // the largest, not down to -3.4e38.
  const auto [lo, hi] = RealRange(*g.tensor(g.op(w).outputs[0]).encoding);
  CHECK(hi == Approx(2.0).margin(1e-3));
  CHECK(lo == Approx(-18.0).margin(1e-2));
  // The -inf fill constant gets a finite range; the additive mask [-20, 0].
  REQUIRE(g.tensor(ninf).encoding);
  CHECK(std::isfinite(g.tensor(ninf).encoding->scales[0]));
  const auto [alo, ahi] = RealRange(*g.tensor(g.op(add_mask).outputs[0]).encoding);
  CHECK(alo == Approx(-20.0).margin(1e-2));
  CHECK(ahi == Approx(0.0).margin(1e-3));
  bool warned = false;
  for (const auto& wmsg : r.warnings) warned = warned || wmsg.find("attention-mask") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("input_list: every problem names the line, the input and the file", "[calib]") {
  const std::string dir = "/tmp/qairt_calib_test_" + std::to_string(::getpid());
  std::string cmd = "mkdir -p " + dir;
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::vector<InputSpec> inputs = {{"x", DType::kFloat32, {1, 4}, 16}, {"ids", DType::kInt64, {1, 2}, 16}};
  auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir + "/" + name, std::ios::binary) << content;
  };
  write("x.raw", std::string(16, '\0'));
  write("ids.raw", std::string(16, '\0'));
  write("ids32.raw", std::string(8, '\0'));
  write("ok.txt", "x:=x.raw ids:=ids.raw\n\n# comment\n" + dir + "/x.raw " + dir + "/ids.raw\n");
  auto ok = ReadInputList(dir + "/ok.txt", inputs);
  REQUIRE(ok.ok());
  CHECK(ok.value().samples.size() == 2);
  CHECK(ok.value().samples[1].line == 4);
  REQUIRE(LoadSample(ok.value(), 0).ok());

  write("int32.txt", "x:=x.raw ids:=ids32.raw\n");
  auto e = ReadInputList(dir + "/int32.txt", inputs);
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(e.status().message(), Catch::Contains("line 1: input 'ids': file '") &&
                                       Catch::Contains("ids32.raw' has 8 bytes, but a int64 tensor of shape [1, 2] "
                                                       "needs 16 (that is 4 bytes per element"));
  write("mixed.txt", "x:=x.raw ids.raw\n");
  CHECK_THAT(ReadInputList(dir + "/mixed.txt", inputs).status().message(), Catch::Contains("mixes name:=path"));
  write("count.txt", "x.raw\n");
  CHECK_THAT(ReadInputList(dir + "/count.txt", inputs).status().message(),
             Catch::Contains("line 1: 1 paths for 2 graph inputs"));
  write("twice.txt", "x:=x.raw x:=x.raw\n");
  CHECK_THAT(ReadInputList(dir + "/twice.txt", inputs).status().message(), Catch::Contains("'x' is given twice"));
  write("noids.txt", "x:=x.raw\n");
  CHECK_THAT(ReadInputList(dir + "/noids.txt", inputs).status().message(), Catch::Contains("no file for input 'ids'"));
  CHECK_THAT(ReadInputList(dir + "/absent.txt", inputs).status().message(), Catch::Contains("absent.txt"));
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("compare: identical graphs give infinite SQNR; a quantized copy gives a finite one", "[calib]") {
  Graph f = SmallMlp();
  Graph q = f;
  CompareReport same;
  REQUIRE(Compare(f, q, Samples(4), true, &same).ok());
  REQUIRE(same.outputs.size() == 1);
  CHECK(std::isinf(same.outputs[0].sqnr_db));
  CHECK(same.outputs[0].argmax_agree == 4);
  Options o;
  Report r;
  REQUIRE(Calibrate(&q, Samples(8), o, &r).ok());
  CompareReport diff;
  REQUIRE(Compare(f, q, Samples(4), true, &diff).ok());
  CHECK(std::isfinite(diff.outputs[0].sqnr_db));
  CHECK(diff.outputs[0].sqnr_db > 20);
  CHECK(diff.outputs[0].cosine > 0.99);
  CHECK_FALSE(diff.layers.empty());
  for (size_t i = 1; i < diff.layers.size(); ++i) CHECK(diff.layers[i - 1].sqnr_db <= diff.layers[i].sqnr_db);
  CHECK_THAT(CompareSummaryLine(diff), Catch::StartsWith("accuracy on 4 samples: y SQNR"));
}

TEST_CASE("a normalization's scale is an 8-bit asymmetric parameter; its bias is left to processing", "[calib]") {
  Graph g("ln");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 16}).value();
  std::vector<float> gamma(16), beta(16);
  for (size_t i = 0; i < 16; ++i) gamma[i] = 0.5f + 0.05f * static_cast<float>(i), beta[i] = 0.01f * static_cast<float>(i);
  const TensorId gt = g.AddConstant("gamma", DType::kFloat32, Shape{16}, Floats(gamma)).value();
  const TensorId bt = g.AddConstant("beta", DType::kFloat32, Shape{16}, Floats(beta)).value();
  const OpId ln = g.AddOp("LayerNorm", "ln", {x, gt, bt}, {"y"}, {{"axes", std::vector<int64_t>{1}}}).value();
  REQUIRE(g.MarkOutput(g.op(ln).outputs[0]).ok());
  Options o;
  o.act_bitwidth = 16;
  o.weights_bitwidth = 4;  // the LLM setting: norms stay 8-bit
  Report r;
  Status s = Calibrate(&g, Samples(4), o, &r);
  INFO(s.message());
  REQUIRE(s.ok());
  const Tensor& gq = g.tensor(gt);
  REQUIRE(gq.encoding);
  CHECK(gq.encoding->dtype == DType::kUFixed8);
  CHECK(gq.encoding->symmetry == Symmetry::kAsymmetric);
  CHECK(gq.encoding->kind == EncodingKind::kPerTensor);
  CHECK_FALSE(g.tensor(bt).encoding);
  REQUIRE(g.tensor(g.op(ln).outputs[0]).encoding);
  CHECK(g.tensor(g.op(ln).outputs[0]).encoding->dtype == DType::kUFixed16);

  // Wide norm scales (targets with a16w16 norms): 16-bit with 16-bit
  // activations, whatever the weights' width; 8-bit activations keep 8.
  for (uint32_t act : {16u, 8u}) {
    Graph w = g;
    for (TensorId t = 0; t < w.tensor_count(); ++t)
      if (w.tensor(t).encoding) REQUIRE(w.ClearEncoding(t).ok());
    Options wide = o;
    wide.act_bitwidth = act;
    wide.weights_bitwidth = 8;
    wide.wide_norm_scales = true;
    REQUIRE(Calibrate(&w, Samples(4), wide, &r).ok());
    REQUIRE(w.tensor(gt).encoding);
    CHECK(w.tensor(gt).encoding->effective_bitwidth() == act);
    CHECK(w.tensor(gt).encoding->symmetry == Symmetry::kAsymmetric);
  }
}

TEST_CASE("per-channel weights with mse/sqnr: each channel gets its own clipping range", "[calib]") {
  // FullyConnected weights [8, 256], 4-bit; channel 2 follows a Laplace
  // distribution (its quantiles): at 4 bits the methods clip its tails,
  // min-max cannot.
  Graph g("fc");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 256}).value();
  std::vector<float> w(8 * 256);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * std::sin(0.37f * static_cast<float>(i));
  for (size_t k = 0; k < 256; ++k) {
    const float u = (static_cast<float>(k) + 0.5f) / 256.f * 2.f - 1.f;  // (-1, 1)
    w[2 * 256 + k] = (u < 0 ? 0.05f : -0.05f) * std::log(1.f - std::fabs(u));
  }
  auto calibrated = [](const Graph& graph, Method m, bool per_row) {
    Graph c = graph;
    Options o;
    o.per_row = per_row;
    o.param_method = m;
    o.weights_bitwidth = 4;
    Report r;
    REQUIRE(Calibrate(&c, SyntheticSamples(graph, 2).value(), o, &r).ok());
    return *c.tensor(*c.FindTensor("w")).encoding;
  };
  auto fc_graph = [&](const std::vector<float>& weights, int64_t rows) {
    Graph fg("fc");
    const TensorId in = fg.AddInput("x", DType::kFloat32, Shape{1, 256}).value();
    const TensorId wt = fg.AddConstant("w", DType::kFloat32, Shape{rows, 256}, Floats(weights)).value();
    const OpId fc = fg.AddOp("FullyConnected", "fc", {in, wt}, {"y"}).value();
    REQUIRE(fg.MarkOutput(fg.op(fc).outputs[0]).ok());
    return fg;
  };
  (void)x;
  const Graph full = fc_graph(w, 8);
  const auto minmax = calibrated(full, Method::kMinMax, true).scales;
  for (Method m : {Method::kMse, Method::kSqnr}) {
    const Encoding e = calibrated(full, m, true);
    CHECK(e.kind == EncodingKind::kPerChannel);
    CHECK(e.axis == 0);
    REQUIRE(e.scales.size() == 8);
    CHECK(e.scales[2] < minmax[2]);  // the heavy tail is clipped
    for (size_t c = 0; c < 8; ++c) {
      CHECK(e.scales[c] <= minmax[c] * 1.0001f);
      // Exactly the range the method picks for that channel on its own.
      const std::vector<float> row(w.begin() + static_cast<std::ptrdiff_t>(c * 256),
                                   w.begin() + static_cast<std::ptrdiff_t>((c + 1) * 256));
      const Encoding alone = calibrated(fc_graph(row, 1), m, false);
      REQUIRE(alone.scales.size() == 1);
      CHECK(e.scales[c] == alone.scales[0]);
    }
  }
}

TEST_CASE("per-tensor weights that lose weight SQNR against per-channel scales are warned about", "[calib]") {
  // x[1,4] -> FullyConnected(w[4,4]): row 0 spans +-1, rows 1..3 +-0.001 (a
  // folded BatchNorm does this): one int8 scale of 1/127 leaves rows 1..3
  // with no step at all.
  auto build = [] {
    Graph g("starved");
    const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 16}).value();
    std::vector<float> w(64);
    for (size_t i = 0; i < w.size(); ++i) w[i] = (i < 16 ? 1.f : 0.001f) * (i % 2 ? -1.f : 1.f);
    const TensorId wt = g.AddConstant("w", DType::kFloat32, Shape{4, 16}, Floats(w)).value();
    const OpId fc = g.AddOp("FullyConnected", "fc", {x, wt}, {"y"}).value();
    REQUIRE(g.MarkOutput(g.op(fc).outputs[0]).ok());
    return g;
  };
  auto warned = [](const Report& r) {
    for (const auto& w : r.warnings)
      if (w.find("quantized per tensor") != std::string::npos) return w;
    return std::string();
  };
  Graph g = build();
  Options o;
  Report r;
  REQUIRE(Calibrate(&g, Samples(4), o, &r).ok());
  REQUIRE(g.tensor(*g.FindTensor("w")).encoding->kind == EncodingKind::kPerTensor);
  const std::string w = warned(r);
  CHECK(w.find("1 weight quantized per tensor lose 3 dB or more of weight SQNR") != std::string::npos);
  // Rows 1..3 round to zero under the one scale: noise 48 x 1e-6 against a
  // signal of 16, 55.2 dB; per row every +-v value is exactly on its grid.
  INFO(w);
  CHECK(w.find("(worst: 'w', 55.2 dB per tensor, exact per channel)") != std::string::npos);
  CHECK(w.find("--use_per_row_quantization") != std::string::npos);
  Graph h = build();
  o.per_row = true;
  Report rr;
  REQUIRE(Calibrate(&h, Samples(4), o, &rr).ok());
  CHECK(warned(rr).empty());
}
