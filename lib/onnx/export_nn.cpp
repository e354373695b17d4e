// ONNX export of the IR's neural-network ops: convolutions, FullyConnected,
// MatMul, pooling, normalisations, softmax, recurrent cells, resizing
// (reverse of lib/onnx/lower_nn.cpp).
#include <algorithm>
#include <cmath>

#include "onnx/exporter.h"
#include "onnx/onnx_tensor.h"

namespace qairt::onnx_export {
namespace {

using Ints = std::vector<int64_t>;

void CopyInts(OpContext& ctx, onnx::NodeProto* n, const char* name, const char* onnx_name = nullptr) {
  if (auto v = ctx.Ints(name)) SetAttr(n, onnx_name ? onnx_name : name, *v);
}

bool AllOnes(const std::optional<Ints>& v) {
  if (!v) return true;
  for (int64_t x : *v)
    if (x != 1) return false;
  return true;
}

Status ExportConv(OpContext& ctx) {
  const bool transposed = ctx.op().type.rfind("TransposeConv", 0) == 0;
  int64_t group = ctx.Int("group", 1);
  if (ctx.op().type == "DepthWiseConv2d" && !ctx.has("group")) {
    const Shape& x = ctx.in_tensor(0).shape;
    if (!x.rank_known() || x.rank() != 4 || !x[1].known())
      return ctx.Fail("DepthWiseConv2d without a group attribute needs the input's channel count, got {}",
                      x.ToString());
    group = x[1].value;
  }
  auto* n = ctx.Node(transposed ? "ConvTranspose" : "Conv", {ctx.in(0), ctx.in(1), ctx.in(2)}, {ctx.out(0)});
  CopyInts(ctx, n, "kernel_shape");
  CopyInts(ctx, n, "strides");
  CopyInts(ctx, n, "pads");
  CopyInts(ctx, n, "dilations");
  if (group != 1) SetAttr(n, "group", group);
  if (ctx.has("auto_pad")) SetAttr(n, "auto_pad", ctx.String("auto_pad", "NOTSET"));
  if (transposed) {
    CopyInts(ctx, n, "output_padding");
    CopyInts(ctx, n, "output_shape");
  }
  return Status::Ok();
}

// Transposes the last two dims of `name` (rank r); returns the new value.
std::string SwapLastTwo(OpContext& ctx, const std::string& name, size_t r, const std::string& suffix) {
  Ints perm;
  for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(i));
  std::swap(perm[r - 2], perm[r - 1]);
  const std::string t = ctx.Temp(suffix);
  SetAttr(ctx.Node("Transpose", {name}, {t}, suffix), "perm", perm);
  return t;
}

Status ExportFullyConnected(OpContext& ctx) {
  const auto rank = ctx.in_rank(0);
  const auto w_rank = ctx.in_rank(1);
  if (w_rank && *w_rank != 2) return ctx.Fail("weight must be 2-D [N, K], got rank {}", *w_rank);
  if (rank && FullyConnectedExportsAsGemm(ctx.op(), *rank)) {
    SetAttr(ctx.Node("Gemm", {ctx.in(0), ctx.in(1), ctx.in(2)}, {ctx.out(0)}), "transB", int64_t{1});
    return Status::Ok();
  }
  // x[..., K] @ W^T (+ b): MatMul broadcasts over the leading dims.
  const std::string wt = SwapLastTwo(ctx, ctx.in(1), 2, "weight_t");
  if (!ctx.has_in(2)) {
    ctx.Node("MatMul", {ctx.in(0), wt}, {ctx.out(0)}, "matmul");
    return Status::Ok();
  }
  const std::string mm = ctx.Temp("matmul");
  ctx.Node("MatMul", {ctx.in(0), wt}, {mm}, "matmul");
  ctx.Node("Add", {mm, ctx.in(2)}, {ctx.out(0)}, "bias");
  return Status::Ok();
}

Status ExportMatMul(OpContext& ctx) {
  std::string a = ctx.in(0), b = ctx.in(1);
  for (size_t k = 0; k < 2; ++k) {
    if (!ctx.Int(k == 0 ? "transpose_in0" : "transpose_in1", 0)) continue;
    const auto r = ctx.in_rank(k);
    if (!r) return ctx.Fail("transpose_in{} needs input {} of known rank", k, k);
    if (*r < 2) continue;  // a vector is its own transpose
    (k == 0 ? a : b) = SwapLastTwo(ctx, k == 0 ? a : b, *r, k == 0 ? "transpose_a" : "transpose_b");
  }
  ctx.Node("MatMul", {a, b}, {ctx.out(0)});
  return Status::Ok();
}

// The pool's window is its input's whole spatial extent, unpadded.
bool CoversWholePlanes(OpContext& ctx) {
  const Shape& s = ctx.in_tensor(0).shape;
  const auto kernel = ctx.Ints("kernel_shape");
  if (!s.fully_known() || s.rank() < 3 || !kernel || kernel->size() + 2 != s.rank()) return false;
  for (size_t i = 0; i < kernel->size(); ++i)
    if ((*kernel)[i] != s[i + 2].value) return false;
  const auto pads = ctx.Ints("pads");
  if (pads && !std::all_of(pads->begin(), pads->end(), [](int64_t p) { return p == 0; })) return false;
  const std::string auto_pad = ctx.String("auto_pad", "NOTSET");
  return auto_pad == "NOTSET" || auto_pad == "VALID";
}

Status ExportPool(OpContext& ctx) {
  const std::string& type = ctx.op().type;
  const bool avg = type.rfind("PoolAvg", 0) == 0, l2 = type == "L2Pool2d";
  const auto dilations = ctx.Ints("dilations");
  if (avg && !AllOnes(dilations) && ctx.opset() < 19)
    return ctx.Fail("AveragePool with dilations needs opset 19 (exporting opset {})", ctx.opset());
  if (l2 && !AllOnes(dilations)) return ctx.Fail("LpPool has no dilations");
  if (avg && AveragePoolExportsAsGlobal(ctx.op()) && CoversWholePlanes(ctx)) {
    ctx.Node("GlobalAveragePool", {ctx.in(0)}, {ctx.out(0)});
    return Status::Ok();
  }
  auto* n = ctx.Node(avg ? "AveragePool" : l2 ? "LpPool" : "MaxPool", {ctx.in(0)}, {ctx.out(0)});
  CopyInts(ctx, n, "kernel_shape");
  CopyInts(ctx, n, "strides");
  CopyInts(ctx, n, "pads");
  if (!AllOnes(dilations)) SetAttr(n, "dilations", *dilations);
  if (const int64_t c = ctx.Int("ceil_mode", 0); c && !l2) SetAttr(n, "ceil_mode", c);
  if (avg && ctx.Int("count_include_pad", 0)) SetAttr(n, "count_include_pad", int64_t{1});
  if (l2) SetAttr(n, "p", int64_t{2});
  if (ctx.has("auto_pad")) SetAttr(n, "auto_pad", ctx.String("auto_pad", "NOTSET"));
  return Status::Ok();
}

Status ExportSoftmax(OpContext& ctx) {
  const std::string type = ctx.op().type == "LogSoftmax" ? "LogSoftmax" : "Softmax";
  int64_t axis = ctx.Int("axis", -1);
  std::string x = ctx.in(0);
  if (const double beta = ctx.Float("beta", 1.0); beta != 1.0) {
    auto b = ctx.Scalar("beta", ctx.in_dtype(0), beta);
    if (!b.ok()) return b.status();
    const std::string scaled = ctx.Temp("beta_x");
    ctx.Node("Mul", {x, b.value()}, {scaled}, "beta");
    x = scaled;
  }
  const auto r = ctx.in_rank(0);
  if (r && axis < 0) axis += static_cast<int64_t>(*r);
  if (ctx.opset() >= 13 || (r && axis == static_cast<int64_t>(*r) - 1)) {
    SetAttr(ctx.Node(type, {x}, {ctx.out(0)}), "axis", axis);
    return Status::Ok();
  }
  // Before opset 13 Softmax flattens from `axis` on: move the axis last and back.
  if (!r) return ctx.Fail("Softmax over axis {} needs an input of known rank below opset 13", axis);
  Ints perm;
  for (size_t i = 0; i < *r; ++i) perm.push_back(static_cast<int64_t>(i));
  std::swap(perm[static_cast<size_t>(axis)], perm.back());
  const std::string t = ctx.Temp("to_last"), s = ctx.Temp("softmax");
  SetAttr(ctx.Node("Transpose", {x}, {t}, "to_last"), "perm", perm);
  SetAttr(ctx.Node(type, {t}, {s}, "softmax"), "axis", static_cast<int64_t>(*r) - 1);
  SetAttr(ctx.Node("Transpose", {s}, {ctx.out(0)}, "from_last"), "perm", perm);
  return Status::Ok();
}

// ReduceMean over `axes` (attribute before opset 18, input from 18).
void ReduceMean(OpContext& ctx, const std::string& in, const std::string& out, const Ints& axes,
                const std::string& suffix) {
  if (ctx.opset() >= 18) {
    SetAttr(ctx.Node("ReduceMean", {in, ctx.Int64s(suffix + "_axes", axes)}, {out}, suffix), "keepdims", int64_t{1});
  } else {
    auto* n = ctx.Node("ReduceMean", {in}, {out}, suffix);
    SetAttr(n, "axes", axes);
    SetAttr(n, "keepdims", int64_t{1});
  }
}

// (x - mean) / sqrt(var + eps) over `axes`, var = mean((x - mean)^2); or
// x / sqrt(mean(x^2) + eps) when `rms`.
Result<std::string> Normalize(OpContext& ctx, const std::string& x, const Ints& axes, double eps, bool rms) {
  auto e = ctx.Scalar("epsilon", ctx.in_dtype(0), eps);
  if (!e.ok()) return e.status();
  std::string centered = x;
  if (!rms) {
    const std::string mean = ctx.Temp("mean");
    centered = ctx.Temp("centered");
    ReduceMean(ctx, x, mean, axes, "mean");
    ctx.Node("Sub", {x, mean}, {centered}, "center");
  }
  const std::string sq = ctx.Temp("square"), var = ctx.Temp("variance"), ve = ctx.Temp("variance_eps"),
                    sd = ctx.Temp("stddev"), normed = ctx.Temp("normalized");
  ctx.Node("Mul", {centered, centered}, {sq}, "square");
  ReduceMean(ctx, sq, var, axes, "variance");
  ctx.Node("Add", {var, e.value()}, {ve}, "add_eps");
  ctx.Node("Sqrt", {ve}, {sd}, "sqrt");
  ctx.Node("Div", {centered, sd}, {normed}, "normalize");
  return normed;
}

// y = normed * gamma + beta, either optional; the last node writes out(0).
void ScaleShift(OpContext& ctx, std::string y, const std::string& gamma, const std::string& beta) {
  if (!gamma.empty()) {
    const std::string t = beta.empty() ? ctx.out(0) : ctx.Temp("scaled");
    ctx.Node("Mul", {y, gamma}, {t}, "scale");
    y = t;
  }
  if (!beta.empty()) ctx.Node("Add", {y, beta}, {ctx.out(0)}, "shift");
  if (gamma.empty() && beta.empty()) ctx.Node("Identity", {y}, {ctx.out(0)}, "identity");
}

Result<Ints> TrailingAxes(OpContext& ctx, size_t r) {
  Ints axes;
  if (ctx.has("axes")) {
    axes = *ctx.Ints("axes");
    for (auto& a : axes) a = a < 0 ? a + static_cast<int64_t>(r) : a;
    std::sort(axes.begin(), axes.end());
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes[i] != static_cast<int64_t>(r - axes.size() + i))
        return ctx.Fail("axes must be the trailing dims of the input");
    return axes;
  }
  int64_t axis = ctx.Int("axis", -1);
  if (axis < 0) axis += static_cast<int64_t>(r);
  if (axis < 0 || axis >= static_cast<int64_t>(r)) return ctx.Fail("axis {} out of range for rank {}", axis, r);
  for (int64_t a = axis; a < static_cast<int64_t>(r); ++a) axes.push_back(a);
  return axes;
}

