#include "ir/ops/shape_helpers.h"

#include <algorithm>
#include <cstring>

namespace qairt::ops {

// ---- inputs and outputs ------------------------------------------------------

bool HasIntAttr(const InferContext& ctx, std::string_view name) {
  auto it = ctx.op().attrs.find(name);
  return it != ctx.op().attrs.end() && std::holds_alternative<int64_t>(it->second);
}

bool HasIntsAttr(const InferContext& ctx, std::string_view name) {
  auto it = ctx.op().attrs.find(name);
  return it != ctx.op().attrs.end() &&
         (std::holds_alternative<int64_t>(it->second) || std::holds_alternative<std::vector<int64_t>>(it->second));
}

const TensorType& InputOrUnknown(const InferContext& ctx, size_t i) {
  static const TensorType kUnknown;
  return ctx.has_input(i) ? ctx.input(i) : kUnknown;
}

void SetOutput(InferContext& ctx, size_t i, DType dtype, Shape shape) {
  if (i >= ctx.num_outputs()) return;
  ctx.output(i).dtype = dtype;
  ctx.output(i).shape = std::move(shape);
}

void InferSameAsInput0(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  SetOutput(ctx, 0, x.dtype, x.shape);
}

std::string InputField(size_t i) { return fmt::format("inputs[{}]", i); }

std::optional<size_t> KnownRank(const Shape& s) {
  if (!s.rank_known()) return std::nullopt;
  return s.rank();
}

bool CheckRank(InferContext& ctx, size_t i, size_t rank) {
  const Shape& s = InputOrUnknown(ctx, i).shape;
  if (!s.rank_known() || s.rank() == rank) return true;
  ctx.Error(DiagKind::kShapeMismatch, InputField(i), "input {} must have rank {}, got {}", i, rank, s.ToString());
  return false;
}

bool CheckMinRank(InferContext& ctx, size_t i, size_t min_rank) {
  const Shape& s = InputOrUnknown(ctx, i).shape;
  if (!s.rank_known() || s.rank() >= min_rank) return true;
  ctx.Error(DiagKind::kShapeMismatch, InputField(i), "input {} must have rank >= {}, got {}", i, min_rank,
            s.ToString());
  return false;
}

bool CheckVectorInput(InferContext& ctx, size_t i, const Dim& length, std::string_view role) {
  if (!ctx.has_input(i)) return true;
  const Shape& s = ctx.input(i).shape;
  if (!s.rank_known()) return true;
  if (s.rank() == 1 && MergeDims(s[0], length)) return true;
  ctx.Error(DiagKind::kShapeMismatch, InputField(i), "{} must have shape [{}], got {}", role,
            length.known() ? fmt::format("{}", length.value) : std::string("C"), s.ToString());
  return false;
}

// ---- checked arithmetic ------------------------------------------------------

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> KnownProduct(const std::vector<Dim>& dims, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) {
    if (!dims[i].known()) return std::nullopt;
    auto p = CheckedMul(product, dims[i].value);
    if (!p) return std::nullopt;
    product = *p;
  }
  return product;
}

Dim ComputedDim(InferContext& ctx, std::optional<int64_t> value, std::string_view field, std::string_view what) {
  if (!value) {
    ctx.Error(DiagKind::kShapeMismatch, std::string(field), "{} overflows int64", what);
    return Dim();
  }
  if (*value < 0) {
    ctx.Error(DiagKind::kShapeMismatch, std::string(field), "{} is negative ({})", what, *value);
    return Dim();
  }
  return Dim(*value);
}

Dim MulDims(InferContext& ctx, const Dim& a, const Dim& b, std::string_view field) {
  if (b.known() && b.value == 1) return a;
  if (a.known() && a.value == 1) return b;
  if (!a.known() || !b.known()) return Dim();
  return ComputedDim(ctx, CheckedMul(a.value, b.value), field, "dim product");
}

// ---- dims and broadcasting ---------------------------------------------------

std::optional<Dim> MergeDims(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) return a.value == b.value ? std::optional<Dim>(a) : std::nullopt;
  if (a.known()) return a;
  if (b.known()) return b;
  return a.symbol.empty() ? b : a;
}

