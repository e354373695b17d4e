// Deferred quantization in pieces (a plain mapped tensor made a few rows at a
// time by a streaming writer) and the writer's piece stream: every piece
// split gives exactly the bytes of the whole quantization, in order, whether
// the pieces are made on the calling thread or one ahead on a helper.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/threadpool.h"
#include "passes/weight_test_util.h"
#include "quant/quantize.h"
#include "support/piece_stream.h"

using namespace qairt;
using namespace qairt::testing;

namespace {

struct Case {
  const char* what;
  std::vector<int64_t> dims;
  quant::EncodingRequest req;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto add = [&](const char* what, std::vector<int64_t> dims, EncodingKind kind, DType dtype, Symmetry sym,
                 int32_t axis, std::vector<int64_t> blocks = {}) {
    cases.push_back({what, std::move(dims), WeightRequest(kind, dtype, sym, axis, std::move(blocks))});
  };
  add("per tensor u16 (an embedding table)", {300, 64}, EncodingKind::kPerTensor, DType::kUFixed16,
      Symmetry::kAsymmetric, -1);
  add("per channel s8, axis 0, rank 4", {48, 3, 5, 5}, EncodingKind::kPerChannel, DType::kSFixed8,
      Symmetry::kSymmetric, 0);
  add("per block s4, blocks of 32 in rows", {96, 128}, EncodingKind::kPerBlock, DType::kSFixed4,
      Symmetry::kSymmetric, 1, {1, 32});
  add("LPBQ s4, blocks of 64 in rows", {80, 256}, EncodingKind::kLpbq, DType::kSFixed4, Symmetry::kSymmetric, 1,
      {1, 64});
  return cases;
}

}  // namespace

TEST_CASE("a plain mapped tensor's deferred quantization is made in pieces with the whole's bytes",
          "[passes][deferred]") {
  for (const Case& c : Cases()) {
    INFO(c.what);
    int64_t count = 1;
    for (int64_t d : c.dims) count *= d;
    const std::vector<float> v = OutlierWeights(static_cast<size_t>(count), 17);
    TempPath file("qairt_deferred_pieces.bin");
    const auto mapped = MappedFloats(file, v);
    const Encoding enc = quant::ComputeEncoding("t", *mapped, c.dims, c.req).value();
    const std::vector<uint8_t> whole = quant::QuantizeTensor("t", DType::kFloat32, v.data(), c.dims, enc).value();
    const auto deferred = quant::DeferQuantization("t", mapped, c.dims, enc, whole.size());
    REQUIRE(deferred);
    const size_t unit = deferred->piece_unit();
    REQUIRE(unit > 0);
    CHECK(whole.size() % unit == 0);
    CHECK(whole.size() / unit == static_cast<size_t>(c.dims[0]));  // a piece is whole rows
    for (size_t step : {unit, 3 * unit, 7 * unit, whole.size()}) {
      INFO("pieces of " << step << " bytes");
      std::vector<uint8_t> got(whole.size(), 0xEE);
      for (size_t b = 0; b < got.size(); b += step)
        deferred->CopyRangeTo(got.data() + b, b, std::min(got.size(), b + step));
      CHECK(got == whole);
    }
    CHECK_FALSE(deferred->materialized());  // pieces are made where asked, not kept
    std::vector<StreamPiece> pieces;
    AddStaticDataPieces(*deferred, &pieces, 2 * unit);
    CHECK(pieces.size() == (static_cast<size_t>(c.dims[0]) + 1) / 2);
  }
}