Status ExportLayerNorm(OpContext& ctx) {
  const bool rms = ctx.op().type == "RmsNorm";
  const auto r = ctx.in_rank(0);
  if (!r) return ctx.Fail("needs an input of known rank");
  auto axes = TrailingAxes(ctx, *r);
  if (!axes.ok()) return axes.status();
  const double eps = ctx.Float("epsilon", 1e-5);
  if (!rms && ctx.opset() >= 17 && ctx.has_in(1) && !axes.value().empty()) {
    auto* n = ctx.Node("LayerNormalization", {ctx.in(0), ctx.in(1), ctx.in(2)}, {ctx.out(0)});
    SetAttr(n, "axis", axes.value().front());
    SetAttr(n, "epsilon", eps);
    return Status::Ok();
  }
  auto normed = Normalize(ctx, ctx.in(0), axes.value(), eps, rms);
  if (!normed.ok()) return normed.status();
  ScaleShift(ctx, normed.value(), ctx.in(1), ctx.in(2));
  return Status::Ok();
}

// Reshapes a per-channel [C] vector to [C, 1, ...] (rank r - 1) so it
// broadcasts against [N, C, ...].
std::string PerChannel(OpContext& ctx, const std::string& v, size_t r, const std::string& suffix) {
  if (v.empty()) return v;
  Ints shape = {-1};
  for (size_t i = 2; i < r; ++i) shape.push_back(1);
  const std::string t = ctx.Temp(suffix);
  ctx.Node("Reshape", {v, ctx.Int64s(suffix + "_shape", shape)}, {t}, suffix);
  return t;
}

