// Reductions: Reduce* over a set of axes, Argmax/Argmin, TopK and the
// shape-preserving CumulativeSum.
#include "ir/ops/families.h"
#include "ir/ops/shape_helpers.h"

namespace qairt::ops {
namespace {

// axes absent (or empty) = all axes; keepdims defaults to 1 as in ONNX.
void InferReduce(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  auto axes = IntsFromAttrOrInput(ctx, "axes", 1);
  const bool keepdims = ctx.Int("keepdims", 1) != 0;
  if (!axes && ctx.has_input(1) && x.shape.rank_known()) {
    // Axes given by a non-static tensor: with keepdims only the rank is known.
    return SetOutput(ctx, 0, x.dtype, keepdims ? Shape(std::vector<Dim>(x.shape.rank())) : Shape());
  }
  SetOutput(ctx, 0, x.dtype, ReducedShape(ctx, x.shape, axes, keepdims, "axes").value_or(Shape()));
}

std::optional<DType> IndexDType(InferContext& ctx) {
  auto dtype = DTypeAttr(ctx, "output_dtype");
  if (dtype && !IsInteger(*dtype)) {
    ctx.Error(DiagKind::kAttribute, "output_dtype", "output_dtype must be an integer type, got {}", DTypeName(*dtype));
    return std::nullopt;
  }
  return dtype;
}

void InferArgReduce(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const DType dtype = IndexDType(ctx).value_or(DType::kInt32);
  const bool keepdims = ctx.Int("keepdims", 1) != 0;
  Shape shape;
  if (x.shape.rank_known()) {
    if (auto axis = ReadAxis(ctx, "axis", 0, x.shape.rank()))
      shape = ReducedShape(ctx, x.shape, std::vector<int64_t>{static_cast<int64_t>(*axis)}, keepdims, "axis")
                  .value_or(Shape());
    else
      shape = keepdims ? Shape(std::vector<Dim>(x.shape.rank())) : Shape();
  }
  SetOutput(ctx, 0, dtype, std::move(shape));
}

// Outputs: values (input dtype) and indices (int32), with dim `axis` = k.
void InferTopK(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  Dim k;
  if (ctx.has_attr("k") || !ctx.has_input(1)) {
    if (auto v = ctx.RequiredInt("k")) {
      if (*v < 0) ctx.Error(DiagKind::kAttribute, "k", "k must be >= 0, got {}", *v);
      else k = Dim(*v);
    }
  } else if (auto values = StaticInts(ctx.input(1)); values && values->size() == 1 && (*values)[0] >= 0) {
    k = Dim((*values)[0]);
  }
  Shape shape;
  if (x.shape.rank_known()) {
    shape = x.shape;
    if (auto axis = ReadAxis(ctx, "axis", -1, x.shape.rank())) {
      if (k.known() && x.shape[*axis].known() && k.value > x.shape[*axis].value)
        ctx.Error(DiagKind::kAttribute, "k", "k = {} exceeds dim {} of size {}", k.value, *axis, x.shape[*axis].value);
      shape[*axis] = k;
    } else {
      shape = Shape(std::vector<Dim>(x.shape.rank()));
    }
  }
  SetOutput(ctx, 0, x.dtype, shape);
  SetOutput(ctx, 1, IndexDType(ctx).value_or(DType::kInt32), shape);
}

void InferCumulativeSum(InferContext& ctx) {
  const Shape& x = InputOrUnknown(ctx, 0).shape;
  if (x.rank_known()) ReadAxis(ctx, "axis", 0, x.rank());
  ctx.Int("exclusive", 0);
  ctx.Int("reverse", 0);
  InferSameAsInput0(ctx);
}

constexpr std::string_view kReduceSummary = "x, axes?(static); axes (absent: all), keepdims (1)";

}  // namespace

void RegisterReductionOps(std::vector<OpSchema>* out) {
  const OpSchema schemas[] = {
      {"ReduceMax", 1, 2, 1, 1, InferReduce, kReduceSummary},
      {"ReduceMin", 1, 2, 1, 1, InferReduce, kReduceSummary},
      {"ReduceMean", 1, 2, 1, 1, InferReduce, kReduceSummary},
      {"ReduceSum", 1, 2, 1, 1, InferReduce, kReduceSummary},
      {"ReduceProd", 1, 2, 1, 1, InferReduce, kReduceSummary},
      {"ReduceSumSquare", 1, 2, 1, 1, InferReduce, kReduceSummary},
      {"Argmax", 1, 1, 1, 1, InferArgReduce, "x -> int32 indices; axis (0), keepdims (1), output_dtype?"},
      {"Argmin", 1, 1, 1, 1, InferArgReduce, "x -> int32 indices; axis (0), keepdims (1), output_dtype?"},
      {"TopK", 1, 2, 2, 2, InferTopK, "x, k?(static) -> values, indices (int32, or output_dtype); k (required), axis (-1), largest, sorted"},
      {"CumulativeSum", 1, 1, 1, 1, InferCumulativeSum, "x; axis (0), exclusive, reverse"},
  };
  out->insert(out->end(), std::begin(schemas), std::end(schemas));
}

}  // namespace qairt::ops
