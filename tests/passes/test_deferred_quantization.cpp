// Deferred static quantization: a large weight mapped from a file is
// quantized when the container writer asks for its bytes (never held whole
// in memory), with exactly the bytes the immediate quantization makes; data
// that could make quantization fail, or whose source costs memory to keep,
// is quantized at once.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "calib/calibrate.h"
#include "container/container.h"
#include "kernels/ops.h"
#include "passes/pass_test_util.h"
#include "passes/weight_test_util.h"
#include "passes/rewrite/rewrite.h"
#include "quant/quantize.h"

using namespace qairt;
using namespace qairt::testing;
using qairt::container::ReadContainerFile;
using qairt::container::WriteContainer;

namespace {

// x[2, k] -> MatMul(w[k, n]) -> y, the weight mapped from a file or owned,
// then what `convert --float_fallback` does: the rewrite to FullyConnected
// (per-row weights), encodings from the values, htp_v75 processing.
Graph Convert(const std::vector<float>& w, int64_t k, int64_t n, const TempPath* file, const calib::Options& co) {
  Graph g("mm");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{2, k}).value();
  const TensorId wt =
      g.AddConstant("w", DType::kFloat32, Shape{k, n}, file ? MappedFloats(*file, w) : FloatData(w)).value();
  const OpId op = g.AddOp("MatMul", "proj", {x, wt}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
  rewrite::Options ro;
  ro.verify = false;
  ro.enabled = {"matmul-to-fully-connected"};
  rewrite::Report rr;
  REQUIRE(rewrite::RunRewrites(&g, ro, &rr).ok());
  REQUIRE(g.SetEncoding(*g.FindTensor("x"), PerTensor(DType::kUFixed16, 1e-4f, -32768)).ok());
  REQUIRE(g.SetEncoding(*g.FindTensor("y"), PerTensor(DType::kUFixed16, 1e-3f, -32768)).ok());
  calib::Report cr;
  REQUIRE(calib::CalibrateParams(&g, co, &cr).ok());
  RunProcess(&g, Builtin("htp_v75"));
  return g;
}

const Tensor& Weight(const Graph& g) { return g.tensor(g.op(*g.FindOp("proj")).inputs[1]); }

}  // namespace

TEST_CASE("a mapped weight is quantized when the container is written, with the immediate path's bytes",
          "[passes][deferred]") {
  const int64_t k = 512, n = 384;  // int8: 192 KiB, int4: 96 KiB (both deferred)
  const std::vector<float> w = OutlierWeights(static_cast<size_t>(k * n), 11);
  calib::Options co;
  co.per_row = true;
  SECTION("per row, int8") {}
  SECTION("LPBQ, int4 blocks of 64") {
    co.weights_bitwidth = 4;
    co.block_size = 64;
    co.lpbq = true;
  }
  TempPath src("qairt_deferred_src.bin"), got_file("qairt_deferred_got.qairt"), want_file("qairt_deferred_want.qairt");
  Graph got = Convert(w, k, n, &src, co);
  Graph want = Convert(w, k, n, nullptr, co);  // owned float source: quantized at once
  const Tensor& gw = Weight(got);
  const Tensor& ww = Weight(want);
  REQUIRE(gw.encoding);
  REQUIRE(ww.encoding);
  CHECK(*gw.encoding == *ww.encoding);
  CHECK(gw.dtype == ww.dtype);
  CHECK(IsFixedPoint(gw.dtype));
  REQUIRE(gw.data->lazy());
  CHECK_FALSE(gw.data->materialized());
  CHECK_FALSE(ww.data->lazy());

  REQUIRE(WriteContainer(got, {}, got_file.path.string()).ok());
  REQUIRE(WriteContainer(want, {}, want_file.path.string()).ok());
  CHECK_FALSE(gw.data->materialized());  // written from a scratch buffer, not kept
  auto back = ReadContainerFile(got_file.path.string());
  REQUIRE(back.ok());
  const Tensor& bw = Weight(back.value().graph);
  REQUIRE(bw.data->size() == ww.data->size());
  CHECK(std::memcmp(bw.data->data(), ww.data->data(), ww.data->size()) == 0);
  // Both went through the transposed quantizer; the plain quantization of
  // the weight's transpose, made explicitly, gives the same bytes.
  std::vector<float> t(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) t[static_cast<size_t>(c * k + r)] = w[static_cast<size_t>(r * n + c)];
  auto plain = quant::QuantizeTensor("w", DType::kFloat32, t.data(), {n, k}, *gw.encoding);
  REQUIRE(plain.ok());
  CHECK(plain.value() == std::vector<uint8_t>(bw.data->data(), bw.data->data() + bw.data->size()));
  // The two files are the same bytes.
  std::ifstream a(got_file.path, std::ios::binary), b(want_file.path, std::ios::binary);
  const std::string fa((std::istreambuf_iterator<char>(a)), {}), fb((std::istreambuf_iterator<char>(b)), {});
  CHECK(fa.size() == fb.size());
  CHECK(fa == fb);
  // Anyone else asking for the bytes gets them made (once) and kept.
  REQUIRE(gw.data->size() == ww.data->size());
  CHECK(std::memcmp(gw.data->data(), ww.data->data(), ww.data->size()) == 0);
  CHECK(gw.data->materialized());
}

