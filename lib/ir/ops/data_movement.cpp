// Data-movement ops: reshape/squeeze/transpose, concat/split, slicing,
// padding, tiling, gather/scatter, space/batch rearrangements, Shape, OneHot.
#include <algorithm>
#include <numeric>

#include <fmt/ranges.h>  // fmt::join (moved out of format.h in fmt 11)

#include "ir/ops/families.h"
#include "ir/ops/shape_helpers.h"

namespace qairt::ops {
namespace {

// Bound on ranks read from tensor extents (e.g. the length of a shape input),
// so a hostile extent cannot make us allocate billions of dims.
constexpr int64_t kMaxRank = 1024;

Dim DimOr(const Shape& s, size_t i) { return s.rank_known() && i < s.rank() ? s[i] : Dim(); }

// ---- reshape family ----------------------------------------------------------------

// Fills in Reshape's -1 or checks the element count. Unknown input dims that
// reappear in the output (copied by 0 or carrying the same symbol) cancel out,
// so [batch, 3, 4] -> [0, -1] still gives [batch, 12].
void ResolveReshape(InferContext& ctx, const Shape& in, std::vector<Dim>& out, const std::vector<bool>& copied,
                    std::optional<size_t> infer_index) {
  std::vector<bool> cancelled(in.rank(), false);
  bool out_unknown = false;
  int64_t out_product = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (infer_index && i == *infer_index) continue;
    if (out[i].known()) {
      auto p = CheckedMul(out_product, out[i].value);
      if (!p) {  // no tensor has that many elements: a damaged shape
        ctx.Error(DiagKind::kShapeMismatch, "shape", "the target shape's element count overflows int64 (dim {} = {})",
                  i, out[i].value);
        return;
      }
      out_product = *p;
    } else if (copied[i]) {
      cancelled[i] = true;
    } else {
      bool matched = false;
      for (size_t j = 0; j < in.rank() && !out[i].symbol.empty() && !matched; ++j) {
        if (!cancelled[j] && !in[j].known() && in[j].symbol == out[i].symbol) matched = cancelled[j] = true;
      }
      out_unknown |= !matched;
    }
  }
  int64_t in_product = 1;
  for (size_t j = 0; j < in.rank(); ++j) {
    if (in[j].known()) {
      auto p = CheckedMul(in_product, in[j].value);
      if (!p) return;
      in_product = *p;
    } else if (!cancelled[j]) {
      return;  // an input dim we cannot account for
    }
  }
  if (out_unknown) return;
  if (infer_index) {
    if (out_product == 0) return;  // -1 next to a 0 extent is ambiguous
    if (in_product % out_product != 0) {
      ctx.Error(DiagKind::kShapeMismatch, "shape", "cannot reshape {} into {} elements per -1 slot", in.ToString(),
                out_product);
      return;
    }
    out[*infer_index] = Dim(in_product / out_product);
  } else if (in_product != out_product) {
    ctx.Error(DiagKind::kShapeMismatch, "shape", "cannot reshape {} ({} elements) into {} ({} elements)",
              in.ToString(), in_product, Shape(out).ToString(), out_product);
  }
}

void InferReshape(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const bool allow_zero = ctx.Int("allowzero", 0) != 0;
  auto target = IntsFromAttrOrInput(ctx, "shape", 1);
  if (!target) {
    Shape shape;
    const Shape& shape_input = InputOrUnknown(ctx, 1).shape;
    if (!ctx.has_attr("shape") && !ctx.has_input(1)) {
      ctx.RequiredInts("shape");  // reports the missing attribute
    } else if (shape_input.rank_known() && shape_input.rank() == 1 && shape_input[0].known() &&
               shape_input[0].value <= kMaxRank) {
      shape = Shape(std::vector<Dim>(static_cast<size_t>(shape_input[0].value)));  // only the rank is known
    }
    return SetOutput(ctx, 0, x.dtype, shape);
  }
  std::vector<Dim> out;
  std::vector<bool> copied;
  std::optional<size_t> infer_index;
  for (size_t i = 0; i < target->size(); ++i) {
    const int64_t v = (*target)[i];
    copied.push_back(false);
    if (v == -1) {
      if (infer_index) ctx.Error(DiagKind::kAttribute, "shape", "shape has more than one -1");
      infer_index = i;
      out.emplace_back();
    } else if (v == 0 && !allow_zero) {
      if (x.shape.rank_known() && i >= x.shape.rank())
        ctx.Error(DiagKind::kAttribute, "shape", "shape[{}] = 0 copies a dim beyond the input's rank {}", i,
                  x.shape.rank());
      copied.back() = x.shape.rank_known() && i < x.shape.rank();
      out.push_back(DimOr(x.shape, i));
    } else if (v < 0) {
      ctx.Error(DiagKind::kAttribute, "shape", "shape[{}] = {} is invalid", i, v);
      out.emplace_back();
    } else {
      out.emplace_back(v);
    }
  }
  if (x.shape.rank_known() && !ctx.failed()) ResolveReshape(ctx, x.shape, out, copied, infer_index);
  SetOutput(ctx, 0, x.dtype, Shape(std::move(out)));
}

void InferExpandDims(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  std::vector<int64_t> axes = ctx.has_attr("axes") ? ctx.Ints("axes", {}) : ctx.Ints("axis", {0});
  if (!x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape());
  const size_t out_rank = x.shape.rank() + axes.size();
  auto normalized = NormalizeAxes(ctx, "axes", axes, out_rank);
  if (!normalized) return SetOutput(ctx, 0, x.dtype, Shape());
  std::vector<bool> inserted(out_rank, false);
  for (size_t a : *normalized) inserted[a] = true;
  std::vector<Dim> dims;
  size_t next = 0;
  for (size_t i = 0; i < out_rank; ++i) dims.push_back(inserted[i] ? Dim(1) : x.shape[next++]);
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

void InferSqueeze(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  auto axes = IntsFromAttrOrInput(ctx, "axes", 1);
  if (!x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape());
  std::vector<bool> squeezed(x.shape.rank(), false);
  if (!axes) {
    if (ctx.has_input(1) || !x.shape.fully_known()) return SetOutput(ctx, 0, x.dtype, Shape());
    for (size_t i = 0; i < x.shape.rank(); ++i) squeezed[i] = x.shape[i].value == 1;
  } else {
    auto normalized = NormalizeAxes(ctx, "axes", *axes, x.shape.rank());
    if (!normalized) return SetOutput(ctx, 0, x.dtype, Shape());
    for (size_t a : *normalized) {
      if (x.shape[a].known() && x.shape[a].value != 1)
        ctx.Error(DiagKind::kShapeMismatch, "axes", "cannot squeeze dim {} of size {}", a, x.shape[a].value);
      squeezed[a] = true;
    }
  }
  std::vector<Dim> dims;
  for (size_t i = 0; i < x.shape.rank(); ++i)
    if (!squeezed[i]) dims.push_back(x.shape[i]);
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

void InferTranspose(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  std::vector<int64_t> perm = ctx.Ints("perm", {});
  const bool has_perm = ctx.has_attr("perm");
  if (!x.shape.rank_known()) {
    if (has_perm && static_cast<int64_t>(perm.size()) <= kMaxRank) return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(perm.size())));
    return SetOutput(ctx, 0, x.dtype, Shape());
  }
  const size_t rank = x.shape.rank();
  if (!has_perm) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the dims
  }
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (size_t i = 0; valid && i < perm.size(); ++i) {
    valid = perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(perm[i])];
    if (valid) seen[static_cast<size_t>(perm[i])] = true;
  }
  if (!valid) {
    ctx.Error(DiagKind::kAttribute, "perm", "perm [{}] is not a permutation of 0..{}", fmt::join(perm, ", "),
              static_cast<int64_t>(rank) - 1);
    return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(rank)));
  }
  std::vector<Dim> dims;
  for (int64_t p : perm) dims.push_back(x.shape[static_cast<size_t>(p)]);
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

