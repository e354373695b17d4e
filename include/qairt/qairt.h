/*
 * qairt.h - the stable C ABI of the qairt quantization compiler library.
 *
 * This header and its siblings in include/qairt/ (qairt_import.h,
 * qairt_target.h, ...) are the whole published API: a function that is not
 * declared in them is not part of it. They compile as C99 and as C++.
 *
 * ---------------------------------------------------------------------------
 * ABI rules
 * ---------------------------------------------------------------------------
 *  - qairt_abi_version() returns (major << 16) | minor. Within one major
 *    version symbols are only added, never removed or changed; every addition
 *    bumps the minor version and is tagged "Since ABI 1.N" where declared.
 *  - Enumerations are append-only with explicit values; a retired value is
 *    never reused. Enum-typed parameters and fields are passed as fixed-width
 *    integers (the *_t typedefs) so their size never depends on the compiler.
 *  - Option and info structs start with `uint32_t struct_size`. Callers set it
 *    to sizeof(struct) (the *_init functions do that); the library reads or
 *    writes only the fields that fit, so old callers keep working when a
 *    struct grows at its end.
 *
 * ---------------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------------
 *  - Every fallible call returns qairt_status_t*: NULL means success; anything
 *    else is an owned error object (code + UTF-8 message) the caller frees with
 *    qairt_status_free(). Messages name the file, tensor, op or field at fault.
 *  - No C++ exception, abort() or exit() ever crosses this boundary, and the
 *    library never writes to stdout/stderr.
 *  - On error, out parameters and caller buffers are left untouched. The one
 *    exception is documented where it applies: the import functions deliver
 *    their out_report on failure too, since the report explains the failure.
 *    tests/abi/test_bad_arguments.py checks this for every function.
 *
 * ---------------------------------------------------------------------------
 * Ownership
 * ---------------------------------------------------------------------------
 *  1. *_create / *_clone / *_get_encoding return owned objects; free them with
 *     the matching *_destroy. Destroy functions accept NULL.
 *  2. Pointers returned by getters (names, dims, scales, info structs' fields)
 *     are borrowed: valid until the owning object is destroyed or mutated.
 *  3. Arguments are copied before a call returns (names, dims, attribute
 *     values, encodings, constant data) unless QAIRT_CONSTANT_BORROW says the
 *     caller's buffer outlives the graph.
 *  4. Variable-size results use query-then-fill: pass buf = NULL to learn the
 *     length (excluding the terminating NUL), then call again with a buffer of
 *     at least length + 1 bytes.
 *  5. All strings are UTF-8, NUL-terminated.
 *
 * ---------------------------------------------------------------------------
 * Threads
 * ---------------------------------------------------------------------------
 *  - qairt_graph_t and qairt_encoding_t are thread-compatible: distinct objects
 *    may be used from different threads at once; one object needs external
 *    synchronisation if any thread mutates it.
 *  - Free functions without an object (version, dtype and op-type queries) are
 *    thread-safe.
 */
#ifndef QAIRT_QAIRT_H_
#define QAIRT_QAIRT_H_

#include <stddef.h>
#include <stdint.h>

#define QAIRT_ABI_MAJOR 1
#define QAIRT_ABI_MINOR 20
#define QAIRT_ABI_VERSION ((QAIRT_ABI_MAJOR << 16) | QAIRT_ABI_MINOR)

#if defined(_WIN32)
#if defined(QAIRT_BUILDING_LIBRARY)
#define QAIRT_API __declspec(dllexport)
#else
#define QAIRT_API __declspec(dllimport)
#endif
#else
#define QAIRT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===========================================================================*/
/* Handles and ids                                                          */
/*===========================================================================*/

typedef struct qairt_status_t qairt_status_t;           /* error object */
typedef struct qairt_graph_t qairt_graph_t;             /* thread-compatible */
typedef struct qairt_encoding_t qairt_encoding_t;       /* thread-compatible */
typedef struct qairt_diagnostics_t qairt_diagnostics_t; /* a list of diagnostics (see qairt_diagnostic) */

/* Tensors and ops are referred to by ids that are dense indices within their
 * graph, stable for the graph's lifetime. */
typedef uint32_t qairt_tensor_id;
typedef uint32_t qairt_op_id;
#define QAIRT_INVALID_ID ((uint32_t)0xFFFFFFFFu)

/*===========================================================================*/
/* Enumerations (append-only)                                                */
/*===========================================================================*/

