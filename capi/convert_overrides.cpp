// convert's quantization overrides: applied before anything computes
// encodings; entries naming tensors the model does not have yet are applied
// after the rewrites that make them, or checked after processing.
#include <fmt/format.h>

#include <string>
#include <utility>

#include "capi/convert_pipeline.h"

namespace qairt::capi {

// Entries naming tensors the model does not have yet wait for the rewrites
// (ApplyDeferredOverrides): an encodings file exported by convert names the
// tensors they make (a folded weight), and applies to the same model again.
bool Pipeline::ApplyOverrides() {
  if (!o_.quantization_overrides) return true;
  const std::string path = o_.quantization_overrides;
  qairt_encodings_diagnostics_t* diags = nullptr;
  if (std::string e = Consume(qairt_encodings_diagnostics_create(&diags)); !e.empty())
    return Fail("quantization overrides", e);
  size_t applied = 0;
  // What the diagnostics cannot hold (the file's and the entries' own problems are in them).
  const std::string apply_error =
      Consume(qairt::capi::ReadAndApplyEncodings(path.c_str(), graph_, diags, &deferred_overrides_, &applied));
  const size_t errors = qairt_encodings_diagnostics_count_severity(diags, QAIRT_SEVERITY_ERROR);
  const std::string text = QueryThenFill([&](char* b, size_t c, size_t* l) {
    return qairt_encodings_diagnostics_render(diags, QAIRT_REPORT_TEXT, b, c, l);
  });
  const size_t deferred = deferred_overrides_.entries.size();
  if (errors) applied = 0;
  // The file's own records (file:line:col, tensor, rule id) stand for this
  // stage in the diagnostics; the error string keeps the summary.
  r_->AddRecords(diags->diags);
  qairt_encodings_diagnostics_destroy(diags);
  if (!errors && !apply_error.empty()) return Fail("quantization overrides", path + ": " + apply_error);
  if (errors) {
    const std::string failed = fmt::format("{}: {} error(s), nothing applied\n{}", path, errors, text);
    if (check_only()) r_->summary += "quantization overrides: " + failed;
    r_->AddError("quantization overrides", failed, /*record=*/false);
    return false;
  }
  r_->summary += fmt::format("quantization overrides: {}: {} encodings applied{}\n{}", path, applied,
                             deferred ? fmt::format("; {} name tensors the model does not have: tried after the rewrites", deferred)
                                      : "",
                             text);
  return true;
}

bool Pipeline::ApplyDeferredOverrides() {
  if (deferred_overrides_.entries.empty()) return true;
  qairt_encodings_diagnostics_t* diags = nullptr;
  if (std::string e = Consume(qairt_encodings_diagnostics_create(&diags)); !e.empty())
    return Fail("quantization overrides", e);
  qairt::encodings::File later;
  const std::string apply_error =
      Consume(qairt::capi::ApplyDeferredEncodings(std::move(deferred_overrides_), graph_, diags, &later));
  deferred_overrides_ = {};
  if (!apply_error.empty()) {
    qairt_encodings_diagnostics_destroy(diags);
    return Fail("quantization overrides", std::string(o_.quantization_overrides) + ": " + apply_error);
  }
  // Names processing derives from a tensor ("<tensor>_u16" for a convert,
  // "<bias>_<op>" for a shared bias it duplicates) wait for it; any other
  // name is unknown now, before calibration spends time.
  qairt::encodings::File unknown;
  unknown.path = deferred_overrides_.path = later.path;
  unknown.source = deferred_overrides_.source = later.source;
  for (qairt::encodings::Entry& e : later.entries)
    (DerivedByProcessing(e.name) ? deferred_overrides_ : unknown).entries.push_back(std::move(e));
  if (!unknown.entries.empty())
    qairt_status_free(qairt::capi::ApplyDeferredEncodings(std::move(unknown), graph_, diags, nullptr));
  if (check_only() && !deferred_overrides_.entries.empty())
    r_->summary += fmt::format("quantization overrides: {} entries name tensors processing makes ({}{}): checked "
                               "when converting\n",
                               deferred_overrides_.entries.size(), deferred_overrides_.entries[0].name,
                               deferred_overrides_.entries.size() > 1 ? ", ..." : "");
  return ReportLateOverrides(diags, "applied after the rewrites (names neither the model nor its rewrites have)");
}

// "<tensor>_<suffix>" for a tensor of the graph, the suffix a dtype's short
// name or one of the tensor's consumers: how processing names what it makes.
bool Pipeline::DerivedByProcessing(const std::string& name) const {
  const qairt::Graph& g = graph_->graph;
  for (size_t cut = name.rfind('_'); cut != std::string::npos && cut > 0; cut = name.rfind('_', cut - 1)) {
    const auto id = g.FindTensor(std::string_view(name).substr(0, cut));
    if (!id) continue;
    const std::string_view suffix = std::string_view(name).substr(cut + 1);
    for (uint32_t d = 1; d < qairt::kDTypeCount; ++d)
      if (qairt::DTypeShortName(static_cast<qairt::DType>(d)) == suffix) return true;
    for (const qairt::Use& u : g.tensor(*id).consumers)
      if (g.op(u.op).name == suffix) return true;
  }
  return false;
}

// `qairt convert --dry_run`: entries naming tensors the rewrites make are
// checked on a rewritten copy of the graph; the graph keeps what the dry run
// documents (the legalization and the overrides).
void Pipeline::CheckDeferredOverrides() {
  if (deferred_overrides_.entries.empty()) return;
  qairt_graph_t* copy = nullptr;
  if (std::string e = Consume(qairt_graph_clone(graph_, &copy)); !e.empty()) {
    Fail("quantization overrides", e);
    return;
  }
  qairt_graph_t* const original = std::exchange(graph_, copy);
  if (Rewrite()) ApplyDeferredOverrides();
  graph_ = original;
  qairt_graph_destroy(copy);
  deferred_overrides_ = {};
}

// After processing: entries naming tensors it made (the converts of
// quantized inputs and outputs) are processing's to encode; any other name
// is unknown, an error with suggestions.
bool Pipeline::CheckOverridesAfterProcessing() {
  if (deferred_overrides_.entries.empty()) return true;
  if (o_.stop_after) {
    // A partial run may stop before the passes that make these tensors.
    r_->summary += fmt::format("quantization overrides: {} entries name tensors processing makes: not checked "
                               "(processing stopped after {})\n",
                               deferred_overrides_.entries.size(), o_.stop_after);
    deferred_overrides_ = {};
    return true;
  }
  std::vector<std::string> made;
  qairt::encodings::File unknown;
  unknown.path = deferred_overrides_.path;
  unknown.source = deferred_overrides_.source;
  for (qairt::encodings::Entry& e : deferred_overrides_.entries) {
    if (graph_->graph.FindTensor(e.name)) {
      made.push_back(e.name);
    } else {
      unknown.entries.push_back(std::move(e));
    }
  }
  deferred_overrides_ = {};
  if (!made.empty())
    r_->summary += fmt::format("quantization overrides: {} entries name tensors processing made ({}{}): its own "
                               "encodings stand\n",
                               made.size(), made[0], made.size() > 1 ? ", ..." : "");
  if (unknown.entries.empty()) return true;
  qairt_encodings_diagnostics_t* diags = nullptr;
  if (std::string e = Consume(qairt_encodings_diagnostics_create(&diags)); !e.empty())
    return Fail("quantization overrides", e);
  qairt_status_free(qairt::capi::ApplyDeferredEncodings(std::move(unknown), graph_, diags, nullptr));
  return ReportLateOverrides(diags, "naming tensors processing derives, which it did not make");
}

bool Pipeline::ReportLateOverrides(qairt_encodings_diagnostics_t* diags, std::string_view which) {
  const size_t errors = qairt_encodings_diagnostics_count_severity(diags, QAIRT_SEVERITY_ERROR);
  const std::string text = QueryThenFill([&](char* b, size_t c, size_t* l) {
    return qairt_encodings_diagnostics_render(diags, QAIRT_REPORT_TEXT, b, c, l);
  });
  r_->AddRecords(diags->diags);
  qairt_encodings_diagnostics_destroy(diags);
  if (!errors) return true;
  const std::string failed = fmt::format("{}: {} error(s) in the entries {}\n{}", o_.quantization_overrides, errors,
                                         which, text);
  if (check_only()) r_->summary += "quantization overrides: " + failed;
  r_->AddError("quantization overrides", failed, /*record=*/false);
  return false;
}

}  // namespace qairt::capi
