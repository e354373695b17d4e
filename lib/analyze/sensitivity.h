// Per-layer quantization sensitivity and automatic mixed precision.
//
// A "unit" is what precision is chosen for: one op's output activations
// together with its static weights (the encodings calibration gives them),
// or a graph input. The float graph is calibrated twice, once at the base
// precision (e.g. W8A8) and once at the high one (e.g. W16A16); every
// candidate configuration is then the base encodings with some units' taken
// from the high set, simulated in the executor and scored by output SQNR
// against the float model. Nothing target-specific happens here: the caller
// picks the high bit widths the target has kernels for, and the chosen
// encodings go through target processing like any others.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calib/calibrate.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::analyze {

struct Options {
  calib::Options calibration;       // the base precision (act/weights bit widths, methods, granularity)
  uint32_t high_act_bitwidth = 16;  // 8 | 16
  uint32_t high_weights_bitwidth = 16;  // 8 | 16
  // 16-bit weights per tensor even where the base is per channel/row (HTP's
  // A16W16 convolutions take only per-tensor weights).
  bool high_weights_per_tensor = false;
  uint32_t num_threads = 1;
  // When set, every candidate configuration is scored after this turns it
  // into what will run (target processing: kernel selection, super groups,
  // converts, bias encodings). A configuration it refuses (no kernels) is
  // infeasible. Unset: the calibrated encodings are simulated as they are.
  std::function<Result<Graph>(const Graph&)> realize;
  // Sensitivity only: evaluate the units u with u % shard_count ==
  // shard_index (the others are listed, not evaluated), so shards on other
  // processes or hosts split the work; MergeSensitivity joins them into the
  // report of the whole analysis, equal to an unsharded one (every shard
  // calibrates the same way, and a unit's scores depend on nothing else).
  uint32_t shard_index = 0;
  uint32_t shard_count = 1;
};

struct Unit {
  std::string name;     // op name, or the input's name
  std::string op_type;  // "input" for graph inputs
  std::string part;     // mixed precision: "activations" or "weights" of the op ("" = both)
  size_t depth = 0;     // position in topological order (inputs 0)
  std::vector<TensorId> tensors;  // activations and weights whose encodings it owns
  double sqnr_only_quantized = 0;  // only this unit quantized (base precision), the rest float
  double sqnr_only_high = 0;       // everything at base precision but this unit at the high one
  bool evaluated = true;           // false: another shard's unit (both scores NaN)
};

struct SensitivityReport {
  size_t samples = 0;
  double sqnr_base = 0;  // everything at base precision
  double sqnr_high = 0;  // everything at the high precision
  std::string base_label, high_label;  // "W8A8", "W16A16"
  std::vector<Unit> units;  // depth order
  uint32_t shard_index = 0, shard_count = 1;  // which units were evaluated (Options)
};

// Computes the table over `samples` (the float graph is not modified).
Status AnalyzeSensitivity(const Graph& float_graph, const calib::SampleSource& samples, const Options& options,
                          SensitivityReport* report);

// The report of the whole analysis from those of shards 0..N-1 of it (in
// any order). Refused, naming the part: another shard count, a shard given
// twice or missing, another model, samples or precision (the unit list or
// the all-base/all-high scores differ).
Status MergeSensitivity(const std::vector<SensitivityReport>& parts, SensitivityReport* out);
// A report from SensitivityJson's text (exact: scores are written with
// round-trip precision). `what` names the source in errors.
Status ReadSensitivityJson(std::string_view json, std::string_view what, SensitivityReport* out);

// Most sensitive first (lowest sqnr_only_quantized) text table; JSON; an SVG
// plot of both SQNR series along the graph depth.
std::string SensitivityText(const SensitivityReport& r, size_t max_rows = 40);
std::string SensitivityJson(const SensitivityReport& r);
std::string SensitivitySvg(const SensitivityReport& r);

// ---- mixed precision ----------------------------------------------------------

enum class MixedMode : uint32_t { kOff = 0, kBudget = 1, kPercent = 2 };

// Each candidate's gain: the output SQNR gain (dB, on the search samples)
// predicted with only it at the high precision, which ranks the candidates.
// The gains come from one noise estimate (analyze/noise_estimate.h: a float
// run of the samples and one run of each op per input), so a shard computes
// the estimate whole and keeps the gains of its own candidates
// (Options::shard_index/shard_count); merged, they replace that step of
// ChooseMixedPrecision, which then chooses exactly as it would alone.
struct MixedGains {
  size_t samples = 0;
  std::string base_label, high_label;
  double base_typical = 0;          // the base configuration's score: ties the gains to one analysis
  std::vector<std::string> units;   // candidate labels ("op (activations)"), search order
  std::vector<double> gains;        // dB; NaN where another shard evaluates
  std::vector<bool> evaluated;
  uint32_t shard_index = 0, shard_count = 1;
};

