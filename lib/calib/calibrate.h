// Post-training calibration: computes encodings for every tensor
// of a float graph that has none, from samples streamed through the
// executor. Activations: min/max per tensor (pass 1) and, for the histogram
// methods, a histogram over that range (pass 2); only one sample's
// activations are alive at a time, so memory does not grow with the number
// of samples. Parameters (static weights and constants): from their data,
// per tensor, per channel (conv, --use_per_channel_quantization), per row
// (FullyConnected/MatMul, --use_per_row_quantization), per block or LPBQ
// (--weights_block_size, --use_lpbq). Encodings already on the graph (from
// an overrides file or Q-DQ nodes) are kept: calibration only fills gaps.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calib/input_list.h"
#include "ir/encoding.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::calib {

// Values equal enum qairt_calibration_method. kSeqMse is a weight method
// only: each weight's encoding chosen by its op's output error on the
// samples, the quantized predecessors feeding it (calib/seqmse.h).
enum class Method : uint32_t { kMinMax = 0, kSqnr = 1, kMse = 2, kPercentile = 3, kSeqMse = 4 };
std::string_view MethodName(Method m);  // "min-max", "sqnr", "mse", "percentile", "seqmse"
bool ParseMethod(std::string_view s, Method* out);
// "asymmetric" | "symmetric" | "unsignedsymmetric" (also the legacy tf / enhanced / symmetric
// spellings of --act_quantizer/--param_quantizer, which set the method too).
bool ParseSchema(std::string_view s, Symmetry* out);

// An op whose output the target fixes to [lo, hi] at the activation bit
// width (HTP's Softmax and Sigmoid [0, 1]) and that has a 16-bit kernel.
struct FixedOutputRange {
  std::string op_type;
  double lo = 0, hi = 0;
};

struct Options {
  Method act_method = Method::kMinMax;
  Method param_method = Method::kMinMax;
  Symmetry act_schema = Symmetry::kAsymmetric;
  Symmetry param_schema = Symmetry::kSymmetric;
  uint32_t act_bitwidth = 8;      // 8 | 16
  uint32_t weights_bitwidth = 8;  // 4 | 8 | 16
  bool per_channel = false;       // conv weights per output channel
  bool per_row = false;           // FullyConnected / MatMul weights per output row
  uint32_t block_size = 0;        // > 0: MatMul/FullyConnected weights per block along the input dim
  bool lpbq = false;              // with block_size: LPBQ (4-bit blocks on an 8-bit per-channel grid)
  double percentile = 99.99;      // percentile method
  uint32_t histogram_bins = 2048;
  std::vector<std::string> float_inputs;  // --input_encoding NAME other: left unquantized
  uint32_t num_threads = 1;               // executor threads; results do not depend on it
  // Each weight's rounding chosen by its op's output error (calib/seqmse.h;
  // with any param_method, needs samples).
  bool adaptive_rounding = false;
  // Biases of FullyConnected and convolution ops corrected so each output
  // channel's mean matches the float model's (calib/bias_correction.h;
  // needs samples).
  bool bias_correction = false;
  // When set, bias correction measures the quantized model as this makes
  // it run (target processing: kernels, super groups, converts); unset, the
  // calibrated graph as it is.
  std::function<Result<Graph>(const Graph&)> realize;
  // With 16-bit activations, normalization scales 16-bit (the target has
  // a16w16 normalization kernels; QAIRT_CALIBRATION_WIDE_NORM_SCALES).
  bool wide_norm_scales = false;
  // With 8-bit activations, the outputs of these ops get 16 bits
  // (QAIRT_CALIBRATION_WIDE_FIXED_RANGES). An 8-bit grid over the target's
  // fixed [0, 1] has steps of 0.004: near-uniform attention over 32 keys
  // (0.03) keeps 8 levels, and causal attention, whose first row reaches 1,
  // holds probabilities of 0.06 at about 21 dB.
  std::vector<FixedOutputRange> wide_fixed_ranges;
};

// Samples: count and a loader (one buffer per graph input, graph-input order).
struct SampleSource {
  size_t count = 0;
  std::function<Result<std::vector<std::vector<uint8_t>>>(size_t)> load;
  static SampleSource FromInputList(const InputList& list);
};

struct Report {
  size_t samples = 0;
  std::vector<std::string> activations;  // tensors given computed activation encodings
  std::vector<std::string> params;       // static tensors given computed encodings
  size_t kept = 0;                       // tensors that already had an encoding
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // what was decided and why (the sequential MSE summary), for logs
};

// Calibrates `graph` in place. Progress (done, total, phase) is reported per
// pass ("ranges", then "histograms" for the searching methods) when
// `progress` is set, one call at a time (from worker threads too). An error leaves the graph unchanged.
Status Calibrate(Graph* graph, const SampleSource& samples, const Options& options, Report* report,
                 const std::function<void(size_t, size_t, const char*)>& progress = {});

// Calibrates `a` with `oa` and `b` with `ob`, two copies of one float graph
// (the same precision search at two bit widths): one observation of the
// samples serves both when their statistics are the same kind (same
// activation method, bins and float inputs; no sequential MSE or adaptive
// rounding). `report` is a's. An error leaves both graphs unchanged.
Status CalibrateBoth(Graph* a, const Options& oa, Graph* b, const Options& ob, const SampleSource& samples,
                     Report* report, const std::function<void(size_t, size_t, const char*)>& progress = {});

// Only the static float tensors without an encoding (weights, constants),
// from their values: no samples, activations left as they are (what the
// vendor's --float_fallback does for parameters an encodings file misses).
// An error leaves the graph unchanged.
Status CalibrateParams(Graph* graph, const Options& options, Report* report);

// The clipping range a method picks from a histogram of `bins` counts over
// [lo, hi] (exposed for tests).
std::pair<float, float> SearchRange(Method m, const std::vector<uint64_t>& hist, float lo, float hi, uint32_t bitwidth,
                                    Symmetry schema, double percentile);

}  // namespace qairt::calib
