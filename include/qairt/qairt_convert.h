/*
 * qairt_convert.h - the whole conversion in one call, as `qairt convert` runs it.
 *
 * qairt_convert_graph takes an imported graph through the product's pipeline:
 *
 *   legalize for the target -> quantization overrides -> kernel check ->
 *   rewrites -> calibration (or mixed precision) -> target-specific
 *   processing -> outputs (.qairt container, Q-DQ ONNX, encodings, quantizer
 *   log) -> accuracy of the result on the evaluation samples.
 *
 * qairt_convert_file imports the model first (ONNX or TFLite by extension)
 * with the converter's import defaults. The CLI, the Python binding and any
 * embedder call this; the same options give byte-identical outputs.
 *
 * Errors. The call fails (returns a status, *out_result stays NULL, the graph
 * and every output path are untouched) only for bad arguments, bad options or
 * memory exhaustion. Everything that depends on the model or the data (import,
 * overrides, a rewrite, calibration, processing errors, writing an output) is
 * reported in the result: qairt_convert_result_error_count() > 0 then means
 * the conversion failed, and no output except the quantizer log (written even
 * on failure: it is how to find out why) exists. Outputs are all or none.
 *
 * Same conventions as qairt.h. A result is immutable and may be read from
 * several threads; its strings and sub-reports are borrowed until it is
 * destroyed. Since ABI 1.7.
 */
#ifndef QAIRT_QAIRT_CONVERT_H_
#define QAIRT_QAIRT_CONVERT_H_

#include "qairt/qairt.h"
#include "qairt/qairt_analyze.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_encodings.h"
#include "qairt/qairt_import.h"
#include "qairt/qairt_process.h"
#include "qairt/qairt_target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_convert_result_t qairt_convert_result_t;

/* Skip the rewrites (default: applied; qairt_rewrite_count lists them). */
#define QAIRT_CONVERT_NO_REWRITES 1u
/* Check each rewrite by running the model on the input_list (or synthetic
 * samples) before and after it (default: not run; the rewrites are exact by
 * construction and proven by their tests). */
#define QAIRT_CONVERT_VERIFY_REWRITES 2u
/* Graph inputs/outputs take the quantized datatype (QAIRT_PROCESS_QUANTIZED_IO). */
#define QAIRT_CONVERT_QUANTIZED_IO 4u
/* Since 1.8: the checks of `qairt convert --dry_run` only — legalization,
 * the kernel check (one "no-kernel" diagnostic per op type the target
 * lacks, its `field` the op type) and the quantization overrides, each run
 * and reported even when another fails; the graph keeps the legalization
 * and the overrides. Nothing is calibrated, processed or written: output and
 * log paths must be NULL. `target` may be NULL (only the overrides are
 * checked). The summary holds each check's lines. */
#define QAIRT_CONVERT_CHECK_ONLY 8u
/* Since 1.8: QAIRT_PROCESS_NO_BIAS_AWARE_WEIGHT_SCALES for processing. */
#define QAIRT_CONVERT_NO_BIAS_AWARE_WEIGHT_SCALES 16u
/* Since 1.10: the Q-DQ ONNX model keeps initializers of 1 KiB and more in
 * "<qdq_onnx_path>.data" (ONNX external data; always so above 1 GiB of
 * static tensors). */
#define QAIRT_CONVERT_QDQ_EXTERNAL_DATA 32u
/* Since 1.11: without input_list or calibration_stats, the static float
 * tensors (weights) that have no encoding get one computed from their values
 * with `calibration`'s weight options (qairt_calibrate_params); activations
 * keep the model's and the overrides' encodings, the rest runs in float.
 * The CLI's --float_fallback ("missing quantization parameters are computed
 * where possible", as the vendor converter documents it). */
#define QAIRT_CONVERT_PARAMS_FROM_VALUES 64u
/* Since 1.14: keep every rewrite that fires. By default, when calibrating
 * from input_list, each rewrite on by default is kept only where the
 * quantized model scores no worse with it (qairt_rewrite_options.
 * quantized_judge); this flag skips that judgement and its cost. */
#define QAIRT_CONVERT_KEEP_REWRITES 128u
/* Since 1.18: choose the calibration techniques by measurement before
 * calibrating (qairt_choose_calibration on input_list, scored as the target
 * runs the model); the rest of the conversion (mixed precision included)
 * uses the chosen ones, and the artifacts record them. Needs input_list. */