typedef int32_t qairt_code_t;
enum qairt_code {
  QAIRT_OK = 0,
  QAIRT_INVALID_ARGUMENT = 1, /* a caller-supplied value is wrong */
  QAIRT_NOT_FOUND = 2,        /* a named tensor/op/file does not exist */
  QAIRT_UNSUPPORTED = 3,      /* valid request the library cannot do */
  QAIRT_PARSE_ERROR = 4,      /* malformed input file or text */
  QAIRT_OUT_OF_MEMORY = 5,
  QAIRT_INTERNAL = 6,         /* a bug in qairt: please report it */
  QAIRT_VALIDATION_FAILED = 7,/* the graph or an encoding is inconsistent */
  QAIRT_IO_ERROR = 8,
  QAIRT_BUFFER_TOO_SMALL = 9  /* query-then-fill buffer shorter than needed */
};

/* Tensor element types. Integer types (QAIRT_DTYPE_INT*, UINT*) hold plain
 * integers (indices, shapes); fixed-point types (SFIXED/UFIXED) hold quantized
 * values whose meaning comes from an encoding, as in QNN. */
typedef uint32_t qairt_dtype_t;
enum qairt_dtype {
  QAIRT_DTYPE_UNDEFINED = 0,
  QAIRT_DTYPE_FLOAT32 = 1,
  QAIRT_DTYPE_FLOAT16 = 2,
  QAIRT_DTYPE_BFLOAT16 = 3,
  QAIRT_DTYPE_FLOAT64 = 4,
  QAIRT_DTYPE_BOOL = 5,
  QAIRT_DTYPE_INT2 = 6,
  QAIRT_DTYPE_INT4 = 7,
  QAIRT_DTYPE_INT8 = 8,
  QAIRT_DTYPE_INT16 = 9,
  QAIRT_DTYPE_INT32 = 10,
  QAIRT_DTYPE_INT64 = 11,
  QAIRT_DTYPE_UINT2 = 12,
  QAIRT_DTYPE_UINT4 = 13,
  QAIRT_DTYPE_UINT8 = 14,
  QAIRT_DTYPE_UINT16 = 15,
  QAIRT_DTYPE_UINT32 = 16,
  QAIRT_DTYPE_UINT64 = 17,
  QAIRT_DTYPE_SFIXED_POINT_2 = 18,
  QAIRT_DTYPE_SFIXED_POINT_4 = 19,
  QAIRT_DTYPE_SFIXED_POINT_8 = 20,
  QAIRT_DTYPE_SFIXED_POINT_16 = 21,
  QAIRT_DTYPE_SFIXED_POINT_32 = 22,
  QAIRT_DTYPE_UFIXED_POINT_2 = 23,
  QAIRT_DTYPE_UFIXED_POINT_4 = 24,
  QAIRT_DTYPE_UFIXED_POINT_8 = 25,
  QAIRT_DTYPE_UFIXED_POINT_16 = 26,
  QAIRT_DTYPE_UFIXED_POINT_32 = 27
};

/* What a tensor is to its graph (QNN tensor types in parentheses). */
typedef uint32_t qairt_tensor_role_t;
enum qairt_tensor_role {
  QAIRT_TENSOR_ROLE_INPUT = 1,        /* graph input (APP_WRITE) */
  QAIRT_TENSOR_ROLE_OUTPUT = 2,       /* produced, read by the app (APP_READ) */
  QAIRT_TENSOR_ROLE_INPUT_OUTPUT = 3, /* graph input also listed as output */
  QAIRT_TENSOR_ROLE_STATIC = 4,       /* constant data (STATIC) */
  QAIRT_TENSOR_ROLE_ACTIVATION = 5    /* produced and consumed inside (NATIVE) */
};

typedef uint32_t qairt_attr_type_t;
enum qairt_attr_type {
  QAIRT_ATTR_INT = 1,     /* data: const int64_t*, count 1 */
  QAIRT_ATTR_FLOAT = 2,   /* data: const double*, count 1 */
  QAIRT_ATTR_STRING = 3,  /* data: const char* (UTF-8), count 1 */
  QAIRT_ATTR_INTS = 4,    /* data: const int64_t[count] */
  QAIRT_ATTR_FLOATS = 5,  /* data: const double[count] */
  QAIRT_ATTR_STRINGS = 6  /* data: const char* const[count] */
};

