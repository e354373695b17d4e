/*
 * qairt_analyze.h - accuracy beyond plain min-max in the qairt C ABI:
 * quantization-friendly graph rewrites, per-layer sensitivity analysis and
 * automatic mixed precision.
 *
 * Rewrites run on a float graph before calibration: decomposed LayerNorm /
 * RmsNorm, erf-Gelu and x*relu6(x+3)/6 are fused into single ops, constant
 * per-channel Mul/Add/Sub/Div and Batchnorm after a convolution or
 * FullyConnected are folded into its weights. Each rewrite is verified in the
 * executor against the original graph (output cosine >= min_cosine on the
 * samples) and undone with a warning when it does not hold.
 *
 * Sensitivity: the float graph is calibrated at a base precision (the
 * calibration options, e.g. W8A8) and at a high one (e.g. W16A16); for every
 * unit (an op's output activations with its weights, or a graph input) the
 * report gives the output SQNR when only that unit is quantized, and when
 * everything is at the base precision except that unit.
 *
 * Mixed precision calibrates a graph in place choosing, per unit, the base
 * or the high encodings so that the output SQNR meets a budget (fewest units
 * promoted) or the given percentage of the most useful units is promoted.
 * The result is ordinary encodings: target processing and every export work
 * on it unchanged.
 *
 * Threads: rewriting and mixed precision mutate their graph; reports are
 * immutable. Same conventions as qairt.h. Since ABI 1.5.
 */
#ifndef QAIRT_QAIRT_ANALYZE_H_
#define QAIRT_QAIRT_ANALYZE_H_

#include "qairt/qairt.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_analysis_report_t qairt_analysis_report_t; /* immutable, thread-safe */

/* ---- rewrites --------------------------------------------------------------- */

typedef struct qairt_rewrite_options {
  uint32_t struct_size; /* sizeof(qairt_rewrite_options) */
  uint32_t num_threads; /* 0 = all cores; results never depend on it */
  const char* input_list;       /* verification samples; NULL: 4 synthetic samples (standard normal floats) */
  const char* const* disabled;  /* names of rewrites not to run (qairt_rewrite_name) */
  size_t num_disabled;
  double min_cosine; /* per output over all samples; default 0.999999 */
  /* Optional: rewrites that would create an op this target has no kernels
   * for (e.g. RmsNorm on HTP v73) are skipped and reported. */
  const qairt_target_t* target;
  /* Opt-in rewrites to run as well (qairt_rewrite_on_by_default() == 0). */
  const char* const* enabled;
  size_t num_enabled;
  /* Since ABI 1.6: QAIRT_REWRITE_* (0 for callers of 1.5: verified). */
  uint32_t flags;
  /* Since ABI 1.14, with input_list: judge each rewrite on the quantized
   * model. The graph without and with a rewrite that fired is calibrated with
   * these options on (at most 4 of) the samples, processed for `target` when
   * set, and simulated; a rewrite on by default is kept only if the output
   * SQNR with it is at most 0.1 dB below the SQNR without it (items:
   * quantized_without_db / quantized_with_db / kept_off). Rewrites in
   * `enabled` are kept as asked. NULL: not judged. */
  const struct qairt_calibration_options* quantized_judge;
} qairt_rewrite_options;

/* qairt_rewrite_options.flags: apply the rewrites without running the model
 * (each is exact by construction and by its unit tests); input_list and
 * min_cosine are then unused. qairt convert's default (--verify_rewrites
 * verifies). */
#define QAIRT_REWRITE_NO_VERIFY 1u

QAIRT_API void qairt_rewrite_options_init(qairt_rewrite_options* options);
/* The registered rewrites, in the order they run. NULL when out of range. */
QAIRT_API size_t qairt_rewrite_count(void);
QAIRT_API const char* qairt_rewrite_name(size_t index);
QAIRT_API const char* qairt_rewrite_description(size_t index);
/* 1 when the rewrite runs unless disabled, 0 when it runs only if enabled. */
QAIRT_API int qairt_rewrite_on_by_default(size_t index);
/* Rewrites `graph` in place. A rewrite that fails verification is undone and
 * reported (item rolled_back, a warning); an error (bad input_list, unknown
 * rewrite name) leaves the graph unchanged. */
QAIRT_API qairt_status_t* qairt_rewrite_graph(qairt_graph_t* graph, const qairt_rewrite_options* options,
                                              qairt_analysis_report_t** out_report);

/* ---- sensitivity and mixed precision ----------------------------------------- */

typedef uint32_t qairt_mixed_mode_t;
enum qairt_mixed_mode {
  QAIRT_MIXED_OFF = 0,
  QAIRT_MIXED_BUDGET = 1, /* value: output SQNR budget in dB */
  QAIRT_MIXED_PERCENT = 2 /* value: percentage of units promoted */
};

