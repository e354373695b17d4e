// Empirical bias correction (the idea of AIMET's and NNCF's bias
// correction, written here). Quantizing a layer's weights and the
// activations upstream shifts the mean of its output: a rounding error that
// is the same for every sample does not average out, and through a deep
// network the shifts add up (on the PP-OCRv4 recognizer at W8A8 they were a
// third of the error at the tenth convolution). For a FullyConnected or
// convolution with a bias, output channel n's mean over the samples is
// w_n . mean(x) + b_n, with x its input vectors (rows, or im2col patches):
// so the bias that restores the float model's mean is
//
//   b_n' = b_n + w_n . mean(x_float) - q(w_n) . mean(x_quantized),
//
// with mean(x_float) from one float run and mean(x_quantized) observed in
// the quantized model, its upstream biases already corrected. Ops are taken
// by level (calib/seqmse.h's levels), one pass over the samples per level.
// Only first moments are kept: memory is k values per op input.
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

struct BiasCorrectionReport {
  size_t corrected = 0;  // biases changed
  size_t levels = 0;
  // The op whose bias moved most, and by how much (in its output's units).
  std::string largest_op;
  double largest_shift = 0;
  std::vector<std::string> skipped;  // "op: why"
  // What its passes cost, in runs of the whole graph over one sample: the
  // float pass, then the levels' passes, each resuming where the level
  // before changed the model (calib::LevelResume).
  double sample_runs = 0;
};

// Corrects, in place, the biases of `graph`'s FullyConnected and
// convolution ops whose weights have fixed-point encodings. `float_graph`
// is the graph before calibration (same tensors and ops): its weights,
// biases and float run are the reference (weights moved by adaptive
// rounding are compared with their float values). Runs the samples once
// float and once per level. An error leaves the graph unchanged.
// `realize`, when set, turns the calibrated graph into what runs (target
// processing): the quantized means are measured there, each op found by
// name, its weight at the encoding processing gave it.
using Realize = std::function<Result<Graph>(const Graph&)>;
// resume_budget_bytes: as SeqMseOptions::resume_budget_bytes (0: every
// level's pass from the inputs; the same corrections).
Status CorrectBiases(Graph* graph, const Graph& float_graph, const SampleSource& samples, uint32_t num_threads,
                     const Realize& realize, BiasCorrectionReport* report,
                     const std::function<void(size_t, size_t, const char*)>& progress = {},
                     uint64_t resume_budget_bytes = kLevelResumeBudget);

// One line for logs: "bias correction: 43 biases in 20 levels, largest
// shift 0.41 at 'conv_7', 2 skipped (e.g. ...)".
std::string BiasCorrectionSummary(const BiasCorrectionReport& report);

}  // namespace qairt::calib
