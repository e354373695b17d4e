// auto_pad in the executor: a Conv, DepthWiseConv2d, pooling or
// TransposeConv with auto_pad SAME_UPPER / SAME_LOWER / VALID gives exactly
// what the same op gives with the explicit pads the ONNX spec derives (the
// odd unit of SAME_UPPER padding at the end, of SAME_LOWER at the start).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "ir/graph.h"

using namespace qairt;

namespace {

using Ints = std::vector<int64_t>;

std::shared_ptr<const StaticData> Floats(const std::vector<float>& v) {
  return StaticData::Copy(v.data(), v.size() * sizeof(float));
}

std::vector<float> Ramp(size_t n, float step, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * step + phase);
  return v;
}

Shape ShapeOf(const Ints& dims) { return Shape(std::vector<Dim>(dims.begin(), dims.end())); }

size_t Count(const Ints& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

struct Run {
  Ints dims;
  std::vector<float> values;
};

// One `type` op over input x (and a constant weight when `weight_dims` is
// given), run by the executor on a fixed ramp.
Run RunOp(const std::string& type, const Ints& x_dims, const Ints& weight_dims, const AttributeMap& attrs) {
  Graph g("auto_pad");
  auto x = g.AddInput("x", DType::kFloat32, ShapeOf(x_dims));
  REQUIRE(x.ok());
  std::vector<TensorId> inputs = {x.value()};
  if (!weight_dims.empty()) {
    auto w = g.AddConstant("w", DType::kFloat32, ShapeOf(weight_dims), Floats(Ramp(Count(weight_dims), 0.37f, 0.1f)));
    REQUIRE(w.ok());
    inputs.push_back(w.value());
  }
  auto op = g.AddOp(type, "op", inputs, {"y"}, attrs);
  INFO(type << ": " << (op.ok() ? std::string() : op.status().message()));
  REQUIRE(op.ok());
  REQUIRE(g.MarkOutput(g.op(op.value()).outputs[0]).ok());
  auto ex = exec::Executor::Create(g);
  INFO((ex.ok() ? std::string() : ex.status().message()));
  REQUIRE(ex.ok());
  const std::vector<float> xv = Ramp(Count(x_dims), 0.61f, 0.3f);
  auto out = ex.value()->Run({xv.data()}, {xv.size() * sizeof(float)});
  INFO((out.ok() ? std::string() : out.status().message()));
  REQUIRE(out.ok());
  Run r{out.value()[0].dims, std::vector<float>(out.value()[0].bytes.size() / sizeof(float))};
  std::memcpy(r.values.data(), out.value()[0].bytes.data(), out.value()[0].bytes.size());
  return r;
}

// Same output shape, same values bit for bit.
void CheckIdentical(const Run& got, const Run& want) {
  CHECK(got.dims == want.dims);
  REQUIRE(got.values.size() == want.values.size());
  for (size_t i = 0; i < got.values.size(); ++i) {
    INFO("element " << i);
    CHECK(got.values[i] == want.values[i]);
  }
}

// `attrs` with auto_pad `mode` against `attrs` with explicit `pads`.
Run CheckSameAsExplicit(const std::string& type, const Ints& x_dims, const Ints& weight_dims,
                        const AttributeMap& attrs, const std::string& mode, const Ints& pads) {
  AttributeMap with_mode = attrs;
  with_mode["auto_pad"] = mode;
  if (mode == "VALID") with_mode["pads"] = Ints(pads.size(), 1);  // VALID overrides any pads
  AttributeMap with_pads = attrs;
  with_pads["pads"] = pads;
  INFO(type << " auto_pad=" << mode);
  const Run got = RunOp(type, x_dims, weight_dims, with_mode);
  CheckIdentical(got, RunOp(type, x_dims, weight_dims, with_pads));
  return got;
}

}  // namespace

