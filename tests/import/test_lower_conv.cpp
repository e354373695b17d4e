// ONNX Conv/ConvTranspose/BatchNormalization lowering: auto_pad resolved as
// the ONNX spec splits the padding, and BatchNormalization folded into the
// convolution's weights (or lowered to Batchnorm) with the importer's
// rounding, for grouped transposed convolutions too.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "exec/executor.h"
#include "onnx/onnx_import.h"
#include "onnx_model_builder.h"

namespace qairt {
namespace {

using testing::OnnxModelBuilder;
using P = onnx::TensorProto;
using Ints = std::vector<int64_t>;

void StringAttr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void FloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

std::vector<float> Ramp(size_t n, float step, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * step + phase);
  return v;
}

size_t Count(const Ints& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

Graph Import(const OnnxModelBuilder& b, ImportOptions o = {}) {
  const std::string bytes = b.Bytes();
  ImportReport report;
  auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", o, &report);
  INFO((g.ok() ? std::string() : g.status().message()));
  REQUIRE(g.ok());
  REQUIRE(g.value().Validate().empty());
  return std::move(g).value();
}

std::vector<float> RunGraph(const Graph& g, const std::vector<float>& x) {
  auto ex = exec::Executor::Create(g);
  INFO((ex.ok() ? std::string() : ex.status().message()));
  REQUIRE(ex.ok());
  auto out = ex.value()->Run({x.data()}, {x.size() * sizeof(float)});
  INFO((out.ok() ? std::string() : out.status().message()));
  REQUIRE(out.ok());
  std::vector<float> y(out.value()[0].bytes.size() / sizeof(float));
  std::memcpy(y.data(), out.value()[0].bytes.data(), out.value()[0].bytes.size());
  return y;
}

std::vector<float> ConstantValues(const Graph& g, TensorId t) {
  const Tensor& k = g.tensor(t);
  REQUIRE(k.kind == TensorKind::kStatic);
  REQUIRE(k.dtype == DType::kFloat32);
  std::vector<float> v(k.data->size() / sizeof(float));
  std::memcpy(v.data(), k.data->data(), k.data->size());
  return v;
}

const Op& OnlyOpOfType(const Graph& g, const std::string& type) {
  const Op* found = nullptr;
  for (OpId i = 0; i < g.op_count(); ++i)
    if (g.op(i).type == type) {
      REQUIRE(found == nullptr);
      found = &g.op(i);
    }
  REQUIRE(found != nullptr);
  return *found;
}

// x -> `op` (weights w) -> y, with `attrs` set on the node.
OnnxModelBuilder ConvModel(const std::string& op, const Ints& x_dims, const Ints& w_dims, const Ints& y_dims,
                           const std::function<void(onnx::NodeProto*)>& attrs) {
  OnnxModelBuilder b(17);
  b.Input("x", P::FLOAT, x_dims);
  b.Init<float>("w", P::FLOAT, w_dims, Ramp(Count(w_dims), 0.37f, 0.1f));
  attrs(b.Node(op, {"x", "w"}, {"y"}, "conv"));
  b.Output("y", P::FLOAT, y_dims);
  return b;
}

TEST_CASE("Conv auto_pad lowers to the explicit pads the ONNX spec derives", "[import][lower][auto_pad]") {
  // H: in 7, kernel 4, stride 2: total padding 3. W: in 6, kernel 2, dilation 3: total 3.
  const Ints x = {1, 2, 7, 6}, w = {3, 2, 4, 2};
  for (const auto& [mode_name, pads] : std::vector<std::pair<std::string, Ints>>{
           {"SAME_UPPER", {1, 1, 2, 2}}, {"SAME_LOWER", {2, 2, 1, 1}}, {"VALID", {0, 0, 0, 0}}}) {
    const std::string mode = mode_name;  // a lambda cannot capture a structured binding (C++17 clang)
    INFO("auto_pad=" << mode);
    const Ints y = mode == "VALID" ? Ints{1, 3, 2, 3} : Ints{1, 3, 4, 6};
    Graph g = Import(ConvModel("Conv", x, w, y, [&](onnx::NodeProto* n) {
      StringAttr(n, "auto_pad", mode);
      OnnxModelBuilder::IntsAttr(n, "strides", {2, 1});
      OnnxModelBuilder::IntsAttr(n, "dilations", {1, 3});
    }));
    const Op& conv = OnlyOpOfType(g, "Conv2d");
    CHECK(std::get<Ints>(conv.attrs.at("pads")) == pads);
    CHECK(conv.attrs.count("auto_pad") == 0);
  }
}

TEST_CASE("ConvTranspose with output_shape splits the padding as its auto_pad says", "[import][lower][auto_pad]") {
  // in 3, kernel 3, stride 2, output 6: total padding 1. SAME_UPPER puts it
  // at the end, NOTSET and SAME_LOWER at the start (ONNX ConvTranspose).
  const Ints x = {1, 2, 3, 3}, w = {2, 3, 3, 3}, y = {1, 3, 6, 6};
  const std::vector<float> xv = Ramp(Count(x), 0.61f, 0.3f);
  auto explicit_pads = [&](const Ints& pads) {
    return RunGraph(Import(ConvModel("ConvTranspose", x, w, y, [&](onnx::NodeProto* n) {
                      OnnxModelBuilder::IntsAttr(n, "strides", {2, 2});
                      OnnxModelBuilder::IntsAttr(n, "pads", pads);
                    })),
                    xv);
  };
  const std::vector<float> at_end = explicit_pads({0, 0, 1, 1}), at_start = explicit_pads({1, 1, 0, 0});
  REQUIRE(at_end != at_start);
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "NOTSET"}) {
    INFO("auto_pad=" << mode);
    Graph g = Import(ConvModel("ConvTranspose", x, w, y, [&](onnx::NodeProto* n) {
      StringAttr(n, "auto_pad", mode);
      OnnxModelBuilder::IntsAttr(n, "strides", {2, 2});
      OnnxModelBuilder::IntsAttr(n, "output_shape", {6, 6});
    }));
    CHECK(RunGraph(g, xv) == (std::string(mode) == "SAME_UPPER" ? at_end : at_start));
  }
}

