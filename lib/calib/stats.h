// Calibration statistics as a value: what a subset (shard) of the samples
// shows about each activation, serializable (FlatBuffers, .stats) and
// mergeable exactly, so calibration can run sharded over processes or hosts
// and give byte-identical encodings.
//
// Two rounds. Round 1: per tensor, min/max (and whether attention-mask
// sentinels were seen), merged by min/max. Round 2, for the searching
// methods (mse, sqnr, percentile): a histogram of histogram_bins counts on
// the grid fixed by the merged round 1, merged by adding counts. Calibrate()
// is CollectStats (round 1, then 2 if needed) + CalibrateFromStats, so the
// single-process path and any sharded one compute the same thing.
//
// Shard k of n holds samples k, k+n, k+2n, ... of the list. A file names the
// shards it covers; merging refuses overlapping shards, another model
// (fingerprint of the graph calibrated, weights included), other options
// (histogram bins, float inputs) or another round.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "calib/calibrate.h"

namespace qairt::calib {

inline constexpr uint32_t kStatsFormatVersion = 1;

struct TensorStats {
  std::string name;
  float min = 0, max = 0;  // +inf / -inf when never computed
  bool low_sentinel = false, high_sentinel = false;
  std::vector<uint64_t> hist;  // round 2
};

struct Stats {
  uint32_t round = 1;  // 1: ranges, 2: histograms
  uint64_t model_fingerprint = 0;
  uint64_t options_fingerprint = 0;
  uint64_t ranges_fingerprint = 0;  // round 2: fingerprint of the round 1 it used
  uint32_t histogram_bins = 0;
  uint32_t shard_count = 1;
  std::vector<uint32_t> shards;  // covered, ascending
  uint64_t samples = 0;
  uint64_t list_samples = 0;
  std::vector<TensorStats> tensors;  // the observed activations, graph order
  std::string input_list;            // where the samples came from, as given ("" if not from a list)

  bool complete() const { return shards.size() == shard_count; }
  // Fingerprint of the ranges (round 1 content); round 2 files carry the one they used.
  uint64_t RangesFingerprint() const;
};

// The graph's fingerprint: op and tensor structure, dtypes, shapes, which
// tensors carry encodings, and static data (FNV-1a, 64-bit).
uint64_t ModelFingerprint(const Graph& graph);

// Statistics of shard `shard` of `shard_count` (samples i with
// i % shard_count == shard). `ranges` NULL: round 1; otherwise a complete
// merged round 1 of the same graph and options: round 2.
Status CollectStats(const Graph& graph, const SampleSource& samples, const Options& options, uint32_t shard,
                    uint32_t shard_count, const Stats* ranges, Stats* out,
                    const std::function<void(size_t, size_t, const char*)>& progress = {});

// Merges statistics of disjoint shards of one round, graph and option set.
Status MergeStats(const std::vector<const Stats*>& parts, Stats* out);

// Encodings from complete statistics (round 2 when the activation method
// searches a histogram), weights from the graph's data: what Calibrate does
// after observing the samples. `what` names the statistics in errors.
Status CalibrateFromStats(Graph* graph, const Stats& stats, const Options& options, Report* report,
                          std::string_view what = "calibration statistics");

// What must match between statistics and the calibration using them.
uint64_t OptionsFingerprint(const Options& options);  // histogram bins, float inputs
// `have` against `expect`'s model fingerprint, options fingerprint and bins;
// errors name `what`.
Status CheckStatsFit(const Stats& have, const Stats& expect, std::string_view what);
std::string MissingShards(const Stats& stats);  // "2, 5" (at most 8 listed)

std::string SerializeStats(const Stats& stats);
// Verifies and reads a .stats buffer; errors name `what` (the file) and the field.
Status ParseStats(std::string_view bytes, std::string_view what, Stats* out);

}  // namespace qairt::calib
