// Sequential MSE weight encodings: the input second moment H (e^T H e is
// the output error the executor computes), the per-weight search (never
// worse than min-max, its reported error the error of the encoding it
// returns, in the weight's own layout), and the calibration that uses them
// (levels, outlier channels, W4 and W8, bad option combinations).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "calib/calib_test_models.h"
#include "calib/calibrate.h"
#include "calib/seqmse.h"
#include "calib/weight_search.h"
#include "exec/executor.h"
#include "exec/input_gram.h"
#include "quant/quantize.h"

using namespace qairt;
using namespace qairt::calib;
using testing::Floats;

namespace {

std::vector<float> Normal(size_t n, float sd, uint32_t seed) { return testing::NormalFloats(n, 0.f, sd, seed); }
using testing::FloatBytes;

std::vector<float> Run(const Graph& g, const std::vector<float>& x, bool simulate) {
  auto ex = exec::Executor::Create(g, exec::Options{1, simulate});
  REQUIRE(ex.ok());
  const std::vector<uint8_t> b = FloatBytes(x);
  auto out = ex.value()->Run({b.data()}, {b.size()});
  REQUIRE(out.ok());
  std::vector<float> y(out.value()[0].bytes.size() / 4);
  std::memcpy(y.data(), out.value()[0].bytes.data(), y.size() * 4);
  return y;
}

// sum over rows n of e_n^T H_g e_n, rows read as WeightRows describes.
double GramError(const exec::InputGram& h, const std::vector<float>& e) {
  const exec::WeightRows& r = h.rows();
  double total = 0;
  for (int64_t n = 0; n < r.rows(); ++n) {
    const double* H = h.group(n / r.rows_per_group);
    auto at = [&](int64_t i) { return r.columns ? e[i * r.rows() + n] : e[n * r.k + i]; };
    for (int64_t i = 0; i < r.k; ++i)
      for (int64_t j = 0; j < r.k; ++j) total += at(i) * H[i * r.k + j] * at(j);
  }
  return total;
}

double SumSquares(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return s;
}

double SqnrDb(const std::vector<float>& ref, const std::vector<float>& got) {
  double s = 0, n = 0;
  for (size_t i = 0; i < ref.size(); ++i) s += double(ref[i]) * ref[i], n += double(ref[i] - got[i]) * (ref[i] - got[i]);
  return 10 * std::log10(s / n);
}

// x -> op(weight E) -> y: the executor's sum of y^2 is sum_n e_n^T H e_n.
void CheckGram(const std::string& type, Shape x_shape, Shape w_shape, AttributeMap attrs) {
  Graph g("gram");
  const TensorId x = g.AddInput("x", DType::kFloat32, x_shape).value();
  const auto wn = static_cast<size_t>(*w_shape.element_count());
  const std::vector<float> e = Normal(wn, 1.f, 7);
  const TensorId w = g.AddConstant("w", DType::kFloat32, w_shape, Floats(e)).value();
  const OpId op = g.AddOp(type, "op", {x, w}, {"y"}, attrs).value();
  REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
  auto h = exec::InputGram::For(g, op);
  REQUIRE(h.ok());
  double direct = 0;
  for (uint32_t s = 0; s < 3; ++s) {
    const std::vector<float> xv = Normal(static_cast<size_t>(*x_shape.element_count()), 1.f, 100 + s);
    REQUIRE(h.value().Add(xv.data(), xv.size()).ok());
    direct += SumSquares(Run(g, xv, false));
  }
  INFO(type);
  CHECK(GramError(h.value(), e) == Approx(direct).epsilon(1e-4));
}

}  // namespace