/* Granularity of a quantization encoding (spec Appendix A and C). */
typedef uint32_t qairt_encoding_kind_t;
enum qairt_encoding_kind {
  QAIRT_ENCODING_FLOAT = 1,       /* kept in float16/float32, no scale */
  QAIRT_ENCODING_PER_TENSOR = 2,  /* one scale/offset */
  QAIRT_ENCODING_PER_CHANNEL = 3, /* one scale/offset per index of `axis` */
  QAIRT_ENCODING_PER_BLOCK = 4,   /* one scale/offset per block (block sizes per dim) */
  QAIRT_ENCODING_LPBQ = 5,        /* per-channel float scale x per-block int scale */
  QAIRT_ENCODING_ARRAY_OF = 6     /* sub-encodings chosen at run time by an index tensor */
};

typedef uint32_t qairt_symmetry_t;
enum qairt_symmetry {
  QAIRT_SYMMETRY_ASYMMETRIC = 0,
  QAIRT_SYMMETRY_SYMMETRIC = 1,          /* signed grid centred on 0: [-2^(b-1), 2^(b-1)-1] */
  QAIRT_SYMMETRY_STRICT_SYMMETRIC = 2,   /* signed, [-(2^(b-1)-1), 2^(b-1)-1] */
  QAIRT_SYMMETRY_UNSIGNED_SYMMETRIC = 3  /* unsigned grid with offset 0 (non-negative data) */
};

/* Formats of the *_render functions of reports. Diagnostics lists: TEXT is
 * one "file:line:col: severity: ..." line per diagnostic plus a summary, JSON
 * {"errors":N,"warnings":N,"notes":N,"diagnostics":[...]}, SARIF a SARIF 2.1.0
 * log. A report that has no SARIF form refuses it (QAIRT_UNSUPPORTED). */
typedef uint32_t qairt_report_format_t;
enum qairt_report_format { QAIRT_REPORT_TEXT = 1, QAIRT_REPORT_JSON = 2, QAIRT_REPORT_SARIF = 3 };

typedef uint32_t qairt_severity_t;
enum qairt_severity {
  QAIRT_SEVERITY_ERROR = 1,
  QAIRT_SEVERITY_WARNING = 2,
  QAIRT_SEVERITY_NOTE = 3
};

/* Kinds of problems reported by qairt_graph_validate and encoding checks. */
typedef uint32_t qairt_diag_kind_t;
enum qairt_diag_kind {
  QAIRT_DIAG_CYCLE = 1,               /* ops form a cycle */
  QAIRT_DIAG_DUPLICATE_TENSOR_NAME = 2,
  QAIRT_DIAG_DUPLICATE_OP_NAME = 3,
  QAIRT_DIAG_DANGLING_TENSOR = 4,     /* declared by name, never defined */
  QAIRT_DIAG_MISSING_PRODUCER = 5,    /* activation/output nobody produces */
  QAIRT_DIAG_MULTIPLE_PRODUCERS = 6,
  QAIRT_DIAG_DTYPE_MISMATCH = 7,
  QAIRT_DIAG_SHAPE_MISMATCH = 8,
  QAIRT_DIAG_ARITY = 9,               /* wrong number of inputs/outputs */
  QAIRT_DIAG_ATTRIBUTE = 10,          /* missing or invalid attribute */
  QAIRT_DIAG_UNKNOWN_OP_TYPE = 11,
  QAIRT_DIAG_INVALID_ENCODING = 12,
  QAIRT_DIAG_NO_OUTPUTS = 13,         /* graph has no outputs */
  QAIRT_DIAG_STATIC_DATA = 14         /* static tensor data size wrong */
};

/*===========================================================================*/
/* Version and status                                                        */
/*===========================================================================*/

/* (QAIRT_ABI_MAJOR << 16) | QAIRT_ABI_MINOR of the loaded library. Callers
 * should check the major equals the one they were compiled against. */
QAIRT_API uint32_t qairt_abi_version(void);
/* Library release, e.g. "0.1.0". Static storage. */
QAIRT_API const char* qairt_version_string(void);

/* NULL status => QAIRT_OK / "". */
QAIRT_API qairt_code_t qairt_status_code(const qairt_status_t* status);
QAIRT_API const char* qairt_status_message(const qairt_status_t* status);
QAIRT_API void qairt_status_free(qairt_status_t* status);

/*===========================================================================*/
/* Data types and op vocabulary                                              */
/*===========================================================================*/

/* Lower-case name, e.g. "float32", "sfixed_point_8", "uint4". "invalid" for an
 * unknown value. Static storage. */
