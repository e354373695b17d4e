// ONNX export of the IR (lib/onnx) and its C API. Numerical
// equivalence with the source models is checked against onnxruntime in
// tests/ort; here: structure, opset-dependent spellings, quantized weights,
// errors, the atomic file write and the C boundary.
#include <catch2/catch.hpp>
#include <onnx/onnx_pb.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <qairt/qairt_export.h>
#include <qairt/qairt_import.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "capi/capi_internal.h"
#include "common/model_builders.h"
#include "export/export_test_util.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "passes/pass_test_util.h"

namespace qairt {
namespace {

using Ints = std::vector<int64_t>;
using testing::PerChannel;
using testing::PerTensor;

onnx::ModelProto Parse(const std::string& bytes) {
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(bytes));
  return m;
}

onnx::ModelProto Export(const Graph& g, int64_t opset = 17) {
  OnnxExportOptions o;
  o.opset = opset;
  std::string bytes;
  Status s = ExportOnnx(g, o, &bytes);
  INFO(s.message());
  REQUIRE(s.ok());
  return Parse(bytes);
}

// Every node input is defined before use; value, initializer and node names
// are unique.
void CheckWellFormed(const onnx::ModelProto& m) {
  std::set<std::string> defined, nodes;
  for (const auto& i : m.graph().input()) REQUIRE(defined.insert(i.name()).second);
  for (const auto& i : m.graph().initializer()) {
    INFO("initializer " << i.name());
    REQUIRE(defined.insert(i.name()).second);
  }
  for (const auto& n : m.graph().node()) {
    INFO("node " << n.name() << " (" << n.op_type() << ")");
    REQUIRE(nodes.insert(n.name()).second);
    for (const auto& in : n.input()) CHECK((in.empty() || defined.count(in)));
    for (const auto& out : n.output()) REQUIRE(defined.insert(out).second);
  }
  for (const auto& o : m.graph().output()) CHECK(defined.count(o.name()));
}

std::vector<std::string> OpTypes(const onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const auto& n : m.graph().node()) out.push_back(n.op_type());
  return out;
}

size_t Count(const onnx::ModelProto& m, const std::string& type) {
  size_t n = 0;
  for (const auto& node : m.graph().node()) n += node.op_type() == type;
  return n;
}