struct MixedOptions {
  MixedMode mode = MixedMode::kOff;
  double value = 0;  // budget in dB (output SQNR) or percent of units
  // Budget mode: at most this share of the layers is promoted; a budget it
  // cannot meet leaves the best configuration found within it (not met).
  double max_layers_percent = 20;
  // Budget mode: simulations of candidate configurations after the base and
  // the all-high one (each runs every sample through the whole graph).
  uint32_t max_evaluations = 3;
  Options analysis;
  // Progress (done, total, phase), one call at a time.
  std::function<void(size_t, size_t, const char*)> progress;
  // Merged gains of this same search (MixedPrecisionGains of every shard);
  // null: computed here. Gains of another model, samples or precision are
  // refused.
  std::shared_ptr<const MixedGains> gains;
  // Budget mode: when promotions up to the cap miss the budget, measure the
  // calibration techniques that cost nothing when the model runs (bias
  // correction, the weight searches, activation ranges by error: auto_quant.h)
  // and search again from the best of them. A budget is a goal: on a network
  // whose error is spread over every layer (the PaddleOCR recognizer at
  // W8A8), no 20% of the layers reaches it, while the same promotions from a
  // corrected base do. false: promotions only.
  bool raise_base = true;
  // The target's fixed-range ops, for that measurement's 16-bit fixed-range
  // candidate (empty: none).
  std::vector<calib::FixedOutputRange> fixed_ranges;
};

struct MixedReport {
  size_t units = 0;       // layers: graph inputs and ops with quantized tensors
  size_t candidates = 0;  // of those, the ones whose encodings differ between the two precisions
  std::vector<std::string> promoted;  // units ("op (activations)", "op (weights)"), in graph order
  size_t promoted_layers = 0;         // distinct ops (and inputs) among them
  std::vector<std::string> promoted_tensors;
  size_t boundaries = 0;  // edges between a promoted and a base unit: converts target processing will add
  double sqnr_base = 0, sqnr_high = 0, sqnr_chosen = 0;  // on the search samples
  // The model as returned (calibrated on every sample), scored like the
  // search's configurations (those were calibrated on half the samples).
  double returned_sqnr = 0;
  double returned_median_sqnr = 0;  // the same model's median sample (Scores::median)
  // Its lowest-scoring samples (index in the input list, from 0; SQNR),
  // worst first: the inputs that set the aggregate (Scores::worst).
  std::vector<std::pair<size_t, double>> returned_worst_samples;
  bool high_estimated = false;  // sqnr_high predicted by the noise estimate, not simulated (a budget search)
  bool met = false;  // the budget was reached (budget mode)
  size_t evaluations = 0;
  size_t held_out_samples = 0;  // odd samples kept out of the search's calibration (0: fewer than 4 samples)
  double sqnr_predicted = 0;    // what the noise estimate predicted for the chosen configuration
  struct Step {                 // one simulation of the budget search: the k best-ranked candidates
    size_t candidates = 0, layers = 0;
    double predicted = 0, sqnr = 0;  // dB
  };
  std::vector<Step> steps;
  // Cost: the whole search, and one calibration pass over the samples at the
  // base precision (the final calibration's observation) for scale; work is
  // counted in runs of one sample through the whole graph (op runs over ops),
  // calibration passes included, so it does not depend on the machine.
  double seconds = 0, calibration_seconds = 0;
  double sample_runs = 0;
  size_t samples = 0;
  std::string base_label, high_label;
  // MixedOptions::raise_base: the promotions alone missed the budget and the
  // techniques were measured (techniques_text: their table). base_raised:
  // the result is the search from the chosen techniques (base_techniques);
  // promotions_only_sqnr is what the promotions alone reached. sample_runs
  // and evaluations then count both searches, seconds the measurement too.
  bool techniques_measured = false, base_raised = false;
  std::string base_techniques, techniques_text, techniques_json;
  double promotions_only_sqnr = 0, promotions_only_returned = 0;
  size_t promotions_only_layers = 0;
};

// Calibrates `graph` in place with the chosen per-unit precisions (encodings
// already on the graph are kept, as calibration does). On error the graph is
// unchanged.
Status ChooseMixedPrecision(Graph* graph, const calib::SampleSource& samples, const MixedOptions& options,
                            MixedReport* report);
// The gains of the shard options.analysis names (the graph is not modified).
Status MixedPrecisionGains(const Graph& graph, const calib::SampleSource& samples, const MixedOptions& options,
                           MixedGains* out);
Status MergeMixedGains(const std::vector<MixedGains>& parts, MixedGains* out);
std::string MixedGainsJson(const MixedGains& g);
std::string MixedGainsText(const MixedGains& g);
bool IsMixedGainsJson(std::string_view json);  // a JSON object whose "kind" is "mixed_gains"
Status ReadMixedGainsJson(std::string_view json, std::string_view what, MixedGains* out);
std::string MixedText(const MixedReport& r);
// The warning for a budget not met (cap_percent: the cap on promoted layers;
// base_searches: the base was raised, or already corrected and rounded).
std::string MixedBudgetWarning(const MixedReport& r, double budget, double cap_percent, bool base_searches);
// "#7 3.10 dB, #19 8.20 dB": samples by index (from 0) and SQNR.
std::string WorstSamplesText(const std::vector<std::pair<size_t, double>>& worst);
std::string MixedJson(const MixedReport& r);

bool ParseMixedMode(std::string_view s, MixedMode* mode, double* value);  // "off", "budget=30", "percent=10"

}  // namespace qairt::analyze
