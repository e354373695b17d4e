// Building blocks shared by the per-family shape functions: safe access to
// inputs/outputs, overflow-checked dim arithmetic, numpy broadcasting with
// symbolic dims, axis handling, static shape inputs, dtype compatibility,
// auto_pad resolution and sliding-window (conv/pool) output sizes.
//
// Every helper validates what it reads and reports through the InferContext;
// none throws or indexes out of range, because shape functions run on graphs
// from untrusted files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/op_registry.h"

namespace qairt::ops {

// ---- inputs and outputs ------------------------------------------------------

// Input i, or an all-unknown type when the input is absent (optional input
// not given, or fewer inputs than the schema wants).
const TensorType& InputOrUnknown(const InferContext& ctx, size_t i);
// Writes output i when the op has it (optional outputs may be missing).
void SetOutput(InferContext& ctx, size_t i, DType dtype, Shape shape);
// ShapeFn: output 0 has input 0's dtype and shape.
void InferSameAsInput0(InferContext& ctx);
std::string InputField(size_t i);  // "inputs[i]"
// Whether attribute `name` is present as an int (HasIntsAttr: int or list of ints).
bool HasIntAttr(const InferContext& ctx, std::string_view name);
bool HasIntsAttr(const InferContext& ctx, std::string_view name);
// Rank of a shape or nullopt when unknown.
std::optional<size_t> KnownRank(const Shape& s);

// Reports kShapeMismatch and returns false when input i's rank is known and
// differs from `rank` (CheckMinRank: is below `min_rank`).
bool CheckRank(InferContext& ctx, size_t i, size_t rank);
bool CheckMinRank(InferContext& ctx, size_t i, size_t min_rank);
// Optional input i, when present with known rank, must be a vector of `length`
// entries (per-channel scale/bias); reports kShapeMismatch otherwise.
bool CheckVectorInput(InferContext& ctx, size_t i, const Dim& length, std::string_view role);

// ---- checked arithmetic ------------------------------------------------------

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b);
std::optional<int64_t> CheckedSub(int64_t a, int64_t b);
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);
// Product of dims [begin, end); nullopt if any is unknown or it overflows.
std::optional<int64_t> KnownProduct(const std::vector<Dim>& dims, size_t begin, size_t end);
// A known dim from a computed value; unknown when the value is absent. A
// negative or overflowed result is reported (kShapeMismatch) as `what`.
Dim ComputedDim(InferContext& ctx, std::optional<int64_t> value, std::string_view field, std::string_view what);
// a*b for two dims: passes `a` through unchanged (symbol included) when b is 1.
Dim MulDims(InferContext& ctx, const Dim& a, const Dim& b, std::string_view field);

// ---- dims and broadcasting ---------------------------------------------------

// Two dims that must be equal (Concat non-axis dims, MatMul K): the merged dim
// (known value first, then symbol), or nullopt when both are known and differ.
std::optional<Dim> MergeDims(const Dim& a, const Dim& b);
// numpy broadcasting of two shapes; unknown rank in -> unknown rank out.
// Reports kShapeMismatch on incompatible dims and returns nullopt.
std::optional<Shape> BroadcastShapes(InferContext& ctx, const Shape& a, const Shape& b, std::string_view field);
// True when `from` broadcasts to `to` without changing it (Prelu slope,
// LayerNorm gamma); otherwise reports kShapeMismatch.
bool CheckBroadcastsTo(InferContext& ctx, const Shape& from, const Shape& to, std::string_view field);

// ---- axes ----------------------------------------------------------------------

// Reads an int axis attribute and normalises it against `rank`; reports
// kAttribute when out of range.
std::optional<size_t> ReadAxis(InferContext& ctx, std::string_view name, int64_t default_value, size_t rank);
// Normalises a list of axes; reports out-of-range and duplicate axes.
std::optional<std::vector<size_t>> NormalizeAxes(InferContext& ctx, std::string_view field,
                                                 const std::vector<int64_t>& axes, size_t rank);
// Shape after reducing `axes` (nullopt = all axes); reports bad axes.
std::optional<Shape> ReducedShape(InferContext& ctx, const Shape& in, const std::optional<std::vector<int64_t>>& axes,
                                  bool keepdims, std::string_view field);

// ---- static data ---------------------------------------------------------------

// The values of a static int64/int32 input (Reshape's shape, Slice's starts),
// or nullopt when it has no data, another dtype, or a size that does not
// match its shape.
std::optional<std::vector<int64_t>> StaticInts(const TensorType& t);
// Attribute `name` if present, else static input `input` if present, else nullopt.
std::optional<std::vector<int64_t>> IntsFromAttrOrInput(InferContext& ctx, std::string_view name, size_t input);

