// Status objects, versions, dtype and op-type queries of the C API.
#include <string_view>

#include "capi/capi_internal.h"
#include "ir/dtype.h"
#include "ir/op_registry.h"
#include "support/atomic_file.h"

namespace qairt::capi {

qairt_status_t* OutOfMemoryStatus() {
  static qairt_status_t oom{QAIRT_OUT_OF_MEMORY, "out of memory"};
  return &oom;
}

qairt_status_t* MakeStatus(qairt_code_t code, std::string message) {
  auto* s = new (std::nothrow) qairt_status_t{code, std::string()};
  if (!s) return OutOfMemoryStatus();
  try {
    s->message = std::move(message);
  } catch (...) {
    delete s;
    return OutOfMemoryStatus();
  }
  return s;
}

qairt_status_t* FillString(const std::string& s, char* buf, size_t capacity, size_t* out_length, const char* what) {
  if (!out_length) return InvalidArg("{}: out_length must not be NULL", what);
  if (buf) {
    if (capacity < s.size() + 1)
      return MakeStatus(QAIRT_BUFFER_TOO_SMALL,
                        fmt::format("{}: buffer of {} bytes is too small, need {}", what, capacity, s.size() + 1));
    std::memcpy(buf, s.data(), s.size());
    buf[s.size()] = '\0';
  }
  *out_length = s.size();
  return nullptr;
}

qairt_status_t* FromStatus(const Status& s) {
  if (s.ok()) return nullptr;
  return MakeStatus(static_cast<qairt_code_t>(s.code()), s.message());
}

}  // namespace qairt::capi

using namespace qairt;  // NOLINT: implementation file of the C boundary

extern "C" {

uint32_t qairt_abi_version(void) { return QAIRT_ABI_VERSION; }

const char* qairt_version_string(void) { return QAIRT_VERSION_STRING; }

qairt_code_t qairt_status_code(const qairt_status_t* status) { return status ? status->code : QAIRT_OK; }

const char* qairt_status_message(const qairt_status_t* status) { return status ? status->message.c_str() : ""; }

void qairt_status_free(qairt_status_t* status) {
  if (status && status != capi::OutOfMemoryStatus()) delete status;
}

const char* qairt_dtype_name(qairt_dtype_t dtype) {
  // The table's string_views point at NUL-terminated literals.
  return DTypeName(static_cast<DType>(dtype)).data();
}

const char* qairt_dtype_short_name(qairt_dtype_t dtype) { return DTypeShortName(static_cast<DType>(dtype)).data(); }

uint32_t qairt_dtype_bitwidth(qairt_dtype_t dtype) { return DTypeBits(static_cast<DType>(dtype)); }

qairt_status_t* qairt_dtype_from_name(const char* name, qairt_dtype_t* out_dtype) {
  QAIRT_CAPI_BEGIN
  if (!name) return capi::InvalidArg("failed to parse dtype: name must not be NULL");
  if (!out_dtype) return capi::InvalidArg("failed to parse dtype '{}': out_dtype must not be NULL", name);
  auto d = DTypeFromName(name);
  if (!d) return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("unknown dtype name '{}'", name));
  *out_dtype = static_cast<qairt_dtype_t>(*d);
  return nullptr;
  QAIRT_CAPI_END
}

size_t qairt_op_type_count(void) {
  QAIRT_CAPI_BEGIN
  return AllOpSchemas().size();
  QAIRT_CAPI_END_VALUE(0)
}

const char* qairt_op_type_name(size_t index) {
  QAIRT_CAPI_BEGIN
  auto all = AllOpSchemas();
  return index < all.size() ? all[index].type.data() : nullptr;  // schema names are literals
  QAIRT_CAPI_END_VALUE(nullptr)
}

qairt_status_t* qairt_write_file_atomically(const char* path, const void* data, size_t size) {
  QAIRT_CAPI_BEGIN
  if (!path || !*path) return capi::InvalidArg("write file: path must not be NULL or empty");
  if (!data && size) return capi::InvalidArg("write file '{}': data is NULL but size is {}", path, size);
  const std::string_view bytes = size ? std::string_view(static_cast<const char*>(data), size) : std::string_view();
  return capi::FromStatus(WriteFileAtomically(path, bytes, "file"));
  QAIRT_CAPI_END
}

}  // extern "C"
