// A MatMul weight rewritten for FullyConnected is a transposed view of its
// [K, N] source (StaticData::TransposeOf). Its encodings, its quantized
// bytes and the executor's product must equal those of the materialized
// transpose, bit for bit, and none of them may make the transpose: that copy
// is the size of the model.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "calib/calibrate.h"
#include "exec/executor.h"
#include "kernels/ops.h"
#include "passes/pass_test_util.h"
#include "passes/weight_test_util.h"
#include "passes/rewrite/rewrite.h"
#include "quant/quantize.h"

using namespace qairt;
using namespace qairt::testing;

namespace {

// [k, n] floats: normal values, one outlier column and one outlier row.
std::vector<float> Source(int64_t k, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 0.05f);
  std::vector<float> v(static_cast<size_t>(k * n));
  for (float& x : v) x = d(rng);
  if (n > 3)
    for (int64_t r = 0; r < k; ++r) v[static_cast<size_t>(r * n + 3)] *= 40.f;
  if (k > 7)
    for (int64_t c = 0; c < n; ++c) v[static_cast<size_t>(7 * n + c)] += 1.5f;
  return v;
}

std::vector<float> Transposed(const std::vector<float>& src, int64_t k, int64_t n) {
  std::vector<float> t(src.size());
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) t[static_cast<size_t>(c * k + r)] = src[static_cast<size_t>(r * n + c)];
  return t;
}

// `values` written after `offset` bytes of other data, that window mapped.
std::shared_ptr<const StaticData> MappedWindow(const TempPath& file, const std::vector<float>& values, size_t offset) {
  std::ofstream out(file.path, std::ios::binary);
  const std::string before(offset, '\x7f');
  out.write(before.data(), static_cast<std::streamsize>(offset));
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  out.write(before.data(), static_cast<std::streamsize>(offset));  // and after
  out.close();
  return StaticData::MapFile(file.path.string(), offset, values.size() * sizeof(float)).value();
}

// A view of `src` [k, n] that counts how often its transpose is made.
std::shared_ptr<const StaticData> CountingView(const std::shared_ptr<const StaticData>& src, int64_t k, int64_t n,
                                               std::atomic<int>* made) {
  return StaticData::TransposeOf(src, sizeof(float), k, n, [k, n, made](const uint8_t* in, uint8_t* out) {
    ++*made;
    kernels::Transpose2D(sizeof(float), k, n, in, out);
  });
}


}  // namespace