TEST_CASE("InputGram: e^T H e is the output error the executor computes", "[calib][seqmse]") {
  CheckGram("FullyConnected", Shape{2, 3, 8}, Shape{5, 8}, {});
  CheckGram("MatMul", Shape{2, 4, 8}, Shape{8, 5}, {});
  CheckGram("MatMul", Shape{4, 8}, Shape{5, 8}, {{"transpose_in1", int64_t{1}}});
  CheckGram("Conv2d", Shape{2, 4, 9, 7}, Shape{6, 2, 3, 3},
            {{"strides", std::vector<int64_t>{2, 1}}, {"pads", std::vector<int64_t>{1, 0, 1, 2}},
             {"dilations", std::vector<int64_t>{1, 2}}, {"group", int64_t{2}}});
  CheckGram("DepthWiseConv2d", Shape{1, 3, 6, 6}, Shape{3, 1, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  CheckGram("Conv1d", Shape{1, 3, 11}, Shape{4, 3, 3}, {{"strides", std::vector<int64_t>{2}}});
}

namespace {

// An FC [n, k] or MatMul [k, n] weight whose input feature 0 is an outlier
// the data barely multiplies.
// One weighted op on an input whose feature 0 is barely used, and whose
// weights for that feature are outliers.
struct FcCase {
  Graph g{"fc"};
  OpId op = kInvalidId;
  std::vector<float> w;
  std::vector<int64_t> dims;  // the weight's
  size_t x_elems = 0;
  std::function<void(std::vector<float>*)> shrink;  // makes feature 0 of an input tiny
};

FcCase MakeFc(int64_t n, int64_t k, bool columns) {
  FcCase c;
  const TensorId x = c.g.AddInput("x", DType::kFloat32, Shape{16, k}).value();
  c.w = Normal(static_cast<size_t>(n * k), 0.1f, 3);
  // Input feature 0's weights are outliers (and its input is tiny).
  for (int64_t j = 0; j < n; ++j) c.w[static_cast<size_t>(columns ? j : j * k)] = j % 2 ? 2.f : -2.f;
  const Shape ws = columns ? Shape{k, n} : Shape{n, k};
  const TensorId w = c.g.AddConstant("w", DType::kFloat32, ws, Floats(c.w)).value();
  c.op = c.g.AddOp(columns ? "MatMul" : "FullyConnected", "op", {x, w}, {"y"}).value();
  REQUIRE(c.g.MarkOutput(c.g.op(c.op).outputs[0]).ok());
  c.dims = columns ? std::vector<int64_t>{k, n} : std::vector<int64_t>{n, k};
  c.x_elems = static_cast<size_t>(16 * k);
  c.shrink = [k](std::vector<float>* xv) {
    for (int64_t r = 0; r < 16; ++r) (*xv)[static_cast<size_t>(r * k)] *= 0.01f;
  };
  return c;
}

// A 3x3 convolution x[1, i, 6, 6] -> [o, i, 3, 3] (padded): input channel 0
// is the tiny feature.
FcCase MakeConv(int64_t o, int64_t i) {
  FcCase c;
  c.g = Graph("conv");
  const TensorId x = c.g.AddInput("x", DType::kFloat32, Shape{1, i, 6, 6}).value();
  c.w = Normal(static_cast<size_t>(o * i * 9), 0.1f, 3);
  for (int64_t j = 0; j < o; ++j)
    for (size_t t = 0; t < 9; ++t) c.w[static_cast<size_t>(j * i * 9) + t] = j % 2 ? 2.f : -2.f;
  const TensorId w = c.g.AddConstant("w", DType::kFloat32, Shape{o, i, 3, 3}, Floats(c.w)).value();
  c.op = c.g.AddOp("Conv2d", "op", {x, w}, {"y"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}).value();
  REQUIRE(c.g.MarkOutput(c.g.op(c.op).outputs[0]).ok());
  c.dims = {o, i, 3, 3};
  c.x_elems = static_cast<size_t>(i * 36);
  c.shrink = [](std::vector<float>* xv) {
    for (size_t t = 0; t < 36; ++t) (*xv)[t] *= 0.01f;
  };
  return c;
}

void CheckSearch(const std::string& what, FcCase c, quant::EncodingRequest req) {
  INFO(what);
  auto h = exec::InputGram::For(c.g, c.op);
  REQUIRE(h.ok());
  for (uint32_t s = 0; s < 4; ++s) {
    std::vector<float> xv = Normal(c.x_elems, 1.f, 200 + s);
    c.shrink(&xv);
    REQUIRE(h.value().Add(xv.data(), xv.size()).ok());
  }
  const std::vector<int64_t>& dims = c.dims;
  auto base = quant::ComputeEncoding("w", c.w.data(), dims, req);
  REQUIRE(base.ok());
  std::vector<const double*> grams{h.value().group(0)};
  auto found = SearchWeightEncoding("w", c.w.data(), false, dims, h.value().rows(), base.value(), grams);
  REQUIRE(found.ok());
  const WeightSearchResult& r = found.value();
  CHECK(r.error <= r.base_error);
  // Both figures are the output errors of the encodings they name.
  auto err_of = [&](const Encoding& e) {
    Diagnostics d;
    REQUIRE(ValidateEncoding(e, "w", Shape::FromExtents(dims), 0, &d));
    auto q = quant::QuantizeTensor("w", DType::kFloat32, c.w.data(), dims, e);
    REQUIRE(q.ok());
    std::vector<float> deq(c.w.size());
    REQUIRE(quant::DequantizeTensor("w", q.value().data(), q.value().size(), dims, e, deq.data()).ok());
    for (size_t i = 0; i < deq.size(); ++i) deq[i] -= c.w[i];
    return GramError(h.value(), deq);
  };
  CHECK(err_of(base.value()) == Approx(r.base_error).epsilon(1e-3));
  CHECK(err_of(r.encoding) == Approx(r.error).epsilon(1e-3));
  CHECK(r.cells_changed > 0);
  CHECK(r.error < r.base_error);
  CHECK(r.values.empty());

  // Adaptive rounding on top: the values sit on the chosen grid (quantizing
  // them gives them back), each within one step of the weight, and their
  // output error is the one reported, below the grid search's alone.
  WeightSearchOptions ar;
  ar.adaptive_rounding = true;
  auto rounded = SearchWeightEncoding("w", c.w.data(), false, dims, h.value().rows(), base.value(), grams, ar);
  REQUIRE(rounded.ok());
  const WeightSearchResult& a = rounded.value();
  REQUIRE(a.values.size() == c.w.size());
  CHECK(a.encoding == r.encoding);
  CHECK(a.roundings_changed > 0);
  CHECK(a.error < r.error);
  auto q = quant::QuantizeTensor("w", DType::kFloat32, a.values.data(), dims, a.encoding);
  REQUIRE(q.ok());
  std::vector<float> back(c.w.size()), moved(c.w.size());
  REQUIRE(quant::DequantizeTensor("w", q.value().data(), q.value().size(), dims, a.encoding, back.data()).ok());
  CHECK(back == a.values);
  auto q0 = quant::QuantizeTensor("w", DType::kFloat32, c.w.data(), dims, a.encoding);
  REQUIRE(q0.ok());
  std::vector<float> nearest(c.w.size());
  REQUIRE(quant::DequantizeTensor("w", q0.value().data(), q0.value().size(), dims, a.encoding, nearest.data()).ok());
  size_t far = 0;
  for (size_t i = 0; i < c.w.size(); ++i) {
    moved[i] = a.values[i] - c.w[i];
    // The other grid point around the weight at most: never beyond it.
    if (std::fabs(a.values[i] - nearest[i]) > 0 && (a.values[i] - c.w[i]) * (nearest[i] - c.w[i]) > 0) ++far;
  }
  CHECK(far == 0);
  CHECK(GramError(h.value(), moved) == Approx(a.error).epsilon(1e-3));
}

}  // namespace

TEST_CASE("weight search: never worse than min-max, errors of the encodings it returns", "[calib][seqmse]") {
  quant::EncodingRequest pc;
  pc.kind = EncodingKind::kPerChannel;
  pc.dtype = DType::kSFixed8;
  pc.symmetry = Symmetry::kSymmetric;
  pc.axis = 0;
  CheckSearch("per channel, FC [N, K]", MakeFc(12, 32, false), pc);
  pc.axis = 1;
  CheckSearch("per channel, MatMul [K, N]", MakeFc(12, 32, true), pc);
  quant::EncodingRequest pt;
  pt.dtype = DType::kUFixed8;
  CheckSearch("per tensor, asymmetric", MakeFc(12, 32, false), pt);
  quant::EncodingRequest pb;
  pb.kind = EncodingKind::kPerBlock;
  pb.dtype = DType::kSFixed4;
  pb.symmetry = Symmetry::kSymmetric;
  pb.axis = 0;
  pb.block_sizes = {16, 1};
  CheckSearch("per block, MatMul [K, N]", MakeFc(12, 64, true), pb);
  quant::EncodingRequest lp = pb;
  lp.kind = EncodingKind::kLpbq;
  lp.axis = 1;
  lp.block_sizes = {1, 16};
  lp.decompressed_bitwidth = 8;
  CheckSearch("LPBQ, FC [N, K]", MakeFc(12, 64, false), lp);
  // A convolution's blocks: 16 input channels with all their taps.
  lp.block_sizes = {1, 16, 3, 3};
  CheckSearch("LPBQ, Conv2d [O, I, 3, 3]", MakeConv(6, 32), lp);
  pb.axis = 1;
  pb.block_sizes = {1, 16, 3, 3};
  CheckSearch("per block, Conv2d [O, I, 3, 3]", MakeConv(6, 32), pb);
}

namespace {

// x[16, 64] (feature 0 tiny) -> FC(w1 [64, 64]) -> Relu -> FC(w2 [16, 64]) -> y.
// Column 0 of w1 is an outlier: it sets every row's min-max range but
// meets a near-zero input.
Graph OutlierMlp() {
  Graph g("outlier_mlp");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{16, 64}).value();
  std::vector<float> w1 = Normal(64 * 64, 0.1f, 11);
  for (int64_t r = 0; r < 64; ++r) w1[static_cast<size_t>(r * 64)] = r % 2 ? 3.f : -3.f;
  const TensorId t1 = g.AddConstant("w1", DType::kFloat32, Shape{64, 64}, Floats(w1)).value();
  const OpId fc1 = g.AddOp("FullyConnected", "fc1", {x, t1}, {"h"}).value();
  const OpId relu = g.AddOp("Relu", "relu", {g.op(fc1).outputs[0]}, {"r"}).value();
  const TensorId t2 = g.AddConstant("w2", DType::kFloat32, Shape{16, 64}, Floats(Normal(16 * 64, 0.1f, 12))).value();
  const OpId fc2 = g.AddOp("FullyConnected", "fc2", {g.op(relu).outputs[0], t2}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(fc2).outputs[0]).ok());
  return g;
}

std::vector<float> OutlierInput(size_t i) {
  std::vector<float> v = Normal(16 * 64, 1.f, static_cast<uint32_t>(500 + i));
  for (size_t r = 0; r < 16; ++r) v[r * 64] *= 0.01f;
  return v;
}

using InputMaker = std::vector<float> (*)(size_t);

// Samples first .. first + n - 1 of an input maker.
SampleSource SamplesOf(InputMaker input, size_t n, size_t first) {
  SampleSource s;
  s.count = n;
  s.load = [input, first](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    return std::vector<std::vector<uint8_t>>{FloatBytes(input(first + i))};
  };
  return s;
}

SampleSource OutlierSamples(size_t n, size_t first) { return SamplesOf(OutlierInput, n, first); }

// Median output SQNR of the quantized simulation on 8 held-out samples.
// 16-bit activations, per-row weights of `bits` bits.
Options A16(uint32_t bits) {
  Options o;
  o.act_bitwidth = 16;
  o.weights_bitwidth = bits;
  o.per_row = true;
  return o;
}

double HeldOutSqnr(const Graph& quantized, const Graph& fp, InputMaker input = OutlierInput) {
  std::vector<double> v;
  for (size_t i = 0; i < 8; ++i) {
    const std::vector<float> x = input(1000 + i);
    v.push_back(SqnrDb(Run(fp, x, false), Run(quantized, x, true)));
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("seqmse beats min-max on a layer with an outlier channel, at W8 and W4", "[calib][seqmse]") {
  for (uint32_t bits : {8u, 4u}) {
    INFO("weights " << bits << "-bit");
    const Graph fp = OutlierMlp();
    Options o = A16(bits);
    Graph minmax = fp, seq = fp;
    Report rm, rs;
    REQUIRE(Calibrate(&minmax, OutlierSamples(8, 0), o, &rm).ok());
    o.param_method = Method::kSeqMse;
    REQUIRE(Calibrate(&seq, OutlierSamples(8, 0), o, &rs).ok());
    REQUIRE(rs.notes.size() == 1);
    CHECK(rs.notes[0].find("sequential MSE: 2 weights in 2 levels") != std::string::npos);
    // Activations are min-max in both; only the weights differ.
    const TensorId h = *seq.FindTensor("h");
    CHECK(*seq.tensor(h).encoding == *minmax.tensor(h).encoding);
    CHECK(*seq.tensor(*seq.FindTensor("w1")).encoding != *minmax.tensor(*minmax.FindTensor("w1")).encoding);
    const double a = HeldOutSqnr(minmax, fp), b = HeldOutSqnr(seq, fp);
    INFO("min-max " << a << " dB, seqmse " << b << " dB");
    CHECK(b > a + 3.0);
  }
}

TEST_CASE("seqmse needs samples and is a weight method only", "[calib][seqmse]") {
  Graph g = testing::SmallMlp();
  Options o;
  o.param_method = Method::kSeqMse;
  Report r;
  Status s = CalibrateParams(&g, o, &r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("seqmse") != std::string::npos);
  CHECK_FALSE(g.tensor(*g.FindTensor("w")).encoding);  // unchanged
  o.param_method = Method::kMinMax;
  o.act_method = Method::kSeqMse;
  s = Calibrate(&g, OutlierSamples(1, 0), o, &r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("weight encodings only") != std::string::npos);
  Method m;
  REQUIRE(ParseMethod("seqmse", &m));
  CHECK(m == Method::kSeqMse);
  CHECK(MethodName(m) == "seqmse");
}

TEST_CASE("seqmse encodings do not depend on the thread count", "[calib][seqmse][threads]") {
  Options o;
  o.act_bitwidth = 16;
  o.weights_bitwidth = 4;
  o.per_row = true;
  o.param_method = Method::kSeqMse;
  Graph one = OutlierMlp(), two = OutlierMlp();
  Report r1, r2;
  o.num_threads = 1;
  REQUIRE(Calibrate(&one, OutlierSamples(7, 0), o, &r1).ok());
  o.num_threads = 3;
  REQUIRE(Calibrate(&two, OutlierSamples(7, 0), o, &r2).ok());
  for (const char* w : {"w1", "w2"}) CHECK(*one.tensor(*one.FindTensor(w)).encoding == *two.tensor(*two.FindTensor(w)).encoding);
  CHECK(r1.notes == r2.notes);
}

namespace {

// Inputs as a network's are: correlated (8 latent factors mixed into 64
// features, a little noise), so an output mixes rounding errors of many
// weights and choosing roundings together pays; i.i.d. inputs (a diagonal
// H) leave nothing to gain over rounding to nearest.
std::vector<float> CorrelatedInput(size_t i) {
  const std::vector<float> mix = Normal(8 * 64, 1.f, 77);
  const std::vector<float> z = Normal(16 * 8, 1.f, static_cast<uint32_t>(900 + i));
  std::vector<float> v = Normal(16 * 64, 0.05f, static_cast<uint32_t>(5000 + i));
  for (size_t r = 0; r < 16; ++r)
    for (size_t f = 0; f < 64; ++f)
      for (size_t k = 0; k < 8; ++k) v[r * 64 + f] += z[r * 8 + k] * mix[k * 64 + f];
  return v;
}

SampleSource CorrelatedSamples(size_t n, size_t first) { return SamplesOf(CorrelatedInput, n, first); }

double CorrelatedSqnr(const Graph& quantized, const Graph& fp) { return HeldOutSqnr(quantized, fp, CorrelatedInput); }

}  // namespace

TEST_CASE("adaptive rounding beats round-to-nearest on held-out data, alone and with seqmse", "[calib][seqmse]") {
  for (uint32_t bits : {8u, 4u}) {
    INFO("weights " << bits << "-bit");
    const Graph fp = OutlierMlp();
    Options o = A16(bits);
    Graph nearest = fp, rounded = fp, both = fp;
    Report rn, rr, rb;
    REQUIRE(Calibrate(&nearest, CorrelatedSamples(16, 0), o, &rn).ok());
    o.adaptive_rounding = true;
    REQUIRE(Calibrate(&rounded, CorrelatedSamples(16, 0), o, &rr).ok());
    o.param_method = Method::kSeqMse;
    REQUIRE(Calibrate(&both, CorrelatedSamples(16, 0), o, &rb).ok());
    REQUIRE(rr.notes.size() == 1);
    CHECK(rr.notes[0].find("roundings changed") != std::string::npos);
    // Rounding alone keeps the min-max grids; only the values move.
    const TensorId w1 = *rounded.FindTensor("w1");
    CHECK(*rounded.tensor(w1).encoding == *nearest.tensor(*nearest.FindTensor("w1")).encoding);
    CHECK(rounded.tensor(w1).data != nearest.tensor(*nearest.FindTensor("w1")).data);
    const double a = CorrelatedSqnr(nearest, fp), b = CorrelatedSqnr(rounded, fp), c = CorrelatedSqnr(both, fp);
    INFO("nearest " << a << " dB, adaptive rounding " << b << " dB, with seqmse " << c << " dB");
    CHECK(b > a + 1.0);
    CHECK(c > a + 1.0);
  }
  Graph g = testing::SmallMlp();
  Options o;
  o.adaptive_rounding = true;
  Report r;
  const Status s = CalibrateParams(&g, o, &r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("--adaptive_rounding") != std::string::npos);
}

TEST_CASE("seqmse searches every projection of a shared input, whatever its width", "[calib][seqmse][threads]") {
  // q and k projections of one input (GQA: k narrower): one H, each weight its own rows.
  Graph g("qk");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{16, 64}).value();
  const TensorId wq = g.AddConstant("wq", DType::kFloat32, Shape{32, 64}, Floats(Normal(32 * 64, 0.1f, 1))).value();
  const TensorId wk = g.AddConstant("wk", DType::kFloat32, Shape{16, 64}, Floats(Normal(16 * 64, 0.1f, 2))).value();
  const OpId q = g.AddOp("FullyConnected", "q", {x, wq}, {"yq"}).value();
  const OpId k = g.AddOp("FullyConnected", "k", {x, wk}, {"yk"}).value();
  REQUIRE(g.MarkOutput(g.op(q).outputs[0]).ok());
  REQUIRE(g.MarkOutput(g.op(k).outputs[0]).ok());
  for (bool lpbq : {false, true}) {
    INFO((lpbq ? "LPBQ" : "per row"));
    Graph c = g;
    Options o;
    o.act_bitwidth = 16;
    o.per_row = true;
    if (lpbq) o.weights_bitwidth = 4, o.block_size = 16, o.lpbq = true;
    o.param_method = Method::kSeqMse;
    o.num_threads = 2;  // both weights of the level searched at once
    Report r;
    REQUIRE(Calibrate(&c, CorrelatedSamples(4, 0), o, &r).ok());
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].rfind("sequential MSE: 2 weights in 1 level,", 0) == 0);
    CHECK(r.notes[0].find("kept min-max") == std::string::npos);
  }
}

