// `qairt inspect` and `qairt convert`: import a model and report what is in it
// and whether it will convert. Uses only the public C API.
#include <qairt/qairt.h>
#include <qairt/qairt_convert.h>
#include <qairt/qairt_encodings.h>
#include <qairt/qairt_import.h>
#include <qairt/qairt_process.h>
#include <qairt/qairt_target.h>


#include "convert_args.h"

#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli_util.h"
#include "io_flags.h"
#include "vendor_flags.h"
#include "help.h"

using qairt_cli::IsTflitePath;
using qairt_cli::JsonQuoted;
using qairt_cli::ParseInt;

namespace {

struct ImportArgs {
  std::string model;
  std::string output_path;
  std::string target;      // --target NAME|FILE
  std::string target_soc;  // --target_soc_model SM8550
  bool json = false;
  bool dry_run = false;
  std::string overrides;          // --quantization_overrides FILE
  bool ignore_overrides = false;  // --ignore_quantization_overrides
  bool keep_int64 = false;        // --keep_int64_inputs (default: int64 -> int32, as the vendor converter)
  qairt_cli::ShapeArgs shapes;
  qairt_cli::IoFlags io;           // the vendor's graph-I/O flags (convert, analyze)
  qairt_cli::ProcessArgs process;  // convert without --dry_run
};

// Returns 0 on success, 2 (usage error) with a message otherwise.
int Parse(int argc, char** argv, bool convert, ImportArgs* a) {
  auto need = [&](int i, int n, const char* flag) {
    if (i + n >= argc) {
      std::fprintf(stderr, "qairt %s: %s needs %d argument%s\n", argv[0], flag, n, n > 1 ? "s" : "");
      return false;
    }
    return true;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      a->json = true;
    } else if (convert && arg == "--dry_run") {
      a->dry_run = true;
    } else if (convert && arg == "--quantization_overrides") {
      if (!need(i, 1, arg.c_str())) return 2;
      a->overrides = argv[++i];
    } else if (convert && arg == "--ignore_quantization_overrides") {
      a->ignore_overrides = true;
    } else if (convert && arg == "--keep_int64_inputs") {
      a->keep_int64 = true;
    } else if (arg == "-i" || arg == "--input_network") {
      if (!need(i, 1, arg.c_str())) return 2;
      a->model = argv[++i];
    } else if (convert && (arg == "-o" || arg == "--output_path")) {
      if (!need(i, 1, arg.c_str())) return 2;
      a->output_path = argv[++i];
    } else if (arg == "--target") {
      if (!need(i, 1, arg.c_str())) return 2;
      a->target = argv[++i];
    } else if (arg == "--target_soc_model") {
      if (!need(i, 1, arg.c_str())) return 2;
      a->target_soc = argv[++i];
    } else if (int shape = a->shapes.Parse(argc, argv, &i, argv[0]); shape != 0) {
      if (shape < 0) return 2;
    } else if (int c = convert ? qairt_cli::ParseProcessArg(argc, argv, &i, &a->process) : 0; c != 0) {
      if (c < 0) return 2;
    } else if (int io = convert ? qairt_cli::ParseIoFlag(argc, argv, &i, &a->io) : 0; io != 0) {
      if (io < 0) return 2;
    } else if (int v = convert ? qairt_cli::ParseVendorFlag(argc, argv, &i, argv[0]) : 0; v != 0) {
      if (v < 0) return 2;
    } else if (!convert && a->model.empty() && arg[0] != '-') {
      a->model = arg;
    } else {
      std::fprintf(stderr, "qairt %s: unknown argument '%s'%s\n", argv[0], arg.c_str(),
                   qairt_cli::SuggestFlag(argv[0], arg).c_str());
      return 2;
    }
  }
  if (convert && (a->process.print_pipeline || a->process.list_rewrites)) return 0;
  if (a->model.empty()) {
    // analyze shares this parser: argv[0] names the command whose usage is due.
    qairt_cli::PrintCommandUsage(argv[0], stderr);
    return 2;
  }
  return 0;
}