QAIRT_API const char* qairt_dtype_name(qairt_dtype_t dtype);
/* The TRACE-log token: f32 f16 bf16 b8 is32 iu8 s8 u16 s4 ... und. */
QAIRT_API const char* qairt_dtype_short_name(qairt_dtype_t dtype);
/* Bits per element (1..64); 0 for UNDEFINED or an unknown value. */
QAIRT_API uint32_t qairt_dtype_bitwidth(qairt_dtype_t dtype);
/* Parses a name from qairt_dtype_name or qairt_dtype_short_name. */
QAIRT_API qairt_status_t* qairt_dtype_from_name(const char* name, qairt_dtype_t* out_dtype);

/* The registered op types (QNN names such as "Conv2d", "ElementWiseAdd"). */
QAIRT_API size_t qairt_op_type_count(void);
/* Static storage; NULL if index >= qairt_op_type_count(). */
QAIRT_API const char* qairt_op_type_name(size_t index);

/*===========================================================================*/
/* Graph construction                                                        */
/*===========================================================================*/

typedef struct qairt_graph_options {
  uint32_t struct_size; /* sizeof(qairt_graph_options) */
  uint32_t flags;       /* reserved, must be 0 */
  const char* name;     /* graph name, may be NULL ("graph") */
} qairt_graph_options;

QAIRT_API void qairt_graph_options_init(qairt_graph_options* options);
QAIRT_API qairt_status_t* qairt_graph_create(const qairt_graph_options* options,
                                             qairt_graph_t** out_graph);
/* Deep copy (static data that was borrowed stays borrowed). */
QAIRT_API qairt_status_t* qairt_graph_clone(const qairt_graph_t* graph, qairt_graph_t** out_graph);
QAIRT_API void qairt_graph_destroy(qairt_graph_t* graph);

/* Describes a tensor to create. dims[i] < 0 means unknown; dim_symbols (may be
 * NULL, or hold NULL entries) names symbolic dims such as "batch". rank may be
 * 0 (scalar). A tensor whose shape is not known at all is declared with
 * rank_known = 0. */
typedef struct qairt_tensor_desc {
  uint32_t struct_size;           /* sizeof(qairt_tensor_desc) */
  qairt_dtype_t dtype;            /* QAIRT_DTYPE_UNDEFINED allowed for activations */
  const char* name;               /* required, non-empty */
  size_t rank;
  const int64_t* dims;            /* rank entries (may be NULL when rank == 0) */
  const char* const* dim_symbols; /* optional, rank entries */
  uint32_t rank_known;            /* 1 (default) or 0: shape unknown */
  uint32_t reserved;              /* must be 0 */
} qairt_tensor_desc;

QAIRT_API void qairt_tensor_desc_init(qairt_tensor_desc* desc);

/* Graph input (APP_WRITE). */
QAIRT_API qairt_status_t* qairt_graph_add_input(qairt_graph_t* graph, const qairt_tensor_desc* desc,
                                                qairt_tensor_id* out_id);

/* Static tensor. data_size must equal the element count times the dtype's
 * size (sub-byte types packed, low bits first, rounded up to whole bytes).
 * The data is copied unless flags has QAIRT_CONSTANT_BORROW. */
#define QAIRT_CONSTANT_BORROW 1u
QAIRT_API qairt_status_t* qairt_graph_add_constant(qairt_graph_t* graph, const qairt_tensor_desc* desc,
                                                   const void* data, size_t data_size, uint32_t flags,
                                                   qairt_tensor_id* out_id);

/* Static tensor whose bytes are the window [offset, offset + length) of the
 * file at `path` (UTF-8), memory-mapped read-only: weights are not copied and
 * the mapping lives as long as any graph (or clone) using it. Fails naming
 * the file if it cannot be opened or the window does not fit inside it, and
 * naming the tensor if length does not match its shape and dtype. */
QAIRT_API qairt_status_t* qairt_graph_add_constant_mapped(qairt_graph_t* graph, const qairt_tensor_desc* desc,
                                                          const char* path, uint64_t offset, uint64_t length,
                                                          qairt_tensor_id* out_id);

/* Declares an activation tensor, to be produced by an op added later (or
 * already added: ops may reference tensors in any order). dtype and shape may
 * be left unknown; qairt_graph_add_op fills them by shape inference. */
QAIRT_API qairt_status_t* qairt_graph_add_tensor(qairt_graph_t* graph, const qairt_tensor_desc* desc,
                                                 qairt_tensor_id* out_id);

/* Marks a tensor as a graph output (APP_READ); order of calls = output order. */
QAIRT_API qairt_status_t* qairt_graph_mark_output(qairt_graph_t* graph, qairt_tensor_id tensor);

