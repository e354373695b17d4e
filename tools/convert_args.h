// Options of `qairt convert` beyond import (target processing and outputs),
// parsed by cmd_convert.cpp and used by cmd_import.cpp's convert path.
#pragma once

#include <qairt/qairt.h>
#include <qairt/qairt_analyze.h>
#include <qairt/qairt_target.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace qairt_cli {

struct ProcessArgs {
  std::string target_backend;  // --target_backend HTP|LPAI|CPU|AIC
  std::string target_arch;     // --target_arch v73
  uint32_t float_bitwidth = 0;
  bool float_fallback = false;
  uint32_t act_bitwidth = 0, weights_bitwidth = 0, bias_bitwidth = 0;
  std::string log_path;
  uint32_t log_level = 0;  // qairt_quantizer_log_level
  bool log_level_set = false;
  bool print_pipeline = false;
  std::string stop_after;
  std::string export_encodings;
  uint32_t encodings_format = 0;  // qairt_encodings_version
  std::string export_qdq_onnx;    // --export_qdq_onnx FILE
  int64_t qdq_opset = 0;          // --qdq_opset 13|21 (0: automatic)
  bool qdq_external_data = false;  // --qdq_external_data: weights in <FILE>.data
  std::string calibration_stats;   // --calibration_stats MERGED.stats (convert)
  bool collect_stats = false;      // qairt calibrate: -o is the statistics file
  std::string stats_ranges;        // --ranges MERGED_ROUND1.stats (calibrate)
  uint32_t shard_index = 0, shard_count = 0;  // --shard K/N (calibrate)
  bool quantized_io = false;
  bool bias_aware_weight_scales = true;  // --no_bias_aware_weight_scales turns it off
  bool verbose = false;                  // --verbose: every error, not grouped
  // Options given so far (spelling -> value), to refuse two spellings of one
  // setting that disagree.
  std::vector<std::pair<std::string, std::string>> given;
  // Calibration (--input_list): see include/qairt/qairt_calib.h.
  std::string input_list, eval_input_list;
  uint32_t act_method = 0, param_method = 0;  // qairt_calibration_method
  uint32_t act_schema = 0, param_schema = 1;  // qairt_symmetry
  double percentile = 99.99;
  bool per_channel = false, per_row = false, lpbq = false, adaptive_rounding = false, bias_correction = false,
       wide_fixed_ranges = false, auto_quant = false,
       mixed_promotions_only = false;
  uint32_t block_size = 0, num_threads = 0;  // 0: every core (the C options default to 1)
  bool progress = true;  // --no_progress turns the calibration/accuracy progress off
  std::vector<std::string> float_inputs;
  // Accuracy (include/qairt/qairt_analyze.h): rewrites before calibration
  // (on unless --no_rewrites), mixed precision in place of plain calibration.
  bool rewrites = true;
  bool keep_rewrites = false;    // --keep_rewrites: no judgement of the rewrites on the quantized model
  bool verify_rewrites = false;  // --verify_rewrites: check each rewrite by running the model on samples
  std::vector<std::string> disabled_rewrites;  // --disable_rewrite NAME
  bool list_rewrites = false;
  std::string mixed_precision;  // --mixed_precision off|budget=DB|percent=P
  uint32_t mixed_mode = 0;      // qairt_mixed_mode
  double mixed_value = 0;
  std::string plot_path;        // qairt analyze --plot FILE.svg
  std::string diagnostics_path; // qairt convert --diagnostics FILE (.sarif, .json or text)
  std::string report_path;      // --report FILE.html (convert and analyze)
  // Calibration-only flags given (spellings, in order): named in a warning
  // when no calibration runs.
  std::vector<std::string> calibration_flags;
};

// Which command reads the flags: what it does not use is named on stderr.
enum class FlagUse { kConvert, kDryRun, kAnalyze };

// Names on stderr the given flags that change nothing in this run, so none is
// dropped silently: for a conversion, calibration flags without --input_list
// and a percentile value without the percentile method; for a dry run or
// analyze, every given flag that command does not use (`output_given`: -o).
void WarnUnusedFlags(const ProcessArgs& p, FlagUse use, bool output_given = false);

// Consumes the option at argv[*i] (advancing *i past its values): 1 if it was
// a processing option, 0 if not, -1 after printing a usage error.
int ParseProcessArg(int argc, char** argv, int* i, ProcessArgs* p);

// "htp_v73" from --target_backend/--target_arch ("" when neither was given);
// an unknown backend or arch prints an error and returns "?".
std::string TargetFromBackend(const ProcessArgs& p);

// Converts the imported `graph` for `target` (qairt_convert_graph: legalize,
// `overrides` unless empty, rewrites, calibration, processing, outputs) and
// prints the result, with a line of where the time went (the import took
// `import_seconds`). Returns the exit code.
int ProcessAndWrite(const ProcessArgs& p, qairt_graph_t* graph, const qairt_target_t* target,
                    const std::string& output_path, const std::string& overrides, double import_seconds);

// The calibration options the flags give (`floats` keeps the
// --float_input names the options point to).
qairt_calibration_options CalibrationOptions(const ProcessArgs& p, std::vector<const char*>* floats);

// Prints the registered passes; returns the exit code.
int PrintPipeline();
// Prints the registered rewrites; returns the exit code.
int PrintRewrites();

// An analysis report rendered as text, JSON or SVG.
std::string Render(const qairt_analysis_report_t* r, qairt_analysis_format_t format);
// Applies the rewrites to `graph` (with --verify_rewrites: verified on
// --input_list or synthetic samples); prints the summary, appends the
// detailed report to `log`.
bool RunRewrites(const ProcessArgs& p, qairt_graph_t* graph, const qairt_target_t* target, std::string* log);

// `qairt analyze` (tools/cmd_analyze.cpp): rewrites (unless --no_rewrites) and the per-layer
// sensitivity table of `graph` on --input_list; text or JSON to stdout,
// --plot FILE.svg. Returns the exit code.
// `overrides` (the file the checks applied; "" for none or ignored) is applied
// again after the rewrites.
int AnalyzeAndReport(const ProcessArgs& p, qairt_graph_t* graph, const qairt_target_t* target, bool json,
                     const std::string& overrides);

}  // namespace qairt_cli
