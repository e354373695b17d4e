// `qairt report OUT.qairt [--float MODEL --compare LIST] -o REPORT.html`:
// the HTML report of a converted model (qairt_report.h), from what its
// container holds, with per-op accuracy against the float model when
// samples are given. Uses only the public C API.
#include <qairt/qairt.h>
#include <qairt/qairt_calib.h>
#include <qairt/qairt_container.h>
#include <qairt/qairt_import.h>
#include <qairt/qairt_report.h>

#include <cstdio>
#include <string>

#include "cli_util.h"
#include "help.h"

using qairt_cli::Progress;

namespace {

// Prints "qairt report: <what>: <status message>", frees the status, returns 1.
int Failed(const char* what, qairt_status_t* s) {
  std::fprintf(stderr, "qairt report: %s: %s\n", what, qairt_status_message(s));
  qairt_status_free(s);
  return 1;
}

struct Args {
  std::string container, float_model, compare_list, output;
  bool progress = true;
  qairt_cli::ShapeArgs shapes;
};

// 0 parsed; 2 a usage error (printed).
int Parse(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (int r = a->shapes.Parse(argc, argv, &i, "report"); r != 0) {
      if (r < 0) return 2;
      continue;
    }
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "qairt report: %s needs a value\n", arg.c_str());
        return false;
      }
      *out = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "-o" || arg == "--output") ok = value(&a->output);
    else if (arg == "--float") ok = value(&a->float_model);
    else if (arg == "--compare") ok = value(&a->compare_list);
    else if (arg == "--no_progress") a->progress = false;
    else if (!arg.empty() && arg[0] != '-' && a->container.empty()) a->container = arg;
    else {
      std::fprintf(stderr, "qairt report: unknown argument '%s'%s\n", arg.c_str(),
                   qairt_cli::SuggestFlag("report", arg).c_str());
      return 2;
    }
    if (!ok) return 2;
  }
  if (a->container.empty() || a->output.empty()) {
    std::fprintf(stderr, "qairt report: needs the converted model and -o REPORT.html\n"
                         "usage: qairt report OUT.qairt [--float MODEL --compare LIST] -o REPORT.html\n");
    return 2;
  }
  if (a->compare_list.empty() != a->float_model.empty()) {
    std::fprintf(stderr, "qairt report: --compare LIST and --float MODEL go together: the samples run through the "
                         "float model the container was converted from and through the container\n");
    return 2;
  }
  return 0;
}

}  // namespace

int RunReport(int argc, char** argv) {
  Args a;
  if (int rc = Parse(argc, argv, &a)) return rc;
  qairt_container_t* container = nullptr;
  if (qairt_status_t* s = qairt_container_load_file(a.container.c_str(), &container)) return Failed("load", s);
  qairt_graph_t* graph = nullptr;
  qairt_graph_t* float_graph = nullptr;
  qairt_compare_report_t* accuracy = nullptr;
  int rc = 0;
  if (qairt_status_t* s = qairt_container_get_graph(container, &graph)) rc = Failed("load", s);
  if (rc == 0 && !a.float_model.empty()) {
    qairt_import_options io;
    qairt_import_options_init(&io);
    a.shapes.Apply(&io);
    if (qairt_status_t* s = qairt_cli::ImportModelFile(a.float_model.c_str(), &io, &float_graph, nullptr))
      rc = Failed(a.float_model.c_str(), s);
  }
  if (rc == 0 && float_graph) {
    qairt_status_t* s = nullptr;
    {
      Progress bar("compare", a.progress);
      s = qairt_compare_input_list_progress(float_graph, graph, a.compare_list.c_str(), QAIRT_COMPARE_PER_LAYER,
                                            Progress::Callback, &bar, &accuracy);
    }
    if (s) rc = Failed("--compare", s);
  }
  if (rc == 0) {
    qairt_html_report_options o;
    qairt_html_report_options_init(&o);
    o.title = a.container.c_str();
    o.container = container;
    o.accuracy = accuracy;
    if (qairt_status_t* s = qairt_html_report_write_file(graph, &o, a.output.c_str())) rc = Failed("-o", s);
    else std::printf("report: %s\n", a.output.c_str());
  }
  qairt_compare_report_destroy(accuracy);
  qairt_graph_destroy(float_graph);
  qairt_graph_destroy(graph);
  qairt_container_destroy(container);
  return rc;
}
