// `qairt encodings check|convert`: validate an encodings file against a model
// (diagnostics as text, JSON or SARIF 2.1.0) and convert between the 2.0.0,
// 1.0.0 and 0.6.1 formats. Uses only the public C API.
#include <qairt/qairt.h>
#include <qairt/qairt_encodings.h>
#include <qairt/qairt_import.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli_util.h"
#include "help.h"

namespace {

struct Args {
  std::string command;  // check | convert
  std::string file;
  std::string model;
  std::string output;
  std::string format = "text";
  std::string to;
  std::string version = "auto";
  bool allow_unmatched = false;
  qairt_cli::ShapeArgs shapes;
};

const char kUsage[] =
    "usage: qairt encodings check -i MODEL --quantization_overrides FILE [--format text|json|sarif]\n"
    "                             [shape options] [--version 0.6.1|1.0.0|2.0.0] [--allow_unmatched]\n"
    "       qairt encodings convert FILE --to 2.0.0|1.0.0|0.6.1 [-i MODEL [shape options]] -o OUT\n"
    "shape options: -d/--input_dim NAME DIMS, --define_symbol NAME VALUE, --onnx-define-symbol NAME,VALUE\n";

int Usage(const char* msg) {
  if (msg) std::fprintf(stderr, "qairt encodings: %s\n", msg);
  std::fputs(kUsage, stderr);
  return 2;
}

qairt_encodings_version_t VersionCode(const std::string& v, bool* ok) {
  *ok = true;
  if (v == "auto") return QAIRT_ENCODINGS_VERSION_AUTO;
  if (v == "0.6.1") return QAIRT_ENCODINGS_VERSION_0_6_1;
  if (v == "1.0.0") return QAIRT_ENCODINGS_VERSION_1_0_0;
  if (v == "2.0.0") return QAIRT_ENCODINGS_VERSION_2_0_0;
  *ok = false;
  return 0;
}

std::string Render(const qairt_encodings_diagnostics_t* d, qairt_report_format_t f) {
  size_t len = 0;
  if (qairt_status_t* s = qairt_encodings_diagnostics_render(d, f, nullptr, 0, &len)) {
    qairt_status_free(s);
    return {};
  }
  std::string out(len + 1, '\0');
  qairt_status_free(qairt_encodings_diagnostics_render(d, f, out.data(), out.size(), &len));
  out.resize(len);
  return out;
}

// Imports the model; prints the error and returns nullptr on failure.
qairt_graph_t* ImportModel(Args& a) {
  qairt_import_options opts;
  qairt_import_options_init(&opts);
  a.shapes.Apply(&opts);
  qairt_graph_t* graph = nullptr;
  qairt_status_t* s = qairt_cli::ImportModelFile(a.model.c_str(), &opts, &graph, nullptr);
  if (s) {
    std::fprintf(stderr, "qairt encodings: %s\n", qairt_status_message(s));
    qairt_status_free(s);
    return nullptr;
  }
  return graph;
}

int Check(Args& a) {
  qairt_report_format_t format = QAIRT_REPORT_TEXT;
  if (a.format == "json") format = QAIRT_REPORT_JSON;
  else if (a.format == "sarif") format = QAIRT_REPORT_SARIF;
  else if (a.format != "text") return Usage("--format must be text, json or sarif");
  bool ok = true;
  qairt_encodings_load_options lo;
  qairt_encodings_load_options_init(&lo);
  lo.version = VersionCode(a.version, &ok);
  if (!ok) return Usage("--version must be 0.6.1, 1.0.0 or 2.0.0");
  qairt_encodings_diagnostics_t* diags = nullptr;
  qairt_status_free(qairt_encodings_diagnostics_create(&diags));
  if (!diags) return 1;
  qairt_graph_t* graph = nullptr;
  if (!a.model.empty()) {
    graph = ImportModel(a);
    if (!graph) {
      qairt_encodings_diagnostics_destroy(diags);
      return 1;
    }
  }
  // The statuses' problems are in diags.
  qairt_encodings_t* enc = nullptr;
  if (graph) {  // read and applied in one pass (a large file's entries are never all held)
    qairt_encodings_apply_options ao;
    qairt_encodings_apply_options_init(&ao);
    ao.flags = QAIRT_ENCODINGS_APPLY_KEEP_GOING | (a.allow_unmatched ? QAIRT_ENCODINGS_APPLY_ALLOW_UNMATCHED : 0u);
    qairt_status_free(qairt_encodings_apply_file(a.file.c_str(), &lo, graph, &ao, diags));
  } else {
    qairt_status_free(qairt_encodings_load_file(a.file.c_str(), &lo, diags, &enc));
  }
  std::string report = Render(diags, format);
  std::fputs(report.c_str(), stdout);
  if (format != QAIRT_REPORT_TEXT) std::fputc('\n', stdout);
  const size_t errors = qairt_encodings_diagnostics_count_severity(diags, QAIRT_SEVERITY_ERROR);
  // The check is against the model as imported; convert also takes names
  // its rewrites make (what --export_encodings writes for a folded weight).
  size_t unknown = 0;
  for (size_t i = 0; i < qairt_diagnostics_count(diags); ++i) {
    qairt_diagnostic d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    if (qairt_status_t* e = qairt_diagnostics_get(diags, i, &d)) {
      qairt_status_free(e);
      continue;
    }
    // An entry's own name (an Array-Of's index_tensor has the same code).
    if (d.severity == QAIRT_SEVERITY_ERROR && d.code && std::strcmp(d.code, "unknown-tensor") == 0 && d.field &&
        std::strcmp(d.field, "name") == 0)
      ++unknown;
  }
  if (unknown)
    std::fprintf(stderr, "note: %zu entr%s no tensor of the model as imported; `qairt convert` applies names its "
                 "rewrites make after them, and `qairt convert --dry_run --target T` checks the file that way\n",
                 unknown, unknown == 1 ? "y names" : "ies name");
  qairt_encodings_destroy(enc);
  qairt_graph_destroy(graph);
  qairt_encodings_diagnostics_destroy(diags);
  return errors ? 1 : 0;
}

int Convert(Args& a) {
  bool ok = true;
  qairt_encodings_write_options wo;
  qairt_encodings_write_options_init(&wo);
  wo.version = VersionCode(a.to, &ok);
  if (!ok || wo.version == QAIRT_ENCODINGS_VERSION_AUTO) return Usage("--to must be 2.0.0, 1.0.0 or 0.6.1");
  qairt_encodings_load_options lo;
  qairt_encodings_load_options_init(&lo);
  lo.flags = QAIRT_ENCODINGS_LOAD_STRICT;
  lo.version = VersionCode(a.version, &ok);
  if (!ok) return Usage("--version must be 0.6.1, 1.0.0 or 2.0.0");
  qairt_encodings_diagnostics_t* diags = nullptr;
  qairt_status_free(qairt_encodings_diagnostics_create(&diags));
  if (!diags) return 1;
  int rc = 0;
  qairt_graph_t* graph = nullptr;
  qairt_encodings_t* enc = nullptr;
  qairt_status_t* s = nullptr;
  if (!a.model.empty() && !(graph = ImportModel(a))) {
    rc = 1;
  } else if ((s = qairt_encodings_load_file(a.file.c_str(), &lo, diags, &enc)) != nullptr) {
    rc = 1;
  } else if ((s = qairt_encodings_write_file(enc, graph, a.output.c_str(), &wo, diags)) != nullptr) {
    rc = 1;
  }
  // Warnings and errors, one per line; the status repeats the errors.
  for (size_t i = 0; i < qairt_encodings_diagnostics_count(diags); ++i) {
    qairt_encodings_diagnostic d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    if (qairt_status_t* e = qairt_encodings_diagnostics_get(diags, i, &d)) {
      qairt_status_free(e);
      continue;
    }
    if (d.severity == QAIRT_SEVERITY_NOTE) continue;
    std::fprintf(stderr, "%s", d.file[0] ? d.file : "<encodings>");
    if (d.line) std::fprintf(stderr, ":%u:%u", d.line, d.column);
    std::fprintf(stderr, ": %s: ", d.severity == QAIRT_SEVERITY_ERROR ? "error" : "warning");
    if (d.tensor[0]) std::fprintf(stderr, "tensor '%s': ", d.tensor);
    if (d.field[0]) std::fprintf(stderr, "field '%s': ", d.field);
    std::fprintf(stderr, "%s%s%s%s\n", d.message, d.suggestion[0] ? " (did you mean '" : "", d.suggestion,
                 d.suggestion[0] ? "'?)" : "");
  }
  if (s) {
    std::fprintf(stderr, "qairt encodings convert: %s\n", qairt_status_message(s));
    qairt_status_free(s);
  }
  if (!rc) std::fprintf(stderr, "wrote %s (%s, %zu entries)\n", a.output.c_str(), a.to.c_str(),
                        qairt_encodings_entry_count(enc));
  qairt_encodings_destroy(enc);
  qairt_graph_destroy(graph);
  qairt_encodings_diagnostics_destroy(diags);
  return rc;
}

}  // namespace