const onnx::NodeProto* FindNode(const onnx::ModelProto& m, const std::string& type) {
  for (const auto& n : m.graph().node())
    if (n.op_type() == type) return &n;
  return nullptr;
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const onnx::TensorProto* FindInit(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

std::vector<int64_t> Int64Data(const onnx::TensorProto& t) {
  std::vector<int64_t> v(t.raw_data().size() / 8);
  std::memcpy(v.data(), t.raw_data().data(), v.size() * 8);
  return v;
}

std::vector<std::string> IrOpTypes(const Graph& g) {
  std::vector<std::string> out;
  auto order = g.TopologicalOrder();
  REQUIRE(order.ok());
  for (OpId id : order.value()) out.push_back(g.op(id).type);
  return out;
}

Graph ReImport(const std::string& bytes, const ImportOptions& opts = {}) {
  ImportReport report;
  auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", opts, &report);
  INFO((g.ok() ? std::string() : g.status().message()));
  REQUIRE(g.ok());
  return std::move(g).value();
}

// The reference models carry encodings on some float tensors (written as
// Q-DQ pairs); the spelling tests look at the float ops alone.
void ClearFloatEncodings(Graph* g) {
  for (TensorId id = 0; id < g->tensor_count(); ++id)
    if (g->tensor(id).encoding && !IsFixedPoint(g->tensor(id).dtype)) REQUIRE(g->ClearEncoding(id).ok());
}

std::shared_ptr<const StaticData> Floats(std::vector<float> v) {
  return StaticData::Copy(v.data(), v.size() * sizeof(float));
}

TEST_CASE("the reference models export, are well-formed and re-import to the same ops", "[export][onnx]") {
  for (auto build : {&testing::BuildSmallCnn, &testing::BuildTransformerBlock, &testing::BuildLstmCell}) {
    Graph g("model");
    testing::CppModelBuilder b(&g);
    build(b);
    ClearFloatEncodings(&g);
    REQUIRE(!HasErrors(g.Validate()));
    std::string bytes;
    REQUIRE(ExportOnnx(g, {}, &bytes).ok());
    const onnx::ModelProto m = Parse(bytes);
    CheckWellFormed(m);
    CHECK(m.ir_version() == 8);
    REQUIRE(m.opset_import_size() == 1);
    CHECK(m.opset_import(0).domain().empty());
    CHECK(m.opset_import(0).version() == 17);
    CHECK(m.producer_name() == "qairt");
    REQUIRE(static_cast<size_t>(m.graph().input_size()) == g.inputs().size());
    REQUIRE(static_cast<size_t>(m.graph().output_size()) == g.outputs().size());
    for (size_t i = 0; i < g.inputs().size(); ++i) CHECK(m.graph().input(static_cast<int>(i)).name() == g.tensor(g.inputs()[i]).name);
    for (size_t i = 0; i < g.outputs().size(); ++i) CHECK(m.graph().output(static_cast<int>(i)).name() == g.tensor(g.outputs()[i]).name);

    Graph back = ReImport(bytes);
    // Same outputs with the same shapes (symbolic dims survive as dim_param).
    REQUIRE(back.outputs().size() == g.outputs().size());
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      CHECK(back.tensor(back.outputs()[i]).name == g.tensor(g.outputs()[i]).name);
      CHECK(back.tensor(back.outputs()[i]).shape == g.tensor(g.outputs()[i]).shape);
      CHECK(back.tensor(back.outputs()[i]).dtype == g.tensor(g.outputs()[i]).dtype);
    }
  }
}

TEST_CASE("CNN ops map to their ONNX spellings and back", "[export][onnx]") {
  Graph g("cnn");
  testing::CppModelBuilder b(&g);
  testing::BuildSmallCnn(b);
  ClearFloatEncodings(&g);
  std::string bytes;
  REQUIRE(ExportOnnx(g, {}, &bytes).ok());
  const onnx::ModelProto m = Parse(bytes);
  CHECK(OpTypes(m) == std::vector<std::string>{"Conv", "Relu", "MaxPool", "Conv", "Clip", "Conv", "HardSwish",
                                               "AveragePool", "Reshape", "Gemm", "Softmax"});
  // Symbolic batch dim -> dim_param.
  const auto& dim0 = m.graph().input(0).type().tensor_type().shape().dim(0);
  CHECK(dim0.dim_param() == "batch");
  // Depthwise conv carries group = C; Clip has min/max inputs; FC is Gemm(transB=1).
  const onnx::NodeProto* dw = &m.graph().node(3);
  REQUIRE(FindAttr(*dw, "group"));
  CHECK(FindAttr(*dw, "group")->i() == 16);
  const onnx::NodeProto* clip = FindNode(m, "Clip");
  REQUIRE(clip->input_size() == 3);
  const onnx::NodeProto* gemm = FindNode(m, "Gemm");
  REQUIRE(FindAttr(*gemm, "transB"));
  CHECK(FindAttr(*gemm, "transB")->i() == 1);
  // Reshape's static shape became an int64 initializer.
  const onnx::NodeProto* reshape = FindNode(m, "Reshape");
  const onnx::TensorProto* shape = FindInit(m, reshape->input(1));
  REQUIRE(shape);
  CHECK(shape->data_type() == onnx::TensorProto::INT64);
  CHECK(Int64Data(*shape) == Ints{0, 32});
  // Node names follow the IR op names; the source op is noted.
  CHECK(m.graph().node(0).name() == "conv1");
  CHECK(m.graph().node(1).doc_string().find("'/features/relu1/Relu'") != std::string::npos);

  Graph back = ReImport(bytes);
  CHECK(IrOpTypes(back) == IrOpTypes(g));
}

TEST_CASE("opset-dependent spellings", "[export][onnx]") {
  Graph g("t");
  testing::CppModelBuilder b(&g);
  testing::BuildTransformerBlock(b);
  ClearFloatEncodings(&g);

  const onnx::ModelProto m17 = Export(g, 17);
  CHECK(Count(m17, "LayerNormalization") == 2);
  CHECK(Count(m17, "Erf") == 1);  // Gelu below opset 20
  CHECK(Count(m17, "Gelu") == 0);
  const onnx::ModelProto m13 = Export(g, 13);
  CHECK(Count(m13, "LayerNormalization") == 0);  // decomposed below 17
  CHECK(Count(m13, "ReduceMean") == 4);
  CHECK(FindAttr(*FindNode(m13, "ReduceMean"), "axes"));  // attribute before 18
  const onnx::ModelProto m21 = Export(g, 21);
  CHECK(Count(m21, "Gelu") == 1);
  CHECK(m21.ir_version() == 10);
  for (const auto* m : {&m13, &m17, &m21}) CheckWellFormed(*m);

  // Re-import of the decomposed spellings gives a graph with the same outputs.
  std::string bytes;
  OnnxExportOptions o;
  o.opset = 11;
  REQUIRE(ExportOnnx(g, o, &bytes).ok());
  Graph back = ReImport(bytes);
  CHECK(back.tensor(back.outputs()[0]).shape == g.tensor(g.outputs()[0]).shape);

  for (int64_t bad : {-1, 10, 22}) {
    o.opset = bad;
    Status s = ExportOnnx(g, o, &bytes);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find(std::to_string(bad)) != std::string::npos);
  }
}

