// Rewrites (each fires on its pattern, keeps names and is exact; a pinned or
// escaping intermediate stops it; a wrong rewrite is rolled back), the graph
// editor, sensitivity ranking and mixed precision on small built graphs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "analyze/sensitivity.h"
#include "calib/sample_eval.h"
#include "passes/rewrite/graph_edit.h"
#include "passes/rewrite/rewrite.h"

using namespace qairt;

namespace {

std::shared_ptr<const StaticData> Floats(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return StaticData::Adopt(std::move(b));
}

TensorId Const(Graph& g, const std::string& name, Shape shape, const std::vector<float>& v) {
  return g.AddConstant(name, DType::kFloat32, std::move(shape), Floats(v)).value();
}

std::vector<float> Ramp(size_t n, float scale, float phase = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + phase);
  return v;
}

TensorId Out(Graph& g, OpId op) { return g.op(op).outputs[0]; }

size_t CountType(const Graph& g, const std::string& type) {
  size_t n = 0;
  for (OpId i = 0; i < g.op_count(); ++i) n += g.op(i).type == type;
  return n;
}

const rewrite::Outcome& OutcomeOf(const rewrite::Report& r, const std::string& name) {
  for (const auto& o : r.rewrites)
    if (o.name == name) return o;
  FAIL("no outcome for " << name);
  return r.rewrites.front();
}

// x[1,4,8,8] -> Conv2d -> conv_out -> * s[1,8,1,1] -> + b[1,8,1,1] -> Relu -> y
Graph ConvAffine() {
  Graph g("conv_affine");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 4, 8, 8}).value();
  const TensorId w = Const(g, "w", Shape{8, 4, 3, 3}, Ramp(8 * 4 * 9, 0.3f));
  const TensorId b = Const(g, "b", Shape{8}, Ramp(8, 0.1f, 1.f));
  AttributeMap conv = {{"strides", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                       {"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t{1}}};
  const OpId c = g.AddOp("Conv2d", "conv", {x, w, b}, {"conv_out"}, conv).value();
  const TensorId s = Const(g, "s", Shape{1, 8, 1, 1}, {0.5f, 1.5f, 2.f, 0.25f, 1.f, 3.f, 0.75f, 1.25f});
  const OpId m = g.AddOp("ElementWiseMultiply", "mul", {Out(g, c), s}, {"scaled"}).value();
  const TensorId sh = Const(g, "shift", Shape{1, 8, 1, 1}, Ramp(8, 0.4f, 2.f));
  const OpId a = g.AddOp("ElementWiseAdd", "add", {Out(g, m), sh}, {"shifted"}).value();
  const OpId r = g.AddOp("Relu", "relu", {Out(g, a)}, {"y"}).value();
  REQUIRE(g.MarkOutput(Out(g, r)).ok());
  return g;
}

// x -> FullyConnected(w) -> t; t * relu6(t + 3) / 6 -> y
Graph HardSwishPattern() {
  Graph g("hswish");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 16}).value();
  const TensorId w = Const(g, "w", Shape{16, 16}, Ramp(256, 0.8f));
  const OpId fc = g.AddOp("FullyConnected", "fc", {x, w}, {"t"}).value();
  const TensorId t = Out(g, fc);
  const OpId a = g.AddOp("ElementWiseAdd", "plus3", {t, Const(g, "three", Shape{1}, {3.f})}, {"t3"}).value();
  const OpId c = g.AddOp("ReluMinMax", "relu6", {Out(g, a)}, {"r6"}, {{"min_value", 0.0}, {"max_value", 6.0}}).value();
  const OpId m = g.AddOp("ElementWiseMultiply", "mul", {t, Out(g, c)}, {"m"}).value();
  const OpId d = g.AddOp("ElementWiseDivide", "div6", {Out(g, m), Const(g, "six", Shape{1}, {6.f})}, {"y"}).value();
  REQUIRE(g.MarkOutput(Out(g, d)).ok());
  return g;
}

