// One pass of the samples gathering the inputs of chosen weighted ops
// (exec/input_gram.h): what the sequential weight and bias passes
// (calib/seqmse.h, calib/bias_correction.h) observe at each level.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "calib/calibrate.h"
#include "exec/executor.h"
#include "exec/input_gram.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::calib {

// What a sequential pass keeps from one level's pass over the samples to
// the next: per sample, the values where the ops the pass changes next
// begin (exec::Cut). Each pass then resumes there instead of running every
// sample from its inputs: on a model of L levels the passes cost about one
// run per sample instead of L/2. A pass's new cuts take at most
// `budget_bytes` (while it runs, its samples' old and new cuts at most
// twice that); samples past it run from their inputs.
constexpr uint64_t kLevelResumeBudget = uint64_t{512} << 20;
struct LevelResume {
  explicit LevelResume(uint64_t budget_bytes = kLevelResumeBudget) : budget(budget_bytes) {}
  uint64_t budget;
  std::vector<OpId> order;                       // the order the cuts were saved with
  std::vector<std::optional<exec::Cut>> cuts;    // per sample
  uint64_t ops_run = 0, ops_skipped = 0;         // over all passes, summed over samples
};

// Runs every sample up to the last op producing an input in
// `grams_of_input` (tensor -> indices into `grams`), quantization simulated
// or not, and adds each sample's contribution to those grams. Samples run
// on up to num_threads workers (0: all cores), each with its own executor;
// their sums are added in sample order, so the result does not depend on
// the thread count. `what` names the pass in errors.
//
// With `resume`, samples resume from the cuts the previous pass saved (when
// its executor had the same order) and each saves the cut before the first
// op reading any of `changing`: the tensors the caller changes before the
// next pass. The passes sharing one LevelResume take the same samples, and
// nothing else may change between them (the sums are then bit for bit
// those of runs from the inputs). A cut that does not fit this pass (other
// tensors cross there, or an observed input made before it is not among
// them) is not used: that sample runs from its inputs.
Status ObserveLevel(const Graph& g, const SampleSource& samples, uint32_t num_threads, bool quantized,
                    std::string_view what, std::vector<exec::InputGram>* grams,
                    const std::unordered_map<TensorId, std::vector<size_t>>& grams_of_input,
                    const std::function<void()>& sample_done, LevelResume* resume = nullptr,
                    const std::vector<TensorId>& changing = {});

// The level of each of `ops` (the weighted ops a sequential pass takes): 1 +
// the highest level among `ops` upstream of it, so a level's inputs depend
// only on lower levels. *levels: the highest level.
Result<std::vector<size_t>> SequentialLevels(const Graph& g, const std::vector<OpId>& ops, size_t* levels);

}  // namespace qairt::calib