int RunEncodings(int argc, char** argv) {
  if (argc < 2) return Usage(nullptr);
  Args a;
  a.command = argv[1];
  if (a.command == "--help" || a.command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (a.command != "check" && a.command != "convert") return Usage(("unknown subcommand '" + a.command + "'").c_str());
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "-i" || arg == "--input_network") ok = value(&a.model);
    else if (arg == "--quantization_overrides") ok = value(&a.file);
    else if (arg == "--format") ok = value(&a.format);
    else if (arg == "--to") ok = value(&a.to);
    else if (arg == "-o" || arg == "--output_path") ok = value(&a.output);
    else if (arg == "--version") ok = value(&a.version);
    else if (arg == "--allow_unmatched") a.allow_unmatched = true;
    else if (int c = a.shapes.Parse(argc, argv, &i, "encodings"); c != 0) {
      if (c < 0) return Usage(nullptr);
    } else if (arg[0] != '-' && a.file.empty()) {
      a.file = arg;
    } else {
      return Usage(("unknown argument '" + arg + "'" + qairt_cli::SuggestFlag("encodings", arg)).c_str());
    }
    if (!ok) return Usage((arg + " needs a value").c_str());
  }
  if (a.file.empty()) return Usage("no encodings file given");
  if (a.command == "check") return Check(a);
  if (a.to.empty() || a.output.empty()) return Usage("convert needs --to VERSION and -o OUT");
  return Convert(a);
}
