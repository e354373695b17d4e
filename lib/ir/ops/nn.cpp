// Neural-network ops: convolutions, pooling, fully connected, matmul,
// softmax, normalisations, resize and space/depth rearrangements. Layouts are
// ONNX's (NCHW activations, OIHW conv weights).
#include <cmath>

#include "ir/ops/families.h"
#include "ir/ops/shape_helpers.h"

namespace qairt::ops {
namespace {

// Dim i of a shape when its rank is known and large enough, else unknown.
Dim DimOr(const Shape& s, size_t i) { return s.rank_known() && i < s.rank() ? s[i] : Dim(); }

// Kernel extents from the weight's spatial dims, cross-checked against an
// optional kernel_shape attribute; -1 where unknown.
std::vector<int64_t> ConvKernel(InferContext& ctx, const Shape& w, size_t n, size_t first_spatial) {
  std::vector<int64_t> kernel(n, -1);
  std::optional<std::vector<int64_t>> attr;
  if (ctx.has_attr("kernel_shape")) attr = ReadIntList(ctx, "kernel_shape", {}, n, 1);
  for (size_t i = 0; i < n; ++i) {
    const Dim d = DimOr(w, first_spatial + i);
    if (attr && d.known() && d.value != (*attr)[i])
      ctx.Error(DiagKind::kShapeMismatch, "kernel_shape", "kernel_shape[{}] = {} but weight has {}", i, (*attr)[i],
                d.value);
    kernel[i] = d.known() ? d.value : attr ? (*attr)[i] : -1;
  }
  return kernel;
}

std::vector<Dim> SpatialOutputs(InferContext& ctx, const Shape& x, const std::vector<int64_t>& kernel, size_t n) {
  std::vector<Dim> dims(n);
  auto window = ReadWindowAttrs(ctx, n);
  if (!window) return dims;
  for (size_t i = 0; i < n; ++i) dims[i] = WindowOutputDim(ctx, DimOr(x, 2 + i), kernel[i], i, *window);
  return dims;
}

// ---- convolution -------------------------------------------------------------------

// Checks a (transposed) convolution's x and weight: the weight's dtype
// against x's and both ranks against n + 2 (both checked, so both get
// reported). False on a rank mismatch, after giving output 0 x's dtype and an
// unknown shape.
bool CheckConvOperands(InferContext& ctx, size_t n) {
  CheckWeightDType(ctx, 0, 1);
  const bool x_rank_ok = CheckRank(ctx, 0, n + 2);
  const bool ranks_ok = CheckRank(ctx, 1, n + 2) && x_rank_ok;
  if (!ranks_ok) SetOutput(ctx, 0, InputOrUnknown(ctx, 0).dtype, Shape());
  return ranks_ok;
}

void InferConv(InferContext& ctx, size_t n, bool depthwise) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const Shape& w = InputOrUnknown(ctx, 1).shape;
  if (!CheckConvOperands(ctx, n)) return;
  const Dim channels = DimOr(x.shape, 1), weight_in = DimOr(w, 1), weight_out = DimOr(w, 0);
  if (depthwise) {
    if (weight_in.known() && weight_in.value != 1)
      ctx.Error(DiagKind::kShapeMismatch, InputField(1), "depthwise weight must be [C*multiplier, 1, kh, kw], got {}",
                w.ToString());
    if (channels.known() && weight_out.known() && (channels.value == 0 || weight_out.value % channels.value != 0))
      ctx.Error(DiagKind::kShapeMismatch, InputField(1),
                "depthwise weight has {} output channels, not a multiple of the input's {} channels", weight_out.value,
                channels.value);
  } else {
    const int64_t group = ctx.Int("group", 1);
    if (group < 1) {
      ctx.Error(DiagKind::kAttribute, "group", "group must be >= 1, got {}", group);
    } else {
      if (channels.known() && weight_in.known() && CheckedMul(weight_in.value, group) != channels.value)
        ctx.Error(DiagKind::kShapeMismatch, InputField(1),
                  "input has {} channels but weight expects {} (C/group={}, group={})", channels.value,
                  CheckedMul(weight_in.value, group).value_or(-1), weight_in.value, group);
      if (weight_out.known() && weight_out.value % group != 0)
        ctx.Error(DiagKind::kShapeMismatch, InputField(1), "weight has {} output channels, not divisible by group {}",
                  weight_out.value, group);
    }
  }
  CheckVectorInput(ctx, 2, weight_out, "bias");
  const std::vector<int64_t> kernel = ConvKernel(ctx, w, n, 2);
  std::vector<Dim> dims = {DimOr(x.shape, 0), weight_out};
  for (Dim& d : SpatialOutputs(ctx, x.shape, kernel, n)) dims.push_back(std::move(d));
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

template <size_t N>
void InferConvN(InferContext& ctx) { InferConv(ctx, N, false); }
void InferDepthWiseConv2d(InferContext& ctx) { InferConv(ctx, 2, true); }

// out = stride*(in-1) + output_padding + dilation*(k-1) + 1 - pad_begin - pad_end
Dim TransposeOutputDim(InferContext& ctx, const Dim& in, int64_t kernel, size_t i, const WindowAttrs& w,
                       int64_t output_padding) {
  const int64_t stride = w.strides[i];
  const bool no_pads = w.pads[i] == 0 && w.pads[w.spatial_rank + i] == 0;
  if (kernel == 1 && stride == 1 && no_pads && output_padding == 0) return in;
  if (!in.known() || kernel < 0) return Dim();
  if (kernel == 0) {
    ctx.Error(DiagKind::kShapeMismatch, InputField(1), "kernel extent is 0");
    return Dim();
  }
  if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
    const Dim out = ComputedDim(ctx, CheckedMul(in.value, stride), "strides", "output size");
    // The executor pads by TransposeWindowPads, which must be computable for
    // a graph that validates.
    if (out.known() && !TransposeWindowPads(w.auto_pad, false, in.value, out.value, kernel, stride,
                                            w.dilations[i], output_padding, {})) {
      ctx.Error(DiagKind::kShapeMismatch, "strides", "padding for output size {} overflows", out.value);
      return Dim();
    }
    return out;
  }
  std::optional<int64_t> v = in.value == 0 ? std::optional<int64_t>(0) : CheckedMul(stride, in.value - 1);
  auto add = [&v](std::optional<int64_t> term) {
    if (v && term) v = CheckedAdd(*v, *term); else v = std::nullopt;
  };
  add(output_padding);
  add(CheckedMul(w.dilations[i], kernel - 1));
  add(1);
  add(CheckedSub(0, w.pads[i]));
  add(CheckedSub(0, w.pads[w.spatial_rank + i]));
  return ComputedDim(ctx, v, "pads", "transposed convolution output size");
}

void InferTransposeConv(InferContext& ctx, size_t n) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const Shape& w = InputOrUnknown(ctx, 1).shape;
  if (!CheckConvOperands(ctx, n)) return;
  const int64_t group = ctx.Int("group", 1);
  Dim out_channels;
  if (group < 1) {
    ctx.Error(DiagKind::kAttribute, "group", "group must be >= 1, got {}", group);
  } else {
    out_channels = MulDims(ctx, DimOr(w, 1), Dim(group), InputField(1));
  }
  if (!MergeDims(DimOr(x.shape, 1), DimOr(w, 0)))
    ctx.Error(DiagKind::kShapeMismatch, InputField(1), "input has {} channels but weight [C_in, C_out/group, ...] has {}",
              DimOr(x.shape, 1).value, DimOr(w, 0).value);
  CheckVectorInput(ctx, 2, out_channels, "bias");
  const std::vector<int64_t> kernel = ConvKernel(ctx, w, n, 2);
  std::vector<Dim> dims = {DimOr(x.shape, 0), out_channels};
  if (ctx.has_attr("output_shape")) {
    // Either the spatial dims or the full output shape, as ONNX Runtime accepts.
    std::vector<int64_t> output_shape = ctx.Ints("output_shape", {});
    if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (output_shape.size() != n) {
      ctx.Error(DiagKind::kAttribute, "output_shape", "output_shape has {} values, expected {}", output_shape.size(), n);
      output_shape.assign(n, -1);
    }
    for (int64_t v : output_shape) dims.push_back(v >= 0 ? Dim(v) : Dim());
    return SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
  }
  auto window = ReadWindowAttrs(ctx, n);
  auto output_padding = ReadIntList(ctx, "output_padding", std::vector<int64_t>(n, 0), n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!window || !output_padding) {
      dims.emplace_back();
      continue;
    }
    const int64_t op = (*output_padding)[i];
    if (op >= window->strides[i] && op >= window->dilations[i]) {
      ctx.Error(DiagKind::kAttribute, "output_padding", "output_padding[{}] = {} must be smaller than stride or dilation",
                i, op);
      dims.emplace_back();
      continue;
    }
    dims.push_back(TransposeOutputDim(ctx, DimOr(x.shape, 2 + i), kernel[i], i, *window, op));
  }
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