TEST_CASE("IR-only attribute forms become ONNX inputs", "[export][onnx]") {
  Graph g("shapes");
  auto x = g.AddInput("x", DType::kFloat32, Shape{2, 6, 4});
  REQUIRE(x.ok());
  auto op = [&](const std::string& type, const std::string& name, std::vector<TensorId> in, AttributeMap attrs,
                size_t outs = 1) {
    std::vector<std::string> names;
    for (size_t i = 0; i < outs; ++i) names.push_back(name + "_out" + std::to_string(i));
    auto id = g.AddOp(type, name, std::move(in), names, std::move(attrs));
    INFO(name);
    REQUIRE(id.ok());
    return g.op(id.value()).outputs;
  };
  auto s = op("StridedSlice", "slice", {x.value()}, {{"starts", Ints{1}}, {"ends", Ints{5}}, {"axes", Ints{1}}});
  auto p = op("Pad", "pad", {s[0]}, {{"pads", Ints{0, 1, 0, 0, 1, 2}}, {"constant_value", 0.25}});
  auto t = op("Tile", "tile", {p[0]}, {{"multiples", Ints{1, 1, 2}}});
  auto sp = op("Split", "split", {t[0]}, {{"axis", int64_t{0}}}, 2);
  auto e = op("ExpandDims", "unsq", {sp[0]}, {{"axes", Ints{0}}});
  auto q = op("Squeeze", "sq", {e[0]}, {{"axes", Ints{0}}});
  auto k = op("TopK", "topk", {q[0]}, {{"k", int64_t{3}}, {"axis", int64_t{-1}}}, 2);  // int32 indices (IR default)
  auto r = op("ReduceMax", "rmax", {k[0]}, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}});
  auto c = op("CumulativeSum", "cumsum", {r[0]}, {{"axis", int64_t{1}}, {"reverse", int64_t{1}}});
  auto rs = op("Resize", "resize", {p[0]}, {{"sizes", Ints{1, 7, 12}}, {"mode", std::string("nearest")}});
  // FullyConnected on a 3-D input: MatMul with the transposed weight, + bias.
  auto w = g.AddConstant("fc_w", DType::kFloat32, Shape{5, 12}, Floats(std::vector<float>(60, 0.5f)));
  auto fb = g.AddConstant("fc_b", DType::kFloat32, Shape{5}, Floats({1, 2, 3, 4, 5}));
  auto fc = op("FullyConnected", "fc", {t[0], w.value(), fb.value()}, {});
  for (TensorId out : {c[0], k[1], rs[0], fc[0]}) REQUIRE(g.MarkOutput(out).ok());
  REQUIRE(!HasErrors(g.Validate()));

  for (int64_t opset : {11, 13, 17, 18, 21}) {
    DYNAMIC_SECTION("opset " << opset) {
      const onnx::ModelProto m = Export(g, opset);
      CheckWellFormed(m);
      const onnx::NodeProto* slice = FindNode(m, "Slice");
      REQUIRE(slice->input_size() == 4);
      CHECK(Int64Data(*FindInit(m, slice->input(1))) == Ints{1});
      const onnx::NodeProto* pad = FindNode(m, "Pad");
      REQUIRE(pad->input_size() == 3);  // pads, constant_value
      CHECK(Int64Data(*FindInit(m, pad->input(1))) == Ints{0, 1, 0, 0, 1, 2});
      const onnx::NodeProto* split = FindNode(m, "Split");
      CHECK(split->output_size() == 2);
      CHECK((FindAttr(*split, "num_outputs") != nullptr) == (opset >= 18));
      CHECK((FindNode(m, "Unsqueeze")->input_size() == 2) == (opset >= 13));
      const onnx::NodeProto* rmax = FindNode(m, "ReduceMax");
      CHECK((rmax->input_size() == 2) == (opset >= 18));
      // TopK indices: ONNX gives int64, the IR output is int32 -> Cast.
      CHECK(Count(m, "Cast") == 1);
      const onnx::NodeProto* resize = FindNode(m, "Resize");
      REQUIRE(resize->input_size() == 4);
      CHECK(Int64Data(*FindInit(m, resize->input(3))) == Ints{1, 7, 12});
      if (opset < 13) CHECK(!resize->input(1).empty());  // roi required before 13
      CHECK(Count(m, "Gemm") == 0);
      CHECK(Count(m, "MatMul") == 1);
      CHECK(Count(m, "Transpose") == 1);
      CHECK(m.graph().output(3).type().tensor_type().shape().dim_size() == 3);
    }
  }
}

