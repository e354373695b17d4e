/*
 * qairt_calib.h - post-training calibration and accuracy comparison in the
 * qairt C ABI.
 *
 * Calibration computes an encoding for every tensor of a float graph that
 * has none (encodings from an overrides file or Q-DQ nodes are kept), from
 * samples streamed through the reference executor: activations by min-max,
 * sqnr (TF-enhanced family), mse or percentile over their observed range;
 * weights from their data per tensor, per channel, per row, per block or
 * LPBQ. Memory does not grow with the number of samples; results do not
 * depend on num_threads.
 *
 * Comparison runs a float graph and a quantized one (processed, converts
 * included; its quantization simulated) on the same samples and reports, per
 * output, cosine similarity, SQNR and max abs error, and optionally every
 * encoded tensor's SQNR, worst first.
 *
 * Threads: calibrating mutates its graph (thread-compatible, as every
 * qairt_graph_t); calibrations and comparisons of different graphs may run
 * at once (tests/hostile/test_embedding.cpp). Reports are immutable and may
 * be read from any number of threads until destroyed.
 *
 * Same conventions as qairt.h. Since ABI 1.3.
 */
#ifndef QAIRT_QAIRT_CALIB_H_
#define QAIRT_QAIRT_CALIB_H_

#include "qairt/qairt.h"
#include "qairt/qairt_target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_calibration_report_t qairt_calibration_report_t; /* immutable, thread-safe */
typedef struct qairt_compare_report_t qairt_compare_report_t;         /* immutable, thread-safe */

typedef uint32_t qairt_calibration_method_t;
enum qairt_calibration_method {
  QAIRT_CALIBRATION_MIN_MAX = 0,
  QAIRT_CALIBRATION_SQNR = 1,       /* grid search over both ends, clipping penalised (TF-enhanced family) */
  QAIRT_CALIBRATION_MSE = 2,        /* clipping range minimising the quantization MSE */
  QAIRT_CALIBRATION_PERCENTILE = 3, /* percentile / 100 - percentile of the observed values */
  /* since 1.13, param_method only: each FullyConnected, MatMul and convolution
   * weight takes, among candidate grids (the min-max one and its range shrunk
   * to as little as a quarter; for LPBQ every integer block scale), the one
   * giving the least output error of its op on the samples, with the inputs
   * the quantized model gives it (weights upstream chosen first). Runs the
   * samples once per level of weighted ops; memory k x k per op input, not
   * per sample (a weight whose H would pass 1 GB keeps min-max, in the
   * report's note). Needs samples: qairt_calibrate_params and
   * qairt_calibrate_from_stats refuse it. */
  QAIRT_CALIBRATION_SEQMSE = 4
};

#define QAIRT_CALIBRATION_PER_CHANNEL 1u /* conv weights per output channel */
#define QAIRT_CALIBRATION_PER_ROW 2u     /* FullyConnected / MatMul weights per output row */
#define QAIRT_CALIBRATION_LPBQ 4u        /* with block_size: LPBQ weights (needs weights_bitwidth 4) */
/* since 1.13: each FullyConnected, MatMul and convolution weight rounds up or
 * down (to one of the two grid points around it) as lowers its op's output
 * error on the samples, its quantized predecessors feeding it (the weight's
 * values move onto the chosen points); any param_method; needs samples. */
#define QAIRT_CALIBRATION_ADAPTIVE_ROUNDING 8u
/* since 1.14: with 16-bit activations, the scales of normalizations
 * (LayerNorm, GroupNorm, InstanceNorm, Batchnorm, RmsNorm weights) are 16-bit
 * instead of the weights' bit width, for targets with a16w16 kernels for
 * them (qairt convert sets it for such targets, as AIMET's HTP v73+ configs
 * give GroupNorm's parameters its output's bit width). A few hundred values
 * whose 8-bit grid, which must include zero, held a transformer's W8A16
 * output near 55 dB. */
