/*
 * qairt_report.h - the HTML report of a converted graph.
 *
 * One self-contained HTML file (inline style, script and data; it fetches
 * nothing, its Content-Security-Policy forbids it): the graph laid out top to
 * bottom, every op coloured by the precision it computes in (int4, int8,
 * int16, fp16, fp32, ...), converts and float fallbacks marked, super groups
 * outlined; clicking an op shows its type, source node, kernel, super group,
 * every input and output tensor with its encoding (kind, data type, scales,
 * offsets, range, axis, blocks) and the reasons the passes gave, and the
 * diagnostics naming it. With an accuracy report, each op carries the SQNR of
 * its output against the float model and a table lists the worst tensors;
 * the stats summary, the sensitivity plot, the resolved options and all
 * diagnostics follow the graph. Large graphs come in collapsible sections of
 * rows and can be searched by op name or type.
 *
 * Each op is one element with `data-op="<op name>"` (HTML-escaped), so tools
 * and tests can find it; the page sets `data-ready="1"` on <body> when its
 * script has run and counts uncaught script errors in `data-js-errors`.
 * Deep links: REPORT.html#op=<op name> selects that op, #search=<text>
 * searches (both URI-encoded).
 *
 * Every source of information is optional: a report of a bare graph shows the
 * graph and its encodings. Same conventions as qairt.h. Since ABI 1.9.
 */
#ifndef QAIRT_QAIRT_REPORT_H_
#define QAIRT_QAIRT_REPORT_H_

#include "qairt/qairt.h"
#include "qairt/qairt_analyze.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_process.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qairt_html_report_options {
  uint32_t struct_size; /* sizeof(qairt_html_report_options) */
  uint32_t flags;       /* reserved, must be 0 */
  const char* title;    /* heading, e.g. the model path; NULL = the graph's name */
  /* Kernel choices, super groups, reasons, resolved options, target and
   * producer as stored in a container (qairt_container_load_file); NULL = none. */
  const qairt_container_t* container;
  /* The same decisions from a processing run (also its stats summary and
   * diagnostics); wins over `container` where both have an entry. NULL = none. */
  const qairt_process_result_t* process;
  /* Per-output and per-layer accuracy against float (qairt_compare_input_list
   * with QAIRT_COMPARE_PER_LAYER for per-op figures). NULL = none. */
  const qairt_compare_report_t* accuracy;
  /* A sensitivity report (qairt_analyze_sensitivity): its plot. NULL = none;
   * another kind of analysis report is an error. */
  const qairt_analysis_report_t* sensitivity;
  /* More diagnostics to list (e.g. qairt_convert_result_diagnostics). NULL = none. */
  const qairt_diagnostics_t* diagnostics;
  /* The target's name when neither container nor process gives one; NULL = none. */
  const char* target_name;
} qairt_html_report_options;

/* Every field 0/NULL. */
QAIRT_API void qairt_html_report_options_init(qairt_html_report_options* options);

/* The report of `graph` (the processed graph: the one a container holds or
 * the one qairt_convert_graph converted in place). `options` may be NULL.
 * Query-then-fill (qairt.h rule 4). Fails with QAIRT_INVALID_ARGUMENT for bad
 * options, QAIRT_VALIDATION_FAILED for a graph with a cycle. */
QAIRT_API qairt_status_t* qairt_html_report_render(const qairt_graph_t* graph, const qairt_html_report_options* options,
                                                   char* buf, size_t capacity, size_t* out_length);

/* The same, written atomically to `path` (temporary file in the same folder,
 * fsync, rename): on failure nothing is left at `path` and an existing file
 * there is untouched. QAIRT_IO_ERROR names the path. */
QAIRT_API qairt_status_t* qairt_html_report_write_file(const qairt_graph_t* graph,
                                                       const qairt_html_report_options* options, const char* path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QAIRT_QAIRT_REPORT_H_ */