template <size_t N>
void InferTransposeConvN(InferContext& ctx) { InferTransposeConv(ctx, N); }

// ---- pooling ---------------------------------------------------------------------------

void InferPool(InferContext& ctx, size_t n) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  if (!CheckRank(ctx, 0, n + 2)) return SetOutput(ctx, 0, x.dtype, Shape());
  ctx.Int("count_include_pad", 0);  // type check only
  std::vector<int64_t> kernel(n, -1);
  if (!ctx.has_attr("kernel_shape")) {
    ctx.RequiredInts("kernel_shape");  // reports the missing attribute
  } else if (auto k = ReadIntList(ctx, "kernel_shape", {}, n, 1)) {
    kernel = *k;
  }
  std::vector<Dim> dims = {DimOr(x.shape, 0), DimOr(x.shape, 1)};
  for (Dim& d : SpatialOutputs(ctx, x.shape, kernel, n)) dims.push_back(std::move(d));
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

template <size_t N>
void InferPoolN(InferContext& ctx) { InferPool(ctx, N); }

// ---- fully connected / matmul --------------------------------------------------------

void InferFullyConnected(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const Shape& w = InputOrUnknown(ctx, 1).shape;
  CheckWeightDType(ctx, 0, 1);
  const bool x_rank_ok = CheckMinRank(ctx, 0, 1);
  const bool ranks_ok = CheckRank(ctx, 1, 2) && x_rank_ok;
  const Dim units = ranks_ok ? DimOr(w, 0) : Dim();
  if (ranks_ok && x.shape.rank_known() && !MergeDims(x.shape[x.shape.rank() - 1], DimOr(w, 1)))
    ctx.Error(DiagKind::kShapeMismatch, InputField(1), "input has K={} but weight [N, K] has K={}",
              x.shape[x.shape.rank() - 1].value, DimOr(w, 1).value);
  CheckVectorInput(ctx, 2, units, "bias");
  if (!ranks_ok || !x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape());
  std::vector<Dim> dims(x.shape.dims().begin(), x.shape.dims().end() - 1);
  dims.push_back(units);
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

void InferMatMul(InferContext& ctx) {
  const TensorType& a_in = InputOrUnknown(ctx, 0);
  const Shape& b_in = InputOrUnknown(ctx, 1).shape;
  CheckWeightDType(ctx, 0, 1);
  const bool transpose_a = ctx.Int("transpose_in0", 0) != 0, transpose_b = ctx.Int("transpose_in1", 0) != 0;
  const bool a_rank_ok = CheckMinRank(ctx, 0, 1);
  const bool ranks_ok = CheckMinRank(ctx, 1, 1) && a_rank_ok;
  if (!ranks_ok || !a_in.shape.rank_known() || !b_in.rank_known()) return SetOutput(ctx, 0, a_in.dtype, Shape());
  // numpy.matmul: a 1-D operand is promoted to a matrix and its extra dim dropped afterwards.
  const bool a_vector = a_in.shape.rank() == 1, b_vector = b_in.rank() == 1;
  std::vector<Dim> a = a_in.shape.dims(), b = b_in.dims();
  if (a_vector) a.insert(a.begin(), Dim(1));
  if (b_vector) b.emplace_back(1);
  if (transpose_a && !a_vector) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (transpose_b && !b_vector) std::swap(b[b.size() - 1], b[b.size() - 2]);
  const Dim& ka = a[a.size() - 1];
  const Dim& kb = b[b.size() - 2];
  if (!MergeDims(ka, kb))
    ctx.Error(DiagKind::kShapeMismatch, InputField(1), "inner dims differ: {} (K={}) vs {} (K={})",
              a_in.shape.ToString(), ka.value, b_in.ToString(), kb.value);
  auto batch = BroadcastShapes(ctx, Shape(std::vector<Dim>(a.begin(), a.end() - 2)),
                               Shape(std::vector<Dim>(b.begin(), b.end() - 2)), InputField(1));
  if (!batch) return SetOutput(ctx, 0, a_in.dtype, Shape());
  std::vector<Dim> dims = batch->dims();
  if (!a_vector) dims.push_back(a[a.size() - 2]);
  if (!b_vector) dims.push_back(b[b.size() - 1]);
  SetOutput(ctx, 0, a_in.dtype, Shape(std::move(dims)));
}

// ---- softmax and normalisations -----------------------------------------------------

// Same shape as x after validating an axis attribute against x's rank.
void InferSameWithAxis(InferContext& ctx, int64_t default_axis) {
  const Shape& x = InputOrUnknown(ctx, 0).shape;
  if (x.rank_known()) ReadAxis(ctx, "axis", default_axis, x.rank());
  InferSameAsInput0(ctx);
}

void InferSoftmax(InferContext& ctx) {
  ctx.Float("beta", 1.0);
  InferSameWithAxis(ctx, -1);
}

void InferL2Norm(InferContext& ctx) {
  ctx.Float("epsilon", 1e-12);
  InferSameWithAxis(ctx, -1);
}

// LayerNorm / RmsNorm: normalise over x[axis:] (or QNN-style "axes");
// gamma and beta broadcast to the normalised shape.
void InferTrailingNorm(InferContext& ctx) {
  const Shape& x = InputOrUnknown(ctx, 0).shape;
  ctx.Float("epsilon", 1e-5);
  Shape normalized = x;
  if (x.rank_known()) {
    if (ctx.has_attr("axes")) {
      NormalizeAxes(ctx, "axes", ctx.Ints("axes", {}), x.rank());
    } else if (auto axis = ReadAxis(ctx, "axis", -1, x.rank())) {
      normalized = Shape(std::vector<Dim>(x.dims().begin() + static_cast<ptrdiff_t>(*axis), x.dims().end()));
    }
  }
  for (size_t i : {1, 2})
    if (ctx.has_input(i)) CheckBroadcastsTo(ctx, ctx.input(i).shape, normalized, InputField(i));
  InferSameAsInput0(ctx);
}

void InferGroupNorm(InferContext& ctx) {
  ctx.Float("epsilon", 1e-5);
  const Dim channels = DimOr(InputOrUnknown(ctx, 0).shape, 1);
  CheckMinRank(ctx, 0, 2);
  const int64_t groups = ctx.Int("num_groups", 1);
  if (groups < 1) {
    ctx.Error(DiagKind::kAttribute, "num_groups", "num_groups must be >= 1, got {}", groups);
  } else {
    if (channels.known() && channels.value % groups != 0)
      ctx.Error(DiagKind::kShapeMismatch, InputField(0), "{} channels are not divisible by num_groups {}",
                channels.value, groups);
    // ONNX opset 18 used [num_groups] scale/bias, opset 21 uses [C].
    for (size_t i : {1, 2}) {
      if (!ctx.has_input(i)) continue;
      const Shape& s = ctx.input(i).shape;
      if (s.rank_known() && (s.rank() != 1 || (s[0].known() && s[0].value != groups && !MergeDims(s[0], channels))))
        ctx.Error(DiagKind::kShapeMismatch, InputField(i), "scale/bias must be [C] or [num_groups], got {}",
                  s.ToString());
    }
  }
  InferSameAsInput0(ctx);
}

// InstanceNorm / Batchnorm: per-channel (dim 1) scale and bias vectors.
void InferChannelNorm(InferContext& ctx) {
  ctx.Float("epsilon", 1e-5);
  CheckMinRank(ctx, 0, 2);
  const Dim channels = DimOr(InputOrUnknown(ctx, 0).shape, 1);
  CheckVectorInput(ctx, 1, channels, "scale");
  CheckVectorInput(ctx, 2, channels, "bias");
  InferSameAsInput0(ctx);
}

void InferLrn(InferContext& ctx) {
  CheckMinRank(ctx, 0, 3);
  if (const int64_t size = ctx.Int("size", 1); size < 1)
    ctx.Error(DiagKind::kAttribute, "size", "size must be >= 1, got {}", size);
  InferSameAsInput0(ctx);
}

void InferMoments(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  Shape shape;
  if (auto axes = ctx.RequiredInts("axes"))
    shape = ReducedShape(ctx, x.shape, *axes, ctx.Int("keepdims", 1) != 0, "axes").value_or(Shape());
  SetOutput(ctx, 0, x.dtype, shape);
  SetOutput(ctx, 1, x.dtype, shape);
}

// ---- resize and rearrangements -------------------------------------------------------

// Output dims from "sizes" (ints) or "scales" (floats): either one value per
// dim, or one per spatial dim (N and C kept).
void InferResize(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const auto rank = KnownRank(x.shape);
  auto sizes = IntsFromAttrOrInput(ctx, "sizes", 3);
  const bool has_scales = ctx.has_attr("scales");
  const std::vector<double> scales = ctx.Floats("scales", {});
  const size_t count = sizes ? sizes->size() : scales.size();
  if (!sizes && !has_scales) {
    // QNN's ResizeBilinear takes its size from the output tensor; only N, C are known.
    if (!rank) return SetOutput(ctx, 0, x.dtype, Shape());
    std::vector<Dim> dims(*rank);
    for (size_t i = 0; i < *rank && i < 2; ++i) dims[i] = x.shape[i];
    return SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
  }
  const std::string_view field = sizes ? "sizes" : "scales";
  if (!rank && !sizes) return SetOutput(ctx, 0, x.dtype, Shape());
  const size_t out_rank = rank ? *rank : count;
  if (count != out_rank && !(out_rank >= 2 && count == out_rank - 2)) {
    ctx.Error(DiagKind::kAttribute, std::string(field), "{} has {} values for rank {}", field, count, out_rank);
    return SetOutput(ctx, 0, x.dtype, Shape());
  }
  const size_t skip = out_rank - count;  // leading dims passed through
  std::vector<Dim> dims(out_rank);
  for (size_t i = 0; i < out_rank; ++i) {
    const Dim in = DimOr(x.shape, i);
    if (i < skip) {
      dims[i] = in;
    } else if (sizes) {
      const int64_t v = (*sizes)[i - skip];
      if (v < 0) ctx.Error(DiagKind::kAttribute, "sizes", "sizes[{}] = {} is negative", i - skip, v);
      dims[i] = v >= 0 ? Dim(v) : Dim();
    } else {
      const double s = scales[i - skip];
      if (!(s > 0) || !std::isfinite(s)) {
        ctx.Error(DiagKind::kAttribute, "scales", "scales[{}] = {} must be positive", i - skip, s);
      } else if (s == 1.0) {
        dims[i] = in;
      } else if (in.known()) {
        const double v = std::floor(static_cast<double>(in.value) * s);
        if (v >= 9.0e18) ctx.Error(DiagKind::kShapeMismatch, "scales", "scaled dim {} overflows int64", i);
        else dims[i] = Dim(static_cast<int64_t>(v));
      }
    }
  }
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

std::optional<int64_t> ReadBlockSize(InferContext& ctx) {
  auto b = ctx.RequiredInt("block_size");
  if (b && *b < 1) {
    ctx.Error(DiagKind::kAttribute, "block_size", "block_size must be >= 1, got {}", *b);
    return std::nullopt;
  }
  return b;
}

void InferDepthToSpace(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  if (const std::string mode = ctx.String("mode", "DCR"); mode != "DCR" && mode != "CRD")
    ctx.Error(DiagKind::kAttribute, "mode", "mode must be DCR or CRD, got '{}'", mode);
  auto block = ReadBlockSize(ctx);
  if (!CheckRank(ctx, 0, 4) || !x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(4)));
  std::vector<Dim> dims = {x.shape[0], Dim(), Dim(), Dim()};
  const auto block_area = block ? CheckedMul(*block, *block) : std::nullopt;
  if (block_area && x.shape[1].known()) {
    if (x.shape[1].value % *block_area != 0)
      ctx.Error(DiagKind::kShapeMismatch, InputField(0), "{} channels are not divisible by block_size^2 = {}",
                x.shape[1].value, *block_area);
    else
      dims[1] = Dim(x.shape[1].value / *block_area);
  }
  if (block)
    for (size_t i : {2, 3}) dims[i] = MulDims(ctx, x.shape[i], Dim(*block), InputField(0));
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

void InferSpaceToDepth(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  auto block = ReadBlockSize(ctx);
  if (!CheckRank(ctx, 0, 4) || !x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(4)));
  std::vector<Dim> dims = {x.shape[0], Dim(), Dim(), Dim()};
  if (block) {
    const auto block_area = CheckedMul(*block, *block);
    if (block_area) dims[1] = MulDims(ctx, x.shape[1], Dim(*block_area), InputField(0));
    for (size_t i : {2, 3}) {
      if (!x.shape[i].known()) continue;
      if (x.shape[i].value % *block != 0)
        ctx.Error(DiagKind::kShapeMismatch, InputField(0), "spatial dim {} = {} is not divisible by block_size {}", i,
                  x.shape[i].value, *block);
      else
        dims[i] = Dim(x.shape[i].value / *block);
    }
  }
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

// x [N, C, spatial...], grid [N, spatial_out..., rank-2] -> [N, C, spatial_out...]
void InferGridSample(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const Shape& grid = InputOrUnknown(ctx, 1).shape;
  if (!CheckMinRank(ctx, 0, 3) || !x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape());
  const size_t rank = x.shape.rank();
  if (!CheckRank(ctx, 1, rank) || !grid.rank_known()) {
    std::vector<Dim> dims(rank);
    dims[0] = x.shape[0];
    dims[1] = x.shape[1];
    return SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
  }
  const Dim& coords = grid[rank - 1];
  if (coords.known() && coords.value != static_cast<int64_t>(rank - 2))
    ctx.Error(DiagKind::kShapeMismatch, InputField(1), "grid's last dim must be {}, got {}", rank - 2, coords.value);
  auto batch = MergeDims(x.shape[0], grid[0]);
  if (!batch)
    ctx.Error(DiagKind::kShapeMismatch, InputField(1), "batch differs: input {} vs grid {}", x.shape[0].value,
              grid[0].value);
  std::vector<Dim> dims = {batch.value_or(Dim()), x.shape[1]};
  for (size_t i = 1; i + 1 < rank; ++i) dims.push_back(grid[i]);
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

}  // namespace

void RegisterNnOps(std::vector<OpSchema>* out) {
  constexpr std::string_view kConv = "x[N,C,spatial...], weight[O,C/group,k...], bias?[O]; strides, pads[begin..., end...], dilations, group, kernel_shape?, auto_pad";
  constexpr std::string_view kTransposeConv = "x[N,C_in,spatial...], weight[C_in,C_out/group,k...], bias?[C_out]; strides, pads[begin..., end...], dilations, group, output_padding, output_shape?, auto_pad";
  constexpr std::string_view kPool = "x[N,C,spatial...]; kernel_shape (required), strides, pads[begin..., end...], dilations, ceil_mode, count_include_pad, auto_pad";
  const OpSchema schemas[] = {
      {"Conv1d", 2, 3, 1, 1, InferConvN<1>, kConv},
      {"Conv2d", 2, 3, 1, 1, InferConvN<2>, kConv},
      {"Conv3d", 2, 3, 1, 1, InferConvN<3>, kConv},
      {"DepthWiseConv2d", 2, 3, 1, 1, InferDepthWiseConv2d,
       "x[N,C,H,W], weight[C*multiplier,1,kh,kw], bias?[C*multiplier]; strides, pads[begin..., end...], dilations, auto_pad (group = C implied)"},
      {"TransposeConv1d", 2, 3, 1, 1, InferTransposeConvN<1>, kTransposeConv},
      {"TransposeConv2d", 2, 3, 1, 1, InferTransposeConvN<2>, kTransposeConv},
      {"TransposeConv3d", 2, 3, 1, 1, InferTransposeConvN<3>, kTransposeConv},
      {"FullyConnected", 2, 3, 1, 1, InferFullyConnected, "x[...,K], weight[N,K], bias?[N] -> [...,N]; keep_dims (ignored)"},
      {"MatMul", 2, 2, 1, 1, InferMatMul, "a, b (numpy.matmul batch broadcasting, 1-D rules); transpose_in0, transpose_in1"},
      {"PoolAvg2d", 1, 1, 1, 1, InferPoolN<2>, kPool},
      {"PoolMax2d", 1, 1, 1, 1, InferPoolN<2>, kPool},
      {"PoolAvg3d", 1, 1, 1, 1, InferPoolN<3>, kPool},
      {"PoolMax3d", 1, 1, 1, 1, InferPoolN<3>, kPool},
      {"L2Pool2d", 1, 1, 1, 1, InferPoolN<2>, kPool},
      {"Softmax", 1, 1, 1, 1, InferSoftmax, "x; axis (-1), beta (1.0)"},
      {"LogSoftmax", 1, 1, 1, 1, InferSoftmax, "x; axis (-1), beta (1.0)"},
      {"LayerNorm", 1, 3, 1, 1, InferTrailingNorm, "x, gamma?, beta? (broadcast to x[axis:]); axis (-1) or axes, epsilon"},
      {"RmsNorm", 1, 3, 1, 1, InferTrailingNorm, "x, gamma?, beta? (broadcast to x[axis:]); axis (-1) or axes, epsilon"},
      {"GroupNorm", 1, 3, 1, 1, InferGroupNorm, "x[N,C,...], gamma?[C], beta?[C]; num_groups (1), epsilon"},
      {"InstanceNorm", 1, 3, 1, 1, InferChannelNorm, "x[N,C,...], scale?[C], bias?[C]; epsilon"},
      {"Batchnorm", 2, 3, 1, 1, InferChannelNorm, "x[N,C,...], scale[C], bias?[C] (mean/variance folded)"},
      {"L2Norm", 1, 1, 1, 1, InferL2Norm, "x; axis (-1), epsilon"},
      {"Lrn", 1, 1, 1, 1, InferLrn, "x[N,C,...]; size, alpha, beta, bias"},
      {"MaskedSoftmax", 2, 2, 1, 1, InferSameAsInput0, "x, mask; mode"},
      {"Moments", 1, 1, 2, 2, InferMoments, "x -> mean, variance; axes (required), keepdims (1)"},
      {"Resize", 1, 4, 1, 1, InferResize, "x, roi?, scales?, sizes?(static int); sizes (ints: all dims or spatial) or scales (floats), mode"},
      {"ResizeBilinear", 1, 1, 1, 1, InferResize, "x[N,C,H,W]; sizes (ints: all dims or spatial) or scales (floats), align_corners, half_pixel_centers"},
      {"ResizeNearestNeighbor", 1, 1, 1, 1, InferResize, "x[N,C,H,W]; sizes (ints: all dims or spatial) or scales (floats), align_corners, half_pixel_centers"},
      {"DepthToSpace", 1, 1, 1, 1, InferDepthToSpace, "x[N,C,H,W] -> [N,C/b^2,H*b,W*b]; block_size (required), mode (DCR|CRD)"},
      {"SpaceToDepth", 1, 1, 1, 1, InferSpaceToDepth, "x[N,C,H,W] -> [N,C*b^2,H/b,W/b]; block_size (required)"},
      {"GridSample", 2, 2, 1, 1, InferGridSample, "x[N,C,H,W], grid[N,Ho,Wo,2] -> [N,C,Ho,Wo] (also 5-D); mode, padding_mode, align_corners"},
  };
  out->insert(out->end(), std::begin(schemas), std::end(schemas));
}

}  // namespace qairt::ops
