#include "calib/calibrate.h"

#include "calib/bias_correction.h"
#include "calib/channel_gain.h"
#include "calib/param_plan.h"
#include "calib/sentinel_range.h"
#include "calib/seqmse.h"
#include "calib/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "exec/executor.h"
#include "kernels/ops.h"
#include "kernels/threadpool.h"
#include "quant/quantize.h"

namespace qairt::calib {

namespace {

// Real value a grid maps x to (the search's model of quantize->dequantize).
struct Grid {
  double scale, zp, qmin, qmax;
  double QDQ(double x) const {
    double q = std::nearbyint(x / scale) + zp;
    q = std::clamp(q, qmin, qmax);
    return (q - zp) * scale;
  }
};

Grid MakeGrid(double a, double b, uint32_t bw, Symmetry schema) {
  a = std::min(a, 0.0);
  b = std::max(b, 0.0);
  if (b - a < 1e-12) b = a + 1e-4;
  Grid g;
  if (schema == Symmetry::kAsymmetric || schema == Symmetry::kUnsignedSymmetric) {
    g.qmin = 0;
    g.qmax = std::ldexp(1.0, static_cast<int>(bw)) - 1;
    g.scale = (b - a) / g.qmax;
    g.zp = std::nearbyint(-a / g.scale);
  } else {
    const double m = std::max(-a, b);
    g.qmax = std::ldexp(1.0, static_cast<int>(bw) - 1) - 1;
    g.qmin = -g.qmax - 1;
    g.scale = m / g.qmax;
    g.zp = 0;
  }
  return g;
}

// Sum over bins of count x squared error; clipped error weighted by `gamma`.
double Cost(const std::vector<uint64_t>& hist, double lo, double width, const Grid& g, double a, double b,
            double gamma) {
  double cost = 0;
  for (size_t i = 0; i < hist.size(); ++i) {
    if (!hist[i]) continue;
    const double c = lo + (static_cast<double>(i) + 0.5) * width;
    const double e = c - g.QDQ(c);
    const double w = (c < a || c > b) ? gamma : 1.0;
    cost += static_cast<double>(hist[i]) * e * e * w;
  }
  return cost;
}

}  // namespace

std::pair<float, float> SearchRange(Method m, const std::vector<uint64_t>& hist, float lo, float hi, uint32_t bitwidth,
                                    Symmetry schema, double percentile) {
  if (m == Method::kMinMax || hist.empty() || !(hi > lo)) return {lo, hi};
  const double width = (static_cast<double>(hi) - lo) / static_cast<double>(hist.size());
  if (m == Method::kPercentile) {
    uint64_t total = 0;
    for (uint64_t c : hist) total += c;
    if (!total) return {lo, hi};
    const double tail = (100.0 - std::clamp(percentile, 50.0, 100.0)) / 100.0 * static_cast<double>(total);
    uint64_t acc = 0;
    size_t i_lo = 0, i_hi = hist.size() - 1;
    for (size_t i = 0; i < hist.size(); ++i) {
      acc += hist[i];
      if (static_cast<double>(acc) > tail) {
        i_lo = i;
        break;
      }
    }
    acc = 0;
    for (size_t i = hist.size(); i-- > 0;) {
      acc += hist[i];
      if (static_cast<double>(acc) > tail) {
        i_hi = i;
        break;
      }
    }
    const double a = i_lo == 0 ? lo : lo + static_cast<double>(i_lo) * width;
    const double b = i_hi + 1 == hist.size() ? hi : lo + static_cast<double>(i_hi + 1) * width;
    return {static_cast<float>(a), static_cast<float>(std::max(a, b))};
  }
  // mse: shrink both ends together; sqnr (TF-enhanced family): shrink each
  // end on its own, with clipping penalised (gamma) over rounding noise.
  const double gamma = m == Method::kSqnr ? 3.0 : 1.0;
  double best_a = lo, best_b = hi;
  double best = Cost(hist, lo, width, MakeGrid(lo, hi, bitwidth, schema), lo, hi, gamma);
  auto consider = [&](double a, double b) {
    const double c = Cost(hist, lo, width, MakeGrid(a, b, bitwidth, schema), a, b, gamma);
    if (c < best) {
      best = c;
      best_a = a;
      best_b = b;
    }
  };
  if (m == Method::kMse) {
    for (int k = 99; k >= 5; --k) consider(lo * k / 100.0, hi * k / 100.0);
  } else {
    for (int i = 20; i >= 2; --i)
      for (int j = 20; j >= 2; --j) consider(lo * i / 20.0, hi * j / 20.0);
  }
  return {static_cast<float>(best_a), static_cast<float>(best_b)};
}

namespace {

// Min/max and the mask sentinels seen (calib/sentinel_range.h), per tensor.
using ActStats = TensorStats;

ActStats Unseen() {
  ActStats s;
  s.min = std::numeric_limits<float>::infinity();
  s.max = -std::numeric_limits<float>::infinity();
  return s;
}

// An 8-bit output of an op whose range the target fixes
// (Options::wide_fixed_ranges): 16 bits.
bool WidenFixedRange(const Graph& g, const Tensor& t, const Options& o) {
  if (o.act_bitwidth >= 16 || t.producer == kInvalidId) return false;
  const std::string& type = g.op(t.producer).type;
  for (const FixedOutputRange& f : o.wide_fixed_ranges)
    if (f.op_type == type) return true;
  return false;
}

DType ActDType(const Options& o) {
  const bool is_signed = o.act_schema == Symmetry::kSymmetric || o.act_schema == Symmetry::kStrictSymmetric;
  return *FixedPointDType(is_signed, o.act_bitwidth);
}

// Per-channel scales worth a warning: at least this much more weight SQNR.
constexpr double kChannelGainDb = 3;

}  // namespace

namespace {

// Per-channel weights with a searching method (mse, sqnr, percentile): the
// method's clipping range per channel, from a histogram of that channel's
// values (a channel with one outlier gets its own clip; the others keep
// their range).
Result<Encoding> SearchPerChannel(const std::string& name, const float* data, const std::vector<int64_t>& dims,
                                  int32_t axis, const quant::EncodingRequest& req, const Options& o, uint32_t bitwidth) {
  const auto a = NormalizeAxis(axis, dims.size());
  if (!a) return InvalidArgument("tensor '{}': per-channel axis {} out of range for rank {}", name, axis, dims.size());
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i < *a) outer *= dims[i];
    if (i > *a) inner *= dims[i];
  }
  const int64_t channels = dims[*a];
  std::vector<float> ranges(static_cast<size_t>(2 * channels)), values;
  std::vector<uint64_t> hist(o.histogram_bins);
  for (int64_t c = 0; c < channels; ++c) {
    values.clear();
    for (int64_t out = 0; out < outer; ++out) {
      const float* row = data + (out * channels + c) * inner;
      values.insert(values.end(), row, row + inner);
    }
    const float lo = *std::min_element(values.begin(), values.end());
    const float hi = *std::max_element(values.begin(), values.end());
    std::fill(hist.begin(), hist.end(), 0);
    if (hi > lo) kernels::Histogram(values.data(), values.size(), lo, hi, o.histogram_bins, hist.data());
    const auto [l, h] =
        hi > lo ? SearchRange(o.param_method, hist, lo, hi, bitwidth, req.symmetry, o.percentile) : std::pair{lo, hi};
    ranges[static_cast<size_t>(2 * c)] = l;
    ranges[static_cast<size_t>(2 * c + 1)] = h;
  }
  quant::EncodingRequest per_channel = req;
  per_channel.axis = 0;  // over the [channels, 2] table of ranges
  auto enc = quant::ComputeEncoding(name, ranges.data(), {channels, 2}, per_channel);
  if (!enc.ok()) return enc.status();
  Encoding e = std::move(enc).value();
  e.axis = static_cast<int32_t>(*a);
  return e;
}

}  // namespace

