// Import-time constant folding. Exporters leave shape arithmetic (Shape ->
// Gather -> Concat -> Reshape), masks built from ConstantOfShape/Equal/Where,
// and Constant nodes in graphs; once input shapes are static all of it is
// known, and QNN has no ops for most of it.
//
// One evaluator: a node whose inputs are all constant is lowered like any
// other, and the ops it emitted are run by the reference executor (the same
// kernels as `qairt run`), their results bound as constants and the ops taken
// back (FoldEmitted). What stays here is only what the executor cannot
// express: nodes without an IR op (Constant, Shape, Size, ConstantOfShape,
// Range) and the metadata-only ops (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity), which fold at any size by sharing the input's bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "exec/executor.h"
#include "ir/ops/shape_helpers.h"
#include "onnx/importer.h"

namespace qairt::onnx_import {
namespace {

std::shared_ptr<const StaticData> Int64Data(const std::vector<int64_t>& v) { return VectorData(v); }

// Output shape of Reshape given a known input shape (ONNX's 0 and -1 rules).
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
      // A product past int64 (a damaged shape constant) has no tensor.
      const auto product = ops::CheckedMul(known, shape[k]);
      if (!product) return std::nullopt;
      known = *product;
    }
  }
  int64_t total = 1;
  for (int64_t d : in) {
    const auto product = ops::CheckedMul(total, d);
    if (!product) return std::nullopt;
    total = *product;
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    shape[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return shape;
}

// Metadata-only ops on a constant: any size, the input's bytes shared.
bool FoldMetadata(NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  if (!ctx.in_is_const(0)) return false;
  const Value& in = ctx.in(0);
  if (!in.shape.fully_known() || in.encoding) return false;
  const std::vector<int64_t> dims = in.shape.extents();
  std::optional<std::vector<int64_t>> out;
  if (op == "Identity" || (op == "Dropout" && ctx.num_outputs() <= 1 && !ctx.has_input(2))) {
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
    auto decoded = DecodeTensor(*holder, holder, ctx.importer().model_dir(), ctx.output_name(0));
    if (!decoded.ok()) {
      (void)ctx.Fail("value", "{}", decoded.status().message());
      return true;  // reported; nothing to bind
    }
    ctx.SetConst(0, decoded->dtype, decoded->shape, decoded->data);
    return true;
  }
  if (n == "value_float" || n == "value_floats") {
    std::vector<float> v = n == "value_float" ? std::vector<float>{a->f()}
                                              : std::vector<float>(a->floats().begin(), a->floats().end());
    const Shape shape = n == "value_float" ? Shape::FromExtents({}) : Shape::FromExtents({static_cast<int64_t>(v.size())});
    ctx.SetConst(0, DType::kFloat32, shape, VectorData(v));
    return true;
  }
  if (n == "value_int" || n == "value_ints") {
    std::vector<int64_t> v = n == "value_int" ? std::vector<int64_t>{a->i()}
                                              : std::vector<int64_t>(a->ints().begin(), a->ints().end());
    const Shape shape = n == "value_int" ? Shape::FromExtents({}) : Shape::FromExtents({static_cast<int64_t>(v.size())});
    ctx.SetConst(0, DType::kInt64, shape, Int64Data(v));
    return true;
  }
  (void)ctx.Fail(n, "Constant attribute '{}' is not supported", n);
  return true;
}

bool FoldConstantOfShape(NodeContext& ctx) {
  auto shape = ctx.in_ints(0);
  if (!shape) return false;
  for (int64_t d : *shape)
    if (d < 0) {
      (void)ctx.Fail("input", "the shape [{}] has a negative dimension", fmt::join(*shape, ", "));
      return true;
    }
  DType dtype = DType::kFloat32;
  std::vector<uint8_t> value(4, 0);
  if (const auto* a = ctx.attr("value"); a && a->has_t()) {
    auto holder = std::make_shared<onnx::TensorProto>(a->t());
    auto decoded = DecodeTensor(*holder, holder, ctx.importer().model_dir(), ctx.name() + ".value");
    if (!decoded.ok() || decoded->data->size() == 0) return false;
    dtype = decoded->dtype;
    value.assign(decoded->data->data(), decoded->data->data() + decoded->data->size());
  }
  const Shape out = Shape::FromExtents(*shape);
  const auto n = out.element_count();
  const auto bytes = n ? StorageBytes(dtype, *n) : std::nullopt;
  if (!bytes || value.size() != DTypeBits(dtype) / 8) return false;
  if (*bytes > kMaxFilledBytes) {
    (void)ctx.Fail("input", "the constant of shape {} would take {} bytes; an import-time constant is limited to {} "
                   "bytes (fix the input dimensions with -d/--input_dim)", out.ToString(), *bytes, kMaxFilledBytes);
    return true;
  }
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

bool FoldShapeOrSize(NodeContext& ctx) {
  if (!ctx.has_input(0)) return false;
  const Value& in = ctx.in(0);
  if (!in.shape.fully_known()) return false;
  std::vector<int64_t> v;
  if (ctx.op_type() == "Size") {
    v = {static_cast<int64_t>(*in.shape.element_count())};
    ctx.SetConst(0, DType::kInt64, Shape::FromExtents({}), Int64Data(v));
    return true;
  }
  std::vector<int64_t> dims = in.shape.extents();
  const auto r = static_cast<int64_t>(dims.size());
  int64_t start = ctx.Int("start", 0), end = ctx.Int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  v.assign(dims.begin() + start, dims.begin() + end);
  ctx.SetConst(0, DType::kInt64, Shape::FromExtents({static_cast<int64_t>(v.size())}), Int64Data(v));
  return true;
}

// Range has no IR op. ONNX defines it as an accumulation in the input type
// (value += delta), which is also how ONNX Runtime computes it.
template <typename T>
std::shared_ptr<const StaticData> RangeValues(T start, T delta, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  T value = start;
  for (auto& x : v) {
    x = value;
    value = static_cast<T>(value + delta);
  }
  return VectorData(v);
}

bool FoldRange(NodeContext& ctx) {
  for (size_t k = 0; k < 3; ++k)
    if (!ctx.in_is_const(k) || ctx.in(k).shape.element_count() != std::optional<uint64_t>(1)) return false;
  const DType dtype = ctx.in(0).dtype;
  auto f = std::vector<double>{};
  for (size_t k = 0; k < 3; ++k) {
    auto x = ctx.in_floats(k);
    if (!x) return false;
    f.push_back((*x)[0]);
  }
  const double start = f[0], limit = f[1], delta = f[2];
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
    (void)ctx.Fail("delta", "Range({}, {}, {}) has no finite length", start, limit, delta);
    return true;
  }
  const double n = std::max(0.0, std::ceil((limit - start) / delta));
  if (n * 8 > static_cast<double>(kMaxFoldedBytes)) {
    (void)ctx.Fail("limit", "Range({}, {}, {}) would hold {} values; an import-time constant is limited to {} bytes",
                   start, limit, delta, n, kMaxFoldedBytes);
    return true;
  }
  const auto count = static_cast<int64_t>(n);
  std::shared_ptr<const StaticData> data;
  switch (dtype) {
    case DType::kFloat32: data = RangeValues<float>(static_cast<float>(start), static_cast<float>(delta), count); break;
    case DType::kFloat64: data = RangeValues<double>(start, delta, count); break;
    case DType::kInt64: {
      auto s = ctx.in_ints(0), d = ctx.in_ints(2);
      data = RangeValues<int64_t>((*s)[0], (*d)[0], count);
      break;
    }
    case DType::kInt32: {
      auto s = ctx.in_ints(0), d = ctx.in_ints(2);
      data = RangeValues<int32_t>(static_cast<int32_t>((*s)[0]), static_cast<int32_t>((*d)[0]), count);
      break;
    }
    case DType::kInt16: {
      auto s = ctx.in_ints(0), d = ctx.in_ints(2);
      data = RangeValues<int16_t>(static_cast<int16_t>((*s)[0]), static_cast<int16_t>((*d)[0]), count);
      break;
    }
    default:
      (void)ctx.Fail("start", "Range of {} is not supported (float, double, int16, int32, int64)", DTypeName(dtype));
      return true;
  }
  ctx.SetConst(0, dtype, Shape::FromExtents({count}), std::move(data));
  return true;
}

bool AllInputsConstant(const NodeContext& ctx) {
  if (ctx.num_inputs() == 0) return false;
  bool any = false;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    if (!ctx.has_input(k)) continue;
    if (!ctx.in_is_const(k)) return false;
    any = true;
  }
  return any;
}

}  // namespace

