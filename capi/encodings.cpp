// Encodings files of the C API (include/qairt/qairt_encodings.h).
#include "qairt/qairt_encodings.h"

#include "capi/capi_internal.h"
#include "support/atomic_file.h"
#include "encodings/encodings_writer.h"
#include "encodings/encodings.h"

struct qairt_encodings_t {
  qairt::encodings::File file;
};

using namespace qairt;  // NOLINT: implementation file of the C boundary
using capi::InvalidArg;
namespace enc = qairt::encodings;

namespace {

bool ValidVersion(uint32_t v) { return v <= QAIRT_ENCODINGS_VERSION_2_0_0; }

qairt_status_t* ReadLoadOptions(const qairt_encodings_load_options* in, enc::ReadOptions* out) {
  if (!in) return nullptr;
  qairt_encodings_load_options o;
  if (auto* s = capi::ReadVersionedStruct(in, QAIRT_STRUCT_V1_SIZE(qairt_encodings_load_options, max_bytes), "qairt_encodings_load_options", &o))
    return s;
  if (o.flags & ~QAIRT_ENCODINGS_LOAD_STRICT)
    return InvalidArg("qairt_encodings_load_options.flags has unknown bits 0x{:x}", o.flags);
  if (!ValidVersion(o.version)) return InvalidArg("qairt_encodings_load_options.version {} is not known", o.version);
  out->version = static_cast<enc::Version>(o.version);
  out->keep_going = !(o.flags & QAIRT_ENCODINGS_LOAD_STRICT);
  if (o.max_depth) out->max_depth = o.max_depth;
  if (o.max_bytes) out->max_bytes = o.max_bytes;
  return nullptr;
}

qairt_status_t* Load(Result<enc::File> r, enc::Diags&& diags, qairt_encodings_diagnostics_t* out_diags,
                     qairt_encodings_t** out) {
  if (out_diags)
    out_diags->diags.insert(out_diags->diags.end(), std::make_move_iterator(diags.begin()),
                            std::make_move_iterator(diags.end()));
  if (!r.ok()) return capi::FromStatus(r.status());
  *out = new qairt_encodings_t{std::move(r.value())};
  return nullptr;
}

qairt_status_t* ReadApplyOptions(const qairt_encodings_apply_options* in, enc::ApplyOptions* out) {
  if (!in) return nullptr;
  qairt_encodings_apply_options o;
  if (auto* s = capi::ReadVersionedStruct(in, QAIRT_STRUCT_V1_SIZE(qairt_encodings_apply_options, flags),
                                          "qairt_encodings_apply_options", &o))
    return s;
  constexpr uint32_t kKnown = QAIRT_ENCODINGS_APPLY_ALLOW_UNMATCHED | QAIRT_ENCODINGS_APPLY_KEEP_GOING |
                              QAIRT_ENCODINGS_APPLY_NO_MISSING_NOTE;
  if (o.flags & ~kKnown) return InvalidArg("qairt_encodings_apply_options.flags has unknown bits 0x{:x}", o.flags);
  out->allow_unmatched = o.flags & QAIRT_ENCODINGS_APPLY_ALLOW_UNMATCHED;
  out->keep_going = o.flags & QAIRT_ENCODINGS_APPLY_KEEP_GOING;
  out->report_missing = !(o.flags & QAIRT_ENCODINGS_APPLY_NO_MISSING_NOTE);
  return nullptr;
}

enc::Diags* Sink(qairt_encodings_diagnostics_t* d, enc::Diags* local) { return d ? &d->diags : local; }

// The entries to write: the file's (applied to a copy of the graph when one
// is given) or the graph's own.
Result<std::vector<enc::Entry>> Entries(const qairt_encodings_t* encodings, const qairt_graph_t* graph,
                                        enc::Diags* diags) {
  if (encodings && graph) {
    Graph copy = graph->graph;
    enc::ApplyOptions ao;
    ao.allow_unmatched = true;
    ao.report_missing = false;
    auto applied = enc::ApplyEncodings(encodings->file, &copy, ao, diags);
    if (!applied.ok()) return applied.status();
    return enc::EntriesAfterApply(encodings->file, copy);
  }
  if (encodings) return encodings->file.entries;
  return enc::CollectEntries(graph->graph);
}

qairt_status_t* ReadWriteOptions(const qairt_encodings_write_options* in, enc::WriteOptions* out) {
  if (!in) return nullptr;
  qairt_encodings_write_options o;
  if (auto* s =
          capi::ReadVersionedStruct(in, QAIRT_STRUCT_V1_SIZE(qairt_encodings_write_options, reserved), "qairt_encodings_write_options", &o))
    return s;
  if (o.flags || o.reserved) return InvalidArg("qairt_encodings_write_options: flags and reserved must be 0");
  if (!ValidVersion(o.version)) return InvalidArg("qairt_encodings_write_options.version {} is not known", o.version);
  out->version = o.version == QAIRT_ENCODINGS_VERSION_AUTO ? enc::Version::kV2_0_0 : static_cast<enc::Version>(o.version);
  return nullptr;
}

}  // namespace

