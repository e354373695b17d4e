// Lowering of ONNX's neural-network ops: convolutions (with BatchNorm
// folding), Gemm/MatMul/Einsum, pooling, normalisations, softmax, recurrent
// cells, resizing.
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "onnx/importer.h"
#include "kernels/ops.h"
#include "ir/batchnorm_fold.h"
#include "ir/ops/shape_helpers.h"

namespace qairt::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// The node's auto_pad (an empty string is NOTSET).
Result<ops::AutoPad> ReadAutoPad(NodeContext& ctx) {
  std::string name = ctx.String("auto_pad", "NOTSET");
  if (name.empty()) name = "NOTSET";
  const std::optional<ops::AutoPad> mode = ops::ParseAutoPad(name);
  if (!mode) return ctx.Fail("auto_pad", "unknown auto_pad '{}'", name);
  return *mode;
}

// Explicit pads for the node's auto_pad (ops::WindowPads, as shape inference
// and the executor resolve it); SAME_* needs a static input.
Result<Ints> ResolvePads(NodeContext& ctx, const Shape& x, const Ints& kernel, const Ints& strides,
                         const Ints& dilations) {
  const size_t n = kernel.size();
  auto mode = ReadAutoPad(ctx);
  if (!mode.ok()) return mode.status();
  const Ints given = ctx.Ints("pads", Ints(2 * n, 0));
  if (mode.value() == ops::AutoPad::kNotSet && given.size() != 2 * n)
    return ctx.Fail("pads", "pads has {} values, expected {}", given.size(), 2 * n);
  const bool same = mode.value() == ops::AutoPad::kSameUpper || mode.value() == ops::AutoPad::kSameLower;
  Ints pads(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    const bool known = x.rank_known() && x.rank() == n + 2 && x[i + 2].known();
    if (same && !known)
      return ctx.Fail("auto_pad", "cannot resolve auto_pad={} without a static input shape",
                      ctx.String("auto_pad", "NOTSET"));
    const ops::DimPads explicit_pads = given.size() == 2 * n ? ops::DimPads{given[i], given[i + n]} : ops::DimPads{};
    const auto p = ops::WindowPads(mode.value(), known ? x[i + 2].value : 0, kernel[i], strides[i], dilations[i],
                                   explicit_pads);
    if (!p) return ctx.Fail("auto_pad", "auto_pad={} cannot pad spatial dim {}", ctx.String("auto_pad", "NOTSET"), i);
    pads[i] = p->begin;
    pads[i + n] = p->end;
  }
  return pads;
}

// Reads float32 constant values (nullopt if not a float32 constant).
std::optional<std::vector<float>> FloatConst(const Value& v) {
  if (!v.is_const() || v.dtype != DType::kFloat32 || v.encoding) return std::nullopt;
  return ReadAsFloats(v);
}

// Folds a following BatchNormalization into the conv's weights/bias. Returns
// the BN node if folded (its output is then bound to the conv output).
const onnx::NodeProto* TryFoldBatchNorm(NodeContext& ctx, std::vector<float>* weights, std::vector<float>* bias,
                                        int64_t out_channels, const ConvWeightLayout& layout) {
  if (!ctx.importer().options().fold_batchnorm || !ctx.has_output(0)) return nullptr;
  const onnx::NodeProto* bn = ctx.importer().SingleConsumer(ctx.output_name(0));
  if (!bn || bn->op_type() != "BatchNormalization" || bn->input_size() < 5 || bn->output_size() > 1) return nullptr;
  if (bn->input(0) != ctx.output_name(0)) return nullptr;
  std::vector<std::vector<float>> p;
  for (int k = 1; k <= 4; ++k) {
    const Value* v = ctx.importer().Find(bn->input(k));
    if (!v) return nullptr;
    auto f = FloatConst(*v);
    if (!f || static_cast<int64_t>(f->size()) != out_channels) return nullptr;
    p.push_back(std::move(*f));
  }
  double eps = 1e-5;
  for (const auto& a : bn->attribute())
    if (a.name() == "epsilon") eps = a.f();
  if (bias->empty()) bias->assign(static_cast<size_t>(out_channels), 0.0f);
  if (!FoldBatchNormIntoConv(p[0], p[1], p[2], p[3], eps, layout, weights, bias)) return nullptr;
  return bn;
}

