// `qairt convert` options and, without --dry_run, the conversion itself
// (qairt_convert_graph), and `qairt analyze`. Uses only the public C API.
#include <qairt/qairt_analyze.h>
#include <qairt/qairt_calib.h>
#include <qairt/qairt_convert.h>
#include <qairt/qairt_encodings.h>
#include <qairt/qairt_process.h>
#include <qairt/qairt_report.h>
#include <qairt/qairt_target.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cli_util.h"
#include "convert_args.h"

namespace qairt_cli {

namespace {

bool ParseUint(const char* s, uint32_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(s, &end, 10);
  if (errno || !*s || *end || v > 1024) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace

namespace {

// Spellings of one setting: the vendor's alias pairs, and the legacy
// --*_quantizer that sets what --*_quantizer_calibration/_schema set.
struct SameSetting {
  const char* a;
  const char* b;
  bool legacy;  // a and b are different vocabularies: never both
};
constexpr SameSetting kSameSettings[] = {
    {"--act_bitwidth", "--act_bw", false},
    {"--weights_bitwidth", "--weight_bw", false},
    {"--bias_bitwidth", "--bias_bw", false},
    {"--float_bitwidth", "--float_bw", false},
    {"--act_quantizer", "--act_quantizer_calibration", true},
    {"--act_quantizer", "--act_quantizer_schema", true},
    {"--param_quantizer", "--param_quantizer_calibration", true},
    {"--param_quantizer", "--param_quantizer_schema", true},
};

// False (with the message) when `arg value` contradicts an option given before.
bool ConsistentWithGiven(const std::string& arg, const std::string& value, ProcessArgs* p) {
  for (const auto& [spelling, before] : p->given) {
    bool same = spelling == arg, legacy = false;
    for (const SameSetting& s : kSameSettings)
      if ((arg == s.a && spelling == s.b) || (arg == s.b && spelling == s.a)) same = true, legacy = s.legacy;
    if (!same) continue;
    if (legacy) {
      std::fprintf(stderr, "qairt convert: %s and %s both set the quantizer: give the calibration method and "
                   "schema with --*_quantizer_calibration/--*_quantizer_schema, or the legacy %s alone\n",
                   spelling.c_str(), arg.c_str(), spelling.rfind("--act_quantizer", 0) == 0 ? "--act_quantizer" :
                   "--param_quantizer");
      return false;
    }
    if (before != value) {
      std::fprintf(stderr, "qairt convert: %s %s and %s %s set the same thing differently: give one\n",
                   spelling.c_str(), before.c_str(), arg.c_str(), value.c_str());
      return false;
    }
  }
  p->given.emplace_back(arg, value);
  return true;
}

}  // namespace

// Flags that only matter when calibration runs (--input_list).
constexpr const char* kCalibrationOnlyFlags[] = {
    "--act_quantizer_calibration", "--param_quantizer_calibration", "--act_quantizer_schema",
    "--param_quantizer_schema", "--act_quantizer", "--param_quantizer", "--percentile_calibration_value",
    "--use_per_channel_quantization", "--use_per_row_quantization", "--weights_block_size", "--use_lpbq",
    "--adaptive_rounding", "--bias_correction", "--wide_fixed_ranges", "--input_encoding"};

std::string Joined(const std::vector<std::string>& flags) {
  std::string s;
  for (const std::string& f : flags) s += (s.empty() ? "" : ", ") + f;
  return s;
}

void WarnUnusedFlags(const ProcessArgs& p, FlagUse use, bool output_given) {
  const auto& cal = p.calibration_flags;
  if (use != FlagUse::kConvert) {
    const bool analyze = use == FlagUse::kAnalyze;
    struct Given {
      bool given;
      bool analyze_uses;
      const char* flag;
    };
    const Given given[] = {
        {output_given, false, "-o"},
        {!p.input_list.empty(), true, "--input_list"},
        {!p.eval_input_list.empty(), false, "--eval_input_list"},
        {!p.log_path.empty(), false, "--quantizer_log"},
        {p.log_level_set, false, "--quantizer_log_level"},
        {!p.export_encodings.empty(), false, "--export_encodings"},
        {!p.export_qdq_onnx.empty(), false, "--export_qdq_onnx"},
        {p.encodings_format != 0, false, "--encodings_format"},
        {p.qdq_opset != 0, false, "--qdq_opset"},
        {p.qdq_external_data, false, "--qdq_external_data"},
        {!p.calibration_stats.empty(), false, "--calibration_stats"},
        {p.verbose, false, "--verbose"},
        {!p.stop_after.empty(), false, "--stop_after"},
        {!p.mixed_precision.empty(), false, "--mixed_precision"},
        {p.act_bitwidth != 0, true, "--act_bitwidth"},
        {p.weights_bitwidth != 0, true, "--weights_bitwidth"},
        {p.bias_bitwidth != 0, false, "--bias_bitwidth"},
        {p.float_bitwidth != 0, false, "--float_bitwidth"},
        {p.quantized_io, false, "--quantized_io"},
        {!p.bias_aware_weight_scales, false, "--no_bias_aware_weight_scales"},
        {!p.rewrites, true, "--no_rewrites"},
        {p.verify_rewrites, true, "--verify_rewrites"},
        {p.keep_rewrites, false, "--keep_rewrites"},
        {p.auto_quant, false, "--auto_quant"},
        {p.mixed_promotions_only, false, "--mixed_precision_promotions_only"},
        {!p.disabled_rewrites.empty(), true, "--disable_rewrite"},
    };
    std::vector<std::string> unused;
    for (const Given& g : given)
      if (g.given && !(analyze && g.analyze_uses)) unused.emplace_back(g.flag);
    if (!analyze) unused.insert(unused.end(), cal.begin(), cal.end());  // analyze calibrates
    if (!unused.empty())
      std::fprintf(stderr, "note: %s; not used: %s\n",
                   analyze ? "analyze measures sensitivity and writes no model" : "--dry_run imports and checks only",
                   Joined(unused).c_str());
    return;
  }
  // With --float_fallback and no samples, the weights are still encoded from
  // their values: the weight flags are used, the activation ones are not.
  std::vector<std::string> no_effect;
  for (const std::string& f : cal) {
    // Per-row weights also turn MatMuls by constants into FullyConnected
    // ops, whose names an encodings file exported with the flag has.
    if (f == "--use_per_row_quantization") continue;
    const bool weight_flag = f == "--param_quantizer_calibration" || f == "--param_quantizer_schema" ||
                             f == "--param_quantizer" || f == "--use_per_channel_quantization" ||
                             f == "--weights_block_size" || f == "--use_lpbq" ||
                             f == "--percentile_calibration_value";
    if (!(p.float_fallback && weight_flag)) no_effect.push_back(f);
  }
  if (p.input_list.empty() && !no_effect.empty())
    std::fprintf(stderr, "warning: %s %s no effect without --input_list: no calibration runs (the encodings come "
                 "from the model's Q-DQ nodes, --quantization_overrides and processing's defaults%s)\n",
                 Joined(no_effect).c_str(), no_effect.size() == 1 ? "has" : "have",
                 p.float_fallback ? "; --float_fallback computes the weights' from their values" : "");
  const bool percentile_given =
      std::find(cal.begin(), cal.end(), "--percentile_calibration_value") != cal.end();
  if (!p.input_list.empty() && percentile_given && p.act_method != QAIRT_CALIBRATION_PERCENTILE &&
      p.param_method != QAIRT_CALIBRATION_PERCENTILE)
    std::fprintf(stderr, "warning: --percentile_calibration_value has no effect: neither "
                 "--act_quantizer_calibration nor --param_quantizer_calibration is percentile\n");
}

int ParseProcessArg(int argc, char** argv, int* i, ProcessArgs* p) {
  const std::string arg = argv[*i];
  for (const char* flag : kCalibrationOnlyFlags)
    if (arg == flag && std::find(p->calibration_flags.begin(), p->calibration_flags.end(), arg) ==
                           p->calibration_flags.end())
      p->calibration_flags.push_back(arg);
  for (const SameSetting& s : kSameSettings) {
    if (arg != s.a && arg != s.b) continue;
    if (*i + 1 < argc && !ConsistentWithGiven(arg, argv[*i + 1], p)) return -1;
    break;
  }
  auto value = [&]() -> const char* {
    if (*i + 1 >= argc) {
      std::fprintf(stderr, "qairt convert: %s needs an argument\n", arg.c_str());
      return nullptr;
    }
    return argv[++*i];
  };
  auto bitwidth = [&](uint32_t* out, std::initializer_list<uint32_t> allowed) {
    const char* v = value();
    if (!v) return -1;
    uint32_t n = 0;
    bool ok = ParseUint(v, &n);
    bool listed = false;
    for (uint32_t a : allowed) listed = listed || a == n;
    if (!ok || !listed) {
      std::string list;
      for (uint32_t a : allowed) list += (list.empty() ? "" : "|") + std::to_string(a);
      std::fprintf(stderr, "qairt convert: %s %s: must be %s\n", arg.c_str(), v, list.c_str());
      return -1;
    }
    *out = n;
    return 1;
  };
  // Options taking one string.
  const std::pair<const char*, std::string*> strings[] = {
      {"--target_backend", &p->target_backend},   {"--target_arch", &p->target_arch},
      {"--stop_after", &p->stop_after},           {"--quantizer_log", &p->log_path},
      {"--export_encodings", &p->export_encodings}, {"--export_qdq_onnx", &p->export_qdq_onnx},
      {"--input_list", &p->input_list},           {"--eval_input_list", &p->eval_input_list},
      {"--plot", &p->plot_path},                 {"--diagnostics", &p->diagnostics_path},
      {"--report", &p->report_path},             {"--calibration_stats", &p->calibration_stats},
      {"--ranges", &p->stats_ranges},
  };
  for (const auto& [name, dst] : strings) {
    if (arg != name) continue;
    const char* v = value();
    if (!v) return -1;
    *dst = v;
    return 1;
  }
  if (arg == "--float_bitwidth" || arg == "--float_bw") return bitwidth(&p->float_bitwidth, {16, 32});
  if (arg == "--act_bitwidth" || arg == "--act_bw") return bitwidth(&p->act_bitwidth, {8, 16});
  if (arg == "--weights_bitwidth" || arg == "--weight_bw") return bitwidth(&p->weights_bitwidth, {4, 8, 16});
  if (arg == "--bias_bitwidth" || arg == "--bias_bw") return bitwidth(&p->bias_bitwidth, {8, 32});
  if (arg == "--float_fallback" || arg == "--enable_float_fallback") {
    p->float_fallback = true;
    return 1;
  }
  if (arg == "--quantized_io") {
    p->quantized_io = true;
    return 1;
  }
  if (arg == "--verbose") {
    p->verbose = true;
    return 1;
  }
  if (arg == "--shard") {
    const char* v = value();
    if (!v) return -1;
    unsigned k = 0, n = 0;
    char extra = 0;
    if (std::sscanf(v, "%u/%u%c", &k, &n, &extra) != 2 || n == 0 || k >= n || n > (1u << 20)) {
      std::fprintf(stderr, "qairt calibrate: --shard %s: must be K/N with 0 <= K < N (shard K of N)\n", v);
      return -1;
    }
    p->shard_index = k;
    p->shard_count = n;
    return 1;
  }
  if (arg == "--qdq_external_data") {
    p->qdq_external_data = true;
    return 1;
  }
  if (arg == "--no_bias_aware_weight_scales") {
    p->bias_aware_weight_scales = false;
    return 1;
  }
  if (arg == "--print_pipeline") {
    p->print_pipeline = true;
    return 1;
  }
  if (arg == "--quantizer_log_level") {
    const char* v = value();
    if (!v) return -1;
    const std::string l = v;
    if (l == "NONE") p->log_level = QAIRT_QUANTIZER_LOG_NONE;
    else if (l == "INFO") p->log_level = QAIRT_QUANTIZER_LOG_INFO;
    else if (l == "TRACE") p->log_level = QAIRT_QUANTIZER_LOG_TRACE;
    else {
      std::fprintf(stderr, "qairt convert: --quantizer_log_level %s: must be NONE, INFO or TRACE\n", v);
      return -1;
    }
    p->log_level_set = true;
    return 1;
  }
  if (arg == "--encodings_format") {
    const char* v = value();
    if (!v) return -1;
    const std::string f = v;
    if (f == "2.0.0") p->encodings_format = QAIRT_ENCODINGS_VERSION_2_0_0;
    else if (f == "1.0.0") p->encodings_format = QAIRT_ENCODINGS_VERSION_1_0_0;
    else if (f == "0.6.1") p->encodings_format = QAIRT_ENCODINGS_VERSION_0_6_1;
    else {
      std::fprintf(stderr, "qairt convert: --encodings_format %s: must be 2.0.0, 1.0.0 or 0.6.1\n", v);
      return -1;
    }
    return 1;
  }
  if (arg == "--qdq_opset") {
    const char* v = value();
    if (!v) return -1;
    const std::string o = v;
    if (o != "13" && o != "21") {
      std::fprintf(stderr, "qairt convert: --qdq_opset %s: must be 13 (com.microsoft Q/DQ) or 21\n", v);
      return -1;
    }
    p->qdq_opset = o == "13" ? 13 : 21;
    return 1;
  }
  auto method = [&](uint32_t* out) {
    const char* v = value();
    if (!v) return -1;
    const std::string m = v;
    if (m == "seqmse" && arg == "--param_quantizer_calibration") {
      *out = QAIRT_CALIBRATION_SEQMSE;
      return 1;
    }
    if (m == "seqmse") {
      std::fprintf(stderr, "qairt convert: %s seqmse: seqmse chooses weight encodings only; use it with "
                           "--param_quantizer_calibration\n", arg.c_str());
      return -1;
    }
    if (m == "min-max" || m == "minmax") *out = QAIRT_CALIBRATION_MIN_MAX;
    else if (m == "sqnr") *out = QAIRT_CALIBRATION_SQNR;
    else if (m == "mse") *out = QAIRT_CALIBRATION_MSE;
    else if (m == "percentile") *out = QAIRT_CALIBRATION_PERCENTILE;
    else {
      std::fprintf(stderr, "qairt convert: %s %s: must be min-max, sqnr, mse or percentile%s\n", arg.c_str(), v,
                   arg == "--param_quantizer_calibration" ? " (or seqmse)" : "");
      return -1;
    }
    return 1;
  };
  auto schema = [&](uint32_t* out) {
    const char* v = value();
    if (!v) return -1;
    const std::string m = v;
    if (m == "asymmetric") *out = 0;
    else if (m == "symmetric") *out = 1;
    else if (m == "unsignedsymmetric") *out = 3;
    else {
      std::fprintf(stderr, "qairt convert: %s %s: must be asymmetric, symmetric or unsignedsymmetric\n", arg.c_str(), v);
      return -1;
    }
    return 1;
  };
  // Legacy --act_quantizer / --param_quantizer: tf (min-max, asymmetric),
  // enhanced (sqnr, asymmetric), symmetric (min-max, symmetric).
  auto legacy = [&](uint32_t* m, uint32_t* sch) {
    const char* v = value();
    if (!v) return -1;
    const std::string q = v;
    if (q == "tf") *m = QAIRT_CALIBRATION_MIN_MAX, *sch = 0;
    else if (q == "enhanced") *m = QAIRT_CALIBRATION_SQNR, *sch = 0;
    else if (q == "symmetric") *m = QAIRT_CALIBRATION_MIN_MAX, *sch = 1;
    else if (q == "adjusted") {
      std::fprintf(stderr, "qairt convert: %s adjusted (the vendor's deprecated 8-bit mode for denoise models) has no "
                           "published algorithm, so qairt cannot reproduce it: use --%s_quantizer_calibration mse or "
                           "percentile\n", arg.c_str(), arg == "--act_quantizer" ? "act" : "param");
      return -1;
    } else {
      std::fprintf(stderr, "qairt convert: %s %s: must be tf, enhanced or symmetric\n", arg.c_str(), v);
      return -1;
    }
    return 1;
  };
  if (arg == "--act_quantizer_calibration") return method(&p->act_method);
  if (arg == "--param_quantizer_calibration") return method(&p->param_method);
  if (arg == "--act_quantizer_schema") return schema(&p->act_schema);
  if (arg == "--param_quantizer_schema") return schema(&p->param_schema);
  if (arg == "--act_quantizer") return legacy(&p->act_method, &p->act_schema);
  if (arg == "--param_quantizer") return legacy(&p->param_method, &p->param_schema);
  if (arg == "--percentile_calibration_value") {
    const char* v = value();
    if (!v) return -1;
    char* end = nullptr;
    p->percentile = std::strtod(v, &end);
    if (*end || !(p->percentile >= 50 && p->percentile <= 100)) {
      std::fprintf(stderr, "qairt convert: --percentile_calibration_value %s: must be in [50, 100]\n", v);
      return -1;
    }
    return 1;
  }
  if (arg == "--no_progress") return p->progress = false, 1;
  if (arg == "--no_rewrites") return p->rewrites = false, 1;
  if (arg == "--verify_rewrites") return p->verify_rewrites = true, 1;
  if (arg == "--keep_rewrites") return p->keep_rewrites = true, 1;
  if (arg == "--list_rewrites") return p->list_rewrites = true, 1;
  if (arg == "--disable_rewrite") {
    const char* v = value();
    if (!v) return -1;
    bool known = false;
    for (size_t k = 0; k < qairt_rewrite_count(); ++k) known = known || std::strcmp(qairt_rewrite_name(k), v) == 0;
    if (!known) {
      std::fprintf(stderr, "qairt convert: --disable_rewrite %s: unknown rewrite (--list_rewrites lists them)\n", v);
      return -1;
    }
    p->disabled_rewrites.push_back(v);
    return 1;
  }
  if (arg == "--mixed_precision") {
    const char* v = value();
    if (!v) return -1;
    const std::string m = v;
    char* end = nullptr;
    auto number = [&](size_t from, double* out) {
      *out = std::strtod(m.c_str() + from, &end);
      return end && *end == '\0' && end != m.c_str() + from && std::isfinite(*out);
    };
    if (m == "off") {
      p->mixed_mode = QAIRT_MIXED_OFF;
    } else if (m.rfind("budget=", 0) == 0 && number(7, &p->mixed_value)) {
      p->mixed_mode = QAIRT_MIXED_BUDGET;
    } else if (m.rfind("percent=", 0) == 0 && number(8, &p->mixed_value) && p->mixed_value >= 0 &&
               p->mixed_value <= 100) {
      p->mixed_mode = QAIRT_MIXED_PERCENT;
    } else {
      std::fprintf(stderr, "qairt convert: --mixed_precision %s: must be off, budget=<dB> or percent=<0..100>\n", v);
      return -1;
    }
    p->mixed_precision = m;
    return 1;
  }
  if (arg == "--use_per_channel_quantization") return p->per_channel = true, 1;
  if (arg == "--use_per_row_quantization") return p->per_row = true, 1;
  if (arg == "--use_lpbq") return p->lpbq = true, 1;
  if (arg == "--adaptive_rounding") return p->adaptive_rounding = true, 1;
  if (arg == "--bias_correction") return p->bias_correction = true, 1;
  if (arg == "--wide_fixed_ranges") return p->wide_fixed_ranges = true, 1;
  if (arg == "--auto_quant") return p->auto_quant = true, 1;
  if (arg == "--mixed_precision_promotions_only") return p->mixed_promotions_only = true, 1;
  if (arg == "--weights_block_size") {
    const char* v = value();
    if (!v) return -1;
    if (!ParseUint(v, &p->block_size) || p->block_size < 2) {
      std::fprintf(stderr, "qairt convert: --weights_block_size %s: must be an integer >= 2\n", v);
      return -1;
    }
    return 1;
  }
  if (arg == "--num_threads") {
    const char* v = value();
    if (!v) return -1;
    if (!ParseUint(v, &p->num_threads)) {
      std::fprintf(stderr, "qairt convert: --num_threads %s: not a number\n", v);
      return -1;
    }
    return 1;
  }
  if (arg == "--input_encoding") {
    if (*i + 2 >= argc) {
      std::fprintf(stderr, "qairt convert: --input_encoding needs NAME and ENCODING (only 'other' is supported)\n");
      return -1;
    }
    const std::string name = argv[*i + 1], kind = argv[*i + 2];
    if (kind != "other") {
      std::fprintf(stderr, "qairt convert: --input_encoding %s %s: only 'other' (leave the input unquantized) is "
                           "supported\n", name.c_str(), kind.c_str());
      return -1;
    }
    p->float_inputs.push_back(name);
    *i += 2;
    return 1;
  }
  return 0;
}

std::string TargetFromBackend(const ProcessArgs& p) {
  if (p.target_backend.empty()) {
    if (!p.target_arch.empty()) {
      std::fprintf(stderr, "qairt convert: --target_arch needs --target_backend\n");
      return "?";
    }
    return {};
  }
  std::string b;
  for (char c : p.target_backend) b += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  std::string arch = p.target_arch;
  for (char& c : arch) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (!arch.empty() && arch[0] != 'v') arch = "v" + arch;
  if (b == "HTP") return "htp_" + (arch.empty() ? std::string("v73") : arch);
  if (b == "LPAI") return "lpai_" + (arch.empty() ? std::string("v6") : arch);
  if (b == "CPU") return "cpu";
  if (b == "AIC") return "aic100";
  std::fprintf(stderr, "qairt convert: --target_backend %s: must be HTP, LPAI, CPU or AIC\n", p.target_backend.c_str());
  return "?";
}

int PrintPipeline() {
  size_t len = 0;
  qairt_status_free(qairt_process_pipeline(nullptr, 0, &len));
  std::string text(len + 1, '\0');
  qairt_status_free(qairt_process_pipeline(text.data(), text.size(), &len));
  text.resize(len);
  std::fputs(text.c_str(), stdout);
  return 0;
}

std::string Render(const qairt_analysis_report_t* r, qairt_analysis_format_t format) {
  size_t len = 0;
  qairt_status_free(qairt_analysis_report_render(r, format, nullptr, 0, &len));
  std::string text(len + 1, '\0');
  qairt_status_free(qairt_analysis_report_render(r, format, text.data(), text.size(), &len));
  text.resize(len);
  return text;
}

bool RunRewrites(const ProcessArgs& p, qairt_graph_t* graph, const qairt_target_t* target, std::string* log) {
  qairt_rewrite_options ro;
  qairt_rewrite_options_init(&ro);
  ro.target = target;
  ro.input_list = p.input_list.empty() ? nullptr : p.input_list.c_str();
  std::vector<const char*> disabled;
  for (const auto& d : p.disabled_rewrites) disabled.push_back(d.c_str());
  ro.disabled = disabled.data();
  ro.num_disabled = disabled.size();
  // Per-row weights need FullyConnected on HTP (its MatMul takes per-tensor
  // weights only): projections by static weights become FullyConnected.
  const char* const per_row_rewrites[] = {"matmul-to-fully-connected"};
  if (p.per_row) {
    ro.enabled = per_row_rewrites;
    ro.num_enabled = 1;
  }
  ro.num_threads = p.num_threads;
  // The rewrites are exact by construction: running the model to check them
  // is work the user asks for, not a hidden cost of every convert.
  if (!p.verify_rewrites) ro.flags |= QAIRT_REWRITE_NO_VERIFY;
  qairt_analysis_report_t* rr = nullptr;
  if (qairt_status_t* s = qairt_rewrite_graph(graph, &ro, &rr)) {
    std::fprintf(stderr, "qairt convert: rewrites: %s\n", qairt_status_message(s));
    qairt_status_free(s);
    return false;
  }
  std::fputs(Render(rr, QAIRT_ANALYSIS_TEXT).c_str(), stdout);
  for (size_t i = 0; i < qairt_analysis_report_warning_count(rr); ++i)
    std::fprintf(stderr, "warning: %s\n", qairt_analysis_report_warning(rr, i));
  *log += "======== REWRITES ========\n" + Render(rr, QAIRT_ANALYSIS_TEXT_DETAILED);
  qairt_analysis_report_destroy(rr);
  return true;
}

qairt_calibration_options CalibrationOptions(const ProcessArgs& p, std::vector<const char*>* floats) {
  qairt_calibration_options c;
  qairt_calibration_options_init(&c);
  c.act_method = p.act_method;
  c.param_method = p.param_method;
  c.act_schema = p.act_schema;
  c.param_schema = p.param_schema;
  c.act_bitwidth = p.act_bitwidth ? p.act_bitwidth : 8;
  c.weights_bitwidth = p.weights_bitwidth ? p.weights_bitwidth : 8;
  c.percentile = p.percentile;
  c.block_size = p.block_size;
  c.num_threads = p.num_threads;
  c.flags = (p.per_channel ? QAIRT_CALIBRATION_PER_CHANNEL : 0u) | (p.per_row ? QAIRT_CALIBRATION_PER_ROW : 0u) |
            (p.lpbq ? QAIRT_CALIBRATION_LPBQ : 0u) | (p.adaptive_rounding ? QAIRT_CALIBRATION_ADAPTIVE_ROUNDING : 0u) |
            (p.bias_correction ? QAIRT_CALIBRATION_BIAS_CORRECTION : 0u) |
            (p.wide_fixed_ranges ? QAIRT_CALIBRATION_WIDE_FIXED_RANGES : 0u);
  for (const auto& f : p.float_inputs) floats->push_back(f.c_str());
  c.num_float_inputs = floats->size();
  c.float_inputs = floats->data();
  return c;
}

int PrintRewrites() {
  for (size_t k = 0; k < qairt_rewrite_count(); ++k)
    std::printf("%-26s %s\n", qairt_rewrite_name(k), qairt_rewrite_description(k));
  return 0;
}

// Errors that differ only in the name after " for " ("No accuracy preserving
// kernels found for <op>", one per op of a model) are one line with a count.
// Errors that occur once come first: a repeated error is usually the
// consequence of a cause reported once, with its fix (the FP16 audit's
// "calibrate them (--input_list)").
static std::string GroupedErrors(const std::vector<std::string>& errors) {
  struct Group {
    std::string first;
    std::vector<std::string> names;
  };
  std::vector<std::pair<std::string, Group>> groups;  // key -> group, in order of first occurrence
  for (const std::string& e : errors) {
    const size_t at = e.rfind(" for ");
    const bool named = at != std::string::npos && e.find(' ', at + 5) == std::string::npos;
    const std::string key = named ? e.substr(0, at) : e;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {e, {}}});
      it = groups.end() - 1;
    }
    if (named) it->second.names.push_back(e.substr(at + 5));
  }
  std::stable_partition(groups.begin(), groups.end(), [](const auto& g) { return g.second.names.size() <= 1; });
  std::string out;
  for (const auto& [key, g] : groups) {
    out += "  error: " + g.first;
    if (g.names.size() > 1) {
      constexpr size_t kShown = 5;
      out += " (" + std::to_string(g.names.size() - 1) + " more alike:";
      for (size_t i = 1; i < g.names.size() && i <= kShown; ++i) out += " " + g.names[i];
      if (g.names.size() - 1 > kShown) out += " ...";
      out += ")";
    }
    out += "\n";
  }
  return out;
}