qairt_status_t* qairt::capi::ReadAndApplyEncodings(const char* path, qairt_graph_t* graph,
                                                   qairt_diagnostics_t* diagnostics, enc::File* unmatched_out,
                                                   size_t* applied) {
  QAIRT_CAPI_BEGIN
  if (!path || !graph) return InvalidArg("ReadAndApplyEncodings: path and graph must not be NULL");
  enc::Diags local;
  enc::ApplyOptions options;
  options.unmatched_out = unmatched_out;
  auto r = enc::ReadAndApplyEncodingsFile(path, enc::ReadOptions{}, &graph->graph, options, Sink(diagnostics, &local));
  if (applied) *applied = r.ok() ? r.value().applied : 0;
  return r.ok() ? nullptr : capi::FromStatus(r.status());
  QAIRT_CAPI_END
}

qairt_status_t* qairt::capi::ApplyDeferredEncodings(enc::File&& file, qairt_graph_t* graph,
                                                    qairt_diagnostics_t* diagnostics, enc::File* unmatched_out) {
  QAIRT_CAPI_BEGIN
  if (!graph) return InvalidArg("ApplyDeferredEncodings: graph must not be NULL");
  enc::Diags local;
  enc::ApplyOptions options;
  options.report_missing = false;  // said by the first apply
  options.unmatched_out = unmatched_out;
  auto r = enc::ApplyEncodings(std::move(file), &graph->graph, options, Sink(diagnostics, &local));
  return r.ok() ? nullptr : capi::FromStatus(r.status());
  QAIRT_CAPI_END
}