// x[1,6,32] -> decomposed LayerNorm (gamma, beta) -> y
Graph DecomposedLayerNorm(bool escape) {
  Graph g("ln");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 6, 32}).value();
  const AttributeMap mean = {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}};
  const OpId m = g.AddOp("ReduceMean", "mean", {x}, {"mu"}, mean).value();
  const OpId d = g.AddOp("ElementWiseSubtract", "sub", {x, Out(g, m)}, {"d"}).value();
  const OpId p = g.AddOp("ElementWisePower", "pow", {Out(g, d), Const(g, "two", Shape{1}, {2.f})}, {"d2"}).value();
  const OpId v = g.AddOp("ReduceMean", "var", {Out(g, p)}, {"var"}, mean).value();
  const OpId e = g.AddOp("ElementWiseAdd", "eps", {Out(g, v), Const(g, "eps_c", Shape{1}, {1e-5f})}, {"ve"}).value();
  const OpId s = g.AddOp("ElementWiseSquareRoot", "sqrt", {Out(g, e)}, {"sd"}).value();
  const OpId n = g.AddOp("ElementWiseDivide", "div", {Out(g, d), Out(g, s)}, {"n"}).value();
  const OpId gm = g.AddOp("ElementWiseMultiply", "gamma", {Out(g, n), Const(g, "g", Shape{32}, Ramp(32, 1.f, 0.3f))},
                          {"ng"}).value();
  const OpId bt = g.AddOp("ElementWiseAdd", "beta", {Out(g, gm), Const(g, "b", Shape{32}, Ramp(32, 0.2f))}, {"y"})
                      .value();
  REQUIRE(g.MarkOutput(Out(g, bt)).ok());
  if (escape) REQUIRE(g.MarkOutput(Out(g, p)).ok());  // d^2 read outside the pattern
  return g;
}

rewrite::Report Rewrite(Graph* g, rewrite::Options o = {}) {
  rewrite::Report r;
  REQUIRE(rewrite::RunRewrites(g, o, &r).ok());
  return r;
}

// Worst output cosine of two graphs on synthetic samples.
double Cosine(const Graph& a, const Graph& b) {
  auto s = calib::SyntheticSamples(a, 3, 99).value();
  auto ra = calib::RunSamples(a, s, false).value();
  auto rb = calib::RunSamples(b, s, false).value();
  return calib::Worst(ra, rb).cosine;
}

}  // namespace

TEST_CASE("fold-affine-into-conv folds a per-channel Mul and Add into the conv, exactly", "[rewrite]") {
  const Graph original = ConvAffine();
  Graph g = original;
  const auto r = Rewrite(&g);
  CHECK(OutcomeOf(r, "fold-affine-into-conv").fired == 2);
  CHECK_FALSE(OutcomeOf(r, "fold-affine-into-conv").rolled_back);
  CHECK(g.op_count() == 2);
  CHECK(CountType(g, "ElementWiseMultiply") == 0);
  CHECK(CountType(g, "ElementWiseAdd") == 0);
  // The conv keeps its name and now produces the tensor the Add produced.
  const auto conv = g.FindOp("conv");
  REQUIRE(conv);
  CHECK(g.tensor(g.op(*conv).outputs[0]).name == "shifted");
  CHECK_FALSE(g.FindTensor("conv_out"));
  CHECK(g.tensor(g.outputs()[0]).name == "y");
  CHECK(Cosine(original, g) >= 0.999999);
  CHECK(r.ops_before == 4);
  CHECK(r.ops_after == 2);
}

TEST_CASE("an encoded intermediate pins the pattern: nothing is folded", "[rewrite]") {
  Graph g = ConvAffine();
  Encoding e;
  e.dtype = DType::kUFixed8;
  e.scales = {0.05f};
  e.offsets = {-128};
  REQUIRE(g.SetEncoding(*g.FindTensor("conv_out"), e).ok());
  const auto r = Rewrite(&g);
  CHECK(OutcomeOf(r, "fold-affine-into-conv").fired == 0);
  CHECK(g.op_count() == 4);
  CHECK(g.FindTensor("conv_out"));
  CHECK(g.tensor(*g.FindTensor("conv_out")).encoding.has_value());
  CHECK(CountType(g, "ElementWiseMultiply") == 1);
}