TEST_CASE("a large plain mapped tensor's deferred quantization made whole reads its file into a buffer it keeps "
          "until quantized",
          "[passes][deferred]") {
  // 20 MB of floats: the whole tensor's read buffer is past the bound a
  // thread keeps between uses, so it is freed after the piece, and must not
  // be before the quantization has read it.
  const std::vector<int64_t> dims = {5000, 1024};
  const std::vector<float> v = OutlierWeights(5000 * 1024, 23);
  TempPath file("qairt_deferred_large.bin");
  const auto mapped = MappedFloats(file, v);
  const quant::EncodingRequest req =
      WeightRequest(EncodingKind::kPerTensor, DType::kUFixed16, Symmetry::kAsymmetric, -1, {});
  const Encoding enc = quant::ComputeEncoding("t", *mapped, dims, req).value();
  const std::vector<uint8_t> whole = quant::QuantizeTensor("t", DType::kFloat32, v.data(), dims, enc).value();
  const auto deferred = quant::DeferQuantization("t", mapped, dims, enc, whole.size());
  REQUIRE(deferred);
  for (int pass = 0; pass < 2; ++pass) {  // the second with the buffer freed by the first
    std::vector<uint8_t> got(whole.size(), 0xEE);
    deferred->CopyRangeTo(got.data(), 0, got.size());
    CHECK(got == whole);
  }
  REQUIRE(deferred->size() == whole.size());
  CHECK(std::memcmp(deferred->data(), whole.data(), whole.size()) == 0);  // materialized whole
}

TEST_CASE("pieces stream in order, made ahead on helper threads, and a sink error stops them",
          "[passes][deferred][threads]") {
  // Three deferred tensors between ready bytes: several pieces to make, so the
  // helper thread makes each one while the one before is written.
  std::vector<std::shared_ptr<const StaticData>> made;
  std::vector<uint8_t> want;
  std::vector<StreamPiece> pieces;
  const uint8_t header[5] = {1, 2, 3, 4, 5};
  pieces.push_back({header, nullptr, 0, sizeof header});
  want.insert(want.end(), header, header + sizeof header);
  std::vector<std::vector<float>> values;
  std::vector<std::unique_ptr<TempPath>> files;
  for (int i = 0; i < 3; ++i) {
    const Case c = Cases()[static_cast<size_t>(i)];
    int64_t count = 1;
    for (int64_t d : c.dims) count *= d;
    values.push_back(OutlierWeights(static_cast<size_t>(count), 100 + static_cast<uint32_t>(i)));
    files.push_back(std::make_unique<TempPath>("qairt_stream_" + std::to_string(i) + ".bin"));
    const auto mapped = MappedFloats(*files.back(), values.back());
    const Encoding enc = quant::ComputeEncoding("t", *mapped, c.dims, c.req).value();
    const std::vector<uint8_t> whole =
        quant::QuantizeTensor("t", DType::kFloat32, values.back().data(), c.dims, enc).value();
    made.push_back(quant::DeferQuantization("t", mapped, c.dims, enc, whole.size()));
    REQUIRE(made.back());
    AddStaticDataPieces(*made.back(), &pieces, 1000);
    want.insert(want.end(), whole.begin(), whole.end());
    pieces.push_back({header, nullptr, 0, 2});
    want.insert(want.end(), header, header + 2);
  }
  REQUIRE(pieces.size() > 8);
  std::vector<uint8_t> got;
  REQUIRE(StreamPieces(pieces, [&](const void* p, size_t n) {
            got.insert(got.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
            return Status::Ok();
          }, "test").ok());
  CHECK(got == want);

  size_t calls = 0;
  const Status s = StreamPieces(pieces, [&](const void*, size_t) {
    return ++calls == 4 ? Status(StatusCode::kIoError, "disk full") : Status::Ok();
  }, "test");
  CHECK(s.code() == StatusCode::kIoError);
  CHECK(calls == 4);  // nothing written after the error
}

TEST_CASE("a transposed view's deferred quantization is made whole from its file, float16 in pieces of its rows",
          "[passes][deferred]") {
  const int64_t k = 128, n = 72;  // source [k, n]; the view [n, k]
  const std::vector<float> src = OutlierWeights(static_cast<size_t>(k * n), 23);
  TempPath file("qairt_deferred_view_pieces.bin");
  const auto mapped = MappedFloats(file, src);
  auto view = StaticData::TransposeOf(mapped, sizeof(float), k, n, [&](const uint8_t* in, uint8_t* out) {
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c)
        std::memcpy(out + (c * k + r) * 4, in + (r * n + c) * 4, 4);
  });
  std::vector<float> transposed(src.size());
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) transposed[static_cast<size_t>(c * k + r)] = src[static_cast<size_t>(r * n + c)];
  const std::vector<int64_t> dims{n, k};
  for (int kind = 0; kind < 3; ++kind) {
    INFO((kind == 0 ? "per row s8" : kind == 1 ? "LPBQ s4 blocks of 64" : "float16"));
    Encoding enc;
    if (kind < 2) {
      quant::EncodingRequest req;
      req.symmetry = Symmetry::kSymmetric;
      if (kind == 1) {
        req.kind = EncodingKind::kLpbq;
        req.dtype = DType::kSFixed4;
        req.axis = 1;
        req.block_sizes = {1, 64};
        req.decompressed_bitwidth = 8;
      } else {
        req.kind = EncodingKind::kPerChannel;
        req.dtype = DType::kSFixed8;
        req.axis = 0;
      }
      enc = quant::ComputeEncoding("w", *view, dims, req).value();
      CHECK(enc == quant::ComputeEncoding("w", transposed.data(), dims, req).value());
      CHECK(view->known_finite());  // the encoding's scan saw every value
    } else {
      enc.kind = EncodingKind::kFloat;
      enc.dtype = DType::kFloat16;
    }
    const std::vector<uint8_t> whole =
        quant::QuantizeTensor("w", DType::kFloat32, transposed.data(), dims, enc).value();
    const auto deferred = quant::DeferQuantization("w", view, dims, enc, whole.size());
    REQUIRE(deferred);
    // Fixed point: whole, its source read from the file in bands of whole
    // rows; float16 (no quantizer): pieces of rows, column panels of the
    // source read in place.
    const size_t unit = deferred->piece_unit();
    REQUIRE(unit == (kind < 2 ? 0 : whole.size() / static_cast<size_t>(n)));
    std::vector<uint8_t> got(whole.size(), 0xEE);
    deferred->CopyTo(got.data());
    CHECK(got == whole);
    if (unit > 0)
      for (size_t step : {unit, 5 * unit, whole.size()}) {
        INFO("pieces of " << step << " bytes");
        std::fill(got.begin(), got.end(), 0xEE);
        for (size_t b = 0; b < got.size(); b += step)
          deferred->CopyRangeTo(got.data() + b, b, std::min(got.size(), b + step));
        CHECK(got == whole);
      }
    CHECK_FALSE(deferred->materialized());
    CHECK_FALSE(view->materialized());  // the float transpose was never made
  }
}