namespace {

// One output dim of numpy broadcasting; nullopt when incompatible.
std::optional<Dim> BroadcastDim(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) {
    if (a.value == b.value || b.value == 1) return a;
    if (a.value == 1) return b;
    return std::nullopt;
  }
  if (a.known() && a.value == 1) return b;
  if (b.known() && b.value == 1) return a;
  // An unknown dim facing a known one (!= 1) is either 1 or equal to it.
  if (a.known()) return a;
  if (b.known()) return b;
  // Two unknown dims: equal only if they carry the same symbol.
  if (!a.symbol.empty() && a.symbol == b.symbol) return a;
  return Dim();
}

}  // namespace

std::optional<Shape> BroadcastShapes(InferContext& ctx, const Shape& a, const Shape& b, std::string_view field) {
  if (!a.rank_known() || !b.rank_known()) return Shape();
  const size_t rank = std::max(a.rank(), b.rank());
  std::vector<Dim> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    const Dim da = i < rank - a.rank() ? Dim(1) : a[i - (rank - a.rank())];
    const Dim db = i < rank - b.rank() ? Dim(1) : b[i - (rank - b.rank())];
    auto d = BroadcastDim(da, db);
    if (!d) {
      ctx.Error(DiagKind::kShapeMismatch, std::string(field), "shapes {} and {} are not broadcastable (dim {}: {} vs {})",
                a.ToString(), b.ToString(), i, da.value, db.value);
      return std::nullopt;
    }
    dims[i] = *d;
  }
  return Shape(std::move(dims));
}

bool CheckBroadcastsTo(InferContext& ctx, const Shape& from, const Shape& to, std::string_view field) {
  if (!from.rank_known() || !to.rank_known()) return true;
  bool ok = from.rank() <= to.rank();
  for (size_t i = 0; ok && i < from.rank(); ++i) {
    const Dim& f = from[from.rank() - 1 - i];
    const Dim& t = to[to.rank() - 1 - i];
    if (f.known() && t.known() && f.value != 1 && f.value != t.value) ok = false;
  }
  if (!ok)
    ctx.Error(DiagKind::kShapeMismatch, std::string(field), "shape {} does not broadcast to {}", from.ToString(),
              to.ToString());
  return ok;
}

// ---- axes ----------------------------------------------------------------------

std::optional<size_t> ReadAxis(InferContext& ctx, std::string_view name, int64_t default_value, size_t rank) {
  const int64_t axis = ctx.Int(name, default_value);
  auto normalized = NormalizeAxis(axis, rank);
  if (!normalized)
    ctx.Error(DiagKind::kAttribute, std::string(name), "axis {} is out of range for rank {}", axis, rank);
  return normalized;
}

std::optional<std::vector<size_t>> NormalizeAxes(InferContext& ctx, std::string_view field,
                                                 const std::vector<int64_t>& axes, size_t rank) {
  std::vector<size_t> out;
  std::vector<bool> seen(rank, false);
  for (int64_t axis : axes) {
    auto n = NormalizeAxis(axis, rank);
    if (!n) {
      ctx.Error(DiagKind::kAttribute, std::string(field), "axis {} is out of range for rank {}", axis, rank);
      return std::nullopt;
    }
    if (seen[*n]) {
      ctx.Error(DiagKind::kAttribute, std::string(field), "axis {} is repeated", axis);
      return std::nullopt;
    }
    seen[*n] = true;
    out.push_back(*n);
  }
  return out;
}

std::optional<Shape> ReducedShape(InferContext& ctx, const Shape& in, const std::optional<std::vector<int64_t>>& axes,
                                  bool keepdims, std::string_view field) {
  if (!in.rank_known()) {
    // With keepdims the rank is preserved but unknown; without it the rank
    // depends on the (unknown) rank, so nothing is known either way.
    return Shape();
  }
  std::vector<bool> reduced(in.rank(), !axes.has_value() || axes->empty());
  if (axes && !axes->empty()) {
    auto normalized = NormalizeAxes(ctx, field, *axes, in.rank());
    if (!normalized) return std::nullopt;
    for (size_t a : *normalized) reduced[a] = true;
  }
  std::vector<Dim> dims;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (!reduced[i])
      dims.push_back(in[i]);
    else if (keepdims)
      dims.emplace_back(1);
  }
  return Shape(std::move(dims));
}