TEST_CASE("x * relu6(x + 3) / 6 becomes HardSwish", "[rewrite]") {
  const Graph original = HardSwishPattern();
  Graph g = original;
  const auto r = Rewrite(&g);
  CHECK(OutcomeOf(r, "fuse-hardswish").fired == 1);
  CHECK(CountType(g, "HardSwish") == 1);
  CHECK(g.op_count() == 2);
  CHECK(g.tensor(g.outputs()[0]).name == "y");
  CHECK(Cosine(original, g) >= 0.999999);
}

TEST_CASE("a decomposed LayerNorm becomes LayerNorm; an escaping intermediate stops it", "[rewrite]") {
  const Graph original = DecomposedLayerNorm(false);
  Graph g = original;
  const auto r = Rewrite(&g);
  CHECK(OutcomeOf(r, "fuse-layernorm").fired == 1);
  REQUIRE(g.op_count() == 1);
  const Op& ln = g.op(0);
  CHECK(ln.type == "LayerNorm");
  CHECK(ln.inputs.size() == 3);
  CHECK(std::get<std::vector<int64_t>>(ln.attrs.at("axes")) == std::vector<int64_t>{2});
  CHECK(std::get<double>(ln.attrs.at("epsilon")) == Approx(1e-5));
  CHECK(Cosine(original, g) >= 0.999999);

  Graph esc = DecomposedLayerNorm(true);
  const auto r2 = Rewrite(&esc);
  CHECK(OutcomeOf(r2, "fuse-layernorm").fired == 0);
  CHECK(CountType(esc, "LayerNorm") == 0);
}

TEST_CASE("a rewrite whose result differs is rolled back with a warning naming it", "[rewrite]") {
  // Injected wrong rewrite: Relu -> Sigmoid.
  const rewrite::RewriteInfo wrong[] = {
      {"relu-to-sigmoid", "deliberately wrong",
       [](Graph* g, std::vector<std::string>* notes) -> Result<size_t> {
         rewrite::GraphEdit edit(*g);
         size_t n = 0;
         for (OpId i = 0; i < g->op_count(); ++i) {
           const Op& op = g->op(i);
           if (op.type != "Relu") continue;
           edit.Drop(i);
           edit.InsertAt(i, rewrite::NewOp{"Sigmoid", op.name, op.inputs, op.outputs, {}, "", ""});
           notes->push_back(op.name);
           ++n;
         }
         if (n) *g = edit.Apply().value();
         return n;
       },
       nullptr},
  };
  const Graph original = ConvAffine();
  Graph g = original;
  rewrite::Options o;
  o.replace_registry.assign(std::begin(wrong), std::end(wrong));
  const auto r = Rewrite(&g, o);
  REQUIRE(r.rewrites.size() == 1);
  CHECK(r.rewrites[0].fired == 1);
  CHECK(r.rewrites[0].rolled_back);
  CHECK(r.rewrites[0].cosine < 0.999999);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("relu-to-sigmoid") != std::string::npos);
  CHECK(CountType(g, "Relu") == 1);
  CHECK(CountType(g, "Sigmoid") == 0);
}

TEST_CASE("unverified rewrites are applied without running the model", "[rewrite]") {
  // The samples' loader counts reads: with verify off none may happen (a
  // convert must not run the model to check the rewrites unless asked).
  Graph g = ConvAffine();
  rewrite::Options o;
  o.verify = false;
  size_t loads = 0;
  o.samples.count = 4;
  o.samples.load = [&loads](size_t) -> Result<std::vector<std::vector<uint8_t>>> {
    ++loads;
    return InvalidArgument("no sample may be read");
  };
  rewrite::Report r;
  REQUIRE(rewrite::RunRewrites(&g, o, &r).ok());
  CHECK(loads == 0);
  CHECK_FALSE(r.verified);
  CHECK(r.samples == 0);
  CHECK(OutcomeOf(r, "fold-affine-into-conv").fired > 0);
  CHECK(r.ops_after < r.ops_before);
  CHECK(rewrite::ReportText(r, false).find("--verify_rewrites") != std::string::npos);
}