std::string ReportString(const qairt_import_report_t* r, bool json) {
  size_t len = 0;
  auto fill = json ? qairt_import_report_json : qairt_import_report_text;
  qairt_status_t* s = fill(r, nullptr, 0, &len);
  if (s) {
    qairt_status_free(s);
    return {};
  }
  std::string out(len + 1, '\0');
  s = fill(r, out.data(), out.size(), &len);
  qairt_status_free(s);
  out.resize(len);
  return out;
}

template <typename Fill>
std::string QueryThenFill(Fill fill) {
  size_t len = 0;
  if (qairt_status_t* s = fill(nullptr, 0, &len)) {
    qairt_status_free(s);
    return {};
  }
  std::string out(len + 1, '\0');
  qairt_status_free(fill(out.data(), out.size(), &len));
  out.resize(len);
  return out;
}

// An import that succeeded may still warn (an --input_dim that changed a
// dim, a --define_symbol no input has): printed, since convert and analyze
// show no import report.
void PrintImportWarnings(const qairt_import_report_t* report) {
  const qairt_diagnostics_t* diags = qairt_import_report_diagnostics(report);
  for (size_t i = 0; diags && i < qairt_diagnostics_count(diags); ++i) {
    qairt_diagnostic d{};
    d.struct_size = sizeof d;
    if (qairt_status_t* s = qairt_diagnostics_get(diags, i, &d)) {
      qairt_status_free(s);
      continue;
    }
    if (d.severity == QAIRT_SEVERITY_WARNING) std::fprintf(stderr, "warning: import: %s\n", d.message);
  }
}

// The checks of --dry_run (and analyze's preparation), done by the library:
// legalization, the kernel check and the overrides, in place on `graph`.
struct Checks {
  int rc = 0;
  bool target_ok = true;
  std::string text;         // what the checks say, for the text report
  std::string target_json;  // {"name":..,"ops_without_kernels":[..]}; "" without a target
  std::string json;         // ,"quantization_overrides":{..},"checks":{..}
};

Checks RunChecks(qairt_graph_t* graph, const qairt_target_t* target, const std::string& overrides_path,
                 bool ignore_overrides, const char* command, const qairt_cli::ProcessArgs& p) {
  Checks c;
  const bool ignored = !overrides_path.empty() && ignore_overrides;
  qairt_convert_options o;
  qairt_convert_options_init(&o);
  o.flags = QAIRT_CONVERT_CHECK_ONLY | (p.rewrites ? 0u : QAIRT_CONVERT_NO_REWRITES);
  o.target = target;
  // The rewrites a conversion with these flags runs: overrides naming what
  // they make are checked after them.
  std::vector<const char*> floats, disabled;
  for (const std::string& r : p.disabled_rewrites) disabled.push_back(r.c_str());
  o.disabled_rewrites = disabled.data();
  o.num_disabled_rewrites = disabled.size();
  qairt_calibration_options cal = qairt_cli::CalibrationOptions(p, &floats);
  o.calibration = &cal;
  o.quantization_overrides = overrides_path.empty() || ignored ? nullptr : overrides_path.c_str();
  qairt_convert_result_t* r = nullptr;
  if (qairt_status_t* s = qairt_convert_graph(graph, &o, &r)) {
    std::fprintf(stderr, "qairt %s: %s\n", command, qairt_status_message(s));
    qairt_status_free(s);
    c.rc = 1;
    return c;
  }
  c.text = qairt_convert_result_summary(r);
  if (ignored) c.text += "quantization overrides: " + overrides_path + " ignored (--ignore_quantization_overrides)\n";
  // Target and overrides failures are in the text; others (legalization) are not.
  for (size_t i = 0; i < qairt_convert_result_error_count(r); ++i) {
    const std::string e = qairt_convert_result_error(r, i);
    c.rc = 1;
    if (e.rfind("target: ", 0) == 0 || e.rfind("legalize: ", 0) == 0) c.target_ok = false;
    if (e.rfind("target: ", 0) != 0 && e.rfind("quantization overrides: ", 0) != 0)
      std::fprintf(stderr, "qairt %s: %s\n", command, e.c_str());
  }
  const qairt_diagnostics_t* diags = qairt_convert_result_diagnostics(r);
  if (target) {
    qairt_target_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    qairt_status_free(qairt_target_get_info(target, &info));
    c.target_json = "{\"name\":" + JsonQuoted(info.name ? info.name : "?") + ",\"ops_without_kernels\":[";
    bool first = true;
    for (size_t i = 0; i < qairt_diagnostics_count(diags); ++i) {
      qairt_diagnostic d;
      std::memset(&d, 0, sizeof d);
      d.struct_size = sizeof d;
      qairt_status_free(qairt_diagnostics_get(diags, i, &d));
      if (!d.code || std::strcmp(d.code, "no-kernel") != 0) continue;
      c.target_json += std::string(first ? "" : ",") + JsonQuoted(d.field);
      first = false;
    }
    c.target_json += "]}";
  }
  if (!overrides_path.empty())
    c.json += ",\"quantization_overrides\":{\"file\":" + JsonQuoted(overrides_path) + ",\"ignored\":" +
              (ignored ? "true" : "false") + "}";
  // "checks", not "diagnostics": the import report already has that key
  // (the importer's own records) and a JSON object's keys must be unique.
  c.json += ",\"checks\":" + QueryThenFill([&](char* b, size_t n, size_t* l) {
    return qairt_diagnostics_render(diags, QAIRT_REPORT_JSON, b, n, l);
  });
  qairt_convert_result_destroy(r);
  return c;
}

