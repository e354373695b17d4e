// Import-time constant folding. Exporters leave shape arithmetic (Shape ->
// Gather -> Concat -> Reshape), ConstantOfShape weights and Constant nodes in
// graphs; once input shapes are static all of it is known, and QNN has no ops
// for most of it. Metadata-only ops (Reshape, Squeeze, Unsqueeze, Flatten,
// Identity) fold at any size without copying; arithmetic folds only small
// tensors.
#include <cmath>
#include <cstring>

#include "import/onnx/importer.h"

namespace qairt::onnx_import {
namespace {

constexpr uint64_t kMaxFoldElements = uint64_t{1} << 20;

// A small constant as numbers: ints for integer/bool dtypes, doubles otherwise.
struct Array {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  std::vector<int64_t> i;
  std::vector<double> f;
  bool is_int() const { return IsInteger(dtype) || dtype == DType::kBool; }
  size_t size() const { return is_int() ? i.size() : f.size(); }
  double at(size_t k) const { return is_int() ? static_cast<double>(i[k]) : f[k]; }
};

uint64_t Count(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) n *= static_cast<uint64_t>(d);
  return n;
}

std::optional<Array> ToArray(const NodeContext& ctx, size_t idx) {
  if (!ctx.in_is_const(idx)) return std::nullopt;
  const Value& v = ctx.in(idx);
  if (!v.shape.fully_known()) return std::nullopt;
  const auto n = v.shape.element_count();
  if (!n || *n > kMaxFoldElements) return std::nullopt;
  Array a;
  a.dtype = v.dtype;
  a.dims = v.shape.extents();
  if (a.is_int()) {
    auto ints = ctx.in_ints(idx);
    if (!ints) return std::nullopt;
    a.i = std::move(*ints);
  } else if (IsFloat(v.dtype)) {
    auto fl = ctx.in_floats(idx);
    if (!fl) return std::nullopt;
    a.f = std::move(*fl);
  } else {
    return std::nullopt;  // quantized constants are not folded
  }
  return a;
}

std::shared_ptr<const StaticData> Encode(const Array& a, DType dtype) {
  const size_t n = a.size();
  std::vector<uint8_t> bytes;
  auto put = [&](auto v) {
    const size_t off = bytes.size();
    bytes.resize(off + sizeof(v));
    std::memcpy(bytes.data() + off, &v, sizeof(v));
  };
  for (size_t k = 0; k < n; ++k) {
    const double d = a.at(k);
    const int64_t iv = a.is_int() ? a.i[k] : static_cast<int64_t>(d);
    switch (dtype) {
      case DType::kFloat32: put(static_cast<float>(d)); break;
      case DType::kFloat64: put(d); break;
      case DType::kInt64: put(iv); break;
      case DType::kInt32: put(static_cast<int32_t>(iv)); break;
      case DType::kInt16: put(static_cast<int16_t>(iv)); break;
      case DType::kInt8: put(static_cast<int8_t>(iv)); break;
      case DType::kUInt8: put(static_cast<uint8_t>(iv)); break;
      case DType::kUInt16: put(static_cast<uint16_t>(iv)); break;
      case DType::kUInt32: put(static_cast<uint32_t>(iv)); break;
      case DType::kUInt64: put(static_cast<uint64_t>(iv)); break;
      case DType::kBool: put(static_cast<uint8_t>(d != 0.0)); break;
      default: return nullptr;
    }
  }
  return StaticData::Copy(bytes.data(), bytes.size());
}

bool Emit(NodeContext& ctx, size_t out, const Array& a) {
  auto data = Encode(a, a.dtype);
  if (!data) return false;
  ctx.SetConst(out, a.dtype, Shape::FromExtents(a.dims), std::move(data));
  return true;
}

// numpy broadcasting of two dims vectors.
std::optional<std::vector<int64_t>> Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t x = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t y = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[k] = x == 1 ? y : x;
  }
  return out;
}