TEST_CASE("a transposed view encodes and quantizes from its source, identical to the transpose",
          "[passes][transposed]") {
  const ScopedFileReads pread_reads(StaticDataReader::FileReads::kPread);
  // K = 1000, blocks of 40: bands of 840 and 160 source rows.
  const int64_t k = 1000, n = 150;
  const std::vector<float> src = Source(k, n, 7);
  const std::vector<float> plain = Transposed(src, k, n);
  const auto plain_data = FloatData(plain);
  const std::vector<int64_t> dims = {n, k};
  kernels::ThreadPool pool(2);
  // The source in memory, a mapped file, and a window at an odd offset of
  // a larger mapped file (external data holding several tensors): mapped
  // sources are read with pread (StaticDataReader), never their mapping.
  TempPath file("qairt_transposed_source.bin"), packed("qairt_transposed_packed.bin");
  const auto in_file = MappedFloats(file, src);
  const auto in_window = MappedWindow(packed, src, 12);
  REQUIRE(StaticDataReader(*in_file).from_file());
  REQUIRE(StaticDataReader(*in_window).from_file());
  for (const auto& src_data : {FloatData(src), in_file, in_window}) {
    INFO((src_data->mapped() ? (src_data->file_offset() ? "a window of a mapped file" : "a mapped file") : "memory"));
    struct Case {
      const char* what;
      quant::EncodingRequest req;
      bool row_local;
    };
    const std::vector<Case> cases = {
        {"per tensor", WeightRequest(EncodingKind::kPerTensor, DType::kUFixed8, Symmetry::kAsymmetric, -1), true},
        {"per row", WeightRequest(EncodingKind::kPerChannel, DType::kSFixed8, Symmetry::kSymmetric, 0), true},
        {"per block", WeightRequest(EncodingKind::kPerBlock, DType::kSFixed4, Symmetry::kSymmetric, 1, {1, 40}), true},
        {"lpbq", WeightRequest(EncodingKind::kLpbq, DType::kSFixed4, Symmetry::kSymmetric, 1, {1, 40}), true},
        // Per column: not row-local, read through the materialized transpose.
        {"per column", WeightRequest(EncodingKind::kPerChannel, DType::kSFixed8, Symmetry::kSymmetric, 1), false},
    };
    for (const Case& c : cases) {
      for (kernels::ThreadPool* p : {static_cast<kernels::ThreadPool*>(nullptr), &pool}) {
        INFO(c.what << (p ? " on a pool" : ""));
        std::atomic<int> made{0};
        const auto view = CountingView(src_data, k, n, &made);
        quant::QuantizeOptions o;
        o.pool = p;
        auto want = quant::ComputeEncoding("w", plain.data(), dims, c.req);
        auto got = quant::ComputeEncoding("w", *view, dims, c.req, o);
        REQUIRE(want.ok());
        REQUIRE(got.ok());
        CHECK(got.value() == want.value());
        auto want_q = quant::QuantizeTensor("w", DType::kFloat32, plain.data(), dims, want.value());
        auto got_q = quant::QuantizeTensor("w", *view, dims, want.value(), o);
        REQUIRE(want_q.ok());
        REQUIRE(got_q.ok());
        CHECK(got_q.value() == want_q.value());
        CHECK(made == (c.row_local ? 0 : 1));
        CHECK(view->materialized() == !c.row_local);
      }
    }
    // Float16 storage (an FP16 weight) is elementwise: row panels too.
    std::atomic<int> made{0};
    const auto view = CountingView(src_data, k, n, &made);
    Encoding half;
    half.kind = EncodingKind::kFloat;
    half.dtype = DType::kFloat16;
    auto want = quant::QuantizeTensor("w", DType::kFloat32, plain.data(), dims, half);
    auto got = quant::QuantizeTensor("w", *view, dims, half);
    REQUIRE(want.ok());
    REQUIRE(got.ok());
    CHECK(got.value() == want.value());
    CHECK(made == 0);
    // K not a multiple of 8 (2- and 4-bit rows would not start on bytes):
    // read through the transpose, with the same results.
    {
      const int64_t k7 = 1001;
      const std::vector<float> src7 = Source(k7, n, 11), plain7 = Transposed(src7, k7, n);
      std::atomic<int> made7{0};
      const auto view7 = CountingView(FloatData(src7), k7, n, &made7);
      const auto req = WeightRequest(EncodingKind::kPerChannel, DType::kSFixed4, Symmetry::kSymmetric, 0);
      auto want7 = quant::ComputeEncoding("w", plain7.data(), {n, k7}, req);
      auto got7 = quant::ComputeEncoding("w", *view7, {n, k7}, req);
      REQUIRE(got7.ok());
      CHECK(got7.value() == want7.value());
      CHECK(quant::QuantizeTensor("w", *view7, {n, k7}, got7.value()).value() ==
            quant::QuantizeTensor("w", DType::kFloat32, plain7.data(), {n, k7}, want7.value()).value());
      CHECK(made7 == 1);
    }
    // Once made, data() is the transpose and is made only once.
    CHECK(std::memcmp(view->data(), plain.data(), plain.size() * sizeof(float)) == 0);
    CHECK(view->data() == view->data());
    CHECK(made == 1);
  }
}

TEST_CASE("a bad value in a transposed view is reported as for the plain tensor", "[passes][transposed]") {
  const int64_t k = 1000, n = 150;
  std::vector<float> src = Source(k, n, 9);
  src[static_cast<size_t>(400 * n + 120)] = std::nanf("");  // view row 120, column 400
  const std::vector<float> plain = Transposed(src, k, n);
  std::atomic<int> made{0};
  const auto view = CountingView(FloatData(src), k, n, &made);
  const auto req = WeightRequest(EncodingKind::kPerChannel, DType::kSFixed8, Symmetry::kSymmetric, 0);
  auto want = quant::ComputeEncoding("w", plain.data(), {n, k}, req);
  auto got = quant::ComputeEncoding("w", *view, {n, k}, req);
  REQUIRE_FALSE(want.ok());
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message() == want.status().message());
  CHECK(got.status().message().find(std::to_string(120 * k + 400)) != std::string::npos);
}

