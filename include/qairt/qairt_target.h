/*
 * qairt_target.h - target descriptors: what a backend (HTP V68...V81, LPAI,
 * the CPU reference, Cloud AI 100, or a user's own NPU) can execute.
 *
 * A descriptor lists, per QNN op type, the kernels the target has (one per
 * precision configuration, with a set of dtypes and constraints per input and
 * output slot), the data-movement ops, the super groups, the conversions and
 * the capability flags. Built-in descriptors are compiled into the library;
 * user descriptors are loaded from a file or from bytes, either compiled
 * (FlatBuffer with file identifier "QATD", schema targets/schema/target.fbs)
 * or as JSON source. Every descriptor is verified and checked field by field
 * before use; a bad one is refused with a message naming the file and field.
 *
 * Conventions are those of qairt.h (status objects, struct_size, query-then-
 * fill, borrowed pointers, append-only enums). Since ABI 1.1.
 *
 * Threads: a qairt_target_t is immutable after load and may be used from any
 * number of threads at once; all functions here are thread-safe.
 */
#ifndef QAIRT_QAIRT_TARGET_H_
#define QAIRT_QAIRT_TARGET_H_

#include "qairt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_target_t qairt_target_t; /* immutable, thread-safe */

typedef uint32_t qairt_backend_t;
enum qairt_backend {
  QAIRT_BACKEND_UNKNOWN = 0,
  QAIRT_BACKEND_HTP = 1,   /* Hexagon NPU */
  QAIRT_BACKEND_LPAI = 2,  /* Low Power AI (eNPU) */
  QAIRT_BACKEND_CPU = 3,
  QAIRT_BACKEND_AIC = 4,   /* Cloud AI 100 */
  QAIRT_BACKEND_CUSTOM = 5 /* a user-defined target */
};

/* What an op slot holds. */
typedef uint32_t qairt_slot_role_t;
enum qairt_slot_role {
  QAIRT_SLOT_ACTIVATION = 0,
  QAIRT_SLOT_WEIGHT = 1,
  QAIRT_SLOT_BIAS = 2,
  QAIRT_SLOT_INDEX = 3 /* plain integer indices (Gather, Argmax output, ...) */
};

/* How a slot's scale must relate to the kernel's other slots. */
typedef uint32_t qairt_scale_rule_t;
enum qairt_scale_rule {
  QAIRT_SCALE_RULE_NONE = 0,
  QAIRT_SCALE_RULE_PRODUCT_OF_INPUTS = 1, /* scale = scale(in0) x scale(in1): int32 bias */
  QAIRT_SCALE_RULE_SAME_AS_INPUT = 2      /* output encoding = input encoding */
};

/* QNN op performing a conversion. */
typedef uint32_t qairt_convert_op_t;
enum qairt_convert_op {
  QAIRT_CONVERT_OP_CONVERT = 0,
  QAIRT_CONVERT_OP_CAST = 1,
  QAIRT_CONVERT_OP_QUANTIZE = 2,
  QAIRT_CONVERT_OP_DEQUANTIZE = 3
};

/* Capability bits of qairt_target_info.capabilities (positions frozen). */
#define QAIRT_TARGET_CAP_FP16_COMPUTE ((uint64_t)1 << 0)
#define QAIRT_TARGET_CAP_FP32_COMPUTE ((uint64_t)1 << 1)
#define QAIRT_TARGET_CAP_INT16_ACTIVATIONS ((uint64_t)1 << 2)
#define QAIRT_TARGET_CAP_A16W16 ((uint64_t)1 << 3)   /* 16-bit x 16-bit Conv/MatMul/FC */
#define QAIRT_TARGET_CAP_INT4_WEIGHTS ((uint64_t)1 << 4)
#define QAIRT_TARGET_CAP_PER_CHANNEL_WEIGHTS ((uint64_t)1 << 5)
#define QAIRT_TARGET_CAP_BLOCK_WEIGHTS ((uint64_t)1 << 6)
#define QAIRT_TARGET_CAP_LPBQ_WEIGHTS ((uint64_t)1 << 7)

/*===========================================================================*/
/* Built-in descriptors and loading                                          */
/*===========================================================================*/

/* Names of the built-in descriptors ("htp_v73", "lpai_v6", "cpu", ...), in
 * name order. Static storage; NULL if index >= qairt_target_builtin_count(). */
QAIRT_API size_t qairt_target_builtin_count(void);
QAIRT_API const char* qairt_target_builtin_name(size_t index);

/* Owned results: free with qairt_target_destroy. QAIRT_NOT_FOUND for an
 * unknown name (the message lists the built-in names). */