TEST_CASE("quantized weights export as integer initializer + DequantizeLinear and re-import", "[export][onnx]") {
  Graph g("q");
  auto x = g.AddInput("x", DType::kFloat32, Shape{1, 2, 4, 4});
  REQUIRE(x.ok());
  const std::vector<int8_t> wq = {-3, 1, 4, -1, 5, -9, 2, 6};
  auto w = g.AddConstant("w", DType::kSFixed8, Shape{2, 1, 2, 2}, StaticData::Copy(wq.data(), wq.size()));
  REQUIRE(w.ok());
  Encoding e;
  e.kind = EncodingKind::kPerChannel;
  e.dtype = DType::kSFixed8;
  e.axis = 0;
  e.symmetry = Symmetry::kSymmetric;
  e.scales = {0.5f, 0.25f};
  e.offsets = {0, 0};
  REQUIRE(g.SetEncoding(w.value(), e).ok());
  std::vector<uint8_t> bq = {10, 20};
  auto bias = g.AddConstant("bias", DType::kUFixed8, Shape{2}, StaticData::Copy(bq.data(), bq.size()));
  REQUIRE(bias.ok());
  Encoding eb;
  eb.kind = EncodingKind::kPerTensor;
  eb.dtype = DType::kUFixed8;
  eb.scales = {0.1f};
  eb.offsets = {-12};  // zero point 12
  REQUIRE(g.SetEncoding(bias.value(), eb).ok());
  REQUIRE(g.AddOp("Conv2d", "conv", {x.value(), w.value(), bias.value()}, {"y"}, {{"group", int64_t{2}}}).ok());
  REQUIRE(g.MarkOutput(*g.FindTensor("y")).ok());
  REQUIRE(!HasErrors(g.Validate()));

  std::string bytes;
  Status st = ExportOnnx(g, {}, &bytes);
  INFO(st.message());
  REQUIRE(st.ok());
  const onnx::ModelProto m = Parse(bytes);
  CheckWellFormed(m);
  CHECK(Count(m, "DequantizeLinear") == 2);
  const onnx::TensorProto* wi = FindInit(m, "w_quantized");
  REQUIRE(wi);
  CHECK(wi->data_type() == onnx::TensorProto::INT8);
  CHECK(wi->raw_data() == std::string(reinterpret_cast<const char*>(wq.data()), wq.size()));
  const onnx::TensorProto* bz = FindInit(m, "bias_zero_point");
  REQUIRE(bz);
  CHECK(bz->data_type() == onnx::TensorProto::UINT8);
  CHECK(static_cast<uint8_t>(bz->raw_data()[0]) == 12);
  const onnx::NodeProto* dq = FindNode(m, "DequantizeLinear");
  REQUIRE(FindAttr(*dq, "axis"));
  CHECK(FindAttr(*dq, "axis")->i() == 0);
  CHECK(dq->output(0) == "w");  // consumers keep reading the original name

  // The importer folds the DequantizeLinear back into the same encodings.
  Graph back = ReImport(bytes);
  REQUIRE(back.op_count() == 1);
  REQUIRE(back.op(0).inputs.size() == 3);
  const Tensor& w2 = back.tensor(back.op(0).inputs[1]);
  CHECK(w2.dtype == DType::kSFixed8);
  REQUIRE(w2.encoding);
  CHECK(w2.encoding->kind == EncodingKind::kPerChannel);
  CHECK(w2.encoding->scales == e.scales);
  CHECK(w2.data->size() == wq.size());
  CHECK(std::memcmp(w2.data->data(), wq.data(), wq.size()) == 0);
  const Tensor& b2 = back.tensor(back.op(0).inputs[2]);
  REQUIRE(b2.encoding);
  CHECK(b2.encoding->offsets == std::vector<int32_t>{-12});

  // 16-bit weights need opset 21; the error names the tensor.
  std::vector<uint16_t> w16(8, 7);
  Graph g16("q16");
  auto x16 = g16.AddInput("x", DType::kFloat32, Shape{1, 2, 4, 4});
  auto c16 = g16.AddConstant("w16", DType::kUFixed16, Shape{2, 1, 2, 2}, StaticData::Copy(w16.data(), 16));
  REQUIRE(c16.ok());
  Encoding e16;
  e16.dtype = DType::kUFixed16;
  e16.scales = {0.01f};
  e16.offsets = {-100};
  REQUIRE(g16.SetEncoding(c16.value(), e16).ok());
  REQUIRE(g16.AddOp("Conv2d", "conv", {x16.value(), c16.value()}, {"y"}, {{"group", int64_t{2}}}).ok());
  REQUIRE(g16.MarkOutput(*g16.FindTensor("y")).ok());
  OnnxExportOptions o17;
  o17.opset = 17;
  Status s = ExportOnnx(g16, o17, &bytes);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK(s.message().find("'w16'") != std::string::npos);
  CHECK(s.message().find("opset 21") != std::string::npos);
  REQUIRE(ExportOnnx(g16, {}, &bytes).ok());  // automatic opset: 21
  CHECK(Parse(bytes).opset_import(0).version() == 21);
  CHECK(FindInit(Parse(bytes), "w16_quantized")->data_type() == onnx::TensorProto::UINT16);

  // A fixed-point constant without an encoding cannot be dequantized.
  Graph bad("bad");
  auto xb = bad.AddInput("x", DType::kFloat32, Shape{1, 2, 4, 4});
  auto cb = bad.AddConstant("raw", DType::kSFixed8, Shape{2, 1, 2, 2}, StaticData::Copy(wq.data(), wq.size()));
  REQUIRE(bad.AddOp("Conv2d", "conv", {xb.value(), cb.value()}, {"y"}, {{"group", int64_t{2}}}).ok());
  REQUIRE(bad.MarkOutput(*bad.FindTensor("y")).ok());
  s = ExportOnnx(bad, {}, &bytes);
  INFO(s.message());
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("'raw'") != std::string::npos);
}

TEST_CASE("unsupported and invalid graphs fail naming the op", "[export][onnx]") {
  std::string bytes = "untouched";
  {
    Graph g("g");
    auto x = g.AddInput("x", DType::kFloat32, Shape{1, 4, 2, 2});
    REQUIRE(g.AddOp("ChannelShuffle", "shuffle", {x.value()}, {"y"}, {{"num_groups", int64_t{2}}}).ok());
    REQUIRE(g.MarkOutput(*g.FindTensor("y")).ok());
    Status s = ExportOnnx(g, {}, &bytes);
    CHECK(s.code() == StatusCode::kUnsupported);
    CHECK(s.message().find("'shuffle'") != std::string::npos);
    CHECK(s.message().find("ChannelShuffle") != std::string::npos);
  }
  {
    Graph g("g");
    auto x = g.AddInput("x", DType::kFloat32, Shape{4});
    REQUIRE(g.AddOp("NoSuchOp", "mystery", {x.value()}, {"y"}).ok());
    REQUIRE(g.MarkOutput(*g.FindTensor("y")).ok());
    Status s = ExportOnnx(g, {}, &bytes);
    CHECK(s.code() == StatusCode::kValidationFailed);
    CHECK(s.message().find("mystery") != std::string::npos);
  }
  CHECK(bytes == "untouched");
}

