/*
 * qairt_encodings.h - quantization encodings files in the qairt C ABI.
 *
 * Reads QAIRT 2.0.0 ({"version": "2.0.0", "encodings": [...]} or a bare
 * list), AIMET 1.0.0 and the AIMET legacy family 0.4.0/0.5.0/0.6.1 (also the
 * classic --quantization_overrides format); applies the entries to a graph;
 * writes any graph's encodings (or a loaded file) as 2.0.0, 1.0.0 or 0.6.1.
 *
 * Every problem is a diagnostic with severity, a stable rule id, file,
 * line and column (1-based, in Unicode code points), tensor, JSON field and a
 * message, collected in a qairt_encodings_diagnostics_t the caller creates
 * and passes to each call; it renders as text, JSON or SARIF 2.1.0.
 *
 * Conversions (QNN convention real = (q + offset) * scale, offset =
 * -zero_point): 2.0.0 y_zero_point is the zero point on the output_dtype
 * grid; 0.6.1/1.0.0 offsets are on the unsigned grid of the bitwidth (a
 * symmetric int8 tensor has offset -128). Per-channel and 1.0.0 blockwise
 * axes, which those formats do not store, are inferred from the tensor's
 * consumer when applied (conv weight: output channels, axis 0; TransposeConv:
 * axis 1; FullyConnected [N,K]: axis 0; MatMul [K,N]: axis 1).
 *
 * Same conventions as qairt.h (status objects, struct_size + _init,
 * query-then-fill, append-only enums, ownership). A qairt_encodings_t is
 * immutable once loaded and may be shared between threads; a diagnostics
 * collector is thread-compatible. Since ABI 1.2.
 *
 * Memory: to read large files repeatedly at full speed, each thread that
 * loads a file keeps its JSON parser's buffers (~5x the largest file it read)
 * and one released text buffer (1x) for the next load, for files up to
 * 256 MiB; they are freed when the thread exits.
 */
#ifndef QAIRT_QAIRT_ENCODINGS_H_
#define QAIRT_QAIRT_ENCODINGS_H_

#include "qairt/qairt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_encodings_t qairt_encodings_t;                         /* a loaded file, immutable */
/* The diagnostics collector is the library's one list type (qairt.h): the
 * qairt_diagnostics_* functions work on it too. */
typedef qairt_diagnostics_t qairt_encodings_diagnostics_t;

typedef uint32_t qairt_encodings_version_t;
enum qairt_encodings_version {
  QAIRT_ENCODINGS_VERSION_AUTO = 0,  /* detect (read) */
  QAIRT_ENCODINGS_VERSION_0_6_1 = 1, /* AIMET legacy 0.4.0/0.5.0/0.6.1 (read); 0.6.1 (write) */
  QAIRT_ENCODINGS_VERSION_1_0_0 = 2, /* AIMET 1.0.0 */
  QAIRT_ENCODINGS_VERSION_2_0_0 = 3  /* QAIRT JSON schema 2.0.0 */
};

/* qairt_report_format_t (TEXT, JSON, SARIF) is declared in qairt.h. */

/*---------------------------------------------------------------------------*/
/* Diagnostics                                                               */
/*---------------------------------------------------------------------------*/

QAIRT_API qairt_status_t* qairt_encodings_diagnostics_create(qairt_encodings_diagnostics_t** out_diagnostics);
QAIRT_API void qairt_encodings_diagnostics_destroy(qairt_encodings_diagnostics_t* diagnostics);
QAIRT_API size_t qairt_encodings_diagnostics_count(const qairt_encodings_diagnostics_t* diagnostics);
/* Number of diagnostics of the given severity (QAIRT_SEVERITY_*). */
QAIRT_API size_t qairt_encodings_diagnostics_count_severity(const qairt_encodings_diagnostics_t* diagnostics,
                                                            qairt_severity_t severity);

