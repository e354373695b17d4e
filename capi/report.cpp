// The HTML report (include/qairt/qairt_report.h): gathers what the caller has
// (container, processing result, accuracy, sensitivity, diagnostics) through
// the public getters into report::ReportData and renders it.
#include "qairt/qairt_report.h"

#include <cmath>
#include <string>

#include "capi/capi_internal.h"
#include "report/html_report.h"
#include "support/atomic_file.h"

using qairt::capi::InvalidArg;
namespace report = qairt::report;

namespace {

static_assert(sizeof(void*) != 8 || sizeof(qairt_html_report_options) == 64);

// The 1.9 layout, the first: it ends after target_name.
constexpr size_t kOptionsV1Size = QAIRT_STRUCT_V1_SIZE(qairt_html_report_options, target_name);

const char* Str(const char* s) { return s ? s : ""; }

void AddDecisions(const qairt_container_option* options, size_t num_options,
                  const qairt_container_op_annotation* annotations, size_t num_annotations,
                  const qairt_container_tensor_note* notes, size_t num_notes, report::ReportData* d) {
  if (num_options) d->options.clear();
  for (size_t i = 0; i < num_options; ++i)
    d->options.push_back({Str(options[i].key), Str(options[i].value), qairt_option_source_name(options[i].source)});
  for (size_t i = 0; i < num_annotations; ++i) {
    const qairt_container_op_annotation& a = annotations[i];
    if (a.op_name) d->ops[a.op_name] = {Str(a.kernel), a.super_group, a.adapted != 0};
  }
  for (size_t i = 0; i < num_notes; ++i)
    if (notes[i].tensor_name) d->reasons[notes[i].tensor_name] = Str(notes[i].reasons);
}

qairt_status_t* FromContainer(const qairt_container_t* c, report::ReportData* d) {
  qairt_container_info info{};
  info.struct_size = sizeof info;
  if (qairt_status_t* s = qairt_container_get_info(c, &info)) return s;
  d->target = Str(info.target_name);
  d->producer = Str(info.producer);
  if (info.stats_summary) d->stats = info.stats_summary;
  std::vector<qairt_container_option> options(info.num_options);
  std::vector<qairt_container_op_annotation> annotations(info.num_op_annotations);
  std::vector<qairt_container_tensor_note> notes(info.num_tensor_notes);
  for (size_t i = 0; i < options.size(); ++i)
    if (qairt_status_t* s = qairt_container_get_option(c, i, &options[i])) return s;
  for (size_t i = 0; i < annotations.size(); ++i)
    if (qairt_status_t* s = qairt_container_get_op_annotation(c, i, &annotations[i])) return s;
  for (size_t i = 0; i < notes.size(); ++i)
    if (qairt_status_t* s = qairt_container_get_tensor_note(c, i, &notes[i])) return s;
  AddDecisions(options.data(), options.size(), annotations.data(), annotations.size(), notes.data(), notes.size(), d);
  return nullptr;
}

void FromProcess(const qairt_process_result_t* p, bool with_diagnostics, report::ReportData* d) {
  size_t no = 0, na = 0, nn = 0;
  const qairt_container_option* options = qairt_process_result_options(p, &no);
  const qairt_container_op_annotation* annotations = qairt_process_result_op_annotations(p, &na);
  const qairt_container_tensor_note* notes = qairt_process_result_tensor_notes(p, &nn);
  AddDecisions(options, no, annotations, na, notes, nn, d);
  for (size_t i = 0; i < no; ++i)
    if (options[i].key && std::string_view(options[i].key) == "target") d->target = Str(options[i].value);
  d->stats = Str(qairt_process_result_stats(p));
  if (with_diagnostics)
    if (const qairt_diagnostics_t* diags = qairt_process_result_diagnostics(p))
      d->diagnostics.insert(d->diagnostics.end(), diags->diags.begin(), diags->diags.end());
}

qairt_status_t* FromAccuracy(const qairt_compare_report_t* r, report::ReportData* d) {
  auto read = [](const qairt_accuracy& a) { return report::Accuracy{a.sqnr_db, a.cosine, a.max_abs}; };
  for (size_t i = 0; i < qairt_compare_report_output_count(r); ++i) {
    qairt_accuracy a{};
    a.struct_size = sizeof a;
    if (qairt_status_t* s = qairt_compare_report_output(r, i, &a)) return s;
    d->outputs.push_back({Str(a.name), read(a), a.argmax_agree, a.argmax_positions, a.argmax_positions_agree});
  }
  for (size_t i = 0; i < qairt_compare_report_layer_count(r); ++i) {
    qairt_accuracy a{};
    a.struct_size = sizeof a;
    if (qairt_status_t* s = qairt_compare_report_layer(r, i, &a)) return s;
    d->layers[Str(a.name)] = read(a);
  }
  d->samples = qairt_compare_report_samples(r);
  return nullptr;
}

qairt_status_t* Gather(const qairt_graph_t* graph, const qairt_html_report_options* in, report::ReportData* d) {
  if (!graph) return InvalidArg("graph must not be NULL");
  qairt_html_report_options o;
  qairt_html_report_options_init(&o);
  if (in) {
    if (qairt_status_t* s = qairt::capi::ReadVersionedStruct(in, kOptionsV1Size, "qairt_html_report_options", &o))
      return s;
    if (o.flags != 0) return InvalidArg("qairt_html_report_options.flags must be 0, got 0x{:x}", o.flags);
  }
  d->title = Str(o.title);
  d->target = Str(o.target_name);
  if (o.container)
    if (qairt_status_t* s = FromContainer(o.container, d)) return s;
  if (o.process) FromProcess(o.process, o.diagnostics == nullptr, d);
  if (o.target_name && d->target.empty()) d->target = o.target_name;
  if (o.accuracy)
    if (qairt_status_t* s = FromAccuracy(o.accuracy, d)) return s;
  if (o.sensitivity) {
    size_t length = 0;
    if (qairt_status_t* s = qairt_analysis_report_render(o.sensitivity, QAIRT_ANALYSIS_SVG, nullptr, 0, &length)) {
      qairt_status_free(s);
      return InvalidArg("qairt_html_report_options.sensitivity is not a sensitivity report (qairt_analyze_sensitivity)");
    }
    d->sensitivity_svg.resize(length + 1);
    if (qairt_status_t* s =
            qairt_analysis_report_render(o.sensitivity, QAIRT_ANALYSIS_SVG, d->sensitivity_svg.data(), length + 1, &length))
      return s;
    d->sensitivity_svg.resize(length);
  }
  if (o.diagnostics) d->diagnostics.insert(d->diagnostics.end(), o.diagnostics->diags.begin(), o.diagnostics->diags.end());
  return nullptr;
}

qairt_status_t* Render(const qairt_graph_t* graph, const qairt_html_report_options* options, std::string* html) {
  report::ReportData data;
  if (qairt_status_t* s = Gather(graph, options, &data)) return s;
  qairt::Result<std::string> r = report::RenderHtml(graph->graph, data);
  if (!r.ok())
    return qairt::capi::MakeStatus(QAIRT_VALIDATION_FAILED, "HTML report: " + r.status().message());
  *html = std::move(r).value();
  return nullptr;
}

}  // namespace

extern "C" {

void qairt_html_report_options_init(qairt_html_report_options* options) {
  if (!options) return;
  *options = qairt_html_report_options{};
  options->struct_size = sizeof(qairt_html_report_options);
}

qairt_status_t* qairt_html_report_render(const qairt_graph_t* graph, const qairt_html_report_options* options,
                                         char* buf, size_t capacity, size_t* out_length) {
  QAIRT_CAPI_BEGIN
  std::string html;
  if (qairt_status_t* s = Render(graph, options, &html)) return s;
  return qairt::capi::FillString(html, buf, capacity, out_length, "HTML report");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_html_report_write_file(const qairt_graph_t* graph, const qairt_html_report_options* options,
                                             const char* path) {
  QAIRT_CAPI_BEGIN
  if (!path || !*path) return InvalidArg("path must not be NULL or empty");
  std::string html;
  if (qairt_status_t* s = Render(graph, options, &html)) return s;
  return qairt::capi::FromStatus(qairt::WriteFileAtomically(path, html, "HTML report"));
  QAIRT_CAPI_END
}

}  // extern "C"