// ---- concat / split -----------------------------------------------------------------------

void InferConcat(InferContext& ctx) {
  DType dtype = DType::kUndefined;
  std::optional<size_t> rank;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = InputOrUnknown(ctx, i);
    if (dtype == DType::kUndefined) dtype = t.dtype;
    if (!ElementwiseDTypesCompatible(dtype, t.dtype))
      ctx.Error(DiagKind::kDTypeMismatch, InputField(i), "input {} is {} but earlier inputs are {}", i,
                DTypeName(t.dtype), DTypeName(dtype));
    if (!t.shape.rank_known()) continue;
    if (rank && *rank != t.shape.rank()) {
      ctx.Error(DiagKind::kShapeMismatch, InputField(i), "input {} has rank {} but earlier inputs have rank {}", i,
                t.shape.rank(), *rank);
      return SetOutput(ctx, 0, dtype, Shape());
    }
    rank = t.shape.rank();
  }
  auto axis_value = ctx.RequiredInt("axis");
  if (!rank) return SetOutput(ctx, 0, dtype, Shape());
  auto axis = axis_value ? NormalizeAxis(*axis_value, *rank) : std::nullopt;
  if (axis_value && !axis)
    ctx.Error(DiagKind::kAttribute, "axis", "axis {} is out of range for rank {}", *axis_value, *rank);
  if (!axis) return SetOutput(ctx, 0, dtype, Shape(std::vector<Dim>(*rank)));
  std::vector<Dim> dims;
  for (size_t d = 0; d < *rank; ++d) {
    std::optional<Dim> merged;
    std::optional<int64_t> sum = 0;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Shape& s = InputOrUnknown(ctx, i).shape;
      const Dim dim = DimOr(s, d);
      if (d == *axis) {
        sum = (sum && dim.known()) ? CheckedAdd(*sum, dim.value) : std::nullopt;
        continue;
      }
      auto m = merged ? MergeDims(*merged, dim) : std::optional<Dim>(dim);
      if (!m) {
        ctx.Error(DiagKind::kShapeMismatch, InputField(i), "dim {} of input {} is {} but earlier inputs have {}", d, i,
                  dim.value, merged->value);
        return SetOutput(ctx, 0, dtype, Shape(std::vector<Dim>(*rank)));
      }
      merged = m;
    }
    if (d != *axis)
      dims.push_back(merged.value_or(Dim()));
    else if (ctx.num_inputs() == 1)
      dims.push_back(DimOr(InputOrUnknown(ctx, 0).shape, d));
    else
      dims.push_back(sum ? Dim(*sum) : Dim());
  }
  SetOutput(ctx, 0, dtype, Shape(std::move(dims)));
}