Status ValidateOptions(const Options& o) {
  if (o.act_bitwidth != 8 && o.act_bitwidth != 16) return InvalidArgument("--act_bitwidth {}: must be 8 or 16", o.act_bitwidth);
  if (o.weights_bitwidth != 4 && o.weights_bitwidth != 8 && o.weights_bitwidth != 16)
    return InvalidArgument("--weights_bitwidth {}: must be 4, 8 or 16", o.weights_bitwidth);
  if (o.lpbq && (o.block_size == 0 || o.weights_bitwidth != 4))
    return InvalidArgument("--use_lpbq needs --weights_block_size N and --weights_bitwidth 4");
  if (o.act_method == Method::kSeqMse)
    return InvalidArgument("--act_quantizer_calibration seqmse: seqmse chooses weight encodings only "
                           "(--param_quantizer_calibration seqmse); activations take min-max, sqnr, mse or percentile");
  if (o.histogram_bins < 16 || o.histogram_bins > (1u << 16))
    return InvalidArgument("histogram bins {}: must be in [16, 65536]", o.histogram_bins);
  return Status::Ok();
}

// Sequential MSE runs the model level by level: statistics or weight values
// alone cannot choose its encodings.
Status NeedsSamples(const Options& o) {
  if (o.bias_correction)
    return InvalidArgument("--bias_correction compares the float and quantized models' output means on the samples, "
                           "so it needs them here (--input_list)");
  if (o.adaptive_rounding)
    return InvalidArgument("--adaptive_rounding chooses each weight's rounding by its op's output error on the "
                           "samples, so it needs them here (--input_list)");
  if (o.param_method != Method::kSeqMse) return Status::Ok();
  return InvalidArgument("--param_quantizer_calibration seqmse runs the samples once per level of weighted ops, so it "
                         "needs them here (--input_list); statistics or weight values alone cannot choose its "
                         "encodings: use min-max, sqnr, mse or percentile for the weights");
}

