// Pins the ABI of include/qairt/qairt_encodings.h: enum values shared with the
// core and the layout of its public structs on LP64. A failing assert means a
// change broke binary compatibility: revert it or bump QAIRT_ABI_MAJOR.
#include <cstddef>

#include "capi/capi_internal.h"
#include "encodings/encodings.h"
#include "qairt/qairt_encodings.h"

namespace {

namespace enc = qairt::encodings;

#define QAIRT_SAME(c_value, cpp_value) \
  static_assert(static_cast<uint64_t>(c_value) == static_cast<uint64_t>(cpp_value), #c_value)

QAIRT_SAME(QAIRT_ENCODINGS_VERSION_AUTO, enc::Version::kAuto);
QAIRT_SAME(QAIRT_ENCODINGS_VERSION_0_6_1, enc::Version::kV0_6_1);
QAIRT_SAME(QAIRT_ENCODINGS_VERSION_1_0_0, enc::Version::kV1_0_0);
QAIRT_SAME(QAIRT_ENCODINGS_VERSION_2_0_0, enc::Version::kV2_0_0);
QAIRT_SAME(QAIRT_REPORT_TEXT, enc::ReportFormat::kText);
QAIRT_SAME(QAIRT_REPORT_JSON, enc::ReportFormat::kJson);
QAIRT_SAME(QAIRT_REPORT_SARIF, enc::ReportFormat::kSarif);

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
static_assert(sizeof(qairt_encodings_version_t) == 4 && sizeof(qairt_report_format_t) == 4);

static_assert(sizeof(qairt_encodings_diagnostic) == 72);
static_assert(offsetof(qairt_encodings_diagnostic, severity) == 4);
static_assert(offsetof(qairt_encodings_diagnostic, line) == 8);
static_assert(offsetof(qairt_encodings_diagnostic, column) == 12);
static_assert(offsetof(qairt_encodings_diagnostic, byte_offset) == 16);
static_assert(offsetof(qairt_encodings_diagnostic, code) == 24);
static_assert(offsetof(qairt_encodings_diagnostic, file) == 32);
static_assert(offsetof(qairt_encodings_diagnostic, tensor) == 40);
static_assert(offsetof(qairt_encodings_diagnostic, field) == 48);
static_assert(offsetof(qairt_encodings_diagnostic, message) == 56);
static_assert(offsetof(qairt_encodings_diagnostic, suggestion) == 64);

static_assert(sizeof(qairt_encodings_load_options) == 24);
static_assert(offsetof(qairt_encodings_load_options, flags) == 4);
static_assert(offsetof(qairt_encodings_load_options, version) == 8);
static_assert(offsetof(qairt_encodings_load_options, max_depth) == 12);
static_assert(offsetof(qairt_encodings_load_options, max_bytes) == 16);

static_assert(sizeof(qairt_encodings_apply_options) == 8);
static_assert(offsetof(qairt_encodings_apply_options, flags) == 4);

static_assert(sizeof(qairt_encodings_write_options) == 16);
static_assert(offsetof(qairt_encodings_write_options, flags) == 4);
static_assert(offsetof(qairt_encodings_write_options, version) == 8);
static_assert(offsetof(qairt_encodings_write_options, reserved) == 12);
#endif

}  // namespace
