// Every Appendix C form is representable and survives copy/compare (in C++
// and through the C API); invalid encodings are rejected naming tensor+field.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <span>

#include "capi/capi_internal.h"
#include "ir/graph.h"

namespace qairt {
namespace {

Encoding PerTensor() {  // Appendix C: {"output_dtype":"uint8","y_scale":1.0,"y_zero_point":128}
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = DType::kUFixed8;
  e.scales = {1.0f};
  e.offsets = {-128};
  return e;
}

Encoding PerChannel() {  // conv.weight int8, axis 0, 3 channels
  Encoding e;
  e.kind = EncodingKind::kPerChannel;
  e.dtype = DType::kSFixed8;
  e.symmetry = Symmetry::kSymmetric;
  e.axis = 0;
  e.scales = {0.0050100767984986305f, 0.0017133733490481973f, 0.0017133733490481973f};
  e.overridden = true;
  return e;
}

Encoding Blockwise() {  // [3, 64], block axis 1, block 32, int4
  Encoding e;
  e.kind = EncodingKind::kPerBlock;
  e.dtype = DType::kSFixed4;
  e.symmetry = Symmetry::kSymmetric;
  e.axis = 1;
  e.block_sizes = {1, 32};
  e.scales = {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f};
  e.offsets = {0, 0, 0, 0, 0, 0};
  return e;
}

Encoding BlockwiseFloatOffsets() {
  Encoding e = Blockwise();
  e.symmetry = Symmetry::kAsymmetric;
  e.offsets.clear();
  e.float_offsets = {-0.16f, 0.24f, -0.35f, 0.13f, -0.14f, 0.37f};
  return e;
}

Encoding Lpbq() {  // [3, 48] weight, blocks of 16 along axis 1, int4 on an 8-bit grid
  Encoding e;
  e.kind = EncodingKind::kLpbq;
  e.dtype = DType::kSFixed4;
  e.symmetry = Symmetry::kSymmetric;
  e.axis = 1;
  e.block_sizes = {1, 16};
  e.scales = {0.01f, 0.02f, 0.03f};
  e.block_int_scales = {1, 2, 16, 2, 16, 7, 16, 3, 1};
  e.decompressed_bitwidth = 8;
  return e;
}

Encoding ArrayOf(bool per_channel) {
  Encoding e;
  e.kind = EncodingKind::kArrayOf;
  e.dtype = per_channel ? DType::kSFixed8 : DType::kUFixed8;
  e.index_tensor = "condition_tensor";
  if (per_channel) {
    Encoding a = PerChannel(), b = PerChannel();
    a.scales = {0.005f, 0.002f, 0.003f};
    b.scales = {0.004f, 0.001f, 0.006f};
    a.overridden = b.overridden = false;
    e.sub_encodings = {a, b};
  } else {
    Encoding a = PerTensor(), b = PerTensor();
    a.scales = {0.05f};
    b.scales = {0.03f};
    b.offsets = {-64};
    e.sub_encodings = {a, b};
  }
  return e;
}

Encoding Float16() {
  Encoding e;
  e.kind = EncodingKind::kFloat;
  e.dtype = DType::kFloat16;
  return e;
}

struct Case {
  const char* name;
  Encoding encoding;
  Shape shape;
};

std::vector<Case> AllForms() {
  return {{"per_tensor", PerTensor(), Shape{1, 8}},
          {"per_channel", PerChannel(), Shape{3, 4, 3, 3}},
          {"blockwise", Blockwise(), Shape{3, 64}},
          {"blockwise_float_offsets", BlockwiseFloatOffsets(), Shape{3, 64}},
          {"lpbq", Lpbq(), Shape{3, 48}},
          {"array_of_per_tensor", ArrayOf(false), Shape{2, 5}},
          {"array_of_per_channel", ArrayOf(true), Shape{3, 7}},
          {"float16", Float16(), Shape{4}}};
}

TEST_CASE("every Appendix C form is representable and round-trips", "[encoding]") {
  for (const Case& c : AllForms()) {
    SECTION(c.name) {
      Graph g;
      auto t = g.AddInput("t", DType::kFloat32, c.shape).value();
      Status s = g.SetEncoding(t, c.encoding);
      INFO(s.message());
      REQUIRE(s.ok());
      const Encoding copy = *g.tensor(t).encoding;
      CHECK(copy == c.encoding);
      Encoding changed = copy;
      changed.overridden = !changed.overridden;
      CHECK(changed != c.encoding);
      // An unset bitwidth means the dtype's: both spellings are equal.
      Encoding explicit_bw = copy;
      explicit_bw.bitwidth = copy.effective_bitwidth();
      CHECK(explicit_bw == c.encoding);

      // Through the C API: get, clone, compare, and read the fields back.
      qairt_graph_t handle("g");
      handle.graph = g;
      qairt_encoding_t* got = nullptr;
      REQUIRE(qairt_graph_get_encoding(&handle, t, &got) == nullptr);
      REQUIRE(got != nullptr);
      qairt_encoding_t* cloned = nullptr;
      REQUIRE(qairt_encoding_clone(got, &cloned) == nullptr);
      CHECK(qairt_encoding_equal(got, cloned) == 1);
      CHECK(qairt_encoding_kind(got) == static_cast<uint32_t>(c.encoding.kind));
      const float* scales = nullptr;
      size_t n = 0;
      qairt_encoding_scales(got, &scales, &n);
      CHECK(n == c.encoding.scales.size());
      CHECK(qairt_encoding_sub_encoding_count(got) == c.encoding.sub_encodings.size());
      if (!c.encoding.sub_encodings.empty()) {
        const qairt_encoding_t* sub = qairt_encoding_sub_encoding(got, 1);
        REQUIRE(sub != nullptr);
        qairt_encoding_scales(sub, &scales, &n);
        REQUIRE(n == c.encoding.sub_encodings[1].scales.size());
        CHECK(scales[0] == c.encoding.sub_encodings[1].scales[0]);
        CHECK(qairt_encoding_sub_encoding(got, 2) == nullptr);
      }
      // Re-attach the C handle to a second tensor: identical.
      qairt_tensor_desc d;
      qairt_tensor_desc_init(&d);
      d.name = "t2";
      d.dtype = QAIRT_DTYPE_FLOAT32;
      const auto extents = c.shape.extents();
      d.rank = extents.size();
      d.dims = extents.data();
      qairt_tensor_id t2 = 0;
      REQUIRE(qairt_graph_add_input(&handle, &d, &t2) == nullptr);
      REQUIRE(qairt_graph_set_encoding(&handle, t2, cloned) == nullptr);
      CHECK(*handle.graph.tensor(t2).encoding == c.encoding);
      qairt_encoding_destroy(cloned);
      qairt_encoding_destroy(got);
    }
  }
}

// Applies `mutate` to a valid encoding and expects rejection naming tensor + field.
void ExpectRejected(Encoding e, const Shape& shape, const std::string& field_text) {
  Graph g;
  auto t = g.AddInput("conv.weight", DType::kFloat32, shape).value();
  Status s = g.SetEncoding(t, e);
  INFO(s.message());
  REQUIRE(!s.ok());
  CHECK(s.code() == StatusCode::kValidationFailed);
  CHECK(s.message().find("'conv.weight'") != std::string::npos);
  CHECK(s.message().find(field_text) != std::string::npos);
  CHECK(!g.tensor(t).encoding.has_value());
}

TEST_CASE("invalid encodings are rejected with tensor and field named", "[encoding]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  SECTION("scale <= 0") {
    Encoding e = PerTensor();
    e.scales = {0.0f};
    ExpectRejected(e, Shape{4}, "scales[0]");
    e.scales = {-1.0f};
    ExpectRejected(e, Shape{4}, "scales[0]");
  }
  SECTION("non-finite scale") {
    Encoding e = PerChannel();
    e.scales.mut()[1] = nan;
    ExpectRejected(e, Shape{3, 2}, "scales[1]");
    e.scales.mut()[1] = inf;
    ExpectRejected(e, Shape{3, 2}, "scales[1]");
  }
  SECTION("zero point outside the dtype range") {
    Encoding e = PerTensor();
    e.offsets = {-256};  // uint8 zero point 256
    ExpectRejected(e, Shape{4}, "offsets[0]");
    e.offsets = {1};  // uint8 zero point -1
    ExpectRejected(e, Shape{4}, "offsets[0]");
    Encoding s4 = Blockwise();
    s4.symmetry = Symmetry::kAsymmetric;
    s4.offsets.mut()[2] = 9;  // int4 zero point -9
    ExpectRejected(s4, Shape{3, 64}, "offsets[2]");
  }
  SECTION("symmetric encoding with a non-centred offset") {
    Encoding e = PerChannel();
    e.offsets = {0, 3, 0};
    ExpectRejected(e, Shape{3, 2}, "offsets[1]");
  }
  SECTION("axis out of range") {
    Encoding e = PerChannel();
    e.axis = 4;
    ExpectRejected(e, Shape{3, 2}, "axis");
    Encoding b = Blockwise();
    b.axis = 2;
    ExpectRejected(b, Shape{3, 64}, "axis");
  }
  SECTION("block size not dividing the dimension") {
    Encoding e = Blockwise();
    e.block_sizes = {1, 24};
    ExpectRejected(e, Shape{3, 64}, "block_sizes[1]");
  }
  SECTION("per-channel length mismatch") {
    Encoding e = PerChannel();
    ExpectRejected(e, Shape{4, 2}, "scales");
  }
  SECTION("per-block count mismatch") {
    Encoding e = Blockwise();
    e.scales.pop_back();
    e.offsets.pop_back();
    ExpectRejected(e, Shape{3, 64}, "scales");
  }
  SECTION("LPBQ integer scale out of range") {
    Encoding e = Lpbq();
    e.block_int_scales.mut()[4] = 17;
    ExpectRejected(e, Shape{3, 48}, "block_int_scales[4]");
    e = Lpbq();
    e.decompressed_bitwidth = 4;
    ExpectRejected(e, Shape{3, 48}, "decompressed_bitwidth");
  }
  SECTION("bitwidth larger than the dtype") {
    Encoding e = PerTensor();
    e.bitwidth = 16;
    ExpectRejected(e, Shape{4}, "bitwidth");
  }
  SECTION("more bits than a quantized grid holds") {
    // A 64-bit integer dtype fits its bitwidth but no grid here holds more
    // than 32 bits (a centred unsigned offset would be -2^63).
    Encoding e = PerTensor();
    e.dtype = DType::kUInt64;
    e.offsets = {0};
    ExpectRejected(e, Shape{4}, "bitwidth");
    e.bitwidth = 64;
    ExpectRejected(e, Shape{4}, "bitwidth");
    e.dtype = DType::kInt64;
    ExpectRejected(e, Shape{4}, "bitwidth");
  }
  SECTION("float encoding with a fixed-point dtype") {
    Encoding e = Float16();
    e.dtype = DType::kSFixed8;
    ExpectRejected(e, Shape{4}, "dtype");
  }
  SECTION("fields the kind does not use") {
    Encoding e = PerTensor();
    e.block_sizes = {1};
    ExpectRejected(e, Shape{4}, "block_sizes");
    e = PerTensor();
    e.index_tensor = "sel";
    ExpectRejected(e, Shape{4}, "index_tensor");
    e = PerChannel();
    e.decompressed_bitwidth = 8;
    ExpectRejected(e, Shape{3, 2}, "decompressed_bitwidth");
  }
  SECTION("Array-Of without selector") {
    Encoding e = ArrayOf(false);
    e.index_tensor.clear();
    ExpectRejected(e, Shape{4}, "index_tensor");
    e = ArrayOf(false);
    e.sub_encodings[1].scales = {-2.0f};
    ExpectRejected(e, Shape{4}, "sub_encodings[1].scales[0]");
  }
}

TEST_CASE("quant ranges follow the dtype and bitwidth", "[encoding]") {
  CHECK(QuantRangeOf(DType::kUFixed8, 8).qmax == 255);
  CHECK(QuantRangeOf(DType::kSFixed8, 8).qmin == -128);
  CHECK(QuantRangeOf(DType::kSFixed4, 4).qmax == 7);
  CHECK(QuantRangeOf(DType::kUFixed16, 16).qmax == 65535);
  CHECK(QuantRangeOf(DType::kSFixed32, 32).qmin == -2147483648LL);
  CHECK(QuantRangeOf(DType::kUFixed8, 4).qmax == 15);  // 4 bits in an 8-bit container
}


TEST_CASE("encoding tables are shared between copies until one is written", "[ir][encoding]") {
  Encoding a;
  a.kind = EncodingKind::kPerChannel;
  a.dtype = DType::kSFixed8;
  a.axis = 0;
  a.scales = std::vector<float>{0.5f, 0.25f, 0.125f};
  a.offsets = {0, 0, 0};
  Encoding b = a;
  CHECK(b.scales.data() == a.scales.data());  // shared, not copied
  CHECK(b == a);
  b.scales.mut()[1] = 2.0f;  // the writer gets its own copy first
  CHECK(b.scales.data() != a.scales.data());
  CHECK(a.scales[1] == 0.25f);
  CHECK(b.scales[1] == 2.0f);
  CHECK(b != a);
  Encoding c = a;
  c.offsets.push_back(4);
  c.scales.resize(4, 1.0f);
  CHECK(a.offsets.size() == 3);
  CHECK(a.scales.size() == 3);
  CHECK(c.scales == std::vector<float>{0.5f, 0.25f, 0.125f, 1.0f});
  // An object that alone holds its elements writes them in place.
  const float* own = b.scales.data();
  b.scales.mut()[0] = 3.0f;
  CHECK(b.scales.data() == own);
  // Empty is one state, however reached.
  Encoding d = a;
  d.scales.clear();
  d.offsets = std::vector<int32_t>{};
  CHECK(d.scales.empty());
  CHECK(d.scales.data() == nullptr);
  CHECK(d.offsets.size() == 0);
  CHECK(a.scales.size() == 3);
}

TEST_CASE("one-element encoding tables are held inline and behave as vectors", "[ir][encoding]") {
  // Every way of making a one-element table.
  std::vector<CowVector<float>> ones;
  ones.emplace_back(std::vector<float>{0.25f});
  ones.emplace_back(std::initializer_list<float>{0.25f});
  ones.emplace_back(size_t{1}, 0.25f);
  const double d = 0.25;
  ones.emplace_back(&d, &d + 1);  // converting iterators, as the encodings reader fills tables
  CowVector<float> pushed;
  pushed.push_back(0.25f);
  ones.push_back(pushed);
  for (const CowVector<float>& v : ones) {
    REQUIRE(v.size() == 1);
    CHECK_FALSE(v.empty());
    CHECK(v[0] == 0.25f);
    CHECK(v.front() == 0.25f);
    CHECK(v.back() == 0.25f);
    CHECK(v.end() - v.begin() == 1);
    CHECK(v.to_vector() == std::vector<float>{0.25f});
    CHECK(std::span<const float>(v).size() == 1);
    CHECK(v == ones[0]);
    CHECK(v.SharesElementsWith(ones[0]));  // same bits: the same table
  }
  // A copy holds its own element: writing it leaves the original alone.
  CowVector<float> a{0.5f};
  CowVector<float> b = a;
  CHECK(a.data() != b.data());
  b.mut()[0] = 2.0f;
  CHECK(a[0] == 0.5f);
  CHECK(b[0] == 2.0f);
  CHECK_FALSE(a.SharesElementsWith(b));
  CHECK(a != b);
  // Growing an inline table keeps its element first; shrinking works too.
  a.push_back(0.75f);
  CHECK(a == std::vector<float>{0.5f, 0.75f});
  a.resize(1);
  CHECK(a == std::vector<float>{0.5f});
  CHECK(a.at(0) == 0.5f);
  CHECK_THROWS(a.at(1));
  // Inline and heap tables with the same elements compare equal; heap tables
  // share by buffer, not by value.
  CowVector<float> heap = std::vector<float>{0.5f, 0.75f};
  CowVector<float> heap_copy = heap;
  CHECK(heap.SharesElementsWith(heap_copy));
  CHECK_FALSE(heap.SharesElementsWith(CowVector<float>(std::vector<float>{0.5f, 0.75f})));
  // Moved from, inline or not, a table is empty.
  CowVector<float> moved_to = std::move(a);
  CHECK(moved_to == std::vector<float>{0.5f});
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move)
  moved_to = std::move(heap_copy);
  CHECK(moved_to.size() == 2);
  CHECK(heap_copy.empty());  // NOLINT(bugprone-use-after-move)
  CowVector<int32_t> none;
  CHECK(none.SharesElementsWith(CowVector<int32_t>()));
  CHECK_FALSE(none.SharesElementsWith(CowVector<int32_t>{0}));
  // An encoding with inline tables: copies are equal, a changed offset is not.
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = DType::kUFixed16;
  e.scales = {0.01f};
  e.offsets = {-3};
  Encoding f = e;
  CHECK(f == e);
  CHECK(SameEncodingSharingTables(e, f));
  f.offsets = {-4};
  CHECK(f != e);
  CHECK_FALSE(SameEncodingSharingTables(e, f));
  Diagnostics diags;
  CHECK(ValidateEncoding(e, "t", Shape({Dim(2)}), 0, &diags));
  e.scales = {-1.0f};
  CHECK_FALSE(ValidateEncoding(e, "t", Shape({Dim(2)}), 0, &diags));
}

}  // namespace
}  // namespace qairt