// Index into `dims`-shaped array for the broadcast position `pos` of `out`.
size_t BroadcastIndex(const std::vector<int64_t>& dims, const std::vector<int64_t>& out, size_t flat) {
  size_t idx = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    const auto coord = static_cast<int64_t>(flat % static_cast<size_t>(out[k]));
    flat /= static_cast<size_t>(out[k]);
    const size_t ak = k + dims.size();
    if (ak < out.size()) continue;  // dims has fewer axes
    const int64_t d = dims[ak - out.size()];
    idx += static_cast<size_t>(d == 1 ? 0 : coord) * stride;
    stride *= static_cast<size_t>(d);
  }
  return idx;
}

template <typename Fn>
std::optional<Array> Elementwise(const std::vector<Array>& in, DType out_dtype, Fn fn) {
  std::vector<int64_t> dims = in[0].dims;
  for (size_t k = 1; k < in.size(); ++k) {
    auto b = Broadcast(dims, in[k].dims);
    if (!b) return std::nullopt;
    dims = *b;
  }
  Array out;
  out.dtype = out_dtype;
  out.dims = dims;
  const uint64_t n = Count(dims);
  if (n > kMaxFoldElements) return std::nullopt;
  std::vector<double> args(in.size());
  for (size_t p = 0; p < n; ++p) {
    for (size_t k = 0; k < in.size(); ++k) args[k] = in[k].at(BroadcastIndex(in[k].dims, dims, p));
    const double r = fn(args);
    if (out.is_int()) {
      if (!std::isfinite(r)) return std::nullopt;
      out.i.push_back(static_cast<int64_t>(r));
    } else {
      out.f.push_back(r);
    }
  }
  return out;
}

// Exact integer arithmetic for shape math (doubles would lose INT64_MAX).
std::optional<Array> IntBinary(const Array& a, const Array& b, const std::string& op) {
  auto dims = Broadcast(a.dims, b.dims);
  if (!dims) return std::nullopt;
  Array out;
  out.dtype = a.dtype;
  out.dims = *dims;
  const uint64_t n = Count(*dims);
  for (size_t p = 0; p < n; ++p) {
    const int64_t x = a.i[BroadcastIndex(a.dims, *dims, p)], y = b.i[BroadcastIndex(b.dims, *dims, p)];
    int64_t r;
    if (op == "Add") {
      if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
    } else if (op == "Sub") {
      if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
    } else if (op == "Mul") {
      if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
    } else if (op == "Div") {
      if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt;
      r = x / y;
    } else if (op == "Min") {
      r = std::min(x, y);
    } else if (op == "Max") {
      r = std::max(x, y);
    } else {
      return std::nullopt;
    }
    out.i.push_back(r);
  }
  return out;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) s[k - 1] = s[k] * dims[k];
  return s;
}

std::optional<Array> Gather(const Array& data, const Array& idx, int64_t axis_attr) {
  const auto r = static_cast<int64_t>(data.dims.size());
  if (r == 0 || !idx.is_int()) return std::nullopt;
  const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
  if (axis < 0 || axis >= r) return std::nullopt;
  const int64_t n_axis = data.dims[static_cast<size_t>(axis)];
  Array out;
  out.dtype = data.dtype;
  out.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  out.dims.insert(out.dims.end(), idx.dims.begin(), idx.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= data.dims[static_cast<size_t>(k)];
  for (int64_t k = axis + 1; k < r; ++k) inner *= data.dims[static_cast<size_t>(k)];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : idx.i) {
      if (j < 0) j += n_axis;
      if (j < 0 || j >= n_axis) return std::nullopt;
      for (int64_t in = 0; in < inner; ++in) {
        const auto src = static_cast<size_t>((o * n_axis + j) * inner + in);
        if (data.is_int())
          out.i.push_back(data.i[src]);
        else
          out.f.push_back(data.f[src]);
      }
    }
  }
  return out;
}