Status ExportGroupNorm(OpContext& ctx) {
  const auto r = ctx.in_rank(0);
  if (!r || *r < 3) return ctx.Fail("needs an input [N, C, ...] of known rank");
  const int64_t groups = ctx.Int("num_groups", 1);
  // [N, G, -1] -> normalise over the last axis -> back to the input's shape.
  const std::string grouped = ctx.Temp("grouped"), shape = ctx.Temp("input_shape"), back = ctx.Temp("ungrouped");
  ctx.Node("Reshape", {ctx.in(0), ctx.Int64s("group_shape", {0, groups, -1})}, {grouped}, "group");
  auto normed = Normalize(ctx, grouped, {2}, ctx.Float("epsilon", 1e-5), false);
  if (!normed.ok()) return normed.status();
  // The IR accepts scale/bias per channel [C] or (ONNX opset 18) per group
  // [num_groups]; the latter apply to the grouped tensor [N, G, L].
  const Shape& xs = ctx.in_tensor(0).shape;
  auto per_group = [&](size_t k) {
    if (!ctx.has_in(k) || !xs[1].known() || xs[1].value == groups) return false;
    const Shape& s = ctx.in_tensor(k).shape;
    return s.rank_known() && s.rank() == 1 && s[0].known() && s[0].value == groups;
  };
  std::string y = normed.value();
  if (per_group(1) || per_group(2)) {
    const std::string g = per_group(1) ? PerChannel(ctx, ctx.in(1), 3, "group_gamma") : std::string();
    const std::string b = per_group(2) ? PerChannel(ctx, ctx.in(2), 3, "group_beta") : std::string();
    if (!g.empty()) {
      const std::string t = ctx.Temp("group_scaled");
      ctx.Node("Mul", {y, g}, {t}, "group_scale");
      y = t;
    }
    if (!b.empty()) {
      const std::string t = ctx.Temp("group_shifted");
      ctx.Node("Add", {y, b}, {t}, "group_shift");
      y = t;
    }
  }
  ctx.Node("Shape", {ctx.in(0)}, {shape}, "shape");
  ctx.Node("Reshape", {y, shape}, {back}, "ungroup");
  ScaleShift(ctx, back, per_group(1) ? std::string() : PerChannel(ctx, ctx.in(1), *r, "gamma"),
             per_group(2) ? std::string() : PerChannel(ctx, ctx.in(2), *r, "beta"));
  return Status::Ok();
}

