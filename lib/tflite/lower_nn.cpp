// Lowering of TFLite's neural-network builtins: CONV_2D, DEPTHWISE_CONV_2D,
// TRANSPOSE_CONV (and MediaPipe's custom Convolution2DTransposeBias),
// FULLY_CONNECTED, BATCH_MATMUL, pooling, SOFTMAX / LOG_SOFTMAX /
// L2_NORMALIZATION, RESIZE_* and DEPTH_TO_SPACE / SPACE_TO_DEPTH. The ops
// whose IR form is NCHW read their inputs through GetNchw.
#include <algorithm>
#include <cstring>

#include "ir/ops/shape_helpers.h"
#include "tflite/tflite_importer.h"

namespace qairt::tflite_import {
namespace {

// SAME/VALID -> explicit [begin, end] for one spatial dim: TFLite's SAME is
// ONNX's SAME_UPPER (tflite padding.h puts the odd unit at the end).
Result<ops::DimPads> TflitePads(Importer& imp, OpCtx& c, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                           bool same) {
  const auto pads = ops::WindowPads(same ? ops::AutoPad::kSameUpper : ops::AutoPad::kValid, in, k, stride, dilation, {});
  if (!pads) return imp.Fail(c, "", "window of {} with stride {} and dilation {} over {} elements is out of range", k,
                             stride, dilation, in);
  return *pads;
}

// A transposed convolution whose inputs sit at `x_in`, `w_in` (OHWI) and
// `b_in` (absent: no bias), as TRANSPOSE_CONV and MediaPipe's custom
// Convolution2DTransposeBias both compute it.
Status EmitTransposeConv(OpCtx& c, size_t x_in, size_t w_in, size_t b_in, int64_t sh, int64_t sw, bool same,
                         int act) {
  Importer& imp = c.imp;
  if (sh < 1 || sw < 1) return imp.Fail(c, "builtin_options", "strides ({}, {}) must be >= 1", sh, sw);
  const Val& w = imp.In(c, w_in);
  const Val& x = imp.In(c, x_in);
  const Val& y = imp.Out(c, 0);
  if (x.shape.rank() != 4 || w.shape.rank() != 4 || y.shape.rank() != 4)
    return imp.Fail(c, "inputs", "input {}, weights {} and output {} must be 4-D", x.shape.ToString(),
                    w.shape.ToString(), y.shape.ToString());
  if (!w.is_const()) return imp.Fail(c, fmt::format("inputs[{}]", w_in), "weights must be a constant");
  if (!x.shape.fully_known() || !w.shape.fully_known() || !y.shape.fully_known())
    return imp.Fail(c, "inputs", "transposed convolution needs static shapes");
  const Ints xs = x.shape.extents(), ws = w.shape.extents(), ys = y.shape.extents();
  TRY(xin, imp.GetNchw(c, x_in));
  TRY(wid, imp.GetPermutedConst(c, w_in, {3, 0, 1, 2}, "weight"));  // OHWI -> IOHW
  std::vector<TensorId> inputs = {xin, wid};
  if (c.has_input(b_in)) {
    TRY(b, imp.Get(c, b_in));
    inputs.push_back(b);
  }
  Ints pads(4, 0), out_pad(2, 0);
  const int64_t in[2] = {xs[1], xs[2]}, k[2] = {ws[1], ws[2]}, s[2] = {sh, sw}, out[2] = {ys[1], ys[2]};
  for (size_t i = 0; i < 2; ++i) {
    const int64_t total = (in[i] - 1) * s[i] + k[i] - out[i];
    if (total >= 0) {
      pads[i] = same ? total / 2 : 0;
      pads[i + 2] = total - pads[i];
    } else {
      out_pad[i] = -total;
    }
  }
  AttributeMap attrs = {{"strides", Ints{sh, sw}}, {"pads", pads}, {"dilations", Ints{1, 1}}, {"group", int64_t{1}}};
  if (out_pad[0] || out_pad[1]) attrs["output_padding"] = out_pad;
  return Done(imp.Emit(c, "TransposeConv2d", inputs, attrs, 0, true, act));
}

}  // namespace

Status LowerConv(OpCtx& c) {
  Importer& imp = c.imp;
  const bool depthwise = c.code == kDepthwiseConv2d;
  int64_t sw = 0, sh = 0, dw = 1, dh = 1;
  bool same = true;
  int act = 0;
  if (depthwise) {
    const auto* o = c.op.builtin_options_as_DepthwiseConv2DOptions();
    if (!o) return imp.Fail(c, "builtin_options", "DepthwiseConv2DOptions are missing");
    sw = o->stride_w(); sh = o->stride_h(); dw = o->dilation_w_factor(); dh = o->dilation_h_factor();
    same = o->padding() == fb::Padding::SAME; act = ActOf(o->fused_activation_function());
  } else {
    const auto* o = c.op.builtin_options_as_Conv2DOptions();
    if (!o) return imp.Fail(c, "builtin_options", "Conv2DOptions are missing");
    sw = o->stride_w(); sh = o->stride_h(); dw = o->dilation_w_factor(); dh = o->dilation_h_factor();
    same = o->padding() == fb::Padding::SAME; act = ActOf(o->fused_activation_function());
  }
  if (sw < 1 || sh < 1 || dw < 1 || dh < 1)
    return imp.Fail(c, "builtin_options", "strides ({}, {}) and dilations ({}, {}) must be >= 1", sh, sw, dh, dw);
  const Val& x = imp.In(c, 0);
  const Val& w = imp.In(c, 1);
  if (x.shape.rank() != 4 || w.shape.rank() != 4)
    return imp.Fail(c, "inputs", "input {} and filter {} must be 4-D", x.shape.ToString(), w.shape.ToString());
  const Ints xs = x.shape.extents(), ws = w.shape.extents();
  const int64_t kh = ws[1], kw = ws[2];
  const Ints perm = depthwise ? Ints{3, 0, 1, 2} : Ints{0, 3, 1, 2};
  TRY(xin, imp.GetNchw(c, 0));
  TensorId wid;
  if (w.is_const()) {
    TRY(t, imp.GetPermutedConst(c, 1, perm, "weight"));
    wid = t;
  } else {
    TRY(raw, imp.Get(c, 1));
    TRY(t, imp.EmitTemp(c, "Transpose", "weight_layout", {raw}, {{"perm", perm}}));
    wid = t;
  }
  std::vector<TensorId> inputs = {xin, wid};
  if (c.has_input(2)) {
    TRY(b, imp.Get(c, 2));
    inputs.push_back(b);
  }
  const auto ph = TflitePads(imp, c, xs[1], kh, sh, dh, same);
  if (!ph.ok()) return ph.status();
  const auto pw = TflitePads(imp, c, xs[2], kw, sw, dw, same);
  if (!pw.ok()) return pw.status();
  const Ints pads = {ph.value().begin, pw.value().begin, ph.value().end, pw.value().end};
  AttributeMap attrs = {{"strides", Ints{sh, sw}}, {"dilations", Ints{dh, dw}}, {"pads", pads}};
  std::string type = "Conv2d";
  if (depthwise) {
    type = "DepthWiseConv2d";
    attrs["group"] = xs[3];
  } else {
    if (ws[3] <= 0 || xs[3] % ws[3] != 0)
      return imp.Fail(c, "inputs[1]", "input has {} channels, not a multiple of the filter's {}", xs[3], ws[3]);
    attrs["group"] = xs[3] / ws[3];
  }
  return Done(imp.Emit(c, type, inputs, attrs, 0, true, act));
}

Status LowerTransposeConv(OpCtx& c) {
  const auto* o = c.op.builtin_options_as_TransposeConvOptions();
  if (!o) return c.imp.Fail(c, "builtin_options", "TransposeConvOptions are missing");
  return EmitTransposeConv(c, 2, 1, 3, o->stride_h(), o->stride_w(), o->padding() == fb::Padding::SAME,
                           ActOf(o->fused_activation_function()));
}

// MediaPipe's Convolution2DTransposeBias (mediapipe/util/tflite/operations/
// transpose_conv_bias.cc): inputs data, OHWI weights, bias; its custom options
// are the raw struct TfLiteTransposeConvParams {int32 padding (1 SAME,
// 2 VALID); int32 stride_width; int32 stride_height}, little-endian.
Status LowerConvolution2DTransposeBias(OpCtx& c) {
  const auto* opts = c.op.custom_options();
  if (!opts || opts->size() < 12)
    return c.imp.Fail(c, "custom_options", "Convolution2DTransposeBias needs 12 bytes of options (padding, "
                      "stride_width, stride_height), got {}", opts ? opts->size() : 0);
  if (c.num_inputs() != 3 || !c.has_input(0) || !c.has_input(1) || !c.has_input(2))
    return c.imp.Fail(c, "inputs", "Convolution2DTransposeBias takes data, weights and bias");
  int32_t p[3];
  std::memcpy(p, opts->data(), sizeof p);
  if (p[0] != 1 && p[0] != 2)
    return c.imp.Fail(c, "custom_options", "padding {} is neither SAME (1) nor VALID (2)", p[0]);
  return EmitTransposeConv(c, 0, 1, 2, p[2], p[1], p[0] == 1, 0);  // no fused activation
}

Status LowerFullyConnected(OpCtx& c) {
  Importer& imp = c.imp;
  const auto* o = c.op.builtin_options_as_FullyConnectedOptions();
  const int act = o ? ActOf(o->fused_activation_function()) : 0;
  if (o && o->weights_format() != 0)
    return imp.Fail(c, "builtin_options.weights_format", "shuffled weights (format {}) are not supported",
                    o->weights_format());
  const bool keep = o && o->keep_num_dims();
  const Val& x = imp.In(c, 0);
  const Val& w = imp.In(c, 1);
  const Val& y = imp.Out(c, 0);
  if (w.shape.rank() != 2) return imp.Fail(c, "inputs[1]", "weights must be 2-D [out, in], got {}", w.shape.ToString());
  TRY(xin, imp.Get(c, 0));
  TensorId a = xin;
  if (!keep && x.shape.rank() != 2) {
    const int64_t kdim = w.shape[1].value;
    const auto n = x.shape.element_count().value_or(0);
    if (kdim <= 0 || n % static_cast<uint64_t>(kdim) != 0)
      return imp.Fail(c, "inputs[0]", "input {} cannot be flattened to [*, {}]", x.shape.ToString(), kdim);
    TRY(r, imp.EmitTemp(c, "Reshape", "flatten", {xin},
                        {{"shape", Ints{static_cast<int64_t>(n / static_cast<uint64_t>(kdim)), kdim}}}));
    a = r;
  }
  TRY(wid, imp.Get(c, 1));
  std::vector<TensorId> inputs = {a, wid};
  if (c.has_input(2)) {
    TRY(b, imp.Get(c, 2));
    inputs.push_back(b);
  }
  (void)y;
  return Done(imp.Emit(c, "FullyConnected", inputs, {}, 0, false, act));
}

Status LowerPool(OpCtx& c) {
  Importer& imp = c.imp;
  const auto* o = c.op.builtin_options_as_Pool2DOptions();
  if (!o) return imp.Fail(c, "builtin_options", "Pool2DOptions are missing");
  const int64_t sh = o->stride_h(), sw = o->stride_w(), fh = o->filter_height(), fw = o->filter_width();
  if (sh < 1 || sw < 1 || fh < 1 || fw < 1)
    return imp.Fail(c, "builtin_options", "strides ({}, {}) and filter ({}, {}) must be >= 1", sh, sw, fh, fw);
  const Val& x = imp.In(c, 0);
  if (x.shape.rank() != 4) return imp.Fail(c, "inputs[0]", "input must be 4-D, got {}", x.shape.ToString());
  const Ints xs = x.shape.extents();
  const bool same = o->padding() == fb::Padding::SAME;
  const auto ph = TflitePads(imp, c, xs[1], fh, sh, 1, same);
  if (!ph.ok()) return ph.status();
  const auto pw = TflitePads(imp, c, xs[2], fw, sw, 1, same);
  if (!pw.ok()) return pw.status();
  TRY(xin, imp.GetNchw(c, 0));
  AttributeMap attrs = {{"kernel_shape", Ints{fh, fw}}, {"strides", Ints{sh, sw}},
                        {"pads", Ints{ph.value().begin, pw.value().begin, ph.value().end, pw.value().end}},
                        {"ceil_mode", int64_t{0}}};
  const bool avg = c.code == kAveragePool2d;
  if (avg) attrs["count_include_pad"] = int64_t{0};  // TFLite averages the valid elements only
  return Done(imp.Emit(c, avg ? "PoolAvg2d" : "PoolMax2d", {xin}, attrs, 0, true,
                       ActOf(o->fused_activation_function())));
}

Status LowerSoftmax(OpCtx& c) {
  Importer& imp = c.imp;
  TRY(x, imp.Get(c, 0));
  if (c.code == kLogSoftmax) return Done(imp.Emit(c, "LogSoftmax", {x}, {{"axis", int64_t{-1}}}));
  if (c.code == kL2Normalization) return Done(imp.Emit(c, "L2Norm", {x}, {{"axis", int64_t{-1}}}));
  const auto* o = c.op.builtin_options_as_SoftmaxOptions();
  const double beta = o ? o->beta() : 1.0;
  return Done(imp.Emit(c, "Softmax", {x}, {{"axis", int64_t{-1}}, {"beta", beta}}));
}

Status LowerResize(OpCtx& c) {
  Importer& imp = c.imp;
  const bool bilinear = c.code == kResizeBilinear;
  bool align = false, half = false;
  if (bilinear) {
    if (const auto* o = c.op.builtin_options_as_ResizeBilinearOptions()) {
      align = o->align_corners();
      half = o->half_pixel_centers();
    }
  } else if (const auto* o = c.op.builtin_options_as_ResizeNearestNeighborOptions()) {
    align = o->align_corners();
    half = o->half_pixel_centers();
  }
  auto size = imp.ConstInts(imp.In(c, 1));
  const Val& x = imp.In(c, 0);
  if (!size || size->size() != 2) return imp.Fail(c, "inputs[1]", "size must be an int32 constant [new_height, new_width]");
  if (x.shape.rank() != 4) return imp.Fail(c, "inputs[0]", "input must be 4-D, got {}", x.shape.ToString());
  TRY(xin, imp.GetNchw(c, 0));
  std::string ctm = align ? "align_corners" : half ? (bilinear ? "half_pixel" : "tf_half_pixel_for_nn") : "asymmetric";
  AttributeMap attrs = {{"mode", std::string(bilinear ? "linear" : "nearest")},
                        {"coordinate_transformation_mode", ctm},
                        {"nearest_mode", std::string(align ? "round_prefer_ceil" : "floor")},
                        {"sizes", Ints{x.shape[0].value, x.shape[3].value, (*size)[0], (*size)[1]}}};
  return Done(imp.Emit(c, "Resize", {xin}, attrs, 0, true));
}

Status LowerDepthSpace(OpCtx& c) {
  Importer& imp = c.imp;
  int64_t block = 0;
  if (c.code == kDepthToSpace) {
    if (const auto* o = c.op.builtin_options_as_DepthToSpaceOptions()) block = o->block_size();
  } else if (const auto* o = c.op.builtin_options_as_SpaceToDepthOptions()) {
    block = o->block_size();
  }
  if (block < 1) return imp.Fail(c, "builtin_options.block_size", "block_size must be >= 1, got {}", block);
  TRY(xin, imp.GetNchw(c, 0));
  AttributeMap attrs = {{"block_size", block}};
  if (c.code == kDepthToSpace) attrs["mode"] = std::string("DCR");  // TF's channel order
  return Done(imp.Emit(c, c.code == kDepthToSpace ? "DepthToSpace" : "SpaceToDepth", {xin}, attrs, 0, true));
}

Status LowerBatchMatmul(OpCtx& c) {
  Importer& imp = c.imp;
  const auto* o = c.op.builtin_options_as_BatchMatMulOptions();
  TRY(a, imp.Get(c, 0));
  TRY(b, imp.Get(c, 1));
  return Done(imp.Emit(c, "MatMul", {a, b},
                       {{"transpose_in0", int64_t{o && o->adj_x()}}, {"transpose_in1", int64_t{o && o->adj_y()}}}));
}

}  // namespace qairt::tflite_import