// x -> `op` (weights w, bias b) -> BatchNormalization -> y.
OnnxModelBuilder ConvBatchNormModel(const std::string& op, const Ints& x_dims, const Ints& w_dims, int64_t channels,
                                    const Ints& y_dims, int64_t group, bool with_bias) {
  OnnxModelBuilder b(17);
  b.Input("x", P::FLOAT, x_dims);
  b.Init<float>("w", P::FLOAT, w_dims, Ramp(Count(w_dims), 0.37f, 0.1f));
  std::vector<std::string> inputs = {"x", "w"};
  if (with_bias) {
    b.Init<float>("b", P::FLOAT, {channels}, Ramp(static_cast<size_t>(channels), 0.9f, 0.2f));
    inputs.push_back("b");
  }
  auto* conv = b.Node(op, inputs, {"c"}, "conv");
  if (group != 1) OnnxModelBuilder::IntAttr(conv, "group", group);
  std::vector<float> gamma(static_cast<size_t>(channels)), beta = gamma, mean = gamma, var = gamma;
  for (size_t c = 0; c < gamma.size(); ++c) {
    gamma[c] = 0.5f + 0.75f * static_cast<float>(c);
    beta[c] = 0.125f * static_cast<float>(c) - 0.3f;
    mean[c] = 0.2f * static_cast<float>(c) - 0.1f;
    var[c] = 0.3f + 0.4f * static_cast<float>(c);
  }
  b.Init<float>("gamma", P::FLOAT, {channels}, gamma);
  b.Init<float>("beta", P::FLOAT, {channels}, beta);
  b.Init<float>("mean", P::FLOAT, {channels}, mean);
  b.Init<float>("var", P::FLOAT, {channels}, var);
  FloatAttr(b.Node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"}, "bn"), "epsilon", 1e-3f);
  b.Output("y", P::FLOAT, y_dims);
  return b;
}

TEST_CASE("BatchNormalization folds into a grouped ConvTranspose per output channel", "[import][lower][batchnorm]") {
  // Weights [C_in 4, C_out/group 3, 2, 2] with group 2: input channels 0-1
  // feed output channels 0-2, input channels 2-3 output channels 3-5.
  const Ints x = {1, 4, 3, 3}, w = {4, 3, 2, 2}, y = {1, 6, 4, 4};
  const std::vector<float> xv = Ramp(Count(x), 0.61f, 0.3f);
  for (bool with_bias : {false, true}) {
    INFO("bias " << with_bias);
    const OnnxModelBuilder b = ConvBatchNormModel("ConvTranspose", x, w, 6, y, 2, with_bias);
    ImportOptions unfolded;
    unfolded.fold_batchnorm = false;
    Graph folded_graph = Import(b);
    OnlyOpOfType(folded_graph, "TransposeConv2d");
    CHECK(folded_graph.op_count() == 1);
    const std::vector<float> folded = RunGraph(folded_graph, xv), reference = RunGraph(Import(b, unfolded), xv);
    REQUIRE(folded.size() == reference.size());
    for (size_t i = 0; i < folded.size(); ++i) {
      INFO("element " << i);
      CHECK(folded[i] == Approx(reference[i]).epsilon(1e-5).margin(1e-6));
    }
  }
}

TEST_CASE("BatchNormalization folding rounds as the importer always has", "[import][lower][batchnorm]") {
  // gamma / sqrt(var + eps) in double; weights scaled by it rounded to
  // float; the bias (b - mean) * scale + beta in double from a float b - mean.
  const Ints x = {1, 2, 5, 5}, w = {3, 2, 3, 3}, y = {1, 3, 3, 3};
  const std::vector<float> wv = Ramp(Count(w), 0.37f, 0.1f), bv = Ramp(3, 0.9f, 0.2f);
  for (bool with_bias : {false, true}) {
    INFO("bias " << with_bias);
    Graph g = Import(ConvBatchNormModel("Conv", x, w, 3, y, 1, with_bias));
    const Op& conv = OnlyOpOfType(g, "Conv2d");
    REQUIRE(conv.inputs.size() == 3);
    const std::vector<float> wf = ConstantValues(g, conv.inputs[1]), bf = ConstantValues(g, conv.inputs[2]);
    REQUIRE(wf.size() == wv.size());
    REQUIRE(bf.size() == 3u);
    const double eps = 1e-3f;
    for (size_t c = 0; c < 3; ++c) {
      const float gamma = 0.5f + 0.75f * static_cast<float>(c), beta = 0.125f * static_cast<float>(c) - 0.3f;
      const float mean = 0.2f * static_cast<float>(c) - 0.1f, var = 0.3f + 0.4f * static_cast<float>(c);
      const double s = gamma / std::sqrt(static_cast<double>(var) + eps);
      for (size_t k = 0; k < 18; ++k) CHECK(wf[c * 18 + k] == wv[c * 18 + k] * static_cast<float>(s));
      const float b = with_bias ? bv[c] : 0.0f;
      CHECK(bf[c] == static_cast<float>((b - mean) * s + beta));
    }
  }
  // Not after a convolution: Batchnorm's scale and shift beta - mean * scale.
  OnnxModelBuilder b(17);
  b.Input("x", P::FLOAT, {1, 2, 3, 3});
  b.Init<float>("gamma", P::FLOAT, {2}, {0.5f, 1.25f});
  b.Init<float>("beta", P::FLOAT, {2}, {-0.3f, 0.7f});
  b.Init<float>("mean", P::FLOAT, {2}, {0.1f, -0.2f});
  b.Init<float>("var", P::FLOAT, {2}, {0.3f, 0.9f});
  b.Node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y"}, "bn");
  b.Output("y", P::FLOAT, {1, 2, 3, 3});
  Graph g = Import(b);
  const Op& bn = OnlyOpOfType(g, "Batchnorm");
  const std::vector<float> scale = ConstantValues(g, bn.inputs[1]), shift = ConstantValues(g, bn.inputs[2]);
  const float gamma[2] = {0.5f, 1.25f}, beta[2] = {-0.3f, 0.7f}, mean[2] = {0.1f, -0.2f}, var[2] = {0.3f, 0.9f};
  for (size_t c = 0; c < 2; ++c) {
    const double s = gamma[c] / std::sqrt(static_cast<double>(var[c]) + 1e-5);
    CHECK(scale[c] == static_cast<float>(s));
    CHECK(shift[c] == static_cast<float>(beta[c] - mean[c] * s));
  }
}

}  // namespace
}  // namespace qairt
