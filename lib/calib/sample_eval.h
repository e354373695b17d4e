// Running a graph over a set of samples and scoring its outputs against a
// reference run: what the rewrite verification, the sensitivity analysis and
// mixed precision all need. Outputs are kept (concatenated over samples) so
// one reference run serves many candidate graphs; they are the graph
// outputs only, small next to the activations.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "calib/calibrate.h"
#include "exec/executor.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::calib {

// Float outputs (float/fixed-point outputs as float32; integer outputs
// converted) per graph output, concatenated over samples.
using SampleOutputs = std::vector<std::vector<float>>;

// `workspace` (optional): shared with other executors run in turn, never
// at the same time (exec::Workspace).
Result<SampleOutputs> RunSamples(const Graph& graph, const SampleSource& samples, bool simulate_quantization,
                                 uint32_t num_threads = 1, std::shared_ptr<exec::Workspace> workspace = nullptr);

struct Agreement {
  double cosine = 1;
  double sqnr_db = 0;  // 10 log10(sum ref^2 / sum err^2); capped at 200 when identical
};
// 10 log10(signal / error) from sums of squares, as Agree reports it: 200
// when the error is 0, -200 when it is not finite.
double SqnrDb(double signal, double error);
// Per output; `worst` of a set is the minimum of each.
Agreement Agree(const std::vector<float>& ref, const std::vector<float>& x);
Agreement Worst(const SampleOutputs& ref, const SampleOutputs& x);

// `count` deterministic pseudo-random samples for a graph's inputs: float32
// inputs standard normal (seeded), every other dtype zero bytes. Fails when
// an input shape is not static.
Result<SampleSource> SyntheticSamples(const Graph& graph, size_t count, uint64_t seed = 0x5eed);

// Samples [begin, end) of `s`.
SampleSource Slice(const SampleSource& s, size_t begin, size_t end);
// A split of `count` samples into two halves for cross-validation: of each
// consecutive pair, one sample (chosen by a fixed pseudo-random sequence)
// goes to `fit` and the other to `held_out`; an odd last sample to `fit`.
// Like the even/odd split it balances a list sorted by class (neighbours
// are split), but it does not alias with a list whose kinds alternate (an
// input list of upright and rotated text lines, one of each in turn: the
// even half was all of one kind). Both halves ascending; deterministic.
struct Halves {
  std::vector<size_t> fit, held_out;
};
Halves SplitInHalves(size_t count);
// The samples of `s` at `indices`, in that order.
SampleSource Subset(const SampleSource& s, std::vector<size_t> indices);

}  // namespace qairt::calib