void InferSplit(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const size_t n = ctx.num_outputs();
  auto sizes = IntsFromAttrOrInput(ctx, "split", 1);
  if (ctx.has_attr("num_outputs") && ctx.Int("num_outputs", 0) != static_cast<int64_t>(n))
    ctx.Error(DiagKind::kAttribute, "num_outputs", "num_outputs = {} but the op has {} outputs",
              ctx.Int("num_outputs", 0), n);
  std::vector<Shape> outs(n, x.shape.rank_known() ? Shape(x.shape) : Shape());
  auto axis = x.shape.rank_known() ? ReadAxis(ctx, "axis", 0, x.shape.rank()) : std::nullopt;
  if (axis && n > 0) {
    const Dim dim = x.shape[*axis];
    std::vector<Dim> parts(n);
    if (sizes) {
      std::optional<int64_t> total = 0;
      if (sizes->size() != n) {
        ctx.Error(DiagKind::kAttribute, "split", "split has {} sizes but the op has {} outputs", sizes->size(), n);
      } else {
        for (size_t i = 0; i < n; ++i) {
          const int64_t v = (*sizes)[i];
          if (v < 0) ctx.Error(DiagKind::kAttribute, "split", "split[{}] = {} is negative", i, v);
          parts[i] = v >= 0 ? Dim(v) : Dim();
          total = total ? CheckedAdd(*total, v) : std::nullopt;
        }
        if (dim.known() && total != dim.value)
          ctx.Error(DiagKind::kShapeMismatch, "split", "split sizes sum to {} but dim {} is {}", total.value_or(-1),
                    *axis, dim.value);
      }
    } else if (ctx.has_input(1)) {
      // Sizes from a non-static tensor: the split dims stay unknown.
    } else if (dim.known()) {
      // ONNX opset 18: equal chunks of ceil(dim / n); the last may be smaller.
      const auto count = static_cast<int64_t>(n);
      const int64_t chunk = dim.value / count + (dim.value % count != 0 ? 1 : 0);
      if (dim.value - chunk * (count - 1) < 0) {
        ctx.Error(DiagKind::kShapeMismatch, InputField(0), "dim {} of size {} cannot be split into {} outputs", *axis,
                  dim.value, n);
      } else {
        for (size_t i = 0; i < n; ++i) parts[i] = Dim(i + 1 < n ? chunk : dim.value - chunk * (count - 1));
      }
    } else if (n == 1) {
      parts[0] = dim;
    }
    for (size_t i = 0; i < n; ++i) outs[i][*axis] = parts[i];
  } else if (x.shape.rank_known() && !axis) {
    outs.assign(n, Shape(std::vector<Dim>(x.shape.rank())));
  }
  for (size_t i = 0; i < n; ++i) SetOutput(ctx, i, x.dtype, std::move(outs[i]));
}

