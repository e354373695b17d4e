#include "common/model_builders.h"

#include <catch2/catch.hpp>

#include <cstring>

namespace qairt::testing {

TensorId ModelBuilder::Weights(const std::string& name, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = 0.01f * static_cast<float>((i * 37) % 101 - 50);
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return Constant(name, DType::kFloat32, dims, bytes);
}

namespace {

Encoding PerChannelInt8(const std::vector<float>& scales, int32_t axis) {
  Encoding e;
  e.kind = EncodingKind::kPerChannel;
  e.dtype = DType::kSFixed8;
  e.symmetry = Symmetry::kSymmetric;
  e.axis = axis;
  e.scales = scales;
  e.offsets.assign(scales.size(), 0);
  e.overridden = true;
  return e;
}

Encoding PerTensorUint8(float scale, int32_t offset) {
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = DType::kUFixed8;
  e.scales = {scale};
  e.offsets = {offset};
  return e;
}

}  // namespace

void BuildSmallCnn(ModelBuilder& b) {
  const TensorId image = b.Input("image", DType::kFloat32, {-1, 3, 32, 32}, {"batch", "", "", ""});
  const TensorId w1 = b.Weights("conv1.weight", {16, 3, 3, 3});
  const TensorId b1 = b.Weights("conv1.bias", {16});
  auto c1 = b.Op("Conv2d", "conv1", {image, w1, b1}, {"conv1_out"},
                 {{"strides", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                  {"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t{1}}},
                 "/features/conv1/Conv", "Conv");
  auto r1 = b.Op("Relu", "relu1", {c1[0]}, {"relu1_out"}, {}, "/features/relu1/Relu", "Relu");
  auto p1 = b.Op("PoolMax2d", "pool1", {r1[0]}, {"pool1_out"},
                 {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  const TensorId wd = b.Weights("dw.weight", {16, 1, 3, 3});
  auto d1 = b.Op("DepthWiseConv2d", "dw", {p1[0], wd}, {"dw_out"},
                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", int64_t{16}}});
  auto r6 = b.Op("ReluMinMax", "relu6", {d1[0]}, {"relu6_out"}, {{"min_value", 0.0}, {"max_value", 6.0}});
  const TensorId w2 = b.Weights("pw.weight", {32, 16, 1, 1});
  auto c2 = b.Op("Conv2d", "pw", {r6[0], w2}, {"pw_out"});
  auto hs = b.Op("HardSwish", "hswish", {c2[0]}, {"hswish_out"});
  auto gap = b.Op("PoolAvg2d", "gap", {hs[0]}, {"gap_out"}, {{"kernel_shape", std::vector<int64_t>{16, 16}}});
  auto flat = b.Op("Reshape", "flatten", {gap[0]}, {"flat"}, {{"shape", std::vector<int64_t>{0, 32}}});
  const TensorId wf = b.Weights("fc.weight", {10, 32});
  const TensorId bf = b.Weights("fc.bias", {10});
  auto fc = b.Op("FullyConnected", "fc", {flat[0], wf, bf}, {"logits"});
  auto sm = b.Op("Softmax", "softmax", {fc[0]}, {"probs"}, {{"axis", int64_t{-1}}});
  b.Output(sm[0]);

  std::vector<float> scales(16);
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.001f * static_cast<float>(i + 1);
  b.SetEncoding(w1, PerChannelInt8(scales, 0));
  b.SetEncoding(r1[0], PerTensorUint8(0.05f, 0));
  b.SetEncoding(image, PerTensorUint8(1.0f / 255.0f, -128));
}

void BuildTransformerBlock(ModelBuilder& b) {
  constexpr int64_t kModel = 64, kHidden = 256;
  const TensorId x = b.Input("x", DType::kFloat32, {-1, -1, kModel}, {"batch", "seq", ""});
  auto ln1 = b.Op("LayerNorm", "ln1", {x, b.Weights("ln1.gamma", {kModel}), b.Weights("ln1.beta", {kModel})},
                  {"ln1_out"}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}});
  auto q = b.Op("MatMul", "q_proj", {ln1[0], b.Weights("wq", {kModel, kModel})}, {"q"});
  auto k = b.Op("MatMul", "k_proj", {ln1[0], b.Weights("wk", {kModel, kModel})}, {"k"});
  auto v = b.Op("MatMul", "v_proj", {ln1[0], b.Weights("wv", {kModel, kModel})}, {"v"});
  auto kt = b.Op("Transpose", "k_t", {k[0]}, {"k_t_out"}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  auto scores = b.Op("MatMul", "scores", {q[0], kt[0]}, {"scores_out"});
  auto scaled = b.Op("ElementWiseMultiply", "scale", {scores[0], b.Weights("inv_sqrt_d", {1})}, {"scaled"});
  auto attn = b.Op("Softmax", "attn", {scaled[0]}, {"attn_out"}, {{"axis", int64_t{-1}}});
  auto ctx = b.Op("MatMul", "context", {attn[0], v[0]}, {"context_out"});
  auto o = b.Op("MatMul", "o_proj", {ctx[0], b.Weights("wo", {kModel, kModel})}, {"o"});
  auto res1 = b.Op("ElementWiseAdd", "residual1", {x, o[0]}, {"res1"});
  auto ln2 = b.Op("LayerNorm", "ln2", {res1[0], b.Weights("ln2.gamma", {kModel}), b.Weights("ln2.beta", {kModel})},
                  {"ln2_out"}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}});
  auto h = b.Op("MatMul", "ffn1", {ln2[0], b.Weights("w1", {kModel, kHidden})}, {"h"});
  auto hb = b.Op("ElementWiseAdd", "ffn1_bias", {h[0], b.Weights("b1", {kHidden})}, {"hb"});
  auto g = b.Op("Gelu", "gelu", {hb[0]}, {"gelu_out"});
  auto f = b.Op("MatMul", "ffn2", {g[0], b.Weights("w2", {kHidden, kModel})}, {"f"});
  auto fb = b.Op("ElementWiseAdd", "ffn2_bias", {f[0], b.Weights("b2", {kModel})}, {"fb"});
  auto out = b.Op("ElementWiseAdd", "residual2", {res1[0], fb[0]}, {"y"});
  b.Output(out[0]);

  Encoding act16;
  act16.kind = EncodingKind::kPerTensor;
  act16.dtype = DType::kUFixed16;
  act16.scales = {0.0005f};
  act16.offsets = {-32768};
  b.SetEncoding(attn[0], act16);
}

void BuildLstmCell(ModelBuilder& b) {
  constexpr int64_t kIn = 32, kHidden = 64;
  const TensorId x = b.Input("x_t", DType::kFloat32, {1, kIn});
  const TensorId h = b.Input("h_prev", DType::kFloat32, {1, kHidden});
  const TensorId c = b.Input("c_prev", DType::kFloat32, {1, kHidden});
  const TensorId w = b.Weights("W", {kIn, 4 * kHidden});
  auto xw = b.Op("MatMul", "x_w", {x, w}, {"xw"});
  auto hr = b.Op("MatMul", "h_r", {h, b.Weights("R", {kHidden, 4 * kHidden})}, {"hr"});
  auto sum = b.Op("ElementWiseAdd", "gates_sum", {xw[0], hr[0]}, {"gates_sum_out"});
  auto gates = b.Op("ElementWiseAdd", "gates_bias", {sum[0], b.Weights("B", {4 * kHidden})}, {"gates"});
  auto split = b.Op("Split", "split_gates", {gates[0]}, {"i_pre", "f_pre", "g_pre", "o_pre"},
                    {{"axis", int64_t{1}}, {"split", std::vector<int64_t>{kHidden, kHidden, kHidden, kHidden}}});
  auto i = b.Op("Sigmoid", "input_gate", {split[0]}, {"i"});
  auto f = b.Op("Sigmoid", "forget_gate", {split[1]}, {"f"});
  auto g = b.Op("Tanh", "cell_candidate", {split[2]}, {"g"});
  auto o = b.Op("Sigmoid", "output_gate", {split[3]}, {"o"});
  auto fc = b.Op("ElementWiseMultiply", "forget_mul", {f[0], c}, {"f_c"});
  auto ig = b.Op("ElementWiseMultiply", "input_mul", {i[0], g[0]}, {"i_g"});
  auto c_next = b.Op("ElementWiseAdd", "cell_update", {fc[0], ig[0]}, {"c_next"});
  auto tc = b.Op("Tanh", "cell_tanh", {c_next[0]}, {"tanh_c"});
  auto h_next = b.Op("ElementWiseMultiply", "hidden_out", {o[0], tc[0]}, {"h_next"});
  b.Output(h_next[0]);
  b.Output(c_next[0]);

  // LPBQ on W [32, 256]: blocks of 16 along the input dim, 4-bit on an 8-bit grid.
  Encoding lpbq;
  lpbq.kind = EncodingKind::kLpbq;
  lpbq.dtype = DType::kSFixed4;
  lpbq.symmetry = Symmetry::kSymmetric;
  lpbq.axis = 0;
  lpbq.block_sizes = {16, 1};
  lpbq.scales.assign(4 * kHidden, 0.002f);
  lpbq.block_int_scales.resize(2 * 4 * kHidden);
  for (size_t n = 0; n < lpbq.block_int_scales.size(); ++n) lpbq.block_int_scales.mut()[n] = static_cast<int32_t>(1 + n % 16);
  lpbq.decompressed_bitwidth = 8;
  b.SetEncoding(w, lpbq);
}

TensorId CppModelBuilder::Input(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                                const std::vector<std::string>& symbols) {
  Shape shape = Shape::FromExtents(dims);
  for (size_t i = 0; i < symbols.size(); ++i)
    if (!symbols[i].empty()) shape[i] = Dim::Symbolic(symbols[i]);
  auto id = g_->AddInput(name, dtype, shape);
  REQUIRE(id.ok());
  return id.value();
}

TensorId CppModelBuilder::Constant(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                                   const std::vector<uint8_t>& bytes) {
  auto id = g_->AddConstant(name, dtype, Shape::FromExtents(dims), StaticData::Copy(bytes.data(), bytes.size()));
  INFO(id.status().message());
  REQUIRE(id.ok());
  return id.value();
}

std::vector<TensorId> CppModelBuilder::Op(const std::string& type, const std::string& name,
                                          const std::vector<TensorId>& inputs, const std::vector<std::string>& outputs,
                                          const AttributeMap& attrs, const std::string& source_name,
                                          const std::string& source_op_type) {
  OpSpec spec;
  spec.type = type;
  spec.name = name;
  spec.inputs = inputs;
  spec.attrs = attrs;
  spec.source_name = source_name;
  spec.source_op_type = source_op_type;
  for (const auto& out : outputs) {
    auto t = g_->AddTensor(out);
    REQUIRE(t.ok());
    spec.outputs.push_back(t.value());
  }
  auto id = g_->AddOp(spec);
  INFO(id.status().message());
  REQUIRE(id.ok());
  return g_->op(id.value()).outputs;
}

void CppModelBuilder::Output(TensorId t) { REQUIRE(g_->MarkOutput(t).ok()); }

void CppModelBuilder::SetEncoding(TensorId t, const Encoding& e) {
  Status s = g_->SetEncoding(t, e);
  INFO(s.message());
  REQUIRE(s.ok());
}

}  // namespace qairt::testing
