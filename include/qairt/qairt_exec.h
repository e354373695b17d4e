/*
 * qairt_exec.h - the reference CPU executor of the qairt C ABI.
 *
 * Runs a graph on the CPU in float32: every op the ONNX importer produces,
 * with quantization simulation (quantize -> dequantize at every tensor that
 * carries an integer encoding; fixed-point static weights dequantized once;
 * fp16 storage emulated where a tensor's encoding or dtype is fp16). The
 * graph must have static shapes (fix dims at import with define_symbols /
 * input dims). Intermediate buffers are reused by liveness; float32 static
 * weights are read in place.
 *
 * Same conventions as qairt.h (status objects, struct_size + _init,
 * query-then-fill, ownership). An executor copies what it needs from the
 * graph at creation (static bytes are shared, not copied), so the graph may
 * be destroyed afterwards. One executor runs one inference at a time
 * (thread-compatible); separate executors may run concurrently.
 * Since ABI 1.3.
 */
#ifndef QAIRT_QAIRT_EXEC_H_
#define QAIRT_QAIRT_EXEC_H_

#include "qairt/qairt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_executor_t qairt_executor_t; /* thread-compatible */

/* Flags of qairt_executor_options.flags. */
#define QAIRT_EXEC_NO_QUANT_SIM 1u /* run float even where tensors carry integer encodings */

typedef struct qairt_executor_options {
  uint32_t struct_size; /* sizeof(qairt_executor_options) */
  uint32_t flags;       /* QAIRT_EXEC_* */
  uint32_t num_threads; /* 1 (default): single-threaded, reproducible; 0: all cores */
  uint32_t reserved;    /* must be 0 */
} qairt_executor_options;

QAIRT_API void qairt_executor_options_init(qairt_executor_options* options);

/* Plans an executor for `graph` (options may be NULL). Fails with
 * QAIRT_UNSUPPORTED naming the op or tensor that cannot run (unknown op type,
 * non-static shape) and QAIRT_INVALID_ARGUMENT for inconsistent graphs. */
QAIRT_API qairt_status_t* qairt_executor_create(const qairt_graph_t* graph, const qairt_executor_options* options,
                                                qairt_executor_t** out_executor);
QAIRT_API void qairt_executor_destroy(qairt_executor_t* executor);

QAIRT_API size_t qairt_executor_input_count(const qairt_executor_t* executor);
QAIRT_API size_t qairt_executor_output_count(const qairt_executor_t* executor);

/* One graph input or output as the executor exchanges it. Inputs are given
 * in the graph input's dtype (fixed-point inputs as quantized values, which
 * are dequantized with the input's encoding); outputs are returned in their
 * dtype, except fixed-point and bfloat16 outputs, which are returned as
 * float32 (dequantized). Pointers stay valid while the executor lives. */
typedef struct qairt_exec_tensor_info {
  uint32_t struct_size; /* sizeof(qairt_exec_tensor_info) */
  uint32_t rank;
  const char* name;
  qairt_dtype_t dtype;
  uint32_t reserved;
  const int64_t* dims; /* rank entries */
  uint64_t byte_size;  /* bytes of the whole tensor in `dtype` */
} qairt_exec_tensor_info;

QAIRT_API qairt_status_t* qairt_executor_input_info(const qairt_executor_t* executor, size_t index,
                                                    qairt_exec_tensor_info* out_info);
QAIRT_API qairt_status_t* qairt_executor_output_info(const qairt_executor_t* executor, size_t index,
                                                     qairt_exec_tensor_info* out_info);

/* Called after each op for each of its outputs (after quantization
 * simulation), so statistics can be streamed without keeping activations.
 * `data` is valid only during the call: float32 for float and fixed-point
 * tensors (dtype QAIRT_DTYPE_FLOAT_32), int64 for integer tensors, one byte
 * per bool. Return 0 to continue, non-zero to stop the run (it then fails
 * with QAIRT_INTERNAL naming the tensor). */
typedef int32_t (*qairt_exec_observer_fn)(void* user_data, const char* tensor_name, qairt_dtype_t dtype, uint32_t rank,
                                          const int64_t* dims, const void* data, size_t size);
/* fn = NULL removes the observer. */
QAIRT_API qairt_status_t* qairt_executor_set_observer(qairt_executor_t* executor, qairt_exec_observer_fn fn,
                                                      void* user_data);

/* Runs one inference. inputs[i] holds input_sizes[i] bytes for graph input
 * i (which must equal its byte_size); input_count must equal the input
 * count. On failure no output of this run is kept. */
QAIRT_API qairt_status_t* qairt_executor_run(qairt_executor_t* executor, const void* const* inputs,
                                             const size_t* input_sizes, size_t input_count);

/* Output `index` of the last successful run, query-then-fill: buf = NULL
 * gives *out_size; QAIRT_BUFFER_TOO_SMALL if capacity is short;
 * QAIRT_INVALID_ARGUMENT before the first successful run. */
QAIRT_API qairt_status_t* qairt_executor_get_output(const qairt_executor_t* executor, size_t index, void* buf,
                                                    size_t capacity, size_t* out_size);

typedef struct qairt_exec_stats {
  uint32_t struct_size;        /* sizeof(qairt_exec_stats) */
  uint32_t reserved;
  uint64_t op_count;
  uint64_t arena_bytes;        /* planned activation memory (with reuse) */
  uint64_t unplanned_bytes;    /* sum of activation sizes (without reuse) */
  uint64_t static_copied_bytes;   /* static tensors converted at creation */
  uint64_t static_borrowed_bytes; /* static tensors read in place */
} qairt_exec_stats;

QAIRT_API qairt_status_t* qairt_executor_stats(const qairt_executor_t* executor, qairt_exec_stats* out_stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_EXEC_H_ */