// ---- slicing, padding, tiling ----------------------------------------------------------------

// Length of an ONNX Slice along a dim of known extent, with ONNX clamping.
int64_t SliceLength(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;  // cannot overflow: dim >= 0
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  const int64_t span = step > 0 ? end - start : start - end;
  // -INT64_MIN overflows; any |step| >= dim selects at most one element anyway.
  const int64_t magnitude = step > 0 ? step : (step == INT64_MIN ? INT64_MAX : -step);
  return span <= 0 ? 0 : 1 + (span - 1) / magnitude;
}

void InferStridedSlice(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  auto starts = IntsFromAttrOrInput(ctx, "starts", 1);
  auto ends = IntsFromAttrOrInput(ctx, "ends", 2);
  auto axes = IntsFromAttrOrInput(ctx, "axes", 3);
  auto steps = IntsFromAttrOrInput(ctx, "steps", 4);
  if (!ctx.has_attr("starts") && !ctx.has_input(1)) ctx.RequiredInts("starts");
  if (!ctx.has_attr("ends") && !ctx.has_input(2)) ctx.RequiredInts("ends");
  if (!x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape());
  const size_t rank = x.shape.rank();
  std::vector<Dim> dims = x.shape.dims();
  const bool axes_unresolved = ctx.has_input(3) && !axes;
  if (!starts || !ends || axes_unresolved || (ctx.has_input(4) && !steps)) {
    // Values not static: the sliced dims are unknown (all of them if we don't know which).
    if (axes_unresolved || !axes) return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(rank)));
    if (auto normalized = NormalizeAxes(ctx, "axes", *axes, rank))
      for (size_t a : *normalized) dims[a] = Dim();
    return SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
  }
  const size_t n = starts->size();
  if (ends->size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
    ctx.Error(DiagKind::kAttribute, "ends", "starts, ends, axes and steps must have the same length ({})", n);
    return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(rank)));
  }
  if (!axes) {
    axes.emplace(n);
    std::iota(axes->begin(), axes->end(), 0);
  }
  auto normalized = NormalizeAxes(ctx, "axes", *axes, rank);
  if (!normalized) return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(rank)));
  for (size_t i = 0; i < n; ++i) {
    const int64_t step = steps ? (*steps)[i] : 1;
    const size_t a = (*normalized)[i];
    if (step == 0) {
      ctx.Error(DiagKind::kAttribute, "steps", "steps[{}] is 0", i);
      dims[a] = Dim();
    } else if (dims[a].known()) {
      dims[a] = Dim(SliceLength(dims[a].value, (*starts)[i], (*ends)[i], step));
    } else if (!(step == 1 && (*starts)[i] == 0 && (*ends)[i] >= INT32_MAX)) {
      dims[a] = Dim();  // a full forward slice keeps the (symbolic) dim
    }
  }
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

