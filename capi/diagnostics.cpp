// The one diagnostics list of the C API (qairt_diagnostics_t in qairt.h,
// also qairt_encodings_diagnostics_t): reading, counting, rendering.
#include "capi/capi_internal.h"
#include "support/diagnostic.h"

using namespace qairt;  // NOLINT: implementation file of the C boundary
using capi::InvalidArg;

namespace {

// Sizes of the 1.0 layouts: the minimum struct_size accepted.
constexpr size_t kDiagnosticV1 = QAIRT_STRUCT_V1_SIZE(qairt_diagnostic, message);

// The rule id of each qairt_diag_kind, in enum order from 1.
constexpr const char* kKindCodes[] = {
    "cycle",          "duplicate-tensor-name", "duplicate-op-name", "dangling-tensor", "missing-producer",
    "multiple-producers", "dtype-mismatch",    "shape-mismatch",    "arity",           "attribute",
    "unknown-op-type", "invalid-encoding",     "no-outputs",        "static-data",
};

}  // namespace

namespace qairt::capi {

void AppendGraphDiagnostics(const Graph& graph, const Diagnostics& in, qairt_diagnostics_t* out) {
  out->ids.resize(out->diags.size());
  for (const Diagnostic& d : in) {
    Diag r;
    r.severity = d.severity;
    const auto kind = static_cast<size_t>(d.kind);
    r.code = kind >= 1 && kind <= std::size(kKindCodes) ? kKindCodes[kind - 1] : "graph";
    if (d.op < graph.op_count()) r.op = graph.op(d.op).name;
    if (d.tensor < graph.tensor_count()) r.tensor = graph.tensor(d.tensor).name;
    r.field = d.field;
    r.message = d.message;
    out->diags.push_back(std::move(r));
    out->ids.push_back({static_cast<uint32_t>(d.kind), d.op, d.tensor});
  }
}

}  // namespace qairt::capi

extern "C" {

qairt_status_t* qairt_diagnostics_create(qairt_diagnostics_t** out_diagnostics) {
  QAIRT_CAPI_BEGIN
  if (!out_diagnostics) return InvalidArg("qairt_diagnostics_create: out_diagnostics is NULL");
  *out_diagnostics = new qairt_diagnostics_t;
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_diagnostics_destroy(qairt_diagnostics_t* diagnostics) { delete diagnostics; }

void qairt_diagnostics_clear(qairt_diagnostics_t* diagnostics) {
  if (!diagnostics) return;
  diagnostics->diags.clear();
  diagnostics->ids.clear();
}

size_t qairt_diagnostics_count(const qairt_diagnostics_t* diagnostics) {
  return diagnostics ? diagnostics->diags.size() : 0;
}

size_t qairt_diagnostics_count_severity(const qairt_diagnostics_t* diagnostics, qairt_severity_t severity) {
  return diagnostics ? CountSeverity(diagnostics->diags, static_cast<Severity>(severity)) : 0;
}

qairt_status_t* qairt_diagnostics_get(const qairt_diagnostics_t* diagnostics, size_t index,
                                      qairt_diagnostic* out_diagnostic) {
  QAIRT_CAPI_BEGIN
  if (!diagnostics) return InvalidArg("qairt_diagnostics_get: diagnostics must not be NULL");
  if (index >= diagnostics->diags.size())
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("qairt_diagnostics_get: index {} out of range (count {})",
                                                         index, diagnostics->diags.size()));
  const Diag& d = diagnostics->diags[index];
  const qairt_diagnostics_t::GraphIds ids =
      index < diagnostics->ids.size() ? diagnostics->ids[index] : qairt_diagnostics_t::GraphIds{};
  qairt_diagnostic full{};
  full.struct_size = sizeof(qairt_diagnostic);
  full.severity = static_cast<qairt_severity_t>(d.severity);
  full.kind = ids.kind;
  full.op = ids.op;
  full.tensor = ids.tensor;
  full.field = d.field.c_str();
  full.message = d.message.c_str();
  full.code = d.code.c_str();
  full.file = d.file.c_str();
  full.line = d.line;
  full.column = d.column;
  full.op_name = d.op.c_str();
  full.tensor_name = d.tensor.c_str();
  full.suggestion = d.suggestion.c_str();
  return capi::WriteVersionedStruct(full, kDiagnosticV1, "qairt_diagnostic", out_diagnostic);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_diagnostics_render(const qairt_diagnostics_t* diagnostics, qairt_report_format_t format,
                                         char* buf, size_t capacity, size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!diagnostics) return InvalidArg("qairt_diagnostics_render: diagnostics is NULL");
  if (format < QAIRT_REPORT_TEXT || format > QAIRT_REPORT_SARIF)
    return InvalidArg("qairt_diagnostics_render: unknown format {}", format);
  const std::string s = RenderDiagnostics(diagnostics->diags, static_cast<ReportFormat>(format));
  return capi::FillString(s, buf, capacity, out_length, "qairt_diagnostics_render");
  QAIRT_CAPI_END
}

}  // extern "C"
