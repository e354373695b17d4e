// The pass manager of target-specific processing. Passes are plain functions
// over a Session, registered in one place (passes/registry.cpp) in the spec's
// order; the pipeline can be printed and stopped after a named pass, and the
// graph is validated after every pass.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passes/session.h"

namespace qairt::pass {

struct PassInfo {
  std::string_view name;     // stable id for --stop_after, e.g. "select-kernels"
  std::string_view title;    // TRACE phase banner, e.g. "Kernel Selection"
  std::string_view summary;  // one line for --print_pipeline
  // Non-fatal problems go to Session::Error; a returned error stops the run.
  Status (*run)(Session&);
};

// The registered pipeline, in order (passes/registry.cpp).
std::span<const PassInfo> Pipeline();

// "1. propagate-encodings  Propagate Encodings: ..." one line per pass.
std::string PrintPipeline();

// Runs the pipeline (up to options().stop_after). Returns an error only for a
// fatal problem (unknown --stop_after, a pass leaving the graph invalid);
// processing errors are in session.errors().
Status RunPipeline(Session& session);

// Everything a processing run produces besides the graph.
struct ProcessResult {
  std::vector<std::string> errors;    // in order of occurrence
  std::vector<std::string> warnings;
  Diags diagnostics;                  // the errors and warnings as records, in order
  std::string log;                    // INFO CSV or TRACE text ("" at NONE)
  std::string stats;                  // the stats summary (always)
  std::vector<ResolvedOption> options;
  struct OpAnnotation {
    std::string op, kernel;
    int32_t super_group = -1;
    bool adapted = false;
  };
  std::vector<OpAnnotation> annotations;
  struct TensorNote {
    std::string tensor, reasons;  // '^'-joined reason tokens
  };
  std::vector<TensorNote> notes;
};

// Resolves the options, runs the pipeline on `graph` in place and renders the
// logs. A returned error means nothing was processed (bad options) or the
// run hit a fatal problem; processing errors are in result->errors.
Status Process(Graph* graph, Options options, ProcessResult* result);

}  // namespace qairt::pass