TEST_CASE("rewrites the target cannot run are skipped; unknown names are errors", "[rewrite]") {
  Graph g = DecomposedLayerNorm(false);
  rewrite::Options o;
  o.target_has_op = [](const std::string& type) { return type != "LayerNorm"; };
  const auto r = Rewrite(&g, o);
  CHECK(OutcomeOf(r, "fuse-layernorm").fired == 0);
  CHECK(OutcomeOf(r, "fuse-layernorm").skipped.find("LayerNorm") != std::string::npos);
  CHECK(CountType(g, "LayerNorm") == 0);

  rewrite::Options bad;
  bad.disabled = {"fuse-everything"};
  rewrite::Report rep;
  const Status st = rewrite::RunRewrites(&g, bad, &rep);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("fuse-everything") != std::string::npos);
}

TEST_CASE("a graph the executor cannot run goes without rewrites, with a warning", "[rewrite]") {
  Graph g = HardSwishPattern();
  const OpId nz = g.AddOp("NonZero", "nonzero", {*g.FindTensor("y")}, {"idx"}).value();
  REQUIRE(g.MarkOutput(g.op(nz).outputs[0]).ok());
  const size_t ops = g.op_count();
  rewrite::Report r;
  REQUIRE(rewrite::RunRewrites(&g, {}, &r).ok());
  CHECK(g.op_count() == ops);
  CHECK(CountType(g, "HardSwish") == 0);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("rewrites not applied") != std::string::npos);
  CHECK(r.warnings[0].find("NonZero") != std::string::npos);
}

TEST_CASE("the graph editor keeps names, encodings, inputs and outputs", "[rewrite]") {
  Graph g = ConvAffine();
  Encoding e;
  e.dtype = DType::kUFixed8;
  e.scales = {0.1f};
  e.offsets = {0};
  REQUIRE(g.SetEncoding(*g.FindTensor("y"), e).ok());
  rewrite::GraphEdit edit(g);
  edit.Drop(*g.FindOp("relu"));
  edit.InsertAt(*g.FindOp("relu"), rewrite::NewOp{"Relu6", "relu6", {*g.FindTensor("shifted")}, {*g.FindTensor("y")},
                                                  {}, "", ""});
  const Graph out = edit.Apply().value();
  CHECK_FALSE(HasErrors(out.Validate()));
  CHECK(out.op_count() == 4);
  CHECK(out.op(3).type == "Relu6");
  REQUIRE(out.FindTensor("y"));
  CHECK(out.tensor(*out.FindTensor("y")).encoding == e);
  CHECK(out.tensor(out.inputs()[0]).name == "x");
  CHECK(edit.UniqueName("conv") == "conv_1");
}

