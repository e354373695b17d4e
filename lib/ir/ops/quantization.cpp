// Type-changing ops with the input's shape: Cast (to a required dtype),
// Convert (requantisation), Quantize and Dequantize.
#include "ir/ops/families.h"
#include "ir/ops/shape_helpers.h"

namespace qairt::ops {
namespace {

void InferCast(InferContext& ctx) {
  const Shape& shape = InputOrUnknown(ctx, 0).shape;
  DType dtype = DType::kUndefined;
  if (!ctx.has_attr("to"))
    ctx.RequiredInt("to");  // reports the missing attribute
  else
    dtype = DTypeAttr(ctx, "to").value_or(DType::kUndefined);
  SetOutput(ctx, 0, dtype, shape);
}

void InferConvert(InferContext& ctx) {
  SetOutput(ctx, 0, DTypeAttr(ctx, "output_dtype").value_or(DType::kUndefined), InputOrUnknown(ctx, 0).shape);
}

// Quantize: a float input to a fixed-point (or integer) output.
void InferQuantize(InferContext& ctx) {
  auto dtype = DTypeAttr(ctx, "output_dtype");
  if (dtype && !IsFixedPoint(*dtype) && !IsInteger(*dtype)) {
    ctx.Error(DiagKind::kAttribute, "output_dtype", "Quantize must produce a fixed-point type, got {}",
              DTypeName(*dtype));
    dtype.reset();
  }
  SetOutput(ctx, 0, dtype.value_or(DType::kUndefined), InputOrUnknown(ctx, 0).shape);
}

void InferDequantize(InferContext& ctx) {
  auto dtype = DTypeAttr(ctx, "output_dtype");
  if (dtype && !IsFloat(*dtype)) {
    ctx.Error(DiagKind::kAttribute, "output_dtype", "Dequantize must produce a float type, got {}", DTypeName(*dtype));
    dtype.reset();
  }
  SetOutput(ctx, 0, dtype.value_or(DType::kUndefined), InputOrUnknown(ctx, 0).shape);
}

}  // namespace

void RegisterQuantizationOps(std::vector<OpSchema>* out) {
  // Each takes one input and gives one output.
  auto add = [out](std::string_view type, ShapeFn infer, std::string_view summary) {
    out->push_back({type, 1, 1, 1, 1, infer, summary});
  };
  add("Cast", InferCast, "x; to (int DType value, required)");
  add("Convert", InferConvert, "x (quantized or float); output_dtype? (int DType value)");
  add("Quantize", InferQuantize, "x (float); output_dtype? (int DType value, fixed-point)");
  add("Dequantize", InferDequantize, "x (fixed-point); output_dtype? (int DType value, float)");
}

}  // namespace qairt::ops