/* One attribute of an op. See qairt_attr_type for what `data` points to. */
typedef struct qairt_attr {
  const char* name;
  qairt_attr_type_t type;
  uint32_t reserved; /* must be 0 */
  size_t count;
  const void* data;
} qairt_attr;

typedef struct qairt_op_desc {
  uint32_t struct_size;           /* sizeof(qairt_op_desc) */
  uint32_t flags;                 /* reserved, must be 0 */
  const char* type;               /* QNN op type, e.g. "Conv2d" */
  const char* name;               /* unique op name, required */
  size_t num_inputs;
  const qairt_tensor_id* inputs;  /* QAIRT_INVALID_ID marks an absent optional input */
  size_t num_outputs;
  const qairt_tensor_id* outputs; /* tensors created by add_tensor */
  size_t num_attrs;
  const qairt_attr* attrs;
  const char* source_name;        /* framework node name, may be NULL */
  const char* source_op_type;     /* framework op type, e.g. "Conv", may be NULL */
} qairt_op_desc;

QAIRT_API void qairt_op_desc_init(qairt_op_desc* desc);

/* Adds an op. Arguments are checked at once (ids in range, attribute values
 * well-formed); graph-level consistency (names, producers, cycles, dtypes,
 * shapes) is checked by qairt_graph_validate, which reports every problem in
 * one call. Output tensors with unknown dtype/shape get them by inference. */
QAIRT_API qairt_status_t* qairt_graph_add_op(qairt_graph_t* graph, const qairt_op_desc* desc,
                                             qairt_op_id* out_id);

/* Rewires input `slot` of `op` to `tensor` (QAIRT_INVALID_ID = absent). */
QAIRT_API qairt_status_t* qairt_graph_set_op_input(qairt_graph_t* graph, qairt_op_id op, size_t slot,
                                                   qairt_tensor_id tensor);

/* Re-runs shape inference in topological order, filling unknown output dtypes
 * and shapes (declared ones are kept; validate reports disagreements). */
QAIRT_API qairt_status_t* qairt_graph_infer_shapes(qairt_graph_t* graph);

/*===========================================================================*/
/* Validation and diagnostics                                                */
/*===========================================================================*/

/* Diagnostics are one family: every producer — graph validation, encodings
 * files (qairt_encodings_diagnostics_t is this same list type), target
 * processing (qairt_process_result_diagnostics) and conversion
 * (qairt_convert_result_diagnostics) — hands out a qairt_diagnostics_t of
 * qairt_diagnostic records, read with the functions below and rendered as
 * text, JSON or SARIF 2.1.0. Each record has a stable rule id (`code`, the
 * catalogue is in include/qairt/README.md) and fills the location fields it
 * knows. Strings are borrowed until the list is destroyed or cleared. */
typedef struct qairt_diagnostic {
  uint32_t struct_size;      /* set by the caller */
  qairt_severity_t severity;
  qairt_diag_kind_t kind;    /* graph validation only; 0 otherwise */
  qairt_op_id op;            /* graph validation: the op; QAIRT_INVALID_ID otherwise */
  qairt_tensor_id tensor;    /* graph validation: the tensor; QAIRT_INVALID_ID otherwise */
  uint32_t reserved;
  const char* field;         /* e.g. "y_scale[3]", "inputs[1]"; "" if none */
  const char* message;       /* the sentence */
  /* 1.8 */
  const char* code;          /* stable rule id, e.g. "shape-mismatch", "unknown-tensor", "no-kernel" */
  const char* file;          /* source file as given; "" if none */
  uint32_t line;             /* 1-based; 0 = no location */
  uint32_t column;           /* 1-based, Unicode code points */
  const char* op_name;       /* "" if not about an op */
  const char* tensor_name;   /* "" if not about a tensor */
  const char* suggestion;    /* "did you mean" candidate; "" if none */
} qairt_diagnostic;

/* Checks the whole graph and reports every problem at once. Returns NULL when
 * there is no error-severity problem, otherwise QAIRT_VALIDATION_FAILED whose
 * message lists the problems one per line. If out_diagnostics is non-NULL it
 * receives every diagnostic, whether the call returns NULL or
 * QAIRT_VALIDATION_FAILED (the one exception to "out parameters untouched on
 * error"); it is left untouched on any other error. Free it with
 * qairt_diagnostics_destroy. */
QAIRT_API qairt_status_t* qairt_graph_validate(const qairt_graph_t* graph,
                                               qairt_diagnostics_t** out_diagnostics);
