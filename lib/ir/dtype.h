// Element types of the IR. Values equal enum qairt_dtype in the C header
// (pinned by static_asserts in capi/abi_asserts.cpp), so the C boundary casts.
//
// QNN distinguishes plain integers (indices, shapes: TRACE tokens is32, iu8)
// from fixed-point values whose meaning comes from an encoding (s8, u16).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace qairt {

// One line per DTypeFamily.
enum class DType : uint32_t {
  kUndefined = 0,
  kFloat32 = 1, kFloat16 = 2, kBFloat16 = 3, kFloat64 = 4,
  kBool = 5,
  kInt2 = 6, kInt4 = 7, kInt8 = 8, kInt16 = 9, kInt32 = 10, kInt64 = 11,
  kUInt2 = 12, kUInt4 = 13, kUInt8 = 14, kUInt16 = 15, kUInt32 = 16, kUInt64 = 17,
  kSFixed2 = 18, kSFixed4 = 19, kSFixed8 = 20, kSFixed16 = 21, kSFixed32 = 22,
  kUFixed2 = 23, kUFixed4 = 24, kUFixed8 = 25, kUFixed16 = 26, kUFixed32 = 27,
};
inline constexpr uint32_t kDTypeCount = 28;

enum class DTypeFamily : uint8_t { kUndefined, kFloat, kBool, kSignedInt, kUnsignedInt, kSignedFixed, kUnsignedFixed };

struct DTypeInfo {
  DType dtype;
  DTypeFamily family;
  uint32_t bits;
  std::string_view name;        // "sfixed_point_8"
  std::string_view short_name;  // TRACE token "s8"
  uint32_t qnn_code;            // Qnn_DataType_t value, 0x7FFFFFFF where QNN has none
};

// nullptr for values outside the enum.
const DTypeInfo* GetDTypeInfo(DType dtype);
bool IsValidDType(uint32_t value);
std::string_view DTypeName(DType dtype);       // "invalid" if unknown
std::string_view DTypeShortName(DType dtype);  // "und" if unknown
uint32_t DTypeBits(DType dtype);
DTypeFamily DTypeFamilyOf(DType dtype);
std::optional<DType> DTypeFromName(std::string_view name);  // accepts name or short name

inline bool IsFloat(DType d) { return DTypeFamilyOf(d) == DTypeFamily::kFloat; }
inline bool IsFixedPoint(DType d) {
  auto f = DTypeFamilyOf(d);
  return f == DTypeFamily::kSignedFixed || f == DTypeFamily::kUnsignedFixed;
}
inline bool IsInteger(DType d) {
  auto f = DTypeFamilyOf(d);
  return f == DTypeFamily::kSignedInt || f == DTypeFamily::kUnsignedInt;
}
bool IsSigned(DType d);  // signed int, signed fixed-point or float

// Fixed-point dtype of a given signedness and bit width (2,4,8,16,32).
std::optional<DType> FixedPointDType(bool is_signed, uint32_t bits);

// Bytes needed to store `count` elements (sub-byte types packed, rounded up).
// Returns nullopt on overflow.
std::optional<uint64_t> StorageBytes(DType dtype, uint64_t count);

}  // namespace qairt