TEST_CASE("a mapped tensor's range read from its file in chunks equals the kernel's on its memory",
          "[passes][deferred]") {
  const ScopedFileReads pread_reads(StaticDataReader::FileReads::kPread);
  // Three chunks and a bit; a NaN, an Inf and a negative zero at the extremes.
  std::vector<float> v = OutlierWeights((size_t{3} << 18) + 1000, 31);
  for (float& x : v) x = std::fabs(x) + 0.5f;  // all positive: min lands on the -0 below
  v[5] = std::numeric_limits<float>::quiet_NaN();
  v[(size_t{1} << 18) + 7] = -0.0f;
  TempPath file("qairt_range_of.bin");
  for (int with_inf = 0; with_inf < 2; ++with_inf) {
    INFO((with_inf ? "with an Inf" : "finite but one NaN"));
    if (with_inf) v[v.size() - 3] = std::numeric_limits<float>::infinity();
    const auto mapped = MappedFloats(file, v);
    REQUIRE(StaticDataReader(*mapped).from_file());
    float want_lo = 0, want_hi = 0;
    size_t want_bad = 0;
    kernels::MinMaxGrid(v.data(), kernels::Grid::PerTensor({static_cast<int64_t>(v.size())}), &want_lo, &want_hi, {},
                        &want_bad);
    kernels::ThreadPool pool(2);
    for (kernels::ThreadPool* p : {static_cast<kernels::ThreadPool*>(nullptr), &pool}) {
      float lo = 1, hi = 1;
      size_t bad = 0;
      quant::RangeOf(*mapped, v.size(), p, &lo, &hi, &bad);
      CHECK(std::memcmp(&lo, &want_lo, sizeof lo) == 0);
      CHECK(std::memcmp(&hi, &want_hi, sizeof hi) == 0);
      CHECK(bad == want_bad);
      CHECK(bad == static_cast<size_t>(1 + with_inf));
    }
  }
}
