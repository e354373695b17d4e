// Sequential MSE weight encodings (after AIMET's SeqMSE; written here from
// the idea): each weight of a FullyConnected, MatMul or convolution takes the
// encoding that minimises its op's output error on the calibration samples
// (calib/weight_search.h), with the inputs the op sees in the quantized
// model: activations on their encodings and the weights upstream already
// chosen. Ops are taken by level (a level's ops have only lower levels'
// weighted ops upstream), one pass over the samples per level, so every
// op's inputs come from its already-quantized predecessors. Memory per op
// is its input's k x k second moment (exec/input_gram.h), never the
// activations themselves: it does not grow with samples or sequence length.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calib/calibrate.h"
#include "calib/observe_level.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::calib {

struct SeqMseWeight {
  std::string name;
  size_t level = 0;
  double base_error = 0;  // output error (sum of squares over the samples) with its min-max encoding
  double error = 0;       // with the chosen one
  uint64_t cells_changed = 0;
  uint64_t roundings_changed = 0;
};

struct SeqMseReport {
  std::vector<SeqMseWeight> weights;  // in the order they were chosen
  std::vector<std::string> skipped;   // "name: why" (shared weights, layouts the search does not take)
  size_t levels = 0;
};

// Re-chooses, in place, the encodings of the weights named in `weights`
// (their current encodings are their min-max ones), and with adaptive
// rounding their values (moved onto the grid points chosen). Samples are run
// levels x samples.count times. An error leaves the graph unchanged.
struct SeqMseOptions {
  bool search_grids = true;        // false: keep the min-max encodings (adaptive rounding alone)
  bool adaptive_rounding = false;  // also choose each weight's rounding (weight_search.h)
  uint32_t num_threads = 1;
  // Each level's pass over the samples resumes where the level before
  // changed the model, within this many bytes of saved values
  // (observe_level.h); 0: every pass runs from the inputs. Same results.
  uint64_t resume_budget_bytes = kLevelResumeBudget;
};

Status SequentialMse(Graph* graph, const SampleSource& samples, const std::vector<std::string>& weights,
                     const SeqMseOptions& options, SeqMseReport* report,
                     const std::function<void(size_t, size_t, const char*)>& progress = {});

// One line for logs: "sequential MSE: 12 weights in 5 levels, output error
// -4.1 dB median (best -9.0 dB 'fc1.w'), 2 skipped".
std::string SeqMseSummary(const SeqMseReport& report);

}  // namespace qairt::calib