TEST_CASE("float Convert (requantization) is the identity", "[export][onnx]") {
  Graph g("convert");
  auto x = g.AddInput("x", DType::kFloat32, Shape{4});
  REQUIRE(g.AddOp("Convert", "requant", {x.value()}, {"y"}, {{"output_dtype", int64_t(DType::kFloat32)}}).ok());
  REQUIRE(g.MarkOutput(*g.FindTensor("y")).ok());
  const onnx::ModelProto m = Export(g);
  CHECK(OpTypes(m) == std::vector<std::string>{"Identity"});
  CheckWellFormed(m);

  // A fixed-point activation without an encoding cannot be quantized.
  Graph q("quantized");
  auto xq = q.AddInput("x", DType::kFloat32, Shape{4});
  REQUIRE(q.AddOp("Quantize", "quant", {xq.value()}, {"xq"}, {{"output_dtype", int64_t(DType::kUFixed8)}}).ok());
  REQUIRE(q.MarkOutput(*q.FindTensor("xq")).ok());
  std::string bytes;
  Status s = ExportOnnx(q, {}, &bytes);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK(s.message().find("'quant'") != std::string::npos);
  CHECK(s.message().find("'xq'") != std::string::npos);
}

// float input -> Quantize(u16) -> Conv(w s8 per-channel, bias s32) -> u16 ->
// Convert(u8) -> Relu(u8) -> Dequantize -> float output: what
// target-specific processing leaves for W8A16 with a requantization.
Graph ProcessedConv() {
  Graph g("processed");
  auto x = g.AddInput("x", DType::kFloat32, Shape{1, 2, 4, 4});
  REQUIRE(g.AddOp("Quantize", "x_quant", {x.value()}, {"x_q"}, {{"output_dtype", int64_t(DType::kUFixed16)}}).ok());
  REQUIRE(g.SetEncoding(*g.FindTensor("x_q"), PerTensor(DType::kUFixed16, 1.0f / 4096, -32768)).ok());
  const std::vector<int8_t> wq = {-3, 1, 4, -1, 5, -9, 2, 6, 7, -7, 0, 3, 1, 1, -2, 8};
  auto w = g.AddConstant("w", DType::kSFixed8, Shape{2, 2, 2, 2}, StaticData::Copy(wq.data(), wq.size()));
  const Encoding ew = PerChannel(DType::kSFixed8, {0.05f, 0.02f});
  REQUIRE(g.SetEncoding(w.value(), ew).ok());
  const std::vector<int32_t> bq = {1000, -400};
  auto bias = g.AddConstant("b", DType::kSFixed32, Shape{2}, StaticData::Copy(bq.data(), 8));
  Encoding eb = ew;
  eb.dtype = DType::kSFixed32;
  eb.scales = {0.05f / 4096, 0.02f / 4096};
  REQUIRE(g.SetEncoding(bias.value(), eb).ok());
  REQUIRE(g.AddOp("Conv2d", "conv", {*g.FindTensor("x_q"), w.value(), bias.value()}, {"c"}).ok());
  REQUIRE(g.SetTensorDType(*g.FindTensor("c"), DType::kUFixed16).ok());
  REQUIRE(g.SetEncoding(*g.FindTensor("c"), PerTensor(DType::kUFixed16, 1.0f / 2048, -30000)).ok());
  REQUIRE(g.AddOp("Convert", "c_convert", {*g.FindTensor("c")}, {"c8"}, {{"output_dtype", int64_t(DType::kUFixed8)}})
              .ok());
  REQUIRE(g.SetEncoding(*g.FindTensor("c8"), PerTensor(DType::kUFixed8, 0.05f, -128)).ok());
  REQUIRE(g.AddOp("Relu", "relu", {*g.FindTensor("c8")}, {"r"}).ok());
  REQUIRE(g.SetTensorDType(*g.FindTensor("r"), DType::kUFixed8).ok());
  REQUIRE(g.SetEncoding(*g.FindTensor("r"), PerTensor(DType::kUFixed8, 0.03f, 0)).ok());
  REQUIRE(g.AddOp("Dequantize", "r_dequant", {*g.FindTensor("r")}, {"y"}, {{"output_dtype", int64_t(DType::kFloat32)}})
              .ok());
  REQUIRE(g.MarkOutput(*g.FindTensor("y")).ok());
  INFO(JoinMessages(g.Validate()));
  REQUIRE(!HasErrors(g.Validate()));
  return g;
}