QAIRT_API size_t qairt_diagnostics_count(const qairt_diagnostics_t* diagnostics);
QAIRT_API qairt_status_t* qairt_diagnostics_get(const qairt_diagnostics_t* diagnostics, size_t index,
                                                qairt_diagnostic* out_diagnostic);
QAIRT_API void qairt_diagnostics_destroy(qairt_diagnostics_t* diagnostics);
/* 1.8: an empty list, to collect into (e.g. as the diagnostics argument of
 * the qairt_encodings_* functions). */
QAIRT_API qairt_status_t* qairt_diagnostics_create(qairt_diagnostics_t** out_diagnostics);
/* 1.8: number of records of the given severity (QAIRT_SEVERITY_*). */
QAIRT_API size_t qairt_diagnostics_count_severity(const qairt_diagnostics_t* diagnostics,
                                                  qairt_severity_t severity);
/* 1.8: all records rendered in `format` (qairt_report_format). Query-then-fill. */
QAIRT_API qairt_status_t* qairt_diagnostics_render(const qairt_diagnostics_t* diagnostics,
                                                   qairt_report_format_t format, char* buf, size_t capacity,
                                                   size_t* out_length);
/* 1.8: removes every record. */
QAIRT_API void qairt_diagnostics_clear(qairt_diagnostics_t* diagnostics);

/*===========================================================================*/
/* Files                                                                     */
/*===========================================================================*/

/* 1.10: writes `size` bytes to `path` the way the library writes its own
 * outputs: into an unnamed file in the destination's folder, fsynced, then
 * renamed over `path`. A reader never sees a partial file; on error (the
 * message names the path) and in a process killed while writing, `path`
 * keeps its old content (or stays absent) and no temporary is left (on
 * filesystems without O_TMPFILE, a hidden ".<name>.qairt-tmp-*" may be).
 * A symlink at `path` is replaced, never followed. For tools that write
 * files next to the library's (rendered diagnostics, plots). `data` may be
 * NULL when size is 0. */
QAIRT_API qairt_status_t* qairt_write_file_atomically(const char* path, const void* data, size_t size);

/*===========================================================================*/
/* Introspection                                                             */
/*===========================================================================*/

QAIRT_API const char* qairt_graph_name(const qairt_graph_t* graph);
QAIRT_API size_t qairt_graph_tensor_count(const qairt_graph_t* graph);
QAIRT_API size_t qairt_graph_op_count(const qairt_graph_t* graph);
QAIRT_API size_t qairt_graph_input_count(const qairt_graph_t* graph);
QAIRT_API size_t qairt_graph_output_count(const qairt_graph_t* graph);
QAIRT_API qairt_tensor_id qairt_graph_input(const qairt_graph_t* graph, size_t index);   /* INVALID if out of range */
QAIRT_API qairt_tensor_id qairt_graph_output(const qairt_graph_t* graph, size_t index);  /* INVALID if out of range */

/* Looks a tensor/op up by name (first definition if the name is duplicated). */
QAIRT_API qairt_status_t* qairt_graph_find_tensor(const qairt_graph_t* graph, const char* name,
                                                  qairt_tensor_id* out_id);
QAIRT_API qairt_status_t* qairt_graph_find_op(const qairt_graph_t* graph, const char* name, qairt_op_id* out_id);

typedef struct qairt_tensor_info {
  uint32_t struct_size;       /* set by the caller */
  qairt_dtype_t dtype;
  const char* name;
  qairt_tensor_role_t role;
  uint32_t rank_known;
  size_t rank;
  const int64_t* dims;        /* rank entries, -1 = unknown/symbolic */
  qairt_op_id producer;       /* QAIRT_INVALID_ID if none */
  uint32_t producer_slot;
  size_t num_consumers;
  uint32_t has_encoding;
  uint32_t static_data_borrowed; /* 1 if static data is not owned by the graph */
  size_t static_data_size;       /* bytes, 0 for non-static tensors */
} qairt_tensor_info;

QAIRT_API qairt_status_t* qairt_graph_tensor_info(const qairt_graph_t* graph, qairt_tensor_id tensor,
                                                  qairt_tensor_info* out_info);
/* Symbol of dim `index`, or NULL if it has none. */
QAIRT_API qairt_status_t* qairt_graph_tensor_dim_symbol(const qairt_graph_t* graph, qairt_tensor_id tensor,
                                                        size_t index, const char** out_symbol);
QAIRT_API qairt_status_t* qairt_graph_tensor_consumer(const qairt_graph_t* graph, qairt_tensor_id tensor,
                                                      size_t index, qairt_op_id* out_op, uint32_t* out_slot);