// ---- static data ---------------------------------------------------------------

std::optional<std::vector<int64_t>> StaticInts(const TensorType& t) {
  if (!t.data || !t.data->data()) return std::nullopt;
  size_t width = 0;
  if (t.dtype == DType::kInt64) width = 8;
  if (t.dtype == DType::kInt32) width = 4;
  if (width == 0 || t.data->size() % width != 0) return std::nullopt;
  const size_t count = t.data->size() / width;
  if (auto n = t.shape.element_count(); t.shape.rank_known() && (!n || *n != count)) return std::nullopt;
  std::vector<int64_t> values(count);
  const uint8_t* bytes = t.data->data();
  for (size_t i = 0; i < count; ++i) {
    if (width == 8) {
      std::memcpy(&values[i], bytes + i * 8, 8);
    } else {
      int32_t v;
      std::memcpy(&v, bytes + i * 4, 4);
      values[i] = v;
    }
  }
  return values;
}

std::optional<std::vector<int64_t>> IntsFromAttrOrInput(InferContext& ctx, std::string_view name, size_t input) {
  if (ctx.has_attr(name)) {
    if (!HasIntsAttr(ctx, name)) {
      ctx.Ints(name, {});  // reports the wrong type
      return std::nullopt;
    }
    return ctx.Ints(name, {});
  }
  if (ctx.has_input(input)) return StaticInts(ctx.input(input));
  return std::nullopt;
}

// ---- dtypes ---------------------------------------------------------------------

std::optional<DType> DTypeAttr(InferContext& ctx, std::string_view name) {
  if (!ctx.has_attr(name)) return std::nullopt;
  if (!HasIntAttr(ctx, name)) {
    ctx.Int(name, -1);  // reports the wrong type
    return std::nullopt;
  }
  const int64_t v = ctx.Int(name, -1);
  if (v <= 0 || !IsValidDType(static_cast<uint32_t>(v)) || v > INT32_MAX) {
    ctx.Error(DiagKind::kAttribute, std::string(name), "attribute '{}' = {} is not a valid dtype", name, v);
    return std::nullopt;
  }
  return static_cast<DType>(v);
}

namespace {

enum class DTypeCategory { kUnknown, kFloat, kBool, kInteger, kFixedPoint };

DTypeCategory CategoryOf(DType d) {
  switch (DTypeFamilyOf(d)) {
    case DTypeFamily::kFloat:
      return DTypeCategory::kFloat;
    case DTypeFamily::kBool:
      return DTypeCategory::kBool;
    case DTypeFamily::kSignedInt:
    case DTypeFamily::kUnsignedInt:
      return DTypeCategory::kInteger;
    case DTypeFamily::kSignedFixed:
    case DTypeFamily::kUnsignedFixed:
      return DTypeCategory::kFixedPoint;
    default:
      return DTypeCategory::kUnknown;
  }
}

}  // namespace

bool ElementwiseDTypesCompatible(DType a, DType b) {
  const DTypeCategory ca = CategoryOf(a), cb = CategoryOf(b);
  // Float and fixed point both hold real values: a quantized activation next
  // to a float constant (before static quantization) is a valid graph.
  auto real = [](DTypeCategory c) { return c == DTypeCategory::kFloat || c == DTypeCategory::kFixedPoint; };
  if (real(ca) && real(cb)) return true;
  return ca == DTypeCategory::kUnknown || cb == DTypeCategory::kUnknown || ca == cb;
}

void CheckElementwiseDTypes(InferContext& ctx, size_t a, size_t b) {
  const DType da = InputOrUnknown(ctx, a).dtype, db = InputOrUnknown(ctx, b).dtype;
  if (!ElementwiseDTypesCompatible(da, db))
    ctx.Error(DiagKind::kDTypeMismatch, InputField(b), "input {} is {} but input {} is {}", a, DTypeName(da), b,
              DTypeName(db));
}