std::vector<TensorId> ObservedActivations(const Graph& g, const Options& o, size_t* kept) {
  std::vector<TensorId> acts;
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    if (t.kind == TensorKind::kStatic) continue;
    if (t.encoding) {
      if (kept) ++*kept;
      continue;
    }
    if (t.dtype != DType::kFloat32 && t.dtype != DType::kFloat16) continue;
    if (std::find(o.float_inputs.begin(), o.float_inputs.end(), t.name) != o.float_inputs.end()) continue;
    acts.push_back(id);
  }
  return acts;
}

Status CheckFloatInputs(const Graph& g, const Options& o) {
  for (const std::string& n : o.float_inputs) {
    auto id = g.FindTensor(n);
    if (!id || g.tensor(*id).kind != TensorKind::kInput)
      return InvalidArgument("--input_encoding {} other: '{}' is not a graph input", n, n);
  }
  return Status::Ok();
}

namespace {
// CollectStats / CalibrateFromStats with the graph's fingerprint given.
Status CollectStatsOf(const Graph& g, uint64_t model_fingerprint, const SampleSource& samples, const Options& o,
                      uint32_t shard, uint32_t shard_count, const Stats* ranges, Stats* out,
                      const std::function<void(size_t, size_t, const char*)>& progress);
Status CalibrateFromStatsOf(Graph* graph, uint64_t model_fingerprint, const Stats& st, const Options& o,
                            Report* report, std::string_view what);
}  // namespace

Status Calibrate(Graph* graph, const SampleSource& samples, const Options& o, Report* report,
                 const std::function<void(size_t, size_t, const char*)>& progress) {
  if (!graph || !report) return InvalidArgument("Calibrate: graph and report must not be NULL");
  *report = Report{};
  QAIRT_RETURN_IF_ERROR(ValidateOptions(o));
  if (o.bias_correction) {
    // Every encoding first (and any weight search), then the biases
    // corrected against the float graph, committed together.
    Options base = o;
    base.bias_correction = false;
    Graph work = *graph;
    QAIRT_RETURN_IF_ERROR(Calibrate(&work, samples, base, report, progress));
    BiasCorrectionReport bc;
    QAIRT_RETURN_IF_ERROR(CorrectBiases(&work, *graph, samples, o.num_threads, o.realize, &bc, progress));
    report->notes.push_back(BiasCorrectionSummary(bc));
    *graph = std::move(work);
    return Status::Ok();
  }
  if (o.param_method == Method::kSeqMse || o.adaptive_rounding) {
    // Min-max encodings everywhere first (the search's starting point and
    // its candidate 0), then the weights re-chosen on a copy, committed
    // together: an error leaves the graph as it was.
    Options base = o;
    const bool search = o.param_method == Method::kSeqMse;
    if (search) base.param_method = Method::kMinMax;
    base.adaptive_rounding = false;
    Graph work = *graph;
    QAIRT_RETURN_IF_ERROR(Calibrate(&work, samples, base, report, progress));
    SeqMseReport seq;
    SeqMseOptions so;
    so.search_grids = search;
    so.adaptive_rounding = o.adaptive_rounding;
    so.num_threads = o.num_threads;
    QAIRT_RETURN_IF_ERROR(SequentialMse(&work, samples, report->params, so, &seq, progress));
    report->notes.push_back(SeqMseSummary(seq));
    *graph = std::move(work);
    return Status::Ok();
  }
  // Statistics that never leave this call need no model fingerprint (0):
  // hashing every weight three times would be work on every convert.
  Stats ranges;
  QAIRT_RETURN_IF_ERROR(CollectStatsOf(*graph, 0, samples, o, 0, 1, nullptr, &ranges, progress));
  if (o.act_method == Method::kMinMax) return CalibrateFromStatsOf(graph, 0, ranges, o, report, "calibration");
  Stats hist;
  QAIRT_RETURN_IF_ERROR(CollectStatsOf(*graph, 0, samples, o, 0, 1, &ranges, &hist, progress));
  return CalibrateFromStatsOf(graph, 0, hist, o, report, "calibration");
}

