#include <catch2/catch.hpp>

#include <qairt/qairt.h>

#include "ir/dtype.h"

namespace qairt {
namespace {

TEST_CASE("TRACE short strings are derivable for every dtype", "[dtype]") {
  // The spec's examples: s8 u16 is32 iu8 f16 b8 und.
  CHECK(DTypeShortName(DType::kSFixed8) == "s8");
  CHECK(DTypeShortName(DType::kUFixed16) == "u16");
  CHECK(DTypeShortName(DType::kInt32) == "is32");
  CHECK(DTypeShortName(DType::kUInt8) == "iu8");
  CHECK(DTypeShortName(DType::kFloat16) == "f16");
  CHECK(DTypeShortName(DType::kBool) == "b8");
  CHECK(DTypeShortName(DType::kUndefined) == "und");
  CHECK(DTypeShortName(DType::kSFixed4) == "s4");
  CHECK(DTypeShortName(DType::kUFixed2) == "u2");
  CHECK(DTypeShortName(static_cast<DType>(1000)) == "und");
}

TEST_CASE("names parse back to the same dtype", "[dtype]") {
  for (uint32_t v = 0; v < kDTypeCount; ++v) {
    const auto d = static_cast<DType>(v);
    CHECK(DTypeFromName(DTypeName(d)) == d);
    CHECK(DTypeFromName(DTypeShortName(d)) == d);
    // C API mirrors the same tables.
    CHECK(std::string(qairt_dtype_name(v)) == DTypeName(d));
    CHECK(std::string(qairt_dtype_short_name(v)) == DTypeShortName(d));
    qairt_dtype_t parsed = 0;
    qairt_status_t* s = qairt_dtype_from_name(qairt_dtype_short_name(v), &parsed);
    CHECK(s == nullptr);
    CHECK(parsed == v);
  }
  CHECK(!DTypeFromName("float17").has_value());
  qairt_dtype_t untouched = 77;
  qairt_status_t* s = qairt_dtype_from_name("float17", &untouched);
  CHECK(qairt_status_code(s) == QAIRT_NOT_FOUND);
  CHECK(std::string(qairt_status_message(s)).find("float17") != std::string::npos);
  qairt_status_free(s);
  CHECK(untouched == 77);
}

TEST_CASE("fixed point is distinguished from integer as in QNN", "[dtype]") {
  CHECK(IsFixedPoint(DType::kSFixed8));
  CHECK(!IsFixedPoint(DType::kInt8));
  CHECK(IsInteger(DType::kInt8));
  CHECK(!IsInteger(DType::kUFixed8));
  CHECK(GetDTypeInfo(DType::kSFixed8)->qnn_code == 0x0308);
  CHECK(GetDTypeInfo(DType::kUInt8)->qnn_code == 0x0108);
  CHECK(GetDTypeInfo(DType::kFloat16)->qnn_code == 0x0216);
  CHECK(FixedPointDType(true, 4) == DType::kSFixed4);
  CHECK(FixedPointDType(false, 16) == DType::kUFixed16);
  CHECK(!FixedPointDType(false, 3).has_value());
}

TEST_CASE("storage size packs sub-byte types", "[dtype]") {
  CHECK(StorageBytes(DType::kSFixed4, 5) == 3u);
  CHECK(StorageBytes(DType::kUInt2, 5) == 2u);
  CHECK(StorageBytes(DType::kFloat32, 5) == 20u);
  CHECK(StorageBytes(DType::kBool, 3) == 3u);
  CHECK(!StorageBytes(DType::kFloat64, UINT64_MAX / 2).has_value());
  CHECK(!StorageBytes(DType::kUndefined, 1).has_value());
}

}  // namespace
}  // namespace qairt