void CheckWeightDType(InferContext& ctx, size_t data, size_t weight) {
  const DType dd = InputOrUnknown(ctx, data).dtype, dw = InputOrUnknown(ctx, weight).dtype;
  const DTypeCategory cd = CategoryOf(dd), cw = CategoryOf(dw);
  auto int_or_bool = [](DTypeCategory c) { return c == DTypeCategory::kInteger || c == DTypeCategory::kBool; };
  // Float precisions may differ (fp16 weights with fp32 data is a valid
  // mixed-precision graph, and target processing passes through such states).
  const bool mismatch = (cd == DTypeCategory::kFloat && int_or_bool(cw)) ||
                        (cw == DTypeCategory::kFloat && int_or_bool(cd));
  if (mismatch)
    ctx.Error(DiagKind::kDTypeMismatch, InputField(weight), "data input is {} but weight is {}", DTypeName(dd),
              DTypeName(dw));
}

void CheckIntegerInput(InferContext& ctx, size_t i, std::string_view role) {
  const DType d = InputOrUnknown(ctx, i).dtype;
  if (CategoryOf(d) != DTypeCategory::kUnknown && !IsInteger(d))
    ctx.Error(DiagKind::kDTypeMismatch, InputField(i), "{} must be an integer tensor, got {}", role, DTypeName(d));
}

// ---- auto_pad ----------------------------------------------------------------------

std::optional<AutoPad> ParseAutoPad(std::string_view s) {
  if (s == "NOTSET") return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return std::nullopt;
}

int64_t SameOutputExtent(int64_t in, int64_t stride) { return in / stride + (in % stride != 0 ? 1 : 0); }

DimPads SplitPadding(int64_t total, AutoPad mode) {
  const int64_t half = total / 2 - (total < 0 && total % 2 != 0 ? 1 : 0);  // floor, without overflow
  if (mode == AutoPad::kSameUpper) return {half, total - half};
  return {total - half, half};
}

std::optional<DimPads> WindowPads(AutoPad mode, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                  DimPads explicit_pads) {
  if (mode == AutoPad::kNotSet) return explicit_pads;
  if (mode == AutoPad::kValid) return DimPads{};
  if (in < 0 || kernel < 1 || stride < 1 || dilation < 1) return std::nullopt;
  const int64_t out = SameOutputExtent(in, stride);
  // (out - 1) * stride < in + stride: only the window's extent can overflow.
  auto total = CheckedMul(kernel - 1, dilation);
  if (total) total = CheckedAdd(*total, (out - 1) * stride + 1 - in);
  if (!total) return std::nullopt;
  return SplitPadding(std::max<int64_t>(0, *total), mode);
}

std::optional<DimPads> TransposeWindowPads(AutoPad mode, bool has_output_shape, int64_t in, int64_t out,
                                           int64_t kernel, int64_t stride, int64_t dilation, int64_t output_padding,
                                           DimPads explicit_pads) {
  const bool same = mode == AutoPad::kSameUpper || mode == AutoPad::kSameLower;
  if (!has_output_shape && !same) return mode == AutoPad::kValid ? DimPads{} : explicit_pads;
  // The same terms as the output size from explicit pads (TransposeOutputDim).
  std::optional<int64_t> total = in == 0 ? std::optional<int64_t>(0) : CheckedMul(stride, in - 1);
  auto add = [&total](std::optional<int64_t> term) {
    if (total && term) total = CheckedAdd(*total, *term); else total = std::nullopt;
  };
  add(output_padding);
  add(CheckedMul(kernel - 1, dilation));
  add(1);
  add(CheckedSub(0, out));
  if (!total) return std::nullopt;
  return SplitPadding(*total, mode);
}

// ---- sliding windows (conv, pool) -------------------------------------------------

std::optional<std::vector<int64_t>> ReadIntList(InferContext& ctx, std::string_view name,
                                                std::vector<int64_t> default_value, size_t length, int64_t min_value) {
  if (ctx.has_attr(name) && !HasIntsAttr(ctx, name)) {
    ctx.Ints(name, {});  // reports the wrong type
    return std::nullopt;
  }
  std::vector<int64_t> values = ctx.Ints(name, std::move(default_value));
  if (values.size() != length) {
    ctx.Error(DiagKind::kAttribute, std::string(name), "attribute '{}' has {} values, expected {}", name,
              values.size(), length);
    return std::nullopt;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < min_value) {
      ctx.Error(DiagKind::kAttribute, std::string(name), "{}[{}] = {} must be >= {}", name, i, values[i], min_value);
      return std::nullopt;
    }
  }
  return values;
}