Status CollectStats(const Graph& g, const SampleSource& samples, const Options& o, uint32_t shard,
                    uint32_t shard_count, const Stats* ranges, Stats* out,
                    const std::function<void(size_t, size_t, const char*)>& progress) {
  return CollectStatsOf(g, ModelFingerprint(g), samples, o, shard, shard_count, ranges, out, progress);
}

Status CalibrateFromStats(Graph* graph, const Stats& st, const Options& o, Report* report, std::string_view what) {
  if (!graph) return InvalidArgument("CalibrateFromStats: graph and report must not be NULL");
  return CalibrateFromStatsOf(graph, ModelFingerprint(*graph), st, o, report, what);
}

namespace {

Status CollectStatsOf(const Graph& g, uint64_t model_fingerprint, const SampleSource& samples, const Options& o,
                      uint32_t shard, uint32_t shard_count, const Stats* ranges, Stats* out,
                      const std::function<void(size_t, size_t, const char*)>& progress) {
  if (!out) return InvalidArgument("CollectStats: out must not be NULL");
  QAIRT_RETURN_IF_ERROR(ValidateOptions(o));
  QAIRT_RETURN_IF_ERROR(CheckFloatInputs(g, o));
  if (shard_count == 0 || shard >= shard_count)
    return InvalidArgument("shard {}/{}: the shard index must be below the shard count", shard, shard_count);
  if (samples.count == 0) return InvalidArgument("calibration needs at least one sample");
  if (shard >= samples.count)
    return InvalidArgument("shard {}/{}: the input_list has only {} samples", shard, shard_count, samples.count);
  const std::vector<TensorId> acts = ObservedActivations(g, o, nullptr);
  Stats st;
  st.round = ranges ? 2 : 1;
  st.model_fingerprint = model_fingerprint;
  st.options_fingerprint = OptionsFingerprint(o);
  st.histogram_bins = o.histogram_bins;
  st.shard_count = shard_count;
  st.shards = {shard};
  st.list_samples = samples.count;
  if (ranges) {
    QAIRT_RETURN_IF_ERROR(CheckStatsFit(*ranges, st, "the ranges (round 1)"));
    if (ranges->round != 1) return InvalidArgument("the ranges file holds round {}, not round 1 (ranges)", ranges->round);
    if (!ranges->complete())
      return InvalidArgument("the ranges (round 1) cover {} of {} shards: merge every shard first", ranges->shards.size(),
                             ranges->shard_count);
    st.ranges_fingerprint = ranges->RangesFingerprint();
  }
  std::vector<int32_t> slot(g.tensor_count(), -1);
  for (size_t k = 0; k < acts.size(); ++k) slot[acts[k]] = static_cast<int32_t>(k);
  std::vector<ActStats> stats(acts.size(), Unseen());
  if (ranges) {
    if (ranges->tensors.size() != acts.size())
      return InvalidArgument("the ranges (round 1) hold {} tensors, the graph observes {}", ranges->tensors.size(),
                             acts.size());
    for (size_t k = 0; k < acts.size(); ++k) {
      if (ranges->tensors[k].name != g.tensor(acts[k]).name)
        return InvalidArgument("the ranges (round 1): tensor {} is '{}', the graph's is '{}'", k, ranges->tensors[k].name,
                               g.tensor(acts[k]).name);
      stats[k] = ranges->tensors[k];
      stats[k].hist.assign(o.histogram_bins, 0);
    }
  }
  const size_t pass = ranges ? 1 : 0;
  std::vector<size_t> mine_samples;
  for (size_t i = shard; i < samples.count; i += shard_count) mine_samples.push_back(i);
  const uint32_t workers = std::max<uint32_t>(
      1, std::min<uint32_t>(o.num_threads ? o.num_threads : std::thread::hardware_concurrency(),
                            static_cast<uint32_t>(mine_samples.size())));
  std::mutex mu;
  size_t done = 0;
  {
    // Each worker: its own executor, its own partial statistics over a
    // strided subset of this shard's samples, merged exactly (min/max/counts).
    std::vector<Status> errors(workers);
    std::vector<std::vector<ActStats>> partial(workers, std::vector<ActStats>(acts.size(), Unseen()));
    auto work = [&](uint32_t w) {
      auto ex = exec::Executor::Create(g, exec::Options{1, false});
      if (!ex.ok()) {
        errors[w] = ex.status();
        return;
      }
      auto& mine = partial[w];
      if (pass == 1)
        for (auto& s : mine) s.hist.assign(o.histogram_bins, 0);
      std::vector<uint64_t> scratch(o.histogram_bins);
      auto observe = [&](TensorId id, const float* x, size_t n) {
        const int32_t k = slot[id];
        if (k < 0) return;
        ActStats& s = mine[k];
        if (pass == 0) {
          // SIMD min/max of the kernels library (this runs on every activation).
          float lo, hi;
          kernels::MinMaxGrid(x, kernels::Grid::PerTensor({static_cast<int64_t>(n)}), &lo, &hi);
          if (IsSentinel(lo) || IsSentinel(hi)) {
            RealMinMax(x, n, &s);  // a masked tensor: the slow path, once per tensor and sample
          } else {
            s.min = std::min(s.min, lo);
            s.max = std::max(s.max, hi);
          }
        } else {
          const ActStats& r = stats[k];
          if (!(r.max > r.min)) return;
          kernels::Histogram(x, n, r.min, r.max, o.histogram_bins, scratch.data());
          for (uint32_t b = 0; b < o.histogram_bins; ++b) s.hist[b] += scratch[b];
        }
      };
      exec::Observer observer = [&](const exec::ObservedTensor& t) -> Status {
        if (t.storage_dtype == DType::kFloat32) observe(t.id, static_cast<const float*>(t.data), t.bytes / 4);
        return Status::Ok();
      };
      for (size_t j = w; j < mine_samples.size(); j += workers) {
        const size_t i = mine_samples[j];
        auto sample = samples.load(i);
        if (!sample.ok()) {
          errors[w] = sample.status();
          return;
        }
        const auto& bufs = sample.value();
        for (size_t in = 0; in < g.inputs().size() && in < bufs.size(); ++in)
          if (g.tensor(g.inputs()[in]).dtype == DType::kFloat32)
            observe(g.inputs()[in], reinterpret_cast<const float*>(bufs[in].data()), bufs[in].size() / 4);
        auto run = ex.value()->Run(bufs, &observer);
        if (!run.ok()) {
          errors[w] = Status(run.status().code(), fmt::format("sample {}: {}", i, run.status().message()));
          return;
        }
        std::lock_guard<std::mutex> lock(mu);
        ++done;
        // Per round: (sample, samples, "ranges" | "histograms").
        if (progress) progress(done, mine_samples.size(), pass == 0 ? "ranges" : "histograms");
      }
    };
    std::vector<std::thread> threads;
    for (uint32_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
    work(0);
    for (auto& t : threads) t.join();
    for (const Status& e : errors)
      if (!e.ok()) return e;
    for (uint32_t w = 0; w < workers; ++w)
      for (size_t k = 0; k < acts.size(); ++k) {
        if (pass == 0) {
          stats[k].min = std::min(stats[k].min, partial[w][k].min);
          stats[k].max = std::max(stats[k].max, partial[w][k].max);
          stats[k].low_sentinel = stats[k].low_sentinel || partial[w][k].low_sentinel;
          stats[k].high_sentinel = stats[k].high_sentinel || partial[w][k].high_sentinel;
        } else {
          for (uint32_t b = 0; b < o.histogram_bins; ++b) stats[k].hist[b] += partial[w][k].hist[b];
        }
      }
  }
  for (size_t k = 0; k < acts.size(); ++k) stats[k].name = g.tensor(acts[k]).name;
  st.tensors = std::move(stats);
  st.samples = mine_samples.size();
  *out = std::move(st);
  return Status::Ok();
}

// The encoding a static tensor's plan asks for.
quant::EncodingRequest RequestOf(const ParamPlan& p, const Options& o) {
  quant::EncodingRequest req;
  req.kind = p.kind;
  req.axis = p.axis;
  req.block_sizes = p.block_sizes;
  const Symmetry schema = p.activation_like ? o.act_schema : (p.asymmetric ? Symmetry::kAsymmetric : o.param_schema);
  const bool is_signed = schema == Symmetry::kSymmetric || schema == Symmetry::kStrictSymmetric ||
                         p.kind == EncodingKind::kLpbq;
  req.symmetry = p.kind == EncodingKind::kLpbq ? Symmetry::kSymmetric : schema;
  req.dtype = *FixedPointDType(is_signed, p.bitwidth);
  if (p.lpbq) req.decompressed_bitwidth = 8;
  return req;
}

// Encodings of the static float tensors without one, computed from their
// values into `out` (a copy of `g`); tensors holding mask sentinels are
// added to `masked`.
Status EncodeParams(const Graph& g, const Options& o, Graph* out_graph, Report* report,
                    std::vector<std::string>* masked_out) {
  Graph& out = *out_graph;
  std::vector<std::string>& masked = *masked_out;
  // The weights' range passes on o.num_threads threads (0: every core); the
  // encodings do not depend on it.
  std::unique_ptr<kernels::ThreadPool> pool;
  if (o.num_threads != 1) pool = std::make_unique<kernels::ThreadPool>(o.num_threads);
  quant::QuantizeOptions range_options;
  range_options.pool = pool.get();
  size_t coarse_weights = 0;
  ChannelGain worst_gain;
  std::string worst;
  std::vector<std::pair<TensorId, ParamPlan>> todo;
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    if (t.kind != TensorKind::kStatic || t.encoding || t.dtype != DType::kFloat32 || !t.data) continue;
    ParamPlan p = PlanParam(g, t, o, &report->warnings);
    if (p.skip) continue;
    const auto count = t.shape.element_count();
    if (!count || t.data->size() != *count * sizeof(float)) continue;
    todo.emplace_back(id, std::move(p));
  }
  // Weights encoded from their min-max ranges (most of a model's bytes)
  // are encoded several at once, each on one thread: one weight on all
  // threads left them waiting while its encoding was made from its ranges
  // (a fifth of an LLM's range pass). A weight of more than a
  // (4 x threads)th of them all is still read on every thread, below.
  std::vector<std::optional<Result<Encoding>>> early(todo.size());
  if (pool && o.param_method == Method::kMinMax) {
    std::vector<size_t> each;
    size_t total = 0;
    for (size_t k = 0; k < todo.size(); ++k)
      if (!todo[k].second.activation_like) total += g.tensor(todo[k].first).data->size();
    const size_t big = total / (4 * kernels::PoolSize(pool.get()));
    for (size_t k = 0; k < todo.size(); ++k)
      if (!todo[k].second.activation_like && g.tensor(todo[k].first).data->size() <= big) each.push_back(k);
    // Largest first: the last weights to start are small, so both threads
    // finish together.
    std::stable_sort(each.begin(), each.end(), [&](size_t a, size_t b) {
      return g.tensor(todo[a].first).data->size() > g.tensor(todo[b].first).data->size();
    });
    quant::QuantizeOptions single = range_options;
    single.pool = nullptr;
    pool->ParallelFor(each.size(), [&](size_t task, size_t) {
      const size_t k = each[task];
      const Tensor& t = g.tensor(todo[k].first);
      early[k] = quant::ComputeEncoding(t.name, *t.data, t.shape.extents(), RequestOf(todo[k].second, o), single);
    });
  }
  for (size_t item = 0; item < todo.size(); ++item) {
    const TensorId id = todo[item].first;
    const Tensor& t = g.tensor(id);
    const ParamPlan& p = todo[item].second;
    const auto count = t.shape.element_count();
    // A transposed view (a rewritten MatMul weight) is read as its source:
    // the same values with the dims reversed, axis a of the view being
    // axis 1 - a there, so no transposed copy is made.
    const StaticTransposition* view = t.data->transposition();
    const bool swapped = view && view->elem == sizeof(float) && t.shape.rank() == 2 &&
                         t.shape[0].value == view->cols && t.shape[1].value == view->rows;
    const float* data = reinterpret_cast<const float*>(swapped ? view->source->data() : t.data->data());
    const std::vector<int64_t> data_dims =
        swapped ? std::vector<int64_t>{view->rows, view->cols} : t.shape.extents();
    auto data_axis = [&](int32_t a) { return swapped && a >= 0 ? 1 - a : a; };
    const quant::EncodingRequest req = RequestOf(p, o);
    std::vector<int64_t> dims = t.shape.extents();
    Result<Encoding> enc = Status::Ok();
    ActStats sentinel_scan;
    bool clean = false;  // every value finite and none a mask sentinel: [lo, hi] is the range
    float scan_lo = 0, scan_hi = 0;
    if (p.activation_like && p.kind == EncodingKind::kPerTensor) {
      size_t nonfinite = 0;
      quant::RangeOf(swapped ? *view->source : *t.data, *count, pool.get(), &scan_lo, &scan_hi, &nonfinite);
      clean = nonfinite == 0 && !IsSentinel(scan_lo) && !IsSentinel(scan_hi);
      if (!clean) RealMinMax(data, *count, &sentinel_scan);  // a masked table: the slow path
    }
    if (clean && o.param_method == Method::kMinMax) {
      // One pass gave the range and vouched for the values: the encoding
      // needs no second pass.
      const float range[2] = {scan_lo, scan_hi};
      enc = quant::ComputeEncoding(t.name, range, {2}, req);
      if (enc.ok()) t.data->MarkFinite();
    } else if (sentinel_scan.low_sentinel || sentinel_scan.high_sentinel) {
      // A mask fill constant (-inf, finfo.min): the range of its real values
      // widened as for masked activations.
      masked.push_back(t.name);
      const auto [lo, hi] = RangeWithSentinels(sentinel_scan);
      const float range[2] = {lo, hi};
      enc = quant::ComputeEncoding(t.name, range, {2}, req);
    } else if (p.kind == EncodingKind::kPerTensor && o.param_method != Method::kMinMax && *count > 1) {
      float lo = *std::min_element(data, data + *count), hi = *std::max_element(data, data + *count);
      std::vector<uint64_t> hist(o.histogram_bins);
      if (hi > lo) kernels::Histogram(data, *count, lo, hi, o.histogram_bins, hist.data());
      auto [a, b] = SearchRange(o.param_method, hist, lo, hi, p.bitwidth, req.symmetry, o.percentile);
      const float range[2] = {a, b};
      enc = quant::ComputeEncoding(t.name, range, {2}, req);
    } else if (p.kind == EncodingKind::kPerChannel && o.param_method != Method::kMinMax && *count > 1) {
      enc = SearchPerChannel(t.name, data, data_dims, data_axis(p.axis), req, o, p.bitwidth);
      if (enc.ok()) enc.value().axis = p.axis;
    } else if (early[item]) {
      enc = std::move(*early[item]);
    } else {
      enc = quant::ComputeEncoding(t.name, *t.data, dims, req, range_options);
    }
    if (!enc.ok()) return enc.status();
    Encoding e = enc.value();
    e.overridden = false;
    if (p.kind == EncodingKind::kPerTensor && !p.activation_like && e.scales.size() == 1 && e.is_fixed_point()) {
      const ChannelGain gain = PerChannelGain(data, data_dims, data_axis(p.channel_axis), e);
      if (gain.per_channel_db - gain.per_tensor_db >= kChannelGainDb) {
        ++coarse_weights;
        if (gain.per_channel_db - gain.per_tensor_db > worst_gain.per_channel_db - worst_gain.per_tensor_db)
          worst = t.name, worst_gain = gain;
      }
    }
    QAIRT_RETURN_IF_ERROR(out.SetEncoding(id, e));
    report->params.push_back(t.name);
  }
  if (coarse_weights) {
    auto db = [](double v) { return std::isinf(v) ? std::string("exact") : fmt::format("{:.1f} dB", v); };
    report->warnings.push_back(fmt::format(
        "{} weight{} quantized per tensor lose {} dB or more of weight SQNR against a scale per output channel "
        "(worst: '{}', {} per tensor, {} per channel): --use_per_channel_quantization (convolutions) or "
        "--use_per_row_quantization (MatMul, FullyConnected) gives each channel its own scale",
        coarse_weights, coarse_weights == 1 ? "" : "s", kChannelGainDb, worst, db(worst_gain.per_tensor_db),
        db(worst_gain.per_channel_db)));
  }
  return Status::Ok();
}

// A lookup (Gather) in a static table outputs values of the table: where
// calibration encoded both here, the output takes the table's encoding. The
// two are one chain of a data-movement op to the target, so an output
// encoding of its own became a Convert after it: a second rounding of every
// value looked up (the token embeddings of a decoder at W8A8: 0.3 dB of its
// output). The table's range holds every row, seen in calibration or not.
Status LookupsTakeTableEncodings(const Graph& g, Graph* out) {
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    if (op.type != "Gather" && op.type != "GatherElements" && op.type != "GatherNd") continue;
    if (op.inputs.empty() || op.outputs.size() != 1 || op.inputs[0] == kInvalidId) continue;
    const TensorId table = op.inputs[0], result = op.outputs[0];
    if (g.tensor(table).kind != TensorKind::kStatic || g.tensor(table).encoding || g.tensor(result).encoding) continue;
    const auto& te = out->tensor(table).encoding;
    const auto& re = out->tensor(result).encoding;
    if (!te || !re || te->kind != EncodingKind::kPerTensor || te->effective_bitwidth() != re->effective_bitwidth())
      continue;
    QAIRT_RETURN_IF_ERROR(out->SetEncoding(result, *te));
  }
  return Status::Ok();
}

