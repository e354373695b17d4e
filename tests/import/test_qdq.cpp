// Q-DQ models import with exactly the expected encodings (offset =
// -zero_point) and no Quantize/Dequantize ops left in the IR.
#include <catch2/catch.hpp>

#include "onnx/onnx_import.h"
#include "import/onnx_model_builder.h"

namespace qairt {
namespace {

using testing::OnnxModelBuilder;
using P = onnx::TensorProto;

Graph Import(const OnnxModelBuilder& b, ImportReport* report = nullptr) {
  ImportReport local;
  const std::string bytes = b.Bytes();
  auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", {}, report ? report : &local);
  INFO((g.ok() ? std::string() : g.status().message()));
  REQUIRE(g.ok());
  return std::move(g.value());
}

const Tensor& Find(const Graph& g, const std::string& name) {
  auto id = g.FindTensor(name);
  INFO(name);
  REQUIRE(id.has_value());
  return g.tensor(*id);
}

void ExpectNoQdqOps(const Graph& g) {
  for (OpId id = 0; id < g.op_count(); ++id) {
    CHECK(g.op(id).type != "Quantize");
    CHECK(g.op(id).type != "Dequantize");
  }
}

TEST_CASE("per-tensor uint8 activations fold into encodings", "[import][qdq]") {
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {1, 8});
  b.Init<float>("s_in", P::FLOAT, {}, {0.02f});
  b.Init<uint8_t>("z_in", P::UINT8, {}, {128});
  b.Init<float>("s_out", P::FLOAT, {}, {0.01f});
  b.Init<uint8_t>("z_out", P::UINT8, {}, {3});
  b.Node("QuantizeLinear", {"x", "s_in", "z_in"}, {"x_q"});
  b.Node("DequantizeLinear", {"x_q", "s_in", "z_in"}, {"x_dq"});
  b.Node("Relu", {"x_dq"}, {"y"}, "relu");
  b.Node("QuantizeLinear", {"y", "s_out", "z_out"}, {"y_q"});
  b.Node("DequantizeLinear", {"y_q", "s_out", "z_out"}, {"out"});
  b.Output("out", P::FLOAT, {1, 8});
  ImportReport report;
  Graph g = Import(b, &report);
  ExpectNoQdqOps(g);
  CHECK(g.op_count() == 1);
  CHECK(report.qdq_folded == 4);
  const Tensor& x = Find(g, "x");
  REQUIRE(x.encoding);
  CHECK(x.encoding->kind == EncodingKind::kPerTensor);
  CHECK(x.encoding->dtype == DType::kUFixed8);
  CHECK(x.encoding->scales == std::vector<float>{0.02f});
  CHECK(x.encoding->offsets == std::vector<int32_t>{-128});
  CHECK(x.encoding->symmetry == Symmetry::kSymmetric);  // zero point at the grid centre
  // The DQ output aliases the Relu's output, which takes the graph output's name.
  CHECK(!g.FindTensor("y").has_value());
  const Tensor& y = Find(g, "out");
  REQUIRE(y.encoding);
  CHECK(y.encoding->offsets == std::vector<int32_t>{-3});
  CHECK(y.encoding->symmetry == Symmetry::kAsymmetric);
  CHECK(y.is_output);
}

TEST_CASE("uint16 activations at opset 21", "[import][qdq]") {
  OnnxModelBuilder b(21);
  b.Input("x", P::FLOAT, {2, 4});
  b.Init<float>("s", P::FLOAT, {}, {1.0f / 65535.0f});
  b.Init<uint16_t>("z", P::UINT16, {}, {40000});
  b.Node("QuantizeLinear", {"x", "s", "z"}, {"q"});
  b.Node("DequantizeLinear", {"q", "s", "z"}, {"dq"});
  b.Node("Sigmoid", {"dq"}, {"out"});
  b.Output("out", P::FLOAT, {2, 4});
  Graph g = Import(b);
  ExpectNoQdqOps(g);
  const Tensor& x = Find(g, "x");
  REQUIRE(x.encoding);
  CHECK(x.encoding->dtype == DType::kUFixed16);
  CHECK(x.encoding->offsets == std::vector<int32_t>{-40000});
  CHECK(x.encoding->scales[0] == 1.0f / 65535.0f);
}

TEST_CASE("per-channel int8 weights and int32 bias become quantized static tensors", "[import][qdq]") {
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {1, 3, 8, 8});
  std::vector<int8_t> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i % 255) - 127);
  b.Init<int8_t>("w_q", P::INT8, {4, 3, 3, 3}, w);
  b.Init<float>("w_s", P::FLOAT, {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  b.Init<int8_t>("w_z", P::INT8, {4}, {0, 0, 0, 0});
  b.Init<int32_t>("b_q", P::INT32, {4}, {100, -200, 300, -400});
  b.Init<float>("b_s", P::FLOAT, {4}, {0.002f, 0.004f, 0.006f, 0.008f});
  b.Init<int32_t>("b_z", P::INT32, {4}, {0, 0, 0, 0});
  auto* dqw = b.Node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"w"});
  OnnxModelBuilder::IntAttr(dqw, "axis", 0);
  auto* dqb = b.Node("DequantizeLinear", {"b_q", "b_s", "b_z"}, {"bias"});
  OnnxModelBuilder::IntAttr(dqb, "axis", 0);
  auto* conv = b.Node("Conv", {"x", "w", "bias"}, {"y"}, "conv");
  OnnxModelBuilder::IntsAttr(conv, "pads", {1, 1, 1, 1});
  b.Output("y", P::FLOAT, {1, 4, 8, 8});
  Graph g = Import(b);
  ExpectNoQdqOps(g);
  REQUIRE(g.op_count() == 1);
  const Op& op = g.op(0);
  CHECK(op.type == "Conv2d");
  const Tensor& wt = g.tensor(op.inputs[1]);
  CHECK(wt.name == "w_q");
  CHECK(wt.dtype == DType::kSFixed8);
  REQUIRE(wt.encoding);
  CHECK(wt.encoding->kind == EncodingKind::kPerChannel);
  CHECK(wt.encoding->axis == 0);
  CHECK(wt.encoding->scales == std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
  CHECK(wt.encoding->offsets == std::vector<int32_t>{0, 0, 0, 0});
  CHECK(wt.encoding->symmetry == Symmetry::kSymmetric);
  REQUIRE(wt.data);
  CHECK(std::memcmp(wt.data->data(), w.data(), w.size()) == 0);  // integer bytes kept as they are
  const Tensor& bt = g.tensor(op.inputs[2]);
  CHECK(bt.dtype == DType::kSFixed32);
  REQUIRE(bt.encoding);
  CHECK(bt.encoding->kind == EncodingKind::kPerChannel);
  CHECK(bt.encoding->scales[3] == 0.008f);
}