std::optional<WindowAttrs> ReadWindowAttrs(InferContext& ctx, size_t spatial_rank) {
  WindowAttrs w;
  w.spatial_rank = spatial_rank;
  auto strides = ReadIntList(ctx, "strides", std::vector<int64_t>(spatial_rank, 1), spatial_rank, 1);
  auto dilations = ReadIntList(ctx, "dilations", std::vector<int64_t>(spatial_rank, 1), spatial_rank, 1);
  auto pads = ReadIntList(ctx, "pads", std::vector<int64_t>(2 * spatial_rank, 0), 2 * spatial_rank, 0);
  w.ceil_mode = ctx.Int("ceil_mode", 0) != 0;
  const std::string auto_pad = ctx.String("auto_pad", "NOTSET");
  const std::optional<AutoPad> mode = ParseAutoPad(auto_pad);
  if (!mode) {
    ctx.Error(DiagKind::kAttribute, "auto_pad", "unknown auto_pad '{}'", auto_pad);
    return std::nullopt;
  }
  w.auto_pad = *mode;
  if (!strides || !dilations || !pads) return std::nullopt;
  w.strides = std::move(*strides);
  w.dilations = std::move(*dilations);
  w.pads = std::move(*pads);
  if (w.auto_pad == AutoPad::kValid) std::fill(w.pads.begin(), w.pads.end(), 0);
  return w;
}

Dim WindowOutputDim(InferContext& ctx, const Dim& in, int64_t kernel, size_t i, const WindowAttrs& w) {
  const int64_t stride = w.strides[i];
  const std::string field = fmt::format("spatial dim {}", i);
  if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
    // Padding is chosen so that out = ceil(in / stride); the executor pads
    // by WindowPads, which must be computable for a graph that validates.
    if (in.known() && kernel >= 1 && !WindowPads(w.auto_pad, in.value, kernel, stride, w.dilations[i], {})) {
      ctx.Error(DiagKind::kShapeMismatch, field, "{} padding for kernel {}, dilation {} overflows",
                w.auto_pad == AutoPad::kSameUpper ? "SAME_UPPER" : "SAME_LOWER", kernel, w.dilations[i]);
      return Dim();
    }
    if (stride == 1) return in;
    if (!in.known()) return Dim();
    return Dim(SameOutputExtent(in.value, stride));
  }
  const int64_t pad_begin = w.pads[i], pad_end = w.pads[w.spatial_rank + i];
  if (kernel < 0) return Dim();
  if (kernel == 0) {
    ctx.Error(DiagKind::kShapeMismatch, field, "kernel extent is 0");
    return Dim();
  }
  // A 1-wide window with unit stride and no padding keeps the dim (symbol too).
  if (kernel == 1 && stride == 1 && pad_begin == 0 && pad_end == 0) return in;
  if (!in.known()) return Dim();
  const auto effective_kernel = CheckedAdd(CheckedMul(w.dilations[i], kernel - 1).value_or(INT64_MAX), 1);
  auto padded = CheckedAdd(in.value, pad_begin);
  if (padded) padded = CheckedAdd(*padded, pad_end);
  if (!effective_kernel || !padded)
    return ComputedDim(ctx, std::nullopt, field, "window or padded input size");
  if (*padded < *effective_kernel) {
    ctx.Error(DiagKind::kShapeMismatch, field, "window of size {} (kernel {}, dilation {}) exceeds padded input {}",
              *effective_kernel, kernel, w.dilations[i], *padded);
    return Dim();
  }
  const int64_t span = *padded - *effective_kernel;  // < INT64_MAX since effective_kernel >= 1
  int64_t out = span / stride + 1;
  if (w.ceil_mode && span % stride != 0) {
    ++out;
    // As in ONNX Runtime and PyTorch: the last window must start inside the
    // input or the begin padding, not entirely in the end padding.
    auto last_start = CheckedMul(out - 1, stride);
    if (last_start && *last_start >= in.value + pad_begin) --out;
  }
  return Dim(out);
}

}  // namespace qairt::ops
