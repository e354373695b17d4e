// Dtype arithmetic of kernel selection and convert insertion: the spec's
// precision order, the per-slot distance, and how an encoding is carried to
// another dtype (sign flip through the offset, promotion to a wider grid that
// contains the old one exactly, promotion to float).
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/encoding.h"
#include "ir/graph.h"
#include "target/target_descriptor.h"

namespace qairt::pass {

inline constexpr double kInfDistance = std::numeric_limits<double>::infinity();
// Costs: a sign flip through the offset is cheap; each step up the precision
// order (int2 < int4 < int8 < int16 < int32 < float16 < float32) costs one.
inline constexpr double kSignFlipCost = 0.1;
inline constexpr double kPromotionStepCost = 1.0;

// Position in the spec's precision order: int2 = 0 ... float32 = 6; -1 for
// types outside it (bool, undefined, 64-bit ints, float64).
int PrecisionRank(DType d);

// The dtype a tensor asks for: its encoding's, else its own datatype.
DType RequestedDType(const Tensor& t);

// Encoding of `e` carried to `to` with the same real range (nullopt if that is
// impossible: lower precision, float to fixed point, integer types).
std::optional<Encoding> AdaptEncoding(const Encoding& e, DType to);

// Float encoding of type `dtype` (kFloat16/kFloat32).
Encoding FloatEncoding(DType dtype);

// QNN op type that converts `from` -> `to` on the target ("Convert", "Cast",
// "Quantize", "Dequantize"), or empty if the target has none.
std::string ConvertOpType(const target::Target& t, DType from, DType to);

// "IN < s8, u8, > OUT < s8, >"
std::string DTypeTuple(const std::vector<DType>& in, const std::vector<DType>& out);
// "IN < 0, 0.1, > OUT < 0, >"
std::string DistanceTuple(const std::vector<double>& in, const std::vector<double>& out);
std::string FormatDistance(double d);

// QNN encoding-definition name of an encoding for logs: "scale_offset",
// "axis_scale_offset", "bw_scale_offset", "blockwise_expansion", "vector", "undefined".
std::string_view EncodingTypeName(const std::optional<Encoding>& e);

}  // namespace qairt::pass
