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
  const OpSchema schemas[] = {
      {"Cast", 1, 1, 1, 1, InferCast, "x; to (int DType value, required)"},
      {"Convert", 1, 1, 1, 1, InferConvert, "x (quantized or float); output_dtype? (int DType value)"},
      {"Quantize", 1, 1, 1, 1, InferQuantize, "x (float); output_dtype? (int DType value, fixed-point)"},
      {"Dequantize", 1, 1, 1, 1, InferDequantize, "x (fixed-point); output_dtype? (int DType value, float)"},
  };
  out->insert(out->end(), std::begin(schemas), std::end(schemas));
}

}  // namespace qairt::ops