extern "C" {

// The collector is the one list type: these are the 1.2 spellings of the
// qairt_diagnostics_* functions (capi/diagnostics.cpp).
qairt_status_t* qairt_encodings_diagnostics_create(qairt_encodings_diagnostics_t** out_diagnostics) {
  return qairt_diagnostics_create(out_diagnostics);
}

void qairt_encodings_diagnostics_destroy(qairt_encodings_diagnostics_t* diagnostics) {
  qairt_diagnostics_destroy(diagnostics);
}

size_t qairt_encodings_diagnostics_count(const qairt_encodings_diagnostics_t* diagnostics) {
  return qairt_diagnostics_count(diagnostics);
}

size_t qairt_encodings_diagnostics_count_severity(const qairt_encodings_diagnostics_t* diagnostics,
                                                  qairt_severity_t severity) {
  return qairt_diagnostics_count_severity(diagnostics, severity);
}

qairt_status_t* qairt_encodings_diagnostics_get(const qairt_encodings_diagnostics_t* diagnostics, size_t index,
                                                qairt_encodings_diagnostic* out_diagnostic) {
  QAIRT_CAPI_BEGIN
  if (!diagnostics) return InvalidArg("qairt_encodings_diagnostics_get: diagnostics is NULL");
  // The common record, re-packed in the 1.2 layout (which adds the byte offset).
  qairt_diagnostic c{};
  c.struct_size = sizeof c;
  if (qairt_status_t* s = qairt_diagnostics_get(diagnostics, index, &c)) return s;
  const qairt_encodings_diagnostic full{
      sizeof full, c.severity, c.line,    c.column,  diagnostics->diags[index].offset,
      c.code,      c.file,     c.tensor_name, c.field, c.message, c.suggestion};
  return capi::WriteVersionedStruct(full, QAIRT_STRUCT_V1_SIZE(qairt_encodings_diagnostic, suggestion), "qairt_encodings_diagnostic",
                                    out_diagnostic);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encodings_diagnostics_render(const qairt_encodings_diagnostics_t* diagnostics,
                                                   qairt_report_format_t format, char* buf, size_t capacity,
                                                   size_t* out_length) {
  return qairt_diagnostics_render(diagnostics, format, buf, capacity, out_length);
}

void qairt_encodings_diagnostics_clear(qairt_encodings_diagnostics_t* diagnostics) {
  qairt_diagnostics_clear(diagnostics);
}

void qairt_encodings_load_options_init(qairt_encodings_load_options* options) {
  if (!options) return;
  *options = qairt_encodings_load_options{};
  options->struct_size = sizeof(qairt_encodings_load_options);
}

qairt_status_t* qairt_encodings_load_file(const char* path, const qairt_encodings_load_options* options,
                                          qairt_encodings_diagnostics_t* diagnostics,
                                          qairt_encodings_t** out_encodings) {
  QAIRT_CAPI_BEGIN
  if (!path || !out_encodings) return InvalidArg("qairt_encodings_load_file: path and out_encodings must not be NULL");
  enc::ReadOptions ro;
  if (auto* s = ReadLoadOptions(options, &ro)) return s;
  enc::Diags diags;
  auto r = enc::ReadEncodingsFile(path, ro, &diags);
  return Load(std::move(r), std::move(diags), diagnostics, out_encodings);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encodings_load_bytes(const void* data, size_t size, const char* name,
                                           const qairt_encodings_load_options* options,
                                           qairt_encodings_diagnostics_t* diagnostics,
                                           qairt_encodings_t** out_encodings) {
  QAIRT_CAPI_BEGIN
  if ((!data && size) || !out_encodings)
    return InvalidArg("qairt_encodings_load_bytes: data and out_encodings must not be NULL");
  enc::ReadOptions ro;
  if (auto* s = ReadLoadOptions(options, &ro)) return s;
  enc::Diags diags;
  auto r = enc::ReadEncodingsBytes(data, size, name ? name : "<bytes>", ro, &diags);
  return Load(std::move(r), std::move(diags), diagnostics, out_encodings);
  QAIRT_CAPI_END
}

void qairt_encodings_destroy(qairt_encodings_t* encodings) { delete encodings; }

qairt_encodings_version_t qairt_encodings_version(const qairt_encodings_t* encodings) {
  return encodings ? static_cast<qairt_encodings_version_t>(encodings->file.version)
                   : static_cast<qairt_encodings_version_t>(QAIRT_ENCODINGS_VERSION_AUTO);
}

size_t qairt_encodings_entry_count(const qairt_encodings_t* encodings) {
  return encodings ? encodings->file.entries.size() : 0;
}

const char* qairt_encodings_entry_name(const qairt_encodings_t* encodings, size_t index) {
  if (!encodings || index >= encodings->file.entries.size()) return nullptr;
  return encodings->file.entries[index].name.c_str();
}

qairt_status_t* qairt_encodings_entry_encoding(const qairt_encodings_t* encodings, size_t index,
                                               qairt_encoding_t** out_encoding) {
  QAIRT_CAPI_BEGIN
  if (!encodings || !out_encoding)
    return InvalidArg("qairt_encodings_entry_encoding: encodings and out_encoding must not be NULL");
  if (index >= encodings->file.entries.size())
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("entry index {} out of range (count {})", index,
                                                         encodings->file.entries.size()));
  *out_encoding = new qairt_encoding_t{encodings->file.entries[index].encoding};
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_encodings_apply_options_init(qairt_encodings_apply_options* options) {
  if (!options) return;
  *options = qairt_encodings_apply_options{};
  options->struct_size = sizeof(qairt_encodings_apply_options);
}

qairt_status_t* qairt_encodings_apply(const qairt_encodings_t* encodings, qairt_graph_t* graph,
                                      const qairt_encodings_apply_options* options,
                                      qairt_encodings_diagnostics_t* diagnostics) {
  QAIRT_CAPI_BEGIN
  if (!encodings || !graph) return InvalidArg("qairt_encodings_apply: encodings and graph must not be NULL");
  enc::ApplyOptions ao;
  if (auto* s = ReadApplyOptions(options, &ao)) return s;
  enc::Diags local;
  auto r = enc::ApplyEncodings(encodings->file, &graph->graph, ao, Sink(diagnostics, &local));
  return r.ok() ? nullptr : capi::FromStatus(r.status());
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encodings_apply_file(const char* path, const qairt_encodings_load_options* load_options,
                                           qairt_graph_t* graph, const qairt_encodings_apply_options* apply_options,
                                           qairt_encodings_diagnostics_t* diagnostics) {
  QAIRT_CAPI_BEGIN
  if (!path || !graph) return InvalidArg("qairt_encodings_apply_file: path and graph must not be NULL");
  enc::ReadOptions ro;
  if (auto* s = ReadLoadOptions(load_options, &ro)) return s;
  enc::ApplyOptions ao;
  if (auto* s = ReadApplyOptions(apply_options, &ao)) return s;
  enc::Diags local;
  auto r = enc::ReadAndApplyEncodingsFile(path, ro, &graph->graph, ao, Sink(diagnostics, &local));
  return r.ok() ? nullptr : capi::FromStatus(r.status());
  QAIRT_CAPI_END
}

void qairt_encodings_write_options_init(qairt_encodings_write_options* options) {
  if (!options) return;
  *options = qairt_encodings_write_options{};
  options->struct_size = sizeof(qairt_encodings_write_options);
  options->version = QAIRT_ENCODINGS_VERSION_2_0_0;
}

qairt_status_t* qairt_encodings_write_bytes(const qairt_encodings_t* encodings, const qairt_graph_t* graph,
                                            const qairt_encodings_write_options* options,
                                            qairt_encodings_diagnostics_t* diagnostics, char* buf, size_t capacity,
                                            size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!encodings && !graph) return InvalidArg("qairt_encodings_write_bytes: give encodings, a graph or both");
  enc::WriteOptions wo;
  if (auto* s = ReadWriteOptions(options, &wo)) return s;
  wo.output_name = "<bytes>";
  enc::Diags local;
  enc::Diags* sink = Sink(diagnostics, &local);
  auto entries = Entries(encodings, graph, sink);
  if (!entries.ok()) return capi::FromStatus(entries.status());
  auto text = enc::WriteEncodings(entries.value(), wo, sink);
  if (!text.ok()) return capi::FromStatus(text.status());
  return capi::FillString(text.value(), buf, capacity, out_length, "qairt_encodings_write_bytes");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encodings_write_file(const qairt_encodings_t* encodings, const qairt_graph_t* graph,
                                           const char* path, const qairt_encodings_write_options* options,
                                           qairt_encodings_diagnostics_t* diagnostics) {
  QAIRT_CAPI_BEGIN
  if (!encodings && !graph) return InvalidArg("qairt_encodings_write_file: give encodings, a graph or both");
  if (!path) return InvalidArg("qairt_encodings_write_file: path is NULL");
  enc::WriteOptions wo;
  if (auto* s = ReadWriteOptions(options, &wo)) return s;
  wo.output_name = path;
  enc::Diags local;
  enc::Diags* sink = Sink(diagnostics, &local);
  auto entries = Entries(encodings, graph, sink);
  if (!entries.ok()) return capi::FromStatus(entries.status());
  auto text = enc::WriteEncodings(entries.value(), wo, sink);
  if (!text.ok()) return capi::FromStatus(text.status());
  return capi::FromStatus(WriteFileAtomically(path, text.value(), "encodings"));
  QAIRT_CAPI_END
}

}  // extern "C"