// Channel count from the input's dim 1 or a per-channel parameter.
std::optional<int64_t> Channels(OpContext& ctx) {
  const Shape& x = ctx.in_tensor(0).shape;
  if (x.rank_known() && x.rank() > 1 && x[1].known()) return x[1].value;
  for (size_t k = 1; k < 3; ++k)
    if (ctx.has_in(k) && ctx.in_tensor(k).shape.rank_known() && ctx.in_tensor(k).shape.rank() == 1 &&
        ctx.in_tensor(k).shape[0].known())
      return ctx.in_tensor(k).shape[0].value;
  return std::nullopt;
}

Status ExportInstanceNorm(OpContext& ctx) {
  std::string scale = ctx.in(1), bias = ctx.in(2);
  if (scale.empty() || bias.empty()) {
    const auto c = Channels(ctx);
    if (!c) return ctx.Fail("needs the channel count to supply the absent scale/bias");
    if (scale.empty()) scale = ctx.Floats1d("scale", std::vector<float>(static_cast<size_t>(*c), 1.0f));
    if (bias.empty()) bias = ctx.Floats1d("bias", std::vector<float>(static_cast<size_t>(*c), 0.0f));
  }
  SetAttr(ctx.Node("InstanceNormalization", {ctx.in(0), scale, bias}, {ctx.out(0)}), "epsilon",
          ctx.Float("epsilon", 1e-5));
  return Status::Ok();
}