#define QAIRT_CALIBRATION_WIDE_NORM_SCALES 16u
/* since 1.15: empirical bias correction. After the encodings (and any weight
 * search), each FullyConnected and convolution bias is moved so the op's
 * output mean per channel on the samples is the float model's: the mean
 * shift its quantized weights and the quantized activations upstream cause
 * (b' = b + w . mean(x_float) - q(w) . mean(x_quantized)), ops taken level by
 * level so upstream corrections feed the next. Runs the samples once float
 * and once per level of such ops; needs samples. */
#define QAIRT_CALIBRATION_BIAS_CORRECTION 32u
/* since 1.18: with 8-bit activations, the output of an op whose 8-bit range
 * the target fixes (HTP's Softmax and Sigmoid: [0, 1]) and that has a 16-bit
 * kernel gets 16 bits. An 8-bit [0, 1] grid has steps of 0.004: attention
 * probabilities near 0.03-0.06 keep a few levels (about 21 dB on a causal
 * decoder's, whose first row reaches 1). Needs options.target (whose kernels
 * say which ops). */
#define QAIRT_CALIBRATION_WIDE_FIXED_RANGES 64u

/* Progress of a long call: `phase` ("ranges", then "histograms" for the
 * searching calibration methods; "compare"), `done` of `total` samples of
 * that phase. Calls are serialized but may come from the library's worker
 * threads (num_threads > 1); the callback must not call back into the
 * library with the same handles. Since ABI 1.4. */
typedef void (*qairt_progress_fn)(void* user_data, const char* phase, size_t done, size_t total);

typedef struct qairt_calibration_options {
  uint32_t struct_size;                    /* sizeof(qairt_calibration_options) */
  uint32_t flags;                          /* QAIRT_CALIBRATION_* */
  qairt_calibration_method_t act_method;   /* default MIN_MAX */
  qairt_calibration_method_t param_method; /* default MIN_MAX */
  qairt_symmetry_t act_schema;             /* default ASYMMETRIC */
  qairt_symmetry_t param_schema;           /* default SYMMETRIC */
  uint32_t act_bitwidth;                   /* 8 (default) | 16 */
  uint32_t weights_bitwidth;               /* 4 | 8 (default) | 16 */
  uint32_t block_size;                     /* > 0: MatMul/FC/convolution weights per block along the input dim */
  uint32_t histogram_bins;                 /* default 2048 */
  uint32_t num_threads;                    /* default 1; 0 = all cores */
  uint32_t reserved;                       /* must be 0 */
  double percentile;                       /* default 99.99 */
  size_t num_float_inputs;                 /* graph inputs left unquantized (--input_encoding NAME other) */
  const char* const* float_inputs;
  /* Since ABI 1.4: progress per sample pass (NULL = none). */
  qairt_progress_fn progress;
  void* progress_user_data;
  /* Since ABI 1.15 (NULL = none): with QAIRT_CALIBRATION_BIAS_CORRECTION,
   * the quantized model whose output means are measured is the one this
   * target's processing makes (kernels, super groups, converts), with
   * processing's default options; without, the calibrated graph as it is. */
  const qairt_target_t* target;
} qairt_calibration_options;

QAIRT_API void qairt_calibration_options_init(qairt_calibration_options* options);

/* Calibrates `graph` in place from an input_list file (one line per sample
 * of name:=path entries or bare paths in graph-input order, paths relative to
 * the list, raw little-endian data in the input's dtype). Every line is
 * checked before any work; errors name the list line, the input and the raw
 * file; on error the graph is unchanged. `out_report` may be NULL. */
QAIRT_API qairt_status_t* qairt_calibrate_input_list(qairt_graph_t* graph, const char* input_list,
                                                     const qairt_calibration_options* options,
                                                     qairt_calibration_report_t** out_report);
/* Same from memory: buffers[s * num_inputs + i] holds input i of sample s
 * (graph-input order) with sizes[s * num_inputs + i] bytes. */
QAIRT_API qairt_status_t* qairt_calibrate_buffers(qairt_graph_t* graph, size_t num_samples,
                                                  const void* const* buffers, const size_t* sizes,
                                                  const qairt_calibration_options* options,
                                                  qairt_calibration_report_t** out_report);
/* since 1.11: only the static float tensors without an encoding (weights,
 * constants), from their values, with the options' weight bit width,
 * granularity and method; activations are left as they are (no samples).
 * What the vendor converter's --float_fallback does for the parameters an
 * encodings file leaves out. On error the graph is unchanged. */
