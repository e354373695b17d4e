// Import-time constant folding runs the reference executor: for each op kind,
// the constant the importer folds equals what the executor computes for the
// same node fed the same values as graph inputs, byte for byte. Also the
// size limit, and the lowerings that depend on folding (data-dependent Clip,
// 1-D pooling, int64 narrowing).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "exec/executor.h"
#include "onnx/onnx_import.h"
#include "onnx_model_builder.h"

namespace qairt {
namespace {

using testing::OnnxModelBuilder;
using P = onnx::TensorProto;

struct ConstInput {
  std::string name;
  int32_t elem;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

template <typename T>
ConstInput In(std::string name, int32_t elem, std::vector<int64_t> dims, std::vector<T> v) {
  ConstInput c{std::move(name), elem, std::move(dims), {}};
  c.bytes.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(c.bytes.data(), v.data(), c.bytes.size());
  return c;
}

struct FoldCase {
  std::string op;
  std::vector<ConstInput> inputs;
  std::function<void(onnx::NodeProto*)> attrs;
  std::vector<int64_t> out_dims;
  // Inputs past this many stay initializers in the executor reference too
  // (QNN-style parameters: Slice's starts, Expand's shape).
  size_t data_inputs = 8;
};

Result<Graph> Import(const OnnxModelBuilder& b, ImportReport* report, ImportOptions o = {}) {
  const std::string bytes = b.Bytes();
  return ImportOnnxBytes(bytes.data(), bytes.size(), "", o, report);
}

// The node's output as float32 values, computed by the executor from graph
// inputs (nothing constant to fold).
std::vector<float> ExecutorReference(const FoldCase& c) {
  OnnxModelBuilder b(17);
  std::vector<std::string> names;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const auto& in = c.inputs[k];
    if (k < c.data_inputs)
      b.Input(in.name, in.elem, in.dims);
    else
      b.Initializer(in.name, in.elem, in.dims, in.bytes.data(), in.bytes.size());
    names.push_back(in.name);
  }
  auto* n = b.Node(c.op, names, {"y"}, "node");
  if (c.attrs) c.attrs(n);
  auto* cast = b.Node("Cast", {"y"}, {"yf"}, "to_float");
  OnnxModelBuilder::IntAttr(cast, "to", P::FLOAT);
  b.Output("yf", P::FLOAT, c.out_dims);
  ImportReport report;
  auto g = Import(b, &report);
  INFO(c.op << ": " << (g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  auto ex = exec::Executor::Create(g.value());
  REQUIRE(ex.ok());
  std::vector<const void*> p;
  std::vector<size_t> n_bytes;
  for (size_t k = 0; k < c.inputs.size() && k < c.data_inputs; ++k) {
    p.push_back(c.inputs[k].bytes.data());
    n_bytes.push_back(c.inputs[k].bytes.size());
  }
  auto out = ex.value()->Run(p, n_bytes);
  INFO(c.op << ": " << (out.ok() ? "" : out.status().message()));
  REQUIRE(out.ok());
  std::vector<float> v(out.value()[0].bytes.size() / 4);
  std::memcpy(v.data(), out.value()[0].bytes.data(), v.size() * 4);
  return v;
}

// The same node over initializers, added to a graph input: the importer must
// fold the node (and the Cast) so the graph holds one ElementWiseAdd whose
// constant operand is the folded value.
std::vector<float> Folded(const FoldCase& c, size_t* ops) {
  OnnxModelBuilder b(17);
  std::vector<std::string> names;
  for (const auto& in : c.inputs) {
    b.Initializer(in.name, in.elem, in.dims, in.bytes.data(), in.bytes.size());
    names.push_back(in.name);
  }
  auto* n = b.Node(c.op, names, {"y"}, "node");
  if (c.attrs) c.attrs(n);
  auto* cast = b.Node("Cast", {"y"}, {"yf"}, "to_float");
  OnnxModelBuilder::IntAttr(cast, "to", P::FLOAT);
  b.Input("x", P::FLOAT, c.out_dims);
  b.Node("Add", {"x", "yf"}, {"z"}, "add");
  b.Output("z", P::FLOAT, c.out_dims);
  ImportReport report;
  auto g = Import(b, &report);
  INFO(c.op << ": " << (g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  *ops = g.value().op_count();
  const Op& add = g.value().op(0);
  const Tensor& k = g.value().tensor(add.inputs[1]);
  REQUIRE(k.kind == TensorKind::kStatic);
  REQUIRE(k.dtype == DType::kFloat32);
  std::vector<float> v(k.data->size() / 4);
  std::memcpy(v.data(), k.data->data(), v.size() * 4);
  return v;
}

auto Attr(const char* name, int64_t v) {
  return [=](onnx::NodeProto* n) { OnnxModelBuilder::IntAttr(n, name, v); };
}

TEST_CASE("constant folding runs the executor's kernels, bit for bit", "[import][fold]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<FoldCase> cases = {
      {"Add", {In<int64_t>("a", P::INT64, {3}, {1, -2, 3}), In<int64_t>("b", P::INT64, {1}, {10})}, nullptr, {3}},
      // Integer division truncates toward zero (ONNX, numpy's C semantics).
      {"Div", {In<int64_t>("a", P::INT64, {4}, {-7, 7, -8, 9}), In<int64_t>("b", P::INT64, {4}, {2, -2, 3, 4})},
       nullptr, {4}},
      {"Mul", {In<float>("a", P::FLOAT, {2, 2}, {1.5f, -2, 3, 0.25f}), In<float>("b", P::FLOAT, {2}, {3, -1})}, nullptr,
       {2, 2}},
      {"Pow", {In<float>("a", P::FLOAT, {3}, {2, 3, 0.5f}), In<float>("b", P::FLOAT, {}, {3})}, nullptr, {3}},
      {"Equal", {In<int64_t>("a", P::INT64, {3}, {1, 2, 3}), In<int64_t>("b", P::INT64, {3}, {1, 0, 3})}, nullptr, {3}},
      {"Where",
       {In<uint8_t>("c", P::BOOL, {3}, {1, 0, 1}), In<float>("a", P::FLOAT, {3}, {1, 2, 3}),
        In<float>("b", P::FLOAT, {1}, {-1})},
       nullptr, {3}},
      {"Gather", {In<float>("d", P::FLOAT, {3, 2}, {0, 1, 2, 3, 4, 5}), In<int64_t>("i", P::INT64, {2}, {2, -3})},
       Attr("axis", 0), {2, 2}},
      {"Concat", {In<int64_t>("a", P::INT64, {2}, {1, 2}), In<int64_t>("b", P::INT64, {1}, {7})}, Attr("axis", 0), {3}},
      {"Slice",
       {In<float>("d", P::FLOAT, {5}, {0, 1, 2, 3, 4}), In<int64_t>("s", P::INT64, {1}, {1}),
        In<int64_t>("e", P::INT64, {1}, {std::numeric_limits<int64_t>::max()})},
       nullptr, {4}, 1},
      {"Expand", {In<float>("d", P::FLOAT, {1, 2}, {1, 2}), In<int64_t>("s", P::INT64, {2}, {3, 1})}, nullptr, {3, 2}, 1},
      {"Tile", {In<float>("d", P::FLOAT, {2}, {1, 2}), In<int64_t>("r", P::INT64, {1}, {3})}, nullptr, {6}, 1},
      {"Transpose", {In<float>("d", P::FLOAT, {2, 3}, {0, 1, 2, 3, 4, 5})},
       [](onnx::NodeProto* n) { OnnxModelBuilder::IntsAttr(n, "perm", {1, 0}); }, {3, 2}},
      {"ReduceSum", {In<float>("d", P::FLOAT, {2, 3}, {0, 1, 2, 3, 4, 5}), In<int64_t>("ax", P::INT64, {1}, {1})},
       nullptr, {2, 1}, 1},
      // Ops only the executor knows: the old folder had no table for them.
      {"Erf", {In<float>("d", P::FLOAT, {4}, {-1, 0, 0.5f, 2})}, nullptr, {4}},
      {"Sin", {In<float>("d", P::FLOAT, {3}, {0, 1, -2})}, nullptr, {3}},
      {"Softplus", {In<float>("d", P::FLOAT, {3}, {-3, 0, 3})}, nullptr, {3}},
      // Float to integer casts of values int32 cannot hold, inf and NaN: the
      // executor's defined conversion, not undefined behaviour in a folder.
      {"Cast", {In<float>("d", P::FLOAT, {6}, {inf, -inf, nan, 3e9f, -3e9f, -1.5f})}, Attr("to", P::INT32), {6}},
      {"Cast", {In<float>("d", P::FLOAT, {4}, {inf, nan, -3e9f, -1.5f})}, Attr("to", P::UINT8), {4}},
      {"Cast", {In<float>("d", P::FLOAT, {3}, {inf, -inf, nan})}, Attr("to", P::INT64), {3}},
  };
  for (const FoldCase& c : cases) {
    INFO("op " << c.op);
    size_t ops = 0;
    const std::vector<float> folded = Folded(c, &ops);
    CHECK(ops == 1);  // only the Add is left
    const std::vector<float> reference = ExecutorReference(c);
    REQUIRE(folded.size() == reference.size());
    CHECK(std::memcmp(folded.data(), reference.data(), folded.size() * 4) == 0);
  }
}

TEST_CASE("Split with constant input folds into one constant per output", "[import][fold]") {
  OnnxModelBuilder b(17);
  std::vector<float> d = {0, 1, 2, 3, 4, 5};
  b.Init<float>("d", P::FLOAT, {6}, d);
  b.Init<int64_t>("sizes", P::INT64, {2}, {2, 4});
  b.Node("Split", {"d", "sizes"}, {"p", "q"}, "split");
  b.Input("x", P::FLOAT, {4});
  b.Node("Add", {"x", "q"}, {"z"}, "add");
  b.Output("z", P::FLOAT, {4});
  ImportReport report;
  auto g = Import(b, &report);
  REQUIRE(g.ok());
  REQUIRE(g.value().op_count() == 1);
  const Tensor& q = g.value().tensor(g.value().op(0).inputs[1]);
  REQUIRE(q.kind == TensorKind::kStatic);
  std::vector<float> v(4);
  std::memcpy(v.data(), q.data->data(), 16);
  CHECK(v == std::vector<float>{2, 3, 4, 5});
  // The folded op left no tensor or name behind: the only other tensors are x and z.
  CHECK(g.value().tensor_count() == 3);
}

TEST_CASE("folding keeps the names a graph without the folded ops would have", "[import][fold]") {
  // w is read by a foldable Transpose and by a MatMul: the MatMul's weight
  // keeps the name 'w', although the fold materialised it first.
  OnnxModelBuilder b(17);
  b.Init<float>("w", P::FLOAT, {2, 2}, {1, 2, 3, 4});
  auto* t = b.Node("Transpose", {"w"}, {"wt"}, "t");
  OnnxModelBuilder::IntsAttr(t, "perm", {1, 0});
  b.Input("x", P::FLOAT, {1, 2});
  b.Node("MatMul", {"x", "w"}, {"y"}, "mm");
  b.Node("MatMul", {"y", "wt"}, {"z"}, "mm2");
  b.Output("z", P::FLOAT, {1, 2});
  ImportReport report;
  auto g = Import(b, &report);
  REQUIRE(g.ok());
  CHECK(g.value().FindTensor("w").has_value());
  CHECK(!g.value().FindTensor("w__1").has_value());
  CHECK(report.constants_folded == 1);
}

TEST_CASE("folded results have a size limit; a constant too large names the node", "[import][fold]") {
  OnnxModelBuilder b(17);
  b.Init<int64_t>("shape", P::INT64, {2}, {int64_t{1} << 20, int64_t{1} << 20});
  b.Node("ConstantOfShape", {"shape"}, {"big"}, "huge_fill");
  b.Input("x", P::FLOAT, {1});
  b.Node("Add", {"x", "big"}, {"z"}, "add");
  b.Output("z", P::FLOAT, {int64_t{1} << 20, int64_t{1} << 20});
  ImportReport report;
  auto g = Import(b, &report);
  REQUIRE(!g.ok());
  CHECK(g.status().message().find("huge_fill") != std::string::npos);
  CHECK(g.status().message().find("limited") != std::string::npos);
}

TEST_CASE("an Expand of a constant beyond the fold limit stays an op", "[import][fold]") {
  OnnxModelBuilder b(17);
  b.Init<int64_t>("one", P::INT64, {1}, {1});
  b.Init<int64_t>("shape", P::INT64, {2}, {int64_t{1} << 14, int64_t{1} << 14});  // 2 GiB of int64
  b.Node("Expand", {"one", "shape"}, {"big"}, "expand");
  b.Output("big", P::INT64, {int64_t{1} << 14, int64_t{1} << 14});
  ImportReport report;
  auto g = Import(b, &report);
  INFO((g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  REQUIRE(g.value().op_count() == 1);
  CHECK(g.value().op(0).source_op_type == "Expand");
  CHECK(report.constants_folded == 0);
}

TEST_CASE("Clip with bounds computed from the data", "[import][lower]") {
  // The melspectrogram front-end pattern: clip(x, max(x) - 80, +inf).
  OnnxModelBuilder b(17);
  b.Input("x", P::FLOAT, {1, 4});
  b.Init<float>("range", P::FLOAT, {}, {80.0f});
  auto* rm = b.Node("ReduceMax", {"x"}, {"m"}, "max");
  OnnxModelBuilder::IntAttr(rm, "keepdims", 0);
  b.Node("Sub", {"m", "range"}, {"lo"}, "lo");
  // The exporter spells "no upper bound" as a +inf constant.
  b.Init<float>("inf", P::FLOAT, {}, {std::numeric_limits<float>::infinity()});
  b.Node("Clip", {"x", "lo", "inf"}, {"y"}, "clip");
  b.Output("y", P::FLOAT, {1, 4});
  ImportReport report;
  auto g = Import(b, &report);
  INFO((g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  auto ex = exec::Executor::Create(g.value());
  REQUIRE(ex.ok());
  // The infinite bound is dropped, not kept as a constant calibration refuses.
  for (TensorId t = 0; t < g.value().tensor_count(); ++t) {
    const Tensor& k = g.value().tensor(t);
    if (k.kind != TensorKind::kStatic || k.dtype != DType::kFloat32) continue;
    for (size_t i = 0; i < k.data->size() / 4; ++i) {
      float v;
      std::memcpy(&v, k.data->data() + 4 * i, 4);
      CHECK(std::isfinite(v));
    }
  }
  std::vector<float> x = {10, -100, -65, 5};
  auto out = ex.value()->Run({x.data()}, {16});
  REQUIRE(out.ok());
  std::vector<float> y(4);
  std::memcpy(y.data(), out.value()[0].bytes.data(), 16);
  CHECK(y == std::vector<float>{10, -70, -65, 5});
}

TEST_CASE("1-D pooling runs as 2-D pooling over [N, C, 1, L]", "[import][lower]") {
  OnnxModelBuilder b(17);
  b.Input("x", P::FLOAT, {1, 2, 5});
  auto* p = b.Node("MaxPool", {"x"}, {"y"}, "pool");
  OnnxModelBuilder::IntsAttr(p, "kernel_shape", {3});
  OnnxModelBuilder::IntsAttr(p, "strides", {2});
  OnnxModelBuilder::IntsAttr(p, "pads", {1, 1});
  b.Node("GlobalAveragePool", {"x"}, {"g"}, "gap");
  b.Output("y", P::FLOAT, {1, 2, 3});
  b.Output("g", P::FLOAT, {1, 2, 1});
  ImportReport report;
  auto g = Import(b, &report);
  INFO((g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  auto ex = exec::Executor::Create(g.value());
  REQUIRE(ex.ok());
  std::vector<float> x = {1, 5, 2, 0, 3, -1, -2, -3, -4, -5};
  auto out = ex.value()->Run({x.data()}, {40});
  REQUIRE(out.ok());
  std::vector<float> y(6), gap(2);
  std::memcpy(y.data(), out.value()[0].bytes.data(), 24);
  std::memcpy(gap.data(), out.value()[1].bytes.data(), 8);
  CHECK(y == std::vector<float>{5, 5, 3, -1, -2, -4});
  CHECK(out.value()[0].dims == std::vector<int64_t>{1, 2, 3});
  CHECK(gap[0] == Approx(11.0 / 5));
  CHECK(gap[1] == Approx(-15.0 / 5));
}

TEST_CASE("int64 inputs and index constants narrow to int32 when asked", "[import][int64]") {
  OnnxModelBuilder b(17);
  b.Input("ids", P::INT64, {1, 3});
  b.Init<float>("emb", P::FLOAT, {4, 2}, {0, 1, 10, 11, 20, 21, 30, 31});
  b.Init<int64_t>("one", P::INT64, {}, {1});
  b.Node("Add", {"ids", "one"}, {"ids1"}, "shift");
  auto* g = b.Node("Gather", {"emb", "ids1"}, {"e"}, "embed");
  OnnxModelBuilder::IntAttr(g, "axis", 0);
  b.Output("e", P::FLOAT, {1, 3, 2});
  ImportOptions o;
  o.int64_to_int32 = true;
  ImportReport report;
  auto graph = Import(b, &report, o);
  INFO((graph.ok() ? "" : graph.status().message()));
  REQUIRE(graph.ok());
  const Graph& gr = graph.value();
  CHECK(gr.tensor(gr.inputs()[0]).dtype == DType::kInt32);
  for (OpId id = 0; id < gr.op_count(); ++id)
    for (TensorId t : gr.op(id).inputs)
      if (t != kInvalidId) CHECK(gr.tensor(t).dtype != DType::kInt64);
  auto ex = exec::Executor::Create(gr);
  REQUIRE(ex.ok());
  std::vector<int32_t> ids = {2, 0, 1};
  auto out = ex.value()->Run({ids.data()}, {12});
  REQUIRE(out.ok());
  std::vector<float> e(6);
  std::memcpy(e.data(), out.value()[0].bytes.data(), 24);
  CHECK(e == std::vector<float>{30, 31, 10, 11, 20, 21});

  // Without the option the model's dtype stays.
  auto kept = Import(b, &report);
  REQUIRE(kept.ok());
  CHECK(kept.value().tensor(kept.value().inputs()[0]).dtype == DType::kInt64);
}

}  // namespace
}  // namespace qairt

namespace qairt {
namespace {

// An If branch attribute: nodes (op, input 0, input 1 or "", output) in the
// order given, and the branch output.
void AddBranch(onnx::NodeProto* n, const char* attr, const std::vector<std::array<std::string, 4>>& nodes,
               const std::string& out) {
  auto* a = n->add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* g = a->mutable_g();
  g->set_name(attr);
  for (const auto& [op, in0, in1, o] : nodes) {
    auto* node = g->add_node();
    node->set_op_type(op);
    node->set_name(o + "_op");
    node->add_input(in0);
    if (!in1.empty()) node->add_input(in1);
    node->add_output(o);
  }
  g->add_output()->set_name(out);
}

TEST_CASE("If with a condition computed from the data selects between both branches", "[import][lower]") {
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {1, 3});
  b.Init<float>("zero", P::FLOAT, {}, {0.0f});
  b.Init<float>("two", P::FLOAT, {}, {2.0f});
  auto* rs = b.Node("ReduceSum", {"x"}, {"s"}, "sum");
  OnnxModelBuilder::IntAttr(rs, "keepdims", 0);
  b.Node("Greater", {"s", "zero"}, {"c"}, "positive");
  auto* n = b.Node("If", {"c"}, {"y"}, "branch");
  AddBranch(n, "then_branch", {{"Mul", "x", "two", "doubled"}}, "doubled");
  AddBranch(n, "else_branch", {{"Neg", "x", "", "negated"}}, "negated");
  b.Output("y", P::FLOAT, {1, 3});
  ImportReport report;
  auto g = Import(b, &report);
  INFO((g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  bool warned = false;
  for (const auto& d : report.diagnostics) warned = warned || d.message.find("both branches") != std::string::npos;
  CHECK(warned);
  auto ex = exec::Executor::Create(g.value());
  REQUIRE(ex.ok());
  for (const auto& [x, want] : std::vector<std::pair<std::vector<float>, std::vector<float>>>{
           {{1, 2, -1}, {2, 4, -2}}, {{-1, -2, 1}, {1, 2, -1}}}) {
    auto out = ex.value()->Run({x.data()}, {12});
    REQUIRE(out.ok());
    std::vector<float> y(3);
    std::memcpy(y.data(), out.value()[0].bytes.data(), 12);
    CHECK(y == want);
  }
}

}  // namespace
}  // namespace qairt

namespace qairt {
namespace {

// Exporters do not always write a branch's nodes in order (torch 1.12's
// silero VAD puts consumers first): branches are lowered in dependency order.
TEST_CASE("If branches whose nodes are written consumers first import in dependency order", "[import][fold]") {
  for (const bool constant_condition : {true, false}) {
    INFO((constant_condition ? "constant condition" : "condition from the data"));
    OnnxModelBuilder b(13);
    b.Input("x", P::FLOAT, {1, 3});
    b.Init<float>("two", P::FLOAT, {1}, {2.0f});
    if (constant_condition) {
      b.Init<uint8_t>("c", P::BOOL, {}, {1});
    } else {
      b.Init<float>("zero", P::FLOAT, {}, {0.0f});
      auto* rs = b.Node("ReduceSum", {"x"}, {"s"}, "sum");
      OnnxModelBuilder::IntAttr(rs, "keepdims", 0);
      b.Node("Greater", {"s", "zero"}, {"c"}, "positive");
    }
    auto* n = b.Node("If", {"c"}, {"y"}, "branch");
    // then: relu(x * 2) - x, written last op first; else: -x.
    AddBranch(n, "then_branch", {{"Sub", "r", "x", "t_out"}, {"Relu", "m", "", "r"}, {"Mul", "x", "two", "m"}}, "t_out");
    AddBranch(n, "else_branch", {{"Neg", "x", "", "e_out"}}, "e_out");
    b.Output("y", P::FLOAT, {1, 3});
    ImportReport report;
    auto g = Import(b, &report);
    INFO((g.ok() ? "" : g.status().message()));
    REQUIRE(g.ok());
    auto ex = exec::Executor::Create(g.value());
    REQUIRE(ex.ok());
    const std::vector<float> x = {1, 2, -1};
    auto out = ex.value()->Run({x.data()}, {12});
    REQUIRE(out.ok());
    std::vector<float> y(3);
    std::memcpy(y.data(), out.value()[0].bytes.data(), 12);
    CHECK(y == std::vector<float>{1, 2, 1});  // sum 2 > 0: the then branch
  }
  // A name neither the branch nor the graph defines is still named.
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {1, 3});
  b.Init<uint8_t>("c", P::BOOL, {}, {1});
  auto* n = b.Node("If", {"c"}, {"y"}, "branch");
  for (const char* attr : {"then_branch", "else_branch"}) AddBranch(n, attr, {{"Relu", "nowhere", "", "o"}}, "o");
  b.Output("y", P::FLOAT, {1, 3});
  ImportReport report;
  auto g = Import(b, &report);
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(g.status().message(), Catch::Contains("reads 'nowhere', which neither the branch nor the graph around it"));
}

TEST_CASE("a Conv over constants that absorbs its BatchNormalization is not folded away from under it", "[import][fold]") {
  // x is a constant: the Conv has only constant inputs, and its lowering also
  // takes the BatchNormalization after it.
  OnnxModelBuilder b(13);
  b.Init<float>("x", P::FLOAT, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  b.Init<float>("w", P::FLOAT, {1, 1, 1, 1}, {2.0f});
  b.Init<float>("scale", P::FLOAT, {1}, {1.0f});
  b.Init<float>("bias", P::FLOAT, {1}, {0.5f});
  b.Init<float>("mean", P::FLOAT, {1}, {0.0f});
  b.Init<float>("var", P::FLOAT, {1}, {1.0f});
  b.Node("Conv", {"x", "w"}, {"c"}, "conv");
  b.Node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"}, "bn");
  b.Input("y", P::FLOAT, {1, 1, 3, 3});
  b.Node("Add", {"y", "bn"}, {"z"}, "add");
  b.Output("z", P::FLOAT, {1, 1, 3, 3});
  ImportReport report;
  auto g = Import(b, &report);
  INFO((g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  CHECK(g.value().Validate().empty());
  auto ex = exec::Executor::Create(g.value());
  REQUIRE(ex.ok());
  std::vector<float> y(9, 1.0f);
  auto out = ex.value()->Run({y.data()}, {36});
  REQUIRE(out.ok());
  std::vector<float> z(9);
  std::memcpy(z.data(), out.value()[0].bytes.data(), 36);
  for (size_t i = 0; i < 9; ++i) CHECK(z[i] == Approx(1.0f + 2.0f * static_cast<float>(i + 1) + 0.5f).epsilon(1e-4));
}

}  // namespace
}  // namespace qairt