#define QAIRT_CONVERT_AUTO_QUANT 256u
/* Since 1.20: mixed precision in budget mode promotes only, from the
 * calibration as given (qairt_analysis_options.mixed_flags'
 * QAIRT_MIXED_PROMOTIONS_ONLY). By default a budget the promotions miss
 * makes it measure the calibration techniques and search again from the
 * best; with AUTO_QUANT they were measured already and it promotes only. */
#define QAIRT_CONVERT_MIXED_PROMOTIONS_ONLY 512u

typedef struct qairt_convert_options {
  uint32_t struct_size;          /* sizeof(qairt_convert_options) */
  uint32_t flags;                /* QAIRT_CONVERT_* */
  const qairt_target_t* target;  /* required (but with CHECK_ONLY); borrowed for the call */

  /* Target-specific processing (qairt_process_options; 0 = default). */
  uint32_t float_bitwidth;       /* 0 = the target's default, 16 or 32 */
  uint32_t act_bitwidth;         /* 0 = default; 8 or 16 */
  uint32_t weights_bitwidth;     /* 0 = default; 4, 8 or 16 */
  uint32_t bias_bitwidth;        /* 0 = 32; 8 or 32 */
  qairt_quantizer_log_level_t log_level; /* needs quantizer_log_path when not NONE */
  uint32_t num_threads;          /* calibration, rewrites, mixed precision; 0 = all cores, default 1 */
  const char* stop_after;        /* pass name (qairt_process_pipeline); NULL = run all */

  /* Encodings file applied to the graph first (wins over Q-DQ encodings);
   * NULL = none. Its diagnostics go to the result. */
  const char* quantization_overrides;

  /* Calibration. input_list NULL: no calibration (overrides, Q-DQ or
   * defaults only). `calibration` NULL: qairt_calibration_options_init's
   * values; its progress and num_threads fields are ignored (see below). */
  const char* input_list;
  /* Accuracy samples: the processed graph against the float model, after
   * conversion. NULL: no accuracy is measured (no model execution beyond
   * calibration); give input_list itself to measure on those. Until ABI
   * 1.12, NULL meant input_list. */
  const char* eval_input_list;
  const qairt_calibration_options* calibration;
  qairt_mixed_mode_t mixed_mode; /* QAIRT_MIXED_OFF (default) or mixed precision in place of calibration */
  uint32_t reserved;             /* must be 0 */
  double mixed_value;            /* budget in dB or percent */

  /* Rewrites turned off by name (see qairt_rewrite_name). */
  const char* const* disabled_rewrites;
  size_t num_disabled_rewrites;

  /* Outputs; NULL = not written. At least one of output_path and stop_after. */
  const char* output_path;                     /* .qairt container */
  const char* qdq_onnx_path;                   /* Q-DQ ONNX model, options as metadata */
  int64_t qdq_opset;                           /* 0 = automatic, 13 (com.microsoft Q/DQ) or 21 */
  const char* encodings_path;                  /* final encodings */
  qairt_encodings_version_t encodings_version; /* 0 = 2.0.0 */
  uint32_t reserved2;                          /* must be 0 */
  const char* quantizer_log_path;              /* INFO CSV or TRACE text (log_level) */

  /* Progress of the long stages; `phase` is "<stage>: <step>", e.g.
   * "calibration: ranges", "accuracy: compare". NULL = none. */
  qairt_progress_fn progress;
  void* progress_user_data;

  /* Since 1.9: the HTML report (qairt_report.h), NULL = none. Written
   * whenever processing ran, also when it failed (like the quantizer log:
   * it shows why); with evaluation samples it holds per-op accuracy (the
   * comparison then also runs per layer). */
  const char* report_path;

  /* Since 1.10: sharded calibration (qairt_calib.h, "Calibration
   * statistics"). calibration_stats: a merged .stats file to calibrate from
   * instead of input_list's samples (a method that needs a round the file
   * lacks is an error naming the round). stats_output: observe shard
   * shard_index of shard_count (0 = 1) of input_list -- round 2 on the
   * merged round 1 in stats_ranges when set, else round 1 -- on the graph as
   * calibration sees it, write the statistics there and stop before
   * processing (output_path not needed; nothing else is written). */
  const char* calibration_stats;
  const char* stats_output;
  const char* stats_ranges;
  uint32_t shard_index;
  uint32_t shard_count;
} qairt_convert_options;

