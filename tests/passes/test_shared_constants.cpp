// Constants that share their bytes (one StaticData: an importer's repeated
// constants, a graph's clones) and need the same encoding are quantized once
// and stored once in the container; constants with equal but separate bytes
// are stored apart. Both read back with the bytes processing made.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include "calib/calibrate.h"
#include "container/container.h"
#include "passes/pass_test_util.h"
#include "passes/weight_test_util.h"

using namespace qairt;
using namespace qairt::testing;

namespace {

// x[1, n] * c1 * c2 -> y, 16-bit activations; c1 and c2 share one
// StaticData when `shared`, else each has a copy of the same values.
Graph Scaled(bool shared, int64_t n) {
  Graph g("scaled");
  const std::vector<float> values = Ramp(static_cast<size_t>(n), 0.5f, 2.0f);
  const auto data = FloatData(values);
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, n}).value();
  const TensorId c1 = g.AddConstant("c1", DType::kFloat32, Shape{1, n}, data).value();
  const TensorId c2 = g.AddConstant("c2", DType::kFloat32, Shape{1, n}, shared ? data : FloatData(values)).value();
  const OpId m1 = g.AddOp("ElementWiseMultiply", "m1", {x, c1}, {"m1.out"}).value();
  const OpId m2 = g.AddOp("ElementWiseMultiply", "m2", {g.op(m1).outputs[0], c2}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(m2).outputs[0]).ok());
  REQUIRE(g.SetEncoding(x, PerTensor(DType::kUFixed16, 1e-4f, -32768)).ok());
  REQUIRE(g.SetEncoding(g.op(m1).outputs[0], PerTensor(DType::kUFixed16, 2e-4f, -32768)).ok());
  REQUIRE(g.SetEncoding(g.op(m2).outputs[0], PerTensor(DType::kUFixed16, 4e-4f, -32768)).ok());
  calib::Options co;
  co.act_bitwidth = 16;
  calib::Report cr;
  REQUIRE(calib::CalibrateParams(&g, co, &cr).ok());
  RunProcess(&g, Builtin("htp_v75"));
  return g;
}

const Tensor& Named(const Graph& g, const char* name) { return g.tensor(*g.FindTensor(name)); }

}  // namespace

TEST_CASE("constants sharing their bytes are quantized and stored once", "[passes][container][shared]") {
  const int64_t n = 64 * 1024;  // 128 KiB quantized at 16 bits: the file sizes tell one copy from two
  const Graph shared = Scaled(true, n);
  const Graph apart = Scaled(false, n);
  for (const Graph* g : {&shared, &apart}) {
    const Tensor& c1 = Named(*g, "c1");
    const Tensor& c2 = Named(*g, "c2");
    REQUIRE(c1.encoding);
    REQUIRE(c2.encoding);
    CHECK(*c1.encoding == *c2.encoding);
    CHECK(IsFixedPoint(c1.dtype));
    CHECK(c1.dtype == c2.dtype);
    REQUIRE(c1.data->size() == c2.data->size());
    CHECK(std::memcmp(c1.data->data(), c2.data->data(), c1.data->size()) == 0);
  }
  // One quantized StaticData for both when the source was one.
  CHECK(Named(shared, "c1").data == Named(shared, "c2").data);
  CHECK(Named(apart, "c1").data != Named(apart, "c2").data);

  TempPath shared_file("qairt_shared_constants.qairt"), apart_file("qairt_apart_constants.qairt");
  REQUIRE(container::WriteContainer(shared, {}, shared_file.path.string()).ok());
  REQUIRE(container::WriteContainer(apart, {}, apart_file.path.string()).ok());
  const auto bytes = Named(shared, "c1").data->size();
  const auto shared_size = std::filesystem::file_size(shared_file.path);
  const auto apart_size = std::filesystem::file_size(apart_file.path);
  CHECK(apart_size >= shared_size + bytes);  // the second copy, stored only when the bytes are not shared
  CHECK(apart_size <= shared_size + bytes + 64);

  for (const TempPath* file : {&shared_file, &apart_file}) {
    auto back = container::ReadContainerFile(file->path.string());
    REQUIRE(back.ok());
    const Tensor& c1 = Named(back.value().graph, "c1");
    const Tensor& c2 = Named(back.value().graph, "c2");
    const Tensor& want = Named(shared, "c1");
    REQUIRE(c1.data->size() == want.data->size());
    REQUIRE(c2.data->size() == want.data->size());
    CHECK(std::memcmp(c1.data->data(), want.data->data(), want.data->size()) == 0);
    CHECK(std::memcmp(c2.data->data(), want.data->data(), want.data->size()) == 0);
    CHECK(*c1.encoding == *want.encoding);
  }
}