TEST_CASE("seqmse keeps min-max for a weight whose second moment would not fit, and says so", "[calib][seqmse]") {
  // K = 12000: H would take 1.1 GB in double; nothing that large is allocated.
  Graph g("wide");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 12000}).value();
  const TensorId w = g.AddConstant("w", DType::kFloat32, Shape{2, 12000}, Floats(Normal(2 * 12000, 0.1f, 4))).value();
  const OpId fc = g.AddOp("FullyConnected", "fc", {x, w}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(fc).outputs[0]).ok());
  Options o = A16(8);
  o.param_method = Method::kSeqMse;
  SampleSource s;
  s.count = 2;
  s.load = [](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    return std::vector<std::vector<uint8_t>>{FloatBytes(Normal(12000, 1.f, static_cast<uint32_t>(i)))};
  };
  Graph minmax = g;
  Report r, rm;
  REQUIRE(Calibrate(&g, s, o, &r).ok());
  o.param_method = Method::kMinMax;
  REQUIRE(Calibrate(&minmax, s, o, &rm).ok());
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("0 weights") != std::string::npos);
  CHECK(r.notes[0].find("w: rows of 12000 need a 1099 MB second moment (limit 1024 MB)") != std::string::npos);
  CHECK(*g.tensor(w).encoding == *minmax.tensor(w).encoding);
}