TEST_CASE("sensitivity ranks the layer with an outlier weight first; mixed precision promotes it", "[analyze]") {
  // x -> FC a -> Relu -> FC sensitive (one weight 300x the rest) -> Relu -> FC c -> y
  Graph g("sens");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 32}).value();
  auto fc = [&](const std::string& name, TensorId in, float outlier) {
    std::vector<float> w = Ramp(32 * 32, 0.2f, static_cast<float>(name.size()));
    if (outlier > 0) w[37] = outlier;
    const TensorId wt = Const(g, name + "_w", Shape{32, 32}, w);
    return Out(g, g.AddOp("FullyConnected", name, {in, wt}, {name + "_out"}).value());
  };
  TensorId h = fc("fc_a", x, 0);
  h = Out(g, g.AddOp("Relu", "relu_a", {h}, {"ha"}).value());
  h = fc("sensitive", h, 60.f);
  h = Out(g, g.AddOp("Relu", "relu_b", {h}, {"hb"}).value());
  h = fc("fc_c", h, 0);
  REQUIRE(g.MarkOutput(h).ok());

  const auto samples = calib::SyntheticSamples(g, 48, 7).value();
  analyze::Options o;  // W8A8 per-tensor vs W16A16
  analyze::SensitivityReport rep;
  REQUIRE(analyze::AnalyzeSensitivity(g, samples, o, &rep).ok());
  REQUIRE_FALSE(rep.units.empty());
  const auto worst = std::min_element(rep.units.begin(), rep.units.end(), [](const auto& a, const auto& b) {
    return a.sqnr_only_quantized < b.sqnr_only_quantized;
  });
  CHECK(worst->name == "sensitive");
  CHECK(rep.sqnr_high > rep.sqnr_base);
  const std::string text = analyze::SensitivityText(rep);
  CHECK(text.find("     1  sensitive ") != std::string::npos);
  const std::string svg = analyze::SensitivitySvg(rep);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("most sensitive: sensitive") != std::string::npos);
  CHECK(analyze::SensitivityJson(rep).find("\"name\":\"sensitive\"") != std::string::npos);

  // A budget the base misses (the outlier weight wipes out the other
  // weights on half the samples) but 16 bits meet: met, with the sensitive
  // layer's weights among the few promoted.
  analyze::MixedOptions probe;  // percent=0: nothing promoted, the two extremes measured
  probe.mode = analyze::MixedMode::kPercent;
  probe.value = 0;
  Graph pg = g;
  analyze::MixedReport pr;
  REQUIRE(analyze::ChooseMixedPrecision(&pg, samples, probe, &pr).ok());
  CHECK(pr.promoted.empty());
  REQUIRE(pr.sqnr_high > pr.sqnr_base + 4);
  analyze::MixedOptions m;
  m.mode = analyze::MixedMode::kBudget;
  // 3 dB over the base: the outlier weight's share of the error (the rest
  // is held-out samples beyond the calibrated ranges, which no bit width
  // fixes).
  m.value = pr.sqnr_base + 3;
  Graph mg = g;
  analyze::MixedReport mr;
  REQUIRE(analyze::ChooseMixedPrecision(&mg, samples, m, &mr).ok());
  INFO(analyze::MixedText(mr));
  CHECK(mr.sqnr_base < m.value);
  CHECK(mr.sqnr_high > m.value);
  CHECK(mr.met);
  CHECK(mr.sqnr_chosen >= m.value);
  CHECK(mr.promoted_layers <= 1);  // 20% of six layers
  CHECK(std::find(mr.promoted.begin(), mr.promoted.end(), "sensitive (weights)") != mr.promoted.end());
  // Ordinary encodings: the promoted weight is 16-bit, the others 8-bit.
  CHECK(mg.tensor(*mg.FindTensor("sensitive_w")).encoding->effective_bitwidth() == 16);
  CHECK(mg.tensor(*mg.FindTensor("fc_a_w")).encoding->effective_bitwidth() == 8);

  // A budget the base precision already meets promotes nothing.
  analyze::MixedOptions easy = m;
  easy.value = mr.sqnr_base - 10;
  Graph eg = g;
  analyze::MixedReport er;
  REQUIRE(analyze::ChooseMixedPrecision(&eg, samples, easy, &er).ok());
  CHECK(er.promoted.empty());
  CHECK(er.met);
}

TEST_CASE("mixed-precision spellings", "[analyze]") {
  analyze::MixedMode mode;
  double v = 0;
  CHECK(analyze::ParseMixedMode("budget=30", &mode, &v));
  CHECK(mode == analyze::MixedMode::kBudget);
  CHECK(v == 30);
  CHECK(analyze::ParseMixedMode("percent=12.5", &mode, &v));
  CHECK(mode == analyze::MixedMode::kPercent);
  CHECK(analyze::ParseMixedMode("off", &mode, &v));
  CHECK_FALSE(analyze::ParseMixedMode("percent=150", &mode, &v));
  CHECK_FALSE(analyze::ParseMixedMode("budget=", &mode, &v));
  CHECK_FALSE(analyze::ParseMixedMode("budget=nan", &mode, &v));
  CHECK_FALSE(analyze::ParseMixedMode("quality=3", &mode, &v));
}