std::optional<Array> Concat(const std::vector<Array>& in, int64_t axis_attr) {
  const auto r = static_cast<int64_t>(in[0].dims.size());
  const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
  if (axis < 0 || axis >= r) return std::nullopt;
  Array out;
  out.dtype = in[0].dtype;
  out.dims = in[0].dims;
  out.dims[static_cast<size_t>(axis)] = 0;
  for (const Array& a : in) {
    if (a.dims.size() != in[0].dims.size() || a.is_int() != in[0].is_int()) return std::nullopt;
    for (int64_t k = 0; k < r; ++k)
      if (k != axis && a.dims[static_cast<size_t>(k)] != in[0].dims[static_cast<size_t>(k)]) return std::nullopt;
    out.dims[static_cast<size_t>(axis)] += a.dims[static_cast<size_t>(axis)];
  }
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= out.dims[static_cast<size_t>(k)];
  for (int64_t o = 0; o < outer; ++o) {
    for (const Array& a : in) {
      int64_t chunk = 1;
      for (int64_t k = axis; k < r; ++k) chunk *= a.dims[static_cast<size_t>(k)];
      for (int64_t c = 0; c < chunk; ++c) {
        const auto src = static_cast<size_t>(o * chunk + c);
        if (a.is_int())
          out.i.push_back(a.i[src]);
        else
          out.f.push_back(a.f[src]);
      }
    }
  }
  return out;
}

std::optional<Array> Slice(const Array& data, std::vector<int64_t> starts, std::vector<int64_t> ends,
                           std::vector<int64_t> axes, std::vector<int64_t> steps) {
  const auto r = static_cast<int64_t>(data.dims.size());
  if (axes.empty())
    for (int64_t k = 0; k < static_cast<int64_t>(starts.size()); ++k) axes.push_back(k);
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) return std::nullopt;
  std::vector<int64_t> begin(static_cast<size_t>(r), 0), step(static_cast<size_t>(r), 1), count(data.dims);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t ax = axes[k] < 0 ? axes[k] + r : axes[k];
    if (ax < 0 || ax >= r || steps[k] == 0) return std::nullopt;
    const int64_t dim = data.dims[static_cast<size_t>(ax)];
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s = s < -dim ? -dim + dim : s + dim;
    if (e < 0) e = e < -dim ? -1 : e + dim;
    if (steps[k] > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count[static_cast<size_t>(ax)] = e > s ? (e - s + steps[k] - 1) / steps[k] : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count[static_cast<size_t>(ax)] = s > e ? (s - e + (-steps[k]) - 1) / (-steps[k]) : 0;
    }
    begin[static_cast<size_t>(ax)] = s;
    step[static_cast<size_t>(ax)] = steps[k];
  }
  Array out;
  out.dtype = data.dtype;
  out.dims = count;
  const uint64_t n = Count(count);
  const auto strides = Strides(data.dims);
  for (uint64_t p = 0; p < n; ++p) {
    uint64_t rem = p;
    int64_t src = 0;
    for (int64_t k = r; k-- > 0;) {
      const auto c = static_cast<int64_t>(rem % static_cast<uint64_t>(count[static_cast<size_t>(k)]));
      rem /= static_cast<uint64_t>(count[static_cast<size_t>(k)]);
      src += (begin[static_cast<size_t>(k)] + c * step[static_cast<size_t>(k)]) * strides[static_cast<size_t>(k)];
    }
    if (data.is_int())
      out.i.push_back(data.i[static_cast<size_t>(src)]);
    else
      out.f.push_back(data.f[static_cast<size_t>(src)]);
  }
  return out;
}

// Output shape of Reshape/Squeeze/Unsqueeze/Flatten given a known input shape.
std::optional<std::vector<int64_t>> ReshapeTarget(const std::vector<int64_t>& in, std::vector<int64_t> shape,
                                                  bool allowzero) {
  int64_t known = 1;
  int infer = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allowzero) {
      if (k >= in.size()) return std::nullopt;
      shape[k] = in[k];
    }
    if (shape[k] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(k);
    } else if (shape[k] < 0) {
      return std::nullopt;
    } else {
      known *= shape[k];
    }
  }
  const auto total = static_cast<int64_t>(Count(in));
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    shape[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return shape;
}