void InferPad(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  if (const std::string mode = ctx.String("mode", "constant");
      mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    ctx.Error(DiagKind::kAttribute, "mode", "unknown pad mode '{}'", mode);
  auto pads = IntsFromAttrOrInput(ctx, "pads", 1);
  if (!ctx.has_attr("pads") && !ctx.has_input(1)) ctx.RequiredInts("pads");
  if (!x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape());
  const size_t rank = x.shape.rank();
  if (!pads) return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(rank)));
  if (pads->size() != 2 * rank) {
    ctx.Error(DiagKind::kAttribute, "pads", "pads has {} values, expected {} (begins then ends)", pads->size(),
              2 * rank);
    return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(rank)));
  }
  std::vector<Dim> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t begin = (*pads)[i], end = (*pads)[rank + i];
    if (begin == 0 && end == 0) {
      dims[i] = x.shape[i];
    } else if (x.shape[i].known()) {
      auto v = CheckedAdd(x.shape[i].value, begin);
      dims[i] = ComputedDim(ctx, v ? CheckedAdd(*v, end) : std::nullopt, "pads", "padded dim");
    }
  }
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

void InferTile(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  auto multiples = IntsFromAttrOrInput(ctx, "multiples", 1);
  if (!ctx.has_attr("multiples") && !ctx.has_input(1)) ctx.RequiredInts("multiples");
  if (!x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape());
  const size_t rank = x.shape.rank();
  std::vector<Dim> dims(rank);
  if (multiples && multiples->size() != rank) {
    ctx.Error(DiagKind::kAttribute, "multiples", "multiples has {} values for rank {}", multiples->size(), rank);
  } else if (multiples) {
    for (size_t i = 0; i < rank; ++i) {
      if ((*multiples)[i] < 0)
        ctx.Error(DiagKind::kAttribute, "multiples", "multiples[{}] = {} is negative", i, (*multiples)[i]);
      else
        dims[i] = MulDims(ctx, x.shape[i], Dim((*multiples)[i]), "multiples");
    }
  }
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

// ---- gather / scatter ------------------------------------------------------------------------

// data.shape[:axis] + indices.shape + data.shape[axis+1:]
void InferGather(InferContext& ctx) {
  const TensorType& data = InputOrUnknown(ctx, 0);
  const Shape& indices = InputOrUnknown(ctx, 1).shape;
  CheckIntegerInput(ctx, 1, "indices");
  if (!data.shape.rank_known()) return SetOutput(ctx, 0, data.dtype, Shape());
  auto axis = ReadAxis(ctx, "axis", 0, data.shape.rank());
  if (!axis || !indices.rank_known()) return SetOutput(ctx, 0, data.dtype, Shape());
  std::vector<Dim> dims(data.shape.dims().begin(), data.shape.dims().begin() + static_cast<ptrdiff_t>(*axis));
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), data.shape.dims().begin() + static_cast<ptrdiff_t>(*axis) + 1, data.shape.dims().end());
  SetOutput(ctx, 0, data.dtype, Shape(std::move(dims)));
}

void InferGatherElements(InferContext& ctx) {
  const TensorType& data = InputOrUnknown(ctx, 0);
  const Shape& indices = InputOrUnknown(ctx, 1).shape;
  CheckIntegerInput(ctx, 1, "indices");
  if (data.shape.rank_known()) {
    ReadAxis(ctx, "axis", 0, data.shape.rank());
    CheckRank(ctx, 1, data.shape.rank());
  }
  SetOutput(ctx, 0, data.dtype, indices);
}