Status LowerConvLike(NodeContext& ctx, bool transposed) {
  const Value& x = ctx.in(0);
  const Value& w = ctx.in(1);
  if (!w.shape.rank_known() || w.shape.rank() < 3)
    return ctx.Fail("inputs[1]", "weight must have rank >= 3, got {}", w.shape.ToString());
  const size_t spatial = w.shape.rank() - 2;
  Ints kernel = ctx.Ints("kernel_shape");
  if (kernel.empty())
    for (size_t i = 0; i < spatial; ++i) kernel.push_back(w.shape[i + 2].value);
  const Ints strides = ctx.Ints("strides", Ints(spatial, 1));
  const Ints dilations = ctx.Ints("dilations", Ints(spatial, 1));
  const int64_t group = ctx.Int("group", 1);
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial)
    return ctx.Fail("kernel_shape", "kernel_shape/strides/dilations must have {} entries", spatial);
  AttributeMap attrs = {{"strides", strides}, {"dilations", dilations}, {"group", group}};
  if (transposed) {
    if (ctx.attr("output_padding")) attrs["output_padding"] = ctx.Ints("output_padding");
    if (ctx.attr("output_shape")) attrs["output_shape"] = ctx.Ints("output_shape");
    auto auto_pad = ReadAutoPad(ctx);
    if (!auto_pad.ok()) return auto_pad.status();
    const std::string auto_pad_name = ctx.String("auto_pad", "NOTSET");
    const bool same = auto_pad.value() == ops::AutoPad::kSameUpper || auto_pad.value() == ops::AutoPad::kSameLower;
    if (same && !ctx.attr("output_shape"))
      return ctx.Fail("auto_pad", "auto_pad={} without output_shape is not supported for ConvTranspose",
                      auto_pad_name);
    attrs["pads"] = ctx.Ints("pads", Ints(2 * spatial, 0));
    // Kept, not resolved: with output_shape it decides which end takes the
    // odd unit of padding (ops::TransposeWindowPads, in the executor too).
    if (auto_pad.value() != ops::AutoPad::kNotSet) attrs["auto_pad"] = auto_pad_name;
  } else {
    auto pads = ResolvePads(ctx, x.shape, kernel, strides, dilations);
    if (!pads.ok()) return pads.status();
    attrs["pads"] = pads.value();
  }

  // Weights/bias, with a following BatchNormalization folded in when possible.
  const int64_t out_channels = transposed ? (w.shape[1].value * group) : w.shape[0].value;
  TensorId w_id = kInvalidId, b_id = kInvalidId;
  const onnx::NodeProto* folded_bn = nullptr;
  // Only a BatchNormalization consumer makes the weights worth reading.
  const onnx::NodeProto* bn_next = ctx.importer().SingleConsumer(ctx.output_name(0));
  const bool may_fold = ctx.importer().options().fold_batchnorm && bn_next &&
                        bn_next->op_type() == "BatchNormalization";
  if (auto wf = may_fold ? FloatConst(w) : std::nullopt; wf && out_channels > 0) {
    std::vector<float> bias;
    if (ctx.has_input(2)) {
      auto bf = FloatConst(ctx.in(2));
      if (bf) bias = *bf;
    }
    if (!ctx.has_input(2) || !bias.empty()) {
      ConvWeightLayout layout;
      if (transposed) {
        layout = {true, group, 1};
        for (size_t i = 2; i < w.shape.rank(); ++i) layout.kernel_size *= w.shape[i].value;
      }
      folded_bn = TryFoldBatchNorm(ctx, &*wf, &bias, out_channels, layout);
      if (folded_bn) {
        auto wt = ctx.Constant("weight_bn", DType::kFloat32, w.shape, VectorData(*wf));
        auto bt = ctx.Constant("bias_bn", DType::kFloat32, Shape{out_channels}, VectorData(bias));
        if (!wt.ok()) return wt.status();
        if (!bt.ok()) return bt.status();
        w_id = wt.value();
        b_id = bt.value();
      }
    }
  }
  if (w_id == kInvalidId) {
    w_id = ctx.in_tensor(1);
    b_id = ctx.in_tensor(2);
  }

  const int64_t in_channels = x.shape.rank_known() && x.shape.rank() > 1 ? x.shape[1].value : -1;
  std::string type;
  if (spatial == 1) type = transposed ? "TransposeConv1d" : "Conv1d";
  else if (spatial == 2) type = transposed ? "TransposeConv2d" : (group > 1 && group == in_channels ? "DepthWiseConv2d" : "Conv2d");
  else if (spatial == 3) type = transposed ? "TransposeConv3d" : "Conv3d";
  else return ctx.Fail("inputs[1]", "{}-D convolution is not supported", spatial);

  std::vector<TensorId> inputs = {ctx.in_tensor(0), w_id};
  if (b_id != kInvalidId) inputs.push_back(b_id);
  auto out = ctx.Emit(type, inputs, attrs, std::vector<size_t>{0});
  if (!out.ok()) return out.status();
  if (folded_bn) {
    ctx.importer().MarkConsumed(folded_bn);
    const Value* conv_out = ctx.importer().Find(ctx.output_name(0));
    if (!conv_out) return ctx.Fail("outputs[0]", "the convolution's output was not bound");
    ctx.importer().Bind(folded_bn->output(0), *conv_out);
  }
  return Status::Ok();
}

Status LowerConv(NodeContext& ctx) { return LowerConvLike(ctx, false); }
Status LowerConvTranspose(NodeContext& ctx) { return LowerConvLike(ctx, true); }

