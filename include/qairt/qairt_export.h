/*
 * qairt_export.h - model export (ONNX) of the qairt C ABI.
 *
 * Writes a graph back as a runnable ONNX model: every op type the ONNX
 * importer produces maps back to standard ai.onnx ops (QNN-style ops without
 * an ONNX twin are spelled with several nodes), tensor layouts stay the
 * IR's (the source model's), static tensors become initializers.
 *
 * Quantization is written as the reference executor (qairt_exec.h) simulates
 * it, so ONNX Runtime computes what qairt computes (a Q-DQ model, e.g. of a
 * graph after qairt_process):
 *  - fixed-point static tensors: integer initializer + DequantizeLinear
 *    (per-tensor, per-axis, blocked with opset 21's block_size; LPBQ as the
 *    two-level DequantizeLinear pattern the QNN execution provider fuses);
 *  - other tensors with an integer encoding (quantized activations, float
 *    tensors carrying an encoding): QuantizeLinear -> DequantizeLinear after
 *    the producer, so requantizations read DQ -> Q pairs;
 *  - float tensors with an fp16 encoding: Cast to float16 and back.
 * 4-bit values, blocks, and 16-bit values without QAIRT_EXPORT_QDQ_MS_DOMAIN
 * need opset 21, which opset 0 (automatic) selects when needed.
 *
 * Same conventions as qairt.h (status objects, struct_size, query-then-fill,
 * ownership). The graph is only read: several exports of one graph may run
 * at once. Since ABI 1.1.
 */
#ifndef QAIRT_QAIRT_EXPORT_H_
#define QAIRT_QAIRT_EXPORT_H_

#include "qairt/qairt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of qairt_onnx_export_options.flags. */
#define QAIRT_EXPORT_VALUE_INFO 1u /* also write dtype/shape of every intermediate tensor */
/* Q/DQ nodes in the com.microsoft domain (16-bit grids at opsets below 21,
 * as ONNX Runtime's quantizer writes with --qdq_opset 13); no blocks or
 * 4-bit grids. Since ABI 1.4. */
#define QAIRT_EXPORT_QDQ_MS_DOMAIN 2u
/* Initializers of at least external_data_threshold bytes go to one file
 * next to the model (ONNX external data; qairt_export_onnx_file only).
 * Models whose static tensors hold more than 1 GiB are always written this
 * way. Since ABI 1.10. */
#define QAIRT_EXPORT_EXTERNAL_DATA 4u

/* opset 0: 17, or 21 when a Q/DQ node needs it (since ABI 1.4). */
#define QAIRT_ONNX_EXPORT_AUTO_OPSET 0
#define QAIRT_ONNX_EXPORT_DEFAULT_OPSET 17
#define QAIRT_ONNX_EXPORT_MIN_OPSET 11
#define QAIRT_ONNX_EXPORT_MAX_OPSET 21

/* One ModelProto.metadata_props entry. Fixed layout, used in arrays. */
typedef struct qairt_onnx_metadata_prop {
  const char* key;   /* non-NULL */
  const char* value; /* NULL reads as "" */
} qairt_onnx_metadata_prop;

typedef struct qairt_onnx_export_options {
  uint32_t struct_size;      /* sizeof(qairt_onnx_export_options) */
  uint32_t flags;            /* QAIRT_EXPORT_* */
  int64_t opset;             /* ai.onnx opset, MIN..MAX_OPSET, or AUTO_OPSET (the default) */
  const char* producer_name; /* ModelProto.producer_name; NULL = "qairt" */
  const char* graph_name;    /* GraphProto.name; NULL = the graph's name */
  /* Since ABI 1.4: ModelProto.metadata_props (e.g. the resolved options of
   * qairt_process_result_options), read during the call. */
  size_t num_metadata_props;
  const qairt_onnx_metadata_prop* metadata_props;
  /* Since ABI 1.10, with QAIRT_EXPORT_EXTERNAL_DATA (or a model over 1 GiB
   * of static tensors): the smallest initializer, in bytes, written to the
   * data file (0 = 1024), and the data file's name in the model's folder
   * (NULL = "<model file name>.data"; no '/'). */
  uint64_t external_data_threshold;
  const char* external_data_name;
} qairt_onnx_export_options;

QAIRT_API void qairt_onnx_export_options_init(qairt_onnx_export_options* options);

/* Writes `graph` as an ONNX model to `path`, atomically: the bytes go to a
 * temporary file in the same folder, which is fsynced and renamed over
 * `path`; on failure neither a partial nor a temporary file is left and an
 * existing `path` is untouched. With external data, the data file and the
 * model are both complete before either is renamed into place (data
 * first). options may be NULL (defaults). Fails with
 * QAIRT_VALIDATION_FAILED if the graph does not validate, QAIRT_UNSUPPORTED
 * naming the op or tensor that has no ONNX spelling at the chosen opset, and
 * QAIRT_IO_ERROR naming the path. */
QAIRT_API qairt_status_t* qairt_export_onnx_file(const qairt_graph_t* graph, const char* path,
                                                 const qairt_onnx_export_options* options);

/* The serialized model, query-then-fill: with buf = NULL, *out_size receives
 * the size in bytes; then call again with capacity >= that size (the model is
 * serialized on each call). QAIRT_BUFFER_TOO_SMALL if capacity is short. */
QAIRT_API qairt_status_t* qairt_export_onnx_bytes(const qairt_graph_t* graph, const qairt_onnx_export_options* options,
                                                  void* buf, size_t capacity, size_t* out_size);

/* The serialized model handed to `write` in one or more chunks, in order
 * (one serialization, no size query). `write` returns 0 to continue or
 * non-zero to abort the export with QAIRT_IO_ERROR. */
typedef int32_t (*qairt_write_fn)(void* user_data, const void* data, size_t size);
QAIRT_API qairt_status_t* qairt_export_onnx_write(const qairt_graph_t* graph, const qairt_onnx_export_options* options,
                                                  qairt_write_fn write, void* user_data);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_EXPORT_H_ */