// indices.shape[:-1] + data.shape[batch_dims + k:], k = indices.shape[-1]
void InferGatherNd(InferContext& ctx) {
  const TensorType& data = InputOrUnknown(ctx, 0);
  const Shape& indices = InputOrUnknown(ctx, 1).shape;
  CheckIntegerInput(ctx, 1, "indices");
  const int64_t batch_dims = ctx.Int("batch_dims", 0);
  if (!data.shape.rank_known() || !indices.rank_known()) return SetOutput(ctx, 0, data.dtype, Shape());
  const auto r = static_cast<int64_t>(data.shape.rank()), q = static_cast<int64_t>(indices.rank());
  if (batch_dims < 0 || batch_dims >= std::min(r, q)) {
    ctx.Error(DiagKind::kAttribute, "batch_dims", "batch_dims {} must be in [0, {})", batch_dims, std::min(r, q));
    return SetOutput(ctx, 0, data.dtype, Shape());
  }
  const Dim& k = indices[indices.rank() - 1];
  if (!k.known()) return SetOutput(ctx, 0, data.dtype, Shape());
  if (k.value < 1 || k.value > r - batch_dims) {
    ctx.Error(DiagKind::kShapeMismatch, InputField(1), "indices' last dim {} must be in [1, {}]", k.value,
              r - batch_dims);
    return SetOutput(ctx, 0, data.dtype, Shape());
  }
  std::vector<Dim> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), data.shape.dims().begin() + batch_dims + k.value, data.shape.dims().end());
  SetOutput(ctx, 0, data.dtype, Shape(std::move(dims)));
}

// ScatterNd: updates = indices.shape[:-1] + data.shape[k:].
void InferScatterNd(InferContext& ctx) {
  const TensorType& data = InputOrUnknown(ctx, 0);
  const Shape& indices = InputOrUnknown(ctx, 1).shape;
  const Shape& updates = InputOrUnknown(ctx, 2).shape;
  CheckIntegerInput(ctx, 1, "indices");
  CheckElementwiseDTypes(ctx, 0, 2);
  if (data.shape.rank_known() && indices.rank_known() && indices.rank() >= 1) {
    const Dim& k = indices[indices.rank() - 1];
    if (k.known() && k.value > static_cast<int64_t>(data.shape.rank())) {
      ctx.Error(DiagKind::kShapeMismatch, InputField(1), "indices' last dim {} exceeds data rank {}", k.value,
                data.shape.rank());
    } else if (k.known()) {
      std::vector<Dim> expected(indices.dims().begin(), indices.dims().end() - 1);
      expected.insert(expected.end(), data.shape.dims().begin() + k.value, data.shape.dims().end());
      if (ShapesConflict(Shape(expected), updates))
        ctx.Error(DiagKind::kShapeMismatch, InputField(2), "updates shape {} should be {}", updates.ToString(),
                  Shape(expected).ToString());
    }
  }
  SetOutput(ctx, 0, data.dtype, data.shape);
}

void InferScatterElements(InferContext& ctx) {
  const TensorType& data = InputOrUnknown(ctx, 0);
  CheckIntegerInput(ctx, 1, "indices");
  CheckElementwiseDTypes(ctx, 0, 2);
  if (data.shape.rank_known()) {
    ReadAxis(ctx, "axis", 0, data.shape.rank());
    CheckRank(ctx, 1, data.shape.rank());
  }
  if (ShapesConflict(InputOrUnknown(ctx, 1).shape, InputOrUnknown(ctx, 2).shape))
    ctx.Error(DiagKind::kShapeMismatch, InputField(2), "updates shape {} differs from indices shape {}",
              InputOrUnknown(ctx, 2).shape.ToString(), InputOrUnknown(ctx, 1).shape.ToString());
  SetOutput(ctx, 0, data.dtype, data.shape);
}

// ---- space / batch / channel rearrangements --------------------------------------------------