// Batchnorm (mean/variance folded): BatchNormalization with mean 0, var 1, eps 0.
Status ExportBatchnorm(OpContext& ctx) {
  const auto c = Channels(ctx);
  if (!c) return ctx.Fail("needs the channel count");
  const auto n = static_cast<size_t>(*c);
  if (ctx.in_dtype(0) != DType::kFloat32) return ctx.Fail("only float32 Batchnorm is exported");
  std::string bias = ctx.in(2);
  if (bias.empty()) bias = ctx.Floats1d("bias", std::vector<float>(n, 0.0f));
  const std::string mean = ctx.Floats1d("mean", std::vector<float>(n, 0.0f));
  const std::string var = ctx.Floats1d("var", std::vector<float>(n, 1.0f));
  SetAttr(ctx.Node("BatchNormalization", {ctx.in(0), ctx.in(1), bias, mean, var}, {ctx.out(0)}), "epsilon", 0.0);
  return Status::Ok();
}

Status ExportLrn(OpContext& ctx) {
  auto* n = ctx.Node("LRN", {ctx.in(0)}, {ctx.out(0)});
  SetAttr(n, "size", ctx.Int("size", 1));
  SetAttr(n, "alpha", ctx.Float("alpha", 1e-4));
  SetAttr(n, "beta", ctx.Float("beta", 0.75));
  SetAttr(n, "bias", ctx.Float("bias", 1.0));
  return Status::Ok();
}

Status ExportRecurrent(OpContext& ctx) {
  const bool lstm = ctx.op().type == "Lstm";
  std::vector<std::string> in, out;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) in.push_back(ctx.in(k));
  for (size_t k = 0; k < ctx.num_outputs(); ++k) out.push_back(ctx.out(k));
  const int64_t layout = ctx.Int("layout", 0);
  if (layout != 0 && ctx.opset() < 14) return ctx.Fail("layout={} needs opset 14 (exporting opset {})", layout, ctx.opset());
  auto* n = ctx.Node(lstm ? "LSTM" : "GRU", in, out);
  if (ctx.has("hidden_size")) {
    SetAttr(n, "hidden_size", ctx.Int("hidden_size", 0));
  } else if (ctx.has_in(2) && ctx.in_tensor(2).shape.rank_known() && ctx.in_tensor(2).shape.rank() == 3 &&
             ctx.in_tensor(2).shape[2].known()) {
    SetAttr(n, "hidden_size", ctx.in_tensor(2).shape[2].value);
  }
  if (const std::string d = ctx.String("direction", "forward"); d != "forward") SetAttr(n, "direction", d);
  if (layout != 0) SetAttr(n, "layout", layout);
  if (!lstm && ctx.Int("linear_before_reset", 0)) SetAttr(n, "linear_before_reset", int64_t{1});
  return Status::Ok();
}