typedef struct qairt_analysis_options {
  uint32_t struct_size; /* sizeof(qairt_analysis_options) */
  uint32_t num_threads; /* 0 = all cores; results never depend on it */
  /* Base precision and calibration methods; NULL: qairt_calibration_options_init's W8A8 min-max. */
  const qairt_calibration_options* calibration;
  uint32_t high_act_bitwidth;     /* 8 | 16; default 16 */
  uint32_t high_weights_bitwidth; /* 8 | 16; default 16 */
  /* Optional: the high precision is limited to what the target has kernels
   * for (no 16-bit activations: 8; no A16W16 kernels: 8-bit weights). */
  const qairt_target_t* target;
  qairt_mixed_mode_t mixed_mode; /* qairt_mixed_precision only */
  uint32_t reserved;
  double mixed_value;
  /* since 1.11. shard_count > 1 splits the costly step over processes or
   * hosts; 0 or 1: no split.
   *  - qairt_analyze_sensitivity evaluates only the units u with
   *    u % shard_count == shard_index (the report lists the others with NaN
   *    scores).
   *  - qairt_mixed_precision computes only the gains of that share of the
   *    candidates (one evaluation each, the step that ranks them) and returns
   *    a QAIRT_ANALYSIS_MIXED_GAINS report; the graph is not modified.
   * qairt_analysis_report_merge joins the shards' reports (passed between
   * processes as their QAIRT_ANALYSIS_JSON text) into the unsharded one. */
  uint32_t shard_index;
  uint32_t shard_count;
  /* since 1.11; qairt_mixed_precision: the merged QAIRT_ANALYSIS_MIXED_GAINS
   * report of this same search, used instead of computing the gains (the
   * choice is then the unsharded one). Gains of another model, samples or
   * precision are refused. NULL: computed here. */
  const qairt_analysis_report_t* mixed_gains;
  /* since 1.20; qairt_mixed_precision in budget mode: QAIRT_MIXED_* flags.
   * By default, when promotions up to the cap (20% of the layers) miss the
   * budget, the calibration techniques qairt_choose_calibration measures
   * (bias correction, the weight searches, activation ranges by error; none
   * costs anything when the model runs) are measured and the search runs
   * again from the best of them, keeping the better result (the report's
   * text and JSON list the measurement). QAIRT_MIXED_PROMOTIONS_ONLY keeps
   * to promotions from the base as given. */
  uint32_t mixed_flags;
  uint32_t reserved2; /* 0 */
} qairt_analysis_options;

#define QAIRT_MIXED_PROMOTIONS_ONLY 1u

QAIRT_API void qairt_analysis_options_init(qairt_analysis_options* options);
/* The float graph is not modified. */
QAIRT_API qairt_status_t* qairt_analyze_sensitivity(const qairt_graph_t* float_graph, const char* input_list,
                                                    const qairt_analysis_options* options,
                                                    qairt_analysis_report_t** out_report);
/* Calibrates `graph` (float, possibly with some encodings already) in place.
 * On error the graph is unchanged. */
QAIRT_API qairt_status_t* qairt_mixed_precision(qairt_graph_t* graph, const char* input_list,
                                                const qairt_analysis_options* options,
                                                qairt_analysis_report_t** out_report);

/* Since 1.18: which calibration techniques to use, by measurement. On top
 * of options->calibration (techniques it turns on stay on in every
 * configuration), tries bias correction, the weight searches (seqmse with
 * adaptive rounding), both, mse activation ranges and all of them, then,
 * with 8-bit activations and options->target fixing some op's output range,
 * the best with QAIRT_CALIBRATION_WIDE_FIXED_RANGES. Each configuration is
 * calibrated on one half of the samples (of each consecutive pair, one) and
 * scored as options->target runs it (NULL: the calibrated graph as it is) on
 * the other, then the other way round: the worse of the two held-out SQNRs
 * of the worst output (with fewer than 4 samples, calibrated and scored on
 * all). The first within 0.05 dB of the
 * best is chosen (they are listed cheapest first). `chosen` (may be NULL;
 * its struct_size set by the caller) receives options->calibration with the
 * chosen techniques (and its target set to options->target where they need
 * one); the caller calibrates with it. The graph is not modified. The report
 * (QAIRT_ANALYSIS_AUTO_QUANT) lists each configuration as an item: name its
 * techniques, value its SQNR (NaN where the target has no kernels for it),
 * value_high its seconds, kept_off 0 for the chosen one and 1 for the others;
 * the summary's sqnr_base_db is the first (the options as given),
 * sqnr_chosen_db the chosen one's, units the number of configurations. */
QAIRT_API qairt_status_t* qairt_choose_calibration(const qairt_graph_t* float_graph, const char* input_list,
                                                   const qairt_analysis_options* options,
                                                   qairt_calibration_options* chosen,
                                                   qairt_analysis_report_t** out_report);

/* ---- reports ------------------------------------------------------------------ */