QAIRT_API qairt_status_t* qairt_target_load_builtin(const char* name, qairt_target_t** out_target);
/* A compiled descriptor or its JSON source (told apart by the "QATD"
 * identifier). Refused: files over 32 MiB, truncated or corrupt buffers,
 * another file identifier, a min_reader_version newer than this library
 * (QAIRT_UNSUPPORTED), unknown op names, out-of-range enum values,
 * inconsistent slots. */
QAIRT_API qairt_status_t* qairt_target_load_file(const char* path, qairt_target_t** out_target);
/* Same, from memory (copied; the caller's buffer may be freed afterwards). */
QAIRT_API qairt_status_t* qairt_target_load_bytes(const void* data, size_t size, qairt_target_t** out_target);
/* A built-in name if `name_or_path` is one, else a file (what
 * `qairt convert --target` and `qairt targets show` accept). */
QAIRT_API qairt_status_t* qairt_target_load(const char* name_or_path, qairt_target_t** out_target);
/* The built-in target of a SoC: "SM8550" (case-insensitive) or its
 * QNN_SOC_MODEL number ("43") -> htp_v73. HTP is preferred when a SoC also
 * has LPAI. QAIRT_NOT_FOUND for an unknown SoC. */
QAIRT_API qairt_status_t* qairt_target_for_soc(const char* soc, qairt_target_t** out_target);
QAIRT_API void qairt_target_destroy(qairt_target_t* target);

/*===========================================================================*/
/* Target-level information                                                  */
/*===========================================================================*/

typedef struct qairt_target_info {
  uint32_t struct_size; /* set by the caller */
  qairt_backend_t backend;
  const char* name;
  const char* description;
  const char* origin;   /* "built-in htp_v73", a file path or "<bytes>" */
  uint32_t arch_version; /* HTP 68..81, LPAI 6; 0 = not applicable */
  uint32_t schema_version;
  uint32_t min_reader_version;
  qairt_dtype_t default_float_dtype; /* dtype of tensors without encodings; UNDEFINED = none */
  uint64_t capabilities;             /* QAIRT_TARGET_CAP_* bits */
  size_t num_ops;                    /* ops with kernels: qairt_target_op_name */
  size_t num_socs;
  size_t num_data_movement_ops;
  size_t num_super_groups;
  size_t num_sources;
} qairt_target_info;

/* Strings in the filled struct are borrowed from the target. */
QAIRT_API qairt_status_t* qairt_target_get_info(const qairt_target_t* target, qairt_target_info* out_info);
/* Borrowed; NULL if index is out of range. Op names are in name order. */
QAIRT_API const char* qairt_target_op_name(const qairt_target_t* target, size_t index);
QAIRT_API const char* qairt_target_data_movement_op(const qairt_target_t* target, size_t index);
QAIRT_API const char* qairt_target_source(const qairt_target_t* target, size_t index);
/* 1 if `op_type` is a data-movement op of the target (its output encoding
 * must equal its input's), else 0. */
QAIRT_API int32_t qairt_target_is_data_movement(const qairt_target_t* target, const char* op_type);
/* Bit (1 << qairt_convert_op) for each op that converts `from` to `to`;
 * 0 if the target cannot (or from == to). */
QAIRT_API uint32_t qairt_target_conversion_ops(const qairt_target_t* target, qairt_dtype_t from, qairt_dtype_t to);

typedef struct qairt_target_soc {
  uint32_t struct_size; /* set by the caller */
  uint32_t soc_model;   /* QNN_SOC_MODEL_* value; 0 = unknown */
  const char* name;     /* e.g. "SM8550". Borrowed. */
  uint32_t vtcm_mb;     /* 0 = unknown */
  uint32_t reserved;
} qairt_target_soc;
QAIRT_API qairt_status_t* qairt_target_get_soc(const qairt_target_t* target, size_t index, qairt_target_soc* out_soc);

typedef struct qairt_super_group {
  uint32_t struct_size; /* set by the caller */
  uint32_t reserved;
  size_t num_ops;
  const char* const* ops; /* QNN op types in chain order. Borrowed. */
  const char* note;       /* "" if none. Borrowed. */
} qairt_super_group;
QAIRT_API qairt_status_t* qairt_target_get_super_group(const qairt_target_t* target, size_t index,
                                                       qairt_super_group* out_group);

/*===========================================================================*/
/* Kernels of an op                                                          */
/*===========================================================================*/

/* Number of kernels the target has for `op_type` (0 if none).
 * QAIRT_NOT_FOUND if `op_type` is not a registered op type. */
QAIRT_API qairt_status_t* qairt_target_kernel_count(const qairt_target_t* target, const char* op_type,
                                                    size_t* out_count);