Status ExportResize(OpContext& ctx) {
  const Shape& x = ctx.in_tensor(0).shape;
  std::string roi = ctx.in(1), scales = ctx.in(2), sizes = ctx.in(3);
  if (auto s = ctx.Ints("sizes")) {
    Ints full = *s;
    if (x.rank_known() && full.size() + 2 == x.rank()) {
      if (!x[0].known() || !x[1].known())
        return ctx.Fail("spatial sizes need the input's batch and channel dims, got {}", x.ToString());
      full.insert(full.begin(), {x[0].value, x[1].value});
    }
    sizes = ctx.Int64s("sizes", full);
    scales.clear();
  } else if (auto f = ctx.Floats("scales")) {
    std::vector<float> full(f->begin(), f->end());
    if (x.rank_known() && full.size() + 2 == x.rank()) full.insert(full.begin(), {1.0f, 1.0f});
    scales = ctx.Floats1d("scales", full);
    sizes.clear();
  } else if (scales.empty() && sizes.empty()) {
    return ctx.Fail("needs sizes or scales");
  }
  if (ctx.opset() < 13) {  // roi and scales are required inputs before opset 13
    if (roi.empty()) roi = ctx.Floats1d("roi", {}, {0});
    if (scales.empty()) scales = ctx.Floats1d("scales", {}, {0});
  }
  auto* n = ctx.Node("Resize", {ctx.in(0), roi, scales, sizes}, {ctx.out(0)});
  std::string mode = ctx.String("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  SetAttr(n, "mode", mode);
  if (ctx.has("coordinate_transformation_mode"))
    SetAttr(n, "coordinate_transformation_mode", ctx.String("coordinate_transformation_mode", "half_pixel"));
  if (ctx.has("nearest_mode")) SetAttr(n, "nearest_mode", ctx.String("nearest_mode", "round_prefer_floor"));
  if (ctx.has("cubic_coeff_a")) SetAttr(n, "cubic_coeff_a", ctx.Float("cubic_coeff_a", -0.75));
  if (ctx.Int("exclude_outside", 0)) SetAttr(n, "exclude_outside", int64_t{1});
  return Status::Ok();
}

Status ExportDepthSpace(OpContext& ctx) {
  auto* n = ctx.Node(ctx.op().type, {ctx.in(0)}, {ctx.out(0)});
  SetAttr(n, "blocksize", ctx.Int("block_size", 0));
  if (ctx.op().type == "DepthToSpace" && ctx.has("mode")) SetAttr(n, "mode", ctx.String("mode", "DCR"));
  return Status::Ok();
}

Status ExportGridSample(OpContext& ctx) {
  if (ctx.opset() < 16) return ctx.Fail("GridSample needs opset 16 (exporting opset {})", ctx.opset());
  auto* n = ctx.Node("GridSample", {ctx.in(0), ctx.in(1)}, {ctx.out(0)});
  if (ctx.has("mode")) SetAttr(n, "mode", ctx.String("mode", "bilinear"));
  if (ctx.has("padding_mode")) SetAttr(n, "padding_mode", ctx.String("padding_mode", "zeros"));
  if (ctx.has("align_corners")) SetAttr(n, "align_corners", ctx.Int("align_corners", 0));
  return Status::Ok();
}

}  // namespace

void RegisterNnExports(std::unordered_map<std::string, ExportFn>* t) {
  for (const char* type : {"Conv1d", "Conv2d", "Conv3d", "DepthWiseConv2d", "TransposeConv1d", "TransposeConv2d",
                           "TransposeConv3d"})
    (*t)[type] = ExportConv;
  (*t)["FullyConnected"] = ExportFullyConnected;
  (*t)["MatMul"] = ExportMatMul;
  for (const char* type : {"PoolAvg2d", "PoolAvg3d", "PoolMax2d", "PoolMax3d", "L2Pool2d"}) (*t)[type] = ExportPool;
  (*t)["Softmax"] = ExportSoftmax;
  (*t)["LogSoftmax"] = ExportSoftmax;
  (*t)["LayerNorm"] = ExportLayerNorm;
  (*t)["RmsNorm"] = ExportLayerNorm;
  (*t)["GroupNorm"] = ExportGroupNorm;
  (*t)["InstanceNorm"] = ExportInstanceNorm;
  (*t)["Batchnorm"] = ExportBatchnorm;
  (*t)["Lrn"] = ExportLrn;
  (*t)["Lstm"] = ExportRecurrent;
  (*t)["Gru"] = ExportRecurrent;
  (*t)["Resize"] = ExportResize;
  (*t)["DepthToSpace"] = ExportDepthSpace;
  (*t)["SpaceToDepth"] = ExportDepthSpace;
  (*t)["GridSample"] = ExportGridSample;
}

}  // namespace qairt::onnx_export
