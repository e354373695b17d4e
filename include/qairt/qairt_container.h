/*
 * qairt_container.h - the .qairt container: a processed graph (every tensor,
 * encoding, quantized and packed static byte, op and attribute) plus what
 * the converter decided: the target name, the resolved options namespace
 * (every option with its final value and where it came from: "did my
 * settings take effect?"), the kernel selected for each op and why the
 * passes touched each tensor.
 *
 * The file is a FlatBuffer with file identifier "QAIR" (schema
 * lib/container/schema/container.fbs, versioned: a file that needs a newer
 * reader is refused with QAIRT_UNSUPPORTED) followed by a data section that
 * holds the static tensors' bytes (streamed from the weights when written,
 * mapped in place when loaded). Writing is deterministic (identical graph
 * and metadata give identical bytes) and atomic. Loading checks sizes, the
 * FlatBuffers verifier, then every field, and validates the graph; errors
 * name the field, tensor or op. The FlatBuffer part (graph and metadata,
 * without the weights) is limited to 2 GiB; the weights are not.
 *
 * Conventions are those of qairt.h (status objects, struct_size, query-then-
 * fill, borrowed pointers, append-only enums). Since ABI 1.3.
 *
 * Threads: a qairt_container_t is immutable after load; any number of threads
 * may query it at once.
 */
#ifndef QAIRT_QAIRT_CONTAINER_H_
#define QAIRT_QAIRT_CONTAINER_H_

#include "qairt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_container_t qairt_container_t; /* immutable, thread-safe */

/* Where an option's final value came from. */
typedef uint32_t qairt_option_source_t;
enum qairt_option_source {
  QAIRT_OPTION_SOURCE_DEFAULT = 0, /* the converter's default */
  QAIRT_OPTION_SOURCE_USER = 1,    /* set on the command line / by the caller */
  QAIRT_OPTION_SOURCE_TARGET = 2   /* decided by the target descriptor */
};

/* One entry of the resolved options namespace. Fixed layout (no struct_size):
 * used in arrays. Strings borrowed. */
typedef struct qairt_container_option {
  const char* key;   /* non-empty, unique within a container */
  const char* value; /* NULL reads as "" */
  qairt_option_source_t source;
  uint32_t reserved; /* must be 0 */
} qairt_container_option;

/* What kernel selection decided for one op. Fixed layout, used in arrays. */
typedef struct qairt_container_op_annotation {
  const char* op_name;   /* an op of the graph */
  const char* kernel;    /* selected kernel name; NULL reads as "" */
  int32_t super_group;   /* super group id, -1 = none */
  uint32_t adapted;      /* 1 if the op's requested dtypes were adapted */
} qairt_container_op_annotation;

/* Why the passes touched a tensor: the INFO log's reason tokens, '^'-joined.
 * Fixed layout, used in arrays. */
typedef struct qairt_container_tensor_note {
  const char* tensor_name; /* a tensor of the graph */
  const char* reasons;     /* NULL reads as "" */
} qairt_container_tensor_note;

/* What to store next to the graph. Arrays are read during the call only. */
typedef struct qairt_container_write_options {
  uint32_t struct_size; /* sizeof(qairt_container_write_options) */
  uint32_t flags;       /* reserved, must be 0 */
  const char* target_name; /* NULL = none */
  size_t num_options;
  const qairt_container_option* options;             /* in namespace order */
  size_t num_op_annotations;
  const qairt_container_op_annotation* op_annotations;
  size_t num_tensor_notes;
  const qairt_container_tensor_note* tensor_notes;
  const char* stats_summary; /* since 1.9: the processing's stats summary; NULL = none */
} qairt_container_write_options;

QAIRT_API void qairt_container_write_options_init(qairt_container_write_options* options);

/* Writes `graph` and the metadata in `options` (may be NULL: none) to `path`
 * atomically: temporary file in the same folder, fsync, rename; on failure
 * nothing is left at `path` (an existing file stays untouched). Fails with
 * QAIRT_VALIDATION_FAILED if the graph does not validate, an option key is
 * empty or repeated, or an annotation/note names an unknown op/tensor;
 * QAIRT_UNSUPPORTED if the graph and metadata alone exceed 2 GiB;
 * QAIRT_IO_ERROR naming the path. */