// ---- dtypes ---------------------------------------------------------------------

// A DType-valued int attribute; nullopt when absent or invalid (reported).
std::optional<DType> DTypeAttr(InferContext& ctx, std::string_view name);
// Elementwise rule: same category (float, bool, integer, fixed-point), where
// every fixed-point type mixes with every other (quantized graphs mix s8/u8/u16).
bool ElementwiseDTypesCompatible(DType a, DType b);
// Reports kDTypeMismatch when inputs a and b are both known and incompatible.
void CheckElementwiseDTypes(InferContext& ctx, size_t a, size_t b);
// Conv/FC/MatMul rule: float data with integer/bool weight (or vice versa) and
// two different float types are reported; fixed-point combinations are fine.
void CheckWeightDType(InferContext& ctx, size_t data, size_t weight);
// Reports kDTypeMismatch unless input i is integer-typed (or unknown).
void CheckIntegerInput(InferContext& ctx, size_t i, std::string_view role);

// ---- auto_pad ----------------------------------------------------------------------
//
// The one resolution of ONNX's auto_pad into explicit pads: shape inference
// sizes outputs with it, the executor runs windows with it and the ONNX
// importer lowers auto_pad to explicit pads with it, so the three agree.

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };
// "NOTSET", "SAME_UPPER", "SAME_LOWER" or "VALID"; nullopt for anything else.
std::optional<AutoPad> ParseAutoPad(std::string_view s);

// Padding before and after one spatial dim.
struct DimPads {
  int64_t begin = 0;
  int64_t end = 0;
};

// Output extent of a SAME_UPPER / SAME_LOWER window: ceil(in / stride).
// Preconditions: in >= 0, stride >= 1.
int64_t SameOutputExtent(int64_t in, int64_t stride);

// Splits `total` padding between the two ends, as ONNX specifies: the odd
// unit goes at the end for SAME_UPPER and at the beginning otherwise
// (SAME_LOWER; and a ConvTranspose whose output_shape sets the padding).
// Halves round toward negative infinity, as the ONNX reference's floor
// division does; that matters only for the negative total of a transposed
// convolution asked for a larger output than its unpadded one.
DimPads SplitPadding(int64_t total, AutoPad mode);

// Pads of one spatial dim of a convolution or pooling window over `in`
// elements: NOTSET `explicit_pads`, VALID none, SAME_* the smallest total
// max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - in) with
// out = SameOutputExtent(in, stride), split by SplitPadding. nullopt when
// that arithmetic overflows or an argument is out of range (kernel, stride,
// dilation >= 1, in >= 0).
std::optional<DimPads> WindowPads(AutoPad mode, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                  DimPads explicit_pads);

// Pads of one spatial dim of a transposed convolution from `in` to `out`
// elements. With an output_shape attribute or SAME_* (whose output is
// in * stride), ONNX derives them from the output size: total =
// stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - out,
// split by SplitPadding. Otherwise VALID is none and NOTSET `explicit_pads`.
// nullopt on overflow.
std::optional<DimPads> TransposeWindowPads(AutoPad mode, bool has_output_shape, int64_t in, int64_t out,
                                           int64_t kernel, int64_t stride, int64_t dilation, int64_t output_padding,
                                           DimPads explicit_pads);

// ---- sliding windows (conv, pool) -------------------------------------------------

struct WindowAttrs {
  size_t spatial_rank = 0;
  std::vector<int64_t> strides;    // >= 1
  std::vector<int64_t> dilations;  // >= 1
  std::vector<int64_t> pads;       // ONNX order: all begins, then all ends; >= 0
  bool ceil_mode = false;
  AutoPad auto_pad = AutoPad::kNotSet;
};
// Reads and validates strides/dilations/pads/ceil_mode/auto_pad (ONNX
// defaults); nullopt after reporting a bad value.
std::optional<WindowAttrs> ReadWindowAttrs(InferContext& ctx, size_t spatial_rank);
// Output extent of spatial dim i for a window of `kernel` (-1: unknown).
// Reports a window larger than the padded input.
Dim WindowOutputDim(InferContext& ctx, const Dim& in, int64_t kernel, size_t i, const WindowAttrs& w);
// Reads an int list attribute that must have `length` entries each >= `min_value`.
std::optional<std::vector<int64_t>> ReadIntList(InferContext& ctx, std::string_view name,
                                                std::vector<int64_t> default_value, size_t length, int64_t min_value);

}  // namespace qairt::ops