// "time: import 0.06 s, overrides 0.21 s, ... (0.70 s in all)": the stages
// that took 5 ms or more, in the order they ran, and the sum of all.
std::string TimeLine(double import_seconds, const qairt_convert_result_t* r) {
  std::string line = "time:";
  double total = 0;
  auto add = [&](const char* name, double seconds) {
    total += seconds;
    if (seconds < 0.005) return;
    char item[96];
    std::snprintf(item, sizeof item, "%s %s %.2f s", line.size() > 5 ? "," : "", name, seconds);
    line += item;
  };
  add("import", import_seconds);
  for (size_t i = 0; i < qairt_convert_result_phase_count(r); ++i)
    add(qairt_convert_result_phase_name(r, i), qairt_convert_result_phase_seconds(r, i));
  char sum[48];
  std::snprintf(sum, sizeof sum, " (%.2f s in all)\n", total);
  return line + sum;
}

int ProcessAndWrite(const ProcessArgs& p, qairt_graph_t* graph, const qairt_target_t* target,
                    const std::string& output_path, const std::string& overrides, double import_seconds) {
  // The library checks the options too; here they are named as flags.
  if (output_path.empty() && p.stop_after.empty()) {
    std::fprintf(stderr, p.collect_stats ? "qairt calibrate: -o OUT.stats is required\n"
                                         : "qairt convert: -o OUT.qairt is required (or --dry_run)\n");
    return 2;
  }
  if (p.collect_stats && p.input_list.empty()) {
    std::fprintf(stderr, "qairt calibrate: --input_list LIST is required (the samples to observe)\n");
    return 2;
  }
  if (!p.collect_stats && (p.shard_count || !p.stats_ranges.empty())) {
    std::fprintf(stderr, "qairt convert: --shard and --ranges are options of qairt calibrate\n");
    return 2;
  }
  if (!p.calibration_stats.empty() && !p.input_list.empty()) {
    std::fprintf(stderr, "qairt convert: --calibration_stats replaces --input_list's samples: give one of them "
                         "(--eval_input_list still measures accuracy)\n");
    return 2;
  }
  if (!p.log_path.empty() && !p.log_level_set) {
    std::fprintf(stderr, "qairt convert: --quantizer_log needs --quantizer_log_level INFO|TRACE\n");
    return 2;
  }
  if (p.log_level != QAIRT_QUANTIZER_LOG_NONE && p.log_path.empty()) {
    std::fprintf(stderr, "qairt convert: --quantizer_log_level %s needs --quantizer_log FILE\n",
                 p.log_level == QAIRT_QUANTIZER_LOG_INFO ? "INFO" : "TRACE");
    return 2;
  }
  if (!p.plot_path.empty()) {
    std::fprintf(stderr, "qairt convert: --plot is an option of qairt analyze\n");
    return 2;
  }
  if (p.mixed_mode != QAIRT_MIXED_OFF && p.input_list.empty()) {
    std::fprintf(stderr, "qairt convert: --mixed_precision needs --input_list (the samples it measures on)\n");
    return 2;
  }
  if (p.mixed_promotions_only && p.mixed_mode != QAIRT_MIXED_BUDGET) {
    std::fprintf(stderr, "qairt convert: --mixed_precision_promotions_only applies to --mixed_precision budget=DB\n");
    return 2;
  }
  if (p.auto_quant && p.input_list.empty()) {
    std::fprintf(stderr, "qairt convert: --auto_quant needs --input_list (the samples it measures on)\n");
    return 2;
  }
  WarnUnusedFlags(p, FlagUse::kConvert);
  auto or_null = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
  std::vector<const char*> floats, disabled;
  const qairt_calibration_options c = CalibrationOptions(p, &floats);
  for (const auto& d : p.disabled_rewrites) disabled.push_back(d.c_str());
  qairt_convert_options o;
  qairt_convert_options_init(&o);
  o.target = target;
  o.flags = (p.rewrites ? 0u : QAIRT_CONVERT_NO_REWRITES) | (p.verify_rewrites ? QAIRT_CONVERT_VERIFY_REWRITES : 0u) |
            (p.keep_rewrites ? QAIRT_CONVERT_KEEP_REWRITES : 0u) | (p.auto_quant ? QAIRT_CONVERT_AUTO_QUANT : 0u) |
            (p.quantized_io ? QAIRT_CONVERT_QUANTIZED_IO : 0u) |
            (p.mixed_promotions_only ? QAIRT_CONVERT_MIXED_PROMOTIONS_ONLY : 0u) |
            (p.bias_aware_weight_scales ? 0u : QAIRT_CONVERT_NO_BIAS_AWARE_WEIGHT_SCALES);
  o.float_bitwidth = p.float_bitwidth;
  o.act_bitwidth = p.act_bitwidth;
  o.weights_bitwidth = p.weights_bitwidth;
  o.bias_bitwidth = p.bias_bitwidth;
  o.log_level = p.log_level;
  o.num_threads = p.num_threads;
  o.stop_after = or_null(p.stop_after);
  o.quantization_overrides = or_null(overrides);
  o.input_list = or_null(p.input_list);
  o.eval_input_list = or_null(p.eval_input_list);
  o.calibration = &c;
  o.mixed_mode = p.mixed_mode;
  o.mixed_value = p.mixed_value;
  o.disabled_rewrites = disabled.data();
  o.num_disabled_rewrites = disabled.size();
  o.output_path = or_null(output_path);
  o.qdq_onnx_path = or_null(p.export_qdq_onnx);
  o.qdq_opset = p.qdq_opset;
  if (p.qdq_external_data) o.flags |= QAIRT_CONVERT_QDQ_EXTERNAL_DATA;
  if (p.float_fallback) o.flags |= QAIRT_CONVERT_PARAMS_FROM_VALUES;
  o.encodings_path = or_null(p.export_encodings);
  o.encodings_version = p.encodings_format;
  o.quantizer_log_path = or_null(p.log_path);
  o.report_path = or_null(p.report_path);
  o.calibration_stats = or_null(p.calibration_stats);
  if (p.collect_stats) {
    o.output_path = nullptr;
    o.stats_output = output_path.c_str();
    o.stats_ranges = or_null(p.stats_ranges);
    o.shard_index = p.shard_index;
    o.shard_count = p.shard_count;
  }
  qairt_convert_result_t* r = nullptr;
  qairt_status_t* s = nullptr;
  {
    Progress bar(nullptr, p.progress);
    o.progress = Progress::Callback;
    o.progress_user_data = &bar;
    s = qairt_convert_graph(graph, &o, &r);
  }
  if (s) {
    std::fprintf(stderr, "qairt convert: %s\n", qairt_status_message(s));
    qairt_status_free(s);
    return 2;
  }
  // The cause first: errors, then warnings, then what was done.
  const size_t errors = qairt_convert_result_error_count(r);
  if (errors) {
    std::vector<std::string> list;
    for (size_t i = 0; i < errors; ++i) list.push_back(qairt_convert_result_error(r, i));
    std::fprintf(stderr, "qairt convert: failed with %zu error(s):\n", errors);
    if (p.verbose) {
      for (const std::string& e : list) std::fprintf(stderr, "  error: %s\n", e.c_str());
    } else {
      const std::string grouped = GroupedErrors(list);
      std::fputs(grouped.c_str(), stderr);
      if (static_cast<size_t>(std::count(grouped.begin(), grouped.end(), '\n')) < list.size())
        std::fputs("(alike errors grouped; --verbose lists each)\n", stderr);
    }
  }
  for (size_t i = 0; i < qairt_convert_result_warning_count(r); ++i)
    std::fprintf(stderr, "warning: %s\n", qairt_convert_result_warning(r, i));
  std::fputs(qairt_convert_result_summary(r), stdout);
  if (!p.report_path.empty() && qairt_convert_result_process(r) && !errors)
    std::printf("report: %s\n", p.report_path.c_str());
  std::fputs(TimeLine(import_seconds, r).c_str(), stdout);
  const bool diagnostics_written = p.diagnostics_path.empty() || WriteDiagnostics(p.diagnostics_path, r);
  qairt_convert_result_destroy(r);
  return errors || !diagnostics_written ? 1 : 0;
}

}  // namespace qairt_cli
