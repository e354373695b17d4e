// Shared by the files of capi/: the handle structs behind the opaque C types
// and the exception/Status guards. Nothing here is visible outside libqairt.
#pragma once

#include <functional>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/encoding.h"
#include "ir/graph.h"
#include "qairt/qairt.h"
#include "support/status.h"

struct qairt_status_t {
  qairt_code_t code;
  std::string message;
};

struct qairt_graph_t {
  explicit qairt_graph_t(std::string name) : graph(std::move(name)) {}
  qairt::Graph graph;
  // Caches behind borrowed pointers handed out by const getters (dims arrays,
  // string-list attributes). Guarded so concurrent readers stay safe.
  mutable std::mutex cache_mutex;
  mutable std::vector<std::vector<int64_t>> dims_cache;
  mutable std::map<std::pair<uint32_t, std::string>, std::vector<const char*>> string_list_cache;
};

struct qairt_encoding_t {
  qairt::Encoding encoding;
};

// The C ABI's one diagnostics list (also qairt_encodings_diagnostics_t).
// Records from graph validation keep their kind and op/tensor ids in `ids`;
// `ids` is shorter than `diags` when other producers appended after them.
struct qairt_diagnostics_t {
  struct GraphIds {
    uint32_t kind = 0;
    uint32_t op = qairt::kInvalidId;
    uint32_t tensor = qairt::kInvalidId;
  };
  qairt::Diags diags;
  std::vector<GraphIds> ids;
};

namespace qairt::capi {

// Graph-validation diagnostics as records of the one family: the code is the
// kind's rule id, the op and tensor are named as well as numbered.
void AppendGraphDiagnostics(const Graph& graph, const Diagnostics& in, qairt_diagnostics_t* out);

// Preallocated so that an allocation failure can still be reported.
qairt_status_t* OutOfMemoryStatus();
qairt_status_t* MakeStatus(qairt_code_t code, std::string message);
qairt_status_t* FromStatus(const Status& s);  // nullptr when ok

template <typename... Args>
qairt_status_t* InvalidArg(fmt::format_string<Args...> format, Args&&... args) {
  return MakeStatus(QAIRT_INVALID_ARGUMENT, fmt::format(format, std::forward<Args>(args)...));
}

// Query-then-fill for strings (see qairt.h, ownership rule 4).
qairt_status_t* FillString(const std::string& s, char* buf, size_t capacity, size_t* out_length, const char* what);

}  // namespace qairt::capi

struct qairt_encodings_t;
namespace qairt::encodings {
struct File;
}  // namespace qairt::encodings
namespace qairt::capi {
// Reads the encodings file at `path` and applies it with default options
// (encodings::ReadAndApplyEncodingsFile: a large file's entries are applied
// as they are read, never all held at once), for convert's overrides. With
// `unmatched_out`, entries naming no tensor of the graph go there instead of
// being errors (ApplyOptions::unmatched_out). *applied: the encodings applied.
qairt_status_t* ReadAndApplyEncodings(const char* path, qairt_graph_t* graph, qairt_diagnostics_t* diagnostics,
                                      encodings::File* unmatched_out, size_t* applied);
// Applies entries kept by ReadAndApplyEncodings's `unmatched_out` (moved
// out of `file`). Names still absent go to `unmatched_out` when it is given,
// else they are errors with suggestions.
qairt_status_t* ApplyDeferredEncodings(encodings::File&& file, qairt_graph_t* graph, qairt_diagnostics_t* diagnostics,
                                       encodings::File* unmatched_out);
}  // namespace qairt::capi

struct qairt_convert_options;
namespace qairt::capi {
// Copies the caller's versioned qairt_convert_options into `o` and checks
// it (capi/convert_options.cpp); the error names the field.
qairt_status_t* ReadConvertOptions(const qairt_convert_options* options, qairt_convert_options* o);
}  // namespace qairt::capi