typedef struct qairt_kernel_info {
  uint32_t struct_size;         /* set by the caller */
  uint32_t accuracy_preserving; /* 0: exists but loses precision; never selected */
  const char* name;             /* e.g. "a16w8", "fp16". Borrowed. */
  size_t num_inputs;            /* input slots described */
  size_t num_outputs;
  uint32_t variadic_inputs;     /* 1: the last input slot repeats (Concat) */
  uint32_t reserved;
  const char* note;             /* "" if none. Borrowed. */
} qairt_kernel_info;
QAIRT_API qairt_status_t* qairt_target_kernel_info(const qairt_target_t* target, const char* op_type,
                                                   size_t kernel_index, qairt_kernel_info* out_info);

#define QAIRT_SLOT_INPUT 0u
#define QAIRT_SLOT_OUTPUT 1u

typedef struct qairt_kernel_slot {
  uint32_t struct_size;       /* set by the caller */
  qairt_slot_role_t role;
  uint32_t optional;          /* inputs only: may be absent */
  uint32_t symmetry_mask;     /* bit (1 << qairt_symmetry) per allowed symmetry; 0 = any */
  uint32_t granularity_mask;  /* bit (1 << qairt_encoding_kind) per allowed kind; 0 = any */
  int32_t channel_axis;       /* required per-channel/block axis; -1 = any */
  size_t num_dtypes;
  const qairt_dtype_t* dtypes; /* allowed dtypes. Borrowed. */
  uint32_t block_size_min;     /* 0 = no rule */
  uint32_t block_size_multiple;/* 0 = no rule */
  qairt_scale_rule_t scale_rule;
  uint32_t has_value_range;    /* 1: the encoding must cover exactly [range_min, range_max] */
  double range_min;
  double range_max;
  size_t num_fixed_encodings;  /* see qairt_target_kernel_fixed_encoding */
  const char* note;            /* "" if none. Borrowed. */
} qairt_kernel_slot;
/* `direction` is QAIRT_SLOT_INPUT or QAIRT_SLOT_OUTPUT. */
QAIRT_API qairt_status_t* qairt_target_kernel_slot(const qairt_target_t* target, const char* op_type,
                                                   size_t kernel_index, uint32_t direction, size_t slot_index,
                                                   qairt_kernel_slot* out_slot);

/* An encoding the slot must use when it has `dtype`
 * (real = (q + offset) * scale). */
typedef struct qairt_fixed_encoding {
  uint32_t struct_size; /* set by the caller */
  qairt_dtype_t dtype;
  int32_t offset;
  uint32_t reserved;
  double scale;
} qairt_fixed_encoding;
QAIRT_API qairt_status_t* qairt_target_kernel_fixed_encoding(const qairt_target_t* target, const char* op_type,
                                                             size_t kernel_index, uint32_t direction,
                                                             size_t slot_index, size_t index,
                                                             qairt_fixed_encoding* out_encoding);

/* The first kernel of `op_type` whose slot dtype sets contain the given
 * dtypes (QAIRT_DTYPE_UNDEFINED marks an absent optional input). Sets
 * *out_found to 1 and *out_kernel_index, or *out_found to 0 if none matches.
 * Constraints other than dtypes (symmetry, granularity, ...) are not
 * checked here. */
QAIRT_API qairt_status_t* qairt_target_find_kernel(const qairt_target_t* target, const char* op_type,
                                                   const qairt_dtype_t* inputs, size_t num_inputs,
                                                   const qairt_dtype_t* outputs, size_t num_outputs,
                                                   int32_t* out_found, size_t* out_kernel_index);

/*===========================================================================*/
/* Dumps                                                                     */
/*===========================================================================*/

/* The descriptor as JSON (the schema's JSON form: it loads back with
 * qairt_target_load_bytes), or only one op's kernels when op_type is non-NULL
 * and non-empty (QAIRT_NOT_FOUND if the target has none). Query-then-fill. */
QAIRT_API qairt_status_t* qairt_target_to_json(const qairt_target_t* target, const char* op_type, char* buf,
                                               size_t capacity, size_t* out_length);

#define QAIRT_TARGET_DIFF_TEXT 0u
#define QAIRT_TARGET_DIFF_JSON 1u
/* What changes from a to b: properties, capabilities, SoCs, ops and kernels
 * added/removed/changed, data-movement ops, super groups and conversions.
 * Query-then-fill. */
QAIRT_API qairt_status_t* qairt_target_diff(const qairt_target_t* a, const qairt_target_t* b, uint32_t format,
                                            char* buf, size_t capacity, size_t* out_length);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_TARGET_H_ */