QAIRT_API qairt_status_t* qairt_calibrate_params(qairt_graph_t* graph, const qairt_calibration_options* options,
                                                 qairt_calibration_report_t** out_report);
QAIRT_API void qairt_calibration_report_destroy(qairt_calibration_report_t* report);
QAIRT_API size_t qairt_calibration_report_samples(const qairt_calibration_report_t* report);
QAIRT_API size_t qairt_calibration_report_activation_count(const qairt_calibration_report_t* report);
QAIRT_API size_t qairt_calibration_report_param_count(const qairt_calibration_report_t* report);
/* Name of the i-th tensor given an encoding (activations first, then
 * parameters); NULL if out of range. Borrowed. */
QAIRT_API const char* qairt_calibration_report_tensor(const qairt_calibration_report_t* report, size_t index);
QAIRT_API size_t qairt_calibration_report_warning_count(const qairt_calibration_report_t* report);
QAIRT_API const char* qairt_calibration_report_warning(const qairt_calibration_report_t* report, size_t index);
/* since 1.13: what calibration decided and why, one line each (the
 * sequential MSE summary: weights, levels, output error against min-max). */
QAIRT_API size_t qairt_calibration_report_note_count(const qairt_calibration_report_t* report);
QAIRT_API const char* qairt_calibration_report_note(const qairt_calibration_report_t* report, size_t index);

/*---------------------------------------------------------------------------
 * Calibration statistics (since ABI 1.10): calibration split over processes
 * or hosts and merged exactly. Shard k of n observes samples k, k+n, k+2n,
 * ... of the input_list. Round 1 holds each activation's range (min/max,
 * merged by min/max); round 2, needed by the histogram methods (mse, sqnr,
 * percentile), a histogram on the grid of the merged round 1 (merged by
 * adding counts). Calibrating from merged statistics gives the encodings
 * qairt_calibrate_input_list gives on the whole list, byte for byte, for
 * any number of shards. The graph must be the one calibration sees (in
 * qairt convert: after legalization, overrides and rewrites; see
 * qairt_convert_options.stats_output); a fingerprint of it (structure and
 * weights) is in every file and checked on merge and use.
 *-------------------------------------------------------------------------*/
typedef struct qairt_calibration_stats_t qairt_calibration_stats_t; /* immutable, thread-safe */

/* Observes shard `shard_index` of `shard_count` (0 = 1) of the samples.
 * ranges NULL: round 1; otherwise a merged, complete round 1 of the same
 * graph and options: round 2. */
QAIRT_API qairt_status_t* qairt_calibration_stats_collect(const qairt_graph_t* graph, const char* input_list,
                                                          const qairt_calibration_options* options,
                                                          uint32_t shard_index, uint32_t shard_count,
                                                          const qairt_calibration_stats_t* ranges,
                                                          qairt_calibration_stats_t** out_stats);
/* Merges disjoint shards of one round, graph and option set (errors name
 * the part and what differs: round, model, options, overlapping shards). */
QAIRT_API qairt_status_t* qairt_calibration_stats_merge(const qairt_calibration_stats_t* const* parts, size_t count,
                                                        qairt_calibration_stats_t** out_stats);
/* A .stats file or its bytes, verified: QAIRT_PARSE_ERROR naming the file
 * and the field for a truncated or corrupt one, QAIRT_UNSUPPORTED for a
 * newer format. */
QAIRT_API qairt_status_t* qairt_calibration_stats_load_file(const char* path, qairt_calibration_stats_t** out_stats);
QAIRT_API qairt_status_t* qairt_calibration_stats_load_bytes(const void* data, size_t size,
                                                             qairt_calibration_stats_t** out_stats);
/* Written atomically (as every output). */
QAIRT_API qairt_status_t* qairt_calibration_stats_write_file(const qairt_calibration_stats_t* stats, const char* path);
/* Query-then-fill: buf NULL gives *out_size. */
QAIRT_API qairt_status_t* qairt_calibration_stats_write_bytes(const qairt_calibration_stats_t* stats, void* buf,
                                                              size_t capacity, size_t* out_size);
