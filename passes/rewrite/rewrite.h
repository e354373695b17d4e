// Quantization-friendly graph rewrites. They run on the
// float graph after import and before calibration: every op they remove is
// one requantization fewer once the graph is quantized (an affine Mul/Add
// after a conv, the four ops of x*relu6(x+3)/6, the nine of a decomposed
// LayerNorm). Each rewrite is its own function in its own file, registered
// in passes/registry.cpp; RunRewrites (apply.cpp) applies them one at a time and checks each
// against the original graph in the executor (cosine >= min_cosine over the
// samples on every output) or rolls it back with a warning naming it.
#pragma once

#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "calib/calibrate.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::rewrite {

// One rewrite: returns how many places it changed (0: graph untouched) and a
// note per place ("'conv3' absorbed 'mul_7' (x per-channel)").
using RewriteFn = Result<size_t> (*)(Graph* graph, std::vector<std::string>* notes);

struct RewriteInfo {
  const char* name;         // --disable_rewrite NAME
  const char* description;  // one line for `qairt convert --list_rewrites`
  RewriteFn run;
  const char* produces;     // op type the rewrite creates (null: none new)
  bool on_by_default = true;  // false: runs only when named in Options::enabled
};

// Registered rewrites in the order they run.
std::span<const RewriteInfo> Rewrites();

struct Options {
  std::vector<std::string> disabled;  // rewrite names not to run
  std::vector<std::string> enabled;   // opt-in rewrites to run (on_by_default == false)
  // Run the model on samples to check each rewrite against the original
  // (rolled back below min_cosine). Off: the rewrites, exact by construction
  // and by their unit tests, are applied without running the model.
  bool verify = true;
  double min_cosine = 0.999999;       // per output, flattened over the samples
  // Verification samples; count 0: `synthetic_samples` deterministic
  // pseudo-random inputs (standard normal floats, zero integers).
  calib::SampleSource samples;
  size_t synthetic_samples = 4;
  // At most this many of `samples` verify (each rewrite runs the graph on
  // them once; an LLM's calibration set does not need to be replayed six times).
  size_t max_samples = 16;
  uint32_t num_threads = 1;
  // When set: whether the target has kernels for an op type. A rewrite that
  // would create an op the target cannot run is skipped (and said so).
  std::function<bool(const std::string&)> target_has_op;
  // Non-empty: run these instead of the registered rewrites (tests inject a
  // deliberately inexact one to check the rollback).
  std::vector<RewriteInfo> replace_registry;
  // When set: the quantized output SQNR (dB) of a graph (the caller
  // calibrates it, processes it for its target and simulates it on samples).
  // Each rewrite on by default that fired is then judged by leaving it out:
  // kept only if the graph with every rewrite scores at most
  // `judge_tolerance_db` below the graph without this one. Exact in float is
  // not enough where quantization sees another graph (a folded scale widens
  // a channel's weight range). Rewrites the caller enabled by name are kept
  // as asked. Cost: one score per rewrite that fired, and one.
  std::function<Result<double>(const Graph&)> quantized_score;
  double judge_tolerance_db = 0.1;
};

struct Outcome {
  std::string name;
  size_t fired = 0;          // places changed (before any rollback)
  bool rolled_back = false;  // verification failed: graph restored
  std::string skipped;       // why it did not run (the target lacks the op), or empty
  double cosine = 1;         // worst output cosine vs the original (fired only)
  // Options::quantized_score: the quantized SQNR without and with the
  // rewrite (NaN when not judged), and whether that kept it off.
  double quantized_without = std::numeric_limits<double>::quiet_NaN();
  double quantized_with = std::numeric_limits<double>::quiet_NaN();
  bool refused = false;
  std::vector<std::string> notes;
};

struct Report {
  std::vector<Outcome> rewrites;  // registry order, disabled ones omitted
  size_t ops_before = 0, ops_after = 0;
  bool verified = true;  // checked on samples (Options::verify)
  size_t samples = 0;
  bool synthetic = false;  // verified on synthetic inputs (no input_list)
  bool judged = false;     // Options::quantized_score was set
  std::vector<std::string> warnings;
};

// Applies the enabled rewrites to `graph` in place. A rewrite that does not
// verify is undone and reported (Outcome::rolled_back, a warning); an error
// (unreadable sample, an executor failure on the original graph) leaves the
// graph unchanged.
Status RunRewrites(Graph* graph, const Options& options, Report* report);

// "rewrites: 3 fired, 58 ops removed (198 -> 140), verified on 8 samples" and
// one line per rewrite; JSON with the same content.
std::string ReportText(const Report& r, bool with_notes);
std::string ReportJson(const Report& r);

}  // namespace qairt::rewrite