TEST_CASE("quantization is deferred only when it cannot fail and keeping the source costs nothing",
          "[passes][deferred]") {
  const int64_t rows = 256, cols = 512;
  const std::vector<float> w = OutlierWeights(static_cast<size_t>(rows * cols), 3);
  TempPath file("qairt_deferred_rules.bin");
  const std::shared_ptr<const StaticData> mapped = MappedFloats(file, w);
  const std::vector<int64_t> dims{rows, cols};
  quant::EncodingRequest req;
  req.kind = EncodingKind::kPerChannel;
  req.dtype = DType::kSFixed8;
  req.symmetry = Symmetry::kSymmetric;
  req.axis = 0;
  const size_t bytes = static_cast<size_t>(rows * cols);

  // Not yet known finite: nothing has read every value.
  CHECK_FALSE(mapped->known_finite());
  const Encoding enc = quant::ComputeEncoding("w", *mapped, dims, req).value();
  CHECK(mapped->known_finite());
  auto deferred = quant::DeferQuantization("w", mapped, dims, enc, bytes);
  REQUIRE(deferred);
  std::vector<uint8_t> made(bytes);
  deferred->CopyTo(made.data());
  CHECK(made == quant::QuantizeTensor("w", DType::kFloat32, w.data(), dims, enc).value());
  CHECK_FALSE(deferred->materialized());

  SECTION("an owned source would be kept alive for nothing") {
    const auto owned = FloatData(w);
    REQUIRE(quant::ComputeEncoding("w", *owned, dims, req).ok());
    CHECK(owned->known_finite());
    CHECK_FALSE(quant::DeferQuantization("w", owned, dims, enc, bytes));
  }
  SECTION("values not scanned (an encoding from a file) may hold NaN") {
    TempPath other("qairt_deferred_nan.bin");
    std::vector<float> bad = w;
    bad[1234] = std::nanf("");
    const auto unscanned = MappedFloats(other, bad);
    CHECK_FALSE(quant::DeferQuantization("w", unscanned, dims, enc, bytes));
    // A scan that tolerates NaN does not vouch for the values either.
    quant::QuantizeOptions lenient;
    lenient.nonfinite = quant::NonFinitePolicy::kWarnNanAsZero;
    REQUIRE(quant::ComputeEncoding("w", *unscanned, dims, req, lenient).ok());
    CHECK_FALSE(unscanned->known_finite());
    CHECK_FALSE(quant::ComputeEncoding("w", *unscanned, dims, req).ok());
    CHECK_FALSE(unscanned->known_finite());
  }
  SECTION("an encoding that does not fit the tensor, or a wrong size") {
    Encoding short_scales = enc;
    short_scales.scales.pop_back();
    short_scales.offsets.pop_back();
    CHECK_FALSE(quant::DeferQuantization("w", mapped, dims, short_scales, bytes));
    CHECK_FALSE(quant::DeferQuantization("w", mapped, dims, enc, bytes - 1));
    CHECK_FALSE(quant::DeferQuantization("w", mapped, {rows, cols / 2}, enc, bytes / 2));
  }
}

TEST_CASE("the container writer streams a transposed view without making its transpose", "[passes][deferred]") {
  const int64_t k = 96, n = 40;
  const std::vector<float> src = OutlierWeights(static_cast<size_t>(k * n), 8);
  int made = 0;
  auto view = StaticData::TransposeOf(FloatData(src), sizeof(float), k, n, [&](const uint8_t* in, uint8_t* out) {
    ++made;
    kernels::Transpose2D(sizeof(float), k, n, in, out);
  });
  Graph g("view");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{2, k}).value();
  const TensorId w = g.AddConstant("w", DType::kFloat32, Shape{n, k}, view).value();
  const OpId op = g.AddOp("FullyConnected", "proj", {x, w}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
  TempPath out("qairt_deferred_view.qairt");
  REQUIRE(WriteContainer(g, {}, out.path.string()).ok());
  CHECK(made == 1);  // into the writer's scratch buffer
  CHECK_FALSE(view->materialized());
  auto back = ReadContainerFile(out.path.string());
  REQUIRE(back.ok());
  const Tensor& bw = Weight(back.value().graph);
  std::vector<float> want(src.size());
  kernels::Transpose2D(sizeof(float), k, n, src.data(), want.data());
  REQUIRE(bw.data->size() == want.size() * sizeof(float));
  CHECK(std::memcmp(bw.data->data(), want.data(), bw.data->size()) == 0);
}

TEST_CASE("an LPBQ encoding is checked per channel only when no block's scale product can overflow",
          "[passes][deferred][lpbq]") {
  // Two channels of two blocks of 4: integer scales in [1, 16], so a
  // channel scale over FLT_MAX / 16 may overflow in its product; the
  // check then falls back to every block's product.
  Encoding e;
  e.kind = EncodingKind::kLpbq;
  e.dtype = DType::kInt4;
  e.bitwidth = 4;
  e.decompressed_bitwidth = 8;
  e.symmetry = Symmetry::kSymmetric;
  e.axis = 1;  // the block axis
  e.block_sizes = {1, 4};
  e.offsets = std::vector<int32_t>(2, 0);
  const float big = std::numeric_limits<float>::max() / 8;
  e.scales = std::vector<float>{0.5f, big};
  e.block_int_scales = {3, 16, 1, 4};  // big x 4 is finite, 16 would not be
  CHECK(quant::CheckQuantizable("w", DType::kFloat32, {2, 8}, e, 8).ok());
  e.block_int_scales = {3, 16, 1, 9};  // big x 9 overflows
  const Status bad = quant::CheckQuantizable("w", DType::kFloat32, {2, 8}, e, 8);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.message(), Catch::Contains("'w'") && Catch::Contains("scale 3"));
  // Ordinary scales: the per-channel check, the same verdict.
  e.scales = {0.5f, 0.25f};
  CHECK(quant::CheckQuantizable("w", DType::kFloat32, {2, 8}, e, 8).ok());
}
