// Sparse TFLite constants (SparsityParameters, as MediaPipe's pruned models
// store their fp16 weights, read through DENSIFY): densified at import into
// exactly the dense tensor they encode (expected tensors written out by hand
// below), and every inconsistent layout refused with the field named.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "exec/executor.h"
#include "tflite/tflite_builder.h"
#include "tflite/tflite_corrupt.h"
#include "tflite/tflite_import.h"

namespace qairt {
namespace {

using namespace tflite_test;  // NOLINT
using TT = tfb::TensorType;

TSparseLevel Dense(int32_t n) { return {false, n, {}, {}}; }
TSparseLevel Csr(std::vector<int32_t> segments, std::vector<int32_t> indices) {
  return {true, 0, std::move(segments), std::move(indices)};
}

// y = x + DENSIFY(w) with w sparse (float32 or float16 values): run at x = 0,
// y is the dense w.
TModel AddSparse(std::vector<int32_t> shape, TSparsity sp, std::vector<float> values, bool fp16 = false) {
  TModel m;
  const int x = m.Add({"x", shape, TT::FLOAT32});
  std::vector<uint8_t> bytes;
  if (fp16) {
    std::vector<uint16_t> h;
    for (float v : values) {  // exact halves of small integers
      const uint32_t sign = v < 0 ? 0x8000u : 0u;
      float a = std::abs(v);
      int e = 0;
      while (a >= 2) a /= 2, ++e;
      h.push_back(static_cast<uint16_t>(v == 0 ? 0 : sign | static_cast<uint32_t>((e + 15) << 10) |
                                                         static_cast<uint32_t>((a - 1) * 1024)));
    }
    bytes = Bytes(h);
  } else {
    bytes = Bytes(values);
  }
  const int w = m.Add({"w", shape, fp16 ? TT::FLOAT16 : TT::FLOAT32, bytes});
  m.tensors[static_cast<size_t>(w)].sparsity = std::move(sp);
  const int wd = m.Add({"w_dense", shape, fp16 ? TT::FLOAT16 : TT::FLOAT32});
  const int y = m.Add({"y", shape, TT::FLOAT32});
  m.Op(124, {w}, {wd});  // DENSIFY
  int wf = wd;
  if (fp16) {
    wf = m.Add({"w_f32", shape, TT::FLOAT32});
    m.Op(6, {wd}, {wf});  // DEQUANTIZE
  }
  m.Op(0, {x, wf}, {y}, AddOpts());
  m.inputs = {x};
  m.outputs = {y};
  return m;
}

std::vector<float> DenseOf(const TModel& m, ImportReport* report = nullptr) {
  ImportReport local;
  const auto bytes = Build(m);
  auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, report ? report : &local);
  INFO((g.ok() ? std::string() : g.status().message()));
  REQUIRE(g.ok());
  size_t n = 1;
  for (int32_t d : m.tensors[0].shape) n *= static_cast<size_t>(d);
  std::vector<float> x(n, 0.0f);
  auto ex = exec::Executor::Create(g.value());
  REQUIRE(ex.ok());
  auto out = ex.value()->Run({x.data()}, {n * 4});
  REQUIRE(out.ok());
  std::vector<float> y(n);
  std::memcpy(y.data(), out.value()[0].bytes.data(), n * 4);
  return y;
}

std::string ErrorOf(const TModel& m) {
  const auto bytes = Build(m);
  ImportReport report;
  auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, &report);
  REQUIRE_FALSE(g.ok());
  return g.status().message();
}

TEST_CASE("sparse TFLite constants densify to the tensor they encode", "[tflite][import][sparse]") {
  SECTION("CSR rows (dense rows, sparse columns), the MediaPipe form; fp16 values") {
    // [[1, 0, 0, 2], [0, 0, 0, 0], [0, 3, 4, 0]]
    TSparsity sp{{0, 1}, {}, {Dense(3), Csr({0, 2, 2, 4}, {0, 3, 1, 2})}};
    ImportReport report;
    CHECK(DenseOf(AddSparse({3, 4}, sp, {1, 2, 3, 4}, true), &report) ==
          std::vector<float>{1, 0, 0, 2, 0, 0, 0, 0, 0, 3, 4, 0});
    bool noted = false;
    for (const Diagnostic& d : report.diagnostics) noted |= d.message == "1 sparse constant densified: the target runs it dense";
    CHECK(noted);
  }
  SECTION("columns first (traversal order [1, 0]), uint8 index vectors") {
    // [[0, 9, 0], [8, 0, 7]]: column 0 holds row 1, column 1 row 0, column 2 row 1.
    TSparsity sp{{1, 0}, {}, {Dense(3), Csr({0, 1, 2, 3}, {1, 0, 1})}, true};
    CHECK(DenseOf(AddSparse({2, 3}, sp, {8, 9, 7})) == std::vector<float>{0, 9, 0, 8, 0, 7});
  }
  SECTION("block sparse: blocks of 2 along dim 1, each stored block dense") {
    // Rows of two 2-wide blocks: row 0 block 0 = [5, 6]; row 1 empty; row 2
    // block 1 = [7, 8]; row 3 both = [1, 2, 3, 4].
    TSparsity sp{{0, 1, 2}, {1}, {Dense(4), Csr({0, 1, 1, 2, 4}, {0, 1, 0, 1}), Dense(2)}};
    CHECK(DenseOf(AddSparse({4, 4}, sp, {5, 6, 7, 8, 1, 2, 3, 4})) ==
          std::vector<float>{5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 7, 8, 1, 2, 3, 4});
  }
  SECTION("2-D blocks (2 x 2), every level dense: the block layout is undone") {
    // A [4, 4] tensor stored block by block (blocks row-major, each block row-major).
    TSparsity sp{{0, 1, 2, 3}, {0, 1}, {Dense(2), Dense(2), Dense(2), Dense(2)}};
    std::vector<float> stored(16);
    for (size_t i = 0; i < 16; ++i) stored[i] = static_cast<float>(i);
    // Block (r, c) holds stored[4 * (2r + c) ...]: dense[2r + i][2c + j] = 4 (2r + c) + 2i + j.
    std::vector<float> want(16);
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j)
            want[static_cast<size_t>((2 * r + i) * 4 + 2 * c + j)] = static_cast<float>(4 * (2 * r + c) + 2 * i + j);
    CHECK(DenseOf(AddSparse({4, 4}, sp, stored)) == want);
  }
}

