// Model import of the C API.
#include "qairt/qairt_import.h"

#include <memory>

#include "capi/capi_internal.h"
#include "ir/import_report.h"
#include "onnx/onnx_import.h"
#include "tflite/tflite_import.h"

struct qairt_import_report_t {
  std::string json;
  std::string text;
  bool ok = false;
  qairt_diagnostics_t diagnostics;  // the report's errors and warnings as records (1.9)
};

using namespace qairt;  // NOLINT: implementation file of the C boundary
using capi::InvalidArg;

namespace {

qairt_status_t* ReadOptions(const qairt_import_options* in, ImportOptions* out, bool* require_static) {
  *require_static = false;
  if (!in) return nullptr;
  qairt_import_options o;
  if (auto* s = capi::ReadVersionedStruct(in, QAIRT_STRUCT_V1_SIZE(qairt_import_options, input_dims), "qairt_import_options", &o)) return s;
  if (o.flags & ~(QAIRT_IMPORT_NO_BATCHNORM_FOLD | QAIRT_IMPORT_REQUIRE_STATIC | QAIRT_IMPORT_INT64_TO_INT32))
    return InvalidArg("qairt_import_options.flags has unknown bits 0x{:x}", o.flags);
  out->fold_batchnorm = !(o.flags & QAIRT_IMPORT_NO_BATCHNORM_FOLD);
  out->int64_to_int32 = (o.flags & QAIRT_IMPORT_INT64_TO_INT32) != 0;
  *require_static = (o.flags & QAIRT_IMPORT_REQUIRE_STATIC) != 0;
  if (o.num_define_symbols && (!o.define_symbol_names || !o.define_symbol_values))
    return InvalidArg("qairt_import_options: define_symbol_names/values are NULL");
  for (size_t i = 0; i < o.num_define_symbols; ++i) {
    if (!o.define_symbol_names[i]) return InvalidArg("qairt_import_options: define_symbol_names[{}] is NULL", i);
    if (o.define_symbol_values[i] < 0)
      return InvalidArg("--define_symbol {}: value {} must be >= 0", o.define_symbol_names[i], o.define_symbol_values[i]);
    out->define_symbols[o.define_symbol_names[i]] = o.define_symbol_values[i];
  }
  if (o.num_input_dims && (!o.input_dim_names || !o.input_dim_ranks || !o.input_dims))
    return InvalidArg("qairt_import_options: input_dim arrays are NULL");
  for (size_t i = 0; i < o.num_input_dims; ++i) {
    if (!o.input_dim_names[i] || (o.input_dim_ranks[i] && !o.input_dims[i]))
      return InvalidArg("qairt_import_options: input_dim {} is NULL", i);
    if (o.input_dim_ranks[i] > 64) return InvalidArg("--input_dim {}: too many dims", o.input_dim_names[i]);
    std::vector<int64_t> dims(o.input_dims[i], o.input_dims[i] + o.input_dim_ranks[i]);
    for (int64_t d : dims)
      if (d < 0) return InvalidArg("--input_dim {}: dim {} must be >= 0", o.input_dim_names[i], d);
    out->input_dims[o.input_dim_names[i]] = std::move(dims);
  }
  return nullptr;
}

qairt_status_t* Finish(Result<Graph> graph, const std::string& model, const ImportReport& report,
                       bool require_static, qairt_graph_t** out_graph, qairt_import_report_t** out_report) {
  ImportSummaryInput in{model, &report, graph.ok() ? &graph.value() : nullptr, require_static};
  const bool ok = ImportSucceeded(in);
  if (out_report) {
    auto r = std::make_unique<qairt_import_report_t>();
    r->json = ImportReportJson(in);
    r->text = ImportReportText(in);
    r->ok = ok;
    capi::AppendGraphDiagnostics(graph.ok() ? graph.value() : Graph(""), report.diagnostics, &r->diagnostics);
    for (Diag& d : r->diagnostics.diags) d.file = model;
    *out_report = r.release();
  }
  if (!graph.ok()) return capi::FromStatus(graph.status());
  if (!ok) {
    std::string dims;
    for (const auto& d : report.dynamic_dims) dims += "\n  " + d;
    return capi::MakeStatus(QAIRT_VALIDATION_FAILED,
                            fmt::format("{}: dynamic dimensions left (use --define_symbol or --input_dim):{}", model, dims));
  }
  auto* g = new qairt_graph_t(graph.value().name());
  g->graph = std::move(graph.value());
  *out_graph = g;
  return nullptr;
}

}  // namespace

