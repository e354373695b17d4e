// Model export of the C API (include/qairt/qairt_export.h).
#include "qairt/qairt_export.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "capi/capi_internal.h"
#include "onnx/onnx_export.h"

using namespace qairt;  // NOLINT: implementation file of the C boundary
using capi::InvalidArg;

static_assert(QAIRT_ONNX_EXPORT_MIN_OPSET == kOnnxExportMinOpset);
static_assert(QAIRT_ONNX_EXPORT_MAX_OPSET == kOnnxExportMaxOpset);
static_assert(QAIRT_ONNX_EXPORT_DEFAULT_OPSET == kOnnxExportDefaultOpset);
static_assert(QAIRT_ONNX_EXPORT_AUTO_OPSET == kOnnxExportAutoOpset);

namespace {

// The 1.0 layout ends after graph_name.
constexpr size_t kOptionsV1Size = offsetof(qairt_onnx_export_options, graph_name) + sizeof(const char*);

qairt_status_t* ReadOptions(const qairt_onnx_export_options* in, OnnxExportOptions* out) {
  if (!in) return nullptr;
  qairt_onnx_export_options o;
  if (auto* s = capi::ReadVersionedStruct(in, kOptionsV1Size, "qairt_onnx_export_options", &o)) return s;
  if (o.flags & ~(QAIRT_EXPORT_VALUE_INFO | QAIRT_EXPORT_QDQ_MS_DOMAIN | QAIRT_EXPORT_EXTERNAL_DATA))
    return InvalidArg("qairt_onnx_export_options.flags has unknown bits 0x{:x}", o.flags);
  if (o.opset != 0) {
    if (o.opset < QAIRT_ONNX_EXPORT_MIN_OPSET || o.opset > QAIRT_ONNX_EXPORT_MAX_OPSET)
      return InvalidArg("qairt_onnx_export_options.opset {} is not supported ({} to {})", o.opset,
                        QAIRT_ONNX_EXPORT_MIN_OPSET, QAIRT_ONNX_EXPORT_MAX_OPSET);
    out->opset = o.opset;
  }
  if (o.producer_name) out->producer_name = o.producer_name;
  if (o.graph_name) out->graph_name = o.graph_name;
  out->value_info = (o.flags & QAIRT_EXPORT_VALUE_INFO) != 0;
  out->qdq_ms_domain = (o.flags & QAIRT_EXPORT_QDQ_MS_DOMAIN) != 0;
  out->external_data = (o.flags & QAIRT_EXPORT_EXTERNAL_DATA) != 0;
  if (o.external_data_threshold) out->external_data_threshold = o.external_data_threshold;
  if (o.external_data_name) out->external_data_name = o.external_data_name;
  if (o.num_metadata_props && !o.metadata_props)
    return InvalidArg("qairt_onnx_export_options.metadata_props is NULL with num_metadata_props = {}",
                      o.num_metadata_props);
  for (size_t k = 0; k < o.num_metadata_props; ++k) {
    const qairt_onnx_metadata_prop& p = o.metadata_props[k];
    if (!p.key || !*p.key) return InvalidArg("qairt_onnx_export_options.metadata_props[{}].key is NULL or empty", k);
    out->metadata.emplace_back(p.key, p.value ? p.value : "");
  }
  return nullptr;
}

}  // namespace

extern "C" {

void qairt_onnx_export_options_init(qairt_onnx_export_options* options) {
  if (!options) return;
  *options = qairt_onnx_export_options{};
  options->struct_size = sizeof(qairt_onnx_export_options);
  options->opset = QAIRT_ONNX_EXPORT_AUTO_OPSET;
}

qairt_status_t* qairt_export_onnx_file(const qairt_graph_t* graph, const char* path,
                                       const qairt_onnx_export_options* options) {
  QAIRT_CAPI_BEGIN
  if (!graph || !path) return InvalidArg("qairt_export_onnx_file: graph and path must not be NULL");
  OnnxExportOptions opts;
  if (auto* s = ReadOptions(options, &opts)) return s;
  return capi::FromStatus(ExportOnnxFile(graph->graph, opts, path));
  QAIRT_CAPI_END
}

qairt_status_t* qairt_export_onnx_bytes(const qairt_graph_t* graph, const qairt_onnx_export_options* options,
                                        void* buf, size_t capacity, size_t* out_size) {
  QAIRT_CAPI_BEGIN
  if (!graph || !out_size) return InvalidArg("qairt_export_onnx_bytes: graph and out_size must not be NULL");
  OnnxExportOptions opts;
  if (auto* s = ReadOptions(options, &opts)) return s;
  std::string bytes;
  if (auto* s = capi::FromStatus(ExportOnnx(graph->graph, opts, &bytes))) return s;
  if (buf) {
    if (capacity < bytes.size())
      return capi::MakeStatus(QAIRT_BUFFER_TOO_SMALL,
                              fmt::format("qairt_export_onnx_bytes: buffer of {} bytes is too small, need {}", capacity,
                                          bytes.size()));
    std::memcpy(buf, bytes.data(), bytes.size());
  }
  *out_size = bytes.size();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_export_onnx_write(const qairt_graph_t* graph, const qairt_onnx_export_options* options,
                                        qairt_write_fn write, void* user_data) {
  QAIRT_CAPI_BEGIN
  if (!graph || !write) return InvalidArg("qairt_export_onnx_write: graph and write must not be NULL");
  OnnxExportOptions opts;
  if (auto* s = ReadOptions(options, &opts)) return s;
  std::string bytes;
  if (auto* s = capi::FromStatus(ExportOnnx(graph->graph, opts, &bytes))) return s;
  constexpr size_t kChunk = size_t{64} << 20;
  for (size_t done = 0; done < bytes.size();) {
    const size_t n = std::min(kChunk, bytes.size() - done);
    if (const int32_t rc = write(user_data, bytes.data() + done, n); rc != 0)
      return capi::MakeStatus(QAIRT_IO_ERROR,
                              fmt::format("qairt_export_onnx_write: the write callback returned {} after {} of {} bytes",
                                          rc, done, bytes.size()));
    done += n;
  }
  return nullptr;
  QAIRT_CAPI_END
}

}  // extern "C"