// The target a --target_soc_model SoC is; false (with the message) for an unknown SoC.
bool SocTargetName(const std::string& soc, std::string* name) {
  qairt_target_t* soc_target = nullptr;
  if (qairt_status_t* ts = qairt_target_for_soc(soc.c_str(), &soc_target)) {
    std::fprintf(stderr, "qairt convert: %s\n", qairt_status_message(ts));
    qairt_status_free(ts);
    return false;
  }
  qairt_target_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  qairt_status_free(qairt_target_get_info(soc_target, &info));
  *name = info.name ? info.name : "";
  qairt_target_destroy(soc_target);
  return true;
}

int RunImport(int argc, char** argv_in, bool convert, bool analyze = false, bool calibrate = false) {
  // The vendor tools take "--flag=value" as well as "--flag value".
  std::vector<std::string> arg_storage;
  std::vector<char*> args;
  qairt_cli::SplitEqualsForms(argc, argv_in, &arg_storage, &args);
  argc = static_cast<int>(args.size()) - 1;
  char** argv = args.data();
  ImportArgs a;
  if (int rc = Parse(argc, argv, convert, &a)) return rc;
  a.process.collect_stats = calibrate;
  if (calibrate && a.dry_run) {
    std::fprintf(stderr, "qairt calibrate: --dry_run is an option of qairt convert\n");
    return 2;
  }
  if (convert && a.process.print_pipeline) return qairt_cli::PrintPipeline();
  if (convert && a.process.list_rewrites) return qairt_cli::PrintRewrites();
  const bool process = convert && !a.dry_run;
  if (convert && a.dry_run && !a.process.report_path.empty()) {
    std::fprintf(stderr, "qairt convert: --report is written by a conversion; drop --dry_run (qairt analyze --report "
                         "reports a float model with its sensitivity)\n");
    return 2;
  }
  if (convert && a.dry_run && !a.process.diagnostics_path.empty()) {
    std::fprintf(stderr, "qairt convert: --diagnostics is written by a conversion; drop --dry_run, or use --dry_run "
                         "--json for its report as JSON\n");
    return 2;
  }
  if (convert) {
    std::string from_backend = qairt_cli::TargetFromBackend(a.process);
    if (from_backend == "?") return 2;
    // As the vendor converter: --target_soc_model gives the backend's
    // architecture when --target_arch does not; a SoC whose target is of
    // another backend or architecture is a conflict, never silently dropped.
    if (!from_backend.empty() && !a.target_soc.empty()) {
      std::string soc_name;
      if (!SocTargetName(a.target_soc, &soc_name)) return 2;
      const std::string backend_prefix = from_backend.substr(0, from_backend.find('_') + 1);
      if (soc_name.rfind(backend_prefix, 0) != 0 || (!a.process.target_arch.empty() && soc_name != from_backend)) {
        std::fprintf(stderr, "qairt convert: --target_soc_model %s is %s, which conflicts with --target_backend/"
                             "--target_arch (%s)\n", a.target_soc.c_str(), soc_name.c_str(), from_backend.c_str());
        return 2;
      }
      from_backend = soc_name;
      a.target_soc.clear();
    }
    if (!a.target.empty() && !a.target_soc.empty()) {
      // --target names the target; a SoC that is another target is a conflict.
      std::string soc_name;
      if (!SocTargetName(a.target_soc, &soc_name)) return 2;
      if (soc_name != a.target) {
        std::fprintf(stderr, "qairt convert: --target %s conflicts with --target_soc_model %s (%s): give one\n",
                     a.target.c_str(), a.target_soc.c_str(), soc_name.c_str());
        return 2;
      }
      a.target_soc.clear();
    }
    if (!from_backend.empty()) {
      if (!a.target.empty() && a.target != from_backend) {
        std::fprintf(stderr, "qairt convert: --target %s conflicts with --target_backend/--target_arch (%s)\n",
                     a.target.c_str(), from_backend.c_str());
        return 2;
      }
      a.target = from_backend;
    }
  }
  if (convert && a.process.float_fallback && !a.process.input_list.empty()) {
    // The vendor converter refuses the pair: calibration gives every tensor
    // an encoding, so there is nothing to fall back from. analyze always
    // calibrates.
    std::fprintf(stderr, "qairt %s: --float_fallback cannot be used with --input_list (calibration encodes every "
                         "tensor)%s\n", argv[0], analyze ? ", which analyze needs" : "; drop one of them");
    return 2;
  }
  if (process && !a.output_path.empty()) {
    // The vendor's output names (QNN model C++ source, its library, a DLC)
    // are refused rather than silently filled with a .qairt container.
    const std::string& o = a.output_path;
    const size_t dot = o.find_last_of('.');
    const std::string ext = dot == std::string::npos || o.find('/', dot) != std::string::npos ? "" : o.substr(dot);
    for (const char* vendor : {".dlc", ".cpp", ".so", ".bin"}) {
      if (ext != vendor) continue;
      std::fprintf(stderr, "qairt convert: -o %s: qairt writes a .qairt container, not a vendor %s file; name it "
                           "%s.qairt (qairt compare/run/inspect read it, --export_qdq_onnx gives a model other tools "
                           "run)\n",
                   o.c_str(), vendor, o.substr(0, dot).c_str());
      return 2;
    }
  }
  if (process && !analyze && a.target.empty() && a.target_soc.empty()) {
    std::fprintf(stderr, "qairt convert: a target is needed (--target NAME, --target_backend/--target_arch or "
                         "--target_soc_model SOC), or --dry_run\n");
    return 2;
  }
  qairt_import_options opts;
  qairt_import_options_init(&opts);
  if (convert) opts.flags |= QAIRT_IMPORT_REQUIRE_STATIC;
  if (convert && !a.keep_int64) opts.flags |= QAIRT_IMPORT_INT64_TO_INT32;
  a.shapes.Apply(&opts);

  // The target is resolved before the (slower) import so a typo fails fast.
  qairt_target_t* target = nullptr;
  if (!a.target.empty() || !a.target_soc.empty()) {
    qairt_status_t* ts = !a.target.empty() ? qairt_target_load(a.target.c_str(), &target)
                                           : qairt_target_for_soc(a.target_soc.c_str(), &target);
    if (ts) {
      std::fprintf(stderr, "qairt %s: %s\n", argv[0], qairt_status_message(ts));
      qairt_status_free(ts);
      return 1;
    }
  }

  qairt_graph_t* graph = nullptr;
  qairt_import_report_t* report = nullptr;
  const auto import_start = std::chrono::steady_clock::now();
  qairt_status_t* s = (IsTflitePath(a.model.c_str()) ? qairt_import_tflite_file : qairt_import_onnx_file)(
      a.model.c_str(), &opts, &graph, &report);
  const double import_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - import_start).count();
  if (convert && graph && !s) {
    qairt_cli::IoContext context;
    context.quantized_io = a.process.quantized_io;
    context.overrides = !a.overrides.empty() && !a.ignore_overrides;
    context.float_fallback = a.process.float_fallback;
    context.input_list = !a.process.input_list.empty();
    context.keep_int64 = a.keep_int64;
    context.float_inputs = a.process.float_inputs;
    if (!qairt_cli::ApplyIoFlags(a.io, context, graph, argv[0])) {
      qairt_target_destroy(target);
      qairt_import_report_destroy(report);
      qairt_graph_destroy(graph);
      return 2;
    }
  }
  if (process && graph && !s) PrintImportWarnings(report);
  if (analyze)
    qairt_cli::WarnUnusedFlags(a.process, qairt_cli::FlagUse::kAnalyze, !a.output_path.empty());
  else if (convert && a.dry_run)
    qairt_cli::WarnUnusedFlags(a.process, qairt_cli::FlagUse::kDryRun, !a.output_path.empty());
  if (process && !analyze && graph && !s) {
    // Import succeeded: the library's convert pipeline does the rest; of the
    // import report only its warnings matter then.
    std::string overrides = a.overrides;
    if (!overrides.empty() && a.ignore_overrides) {
      std::printf("quantization overrides: %s ignored (--ignore_quantization_overrides)\n", overrides.c_str());
      overrides.clear();
    }
    const int rc = qairt_cli::ProcessAndWrite(a.process, graph, target, a.output_path, overrides, import_seconds);
    qairt_target_destroy(target);
    qairt_import_report_destroy(report);
    qairt_graph_destroy(graph);
    return rc;
  }
  Checks checks;
  if (graph) checks = RunChecks(graph, target, a.overrides, a.ignore_overrides, argv[0], a.process);
  int rc = checks.rc;
  if (analyze && rc == 0 && graph && !s) {
    if (!a.overrides.empty()) std::fputs(checks.text.c_str(), stdout);
    rc = qairt_cli::AnalyzeAndReport(a.process, graph, target, a.json, a.ignore_overrides ? "" : a.overrides);
    qairt_target_destroy(target);
    qairt_import_report_destroy(report);
    qairt_graph_destroy(graph);
    return rc;
  }
  if (report) {
    std::string text = ReportString(report, a.json);
    if (a.json && graph && !text.empty() && text.back() == '}') {
      text.pop_back();
      if (!checks.target_json.empty()) text += ",\"target\":" + checks.target_json;
      text += checks.json + "}";
    }
    // The text ends with one verdict for the whole check: the import
    // report's "result:" line moves after the target and overrides sections,
    // and says FAILED when one of them failed (the exit code's reason).
    std::string verdict;
    if (!a.json) {
      const size_t at = text.rfind("result: ");
      if (at != std::string::npos && (at == 0 || text[at - 1] == '\n')) {
        const size_t end = text.find('\n', at);
        verdict = text.substr(at, end == std::string::npos ? std::string::npos : end - at + 1);
        text.erase(at, verdict.size());
        if (rc != 0 && !s && verdict.rfind("result: OK", 0) == 0)
          verdict = "result: FAILED (the model imports, but the " +
                    std::string(checks.target_ok ? "quantization overrides have errors" : "target check found errors") +
                    ": see above)\n";
      }
    }
    std::fputs(text.c_str(), stdout);
    if (a.json) std::fputc('\n', stdout);
    if (!a.json) std::fputs(checks.text.c_str(), stdout);
    std::fputs(verdict.c_str(), stdout);
  }
  qairt_target_destroy(target);
  if (s) {
    // Parse and file errors come without a report; otherwise it said it all.
    if (!report || !a.json) std::fprintf(stderr, "qairt %s: %s\n", argv[0], qairt_status_message(s));
    qairt_status_free(s);
    rc = 1;
  }
  qairt_import_report_destroy(report);
  qairt_graph_destroy(graph);
  return rc;
}

}  // namespace

bool IsContainerPath(const char* path);            // cmd_container.cpp
int RunInspectContainer(int argc, char** argv);  // cmd_container.cpp

int RunInspect(int argc, char** argv) {
  // A .qairt container (by extension or file identifier) has its own report.
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-' && IsContainerPath(argv[i])) return RunInspectContainer(argc, argv);
  return RunImport(argc, argv, false);
}
int RunConvert(int argc, char** argv) { return RunImport(argc, argv, true); }
// qairt calibrate (not --merge, see cmd_calibrate.cpp): the convert pipeline
// up to calibration, which writes this shard's statistics instead of a model.
int RunCalibrateShard(int argc, char** argv) { return RunImport(argc, argv, true, false, true); }
int RunAnalyze(int argc, char** argv) { return RunImport(argc, argv, true, true); }