// BatchToSpace (crops) and SpaceToBatch (pads) on NCHW with a 2-D block;
// the 4 crop/pad values are in ONNX order [h_begin, w_begin, h_end, w_end].
void InferSpaceBatch(InferContext& ctx, bool to_space) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const std::string_view margins_name = to_space ? "crops" : "pads";
  auto block = ctx.has_attr("block_shape") ? ReadIntList(ctx, "block_shape", {}, 2, 1) : std::nullopt;
  if (!ctx.has_attr("block_shape")) ctx.RequiredInts("block_shape");
  auto margins = ReadIntList(ctx, margins_name, {0, 0, 0, 0}, 4, 0);
  if (!CheckRank(ctx, 0, 4) || !x.shape.rank_known()) return SetOutput(ctx, 0, x.dtype, Shape(std::vector<Dim>(4)));
  std::vector<Dim> dims = {Dim(), x.shape[1], Dim(), Dim()};
  if (!block || !margins) return SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
  const auto block_area = CheckedMul((*block)[0], (*block)[1]);
  const Dim& batch = x.shape[0];
  if (to_space && block_area && batch.known()) {
    if (batch.value % *block_area != 0)
      ctx.Error(DiagKind::kShapeMismatch, InputField(0), "batch {} is not divisible by the block size {}", batch.value,
                *block_area);
    else
      dims[0] = Dim(batch.value / *block_area);
  } else if (!to_space && block_area) {
    dims[0] = MulDims(ctx, batch, Dim(*block_area), "block_shape");
  }
  for (size_t i = 0; i < 2; ++i) {
    const Dim& in = x.shape[2 + i];
    const int64_t b = (*block)[i], margin_begin = (*margins)[i], margin_end = (*margins)[2 + i];
    if (!in.known()) continue;
    if (to_space) {
      auto grown = CheckedMul(in.value, b);
      auto cropped = grown ? CheckedSub(*grown, margin_begin) : std::nullopt;
      dims[2 + i] = ComputedDim(ctx, cropped ? CheckedSub(*cropped, margin_end) : std::nullopt, "crops",
                                "cropped spatial dim");
      continue;
    }
    auto padded = CheckedAdd(in.value, margin_begin);
    padded = padded ? CheckedAdd(*padded, margin_end) : std::nullopt;
    if (!padded) {
      dims[2 + i] = ComputedDim(ctx, std::nullopt, "pads", "padded spatial dim");
    } else if (*padded % b != 0) {
      ctx.Error(DiagKind::kShapeMismatch, "pads", "padded spatial dim {} = {} is not divisible by block {}", i,
                *padded, b);
    } else {
      dims[2 + i] = Dim(*padded / b);
    }
  }
  SetOutput(ctx, 0, x.dtype, Shape(std::move(dims)));
}

void InferBatchToSpace(InferContext& ctx) { InferSpaceBatch(ctx, true); }
void InferSpaceToBatch(InferContext& ctx) { InferSpaceBatch(ctx, false); }

void InferChannelShuffle(InferContext& ctx) {
  const Shape& x = InputOrUnknown(ctx, 0).shape;
  auto groups = ctx.RequiredInt("num_groups");
  if (groups && *groups < 1) ctx.Error(DiagKind::kAttribute, "num_groups", "num_groups must be >= 1, got {}", *groups);
  if (x.rank_known()) {
    auto axis = ReadAxis(ctx, "axis", 1, x.rank());
    if (axis && groups && *groups >= 1 && x[*axis].known() && x[*axis].value % *groups != 0)
      ctx.Error(DiagKind::kShapeMismatch, InputField(0), "dim {} of size {} is not divisible by num_groups {}", *axis,
                x[*axis].value, *groups);
  }
  InferSameAsInput0(ctx);
}

// ---- shape-producing ops --------------------------------------------------------------------

void InferShapeOp(InferContext& ctx) {
  const auto rank = KnownRank(InputOrUnknown(ctx, 0).shape);
  SetOutput(ctx, 0, DType::kInt64, Shape{rank ? Dim(static_cast<int64_t>(*rank)) : Dim()});
}

void InferNonZero(InferContext& ctx) {
  const auto rank = KnownRank(InputOrUnknown(ctx, 0).shape);
  SetOutput(ctx, 0, DType::kInt64, Shape{rank ? Dim(static_cast<int64_t>(*rank)) : Dim(), Dim()});
}

