// How much of the output error each unit of a mixed-precision search causes,
// estimated from a few float runs instead of one simulation per candidate.
//
// Quantizing a tensor adds noise to it; downstream ops carry that noise to
// the outputs, amplified or damped. To first order the output error power is
// a sum over noise sources: sum_t N_t * G_t, where N_t is the power of the
// noise rounding adds at tensor t (measured in the quantized run, before and
// after the rounding, at each precision) and G_t its gain to the ranked
// outputs (relative to their signal power). G comes from local gains: every
// op is run on its own (a one-op graph on the float values of its inputs)
// with each float input perturbed by the error the quantized model carries
// into it, and the ratio of output to input error power is that input's
// gain; G_t is then summed backwards over the graph (G_t = sum over
// consumers and their outputs of gain * G_output), with G = 1 / signal power
// at the ranked outputs. Weight noise enters at the op's output: the op is
// run once more with its weights at each precision.
//
// The cost is one quantized and one float run of the samples plus about one
// run of each op per float input (two more per weighted op), against one
// simulation of the whole graph per candidate for measured gains. It ranks;
// decisions are verified by simulation (mixed_precision.cpp).
#pragma once

#include <functional>
#include <vector>

#include "analyze/sensitivity.h"
#include "calib/calibrate.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::analyze {

struct NoiseEstimate {
  // Per unit: its share of the relative output error (error power over
  // signal power, summed over ranked outputs) at the base and at the high
  // precision.
  std::vector<double> base, high;
  double total_base = 0, total_high = 0;  // over every quantized tensor (units or not)
  uint64_t op_runs = 0;  // ops executed (the float runs and the probes): the work it took
};

// `low` and `high`: the float graph calibrated at the two precisions (same
// tensors and ops as `float_graph`). `ranked`: the tensors whose error
// counts (logits under a saturating head, else the outputs). `terminal`:
// outputs under such a head, whose own quantization noise counts too (an
// 8-bit softmax output caps the output SQNR whatever its logits hold) but is
// not traced back through the head.
Status EstimateNoise(const Graph& float_graph, const Graph& low, const Graph& high, const std::vector<Unit>& units,
                     const std::vector<TensorId>& ranked, const std::vector<TensorId>& terminal,
                     const calib::SampleSource& samples, uint32_t num_threads, NoiseEstimate* out,
                     const std::function<void(size_t, size_t, const char*)>& progress = {});

}  // namespace qairt::analyze