TEST_CASE("matmul-to-fully-connected moves a quantized per-channel weight with its encoding", "[rewrite]") {
  // x[2,4] -> MatMul(w[4,3] int8, per output channel: axis 1) -> y: the
  // weight of a Q-DQ model quantized by ONNX Runtime. FullyConnected takes
  // it as [3,4] with the channel axis 0, the same integers transposed.
  Graph original("qdq_matmul");
  const TensorId x = original.AddInput("x", DType::kFloat32, Shape{2, 4}).value();
  const std::vector<int8_t> q = {1, -2, 3, 4, -5, 6, -7, 8, -9, 10, 11, -12};
  std::vector<uint8_t> bytes(q.size());
  std::memcpy(bytes.data(), q.data(), q.size());
  const TensorId w =
      original.AddConstant("w", DType::kSFixed8, Shape{4, 3}, StaticData::Adopt(std::move(bytes))).value();
  Encoding e;
  e.kind = EncodingKind::kPerChannel;
  e.dtype = DType::kSFixed8;
  e.symmetry = Symmetry::kSymmetric;
  e.axis = 1;
  e.scales = {0.5f, 0.25f, 0.125f};
  e.offsets = {0, 0, 0};
  REQUIRE(original.SetEncoding(w, e).ok());
  const OpId mm = original.AddOp("MatMul", "proj", {x, w}, {"y"}).value();
  REQUIRE(original.MarkOutput(Out(original, mm)).ok());

  Graph g = original;
  rewrite::Options o;
  o.enabled = {"matmul-to-fully-connected"};
  const auto r = Rewrite(&g, o);
  CHECK(OutcomeOf(r, "matmul-to-fully-connected").fired == 1);
  const auto fc = g.FindOp("proj");
  REQUIRE(fc);
  REQUIRE(g.op(*fc).type == "FullyConnected");
  const Tensor& nk = g.tensor(g.op(*fc).inputs[1]);
  CHECK(nk.dtype == DType::kSFixed8);
  CHECK(nk.shape == (Shape{3, 4}));
  REQUIRE(nk.encoding);
  CHECK(nk.encoding->kind == EncodingKind::kPerChannel);
  CHECK(nk.encoding->axis == 0);
  CHECK(nk.encoding->scales == e.scales);
  const auto* t = reinterpret_cast<const int8_t*>(nk.data->data());
  for (int n = 0; n < 3; ++n)
    for (int k = 0; k < 4; ++k) CHECK(t[n * 4 + k] == q[static_cast<size_t>(k * 3 + n)]);
  CHECK(Cosine(original, g) >= 0.999999);
}

TEST_CASE("samples run on several workers give the one-thread outputs, in sample order, and the first failure",
          "[rewrite][samples][threads]") {
  const Graph g = ConvAffine();
  auto s = calib::SyntheticSamples(g, 7, 5).value();
  const auto one = calib::RunSamples(g, s, false, 1).value();
  REQUIRE_FALSE(one.empty());
  REQUIRE(one[0].size() % 7 == 0);
  for (const uint32_t threads : {2u, 3u, 0u}) {
    INFO("threads " << threads);
    const auto many = calib::RunSamples(g, s, false, threads).value();
    REQUIRE(many.size() == one.size());
    for (size_t k = 0; k < one.size(); ++k)
      CHECK(std::memcmp(many[k].data(), one[k].data(), one[k].size() * sizeof(float)) == 0);
  }
  // Samples 4 and 5 cannot be loaded: the error is sample 4's, on any count.
  calib::SampleSource bad = s;
  bad.load = [s](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    if (i == 4 || i == 5) return InvalidArgument("sample {} is unreadable", i);
    return s.load(i);
  };
  for (const uint32_t threads : {1u, 2u, 3u}) {
    auto r = calib::RunSamples(g, bad, false, threads);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("sample 4"));
  }
  // A sample source that throws on a worker: an error, not a terminated process.
  calib::SampleSource throwing = s;
  throwing.load = [s](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    if (i == 3) throw std::bad_alloc();
    return s.load(i);
  };
  auto t = calib::RunSamples(g, throwing, false, 2);
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == StatusCode::kOutOfMemory);
}