/* Borrowed pointer to the static data. */
QAIRT_API qairt_status_t* qairt_graph_tensor_data(const qairt_graph_t* graph, qairt_tensor_id tensor,
                                                  const void** out_data, size_t* out_size);

typedef struct qairt_op_info {
  uint32_t struct_size;   /* set by the caller */
  uint32_t reserved;
  const char* type;
  const char* name;
  const char* source_name;    /* "" if none */
  const char* source_op_type; /* "" if none */
  size_t num_inputs;
  const qairt_tensor_id* inputs;
  size_t num_outputs;
  const qairt_tensor_id* outputs;
  size_t num_attrs;
} qairt_op_info;

QAIRT_API qairt_status_t* qairt_graph_op_info(const qairt_graph_t* graph, qairt_op_id op,
                                              qairt_op_info* out_info);
/* Attributes in name order; the filled qairt_attr is borrowed. */
QAIRT_API qairt_status_t* qairt_graph_op_attr(const qairt_graph_t* graph, qairt_op_id op, size_t index,
                                              qairt_attr* out_attr);
QAIRT_API qairt_status_t* qairt_graph_op_find_attr(const qairt_graph_t* graph, qairt_op_id op,
                                                   const char* name, qairt_attr* out_attr);

/* Ops in a topological order (deterministic: breadth-first from the ops
 * without produced inputs, in insertion order).
 * Query-then-fill on `ops`; QAIRT_VALIDATION_FAILED if the graph has a cycle. */
QAIRT_API qairt_status_t* qairt_graph_topological_order(const qairt_graph_t* graph, qairt_op_id* ops,
                                                        size_t capacity, size_t* out_count);

/* JSON summary: name, counts, op-type histogram, inputs/outputs, every tensor
 * (dtype, shape, role, encoding) and every op. Query-then-fill. */
QAIRT_API qairt_status_t* qairt_graph_summary_json(const qairt_graph_t* graph, char* buf, size_t capacity,
                                                   size_t* out_length);

/* Structural comparison (names, dtypes, shapes, roles, ops, attributes,
 * encodings, static bytes). *out_equal = 1 if identical. If diff_buf is
 * non-NULL the first difference is written there, truncated to diff_capacity. */
QAIRT_API qairt_status_t* qairt_graph_compare(const qairt_graph_t* a, const qairt_graph_t* b, int32_t* out_equal,
                                              char* diff_buf, size_t diff_capacity);

/*===========================================================================*/
/* Encodings                                                                 */
/*===========================================================================*/
/* Convention (QNN): real = (q + offset) * scale, offset = -zero_point.
 *
 * Layouts:
 *  - PER_TENSOR: 1 scale, 1 offset.
 *  - PER_CHANNEL: scales/offsets, one per index of `axis`.
 *  - PER_BLOCK: block_sizes has one entry per tensor dim; the scale grid has
 *    ceil(dim_i / block_size_i) entries along dim i, stored row-major. Offsets
 *    are integer (set_offsets) or float (set_float_offsets), one per block.
 *    `axis` names the blocked axis.
 *  - LPBQ: block_sizes and `axis` (the blocked axis) as for PER_BLOCK;
 *    block_int_scales = one integer scale per block (row-major grid), each in
 *    [1, 2^(decompressed_bitwidth - bitwidth)]; scales = per-channel float
 *    scales: the block grid with the `axis` dim collapsed to 1 (so [O, I]
 *    with blocks [1, 32] has O scales). Offsets, if given, are all 0.
 *    Effective scale of a block = scale[channel] * block_int_scale[block].
 *  - ARRAY_OF: index_tensor + sub-encodings (PER_TENSOR or PER_CHANNEL).
 *  - FLOAT: dtype FLOAT16/FLOAT32/BFLOAT16, nothing else.
 * dtype is the quantized data type (e.g. SFIXED_POINT_8); bitwidth defaults
 * to the dtype's and may be smaller (e.g. 4-bit values in an 8-bit container).
 */

QAIRT_API qairt_status_t* qairt_encoding_create(qairt_encoding_kind_t kind, qairt_dtype_t dtype,
                                                qairt_encoding_t** out_encoding);
QAIRT_API qairt_status_t* qairt_encoding_clone(const qairt_encoding_t* encoding, qairt_encoding_t** out_encoding);
QAIRT_API void qairt_encoding_destroy(qairt_encoding_t* encoding);