extern "C" {

void qairt_import_options_init(qairt_import_options* options) {
  if (!options) return;
  *options = qairt_import_options{};
  options->struct_size = sizeof(qairt_import_options);
}

qairt_status_t* qairt_import_onnx_file(const char* path, const qairt_import_options* options,
                                       qairt_graph_t** out_graph, qairt_import_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!path || !out_graph) return InvalidArg("qairt_import_onnx_file: path and out_graph must not be NULL");
  ImportOptions opts;
  bool require_static = false;
  if (auto* s = ReadOptions(options, &opts, &require_static)) return s;
  ImportReport report;
  auto graph = ImportOnnxFile(path, opts, &report);
  return Finish(std::move(graph), path, report, require_static, out_graph, out_report);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_import_onnx_bytes(const void* data, size_t size, const qairt_import_options* options,
                                        qairt_graph_t** out_graph, qairt_import_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if ((!data && size) || !out_graph) return InvalidArg("qairt_import_onnx_bytes: data and out_graph must not be NULL");
  ImportOptions opts;
  bool require_static = false;
  if (auto* s = ReadOptions(options, &opts, &require_static)) return s;
  ImportReport report;
  auto graph = ImportOnnxBytes(data, size, "", opts, &report);
  return Finish(std::move(graph), "<bytes>", report, require_static, out_graph, out_report);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_import_tflite_file(const char* path, const qairt_import_options* options,
                                         qairt_graph_t** out_graph, qairt_import_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!path || !out_graph) return InvalidArg("qairt_import_tflite_file: path and out_graph must not be NULL");
  ImportOptions opts;
  bool require_static = false;
  if (auto* s = ReadOptions(options, &opts, &require_static)) return s;
  ImportReport report;
  auto graph = ImportTfliteFile(path, opts, &report);
  return Finish(std::move(graph), path, report, require_static, out_graph, out_report);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_import_tflite_bytes(const void* data, size_t size, const qairt_import_options* options,
                                          qairt_graph_t** out_graph, qairt_import_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if ((!data && size) || !out_graph) return InvalidArg("qairt_import_tflite_bytes: data and out_graph must not be NULL");
  ImportOptions opts;
  bool require_static = false;
  if (auto* s = ReadOptions(options, &opts, &require_static)) return s;
  ImportReport report;
  auto graph = ImportTfliteBytes(data, size, opts, &report);
  return Finish(std::move(graph), "<bytes>", report, require_static, out_graph, out_report);
  QAIRT_CAPI_END
}

int32_t qairt_import_report_ok(const qairt_import_report_t* report) { return report && report->ok ? 1 : 0; }

qairt_status_t* qairt_import_report_json(const qairt_import_report_t* report, char* buf, size_t capacity,
                                         size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!report) return InvalidArg("qairt_import_report_json: report must not be NULL");
  return capi::FillString(report->json, buf, capacity, out_length, "qairt_import_report_json");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_import_report_text(const qairt_import_report_t* report, char* buf, size_t capacity,
                                         size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!report) return InvalidArg("qairt_import_report_text: report must not be NULL");
  return capi::FillString(report->text, buf, capacity, out_length, "qairt_import_report_text");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_import_report_render(const qairt_import_report_t* report, qairt_report_format_t format,
                                           char* buf, size_t capacity, size_t* out_length) {
  if (format == QAIRT_REPORT_TEXT) return qairt_import_report_text(report, buf, capacity, out_length);
  if (format == QAIRT_REPORT_JSON) return qairt_import_report_json(report, buf, capacity, out_length);
  return capi::MakeStatus(QAIRT_UNSUPPORTED,
                          fmt::format("qairt_import_report_render: format {} (TEXT or JSON only)", format));
}

void qairt_import_report_destroy(qairt_import_report_t* report) { delete report; }

const qairt_diagnostics_t* qairt_import_report_diagnostics(const qairt_import_report_t* report) {
  return report ? &report->diagnostics : nullptr;
}

}  // extern "C"
