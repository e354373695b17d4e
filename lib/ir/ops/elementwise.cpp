// Elementwise ops: unary activations and math (same shape as the input),
// binary ops with numpy broadcasting, and the ternary ElementWiseSelect.
#include <cmath>
#include <limits>

#include "ir/ops/families.h"
#include "ir/ops/shape_helpers.h"

namespace qairt::ops {
namespace {

// ---- unary ---------------------------------------------------------------------

void InferReluMinMax(InferContext& ctx) {
  // Defaults as ONNX Clip (which lowers to ReluMinMax): unbounded.
  const double lo = ctx.Float("min_value", -std::numeric_limits<double>::infinity());
  const double hi = ctx.Float("max_value", std::numeric_limits<double>::infinity());
  if (std::isnan(lo) || std::isnan(hi) || lo > hi)
    ctx.Error(DiagKind::kAttribute, "min_value", "min_value {} must not exceed max_value {}", lo, hi);
  InferSameAsInput0(ctx);
}

void InferElu(InferContext& ctx) {
  ctx.Float("alpha", 1.0);  // type check only
  InferSameAsInput0(ctx);
}

void InferNeuron(InferContext& ctx) {
  // QNN's ElementWiseNeuron selects the function with a required `operation`.
  if (auto op = ctx.RequiredInt("operation"); op && *op < 0)
    ctx.Error(DiagKind::kAttribute, "operation", "operation must be >= 0, got {}", *op);
  ctx.Float("alpha", 0.0);
  ctx.Float("beta", 0.0);
  InferSameAsInput0(ctx);
}

void InferPrelu(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  CheckBroadcastsTo(ctx, InputOrUnknown(ctx, 1).shape, x.shape, InputField(1));
  CheckElementwiseDTypes(ctx, 0, 1);
  SetOutput(ctx, 0, x.dtype, x.shape);
}

void InferNot(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  if (x.dtype != DType::kUndefined && x.dtype != DType::kBool)
    ctx.Error(DiagKind::kDTypeMismatch, InputField(0), "input must be bool, got {}", DTypeName(x.dtype));
  SetOutput(ctx, 0, DType::kBool, x.shape);
}

// IsNan / IsInf: a bool mask of a float (or quantized float) input.
void InferFloatPredicate(InferContext& ctx) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  if (IsInteger(x.dtype) || x.dtype == DType::kBool)
    ctx.Error(DiagKind::kDTypeMismatch, InputField(0), "input must be floating point, got {}", DTypeName(x.dtype));
  SetOutput(ctx, 0, DType::kBool, x.shape);
}

// ---- binary ----------------------------------------------------------------------

DType DataDType(InferContext& ctx) {
  const DType a = InputOrUnknown(ctx, 0).dtype;
  return a != DType::kUndefined ? a : InputOrUnknown(ctx, 1).dtype;
}

std::optional<Shape> BroadcastInputs01(InferContext& ctx) {
  return BroadcastShapes(ctx, InputOrUnknown(ctx, 0).shape, InputOrUnknown(ctx, 1).shape, InputField(1));
}

void InferBinary(InferContext& ctx) {
  CheckElementwiseDTypes(ctx, 0, 1);
  SetOutput(ctx, 0, DataDType(ctx), BroadcastInputs01(ctx).value_or(Shape()));
}

// Power's exponent may legitimately have another type than its base (ONNX
// Pow has independent T and T1), so no dtype check.
void InferPower(InferContext& ctx) {
  SetOutput(ctx, 0, InputOrUnknown(ctx, 0).dtype, BroadcastInputs01(ctx).value_or(Shape()));
}

// Comparisons and logical ops produce bool.
void InferBinaryBool(InferContext& ctx) {
  CheckElementwiseDTypes(ctx, 0, 1);
  SetOutput(ctx, 0, DType::kBool, BroadcastInputs01(ctx).value_or(Shape()));
}

// ---- ternary ---------------------------------------------------------------------

void InferSelect(InferContext& ctx) {
  const TensorType& cond = InputOrUnknown(ctx, 0);
  if (cond.dtype != DType::kUndefined && cond.dtype != DType::kBool)
    ctx.Error(DiagKind::kDTypeMismatch, InputField(0), "condition must be bool, got {}", DTypeName(cond.dtype));
  CheckElementwiseDTypes(ctx, 1, 2);
  const TensorType& a = InputOrUnknown(ctx, 1);
  const TensorType& b = InputOrUnknown(ctx, 2);
  Shape shape;
  if (auto ab = BroadcastShapes(ctx, a.shape, b.shape, InputField(2))) {
    if (auto all = BroadcastShapes(ctx, cond.shape, *ab, InputField(0))) shape = std::move(*all);
  }
  SetOutput(ctx, 0, a.dtype != DType::kUndefined ? a.dtype : b.dtype, std::move(shape));
}

struct Entry {
  std::string_view type;
  ShapeFn infer;
  std::string_view summary;
};

constexpr Entry kUnary[] = {
    {"Relu", InferSameAsInput0, "x"},
    {"Relu1", InferSameAsInput0, "x; clamps to [-1, 1]"},
    {"Relu6", InferSameAsInput0, "x; clamps to [0, 6]"},
    {"ReluMinMax", InferReluMinMax, "x; min_value (float, -inf), max_value (float, +inf)"},
    {"HardSwish", InferSameAsInput0, "x"},
    {"Sigmoid", InferSameAsInput0, "x"},
    {"Tanh", InferSameAsInput0, "x"},
    {"Gelu", InferSameAsInput0, "x; approximate (string)"},
    {"Elu", InferElu, "x; alpha (float, 1.0)"},
    {"ElementWiseNeuron", InferNeuron, "x; operation (int, required), alpha, beta (floats)"},
    {"ElementWiseAbs", InferSameAsInput0, "x"},
    {"ElementWiseNeg", InferSameAsInput0, "x"},
    {"ElementWiseExp", InferSameAsInput0, "x"},
    {"ElementWiseLog", InferSameAsInput0, "x"},
    {"ElementWiseSquareRoot", InferSameAsInput0, "x"},
    {"ElementWiseRsqrt", InferSameAsInput0, "x"},
    {"ElementWiseSin", InferSameAsInput0, "x"},
    {"ElementWiseCos", InferSameAsInput0, "x"},
    {"ElementWiseAsin", InferSameAsInput0, "x"},
    {"ElementWiseAtan", InferSameAsInput0, "x"},
    {"ElementWiseFloor", InferSameAsInput0, "x"},
    {"ElementWiseCeil", InferSameAsInput0, "x"},
    {"ElementWiseRound", InferSameAsInput0, "x"},
    {"ElementWiseSign", InferSameAsInput0, "x"},
    {"ElementWiseSoftplus", InferSameAsInput0, "x; beta, threshold (floats)"},
    // QNN's generic unary op; `operation` names the function (e.g. "erf").
    {"ElementWiseUnary", InferSameAsInput0, "x; operation (string: erf, ...)"},
    {"ElementWiseNot", InferNot, "x (bool) -> bool"},
    {"IsNan", InferFloatPredicate, "x (float) -> bool"},
    {"IsInf", InferFloatPredicate, "x (float) -> bool; detect_negative, detect_positive (ints)"},
};

constexpr Entry kBinary[] = {
    {"ElementWiseAdd", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseSubtract", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseMultiply", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseDivide", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWisePower", InferPower, "base, exponent (numpy broadcast; exponent dtype may differ)"},
    {"ElementWiseMaximum", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseMinimum", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseFloorDiv", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseMod", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseFmod", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseSquaredDifference", InferBinary, "a, b (numpy broadcast)"},
    {"ElementWiseAnd", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
    {"ElementWiseOr", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
    {"ElementWiseXor", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
    {"ElementWiseEqual", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
    {"ElementWiseNotEqual", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
    {"ElementWiseGreater", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
    {"ElementWiseGreaterEqual", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
    {"ElementWiseLess", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
    {"ElementWiseLessEqual", InferBinaryBool, "a, b (numpy broadcast) -> bool"},
};

}  // namespace

void RegisterElementwiseOps(std::vector<OpSchema>* out) {
  for (const Entry& e : kUnary) out->push_back({e.type, 1, 1, 1, 1, e.infer, e.summary});
  out->push_back({"Prelu", 2, 2, 1, 1, InferPrelu, "x, slope (broadcastable to x)"});
  for (const Entry& e : kBinary) out->push_back({e.type, 2, 2, 1, 1, e.infer, e.summary});
  out->push_back({"ElementWiseSelect", 3, 3, 1, 1, InferSelect,
                  "condition (bool), a, b (3-way numpy broadcast); output dtype of a"});
}

}  // namespace qairt::ops