TEST_CASE("a processed graph exports as Q-DQ: activations, requantization, int32 bias", "[export][onnx][qdq]") {
  const Graph g = ProcessedConv();
  const onnx::ModelProto m = Export(g, kOnnxExportAutoOpset);
  CheckWellFormed(m);
  CHECK(m.opset_import(0).version() == 21);  // 16-bit Q/DQ: automatic opset 21
  // x: Q-DQ; w, b: DQ; c: Q-DQ; c8 (requantized): Q-DQ; r: Q-DQ; the
  // Quantize/Convert/Dequantize ops are the identity on float values.
  CHECK(OpTypes(m) == std::vector<std::string>{"DequantizeLinear", "DequantizeLinear", "QuantizeLinear",
                                               "DequantizeLinear", "Conv", "QuantizeLinear", "DequantizeLinear",
                                               "QuantizeLinear", "DequantizeLinear", "Relu", "QuantizeLinear",
                                               "DequantizeLinear", "Identity"});
  const onnx::TensorProto* xz = FindInit(m, "x_q_zero_point");
  REQUIRE(xz);
  CHECK(xz->data_type() == onnx::TensorProto::UINT16);
  uint16_t z16;
  std::memcpy(&z16, xz->raw_data().data(), 2);
  CHECK(z16 == 32768);
  const onnx::TensorProto* bi = FindInit(m, "b_quantized");
  REQUIRE(bi);
  CHECK(bi->data_type() == onnx::TensorProto::INT32);
  const onnx::TensorProto* c8z = FindInit(m, "c8_zero_point");
  REQUIRE(c8z);
  CHECK(c8z->data_type() == onnx::TensorProto::UINT8);
  CHECK(static_cast<uint8_t>(c8z->raw_data()[0]) == 128);
  // The graph output keeps its name; the Relu feeds Q-DQ, whose DQ feeds it.
  CHECK(m.graph().output(0).name() == "y");
  CHECK(m.graph().output(0).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT);

  // 16-bit at an explicit opset 17: refused naming the tensor, unless the
  // com.microsoft Q/DQ are asked for.
  OnnxExportOptions o;
  o.opset = 17;
  std::string bytes;
  Status s = ExportOnnx(g, o, &bytes);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK(s.message().find("'x_q'") != std::string::npos);
  CHECK(s.message().find("opset 21") != std::string::npos);
  o.opset = 13;
  o.qdq_ms_domain = true;
  const Status st = ExportOnnx(g, o, &bytes);
  INFO(st.message());
  REQUIRE(st.ok());
  const onnx::ModelProto ms = Parse(bytes);
  CHECK(ms.opset_import(0).version() == 13);
  REQUIRE(ms.opset_import_size() == 2);
  CHECK(ms.opset_import(1).domain() == "com.microsoft");
  for (const auto& n : ms.graph().node())
    if (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear") CHECK(n.domain() == "com.microsoft");
}

TEST_CASE("block and LPBQ weights export in ONNX's blocked layout", "[export][onnx][qdq]") {
  // MatMul weight [K=4, N=8]: blocks of 2 along K (axis 0).
  Graph g("blocks");
  auto x = g.AddInput("x", DType::kFloat32, Shape{1, 4});
  std::vector<int8_t> wq(32);
  for (size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<int8_t>(static_cast<int>(i % 15) - 7);
  std::vector<uint8_t> packed(16, 0);
  for (size_t i = 0; i < wq.size(); ++i) packed[i / 2] |= static_cast<uint8_t>((wq[i] & 0xF) << ((i % 2) * 4));
  auto w = g.AddConstant("w", DType::kSFixed4, Shape{4, 8}, StaticData::Copy(packed.data(), packed.size()));
  Encoding e;
  e.kind = EncodingKind::kPerBlock;
  e.dtype = DType::kSFixed4;
  e.symmetry = Symmetry::kSymmetric;
  e.axis = 0;
  e.block_sizes = {2, 1};
  for (int k = 0; k < 16; ++k) e.scales.push_back(0.01f * static_cast<float>(k + 1));  // grid [2, 8]
  e.offsets.assign(16, 0);
  REQUIRE(g.SetEncoding(w.value(), e).ok());
  REQUIRE(g.AddOp("MatMul", "mm", {x.value(), w.value()}, {"y"}).ok());
  REQUIRE(g.MarkOutput(*g.FindTensor("y")).ok());
  std::string bytes;
  Status st = ExportOnnx(g, {}, &bytes);
  INFO(st.message());
  REQUIRE(st.ok());
  onnx::ModelProto m = Parse(bytes);
  CheckWellFormed(m);
  CHECK(m.opset_import(0).version() == 21);
  const onnx::NodeProto* dq = FindNode(m, "DequantizeLinear");
  REQUIRE(dq);
  CHECK(FindAttr(*dq, "axis")->i() == 0);
  CHECK(FindAttr(*dq, "block_size")->i() == 2);
  const onnx::TensorProto* sc = FindInit(m, "w_scale");
  REQUIRE(sc);
  CHECK(std::vector<int64_t>(sc->dims().begin(), sc->dims().end()) == Ints{2, 8});
  CHECK(FindInit(m, "w_quantized")->data_type() == 22);  // INT4
  CHECK(FindInit(m, "w_quantized")->raw_data() == std::string(packed.begin(), packed.end()));

  // The same weight as LPBQ: per-block integer scales on a per-channel
  // (per-column) float scale; two DequantizeLinear nodes.
  Encoding l = e;
  l.kind = EncodingKind::kLpbq;
  l.scales = {0.001f, 0.002f, 0.003f, 0.004f, 0.005f, 0.006f, 0.007f, 0.008f};
  l.block_int_scales.clear();
  for (int k = 0; k < 16; ++k) l.block_int_scales.push_back(1 + k % 16);
  l.offsets.clear();
  l.bitwidth = 4;
  l.decompressed_bitwidth = 8;
  REQUIRE(g.SetEncoding(w.value(), l).ok());
  st = ExportOnnx(g, {}, &bytes);
  INFO(st.message());
  REQUIRE(st.ok());
  m = Parse(bytes);
  CheckWellFormed(m);
  REQUIRE(Count(m, "DequantizeLinear") == 2);
  const onnx::NodeProto& first = m.graph().node(0);
  CHECK(first.op_type() == "DequantizeLinear");
  CHECK(FindAttr(first, "axis")->i() == 1);  // the channel axis
  const onnx::TensorProto* ints = FindInit(m, first.input(0));
  REQUIRE(ints);
  CHECK(ints->data_type() == onnx::TensorProto::UINT8);
  CHECK(std::vector<int64_t>(ints->dims().begin(), ints->dims().end()) == Ints{2, 8});
  const onnx::NodeProto& second = m.graph().node(1);
  CHECK(second.input(1) == first.output(0));
  CHECK(FindAttr(second, "block_size")->i() == 2);

  // Blocks have no com.microsoft spelling.
  OnnxExportOptions o;
  o.qdq_ms_domain = true;
  Status s = ExportOnnx(g, o, &bytes);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK(s.message().find("'w'") != std::string::npos);
}

TEST_CASE("generated names never collide with the graph's own", "[export][onnx]") {
  Graph g("names");
  auto x = g.AddInput("x", DType::kFloat32, Shape{2, 3});
  // A tensor and an op already use the names the exporter would derive.
  auto c = g.AddConstant("r/shape", DType::kFloat32, Shape{6}, Floats({1, 2, 3, 4, 5, 6}));
  REQUIRE(g.AddOp("Reshape", "r", {x.value()}, {"flat"}, {{"shape", Ints{6}}}).ok());
  REQUIRE(g.AddOp("ElementWiseAdd", "r/Reshape", {*g.FindTensor("flat"), c.value()}, {"y"}).ok());
  REQUIRE(g.AddOp("Gelu", "gelu", {*g.FindTensor("y")}, {"gelu/half"}).ok());
  REQUIRE(g.MarkOutput(*g.FindTensor("gelu/half")).ok());
  CheckWellFormed(Export(g, 17));
}

using testing::DirEntries;
using testing::ReadFile;

TEST_CASE("the file export is atomic and names the path", "[export][onnx]") {
  char tmpl[] = "/tmp/qairt_export_XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string dir = tmpl;
  Graph g("cnn");
  testing::CppModelBuilder b(&g);
  testing::BuildSmallCnn(b);

  const std::string path = dir + "/model.onnx";
  REQUIRE(ExportOnnxFile(g, {}, path).ok());
  CHECK(DirEntries(dir) == std::vector<std::string>{"model.onnx"});
  std::string bytes;
  REQUIRE(ExportOnnx(g, {}, &bytes).ok());
  CHECK(ReadFile(path) == bytes);  // deterministic, and the file is complete
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0644) == 0644);

  // A failing export leaves the existing file untouched and no temporary.
  { std::ofstream(path, std::ios::trunc) << "previous contents"; }
  Graph bad("bad");
  auto x = bad.AddInput("x", DType::kFloat32, Shape{1, 4, 2, 2});
  REQUIRE(bad.AddOp("ChannelShuffle", "shuffle", {x.value()}, {"y"}, {{"num_groups", int64_t{2}}}).ok());
  REQUIRE(bad.MarkOutput(*bad.FindTensor("y")).ok());
  Status s = ExportOnnxFile(bad, {}, path);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find(path) != std::string::npos);
  CHECK(ReadFile(path) == "previous contents");
  CHECK(DirEntries(dir) == std::vector<std::string>{"model.onnx"});

  // Overwriting an existing file works.
  REQUIRE(ExportOnnxFile(g, {}, path).ok());
  CHECK(ReadFile(path) == bytes);

  // Missing folder, a folder as the target, an unwritable folder.
  s = ExportOnnxFile(g, {}, dir + "/missing/model.onnx");
  CHECK(s.code() == StatusCode::kIoError);
  CHECK(s.message().find(dir + "/missing/model.onnx") != std::string::npos);
  s = ExportOnnxFile(g, {}, dir);
  CHECK(s.code() == StatusCode::kIoError);
  CHECK(s.message().find(dir) != std::string::npos);
  CHECK(ExportOnnxFile(g, {}, "").code() == StatusCode::kInvalidArgument);
  if (geteuid() != 0) {  // root writes anywhere
    const std::string ro = dir + "/ro";
    REQUIRE(mkdir(ro.c_str(), 0555) == 0);
    s = ExportOnnxFile(g, {}, ro + "/model.onnx");
    CHECK(s.code() == StatusCode::kIoError);
    CHECK(DirEntries(ro).empty());
    rmdir(ro.c_str());
  }
  CHECK(DirEntries(dir) == std::vector<std::string>{"model.onnx"});
  unlink(path.c_str());
  rmdir(dir.c_str());
}