QAIRT_API qairt_status_t* qairt_encoding_set_bitwidth(qairt_encoding_t* e, uint32_t bitwidth);
QAIRT_API qairt_status_t* qairt_encoding_set_symmetry(qairt_encoding_t* e, qairt_symmetry_t symmetry);
QAIRT_API qairt_status_t* qairt_encoding_set_overridden(qairt_encoding_t* e, int32_t overridden);
QAIRT_API qairt_status_t* qairt_encoding_set_axis(qairt_encoding_t* e, int32_t axis);
QAIRT_API qairt_status_t* qairt_encoding_set_scales(qairt_encoding_t* e, const float* scales, size_t count);
QAIRT_API qairt_status_t* qairt_encoding_set_offsets(qairt_encoding_t* e, const int32_t* offsets, size_t count);
QAIRT_API qairt_status_t* qairt_encoding_set_float_offsets(qairt_encoding_t* e, const float* offsets,
                                                           size_t count);
QAIRT_API qairt_status_t* qairt_encoding_set_block_sizes(qairt_encoding_t* e, const int64_t* block_sizes,
                                                         size_t rank);
QAIRT_API qairt_status_t* qairt_encoding_set_lpbq(qairt_encoding_t* e, const int32_t* block_int_scales,
                                                  size_t count, uint32_t decompressed_bitwidth);
QAIRT_API qairt_status_t* qairt_encoding_set_index_tensor(qairt_encoding_t* e, const char* index_tensor);
/* Appends a copy of `sub` (ARRAY_OF only). */
QAIRT_API qairt_status_t* qairt_encoding_add_sub_encoding(qairt_encoding_t* e, const qairt_encoding_t* sub);

QAIRT_API qairt_encoding_kind_t qairt_encoding_kind(const qairt_encoding_t* e);
QAIRT_API qairt_dtype_t qairt_encoding_dtype(const qairt_encoding_t* e);
QAIRT_API uint32_t qairt_encoding_bitwidth(const qairt_encoding_t* e);
QAIRT_API qairt_symmetry_t qairt_encoding_symmetry(const qairt_encoding_t* e);
QAIRT_API int32_t qairt_encoding_overridden(const qairt_encoding_t* e);
/* Axes are stored normalised (>= 0); -1 means none. */
QAIRT_API int32_t qairt_encoding_axis(const qairt_encoding_t* e);
QAIRT_API uint32_t qairt_encoding_decompressed_bitwidth(const qairt_encoding_t* e); /* LPBQ, else 0 */
/* Borrowed arrays; *out_count = 0 when absent. */
QAIRT_API void qairt_encoding_scales(const qairt_encoding_t* e, const float** out, size_t* out_count);
QAIRT_API void qairt_encoding_offsets(const qairt_encoding_t* e, const int32_t** out, size_t* out_count);
QAIRT_API void qairt_encoding_float_offsets(const qairt_encoding_t* e, const float** out, size_t* out_count);
QAIRT_API void qairt_encoding_block_sizes(const qairt_encoding_t* e, const int64_t** out, size_t* out_count);
QAIRT_API void qairt_encoding_block_int_scales(const qairt_encoding_t* e, const int32_t** out, size_t* out_count);
QAIRT_API const char* qairt_encoding_index_tensor(const qairt_encoding_t* e); /* "" if none */
QAIRT_API size_t qairt_encoding_sub_encoding_count(const qairt_encoding_t* e);
/* Borrowed; NULL if out of range. */
QAIRT_API const qairt_encoding_t* qairt_encoding_sub_encoding(const qairt_encoding_t* e, size_t index);
/* 1 if equal field by field (floats compared bit-exactly). */
QAIRT_API int32_t qairt_encoding_equal(const qairt_encoding_t* a, const qairt_encoding_t* b);

/* Checks `e` against the tensor it is set on and attaches a copy. Rejected
 * with QAIRT_VALIDATION_FAILED and a message naming the tensor and field
 * (scale <= 0 or non-finite, zero point outside the dtype's range, axis out
 * of range, block size not dividing the dim, wrong number of values, ...). */
QAIRT_API qairt_status_t* qairt_graph_set_encoding(qairt_graph_t* graph, qairt_tensor_id tensor,
                                                   const qairt_encoding_t* e);
/* Owned copy in *out_encoding, or NULL if the tensor has no encoding. */
QAIRT_API qairt_status_t* qairt_graph_get_encoding(const qairt_graph_t* graph, qairt_tensor_id tensor,
                                                   qairt_encoding_t** out_encoding);
QAIRT_API qairt_status_t* qairt_graph_clear_encoding(qairt_graph_t* graph, qairt_tensor_id tensor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_H_ */