// Metadata-only ops: any size, shared bytes.
bool FoldMetadata(NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  if (!ctx.in_is_const(0)) return false;
  const Value& in = ctx.in(0);
  if (!in.shape.fully_known() || in.encoding) return false;
  const std::vector<int64_t> dims = in.shape.extents();
  std::optional<std::vector<int64_t>> out;
  if (op == "Identity" || (op == "Dropout" && ctx.num_outputs() <= 1)) {
    out = dims;
  } else if (op == "Reshape") {
    auto shape = ctx.opset() >= 5 ? ctx.in_ints(1) : std::optional(ctx.Ints("shape"));
    if (!shape) return false;
    out = ReshapeTarget(dims, *shape, ctx.Int("allowzero", 0) != 0);
  } else if (op == "Flatten") {
    const auto r = static_cast<int64_t>(dims.size());
    int64_t axis = ctx.Int("axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) return false;
    int64_t a = 1, b = 1;
    for (int64_t k = 0; k < r; ++k) (k < axis ? a : b) *= dims[static_cast<size_t>(k)];
    out = std::vector<int64_t>{a, b};
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    auto axes = ctx.opset() >= 13 && ctx.has_input(1) ? ctx.in_ints(1) : std::optional(ctx.Ints("axes"));
    if (!axes) return false;
    std::vector<int64_t> d = dims;
    if (op == "Squeeze") {
      std::vector<bool> drop(d.size(), false);
      if (axes->empty())
        for (size_t k = 0; k < d.size(); ++k) drop[k] = d[k] == 1;
      for (int64_t a : *axes) {
        const int64_t ax = a < 0 ? a + static_cast<int64_t>(d.size()) : a;
        if (ax < 0 || ax >= static_cast<int64_t>(d.size()) || d[static_cast<size_t>(ax)] != 1) return false;
        drop[static_cast<size_t>(ax)] = true;
      }
      std::vector<int64_t> kept;
      for (size_t k = 0; k < d.size(); ++k)
        if (!drop[k]) kept.push_back(d[k]);
      out = kept;
    } else {
      const auto r = static_cast<int64_t>(d.size() + axes->size());
      std::vector<int64_t> norm;
      for (int64_t a : *axes) norm.push_back(a < 0 ? a + r : a);
      std::sort(norm.begin(), norm.end());
      for (int64_t a : norm) {
        if (a < 0 || a > static_cast<int64_t>(d.size())) return false;
        d.insert(d.begin() + a, 1);
      }
      out = d;
    }
  } else {
    return false;
  }
  if (!out) return false;
  ctx.SetConst(0, in.dtype, Shape::FromExtents(*out), in.data);
  return true;
}

bool FoldConstantNode(NodeContext& ctx) {
  const auto* a = ctx.node().attribute_size() ? &ctx.node().attribute(0) : nullptr;
  if (!a) return false;
  const std::string& n = a->name();
  if (n == "value" && a->has_t()) {
    auto holder = std::make_shared<onnx::TensorProto>(a->t());
    auto decoded = DecodeTensor(*holder, holder, "", ctx.output_name(0));
    if (!decoded.ok()) {
      (void)ctx.Fail("value", "{}", decoded.status().message());
      return true;  // reported; nothing to bind
    }
    ctx.SetConst(0, decoded->dtype, decoded->shape, decoded->data);
    return true;
  }
  Array arr;
  if (n == "value_float") {
    arr.dtype = DType::kFloat32;
    arr.f = {a->f()};
  } else if (n == "value_floats") {
    arr.dtype = DType::kFloat32;
    arr.f.assign(a->floats().begin(), a->floats().end());
    arr.dims = {static_cast<int64_t>(arr.f.size())};
  } else if (n == "value_int") {
    arr.dtype = DType::kInt64;
    arr.i = {a->i()};
  } else if (n == "value_ints") {
    arr.dtype = DType::kInt64;
    arr.i.assign(a->ints().begin(), a->ints().end());
    arr.dims = {static_cast<int64_t>(arr.i.size())};
  } else {
    (void)ctx.Fail(n, "Constant attribute '{}' is not supported", n);
    return true;
  }
  return Emit(ctx, 0, arr);
}

bool FoldConstantOfShape(NodeContext& ctx) {
  auto shape = ctx.in_ints(0);
  if (!shape) return false;
  for (int64_t d : *shape)
    if (d < 0) return false;
  DType dtype = DType::kFloat32;
  std::vector<uint8_t> value(4, 0);
  if (const auto* a = ctx.attr("value"); a && a->has_t()) {
    auto holder = std::make_shared<onnx::TensorProto>(a->t());
    auto decoded = DecodeTensor(*holder, holder, "", ctx.name() + ".value");
    if (!decoded.ok() || decoded->data->size() == 0) return false;
    dtype = decoded->dtype;
    value.assign(decoded->data->data(), decoded->data->data() + decoded->data->size());
  }
  const Shape out = Shape::FromExtents(*shape);
  const auto n = out.element_count();
  const auto bytes = n ? StorageBytes(dtype, *n) : std::nullopt;
  if (!bytes || value.size() != DTypeBits(dtype) / 8 || *bytes > (uint64_t{16} << 30)) return false;
  std::vector<uint8_t> data(*bytes);
  if (value.size() == 4) {
    uint32_t word;
    std::memcpy(&word, value.data(), 4);
    if (word != 0) std::fill_n(reinterpret_cast<uint32_t*>(data.data()), data.size() / 4, word);
  } else {
    for (size_t off = 0; off < data.size(); off += value.size()) std::memcpy(&data[off], value.data(), value.size());
  }
  ctx.SetConst(0, dtype, out, StaticData::Adopt(std::move(data)));
  return true;
}

double Apply(const std::string& op, const std::vector<double>& x) {
  if (op == "Add") return x[0] + x[1];
  if (op == "Sub") return x[0] - x[1];
  if (op == "Mul") return x[0] * x[1];
  if (op == "Div") return x[0] / x[1];
  if (op == "Pow") return std::pow(x[0], x[1]);
  if (op == "Min") return std::min(x[0], x[1]);
  if (op == "Max") return std::max(x[0], x[1]);
  if (op == "Equal") return x[0] == x[1];
  if (op == "Less") return x[0] < x[1];
  if (op == "Greater") return x[0] > x[1];
  if (op == "LessOrEqual") return x[0] <= x[1];
  if (op == "GreaterOrEqual") return x[0] >= x[1];
  if (op == "And") return (x[0] != 0) && (x[1] != 0);
  if (op == "Or") return (x[0] != 0) || (x[1] != 0);
  if (op == "Where") return x[0] != 0 ? x[1] : x[2];
  if (op == "Neg") return -x[0];
  if (op == "Abs") return std::fabs(x[0]);
  if (op == "Floor") return std::floor(x[0]);
  if (op == "Ceil") return std::ceil(x[0]);
  if (op == "Sqrt") return std::sqrt(x[0]);
  if (op == "Reciprocal") return 1.0 / x[0];
  if (op == "Not") return x[0] == 0;
  if (op == "Exp") return std::exp(x[0]);
  return NAN;
}

}  // namespace