TEST_CASE("Conv and DepthWiseConv2d honour auto_pad like the explicit pads ONNX derives", "[exec][auto_pad]") {
  // H: in 7, kernel 4, stride 2 -> out 4, total padding 3 (odd).
  // W: in 6, kernel 2, dilation 3 -> out 6, total padding 3 (odd).
  const AttributeMap attrs = {{"strides", Ints{2, 1}}, {"dilations", Ints{1, 3}}};
  const Ints x = {1, 2, 7, 6};
  const Run upper = CheckSameAsExplicit("Conv2d", x, {3, 2, 4, 2}, attrs, "SAME_UPPER", {1, 1, 2, 2});
  CHECK(upper.dims == Ints{1, 3, 4, 6});
  const Run lower = CheckSameAsExplicit("Conv2d", x, {3, 2, 4, 2}, attrs, "SAME_LOWER", {2, 2, 1, 1});
  CHECK(lower.values != upper.values);
  const Run valid = CheckSameAsExplicit("Conv2d", x, {3, 2, 4, 2}, attrs, "VALID", {0, 0, 0, 0});
  CHECK(valid.dims == Ints{1, 3, 2, 3});

  AttributeMap grouped = attrs;
  grouped["group"] = int64_t{2};
  CheckSameAsExplicit("Conv2d", x, {4, 1, 4, 2}, grouped, "SAME_UPPER", {1, 1, 2, 2});
  CheckSameAsExplicit("DepthWiseConv2d", x, {2, 1, 4, 2}, attrs, "SAME_LOWER", {2, 2, 1, 1});
  // 3x3 stride 2 on an even input: total padding 1, the fast depthwise path.
  CheckSameAsExplicit("DepthWiseConv2d", {1, 2, 8, 8}, {2, 1, 3, 3}, {{"strides", Ints{2, 2}}}, "SAME_UPPER",
                      {0, 0, 1, 1});
  CheckSameAsExplicit("Conv1d", {1, 2, 9}, {3, 2, 4}, {{"strides", Ints{2}}}, "SAME_LOWER", {2, 1});
}

TEST_CASE("pooling honours auto_pad like the explicit pads ONNX derives", "[exec][auto_pad]") {
  // in 5, kernel 2, stride 2 -> out 3, total padding 1.
  const Ints x = {1, 2, 5, 5};
  for (const char* type : {"PoolAvg2d", "PoolMax2d"}) {
    const AttributeMap attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"count_include_pad", int64_t{1}}};
    const Run upper = CheckSameAsExplicit(type, x, {}, attrs, "SAME_UPPER", {0, 0, 1, 1});
    CHECK(upper.dims == Ints{1, 2, 3, 3});
    const Run lower = CheckSameAsExplicit(type, x, {}, attrs, "SAME_LOWER", {1, 1, 0, 0});
    CHECK(lower.values != upper.values);
    const Run valid = CheckSameAsExplicit(type, x, {}, attrs, "VALID", {0, 0, 0, 0});
    CHECK(valid.dims == Ints{1, 2, 2, 2});
  }
  CheckSameAsExplicit("PoolMax3d", {1, 1, 3, 4, 5}, {}, {{"kernel_shape", Ints{2, 3, 2}}, {"strides", Ints{1, 2, 2}}},
                      "SAME_LOWER", {1, 1, 1, 0, 0, 0});
}

TEST_CASE("TransposeConv honours auto_pad and output_shape as the ONNX spec splits the padding",
          "[exec][auto_pad]") {
  // in 3, kernel 3, stride 2: SAME output 6, total padding 2*2 + 3 - 6 = 1.
  const Ints x = {1, 2, 3, 3}, w = {2, 3, 3, 3};
  const AttributeMap attrs = {{"strides", Ints{2, 2}}};
  const Run upper = CheckSameAsExplicit("TransposeConv2d", x, w, attrs, "SAME_UPPER", {0, 0, 1, 1});
  CHECK(upper.dims == Ints{1, 3, 6, 6});
  const Run lower = CheckSameAsExplicit("TransposeConv2d", x, w, attrs, "SAME_LOWER", {1, 1, 0, 0});
  CHECK(lower.values != upper.values);
  const Run valid = CheckSameAsExplicit("TransposeConv2d", x, w, attrs, "VALID", {0, 0, 0, 0});
  CHECK(valid.dims == Ints{1, 3, 7, 7});

  // output_shape sets the total padding (its pads are ignored); SAME_UPPER
  // puts the odd unit at the end, NOTSET and SAME_LOWER at the start.
  AttributeMap end_pad = attrs, start_pad = attrs;
  end_pad["pads"] = Ints{0, 0, 1, 1};
  start_pad["pads"] = Ints{1, 1, 0, 0};
  for (const char* mode : {"NOTSET", "SAME_UPPER", "SAME_LOWER"}) {
    INFO("output_shape with auto_pad=" << mode);
    AttributeMap shaped = attrs;
    shaped["output_shape"] = Ints{6, 6};
    shaped["pads"] = Ints{2, 2, 2, 2};
    shaped["auto_pad"] = std::string(mode);
    const bool at_end = std::string(mode) == "SAME_UPPER";
    CheckIdentical(RunOp("TransposeConv2d", x, w, shaped), RunOp("TransposeConv2d", x, w, at_end ? end_pad : start_pad));
  }
}
