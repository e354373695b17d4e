// One pass of the samples gathering the inputs of chosen weighted ops
// (exec/input_gram.h): what the sequential weight and bias passes
// (calib/seqmse.h, calib/bias_correction.h) observe at each level.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "calib/calibrate.h"
#include "exec/input_gram.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::calib {

// Runs every sample up to the last op producing an input in
// `grams_of_input` (tensor -> indices into `grams`), quantization simulated
// or not, and adds each sample's contribution to those grams. Samples run
// on up to num_threads workers (0: all cores), each with its own executor;
// their sums are added in sample order, so the result does not depend on
// the thread count. `what` names the pass in errors.
Status ObserveLevel(const Graph& g, const SampleSource& samples, uint32_t num_threads, bool quantized,
                    std::string_view what, std::vector<exec::InputGram>* grams,
                    const std::unordered_map<TensorId, std::vector<size_t>>& grams_of_input,
                    const std::function<void()>& sample_done);

// The level of each of `ops` (the weighted ops a sequential pass takes): 1 +
// the highest level among `ops` upstream of it, so a level's inputs depend
// only on lower levels. *levels: the highest level.
Result<std::vector<size_t>> SequentialLevels(const Graph& g, const std::vector<OpId>& ops, size_t* levels);

}  // namespace qairt::calib