struct qairt_target_t;
namespace qairt::target {
struct Target;
}  // namespace qairt::target
namespace qairt::capi {
// The descriptor behind a handle (capi/target.cpp); null for a null handle.
std::shared_ptr<const target::Target> TargetOf(const qairt_target_t* t);

// Target processing of a calibrated graph, with processing's default options
// (capi/realize.cpp): what a configuration is scored or measured as.
std::function<Result<Graph>(const Graph&)> RealizeFor(std::shared_ptr<const target::Target> t);

// qairt_calibration_options -> calib::Options (capi/calib.cpp); NULL: defaults.
}  // namespace qairt::capi
struct qairt_calibration_options;
namespace qairt::calib {
struct Options;
struct FixedOutputRange;
}  // namespace qairt::calib
namespace qairt::capi {
// The ops whose 8-bit output the target fixes to a range and that have a
// 16-bit kernel (capi/realize.cpp): calib::Options::wide_fixed_ranges.
std::vector<calib::FixedOutputRange> FixedOutputRangesOf(const target::Target& t);

qairt_status_t* ToCalibrationOptions(const qairt_calibration_options* in, calib::Options* out);
// The same, with the options' progress callback as a std::function (empty when unset).
qairt_status_t* ToCalibrationOptions(const qairt_calibration_options* in, calib::Options* out,
                                     std::function<void(size_t, size_t, const char*)>* progress);

// The size of a versioned struct as its first ABI release defined it: the end
// of its last field then. The minimum struct_size a function accepts is frozen
// at this value, so a struct that grows keeps accepting its older callers.
#define QAIRT_STRUCT_V1_SIZE(type, last_v1_field) (offsetof(type, last_v1_field) + sizeof(((type*)nullptr)->last_v1_field))

// Copies a caller's versioned struct into a zeroed full-size local, so fields
// an older caller does not know about read as 0. Fails if struct_size is
// smaller than the 1.0 layout.
template <typename T>
qairt_status_t* ReadVersionedStruct(const T* in, size_t v1_size, const char* type_name, T* out) {
  if (!in) return InvalidArg("{} must not be NULL", type_name);
  if (in->struct_size < v1_size)
    return InvalidArg("{}.struct_size is {} but must be at least {} (call the _init function)", type_name,
                      in->struct_size, v1_size);
  std::memset(static_cast<void*>(out), 0, sizeof(T));
  std::memcpy(static_cast<void*>(out), in, std::min<size_t>(in->struct_size, sizeof(T)));
  return nullptr;
}

// Writes `full` into the caller's struct, no more than its struct_size.
template <typename T>
qairt_status_t* WriteVersionedStruct(const T& full, size_t v1_size, const char* type_name, T* out) {
  if (!out) return InvalidArg("{} output must not be NULL", type_name);
  if (out->struct_size < v1_size)
    return InvalidArg("{}.struct_size is {} but must be at least {}", type_name, out->struct_size, v1_size);
  const uint32_t caller_size = out->struct_size;
  std::memcpy(static_cast<void*>(out), &full, std::min<size_t>(caller_size, sizeof(T)));
  out->struct_size = caller_size;
  return nullptr;
}

}  // namespace qairt::capi

// Every exported function body runs inside these, so no exception escapes.
#define QAIRT_CAPI_BEGIN try {
#define QAIRT_CAPI_END                                                                   \
  }                                                                                      \
  catch (const std::bad_alloc&) {                                                        \
    return ::qairt::capi::OutOfMemoryStatus();                                           \
  }                                                                                      \
  catch (const std::exception& qairt_capi_exception_) {                                 \
    return ::qairt::capi::MakeStatus(QAIRT_INTERNAL, std::string("internal error: ") + qairt_capi_exception_.what()); \
  }                                                                                      \
  catch (...) {                                                                          \
    return ::qairt::capi::MakeStatus(QAIRT_INTERNAL, "internal error: unknown exception"); \
  }
// For functions that return a plain value: `fallback` on any exception.
#define QAIRT_CAPI_END_VALUE(fallback) \
  }                                    \
  catch (...) {                        \
    return fallback;                   \
  }