typedef uint32_t qairt_analysis_kind_t;
enum qairt_analysis_kind {
  QAIRT_ANALYSIS_REWRITES = 1,
  QAIRT_ANALYSIS_SENSITIVITY = 2,
  QAIRT_ANALYSIS_MIXED = 3,
  QAIRT_ANALYSIS_MIXED_GAINS = 4, /* since 1.11: a shard's (or merged) candidate gains */
  QAIRT_ANALYSIS_AUTO_QUANT = 5   /* since 1.18: qairt_choose_calibration's configurations */
};

typedef struct qairt_analysis_summary {
  uint32_t struct_size; /* set by the caller */
  qairt_analysis_kind_t kind;
  size_t samples;
  uint32_t synthetic;    /* rewrites: verified on synthetic samples */
  size_t ops_before;     /* rewrites */
  size_t ops_after;      /* rewrites */
  double sqnr_base_db;   /* sensitivity, mixed: everything at the base precision */
  double sqnr_high_db;   /* sensitivity, mixed: everything at the high precision */
  double sqnr_chosen_db; /* mixed */
  uint32_t budget_met;   /* mixed */
  size_t units;          /* sensitivity, mixed */
  size_t boundaries;     /* mixed: precision boundaries (converts processing will add) */
} qairt_analysis_summary;

/* Items: rewrites (one per rewrite run), sensitivity units (graph order),
 * mixed precision: the promoted units; mixed gains: every candidate (value:
 * its gain in dB, NaN where another shard evaluates it). */
typedef struct qairt_analysis_item {
  uint32_t struct_size; /* set by the caller */
  uint32_t rolled_back; /* rewrites */
  const char* name;    /* rewrite or unit name; valid while the report lives */
  const char* op_type; /* units: op type ("input" for graph inputs); rewrites: NULL */
  uint64_t count;      /* rewrites: places changed; units: depth in the graph */
  double value;        /* rewrites: worst output cosine; units: SQNR (dB) with only this unit quantized */
  double value_high;   /* units: SQNR (dB) with everything quantized but this unit at the high precision */
  /* Since 1.14, rewrites judged on the quantized model
   * (qairt_rewrite_options.quantized_judge): the output SQNR (dB) without and
   * with the rewrite (NaN when not judged), and whether that kept it off. */
  double quantized_without_db;
  double quantized_with_db;
  uint32_t kept_off;
} qairt_analysis_item;

typedef uint32_t qairt_analysis_format_t;
enum qairt_analysis_format {
  QAIRT_ANALYSIS_TEXT = 1,
  QAIRT_ANALYSIS_JSON = 2,
  QAIRT_ANALYSIS_SVG = 3, /* sensitivity only: SQNR along the graph depth */
  QAIRT_ANALYSIS_TEXT_DETAILED = 4 /* rewrites: every place changed */
};

QAIRT_API void qairt_analysis_report_destroy(qairt_analysis_report_t* report);
QAIRT_API qairt_status_t* qairt_analysis_report_summary(const qairt_analysis_report_t* report,
                                                        qairt_analysis_summary* out);
QAIRT_API size_t qairt_analysis_report_item_count(const qairt_analysis_report_t* report);
QAIRT_API qairt_status_t* qairt_analysis_report_item(const qairt_analysis_report_t* report, size_t index,
                                                     qairt_analysis_item* out);
QAIRT_API size_t qairt_analysis_report_warning_count(const qairt_analysis_report_t* report);
/* since 1.11: a sensitivity or mixed-gains report from its
 * QAIRT_ANALYSIS_JSON rendering (scores are rendered with round-trip
 * precision), e.g. a shard's computed in another process. A text that is
 * not such a report is refused, naming the field. */
QAIRT_API qairt_status_t* qairt_analysis_report_read_json(const char* json, size_t size,
                                                          qairt_analysis_report_t** out_report);
/* since 1.11: the sensitivity (or mixed-gains) report of the whole analysis
 * from those of its shards 0..N-1 (any order; options.shard_index and
 * shard_count). Refused, naming the report: mixed kinds, another shard
 * count, a shard twice or missing, another model, samples or precision. */
QAIRT_API qairt_status_t* qairt_analysis_report_merge(const qairt_analysis_report_t* const* parts, size_t count,
                                                      qairt_analysis_report_t** out_report);
QAIRT_API const char* qairt_analysis_report_warning(const qairt_analysis_report_t* report, size_t index);
/* Renders into buf (NUL-terminated, truncated to capacity); *out_length gets
 * the full length without the NUL. buf may be NULL with capacity 0. */
QAIRT_API qairt_status_t* qairt_analysis_report_render(const qairt_analysis_report_t* report,
                                                       qairt_analysis_format_t format, char* buf, size_t capacity,
                                                       size_t* out_length);

#ifdef __cplusplus
}
#endif

#endif /* QAIRT_QAIRT_ANALYZE_H_ */