typedef struct qairt_encodings_diagnostic {
  uint32_t struct_size;      /* set by the caller */
  qairt_severity_t severity;
  uint32_t line;             /* 1-based; 0 = no location */
  uint32_t column;           /* 1-based, Unicode code points */
  uint64_t byte_offset;      /* UINT64_MAX = none */
  const char* code;          /* stable rule id, e.g. "json-duplicate-key", "unknown-tensor" */
  const char* file;          /* file name as given; "" if none */
  const char* tensor;        /* "" if none */
  const char* field;         /* JSON field, e.g. "y_scale[3]"; "" if none */
  const char* message;       /* the sentence, without location */
  const char* suggestion;    /* "did you mean" tensor name; "" if none */
} qairt_encodings_diagnostic;

/* Borrowed strings, valid until the collector is destroyed or cleared. */
QAIRT_API qairt_status_t* qairt_encodings_diagnostics_get(const qairt_encodings_diagnostics_t* diagnostics,
                                                          size_t index, qairt_encodings_diagnostic* out_diagnostic);
/* All diagnostics rendered in `format`. Query-then-fill. */
QAIRT_API qairt_status_t* qairt_encodings_diagnostics_render(const qairt_encodings_diagnostics_t* diagnostics,
                                                             qairt_report_format_t format, char* buf,
                                                             size_t capacity, size_t* out_length);
QAIRT_API void qairt_encodings_diagnostics_clear(qairt_encodings_diagnostics_t* diagnostics);

/*---------------------------------------------------------------------------*/
/* Loading                                                                   */
/*---------------------------------------------------------------------------*/

#define QAIRT_ENCODINGS_LOAD_STRICT 1u /* any error fails the load (default: bad entries are dropped and reported) */

typedef struct qairt_encodings_load_options {
  uint32_t struct_size;              /* sizeof(qairt_encodings_load_options) */
  uint32_t flags;                    /* QAIRT_ENCODINGS_LOAD_* */
  qairt_encodings_version_t version; /* AUTO (default) or a version to force */
  uint32_t max_depth;                /* JSON nesting limit; 0 = 64 */
  uint64_t max_bytes;                /* file size limit; 0 = 1 GiB */
} qairt_encodings_load_options;

QAIRT_API void qairt_encodings_load_options_init(qairt_encodings_load_options* options);

/* Loads an encodings file. Fails with QAIRT_IO_ERROR (unreadable) or
 * QAIRT_PARSE_ERROR (not JSON, limits exceeded, not an encodings document;
 * with QAIRT_ENCODINGS_LOAD_STRICT also any bad entry), naming file, line and
 * column. Without STRICT, entries with errors are dropped and the load
 * succeeds: check qairt_encodings_diagnostics_count_severity(ERROR).
 * `diagnostics` may be NULL; options may be NULL (defaults). */
QAIRT_API qairt_status_t* qairt_encodings_load_file(const char* path, const qairt_encodings_load_options* options,
                                                    qairt_encodings_diagnostics_t* diagnostics,
                                                    qairt_encodings_t** out_encodings);
/* Same for a buffer (copied); `name` is used in messages (may be NULL). */
QAIRT_API qairt_status_t* qairt_encodings_load_bytes(const void* data, size_t size, const char* name,
                                                     const qairt_encodings_load_options* options,
                                                     qairt_encodings_diagnostics_t* diagnostics,
                                                     qairt_encodings_t** out_encodings);
QAIRT_API void qairt_encodings_destroy(qairt_encodings_t* encodings);

/* The version the file was read as. */
QAIRT_API qairt_encodings_version_t qairt_encodings_version(const qairt_encodings_t* encodings);
QAIRT_API size_t qairt_encodings_entry_count(const qairt_encodings_t* encodings);
/* Tensor name of entry `index` (file order); NULL if out of range. Borrowed. */
QAIRT_API const char* qairt_encodings_entry_name(const qairt_encodings_t* encodings, size_t index);
/* Owned copy of the entry's encoding as read. Axes the file does not store
 * are -1 and 1.0.0/2.0.0 blockwise block_sizes are empty until applied. */
QAIRT_API qairt_status_t* qairt_encodings_entry_encoding(const qairt_encodings_t* encodings, size_t index,
                                                         qairt_encoding_t** out_encoding);

