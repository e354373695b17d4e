/*
 * qairt_process.h - target-specific processing in the qairt C ABI.
 *
 * Runs the spec's target-specific processing on a graph in place: data-
 * movement encoding propagation, super groups, float fallback, shared-bias
 * duplication, kernel selection with precision fallback, convert insertion
 * (redundant ones pruned), bias encodings, static-tensor quantization with
 * sub-byte packing, and the FP16 audit on targets without float compute.
 * The result holds the accumulated errors (in order of occurrence), the
 * quantizer log (INFO CSV or TRACE text, as the spec documents them), the
 * stats summary, the resolved options and per-op / per-tensor annotations in
 * the shapes qairt_container_write_* takes.
 *
 * Same conventions as qairt.h. A result is immutable and may be read from
 * several threads; its strings are borrowed until it is destroyed. Two
 * processing runs on two graphs may run concurrently. Since ABI 1.3.
 */
#ifndef QAIRT_QAIRT_PROCESS_H_
#define QAIRT_QAIRT_PROCESS_H_

#include "qairt/qairt.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_process_result_t qairt_process_result_t;

typedef uint32_t qairt_quantizer_log_level_t;
enum qairt_quantizer_log_level {
  QAIRT_QUANTIZER_LOG_NONE = 0,  /* no log; the stats summary is still produced */
  QAIRT_QUANTIZER_LOG_INFO = 1,  /* CSV, one row per modified or injected tensor */
  QAIRT_QUANTIZER_LOG_TRACE = 2  /* text: GRAPH snapshots, every phase and decision, errors, stats */
};

/* Graph inputs/outputs take the quantized datatype instead of keeping the
 * model's (default: a float input with a fixed-point encoding is followed by
 * a Quantize, such an output preceded by a Dequantize). */
#define QAIRT_PROCESS_QUANTIZED_IO 1u
/* Since 1.8: keep calibrated weight scales even where input scale x weight
 * scale cannot hold a channel's 32-bit bias (default: that channel's weight
 * scale is raised just enough; logged as BIAS_AWARE_SCALE and in the stats). */
#define QAIRT_PROCESS_NO_BIAS_AWARE_WEIGHT_SCALES 2u

typedef struct qairt_process_options {
  uint32_t struct_size;          /* sizeof(qairt_process_options) */
  uint32_t flags;                /* QAIRT_PROCESS_* */
  const qairt_target_t* target;  /* required; borrowed for the call */
  uint32_t float_bitwidth;       /* tensors without encodings: 0 = the target's default, 16 or 32 */
  uint32_t act_bitwidth;         /* 0 = default; 8 or 16 (checked against the target) */
  uint32_t weights_bitwidth;     /* 0 = default; 4, 8 or 16 */
  uint32_t bias_bitwidth;        /* 0 = 32; 8 or 32 */
  qairt_quantizer_log_level_t log_level;
  const char* stop_after;        /* pass name (qairt_process_pipeline); NULL = run all */
} qairt_process_options;

QAIRT_API void qairt_process_options_init(qairt_process_options* options);

/* The registered passes, one per line ("N. name  Title: summary").
 * Query-then-fill. */
QAIRT_API qairt_status_t* qairt_process_pipeline(char* buf, size_t capacity, size_t* out_length);

/* Processes `graph` in place for options->target. Fails (and leaves the graph
 * unchanged) for bad options (e.g. float_bitwidth 32 on a target without
 * fp32 compute), an invalid graph or an unknown stop_after pass. Processing
 * errors ("No accuracy preserving kernels found for <op>", FP16 audit, ...)
 * do not fail the call: they are in the result, in order of occurrence, and
 * the graph then holds what processing could do. */
QAIRT_API qairt_status_t* qairt_process(qairt_graph_t* graph, const qairt_process_options* options,
                                        qairt_process_result_t** out_result);
QAIRT_API void qairt_process_result_destroy(qairt_process_result_t* result);

/* Since ABI 1.6. Rewrites, in place, the ops of `graph` that `target` has no
 * kernel for but can run in an equivalent form, as the vendor converter does
 * (Conv1d and TransposeConv1d run as their 2-D ops between an ExpandDims and a
 * Squeeze; the weight keeps its name and encoding). qairt_process does this
 * first itself; call it to see the graph the target will get (a kernel check
 * before processing). `out_changed` (optional): ops rewritten. On error the
 * graph is unchanged. */
QAIRT_API qairt_status_t* qairt_graph_legalize(qairt_graph_t* graph, const qairt_target_t* target,
                                               size_t* out_changed);

QAIRT_API size_t qairt_process_result_error_count(const qairt_process_result_t* result);
/* Borrowed; NULL if out of range. */
QAIRT_API const char* qairt_process_result_error(const qairt_process_result_t* result, size_t index);
QAIRT_API size_t qairt_process_result_warning_count(const qairt_process_result_t* result);
QAIRT_API const char* qairt_process_result_warning(const qairt_process_result_t* result, size_t index);
/* 1.8: the errors and warnings above as diagnostics records, in the same
 * order, each with its rule id and the op/tensor it is about (qairt.h).
 * Borrowed; NULL only for a NULL result. */
QAIRT_API const qairt_diagnostics_t* qairt_process_result_diagnostics(const qairt_process_result_t* result);
/* INFO CSV or TRACE text ("" at NONE). Borrowed. */
QAIRT_API const char* qairt_process_result_log(const qairt_process_result_t* result);
/* The stats summary ([MISSING ENC.] ... [PRUNED CONVERTS]). Borrowed. */
QAIRT_API const char* qairt_process_result_stats(const qairt_process_result_t* result);

/* Resolved options, op annotations and tensor notes, ready for
 * qairt_container_write_options. Borrowed arrays; counts via out_count. */
QAIRT_API const qairt_container_option* qairt_process_result_options(const qairt_process_result_t* result,
                                                                     size_t* out_count);
QAIRT_API const qairt_container_op_annotation* qairt_process_result_op_annotations(
    const qairt_process_result_t* result, size_t* out_count);
QAIRT_API const qairt_container_tensor_note* qairt_process_result_tensor_notes(const qairt_process_result_t* result,
                                                                               size_t* out_count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_PROCESS_H_ */