QAIRT_API qairt_status_t* qairt_container_write_file(const qairt_graph_t* graph, const char* path,
                                                     const qairt_container_write_options* options);

/* The container bytes, query-then-fill: with buf = NULL, *out_size receives
 * the size; then call again with capacity >= that size (the container is
 * serialized on each call). QAIRT_BUFFER_TOO_SMALL if capacity is short. */
QAIRT_API qairt_status_t* qairt_container_write_bytes(const qairt_graph_t* graph,
                                                      const qairt_container_write_options* options, void* buf,
                                                      size_t capacity, size_t* out_size);

/* Loads a container. From a file, static tensors borrow their bytes from a
 * read-only mapping that lives as long as any graph using it; from bytes,
 * everything is copied. QAIRT_PARSE_ERROR for a file that is not a
 * container, truncated or corrupt; QAIRT_UNSUPPORTED if it needs a newer
 * reader; QAIRT_VALIDATION_FAILED naming the field otherwise. */
QAIRT_API qairt_status_t* qairt_container_load_file(const char* path, qairt_container_t** out_container);
QAIRT_API qairt_status_t* qairt_container_load_bytes(const void* data, size_t size,
                                                     qairt_container_t** out_container);
QAIRT_API void qairt_container_destroy(qairt_container_t* container);

typedef struct qairt_container_info {
  uint32_t struct_size;        /* set by the caller */
  uint32_t schema_version;     /* schema the file was written against */
  uint32_t min_reader_version; /* oldest reader that may read it */
  uint32_t reserved;
  const char* producer;        /* "qairt 0.1.0". Borrowed. */
  const char* target_name;     /* "" if none. Borrowed. */
  size_t num_options;
  size_t num_op_annotations;
  size_t num_tensor_notes;
  const char* stats_summary;   /* since 1.9: "" if none (or a file of schema 1). Borrowed. */
} qairt_container_info;

QAIRT_API qairt_status_t* qairt_container_get_info(const qairt_container_t* container,
                                                   qairt_container_info* out_info);

/* The stored graph as a new, owned graph (free with qairt_graph_destroy).
 * Static data is shared with the container, not copied. */
QAIRT_API qairt_status_t* qairt_container_get_graph(const qairt_container_t* container, qairt_graph_t** out_graph);

/* Entries by index (QAIRT_INVALID_ARGUMENT if out of range); strings
 * borrowed. Since ABI 1.7 (the naming table of include/qairt/README.md);
 * the *_at spellings below are the same functions. */
QAIRT_API qairt_status_t* qairt_container_get_option(const qairt_container_t* container, size_t index,
                                                     qairt_container_option* out_option);
QAIRT_API qairt_status_t* qairt_container_get_op_annotation(const qairt_container_t* container, size_t index,
                                                            qairt_container_op_annotation* out_annotation);
QAIRT_API qairt_status_t* qairt_container_get_tensor_note(const qairt_container_t* container, size_t index,
                                                          qairt_container_tensor_note* out_note);
/* Older spellings of the three above. */
QAIRT_API qairt_status_t* qairt_container_option_at(const qairt_container_t* container, size_t index,
                                                    qairt_container_option* out_option);
/* QAIRT_NOT_FOUND if no option has that key. */
QAIRT_API qairt_status_t* qairt_container_find_option(const qairt_container_t* container, const char* key,
                                                      qairt_container_option* out_option);
QAIRT_API qairt_status_t* qairt_container_op_annotation_at(const qairt_container_t* container, size_t index,
                                                           qairt_container_op_annotation* out_annotation);
QAIRT_API qairt_status_t* qairt_container_tensor_note_at(const qairt_container_t* container, size_t index,
                                                         qairt_container_tensor_note* out_note);

/* "default", "user", "target"; "invalid" otherwise. Static storage. */
QAIRT_API const char* qairt_option_source_name(qairt_option_source_t source);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_CONTAINER_H_ */
