/*
 * qairt_prepare.h - Cloud AI 100 preparation (`qairt prepare --target aic100`).
 *
 * Audits an ONNX model for Qualcomm's `qaic-compile -convert-to-fp16` and,
 * when nothing is wrong, writes the prepared model (the user's model with
 * only the reported constant changes), specializations.json,
 * fp32_nodes.yaml, compile_command.txt, report.txt and report.json into
 * output_dir. Checks: static shapes (symbols, specializations), fp16
 * constant audit (+ optional clipping / flooring, verified with the
 * executor), additive masks <= -65504 feeding Softmax, activation ranges and
 * the fp16 simulation of the whole model (with an input_list), fp32 precision
 * islands, op support against the aic100 descriptor (and an optional
 * OnnxSupportedOperators.txt), bf16 and model size.
 *
 * Same conventions as qairt.h (status objects, struct_size + _init,
 * query-then-fill, ownership). Since ABI 1.5.
 */
#ifndef QAIRT_QAIRT_PREPARE_H_
#define QAIRT_QAIRT_PREPARE_H_

#include "qairt/qairt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_prepare_report_t qairt_prepare_report_t; /* immutable: thread-safe reads */

/* Flags of qairt_prepare_options.flags. */
#define QAIRT_PREPARE_CLIP_FP16_CONSTANTS 1u    /* clip float32 constants to +-65504 (-inf feeding Where kept) */
#define QAIRT_PREPARE_FIX_ADDITIVE_MASKS 2u     /* set additive-mask values <= -65504 to mask_value */
#define QAIRT_PREPARE_FORCE 4u                  /* a fixed model beyond tolerance is a warning, not an error */
#define QAIRT_PREPARE_NAMED_SPECIALIZATIONS 8u  /* write {"name","symbols"} specializations */
#define QAIRT_PREPARE_NO_DESCRIPTOR_CHECK 16u   /* skip the aic100 descriptor op check */

typedef struct qairt_prepare_options {
  uint32_t struct_size; /* sizeof(qairt_prepare_options) */
  uint32_t flags;       /* QAIRT_PREPARE_* */
  const char* model_path;   /* required: the ONNX model */
  const char* output_dir;   /* NULL: audit only, nothing written */
  const char* target;       /* NULL or "aic100" */
  size_t num_define_symbols;
  const char* const* define_symbol_names;
  const int64_t* define_symbol_values;
  size_t num_input_dims;     /* -d NAME DIMS */
  const char* const* input_dim_names;
  const size_t* input_dim_ranks;
  const int64_t* input_dims; /* concatenated */
  int64_t batch_size;        /* 0: none */
  const char* specializations_path; /* NULL: none */
  const char* input_list_path;      /* NULL: no activation audit */
  const char* fp32_nodes;           /* NULL, "auto" or a YAML / list file */
  const char* supported_ops_path;   /* the compiler's OnnxSupportedOperators.txt, or NULL */
  double fp16_min_abs;     /* > 0: raise nonzero |x| below it to +-fp16_min_abs; 0: report only */
  double mask_value;       /* default -10000 */
  double tolerance;        /* max |fixed - original|, default 1e-4 */
  double fp16_budget;      /* fp16 vs fp32 output error to meet, default 1e-2 */
  uint64_t external_data_threshold; /* model bytes from which weights go to external data; default 2 GiB */
  uint32_t max_samples;    /* input_list samples used, default 16 */
  uint32_t reserved;       /* must be 0 */
} qairt_prepare_options;

QAIRT_API void qairt_prepare_options_init(qairt_prepare_options* options);

/* Runs the preparation. *out_report (if out_report is not NULL) receives the
 * report whenever the audit ran, also when the call fails because of error
 * findings (QAIRT_VALIDATION_FAILED, nothing written); the caller destroys
 * it. Bad options give QAIRT_INVALID_ARGUMENT, an unreadable model
 * QAIRT_IO_ERROR / QAIRT_PARSE_ERROR. */
QAIRT_API qairt_status_t* qairt_prepare_run(const qairt_prepare_options* options, qairt_prepare_report_t** out_report);
QAIRT_API void qairt_prepare_report_destroy(qairt_prepare_report_t* report);

/* The report as text (what the CLI prints) or JSON, query-then-fill. */
QAIRT_API qairt_status_t* qairt_prepare_report_text(const qairt_prepare_report_t* report, char* buf, size_t capacity,
                                                    size_t* out_length);
QAIRT_API qairt_status_t* qairt_prepare_report_json(const qairt_prepare_report_t* report, char* buf, size_t capacity,
                                                    size_t* out_length);
/* The report as QAIRT_REPORT_TEXT or QAIRT_REPORT_JSON (the two functions
 * above); SARIF is QAIRT_UNSUPPORTED. Query-then-fill. Since ABI 1.7. */
QAIRT_API qairt_status_t* qairt_prepare_report_render(const qairt_prepare_report_t* report,
                                                      qairt_report_format_t format, char* buf, size_t capacity,
                                                      size_t* out_length);

/* Severity of a finding (append-only). */
typedef enum qairt_prepare_severity {
  QAIRT_PREPARE_INFO = 0,
  QAIRT_PREPARE_WARNING = 1,
  QAIRT_PREPARE_ERROR = 2
} qairt_prepare_severity;

typedef struct qairt_prepare_finding {
  uint32_t struct_size; /* sizeof(qairt_prepare_finding) */
  uint32_t severity;    /* qairt_prepare_severity */
  const char* code;     /* stable: "additive-mask", "constant-overflow", ... */
  const char* subject;  /* tensor, node, symbol or file */
  const char* message;
} qairt_prepare_finding;

QAIRT_API size_t qairt_prepare_report_finding_count(const qairt_prepare_report_t* report);
/* Pointers stay valid while the report lives. */
QAIRT_API qairt_status_t* qairt_prepare_report_finding(const qairt_prepare_report_t* report, size_t index,
                                                       qairt_prepare_finding* out_finding);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_PREPARE_H_ */