QAIRT_API void qairt_calibration_stats_destroy(qairt_calibration_stats_t* stats);
/* 1 (ranges) or 2 (histograms); 0 for NULL. */
QAIRT_API uint32_t qairt_calibration_stats_round(const qairt_calibration_stats_t* stats);
/* 1 when every shard is merged in; 0 otherwise or for NULL. */
QAIRT_API int qairt_calibration_stats_complete(const qairt_calibration_stats_t* stats);
/* Samples observed (0 for NULL). */
QAIRT_API uint64_t qairt_calibration_stats_samples(const qairt_calibration_stats_t* stats);
/* The input_list the samples came from, as given to the first shard merged
 * (recorded in a container converted from these statistics); NULL for NULL. */
QAIRT_API const char* qairt_calibration_stats_input_list(const qairt_calibration_stats_t* stats);
/* Calibrates `graph` from complete statistics (round 2 when options'
 * act_method searches a histogram); weights from their data. */
QAIRT_API qairt_status_t* qairt_calibrate_from_stats(qairt_graph_t* graph, const qairt_calibration_stats_t* stats,
                                                     const qairt_calibration_options* options,
                                                     qairt_calibration_report_t** out_report);

#define QAIRT_COMPARE_PER_LAYER 1u

typedef uint32_t qairt_compare_format_t;
enum qairt_compare_format {
  QAIRT_COMPARE_TEXT = 1,    /* outputs table, then layers worst first */
  QAIRT_COMPARE_JSON = 2,    /* {"samples":N,"outputs":[...],"layers":[...]} */
  QAIRT_COMPARE_SUMMARY = 3  /* one line */
};

typedef struct qairt_accuracy {
  uint32_t struct_size;   /* set by the caller */
  uint32_t reserved;
  const char* name;       /* borrowed */
  double sqnr_db;         /* +inf when identical */
  double cosine;
  double max_abs;
  uint64_t argmax_agree;  /* samples whose argmax over the whole output matches */
  /* Since 1.19 (outputs; 0 where the shape is unknown): the argmax along the
   * last axis at every position of the leading axes, over all samples (a
   * sequence's steps, an LLM's tokens); for a [1, classes] output one
   * position per sample. */
  uint64_t argmax_positions;
  uint64_t argmax_positions_agree;
} qairt_accuracy;

/* Runs both graphs on the samples of `input_list` (inputs of the float
 * graph). Outputs are matched by name. */
QAIRT_API qairt_status_t* qairt_compare_input_list(const qairt_graph_t* float_graph, const qairt_graph_t* quantized,
                                                   const char* input_list, uint32_t flags,
                                                   qairt_compare_report_t** out_report);
/* The same, reporting progress ("compare", sample, samples) to `progress`
 * (may be NULL). Since ABI 1.4. */
QAIRT_API qairt_status_t* qairt_compare_input_list_progress(const qairt_graph_t* float_graph,
                                                            const qairt_graph_t* quantized, const char* input_list,
                                                            uint32_t flags, qairt_progress_fn progress,
                                                            void* progress_user_data,
                                                            qairt_compare_report_t** out_report);
QAIRT_API void qairt_compare_report_destroy(qairt_compare_report_t* report);
QAIRT_API size_t qairt_compare_report_output_count(const qairt_compare_report_t* report);
QAIRT_API qairt_status_t* qairt_compare_report_output(const qairt_compare_report_t* report, size_t index,
                                                      qairt_accuracy* out_accuracy);
QAIRT_API size_t qairt_compare_report_layer_count(const qairt_compare_report_t* report);
/* Samples compared (0 for NULL). Since ABI 1.9. */
QAIRT_API size_t qairt_compare_report_samples(const qairt_compare_report_t* report);
QAIRT_API qairt_status_t* qairt_compare_report_layer(const qairt_compare_report_t* report, size_t index,
                                                     qairt_accuracy* out_accuracy);
/* Query-then-fill. */
QAIRT_API qairt_status_t* qairt_compare_report_render(const qairt_compare_report_t* report,
                                                      qairt_compare_format_t format, char* buf, size_t capacity,
                                                      size_t* out_length);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_CALIB_H_ */