/*---------------------------------------------------------------------------*/
/* Applying                                                                  */
/*---------------------------------------------------------------------------*/

#define QAIRT_ENCODINGS_APPLY_ALLOW_UNMATCHED 1u /* names absent from the graph: warnings, not errors */
#define QAIRT_ENCODINGS_APPLY_KEEP_GOING 2u      /* apply the good entries even when others fail */
#define QAIRT_ENCODINGS_APPLY_NO_MISSING_NOTE 4u /* no note listing float tensors left without an encoding */

typedef struct qairt_encodings_apply_options {
  uint32_t struct_size; /* sizeof(qairt_encodings_apply_options) */
  uint32_t flags;       /* QAIRT_ENCODINGS_APPLY_* */
} qairt_encodings_apply_options;

QAIRT_API void qairt_encodings_apply_options_init(qairt_encodings_apply_options* options);

/* Applies every entry to the tensor of the same name (exact, byte-wise).
 * Overrides take precedence over encodings from the model's Q-DQ nodes;
 * every applied encoding is marked overridden. Unmatched names get "did you
 * mean" suggestions. Returns QAIRT_VALIDATION_FAILED if any error was found;
 * without KEEP_GOING the graph is then unchanged. */
QAIRT_API qairt_status_t* qairt_encodings_apply(const qairt_encodings_t* encodings, qairt_graph_t* graph,
                                                const qairt_encodings_apply_options* options,
                                                qairt_encodings_diagnostics_t* diagnostics);

/* Since ABI 1.17: qairt_encodings_load_file followed by qairt_encodings_apply
 * in one call, for a caller that needs the file only to apply it: the same
 * graph, status and diagnostics (in the same order). A large 2.0.0 file's
 * entries are applied as they are read, on the reader's threads, and never
 * all held in memory (a 100 MB file: ~85 MB less to allocate; convert's
 * quantization overrides are read this way). Either options may be NULL. */
QAIRT_API qairt_status_t* qairt_encodings_apply_file(const char* path,
                                                     const qairt_encodings_load_options* load_options,
                                                     qairt_graph_t* graph,
                                                     const qairt_encodings_apply_options* apply_options,
                                                     qairt_encodings_diagnostics_t* diagnostics);

/*---------------------------------------------------------------------------*/
/* Writing                                                                   */
/*---------------------------------------------------------------------------*/

typedef struct qairt_encodings_write_options {
  uint32_t struct_size;              /* sizeof(qairt_encodings_write_options) */
  uint32_t flags;                    /* reserved, must be 0 */
  qairt_encodings_version_t version; /* 0_6_1, 1_0_0 or 2_0_0 (AUTO = 2_0_0) */
  uint32_t reserved;                 /* must be 0 */
} qairt_encodings_write_options;

QAIRT_API void qairt_encodings_write_options_init(qairt_encodings_write_options* options);

/* Serializes encodings. Source: `encodings` if non-NULL (entries in file
 * order; with `graph` as well, the file is first applied to it so axes and
 * block shapes come from the tensors), else every encoding of `graph`.
 * Deterministic bytes. QAIRT_UNSUPPORTED naming the tensor when the version
 * cannot hold an encoding (e.g. Array-Of in 0.6.1). Query-then-fill (the
 * document is produced on each call). */
QAIRT_API qairt_status_t* qairt_encodings_write_bytes(const qairt_encodings_t* encodings, const qairt_graph_t* graph,
                                                      const qairt_encodings_write_options* options,
                                                      qairt_encodings_diagnostics_t* diagnostics, char* buf,
                                                      size_t capacity, size_t* out_length);
/* Same, written atomically to `path` (temporary file + rename): on any error
 * `path` is untouched and no temporary file is left. */
QAIRT_API qairt_status_t* qairt_encodings_write_file(const qairt_encodings_t* encodings, const qairt_graph_t* graph,
                                                     const char* path, const qairt_encodings_write_options* options,
                                                     qairt_encodings_diagnostics_t* diagnostics);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_ENCODINGS_H_ */