/* The documented defaults: every field 0/NULL except num_threads = 1. */
QAIRT_API void qairt_convert_options_init(qairt_convert_options* options);

/* Converts `graph` in place (see the top of this file). */
QAIRT_API qairt_status_t* qairt_convert_graph(qairt_graph_t* graph, const qairt_convert_options* options,
                                              qairt_convert_result_t** out_result);

/* Imports `model_path` (.tflite: TFLite, otherwise ONNX) and converts it.
 * `import_options` NULL: the converter's defaults (static shapes required,
 * int64 narrowed to int32); otherwise used as given. An import failure
 * (bad import options included) is a result error with the import report's
 * text. */
QAIRT_API qairt_status_t* qairt_convert_file(const char* model_path, const qairt_import_options* import_options,
                                             const qairt_convert_options* options,
                                             qairt_convert_result_t** out_result);

QAIRT_API void qairt_convert_result_destroy(qairt_convert_result_t* result);

/* What the CLI prints on stdout, in order: overrides and legalization lines,
 * the rewrite summary, the calibration line, the stats summary (when the
 * log level is not TRACE) and the accuracy line. Borrowed. */
QAIRT_API const char* qairt_convert_result_summary(const qairt_convert_result_t* result);
/* Errors, first one first; each starts with its stage ("import: ",
 * "quantization overrides: ", "target: ", "rewrites: ", "calibration: ",
 * "processing: ", "output: "). A converted model has none. Borrowed; NULL if
 * out of range. */
QAIRT_API size_t qairt_convert_result_error_count(const qairt_convert_result_t* result);
QAIRT_API const char* qairt_convert_result_error(const qairt_convert_result_t* result, size_t index);
QAIRT_API size_t qairt_convert_result_warning_count(const qairt_convert_result_t* result);
QAIRT_API const char* qairt_convert_result_warning(const qairt_convert_result_t* result, size_t index);
/* 1.8: every error and warning as diagnostics records (qairt.h), in order:
 * the overrides file's own records (file:line:col, tensor, rule id),
 * processing's (rule id, op, tensor), and one record per message of the
 * other stages with the stage as its code ("import", "rewrites",
 * "calibration", "target", "output", "accuracy", ...). Render them as SARIF
 * for an IDE with qairt_diagnostics_render. Borrowed; NULL only for a NULL
 * result. */
QAIRT_API const qairt_diagnostics_t* qairt_convert_result_diagnostics(const qairt_convert_result_t* result);
/* The quantizer log as written to quantizer_log_path ("" at NONE). Borrowed. */
QAIRT_API const char* qairt_convert_result_log(const qairt_convert_result_t* result);
/* The processing result (NULL when the conversion stopped before
 * processing) and the accuracy report (NULL without evaluation samples or
 * when the comparison failed: then a warning says why). Borrowed. */
QAIRT_API const qairt_process_result_t* qairt_convert_result_process(const qairt_convert_result_t* result);
QAIRT_API const qairt_compare_report_t* qairt_convert_result_accuracy(const qairt_convert_result_t* result);
/* Since ABI 1.16: where the conversion's wall time went, one entry per stage
 * that ran, in the order they ran: "import" (qairt_convert_file only),
 * "legalization", "overrides" (reading and applying the overrides file),
 * "kernels" (the target's kernel checks), "rewrites", "late overrides"
 * (entries naming tensors the rewrites made), "calibration" (or the
 * weights' encodings without samples, or mixed precision), "processing",
 * "outputs", "evaluation", "report"; with check_only, "legalization",
 * "kernels" and "overrides". The name is borrowed (NULL if out of range);
 * seconds are 0 out of range. */
QAIRT_API size_t qairt_convert_result_phase_count(const qairt_convert_result_t* result);
QAIRT_API const char* qairt_convert_result_phase_name(const qairt_convert_result_t* result, size_t index);
QAIRT_API double qairt_convert_result_phase_seconds(const qairt_convert_result_t* result, size_t index);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_CONVERT_H_ */