TEST_CASE("FullyConnected multiplies by a transposed view's source without making the transpose",
          "[passes][transposed][exec]") {
  const int64_t k = 96, n = 40;
  const std::vector<float> src = Source(k, n, 3);
  auto build = [&](std::shared_ptr<const StaticData> w, bool extra_consumer) {
    Graph g("fc");
    const TensorId x = g.AddInput("x", DType::kFloat32, Shape{3, 5, k}).value();
    const TensorId wt = g.AddConstant("w", DType::kFloat32, Shape{n, k}, std::move(w)).value();
    const TensorId b = g.AddConstant("b", DType::kFloat32, Shape{n}, FloatData(Source(1, n, 4))).value();
    const OpId fc = g.AddOp("FullyConnected", "fc", {x, wt, b}, {"y"}).value();
    REQUIRE(g.MarkOutput(g.op(fc).outputs[0]).ok());
    if (extra_consumer) {  // the weight also read as a plain tensor
      const OpId neg = g.AddOp("ElementWiseNeg", "neg", {wt}, {"wn"}).value();
      REQUIRE(g.MarkOutput(g.op(neg).outputs[0]).ok());
    }
    return g;
  };
  std::vector<float> x(static_cast<size_t>(3 * 5 * k));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  auto run = [&](const Graph& g) {
    auto e = exec::Executor::Create(g);
    REQUIRE(e.ok());
    auto out = e.value()->Run({x.data()}, {x.size() * sizeof(float)});
    REQUIRE(out.ok());
    return out.value();
  };
  for (bool extra : {false, true}) {
    INFO((extra ? "with" : "without") << " another consumer");
    std::atomic<int> made{0};
    const auto want = run(build(FloatData(Transposed(src, k, n)), extra));
    const auto got = run(build(CountingView(FloatData(src), k, n, &made), extra));
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].bytes == want[i].bytes);
    CHECK(made == (extra ? 1 : 0));
  }
}

TEST_CASE("a rewritten MatMul weight is encoded, quantized and exported without its float transpose",
          "[passes][transposed]") {
  // x[2, 64] -> MatMul(w[64, 48]) -> y, per-row int8 weights from their
  // values, 16-bit activations given: what `convert --float_fallback` does.
  const int64_t k = 64, n = 48;
  const std::vector<float> src = Source(k, n, 5);
  auto build = [&](bool as_fc) {
    Graph g("mm");
    const TensorId x = g.AddInput("x", DType::kFloat32, Shape{2, k}).value();
    const TensorId w = as_fc ? g.AddConstant("w", DType::kFloat32, Shape{n, k}, FloatData(Transposed(src, k, n))).value()
                             : g.AddConstant("w", DType::kFloat32, Shape{k, n}, FloatData(src)).value();
    const OpId op = g.AddOp(as_fc ? "FullyConnected" : "MatMul", "proj", {x, w}, {"y"}).value();
    REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
    return g;
  };
  auto set_activations = [](Graph* g) {  // as an overrides file gives them
    REQUIRE(g->SetEncoding(*g->FindTensor("x"), PerTensor(DType::kUFixed16, 1e-4f, -32768)).ok());
    REQUIRE(g->SetEncoding(*g->FindTensor("y"), PerTensor(DType::kUFixed16, 1e-3f, -32768)).ok());
  };
  Graph g = build(false);
  rewrite::Options ro;
  ro.verify = false;
  ro.enabled = {"matmul-to-fully-connected"};  // as --use_per_row_quantization does
  rewrite::Report rr;
  REQUIRE(rewrite::RunRewrites(&g, ro, &rr).ok());
  const OpId fc = *g.FindOp("proj");
  REQUIRE(g.op(fc).type == "FullyConnected");
  const std::shared_ptr<const StaticData> view = g.tensor(g.op(fc).inputs[1]).data;
  REQUIRE(view->transposition());

  Graph want = build(true);
  set_activations(&g);
  set_activations(&want);
  calib::Options co;
  co.per_row = true;
  calib::Report cr, wr;
  REQUIRE(calib::CalibrateParams(&g, co, &cr).ok());
  REQUIRE(calib::CalibrateParams(&want, co, &wr).ok());
  RunProcess(&g, Builtin("htp_v73"));
  RunProcess(&want, Builtin("htp_v73"));
  const Tensor& got_w = g.tensor(g.op(*g.FindOp("proj")).inputs[1]);
  const Tensor& want_w = want.tensor(want.op(*want.FindOp("proj")).inputs[1]);
  CHECK(got_w.dtype == DType::kSFixed8);
  REQUIRE(got_w.encoding);
  REQUIRE(want_w.encoding);
  CHECK(got_w.encoding->kind == EncodingKind::kPerChannel);
  CHECK(*got_w.encoding == *want_w.encoding);
  REQUIRE(got_w.data->size() == want_w.data->size());
  CHECK(std::memcmp(got_w.data->data(), want_w.data->data(), got_w.data->size()) == 0);
  CHECK_FALSE(view->materialized());
}