// indices [...] -> [...] with `depth` inserted at `axis` (of the output rank).
void InferOneHot(InferContext& ctx) {
  const Shape& indices = InputOrUnknown(ctx, 0).shape;
  CheckIntegerInput(ctx, 0, "indices");
  DType dtype = InputOrUnknown(ctx, 2).dtype;
  if (dtype == DType::kUndefined) dtype = DTypeAttr(ctx, "output_dtype").value_or(DType::kUndefined);
  Dim depth;
  if (auto d = ctx.RequiredInt("depth")) {
    if (*d < 1) ctx.Error(DiagKind::kAttribute, "depth", "depth must be >= 1, got {}", *d);
    else depth = Dim(*d);
  }
  if (!indices.rank_known()) return SetOutput(ctx, 0, dtype, Shape());
  auto axis = ReadAxis(ctx, "axis", -1, indices.rank() + 1);
  if (!axis) return SetOutput(ctx, 0, dtype, Shape(std::vector<Dim>(indices.rank() + 1)));
  std::vector<Dim> dims = indices.dims();
  dims.insert(dims.begin() + static_cast<ptrdiff_t>(*axis), depth);
  SetOutput(ctx, 0, dtype, Shape(std::move(dims)));
}

void RegisterIndexingOps(std::vector<OpSchema>* out) {
  const OpSchema schemas[] = {
      {"Gather", 2, 2, 1, 1, InferGather, "data, indices (integer); axis (0)"},
      {"GatherElements", 2, 2, 1, 1, InferGatherElements, "data, indices (integer, same rank) -> indices shape; axis (0)"},
      {"GatherNd", 2, 2, 1, 1, InferGatherNd, "data, indices (integer, last dim = index depth); batch_dims (0)"},
      {"ScatterNd", 3, 3, 1, 1, InferScatterNd, "data, indices (integer), updates -> data shape; reduction"},
      {"ScatterElements", 3, 3, 1, 1, InferScatterElements, "data, indices (integer), updates -> data shape; axis (0), reduction"},
      {"BatchToSpace", 1, 1, 1, 1, InferBatchToSpace, "x[N,C,H,W]; block_shape [bh,bw] (required), crops [h_begin,w_begin,h_end,w_end]"},
      {"SpaceToBatch", 1, 1, 1, 1, InferSpaceToBatch, "x[N,C,H,W]; block_shape [bh,bw] (required), pads [h_begin,w_begin,h_end,w_end]"},
      {"ChannelShuffle", 1, 1, 1, 1, InferChannelShuffle, "x; num_groups (required), axis (1)"},
      {"Shape", 1, 1, 1, 1, InferShapeOp, "x -> int64 [rank]"},
      {"NonZero", 1, 1, 1, 1, InferNonZero, "x -> int64 [rank, count]"},
      {"OneHot", 1, 3, 1, 1, InferOneHot, "indices (integer), depth?, values?; depth (required), axis (-1), output_dtype?"},
  };
  out->insert(out->end(), std::begin(schemas), std::end(schemas));
}

}  // namespace

void RegisterDataMovementOps(std::vector<OpSchema>* out) {
  const OpSchema schemas[] = {
      {"Reshape", 1, 2, 1, 1, InferReshape,
       "x, shape?(static int64/int32); shape (ints; 0 copies, -1 infers), allowzero (0)"},
      {"ExpandDims", 1, 1, 1, 1, InferExpandDims, "x; axes (ints, in output rank) or axis"},
      {"Squeeze", 1, 2, 1, 1, InferSqueeze, "x, axes?(static); axes (absent: all 1-dims)"},
      {"Transpose", 1, 1, 1, 1, InferTranspose, "x; perm (default: reversed)"},
      {"Concat", 1, kVariadic, 1, 1, InferConcat, "x0, x1, ... (same rank); axis (required)"},
      {"Split", 1, 2, 1, kVariadic, InferSplit,
       "x, split?(static); axis (0), split (sizes; absent: equal chunks over the outputs), num_outputs?"},
      {"StridedSlice", 1, 5, 1, 1, InferStridedSlice,
       "x, starts?, ends?, axes?, steps? (static); starts, ends (required), axes, steps (ONNX Slice semantics)"},
      {"Pad", 1, 3, 1, 1, InferPad, "x, pads?(static), constant_value?; pads [begins..., ends...], mode (constant|reflect|edge|wrap)"},
      {"Tile", 1, 2, 1, 1, InferTile, "x, multiples?(static); multiples (one per dim)"},
  };
  out->insert(out->end(), std::begin(schemas), std::end(schemas));
  RegisterIndexingOps(out);
}

}  // namespace qairt::ops