bool TryFoldConstant(NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  if (op == "Constant") return FoldConstantNode(ctx);
  if (op == "Shape" || op == "Size") {
    if (!ctx.has_input(0)) return false;
    const Value& in = ctx.in(0);
    if (!in.shape.fully_known()) return false;
    Array a;
    a.dtype = DType::kInt64;
    if (op == "Size") {
      a.i = {static_cast<int64_t>(*in.shape.element_count())};
    } else {
      std::vector<int64_t> dims = in.shape.extents();
      const auto r = static_cast<int64_t>(dims.size());
      int64_t start = ctx.Int("start", 0), end = ctx.Int("end", r);
      if (start < 0) start += r;
      if (end < 0) end += r;
      start = std::clamp<int64_t>(start, 0, r);
      end = std::clamp<int64_t>(end, start, r);
      a.i.assign(dims.begin() + start, dims.begin() + end);
      a.dims = {static_cast<int64_t>(a.i.size())};
    }
    return Emit(ctx, 0, a);
  }
  if (op == "ConstantOfShape") return FoldConstantOfShape(ctx);

  // Everything else folds only when every present input is constant.
  if (ctx.num_inputs() == 0) return false;
  for (size_t k = 0; k < ctx.num_inputs(); ++k)
    if (ctx.has_input(k) && !ctx.in_is_const(k)) return false;
  if (FoldMetadata(ctx)) return true;

  std::vector<Array> in;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    if (!ctx.has_input(k)) {
      in.emplace_back();
      continue;
    }
    auto a = ToArray(ctx, k);
    if (!a) return false;
    in.push_back(std::move(*a));
  }
  std::optional<Array> out;
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "Min", "Max"};
  static const std::set<std::string> kCompare = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                                 "And", "Or"};
  static const std::set<std::string> kUnary = {"Neg", "Abs", "Floor", "Ceil", "Sqrt", "Reciprocal", "Not", "Exp"};
  if (kBinary.count(op) && in.size() == 2) {
    if (in[0].is_int() && in[1].is_int() && op != "Pow")
      out = IntBinary(in[0], in[1], op);
    else
      out = Elementwise(in, in[0].dtype, [&](const std::vector<double>& x) { return Apply(op, x); });
  } else if (kCompare.count(op) && in.size() == 2) {
    out = Elementwise(in, DType::kBool, [&](const std::vector<double>& x) { return Apply(op, x); });
  } else if (kUnary.count(op) && in.size() == 1) {
    out = Elementwise(in, op == "Not" ? DType::kBool : in[0].dtype,
                      [&](const std::vector<double>& x) { return Apply(op, x); });
  } else if (op == "Where" && in.size() == 3) {
    out = Elementwise(in, in[1].dtype, [&](const std::vector<double>& x) { return Apply(op, x); });
  } else if (op == "Cast") {
    auto to = DTypeFromOnnx(static_cast<int32_t>(ctx.Int("to", 0)));
    if (!to || (!IsInteger(*to) && *to != DType::kBool && *to != DType::kFloat32 && *to != DType::kFloat64))
      return false;
    Array a;
    a.dtype = *to;
    a.dims = in[0].dims;
    for (size_t k = 0; k < in[0].size(); ++k) {
      if (a.is_int()) {
        const double v = in[0].at(k);
        if (!std::isfinite(v)) return false;
        a.i.push_back(in[0].is_int() ? in[0].i[k] : static_cast<int64_t>(v));
      } else {
        a.f.push_back(in[0].at(k));
      }
    }
    out = a;
  } else if (op == "Gather" && in.size() == 2) {
    out = Gather(in[0], in[1], ctx.Int("axis", 0));
  } else if (op == "Concat") {
    out = Concat(in, ctx.Int("axis", 0));
  } else if (op == "Slice") {
    if (ctx.opset() < 10) {
      out = Slice(in[0], ctx.Ints("starts"), ctx.Ints("ends"), ctx.Ints("axes"), {});
    } else if (in.size() >= 3 && in[1].is_int() && in[2].is_int()) {
      out = Slice(in[0], in[1].i, in[2].i, in.size() > 3 && in[3].is_int() ? in[3].i : std::vector<int64_t>{},
                  in.size() > 4 && in[4].is_int() ? in[4].i : std::vector<int64_t>{});
    }
  } else if (op == "Range" && in.size() == 3) {
    const double start = in[0].at(0), limit = in[1].at(0), delta = in[2].at(0);
    if (delta == 0 || !std::isfinite(start + limit + delta)) return false;
    const double n = std::max(0.0, std::ceil((limit - start) / delta));
    if (n > static_cast<double>(kMaxFoldElements)) return false;
    Array a;
    a.dtype = in[0].dtype;
    a.dims = {static_cast<int64_t>(n)};
    for (int64_t k = 0; k < a.dims[0]; ++k) {
      if (a.is_int())
        a.i.push_back(in[0].i[0] + k * in[2].i[0]);
      else
        a.f.push_back(start + static_cast<double>(k) * delta);
    }
    out = a;
  } else if (op == "Expand" && in.size() == 2 && in[1].is_int()) {
    Array shape_only;
    shape_only.dtype = in[0].dtype;
    shape_only.dims = in[1].i;
    auto dims = Broadcast(in[0].dims, in[1].i);
    if (!dims) return false;
    out = Elementwise({in[0]}, in[0].dtype, [](const std::vector<double>& x) { return x[0]; });
    if (out) {
      Array b;
      b.dtype = in[0].dtype;
      b.dims = *dims;
      const uint64_t n = Count(*dims);
      if (n > kMaxFoldElements) return false;
      for (size_t p = 0; p < n; ++p) {
        const size_t src = BroadcastIndex(in[0].dims, *dims, p);
        if (b.is_int()) b.i.push_back(in[0].i[src]); else b.f.push_back(in[0].f[src]);
      }
      out = b;
    }
  }
  if (!out) return false;
  return Emit(ctx, 0, *out);
}

}  // namespace qairt::onnx_import
