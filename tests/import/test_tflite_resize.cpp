// Shapes and bounds as converters write them: a TFLite input whose
// shape_signature marks a dim dynamic (placeholder 1 in the file) resized by
// input_dims, and MINIMUM/MAXIMUM (ONNX Min/Max) by a scalar constant lowered
// as a clamp whose bound is an attribute, so "no bound" written as float32's
// largest value never becomes a quantized operand.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "exec/executor.h"
#include "onnx/onnx_import.h"
#include "onnx_model_builder.h"
#include "tflite/tflite_builder.h"
#include "tflite/tflite_import.h"

namespace qairt {
namespace {

using namespace tflite_test;  // NOLINT
using TT = tfb::TensorType;

const Tensor& T(const Graph& g, const std::string& name) {
  auto id = g.FindTensor(name);
  INFO("tensor " << name);
  REQUIRE(id.has_value());
  return g.tensor(*id);
}

std::vector<float> RunOne(const Graph& g, std::vector<float> x, std::vector<int64_t>* dims = nullptr) {
  auto ex = exec::Executor::Create(g);
  REQUIRE(ex.ok());
  auto out = ex.value()->Run({x.data()}, {x.size() * 4});
  REQUIRE(out.ok());
  if (dims) *dims = out.value()[0].dims;
  std::vector<float> got(out.value()[0].bytes.size() / 4);
  std::memcpy(got.data(), out.value()[0].bytes.data(), got.size() * 4);
  return got;
}

// A model exported with a dynamic sample count (shape_signature -1) and a
// placeholder shape of 1, as TF's converter writes openWakeWord's front end:
// at the file's shape its convolution's window does not fit; resized with
// --input_dim, every op's output follows the new length.
TModel DynamicLengthModel() {
  TModel m;
  const std::vector<float> w = {1, 2, 3, -1, 0, 1};  // [2 out, 1, 3 taps, 1 in]
  const int x = m.Add({"x", {1, 1}, TT::FLOAT32});
  m.tensors[static_cast<size_t>(x)].shape_signature = {1, -1};
  auto add = [&](const char* name, std::vector<int32_t> shape, std::vector<int32_t> sig) {
    const int t = m.Add({name, std::move(shape), TT::FLOAT32});
    m.tensors[static_cast<size_t>(t)].shape_signature = std::move(sig);
    return t;
  };
  const int ax1 = m.Add({"axis1", {}, TT::INT32, Bytes(std::vector<int32_t>{1})});
  const int ax3 = m.Add({"axis3", {}, TT::INT32, Bytes(std::vector<int32_t>{3})});
  const int e1 = add("e1", {1, 1, 1}, {1, 1, -1});
  const int e2 = add("e2", {1, 1, 1, 1}, {1, 1, -1, 1});
  const int wt = m.Add({"w", {2, 1, 3, 1}, TT::FLOAT32, Bytes(w)});
  const int c = add("c", {1, 1, 1, 2}, {1, 1, -1, 2});
  const int sq = add("sq", {1, 1, 2}, {1, -1, 2});
  const int two = m.Add({"two", {}, TT::FLOAT32, Bytes(std::vector<float>{2})});
  const int mu = add("mu", {1, 1, 2}, {1, -1, 2});
  const int traced = m.Add({"traced", {2}, TT::INT32, Bytes(std::vector<int32_t>{1, 2})});
  const int y = add("y", {1, 2}, {1, -1});
  m.Op(70, {x, ax1}, {e1});
  m.Op(70, {e1, ax3}, {e2});
  m.Op(3, {e2, wt}, {c}, Conv(tfb::Padding::VALID, 1, 1));
  m.Op(43, {c}, {sq}, Squeeze({1}));
  m.Op(18, {sq, two}, {mu});
  m.Op(22, {mu, traced}, {y}, Reshape());
  m.inputs = {x};
  m.outputs = {y};
  return m;
}

TEST_CASE("a dynamic input (shape_signature -1) is resized by input_dims; shapes follow the lowered graph",
          "[tflite][import]") {
  const auto bytes = Build(DynamicLengthModel());
  SECTION("at the file's placeholder shape: the cause and the fix are named") {
    ImportReport report;
    auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, &report);
    CHECK_FALSE(g.ok());
    bool warned = false;
    for (const Diagnostic& d : report.diagnostics)
      warned |= d.message.find("input 'x' is dynamic (shape signature [1, -1])") != std::string::npos &&
                d.message.find("--input_dim x 1,N") != std::string::npos;
    CHECK(warned);
  }
  SECTION("resized: output [1, 2 x (len - 2)], values as the model computes them") {
    const int len = 9;
    ImportOptions o;
    o.input_dims["x"] = {1, len};
    ImportReport report;
    auto g = ImportTfliteBytes(bytes.data(), bytes.size(), o, &report);
    INFO((g.ok() ? std::string() : g.status().message()));
    REQUIRE(g.ok());
    for (const Diagnostic& d : report.diagnostics) CHECK(d.severity != Severity::kError);
    CHECK(T(g.value(), "y").shape == Shape::FromExtents({1, 2 * (len - 2)}));
    std::vector<float> x(len);
    for (int i = 0; i < len; ++i) x[static_cast<size_t>(i)] = std::sin(0.9f * static_cast<float>(i));
    std::vector<int64_t> dims;
    const std::vector<float> got = RunOne(g.value(), x, &dims);
    REQUIRE(dims == std::vector<int64_t>{1, 2 * (len - 2)});
    const float w[2][3] = {{1, 2, 3}, {-1, 0, 1}};
    for (int t = 0; t + 2 < len; ++t)
      for (int ch = 0; ch < 2; ++ch) {
        float acc = 0;
        for (int k = 0; k < 3; ++k) acc += w[ch][k] * x[static_cast<size_t>(t + k)];
        CHECK(got[static_cast<size_t>(2 * t + ch)] == Approx(2 * acc).margin(1e-6));
      }
  }
  SECTION("a dim the signature fixes, a wrong rank and an unknown name") {
    ImportOptions o;
    o.input_dims["x"] = {2, 9};
    ImportReport report;
    (void)ImportTfliteBytes(bytes.data(), bytes.size(), o, &report);
    bool fixed = false;
    for (const Diagnostic& d : report.diagnostics)
      fixed |= d.message.find("dim 0 overridden from 1 to 2, which the model's shape signature [1, -1] fixes") !=
               std::string::npos;
    CHECK(fixed);
    ImportOptions bad;
    bad.input_dims["x"] = {9};
    bad.input_dims["z"] = {1, 9};
    ImportReport r2;
    auto g = ImportTfliteBytes(bytes.data(), bytes.size(), bad, &r2);
    CHECK_FALSE(g.ok());
    std::string all;
    for (const Diagnostic& d : r2.diagnostics) all += d.message + "\n";
    CHECK_THAT(all, Catch::Contains("--input_dim x: 1 dims given but the input has rank 2"));
    CHECK_THAT(all, Catch::Contains("--input_dim names 'z', which is not an input of the model"));
  }
}


std::vector<std::string> OpTypes(const Graph& g) {
  std::vector<std::string> v;
  for (OpId i = 0; i < g.op_count(); ++i) v.push_back(g.op(i).type);
  return v;
}

TEST_CASE("MINIMUM/MAXIMUM by a scalar constant are clamps with attribute bounds (TFLite and ONNX)",
          "[tflite][onnx][import]") {
  const float big = std::numeric_limits<float>::max();
  const std::vector<float> x = {-3e5f, -2, -1e-12f, 0, 1e-12f, 0.5f, 7, 4e6f};
  // clip_by_value(x, 1e-10, FLT_MAX) as onnx-tf writes it, then max(., 0).
  auto check = [&](const Graph& g) {
    CHECK(OpTypes(g) == std::vector<std::string>{"ReluMinMax", "ReluMinMax", "Relu"});
    const std::vector<float> got = RunOne(g, x);
    REQUIRE(got.size() == x.size());
    for (size_t i = 0; i < x.size(); ++i) CHECK(got[i] == std::max(std::min(x[i], big), 1e-10f));
    for (OpId i = 0; i < g.op_count(); ++i)
      for (TensorId in : g.op(i).inputs) CHECK(g.tensor(in).kind != TensorKind::kStatic);  // no bound tensors
  };
  SECTION("TFLite") {
    TModel m;
    const int xt = m.Add({"x", {8}, TT::FLOAT32});
    const int hi = m.Add({"hi", {}, TT::FLOAT32, Bytes(std::vector<float>{big})});
    const int lo = m.Add({"lo", {1}, TT::FLOAT32, Bytes(std::vector<float>{1e-10f})});
    const int zero = m.Add({"zero", {}, TT::FLOAT32, Bytes(std::vector<float>{0})});
    const int a = m.Add({"a", {8}, TT::FLOAT32});
    const int b = m.Add({"b", {8}, TT::FLOAT32});
    const int y = m.Add({"y", {8}, TT::FLOAT32});
    m.Op(57, {xt, hi}, {a});    // MINIMUM
    m.Op(55, {lo, a}, {b});     // MAXIMUM, the constant first
    m.Op(55, {b, zero}, {y});   // MAXIMUM by 0: Relu
    m.inputs = {xt};
    m.outputs = {y};
    const auto bytes = Build(m);
    ImportReport report;
    auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, &report);
    REQUIRE(g.ok());
    check(g.value());
  }
  SECTION("ONNX") {
    testing::OnnxModelBuilder b(17);
    b.Input("x", onnx::TensorProto::FLOAT, {8});
    b.Output("y", onnx::TensorProto::FLOAT, {8});
    b.Init<float>("hi", onnx::TensorProto::FLOAT, {}, {big});
    b.Init<float>("lo", onnx::TensorProto::FLOAT, {1}, {1e-10f});
    b.Init<float>("zero", onnx::TensorProto::FLOAT, {}, {0});
    b.Node("Min", {"x", "hi"}, {"a"});
    b.Node("Max", {"lo", "a"}, {"b"});
    b.Node("Max", {"b", "zero"}, {"y"});
    const std::string bytes = b.Bytes();
    ImportReport report;
    auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", {}, &report);
    INFO((g.ok() ? std::string() : g.status().message()));
    REQUIRE(g.ok());
    check(g.value());
  }
}

}  // namespace
}  // namespace qairt
