#include "ir/dtype.h"

#include <array>

namespace qairt {
namespace {

constexpr uint32_t kQnnNone = 0x7FFFFFFF;
using F = DTypeFamily;

// Indexed by the enum value. QNN codes from QnnTypes.h (SDK 2.43); QNN has no
// plain 2/4-bit integers and no 2-bit fixed point in that header.
constexpr std::array<DTypeInfo, kDTypeCount> kTable = {{
    {DType::kUndefined, F::kUndefined, 0, "undefined", "und", kQnnNone},
    {DType::kFloat32, F::kFloat, 32, "float32", "f32", 0x0232},
    {DType::kFloat16, F::kFloat, 16, "float16", "f16", 0x0216},
    {DType::kBFloat16, F::kFloat, 16, "bfloat16", "bf16", 0x0226},
    {DType::kFloat64, F::kFloat, 64, "float64", "f64", 0x0264},
    {DType::kBool, F::kBool, 8, "bool", "b8", 0x0508},
    {DType::kInt2, F::kSignedInt, 2, "int2", "is2", kQnnNone},
    {DType::kInt4, F::kSignedInt, 4, "int4", "is4", kQnnNone},
    {DType::kInt8, F::kSignedInt, 8, "int8", "is8", 0x0008},
    {DType::kInt16, F::kSignedInt, 16, "int16", "is16", 0x0016},
    {DType::kInt32, F::kSignedInt, 32, "int32", "is32", 0x0032},
    {DType::kInt64, F::kSignedInt, 64, "int64", "is64", 0x0064},
    {DType::kUInt2, F::kUnsignedInt, 2, "uint2", "iu2", kQnnNone},
    {DType::kUInt4, F::kUnsignedInt, 4, "uint4", "iu4", kQnnNone},
    {DType::kUInt8, F::kUnsignedInt, 8, "uint8", "iu8", 0x0108},
    {DType::kUInt16, F::kUnsignedInt, 16, "uint16", "iu16", 0x0116},
    {DType::kUInt32, F::kUnsignedInt, 32, "uint32", "iu32", 0x0132},
    {DType::kUInt64, F::kUnsignedInt, 64, "uint64", "iu64", 0x0164},
    {DType::kSFixed2, F::kSignedFixed, 2, "sfixed_point_2", "s2", kQnnNone},
    {DType::kSFixed4, F::kSignedFixed, 4, "sfixed_point_4", "s4", 0x0304},
    {DType::kSFixed8, F::kSignedFixed, 8, "sfixed_point_8", "s8", 0x0308},
    {DType::kSFixed16, F::kSignedFixed, 16, "sfixed_point_16", "s16", 0x0316},
    {DType::kSFixed32, F::kSignedFixed, 32, "sfixed_point_32", "s32", 0x0332},
    {DType::kUFixed2, F::kUnsignedFixed, 2, "ufixed_point_2", "u2", kQnnNone},
    {DType::kUFixed4, F::kUnsignedFixed, 4, "ufixed_point_4", "u4", 0x0404},
    {DType::kUFixed8, F::kUnsignedFixed, 8, "ufixed_point_8", "u8", 0x0408},
    {DType::kUFixed16, F::kUnsignedFixed, 16, "ufixed_point_16", "u16", 0x0416},
    {DType::kUFixed32, F::kUnsignedFixed, 32, "ufixed_point_32", "u32", 0x0432},
}};

constexpr bool TableIsIndexedByValue() {
  for (uint32_t i = 0; i < kTable.size(); ++i)
    if (static_cast<uint32_t>(kTable[i].dtype) != i) return false;
  return true;
}
static_assert(TableIsIndexedByValue(), "kTable must be ordered by enum value");

}  // namespace

bool IsValidDType(uint32_t value) { return value < kDTypeCount; }

const DTypeInfo* GetDTypeInfo(DType dtype) {
  auto v = static_cast<uint32_t>(dtype);
  return v < kDTypeCount ? &kTable[v] : nullptr;
}

std::string_view DTypeName(DType dtype) {
  const DTypeInfo* info = GetDTypeInfo(dtype);
  return info ? info->name : std::string_view("invalid");
}

std::string_view DTypeShortName(DType dtype) {
  const DTypeInfo* info = GetDTypeInfo(dtype);
  return info ? info->short_name : std::string_view("und");
}

uint32_t DTypeBits(DType dtype) {
  const DTypeInfo* info = GetDTypeInfo(dtype);
  return info ? info->bits : 0;
}

DTypeFamily DTypeFamilyOf(DType dtype) {
  const DTypeInfo* info = GetDTypeInfo(dtype);
  return info ? info->family : DTypeFamily::kUndefined;
}

bool IsSigned(DType d) {
  switch (DTypeFamilyOf(d)) {
    case F::kFloat:
    case F::kSignedInt:
    case F::kSignedFixed:
      return true;
    default:
      return false;
  }
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const DTypeInfo& info : kTable)
    if (info.name == name || info.short_name == name) return info.dtype;
  return std::nullopt;
}

std::optional<DType> FixedPointDType(bool is_signed, uint32_t bits) {
  const F family = is_signed ? F::kSignedFixed : F::kUnsignedFixed;
  for (const DTypeInfo& info : kTable)
    if (info.family == family && info.bits == bits) return info.dtype;
  return std::nullopt;
}

std::optional<uint64_t> StorageBytes(DType dtype, uint64_t count) {
  const uint64_t bits = DTypeBits(dtype);
  if (bits == 0) return std::nullopt;
  if (count > UINT64_MAX / bits) return std::nullopt;
  return (count * bits + 7) / 8;
}

}  // namespace qairt
