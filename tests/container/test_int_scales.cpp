// LPBQ integer scales in the container: bytes when every one fits (schema
// 4, reader 3), [int] otherwise (reader 2); both read back as the IR's
// table and checked as the [int] ones are.
#include <catch2/catch.hpp>

#include <cstring>

#include "container/container.h"
#include "container/container_generated.h"

namespace qairt::container {
namespace {

namespace fbc = ::qairt::container::fb;

template <typename T>
T Ok(Result<T> r) {
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

// An int4 LPBQ weight [3, 48] in blocks of 16, dequantized to the output.
Graph LpbqGraph(std::vector<int32_t> int_scales, uint32_t decompressed_bitwidth) {
  Graph g("lpbq");
  std::vector<uint8_t> bytes(72);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  const TensorId w = Ok(g.AddConstant("w", DType::kSFixed4, Shape{3, 48}, StaticData::Adopt(std::move(bytes))));
  const OpId cvt = Ok(g.AddOp("Convert", "dequant", {w}, {"w_f"},
                              {{"output_dtype", int64_t{static_cast<int64_t>(DType::kFloat32)}}}));
  REQUIRE(g.MarkOutput(g.op(cvt).outputs[0]).ok());
  Encoding lp;
  lp.kind = EncodingKind::kLpbq;
  lp.dtype = DType::kSFixed4;
  lp.symmetry = Symmetry::kSymmetric;
  lp.axis = 1;
  lp.block_sizes = {1, 16};
  lp.scales = {0.01f, 0.02f, 0.03f};
  lp.block_int_scales = std::move(int_scales);
  lp.decompressed_bitwidth = decompressed_bitwidth;
  REQUIRE(g.SetEncoding(w, lp).ok());
  return g;
}

const fbc::Encoding* WeightEncoding(const std::vector<uint8_t>& file) {
  return fbc::GetContainer(file.data())->graph()->tensors()->Get(0)->encoding();
}

TEST_CASE("container: LPBQ integer scales are stored as bytes when every one fits", "[container]") {
  const Graph g = LpbqGraph({1, 2, 16, 2, 16, 7, 16, 3, 1}, 8);
  const std::vector<uint8_t> small = Ok(SerializeContainer(g, {}));
  const fbc::Encoding* e = WeightEncoding(small);
  REQUIRE(e);
  CHECK(e->block_int_scales() == nullptr);
  REQUIRE(e->block_int_scales_u8());
  CHECK(std::vector<uint8_t>(e->block_int_scales_u8()->begin(), e->block_int_scales_u8()->end()) ==
        std::vector<uint8_t>{1, 2, 16, 2, 16, 7, 16, 3, 1});
  CHECK(fbc::GetContainer(small.data())->min_reader_version() == kMinReaderVersionByteIntScales);
  LoadedContainer back = Ok(ReadContainer(small, "small.qairt"));
  CHECK(Graph::Diff(g, back.graph) == "");

  // The bytes are checked as the [int] ones are: 0 is outside [1, 16].
  std::vector<uint8_t> zero = small;
  fbc::GetMutableContainer(zero.data())
      ->mutable_graph()
      ->mutable_tensors()
      ->GetMutableObject(0)
      ->mutable_encoding()
      ->mutable_block_int_scales_u8()
      ->Mutate(3, 0);
  auto bad = ReadContainer(zero, "zero.qairt");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("block_int_scales[3]") != std::string::npos);
}

TEST_CASE("container: LPBQ integer scales past 255 stay [int], readable by reader 2", "[container]") {
  // 16-bit decompression of 4-bit values allows scales up to 4096.
  const Graph g = LpbqGraph({1, 2, 300, 2, 16, 7, 4096, 3, 1}, 16);
  const std::vector<uint8_t> large = Ok(SerializeContainer(g, {}));
  const fbc::Encoding* e = WeightEncoding(large);
  REQUIRE(e);
  CHECK(e->block_int_scales_u8() == nullptr);
  REQUIRE(e->block_int_scales());
  CHECK(e->block_int_scales()->Get(2) == 300);
  CHECK(fbc::GetContainer(large.data())->min_reader_version() == kMinReaderVersion);
  LoadedContainer back = Ok(ReadContainer(large, "large.qairt"));
  CHECK(Graph::Diff(g, back.graph) == "");
  CHECK(back.graph.tensor(0).encoding->block_int_scales[6] == 4096);
}

}  // namespace
}  // namespace qairt::container
