// `qairt analyze`: the rewrites, the overrides again on the rewritten model,
// and the per-layer sensitivity table, its plot and HTML report. Uses only
// the public C API.
#include <qairt/qairt_analyze.h>
#include <qairt/qairt_calib.h>
#include <qairt/qairt_encodings.h>
#include <qairt/qairt_report.h>
#include <qairt/qairt_target.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli_util.h"
#include "convert_args.h"

namespace qairt_cli {

namespace {

// The overrides again on the rewritten graph: entries naming tensors the
// rewrites make (an exported file's folded weights) take effect too. The
// checks before applied the rest and reported the file's problems.
bool ApplyOverridesAfterRewrites(const std::string& path, qairt_graph_t* graph, bool json) {
  qairt_encodings_diagnostics_t* diags = nullptr;
  if (qairt_status_t* s = qairt_encodings_diagnostics_create(&diags)) {
    std::fprintf(stderr, "qairt analyze: %s\n", qairt_status_message(s));
    qairt_status_free(s);
    return false;
  }
  qairt_encodings_t* enc = nullptr;
  qairt_status_free(qairt_encodings_load_file(path.c_str(), nullptr, diags, &enc));
  bool ok = enc != nullptr;
  if (enc) {
    qairt_encodings_apply_options ao;
    qairt_encodings_apply_options_init(&ao);
    ao.flags = QAIRT_ENCODINGS_APPLY_ALLOW_UNMATCHED | QAIRT_ENCODINGS_APPLY_NO_MISSING_NOTE;
    if (qairt_status_t* s = qairt_encodings_apply(enc, graph, &ao, diags)) {
      std::fprintf(stderr, "qairt analyze: %s: %s\n", path.c_str(), qairt_status_message(s));
      qairt_status_free(s);
      ok = false;
    }
  }
  const size_t unmatched = qairt_encodings_diagnostics_count_severity(diags, QAIRT_SEVERITY_WARNING);
  if (ok && !json)
    std::printf("quantization overrides: %zu entries applied to the rewritten model (%zu name tensors it does not "
                "have: processing's own)\n", qairt_encodings_entry_count(enc) - unmatched, unmatched);
  qairt_encodings_destroy(enc);
  qairt_encodings_diagnostics_destroy(diags);
  return ok;
}

}  // namespace

int AnalyzeAndReport(const ProcessArgs& p, qairt_graph_t* graph, const qairt_target_t* target, bool json,
                     const std::string& overrides) {
  if (p.input_list.empty()) {
    std::fprintf(stderr, "qairt analyze: --input_list LIST is required\n");
    return 2;
  }
  if (!p.diagnostics_path.empty()) {
    std::fprintf(stderr, "qairt analyze: --diagnostics is an option of qairt convert\n");
    return 2;
  }
  std::string log;
  if (p.rewrites && !RunRewrites(p, graph, target, &log)) return 1;
  if (p.rewrites && !overrides.empty() && !ApplyOverridesAfterRewrites(overrides, graph, json)) return 1;
  std::vector<const char*> floats;
  qairt_calibration_options c = CalibrationOptions(p, &floats);
  qairt_analysis_options a;
  qairt_analysis_options_init(&a);
  a.calibration = &c;
  a.target = target;
  a.num_threads = p.num_threads;
  qairt_analysis_report_t* r = nullptr;
  if (qairt_status_t* s = qairt_analyze_sensitivity(graph, p.input_list.c_str(), &a, &r)) {
    std::fprintf(stderr, "qairt analyze: %s\n", qairt_status_message(s));
    qairt_status_free(s);
    return 1;
  }
  std::fputs(Render(r, json ? QAIRT_ANALYSIS_JSON : QAIRT_ANALYSIS_TEXT).c_str(), stdout);
  if (json) std::fputc('\n', stdout);
  int rc = 0;
  if (!p.plot_path.empty()) {
    std::string error;
    if (!WriteTextAtomically(p.plot_path, Render(r, QAIRT_ANALYSIS_SVG), &error)) {
      std::fprintf(stderr, "qairt analyze: cannot write the plot: %s\n", error.c_str());
      rc = 1;
    } else if (!json) {
      std::printf("plot: %s\n", p.plot_path.c_str());
    }
  }
  if (!p.report_path.empty()) {
    qairt_html_report_options ro;
    qairt_html_report_options_init(&ro);
    ro.sensitivity = r;
    qairt_target_info info{};
    info.struct_size = sizeof info;
    if (target) qairt_status_free(qairt_target_get_info(target, &info));
    ro.target_name = info.name;
    if (qairt_status_t* s = qairt_html_report_write_file(graph, &ro, p.report_path.c_str())) {
      std::fprintf(stderr, "qairt analyze: cannot write the report: %s\n", qairt_status_message(s));
      qairt_status_free(s);
      rc = 1;
    } else if (!json) {
      std::printf("report: %s\n", p.report_path.c_str());
    }
  }
  qairt_analysis_report_destroy(r);
  return rc;
}

}  // namespace qairt_cli