// Transposes a 2-D float32 constant (the kernels' tiled transpose).
std::shared_ptr<const StaticData> Transpose2d(const std::vector<float>& src, int64_t rows, int64_t cols) {
  uint8_t* out = nullptr;
  auto data = StaticData::Uninitialized(src.size() * sizeof(float), &out);
  kernels::Transpose2D(sizeof(float), rows, cols, src.data(), out);
  return data;
}

Status LowerGemm(NodeContext& ctx) {
  const double alpha = ctx.Float("alpha", 1.0), beta = ctx.Float("beta", 1.0);
  const bool trans_a = ctx.Int("transA", 0) != 0, trans_b = ctx.Int("transB", 0) != 0;
  TensorId a = ctx.in_tensor(0);
  if (trans_a) {
    auto t = ctx.EmitTemp("Transpose", "transA", {a}, {{"perm", Ints{1, 0}}});
    if (!t.ok()) return t.status();
    a = t.value();
  }
  const Value& b = ctx.in(1);
  if (!b.shape.rank_known() || b.shape.rank() != 2) return ctx.Fail("inputs[1]", "B must be 2-D, got {}", b.shape.ToString());
  TensorId w = kInvalidId;
  int64_t n = trans_b ? b.shape[0].value : b.shape[1].value;
  if (trans_b && alpha == 1.0) {
    w = ctx.in_tensor(1);  // already [N, K]: shared, not copied
  } else if (auto bf = FloatConst(b)) {
    // FullyConnected takes weights as [N, K].
    std::vector<float> values = *bf;
    if (alpha != 1.0)
      for (float& v : values) v = static_cast<float>(v * alpha);
    const int64_t rows = b.shape[0].value, cols = b.shape[1].value;
    auto data = trans_b ? VectorData(values) : Transpose2d(values, rows, cols);
    auto t = ctx.Constant(trans_b ? "weight" : "weight_t", DType::kFloat32, Shape{n, trans_b ? cols : rows}, data);
    if (!t.ok()) return t.status();
    w = t.value();
  } else {
    w = ctx.in_tensor(1);
    if (!trans_b) {
      auto t = ctx.EmitTemp("Transpose", "transB", {w}, {{"perm", Ints{1, 0}}});
      if (!t.ok()) return t.status();
      w = t.value();
    }
    if (alpha != 1.0) return ctx.Fail("alpha", "alpha={} with a non-constant B is not supported", alpha);
  }
  TensorId bias = kInvalidId;
  bool add_c_after = false;
  if (ctx.has_input(2)) {
    const Value& c = ctx.in(2);
    auto cf = FloatConst(c);
    const auto count = c.shape.element_count();
    if (cf && count && static_cast<int64_t>(*count) == n && (c.shape.rank() <= 1 || c.shape[0].value == 1)) {
      std::vector<float> values = *cf;
      for (float& v : values) v = static_cast<float>(v * beta);
      auto t = ctx.Constant("bias", DType::kFloat32, Shape{n}, VectorData(values));
      if (!t.ok()) return t.status();
      bias = t.value();
    } else if (beta == 1.0) {
      add_c_after = true;
    } else {
      return ctx.Fail("inputs[2]", "C of shape {} with beta={} is not supported", c.shape.ToString(), beta);
    }
  }
  std::vector<TensorId> inputs = {a, w};
  if (bias != kInvalidId) inputs.push_back(bias);
  if (!add_c_after) {
    auto out = ctx.Emit("FullyConnected", inputs);
    return out.ok() ? Status::Ok() : out.status();
  }
  auto fc = ctx.EmitTemp("FullyConnected", "fc", inputs);
  if (!fc.ok()) return fc.status();
  auto out = ctx.Emit("ElementWiseAdd", {fc.value(), ctx.in_tensor(2)});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerMatMul(NodeContext& ctx) {
  auto out = ctx.Emit("MatMul", {ctx.in_tensor(0), ctx.in_tensor(1)});
  return out.ok() ? Status::Ok() : out.status();
}

// Einsum with two operands and an explicit output: any contraction that is a
// batched matrix product once its letters are grouped. Letters in both
// operands and the output are batch dims, in both operands only contracted,
// in one operand and the output that operand's free dims, in one operand only
// summed first. Each operand is transposed to [batch, free, contracted] (or
// [batch, contracted, free]) and reshaped to 3 groups, one MatMul, then the
// product is reshaped and transposed to the output's order.
// One operand: the letters missing from the output summed, the rest transposed.
Status LowerEinsumUnary(NodeContext& ctx, const std::string& a, const std::string& o, const std::string& eq) {
  if (std::set<char>(a.begin(), a.end()).size() != a.size())
    return ctx.Fail("equation", "Einsum '{}' repeats a letter (diagonals are not supported)", eq);
  Ints axes;
  std::string kept;
  for (size_t i = 0; i < a.size(); ++i) {
    if (o.find(a[i]) == std::string::npos) axes.push_back(static_cast<int64_t>(i));
    else kept += a[i];
  }
  for (char c : o)
    if (kept.find(c) == std::string::npos) return ctx.Fail("equation", "Einsum '{}': output letter '{}' is not an input letter", eq, c);
  Ints perm;
  for (char c : o) perm.push_back(static_cast<int64_t>(kept.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (axes.empty()) return Done(ctx.Emit(identity ? "Reshape" : "Transpose", {ctx.in_tensor(0)},
                                         identity ? AttributeMap{{"shape", ctx.in(0).shape.extents()}}
                                                  : AttributeMap{{"perm", perm}}));
  if (identity) return Done(ctx.Emit("ReduceSum", {ctx.in_tensor(0)}, {{"axes", axes}, {"keepdims", int64_t{0}}}));
  auto s = ctx.EmitTemp("ReduceSum", "sum", {ctx.in_tensor(0)}, {{"axes", axes}, {"keepdims", int64_t{0}}});
  if (!s.ok()) return s.status();
  return Done(ctx.Emit("Transpose", {s.value()}, {{"perm", perm}}));
}

Status LowerEinsum(NodeContext& ctx) {
  std::string eq = ctx.String("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  if (eq.find('.') != std::string::npos)
    return ctx.Fail("equation", "Einsum with an ellipsis is not supported, got '{}'", eq);
  // Implicit output: the letters that appear once, in alphabetical order.
  if (eq.find("->") == std::string::npos) {
    std::map<char, int> count;
    for (char c : eq)
      if (c != ',') ++count[c];
    std::string implicit;
    for (const auto& [c, n] : count)
      if (n == 1) implicit += c;
    eq += "->" + implicit;
  }
  const size_t arrow = eq.find("->"), comma = eq.find(',');
  if (ctx.num_inputs() == 1 && comma == std::string::npos)
    return LowerEinsumUnary(ctx, eq.substr(0, arrow), eq.substr(arrow + 2), eq);
  if (ctx.num_inputs() != 2 || comma == std::string::npos || comma > arrow)
    return ctx.Fail("equation", "Einsum '{}' with {} operands is not supported (one or two are)", eq, ctx.num_inputs());
  std::string a = eq.substr(0, comma), b = eq.substr(comma + 1, arrow - comma - 1);
  const std::string o = eq.substr(arrow + 2);
  auto unique = [](const std::string& s) { return std::set<char>(s.begin(), s.end()).size() == s.size(); };
  if (!unique(a) || !unique(b) || !unique(o))
    return ctx.Fail("equation", "Einsum '{}' repeats a letter within an operand (diagonals are not supported)", eq);
  for (char c : o)
    if (a.find(c) == std::string::npos && b.find(c) == std::string::npos)
      return ctx.Fail("equation", "Einsum '{}': output letter '{}' is in no operand", eq, c);
  const Shape& as = ctx.in(0).shape;
  const Shape& bs = ctx.in(1).shape;
  if (!as.fully_known() || !bs.fully_known() || as.rank() != a.size() || bs.rank() != b.size())
    return ctx.Fail("inputs", "Einsum '{}' needs static operand shapes of the equation's ranks, got {} and {}", eq,
                    as.ToString(), bs.ToString());
  std::map<char, int64_t> dim;
  for (size_t i = 0; i < a.size(); ++i) dim[a[i]] = as[i].value;
  for (size_t i = 0; i < b.size(); ++i) {
    auto it = dim.find(b[i]);
    if (it != dim.end() && it->second != bs[i].value)
      return ctx.Fail("inputs", "Einsum '{}': letter '{}' is {} in one operand and {} in the other", eq, b[i],
                      it->second, bs[i].value);
    dim[b[i]] = bs[i].value;
  }
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  std::string batch, contract, afree, bfree;
  for (char c : o) {
    if (in(a, c) && in(b, c)) batch += c;
    else if (in(a, c)) afree += c;
    else bfree += c;
  }
  for (char c : a)
    if (in(b, c) && !in(o, c)) contract += c;

  // Letters of one operand only, not in the output: summed over first.
  auto sum_only = [&](size_t idx, std::string& letters, const std::string& other) -> Result<TensorId> {
    TensorId t = ctx.in_tensor(idx);
    Ints axes;
    std::string kept;
    for (size_t i = 0; i < letters.size(); ++i) {
      if (!in(other, letters[i]) && !in(o, letters[i])) axes.push_back(static_cast<int64_t>(i));
      else kept += letters[i];
    }
    if (axes.empty()) return t;
    auto r = ctx.EmitTemp("ReduceSum", idx == 0 ? "sum_a" : "sum_b", {t}, {{"axes", axes}, {"keepdims", int64_t{0}}});
    letters = kept;
    return r;
  };
  auto ta = sum_only(0, a, b);
  if (!ta.ok()) return ta.status();
  auto tb = sum_only(1, b, a);
  if (!tb.ok()) return tb.status();

  auto product = [&](const std::string& s) {
    int64_t n = 1;
    for (char c : s) n *= dim[c];
    return n;
  };
  // Transposes `t` (letters `from`) to the letter order `to`, then reshapes
  // it to `shape`; each step only when it changes something.
  auto arrange = [&](TensorId t, const std::string& from, const std::string& to, const Ints& shape,
                     const std::string& tag) -> Result<TensorId> {
    Ints perm;
    for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (!identity) {
      auto r = ctx.EmitTemp("Transpose", tag + "_t", {t}, {{"perm", perm}});
      if (!r.ok()) return r;
      t = r.value();
    }
    Ints natural;
    for (char c : to) natural.push_back(dim[c]);
    if (natural != shape) {
      auto r = ctx.EmitTemp("Reshape", tag + "_r", {t}, {{"shape", shape}});
      if (!r.ok()) return r;
      t = r.value();
    }
    return t;
  };
  Ints shape_a, shape_b;
  for (char c : batch) {
    shape_a.push_back(dim[c]);
    shape_b.push_back(dim[c]);
  }
  shape_a.push_back(product(afree));
  shape_a.push_back(product(contract));
  shape_b.push_back(product(contract));
  shape_b.push_back(product(bfree));
  auto xa = arrange(ta.value(), a, batch + afree + contract, shape_a, "a");
  if (!xa.ok()) return xa.status();
  auto xb = arrange(tb.value(), b, batch + contract + bfree, shape_b, "b");
  if (!xb.ok()) return xb.status();

  // [batch, M, N] -> the output: reshape to [batch, afree, bfree], transpose to o.
  const std::string grouped = batch + afree + bfree;
  Ints out_grouped;
  for (char c : grouped) out_grouped.push_back(dim[c]);
  Ints mm_shape = shape_a;
  mm_shape.back() = product(bfree);
  Ints perm;
  for (char c : o) perm.push_back(static_cast<int64_t>(grouped.find(c)));
  bool perm_identity = true;
  for (size_t i = 0; i < perm.size(); ++i) perm_identity = perm_identity && perm[i] == static_cast<int64_t>(i);
  const bool reshape_out = out_grouped != mm_shape;
  if (!reshape_out && perm_identity) return Done(ctx.Emit("MatMul", {xa.value(), xb.value()}));
  auto mm = ctx.EmitTemp("MatMul", "matmul", {xa.value(), xb.value()});
  if (!mm.ok()) return mm.status();
  TensorId t = mm.value();
  if (reshape_out && perm_identity) return Done(ctx.Emit("Reshape", {t}, {{"shape", out_grouped}}));
  if (reshape_out) {
    auto r = ctx.EmitTemp("Reshape", "out_r", {t}, {{"shape", out_grouped}});
    if (!r.ok()) return r.status();
    t = r.value();
  }
  return Done(ctx.Emit("Transpose", {t}, {{"perm", perm}}));
}


// A 1-D window op as its 2-D form over [N, C, 1, L]: ExpandDims, the op,
// Squeeze (QNN has no 1-D pooling; the vendor converter rewrites it so).
Status EmitAs2d(NodeContext& ctx, const char* type2d, AttributeMap attrs) {
  auto x4 = ctx.EmitTemp("ExpandDims", "to_2d", {ctx.in_tensor(0)}, {{"axes", Ints{2}}});
  if (!x4.ok()) return x4.status();
  auto y4 = ctx.EmitTemp(type2d, "2d", {x4.value()}, std::move(attrs));
  if (!y4.ok()) return y4.status();
  auto out = ctx.Emit("Squeeze", {y4.value()}, {{"axes", Ints{2}}}, std::vector<size_t>{0});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerPool(NodeContext& ctx, const char* type2d, const char* type3d) {
  if (ctx.has_output(1)) return ctx.Fail("outputs[1]", "MaxPool's Indices output is not supported");
  const Ints kernel = ctx.Ints("kernel_shape");
  const size_t n = kernel.size();
  if (n < 1 || n > 3) return ctx.Fail("kernel_shape", "{}-D pooling is not supported (1-D, 2-D and 3-D are)", n);
  const Ints strides = ctx.Ints("strides", Ints(n, 1));
  const Ints dilations = ctx.Ints("dilations", Ints(n, 1));
  if (strides.size() != n || dilations.size() != n)
    return ctx.Fail("strides", "strides/dilations must have {} entries", n);
  auto resolved = ResolvePads(ctx, ctx.in(0).shape, kernel, strides, dilations);
  if (!resolved.ok()) return resolved.status();
  const Ints& pads = resolved.value();
  AttributeMap attrs = {{"kernel_shape", kernel}, {"strides", strides}, {"pads", pads},
                        {"ceil_mode", ctx.Int("ceil_mode", 0)}};
  if (ctx.attr("dilations")) attrs["dilations"] = dilations;
  if (ctx.op_type() == "AveragePool") attrs["count_include_pad"] = ctx.Int("count_include_pad", 0);
  if (n == 1) {
    attrs["kernel_shape"] = Ints{1, kernel[0]};
    attrs["strides"] = Ints{1, strides[0]};
    attrs["pads"] = Ints{0, pads[0], 0, pads[1]};
    if (ctx.attr("dilations")) attrs["dilations"] = Ints{1, dilations[0]};
    return EmitAs2d(ctx, type2d, std::move(attrs));
  }
  auto out = ctx.Emit(n == 2 ? type2d : type3d, {ctx.in_tensor(0)}, attrs, std::vector<size_t>{0});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerMaxPool(NodeContext& ctx) { return LowerPool(ctx, "PoolMax2d", "PoolMax3d"); }
Status LowerAveragePool(NodeContext& ctx) { return LowerPool(ctx, "PoolAvg2d", "PoolAvg3d"); }

Status LowerGlobalPool(NodeContext& ctx) {
  const Shape& x = ctx.in(0).shape;
  if (!x.rank_known() || x.rank() < 3 || x.rank() > 5)
    return ctx.Fail("inputs[0]", "global pooling needs a 3-D, 4-D or 5-D input of known rank, got {}", x.ToString());
  Ints kernel;
  for (size_t i = 2; i < x.rank(); ++i) {
    if (!x[i].known())
      return ctx.Fail("inputs[0]", "global pooling needs static spatial dims, got {} (give them with -d/--input_dim)",
                      x.ToString());
    kernel.push_back(x[i].value);
  }
  const bool avg = ctx.op_type() == "GlobalAveragePool";
  if (x.rank() == 3) return EmitAs2d(ctx, avg ? "PoolAvg2d" : "PoolMax2d", {{"kernel_shape", Ints{1, kernel[0]}}});
  const char* type = x.rank() == 4 ? (avg ? "PoolAvg2d" : "PoolMax2d") : (avg ? "PoolAvg3d" : "PoolMax3d");
  auto out = ctx.Emit(type, {ctx.in_tensor(0)}, {{"kernel_shape", kernel}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerBatchNorm(NodeContext& ctx) {
  // Not folded into a conv: fold mean/variance into scale/bias of QNN's Batchnorm.
  std::vector<std::vector<float>> p;
  for (size_t k = 1; k <= 4; ++k) {
    auto f = ctx.has_input(k) ? FloatConst(ctx.in(k)) : std::nullopt;
    if (!f) return ctx.Fail(fmt::format("inputs[{}]", k), "BatchNormalization parameters must be float32 constants");
    p.push_back(std::move(*f));
  }
  if (ctx.has_output(1) || ctx.has_output(2)) return ctx.Fail("outputs", "training-mode outputs are not supported");
  const double eps = ctx.Float("epsilon", 1e-5);
  const size_t c = p[0].size();
  for (const auto& v : p)
    if (v.size() != c) return ctx.Fail("inputs", "scale, bias, mean and var must have the same length");
  const ChannelAffine affine = BatchNormAffine(p[0], p[1], p[2], p[3], eps);
  auto st = ctx.Constant("scale", DType::kFloat32, Shape{static_cast<int64_t>(c)}, VectorData(affine.scale));
  auto bt = ctx.Constant("bias", DType::kFloat32, Shape{static_cast<int64_t>(c)}, VectorData(affine.shift));
  if (!st.ok()) return st.status();
  if (!bt.ok()) return bt.status();
  auto out = ctx.Emit("Batchnorm", {ctx.in_tensor(0), st.value(), bt.value()}, {}, std::vector<size_t>{0});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerSoftmaxLike(NodeContext& ctx, const char* type) {
  const Shape& x = ctx.in(0).shape;
  int64_t axis = ctx.Int("axis", ctx.opset() >= 13 ? -1 : 1);
  if (ctx.opset() < 13 && x.rank_known()) {
    // Before opset 13 the input is flattened to 2-D at `axis` and normalised
    // over everything from `axis` on. Same as a plain softmax over `axis` when
    // the dims after it are all 1; otherwise reshape around a 2-D softmax.
    const auto r = static_cast<int64_t>(x.rank());
    const int64_t a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r) return ctx.Fail("axis", "axis {} out of range for rank {}", axis, r);
    bool trailing_ones = true;
    for (int64_t k = a + 1; k < r; ++k) trailing_ones = trailing_ones && x[static_cast<size_t>(k)].known() && x[static_cast<size_t>(k)].value == 1;
    if (!trailing_ones) {
      if (!x.fully_known()) return ctx.Fail("axis", "opset {} {} coerces a dynamic input to 2-D", ctx.opset(), ctx.op_type());
      int64_t lead = 1, tail = 1;
      for (int64_t k = 0; k < r; ++k) (k < a ? lead : tail) *= x[static_cast<size_t>(k)].value;
      auto flat = ctx.EmitTemp("Reshape", "flatten2d", {ctx.in_tensor(0)}, {{"shape", Ints{lead, tail}}});
      if (!flat.ok()) return flat.status();
      auto sm = ctx.EmitTemp(type, "softmax2d", {flat.value()}, {{"axis", int64_t{-1}}});
      if (!sm.ok()) return sm.status();
      auto out = ctx.Emit("Reshape", {sm.value()}, {{"shape", x.extents()}});
      return out.ok() ? Status::Ok() : out.status();
    }
    axis = a;
  }
  auto out = ctx.Emit(type, {ctx.in_tensor(0)}, {{"axis", axis}});
  return out.ok() ? Status::Ok() : out.status();
}
Status LowerSoftmax(NodeContext& ctx) { return LowerSoftmaxLike(ctx, "Softmax"); }
Status LowerLogSoftmax(NodeContext& ctx) { return LowerSoftmaxLike(ctx, "LogSoftmax"); }

Status LowerLrn(NodeContext& ctx) {
  auto out = ctx.Emit("Lrn", {ctx.in_tensor(0)},
                      {{"size", ctx.Int("size", 1)}, {"alpha", ctx.Float("alpha", 1e-4)},
                       {"beta", ctx.Float("beta", 0.75)}, {"bias", ctx.Float("bias", 1.0)}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerInstanceNorm(NodeContext& ctx) {
  auto out = ctx.Emit("InstanceNorm", {ctx.in_tensor(0), ctx.in_tensor(1), ctx.in_tensor(2)},
                      {{"epsilon", ctx.Float("epsilon", 1e-5)}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerLayerNorm(NodeContext& ctx) {
  if (ctx.has_output(1) || ctx.has_output(2)) return ctx.Fail("outputs", "Mean/InvStdDev outputs are not supported");
  std::vector<TensorId> in = {ctx.in_tensor(0), ctx.in_tensor(1)};
  if (ctx.has_input(2)) in.push_back(ctx.in_tensor(2));
  auto out = ctx.Emit("LayerNorm", in, {{"axis", ctx.Int("axis", -1)}, {"epsilon", ctx.Float("epsilon", 1e-5)}},
                      std::vector<size_t>{0});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerGroupNorm(NodeContext& ctx) {
  const int64_t groups = ctx.Int("num_groups", 1);
  std::vector<TensorId> in = {ctx.in_tensor(0), ctx.in_tensor(1), ctx.in_tensor(2)};
  // GroupNormalization-18 takes scale/bias per group [G]; opset 21 (and the
  // IR's GroupNorm) per channel [C]. Repeat each group's value C/G times.
  const Shape& x = ctx.in(0).shape;
  const int64_t channels = x.rank_known() && x.rank() > 1 && x[1].known() ? x[1].value : -1;
  if (ctx.opset() < 21 && groups > 0 && channels != groups) {
    if (channels < 0 || channels % groups != 0)
      return ctx.Fail("num_groups", "opset {} GroupNormalization needs a channel count divisible by num_groups={}, "
                      "got input {}", ctx.opset(), groups, x.ToString());
    for (size_t k = 1; k <= 2; ++k) {
      auto v = FloatConst(ctx.in(k));
      if (!v || static_cast<int64_t>(v->size()) != groups)
        return ctx.Fail(fmt::format("inputs[{}]", k), "opset {} GroupNormalization needs a float32 constant of {} "
                        "values (one per group)", ctx.opset(), groups);
      std::vector<float> per_channel;
      for (int64_t c = 0; c < channels; ++c) per_channel.push_back((*v)[static_cast<size_t>(c / (channels / groups))]);
      auto t = ctx.Constant(k == 1 ? "scale_per_channel" : "bias_per_channel", DType::kFloat32, Shape{channels},
                            VectorData(std::move(per_channel)));
      if (!t.ok()) return t.status();
      in[k] = t.value();
    }
  }
  auto out = ctx.Emit("GroupNorm", in, {{"num_groups", groups}, {"epsilon", ctx.Float("epsilon", 1e-5)}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerRecurrent(NodeContext& ctx) {
  const bool lstm = ctx.op_type() == "LSTM";
  if (ctx.attr("activations")) {
    // Only the default activations map onto QNN's cells.
    const auto* a = ctx.attr("activations");
    static const std::vector<std::string> kLstm = {"Sigmoid", "Tanh", "Tanh"}, kGru = {"Sigmoid", "Tanh"};
    const auto& want = lstm ? kLstm : kGru;
    for (int i = 0; i < a->strings_size(); ++i)
      if (a->strings(i) != want[static_cast<size_t>(i) % want.size()])
        return ctx.Fail("activations", "non-default activation '{}' is not supported", a->strings(i));
  }
  if (ctx.attr("clip")) return ctx.Fail("clip", "cell clipping is not supported");
  AttributeMap attrs = {{"hidden_size", ctx.Int("hidden_size", 0)},
                        {"direction", ctx.String("direction", "forward")},
                        {"layout", ctx.Int("layout", 0)}};
  if (lstm) {
    if (ctx.Int("input_forget", 0) != 0) return ctx.Fail("input_forget", "input_forget=1 is not supported");
  } else {
    attrs["linear_before_reset"] = ctx.Int("linear_before_reset", 0);
  }
  std::vector<TensorId> in;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) in.push_back(ctx.in_tensor(k));
  auto out = ctx.Emit(lstm ? "Lstm" : "Gru", in, attrs);
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerResize(NodeContext& ctx) {
  const bool upsample = ctx.op_type() == "Upsample";
  const Shape& x = ctx.in(0).shape;
  AttributeMap attrs = {{"mode", ctx.String("mode", "nearest")}};
  if (!upsample) {
    attrs["coordinate_transformation_mode"] = ctx.String("coordinate_transformation_mode", "half_pixel");
    attrs["nearest_mode"] = ctx.String("nearest_mode", "round_prefer_floor");
    attrs["cubic_coeff_a"] = ctx.Float("cubic_coeff_a", -0.75);
    attrs["exclude_outside"] = ctx.Int("exclude_outside", 0);
  } else {
    attrs["coordinate_transformation_mode"] = std::string("asymmetric");
    attrs["nearest_mode"] = std::string("floor");
  }
  // Inputs: Resize-10 (X, scales), Resize-11+ (X, roi, scales, sizes), Upsample (X, scales) or attr.
  std::optional<std::vector<double>> scales;
  std::optional<Ints> sizes;
  if (upsample && ctx.opset() < 9) {
    scales = ctx.Floats("scales");
  } else if (upsample || ctx.opset() < 11) {
    scales = ctx.in_floats(1);
  } else {
    if (ctx.has_input(3)) sizes = ctx.in_ints(3);
    if (ctx.has_input(2) && (!sizes || sizes->empty())) scales = ctx.in_floats(2);
    if (ctx.has_input(1) && ctx.in_is_const(1) && ctx.in(1).shape.element_count().value_or(0) > 0 &&
        ctx.String("coordinate_transformation_mode", "") == "tf_crop_and_resize")
      return ctx.Fail("roi", "tf_crop_and_resize is not supported");
  }
  if (sizes && !sizes->empty()) {
    attrs["sizes"] = *sizes;
  } else if (scales && !scales->empty()) {
    // Output sizes from static dims (QNN wants sizes); keep scales otherwise.
    // Sizes only when exact: ONNX Runtime derives the scale back as out/in,
    // which differs from the given scale when in*scale is not an integer.
    bool exact = x.fully_known() && scales->size() == x.rank();
    Ints out;
    for (size_t i = 0; exact && i < x.rank(); ++i) {
      const double v = x[i].value * (*scales)[i];
      exact = v == std::floor(v);
      out.push_back(static_cast<int64_t>(std::floor(v)));
    }
    if (exact) {
      attrs["sizes"] = out;
    } else {
      attrs["scales"] = *scales;
    }
  } else {
    return ctx.Fail("inputs", "{} needs constant scales or sizes", ctx.op_type());
  }
  auto out = ctx.Emit("Resize", {ctx.in_tensor(0)}, attrs);
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerDepthSpace(NodeContext& ctx) {
  AttributeMap attrs = {{"block_size", ctx.Int("blocksize", 0)}};
  if (ctx.op_type() == "DepthToSpace") attrs["mode"] = ctx.String("mode", "DCR");
  auto out = ctx.Emit(ctx.op_type(), {ctx.in_tensor(0)}, attrs);
  return out.ok() ? Status::Ok() : out.status();
}

}  // namespace

void RegisterNnLowerings(std::unordered_map<std::string, LowerFn>* t) {
  (*t)["Conv"] = LowerConv;
  (*t)["ConvTranspose"] = LowerConvTranspose;
  (*t)["Gemm"] = LowerGemm;
  (*t)["MatMul"] = LowerMatMul;
  (*t)["Einsum"] = LowerEinsum;
  (*t)["MaxPool"] = LowerMaxPool;
  (*t)["AveragePool"] = LowerAveragePool;
  (*t)["GlobalAveragePool"] = LowerGlobalPool;
  (*t)["GlobalMaxPool"] = LowerGlobalPool;
  (*t)["BatchNormalization"] = LowerBatchNorm;
  (*t)["Softmax"] = LowerSoftmax;
  (*t)["LogSoftmax"] = LowerLogSoftmax;
  (*t)["LRN"] = LowerLrn;
  (*t)["InstanceNormalization"] = LowerInstanceNorm;
  (*t)["LayerNormalization"] = LowerLayerNorm;
  (*t)["GroupNormalization"] = LowerGroupNorm;
  (*t)["LSTM"] = LowerRecurrent;
  (*t)["GRU"] = LowerRecurrent;
  (*t)["Resize"] = LowerResize;
  (*t)["Upsample"] = LowerResize;
  (*t)["DepthToSpace"] = LowerDepthSpace;
  (*t)["SpaceToDepth"] = LowerDepthSpace;
}

}  // namespace qairt::onnx_import