// ---------------------------------------------------------------------------
// C API
// ---------------------------------------------------------------------------

std::string StatusText(qairt_status_t* s) {
  std::string text = s ? qairt_status_message(s) : "";
  qairt_status_free(s);
  return text;
}

int32_t Collect(void* user, const void* data, size_t size) {
  static_cast<std::string*>(user)->append(static_cast<const char*>(data), size);
  return 0;
}
int32_t Refuse(void*, const void*, size_t) { return 5; }

TEST_CASE("C API: export to bytes, a callback and a file", "[export][onnx][capi]") {
  auto* g = new qairt_graph_t("cnn");
  testing::CppModelBuilder b(&g->graph);
  testing::BuildSmallCnn(b);

  qairt_onnx_export_options o;
  qairt_onnx_export_options_init(&o);
  CHECK(o.struct_size == sizeof o);
  CHECK(o.opset == QAIRT_ONNX_EXPORT_AUTO_OPSET);
  size_t size = 0;
  REQUIRE(qairt_export_onnx_bytes(g, &o, nullptr, 0, &size) == nullptr);
  std::string buf(size, '\0');
  size_t small = 0;
  qairt_status_t* s = qairt_export_onnx_bytes(g, &o, buf.data(), size - 1, &small);
  CHECK(qairt_status_code(s) == QAIRT_BUFFER_TOO_SMALL);
  qairt_status_free(s);
  REQUIRE(qairt_export_onnx_bytes(g, nullptr, buf.data(), buf.size(), &size) == nullptr);
  std::string expected;
  REQUIRE(ExportOnnx(g->graph, {}, &expected).ok());
  CHECK(buf == expected);

  std::string streamed;
  REQUIRE(qairt_export_onnx_write(g, &o, Collect, &streamed) == nullptr);
  CHECK(streamed == expected);
  s = qairt_export_onnx_write(g, &o, Refuse, nullptr);
  CHECK(qairt_status_code(s) == QAIRT_IO_ERROR);
  CHECK(StatusText(s).find("returned 5") != std::string::npos);

  // Options: producer and graph names, value_info, opset; bad values refused.
  o.producer_name = "my-tool";
  o.graph_name = "renamed";
  o.flags = QAIRT_EXPORT_VALUE_INFO;
  o.opset = 21;
  REQUIRE(qairt_export_onnx_bytes(g, &o, nullptr, 0, &size) == nullptr);
  buf.assign(size, '\0');
  REQUIRE(qairt_export_onnx_bytes(g, &o, buf.data(), buf.size(), &size) == nullptr);
  const onnx::ModelProto m = Parse(buf);
  CHECK(m.producer_name() == "my-tool");
  CHECK(m.graph().name() == "renamed");
  CHECK(m.opset_import(0).version() == 21);
  CHECK(m.graph().value_info_size() > 5);
  // Metadata props (since 1.4), in order; a NULL key is refused.
  const qairt_onnx_metadata_prop props[] = {{"qairt.act_bitwidth", "16"}, {"qairt.target", nullptr}};
  o.num_metadata_props = 2;
  o.metadata_props = props;
  REQUIRE(qairt_export_onnx_write(g, &o, Collect, &(buf = std::string())) == nullptr);
  const onnx::ModelProto mm = Parse(buf);
  REQUIRE(mm.metadata_props_size() == 2);
  CHECK(mm.metadata_props(0).key() == "qairt.act_bitwidth");
  CHECK(mm.metadata_props(0).value() == "16");
  CHECK(mm.metadata_props(1).value().empty());
  const qairt_onnx_metadata_prop bad_prop[] = {{nullptr, "x"}};
  o.metadata_props = bad_prop;
  o.num_metadata_props = 1;
  CHECK(StatusText(qairt_export_onnx_bytes(g, &o, nullptr, 0, &size)).find("metadata_props[0].key") !=
        std::string::npos);
  o.metadata_props = nullptr;
  CHECK(StatusText(qairt_export_onnx_bytes(g, &o, nullptr, 0, &size)).find("metadata_props is NULL") !=
        std::string::npos);
  o.num_metadata_props = 0;
  // A 1.3 caller's struct (without the metadata fields) still works.
  o.struct_size = offsetof(qairt_onnx_export_options, num_metadata_props);
  o.num_metadata_props = 99;  // beyond its struct_size: never read
  CHECK(qairt_export_onnx_bytes(g, &o, nullptr, 0, &size) == nullptr);
  o.struct_size = sizeof o;
  o.num_metadata_props = 0;
  o.flags = 0x80;
  CHECK(StatusText(qairt_export_onnx_bytes(g, &o, nullptr, 0, &size)).find("flags") != std::string::npos);
  o.flags = 0;
  o.opset = 5;
  CHECK(StatusText(qairt_export_onnx_bytes(g, &o, nullptr, 0, &size)).find("opset 5") != std::string::npos);
  o.opset = 17;
  o.struct_size = 8;
  CHECK(StatusText(qairt_export_onnx_bytes(g, &o, nullptr, 0, &size)).find("struct_size") != std::string::npos);

  CHECK(StatusText(qairt_export_onnx_bytes(nullptr, nullptr, nullptr, 0, &size)).find("NULL") != std::string::npos);
  CHECK(StatusText(qairt_export_onnx_file(g, nullptr, nullptr)).find("NULL") != std::string::npos);
  CHECK(StatusText(qairt_export_onnx_write(g, nullptr, nullptr, nullptr)).find("NULL") != std::string::npos);
  s = qairt_export_onnx_file(g, "/nonexistent-dir/x.onnx", nullptr);
  CHECK(qairt_status_code(s) == QAIRT_IO_ERROR);
  CHECK(StatusText(s).find("/nonexistent-dir/x.onnx") != std::string::npos);

  // Import -> export through the C API only.
  qairt_graph_t* back = nullptr;
  REQUIRE(qairt_import_onnx_bytes(expected.data(), expected.size(), nullptr, &back, nullptr) == nullptr);
  CHECK(qairt_graph_op_count(back) == qairt_graph_op_count(g));
  qairt_graph_destroy(back);
  qairt_graph_destroy(g);
}

}  // namespace
}  // namespace qairt
