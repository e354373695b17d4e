/*
 * qairt_import.h - model import (ONNX, TFLite) of the qairt C ABI.
 * Same conventions as qairt.h (status objects, struct_size, ownership).
 * Threads: imports are independent of each other (no global state) and may
 * run concurrently; each returns a new graph (thread-compatible). A report
 * is immutable and may be read from any number of threads.
 * Since ABI 1.1.
 */
#ifndef QAIRT_QAIRT_IMPORT_H_
#define QAIRT_QAIRT_IMPORT_H_

#include "qairt/qairt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_import_report_t qairt_import_report_t; /* immutable, thread-safe */

/* Flags of qairt_import_options.flags. */
#define QAIRT_IMPORT_NO_BATCHNORM_FOLD 1u /* keep BatchNormalization as Batchnorm ops */
#define QAIRT_IMPORT_REQUIRE_STATIC 2u    /* fail if any dim stays dynamic (dry run) */
/* Since ABI 1.6: int64 graph inputs, int64 constants read by ops and Casts to
 * int64 become int32, as the vendor converter does unless told
 * --keep_int64_inputs (HTP has no int64 kernels: an embedding Gather needs
 * int32 token ids). Constants outside int32's range saturate. Input lists
 * may still hold the model's int64 raw files (read and narrowed). */
#define QAIRT_IMPORT_INT64_TO_INT32 4u

typedef struct qairt_import_options {
  uint32_t struct_size; /* sizeof(qairt_import_options) */
  uint32_t flags;       /* QAIRT_IMPORT_* */
  /* --define_symbol NAME VALUE, num_define_symbols pairs. */
  size_t num_define_symbols;
  const char* const* define_symbol_names;
  const int64_t* define_symbol_values;
  /* --input_dim NAME DIMS: input_dims[i] has input_dim_ranks[i] entries. */
  size_t num_input_dims;
  const char* const* input_dim_names;
  const size_t* input_dim_ranks;
  const int64_t* const* input_dims;
} qairt_import_options;

QAIRT_API void qairt_import_options_init(qairt_import_options* options);

/* Imports an ONNX model (float or Q-DQ) from a file; external data is read
 * (memory-mapped) from the model's folder only. On success *out_graph is an
 * owned graph. If out_report is non-NULL it receives the import report
 * whether or not the import succeeds (free with qairt_import_report_destroy);
 * on failure the status message lists every error. */
QAIRT_API qairt_status_t* qairt_import_onnx_file(const char* path, const qairt_import_options* options,
                                                 qairt_graph_t** out_graph, qairt_import_report_t** out_report);
/* The same from bytes (models with external data are rejected). */
QAIRT_API qairt_status_t* qairt_import_onnx_bytes(const void* data, size_t size, const qairt_import_options* options,
                                                  qairt_graph_t** out_graph, qairt_import_report_t** out_report);

/* Imports a TFLite model (.tflite, file identifier "TFL3"; float, fp16
 * weights, or int8/uint8/int16/int4 quantized) from a file or from bytes.
 * Same options (input_dims resize inputs by tensor name, meant for the
 * dims a shape_signature marks -1; define_symbols are ignored), graph and
 * report as the ONNX functions; quantization parameters
 * become encodings (offset = -zero_point). Since ABI 1.3. */
QAIRT_API qairt_status_t* qairt_import_tflite_file(const char* path, const qairt_import_options* options,
                                                   qairt_graph_t** out_graph, qairt_import_report_t** out_report);
QAIRT_API qairt_status_t* qairt_import_tflite_bytes(const void* data, size_t size, const qairt_import_options* options,
                                                    qairt_graph_t** out_graph, qairt_import_report_t** out_report);

/* 1 if the import succeeded (and, with QAIRT_IMPORT_REQUIRE_STATIC, no dim
 * stayed dynamic). */
QAIRT_API int32_t qairt_import_report_ok(const qairt_import_report_t* report);
/* The report (inputs/outputs with shapes and dtypes, op histograms, parameter
 * count, encodings, unsupported ops, dynamic dims, diagnostics) as JSON or as
 * text. Query-then-fill. */
QAIRT_API qairt_status_t* qairt_import_report_json(const qairt_import_report_t* report, char* buf, size_t capacity,
                                                   size_t* out_length);
QAIRT_API qairt_status_t* qairt_import_report_text(const qairt_import_report_t* report, char* buf, size_t capacity,
                                                   size_t* out_length);
/* The report as QAIRT_REPORT_TEXT or QAIRT_REPORT_JSON (the two functions
 * above); SARIF is QAIRT_UNSUPPORTED. Query-then-fill. Since ABI 1.7. */
QAIRT_API qairt_status_t* qairt_import_report_render(const qairt_import_report_t* report,
                                                     qairt_report_format_t format, char* buf, size_t capacity,
                                                     size_t* out_length);
QAIRT_API void qairt_import_report_destroy(qairt_import_report_t* report);
/* The report's errors and warnings as diagnostics records (qairt.h; the
 * model path as their file, rule ids as graph validation's), e.g. to print
 * the warnings of an import that succeeded. Borrowed until the report is
 * destroyed; NULL only for a NULL report. Since ABI 1.9. */
QAIRT_API const qairt_diagnostics_t* qairt_import_report_diagnostics(const qairt_import_report_t* report);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_IMPORT_H_ */