bool TryFoldWithoutExecutor(NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  if (op == "Constant") return FoldConstantNode(ctx);
  if (op == "Shape" || op == "Size") return FoldShapeOrSize(ctx);
  if (op == "ConstantOfShape") return FoldConstantOfShape(ctx);
  if (op == "Range") return FoldRange(ctx);
  return AllInputsConstant(ctx) && FoldMetadata(ctx);
}

bool ShouldFoldByExecution(const NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  // Q/DQ turn into encodings (a constant's quantization is information the
  // IR keeps); If/Loop carry subgraphs.
  if (op == "QuantizeLinear" || op == "DequantizeLinear" || op == "If" || op == "Loop" || op == "Scan") return false;
  if (!AllInputsConstant(ctx)) return false;
  for (size_t k = 0; k < ctx.num_inputs(); ++k)
    if (ctx.has_input(k) && ctx.in(k).encoding) return false;
  return true;
}

bool Importer::FoldEmitted(NodeContext& ctx, const Graph::Checkpoint& mark) {
  const size_t first_op = mark.ops, end_op = graph_.op_count();
  if (first_op == end_op) return false;  // bound to constants or aliases already
  // Everything emitted must read only constants or tensors emitted with it.
  auto emitted = [&](TensorId t) { return t != kInvalidId && t >= mark.tensors; };
  uint64_t bytes = 0;
  for (size_t o = first_op; o < end_op; ++o) {
    const Op& op = graph_.op(static_cast<OpId>(o));
    for (TensorId t : op.inputs)
      if (t != kInvalidId && !emitted(t) && graph_.tensor(t).kind != TensorKind::kStatic) return false;
    for (TensorId t : op.outputs) {
      const Tensor& tensor = graph_.tensor(t);
      if (!emitted(t) || tensor.dtype == DType::kUndefined || !tensor.shape.fully_known()) return false;
      const auto n = tensor.shape.element_count();
      const auto b = n ? StorageBytes(tensor.dtype, *n) : std::nullopt;
      if (!b) return false;
      bytes += *b;
    }
  }
  // Large results stay ops: the executor computes them at run time instead.
  if (bytes > kMaxFoldedBytes) return false;

  std::vector<std::pair<size_t, TensorId>> results;  // ONNX output index -> emitted tensor
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    if (!ctx.has_output(k)) continue;
    const Value* v = Find(ctx.output_name(k));
    if (!v) return false;
    if (v->tensor == kInvalidId && v->is_const()) continue;
    if (!emitted(v->tensor)) return false;
    results.emplace_back(k, v->tensor);
  }
  if (results.empty()) return false;

  Graph fold("fold:" + ctx.name());
  std::unordered_map<TensorId, TensorId> remap;
  auto map = [&](TensorId t) -> Result<TensorId> {
    if (t == kInvalidId) return kInvalidId;
    if (auto it = remap.find(t); it != remap.end()) return it->second;
    const Tensor& src = graph_.tensor(t);
    auto r = src.kind == TensorKind::kStatic ? fold.AddConstant(src.name, src.dtype, src.shape, src.data)
                                             : fold.AddTensor(src.name, src.dtype, src.shape);
    if (r.ok()) remap[t] = r.value();
    return r;
  };
  for (size_t o = first_op; o < end_op; ++o) {
    const Op& op = graph_.op(static_cast<OpId>(o));
    OpSpec spec{op.type, op.name, {}, {}, op.attrs, op.source_name, op.source_op_type};
    for (TensorId t : op.inputs) {
      auto m = map(t);
      if (!m.ok()) return false;
      spec.inputs.push_back(m.value());
    }
    for (TensorId t : op.outputs) {
      auto m = map(t);
      if (!m.ok()) return false;
      spec.outputs.push_back(m.value());
    }
    if (!fold.AddOp(std::move(spec)).ok()) return false;
  }
  for (const auto& [k, t] : results)
    if (!fold.MarkOutput(remap.at(t)).ok()) return false;

  exec::Options options;
  options.num_threads = 1;
  options.simulate_quantization = false;
  auto executor = exec::Executor::Create(fold, options);
  if (!executor.ok()) return false;  // an op the executor lacks: it stays in the graph
  auto outputs = executor.value()->Run({}, {});
  if (!outputs.ok()) return false;

  if (!graph_.RollBack(mark).ok()) return false;
  UndoNames();
  // Constants this node materialised were taken back with the ops.
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    if (!ctx.has_input(k)) continue;
    Value* v = Find(ctx.node().input(static_cast<int>(k)));
    if (v && v->tensor != kInvalidId && v->tensor >= mark.tensors) v->tensor = kInvalidId;
  }
  for (size_t r = 0; r < results.size(); ++r) {
    exec::HostTensor& h = outputs.value()[r];
    ctx.SetConst(results[r].first, h.dtype, Shape::FromExtents(h.dims), StaticData::Adopt(std::move(h.bytes)));
  }
  return true;
}

}  // namespace qairt::onnx_import