TEST_CASE("inconsistent sparsity parameters are refused with the field named", "[tflite][hostile][sparse]") {
  const TSparsity good{{0, 1}, {}, {Dense(3), Csr({0, 2, 2, 4}, {0, 3, 1, 2})}};
  auto with = [&](auto edit, std::vector<float> values = {1, 2, 3, 4}) {
    TSparsity sp = good;
    edit(sp);
    return ErrorOf(AddSparse({3, 4}, sp, values));
  };
  CHECK_THAT(with([](TSparsity& s) { s.levels[1].indices[1] = 4; }),
             Catch::Contains("'w'.sparsity: dim_metadata[1].array_indices[1] = 4 is outside the dim's 4"));
  CHECK_THAT(with([](TSparsity& s) { s.levels[1].segments = {0, 2, 1, 4}; }),
             Catch::Contains("dim_metadata[1].array_segments[2] = 1 is out of order"));
  CHECK_THAT(with([](TSparsity& s) { s.levels[1].segments = {0, 2, 4}; }),
             Catch::Contains("array_segments has 3 entries; position 2 needs 4"));
  CHECK_THAT(with([](TSparsity&) {}, {1, 2, 3}),
             Catch::Contains("holds 12 bytes, but its sparsity parameters visit 4 values of FLOAT32 (16 bytes)"));
  CHECK_THAT(with([](TSparsity& s) { s.traversal_order = {1, 1}; }),
             Catch::Contains("traversal_order 1 is not a permutation of 0..1"));
  CHECK_THAT(with([](TSparsity& s) { s.levels[0].dense_size = 2; }),
             Catch::Contains("dim_metadata[0].dense_size = 2, but the dim it traverses has 3"));
  CHECK_THAT(with([](TSparsity& s) { s.levels.pop_back(); }),
             Catch::Contains("dim_metadata has 1 entries, traversal_order 2"));
  CHECK_THAT(with([](TSparsity& s) {
               s.traversal_order = {0, 1, 2};
               s.block_map = {1};
               s.levels.push_back(Dense(3));  // 3 does not divide 4
             }),
             Catch::Contains("block dim 0 has size 3, which does not divide dim 1 (4)"));
  CHECK_THAT(with([](TSparsity& s) { s.levels[1].indices[3] = 1; }),
             Catch::Contains("visit one element twice"));
}

TEST_CASE("random byte corruption of a sparse model never crashes the importer", "[tflite][hostile][sparse]") {
  TSparsity sp{{0, 1, 2}, {1}, {Dense(4), Csr({0, 1, 1, 2, 4}, {0, 1, 0, 1}), Dense(2)}, true};
  const auto bytes = Build(AddSparse({4, 4}, sp, {5, 6, 7, 8, 1, 2, 3, 4}));
  const CorruptionOutcome o = ImportCorrupted(bytes, 20261205, 3, 20000);
  CHECK(o.failed > 0);
  CHECK(o.imported > 0);
}

TEST_CASE("MediaPipe's sparse full-range face detector imports dense", "[tflite][import][npm][sparse]") {
  const auto path = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() /
                    "third_party/npm/node_modules/@mediapipe/face_detection/face_detection_full_range_sparse.tflite";
  if (!std::filesystem::exists(path)) {
    WARN("MediaPipe models not installed (run scripts/setup-npm.sh): " << path.string());
    return;
  }
  ImportReport report;
  auto g = ImportTfliteFile(path.string(), {}, &report);
  INFO((g.ok() ? std::string() : g.status().message()));
  REQUIRE(g.ok());
  CHECK(g.value().Validate().empty());
  bool noted = false;
  for (const Diagnostic& d : report.diagnostics) noted |= d.message == "46 sparse constants densified: the target runs them dense";
  CHECK(noted);
}

}  // namespace
}  // namespace qairt