// The warning for activations and constants that hold mask sentinels.
void WarnMasked(const std::vector<std::string>& masked, Report* report) {
  if (!masked.empty())
    report->warnings.push_back(fmt::format(
        "{} tensor{} hold attention-mask values (-inf or |x| >= 1e30, e.g. '{}'): their ranges leave them out and "
        "reach {} below the real values, so the masked entries saturate there and still vanish after softmax",
        masked.size(), masked.size() == 1 ? "" : "s", masked.front(), kMaskDepth));
}

Status CalibrateFromStatsOf(Graph* graph, uint64_t model_fingerprint, const Stats& st, const Options& o,
                            Report* report, std::string_view what) {
  if (!graph || !report) return InvalidArgument("CalibrateFromStats: graph and report must not be NULL");
  *report = Report{};
  QAIRT_RETURN_IF_ERROR(ValidateOptions(o));
  QAIRT_RETURN_IF_ERROR(NeedsSamples(o));
  QAIRT_RETURN_IF_ERROR(CheckFloatInputs(*graph, o));
  const Graph& g = *graph;
  Stats expect;
  expect.model_fingerprint = model_fingerprint;
  expect.options_fingerprint = OptionsFingerprint(o);
  expect.histogram_bins = o.histogram_bins;
  QAIRT_RETURN_IF_ERROR(CheckStatsFit(st, expect, what));
  if (!st.complete())
    return InvalidArgument("{} cover {} of {} shards (missing: {}): merge every shard first", what, st.shards.size(),
                           st.shard_count, MissingShards(st));
  if (o.act_method != Method::kMinMax && st.round != 2)
    return InvalidArgument("{} hold round 1 (ranges) only; --act_quantizer_calibration {} needs round 2 (histograms): "
                           "collect it with the merged ranges (qairt calibrate --ranges)", what, MethodName(o.act_method));
  const std::vector<TensorId> acts = ObservedActivations(g, o, &report->kept);
  if (st.tensors.size() != acts.size())
    return InvalidArgument("{} hold {} tensors, the graph observes {}", what, st.tensors.size(), acts.size());
  std::vector<ActStats> stats = st.tensors;
  for (size_t k = 0; k < acts.size(); ++k)
    if (stats[k].name != g.tensor(acts[k]).name)
      return InvalidArgument("{}: tensor {} is '{}', the graph's is '{}'", what, k, stats[k].name, g.tensor(acts[k]).name);

  // Encodings, built on a copy so an error leaves the graph as it was.
  Graph out = *graph;
  quant::EncodingRequest act_req;
  act_req.dtype = ActDType(o);
  act_req.symmetry = o.act_schema;
  quant::EncodingRequest wide_req = act_req;
  Options wide_o = o;
  wide_o.act_bitwidth = 16;
  wide_req.dtype = ActDType(wide_o);
  size_t widened = 0;
  std::vector<std::string> masked;  // tensors holding mask sentinels
  for (size_t k = 0; k < acts.size(); ++k) {
    const Tensor& t = g.tensor(acts[k]);
    const bool sentinels = stats[k].low_sentinel || stats[k].high_sentinel;
    if (!sentinels && (!std::isfinite(stats[k].min) || !std::isfinite(stats[k].max))) {
      report->warnings.push_back(fmt::format("tensor '{}' was never computed (dead code?): no encoding", t.name));
      continue;
    }
    if (sentinels) {
      masked.push_back(t.name);
      std::tie(stats[k].min, stats[k].max) = RangeWithSentinels(stats[k]);
    }
    static const std::vector<uint64_t> kNoHistogram;
    auto [a, b] = SearchRange(o.act_method, o.act_method == Method::kMinMax ? kNoHistogram : stats[k].hist,
                              stats[k].min, stats[k].max, o.act_bitwidth, o.act_schema, o.percentile);
    const float range[2] = {a, b};
    const bool wide = WidenFixedRange(g, t, o);
    auto enc = quant::ComputeEncoding(t.name, range, {2}, wide ? wide_req : act_req);
    if (!enc.ok()) return enc.status();
    widened += wide;
    Encoding e = enc.value();
    e.overridden = false;
    QAIRT_RETURN_IF_ERROR(out.SetEncoding(acts[k], e));
    report->activations.push_back(t.name);
  }
  QAIRT_RETURN_IF_ERROR(EncodeParams(g, o, &out, report, &masked));
  QAIRT_RETURN_IF_ERROR(LookupsTakeTableEncodings(g, &out));
  WarnMasked(masked, report);
  if (!o.wide_fixed_ranges.empty())
    report->notes.push_back(fmt::format(
        "wide fixed ranges: {} output{} of ops the target fixes to a range given 16 bits",
        widened, widened == 1 ? "" : "s"));
  report->samples = st.samples;
  *graph = std::move(out);
  return Status::Ok();
}

}  // namespace

Status CalibrateParams(Graph* graph, const Options& o, Report* report) {
  if (!graph || !report) return InvalidArgument("CalibrateParams: graph and report must not be NULL");
  *report = Report{};
  QAIRT_RETURN_IF_ERROR(ValidateOptions(o));
  QAIRT_RETURN_IF_ERROR(NeedsSamples(o));
  Graph out = *graph;  // an error leaves the graph as it was
  std::vector<std::string> masked;
  QAIRT_RETURN_IF_ERROR(EncodeParams(*graph, o, &out, report, &masked));
  WarnMasked(masked, report);
  *graph = std::move(out);
  return Status::Ok();
}

}  // namespace qairt::calib
