// What the sensitivity analysis and mixed precision share: the two
// calibrated copies of a float graph, its units, and how a configuration is
// scored against the float model. Internal to lib/analyze.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyze/sensitivity.h"
#include "calib/sample_eval.h"
#include "exec/executor.h"

namespace qairt::analyze::detail {

std::string Label(uint32_t w, uint32_t a);  // "W8A16"

// The two calibrated copies of the float graph, the units and the float
// reference outputs.
struct Prepared {
  Graph low, high;
  std::vector<Unit> units;
  size_t layers = 0;  // inputs and ops with at least one encoded tensor at the base precision
  // Tensors that rank candidates: the logits under a Softmax/Sigmoid output
  // head, else the outputs themselves. A saturating head makes the output's
  // error hinge on the few samples near a decision boundary, so a ranking by
  // it learns which layer happens to fix those samples (on the cls model: a
  // layer worth +20 dB on the calibration set that lost 3 dB on held-out
  // images); the logits' error falls smoothly with every real improvement.
  std::vector<std::string> proxies;  // appended outputs (not already graph outputs)
  std::vector<size_t> proxy_slot;     // per graph output: its ranking tensor's index in the results
  calib::SampleOutputs reference;
  // Score's worst_half: the two halves of the scored samples (indices; the
  // even and odd samples when not set).
  calib::Halves halves;
  // The sample runs of one analysis follow each other: one arena for all
  // (each candidate's executor would otherwise touch a fresh one).
  std::shared_ptr<exec::Workspace> workspace = std::make_shared<exec::Workspace>();
};

// Per graph output, the tensor whose error ranks configurations: the logits
// under a Softmax / LogSoftmax / Sigmoid head (a saturated probability is
// exactly representable, so its error says nothing), else the output.
std::vector<TensorId> RankingTensors(const Graph& g);

// Calibration options of the high precision: the base ones at the high bit
// widths; blocks and LPBQ (4-bit schemes) off at 8 bits and up; per-tensor
// 16-bit weights where the target's A16W16 kernels take only those.
calib::Options HighCalibration(const Options& o);

// `g` with the proxy tensors appended to its outputs (they follow the
// graph's own outputs in every run's results).
Result<Graph> WithProxies(const Graph& g, const std::vector<std::string>& proxies);

// Calibrates both precisions on `samples` (one observation of the samples
// when the two share their statistics) and computes the float reference on
// `scoring` (the samples every candidate is scored on). split_parts: an op's
// activations and its weights are separate units (mixed precision chooses
// them independently: 16-bit activations with 8-bit weights is the cheap
// promotion every HTP op has kernels for).
Status Prepare(const Graph& float_graph, const calib::SampleSource& samples, const calib::SampleSource& scoring,
               const Options& o, Prepared* p, bool split_parts = false);

// Prepare's part that needs no calibration: the ranking tensors (proxies)
// and the float reference on `scoring`.
Status PrepareReference(const Graph& float_graph, const calib::SampleSource& scoring, const Options& o, Prepared* p);

// `base` with the encodings of `tensors` taken from `from` (or cleared); a
// static tensor also takes `from`'s values, and a weight its op's bias.
Result<Graph> WithEncodingsOf(const Graph& base, const Graph& from, const std::vector<TensorId>& tensors);

// Scores of one configuration against the float reference.
struct Scores {
  double sqnr = 0;  // worst output, over all scoring samples
  // The ranking's proxies (the logits under a softmax head, else the
  // outputs) over all scoring samples: what ties the pieces of a sharded
  // ranking to one analysis (MixedGains::base_typical).
  double typical = 0;
  // The median sample's SQNR, each sample scored on its worst output: the
  // figure the accuracy tables give, which no single sample near a decision
  // sets (the aggregate is dominated by such samples).
  double median = 0;
  // The lowest-scoring samples (index in the scored source, SQNR), worst
  // first, at most kWorstSamples: which inputs set the aggregate.
  std::vector<std::pair<size_t, double>> worst;
};
constexpr size_t kWorstSamples = 3;
constexpr double kInfeasible = -1e9;

// worst_half: the score is the worse of the two halves' SQNR (p.halves).
Result<Scores> Score(const Graph& g, const calib::SampleSource& samples, const Prepared& p, const Options& o,
                     bool worst_half = false);

std::vector<TensorId> TensorsOf(const std::vector<Unit>& units, const std::vector<size_t>& chosen);

// Shortest text that reads back as the same double: a shard's report
// crosses processes as JSON, and the merged one must equal an unsharded one.
std::string Db(double v);

}  // namespace qairt::analyze::detail