TEST_CASE("int4 blocked weights at opset 21", "[import][qdq]") {
  OnnxModelBuilder b(21);
  b.Input("x", P::FLOAT, {1, 64});
  std::vector<uint8_t> packed(64 * 8 / 2);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>((i * 7) & 0xFF);
  b.Initializer("w_q", 22 /* INT4 */, {64, 8}, packed.data(), packed.size());
  std::vector<float> scales(2 * 8);
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.01f * static_cast<float>(i + 1);
  b.Init<float>("w_s", P::FLOAT, {2, 8}, scales);
  auto* dq = b.Node("DequantizeLinear", {"w_q", "w_s"}, {"w"});
  OnnxModelBuilder::IntAttr(dq, "axis", 0);
  OnnxModelBuilder::IntAttr(dq, "block_size", 32);
  b.Node("MatMul", {"x", "w"}, {"y"}, "mm");
  b.Output("y", P::FLOAT, {1, 8});
  Graph g = Import(b);
  ExpectNoQdqOps(g);
  const Tensor& wt = g.tensor(g.op(0).inputs[1]);
  CHECK(wt.dtype == DType::kSFixed4);
  REQUIRE(wt.encoding);
  CHECK(wt.encoding->kind == EncodingKind::kPerBlock);
  CHECK(wt.encoding->axis == 0);
  CHECK(wt.encoding->block_sizes == std::vector<int64_t>{32, 1});
  CHECK(wt.encoding->scales == scales);
  CHECK(wt.data->size() == packed.size());
  CHECK(g.tensor(g.op(0).outputs[0]).shape == Shape({1, 8}));
}

TEST_CASE("com.microsoft Q/DQ at opset 13", "[import][qdq]") {
  OnnxModelBuilder b(13);
  b.AddOpset("com.microsoft", 1);
  b.Input("x", P::FLOAT, {3});
  b.Init<float>("s", P::FLOAT, {}, {0.5f});
  b.Init<int16_t>("z", P::INT16, {}, {0});
  b.Node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "q", "com.microsoft");
  b.Node("DequantizeLinear", {"q", "s", "z"}, {"dq"}, "dq", "com.microsoft");
  b.Node("Tanh", {"dq"}, {"y"});
  b.Output("y", P::FLOAT, {3});
  Graph g = Import(b);
  ExpectNoQdqOps(g);
  const Tensor& x = Find(g, "x");
  REQUIRE(x.encoding);
  CHECK(x.encoding->dtype == DType::kSFixed16);
  CHECK(x.encoding->offsets == std::vector<int32_t>{0});
  CHECK(x.encoding->symmetry == Symmetry::kSymmetric);
}

TEST_CASE("outputs behind Identity keep their ONNX names", "[import]") {
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {2});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Identity", {"r"}, {"features"});
  b.Output("features", P::FLOAT, {2});
  Graph g = Import(b);
  REQUIRE(g.outputs().size() == 1);
  CHECK(g.tensor(g.outputs()[0]).name == "features");
  CHECK(g.FindTensor("features") == g.outputs()[0]);
}

TEST_CASE("requantization becomes an explicit Convert", "[import][qdq]") {
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {4});
  b.Init<float>("s1", P::FLOAT, {}, {0.1f});
  b.Init<uint8_t>("z1", P::UINT8, {}, {0});
  b.Init<float>("s2", P::FLOAT, {}, {0.2f});
  b.Init<uint8_t>("z2", P::UINT8, {}, {10});
  b.Node("QuantizeLinear", {"x", "s1", "z1"}, {"q1"});
  b.Node("DequantizeLinear", {"q1", "s1", "z1"}, {"d1"});
  b.Node("QuantizeLinear", {"d1", "s2", "z2"}, {"q2"});
  b.Node("DequantizeLinear", {"q2", "s2", "z2"}, {"d2"});
  b.Node("Relu", {"d2"}, {"y"});
  b.Output("y", P::FLOAT, {4});
  Graph g = Import(b);
  ExpectNoQdqOps(g);
  REQUIRE(g.op_count() == 2);
  CHECK(g.op(0).type == "Convert");
  const Tensor& converted = g.tensor(g.op(0).outputs[0]);
  CHECK(converted.dtype == DType::kFloat32);
  REQUIRE(converted.encoding);
  CHECK(converted.encoding->offsets == std::vector<int32_t>{-10});
  CHECK(Find(g, "x").encoding->scales == std::vector<float>{0.1f});
}

}  // namespace
}  // namespace qairt
