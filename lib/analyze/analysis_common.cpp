#include "analyze/analysis_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>

#include "kernels/ops.h"

namespace qairt::analyze::detail {
std::string Label(uint32_t w, uint32_t a) { return fmt::format("W{}A{}", w, a); }


// Calibration options of the high precision: the base ones at the high bit
// widths; blocks and LPBQ (4-bit schemes) off at 8 bits and up; per-tensor
// 16-bit weights where the target's A16W16 kernels take only those.
calib::Options HighCalibration(const Options& o) {
  calib::Options high = o.calibration;
  high.act_bitwidth = o.high_act_bitwidth;
  high.weights_bitwidth = o.high_weights_bitwidth;
  if (high.weights_bitwidth >= 8) {
    high.block_size = 0;
    high.lpbq = false;
  }
  if (high.weights_bitwidth == 16 && o.high_weights_per_tensor) high.per_channel = high.per_row = false;
  return high;
}

// `g` with the proxy tensors appended to its outputs (they follow the
// graph's own outputs in every run's results).
Result<Graph> WithProxies(const Graph& g, const std::vector<std::string>& proxies) {
  Graph out = g;
  for (const std::string& name : proxies) {
    auto id = out.FindTensor(name);
    if (!id) return InvalidArgument("mixed precision: tensor '{}' is missing from a candidate graph", name);
    if (Status s = out.MarkOutput(*id); !s.ok()) return s;
  }
  return out;
}

static Status PrepareUnits(const Graph& float_graph, Prepared* p, bool split_parts);

Status Prepare(const Graph& float_graph, const calib::SampleSource& samples, const calib::SampleSource& scoring,
               const Options& o, Prepared* p, bool split_parts) {
  if (samples.count == 0 || scoring.count == 0) return InvalidArgument("the analysis needs at least one sample");
  const calib::Options high = HighCalibration(o);
  p->low = float_graph;
  p->high = float_graph;
  calib::Report rep;
  if (Status s = calib::CalibrateBoth(&p->low, o.calibration, &p->high, high, samples, &rep); !s.ok()) return s;
  QAIRT_RETURN_IF_ERROR(PrepareReference(float_graph, scoring, o, p));
  return PrepareUnits(float_graph, p, split_parts);
}

Status PrepareReference(const Graph& float_graph, const calib::SampleSource& scoring, const Options& o, Prepared* p) {
  const std::vector<TensorId> ranking = RankingTensors(float_graph);
  for (size_t k = 0; k < ranking.size(); ++k) {
    const TensorId out = float_graph.outputs()[k], proxy = ranking[k];
    if (proxy == out) {
      p->proxy_slot.push_back(p->proxy_slot.size());
    } else {
      p->proxy_slot.push_back(float_graph.outputs().size() + p->proxies.size());
      p->proxies.push_back(float_graph.tensor(proxy).name);
    }
  }
  auto with_proxies = WithProxies(float_graph, p->proxies);
  if (!with_proxies.ok()) return with_proxies.status();
  auto ref = calib::RunSamples(with_proxies.value(), scoring, false, o.num_threads, p->workspace);
  if (!ref.ok()) return ref.status();
  p->reference = std::move(ref).value();
  return Status::Ok();
}

// The units of Prepare: graph inputs, then ops in topological order. A
// tensor belongs to the first unit that claims it (a weight shared by two ops).
static Status PrepareUnits(const Graph& float_graph, Prepared* p, bool split_parts) {
  std::set<TensorId> claimed;
  auto differs = [&](TensorId t) {
    return p->low.tensor(t).encoding && p->low.tensor(t).encoding != p->high.tensor(t).encoding;
  };
  for (TensorId t : float_graph.inputs()) {
    if (p->low.tensor(t).encoding) ++p->layers;
    if (!differs(t)) continue;
    claimed.insert(t);
    p->units.push_back(Unit{float_graph.tensor(t).name, "input", "", 0, {t}, 0, 0});
  }
  auto order = float_graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  size_t depth = 0;
  for (OpId id : order.value()) {
    const Op& op = float_graph.op(id);
    ++depth;
    Unit u{op.name, op.type, "", depth, {}, 0, 0};
    bool layer = false;
    for (TensorId t : op.outputs) layer = layer || p->low.tensor(t).encoding.has_value();
    for (TensorId t : op.inputs)
      layer = layer || (t != kInvalidId && float_graph.tensor(t).kind == TensorKind::kStatic &&
                        p->low.tensor(t).encoding.has_value());
    p->layers += layer;
    for (TensorId t : op.outputs)
      if (differs(t) && claimed.insert(t).second) u.tensors.push_back(t);
    Unit w = u;
    w.tensors.clear();
    w.part = "weights";
    for (TensorId t : op.inputs)
      if (t != kInvalidId && float_graph.tensor(t).kind == TensorKind::kStatic && differs(t) &&
          claimed.insert(t).second)
        (split_parts ? w : u).tensors.push_back(t);
    if (split_parts && !u.tensors.empty()) u.part = "activations";
    if (!u.tensors.empty()) p->units.push_back(std::move(u));
    if (!w.tensors.empty()) p->units.push_back(std::move(w));
  }
  return Status::Ok();
}

std::vector<TensorId> RankingTensors(const Graph& g) {
  std::vector<TensorId> r;
  for (TensorId out : g.outputs()) {
    const Tensor& t = g.tensor(out);
    TensorId proxy = out;
    if (t.producer != kInvalidId) {
      const Op& head = g.op(t.producer);
      if ((head.type == "Softmax" || head.type == "LogSoftmax" || head.type == "Sigmoid") && !head.inputs.empty() &&
          g.tensor(head.inputs[0]).kind == TensorKind::kActivation)
        proxy = head.inputs[0];
    }
    r.push_back(proxy);
  }
  return r;
}

// `base` with the encodings of `tensors` taken from `from` (or cleared).
Result<Graph> WithEncodingsOf(const Graph& base, const Graph& from, const std::vector<TensorId>& tensors) {
  Graph g = base;
  // A static tensor's values go with its encoding where calibration moved
  // them (adaptive rounding puts a weight on its grid), and a weight's op
  // takes `from`'s bias (bias correction fits a bias to its weight's
  // precision): rounded for one grid, used with the other, they are wrong.
  auto take_data = [&](TensorId t) -> Status {
    const Tensor& src = from.tensor(t);
    if (src.kind != TensorKind::kStatic || !src.data || src.data == g.tensor(t).data) return Status::Ok();
    return g.SetStaticData(t, src.dtype, src.data);
  };
  for (TensorId t : tensors) {
    const auto& e = from.tensor(t).encoding;
    Status s = e ? g.SetEncoding(t, *e) : g.ClearEncoding(t);
    if (!s.ok()) return s;
    if (from.tensor(t).kind != TensorKind::kStatic) continue;
    QAIRT_RETURN_IF_ERROR(take_data(t));
    for (const Use& u : from.tensor(t).consumers) {
      const Op& op = from.op(u.op);
      if (u.slot == 1 && op.inputs.size() > 2 && op.inputs[2] != kInvalidId) QAIRT_RETURN_IF_ERROR(take_data(op.inputs[2]));
    }
  }
  return g;
}


namespace {
Scores InfeasibleScores() {
  Scores s;
  s.sqnr = s.typical = kInfeasible;
  return s;
}
}  // namespace

// worst_half: the score is the worse of the two halves' SQNR (p.halves).
Result<Scores> Score(const Graph& g, const calib::SampleSource& samples, const Prepared& p, const Options& o,
                     bool worst_half) {
  std::optional<Graph> realized;
  if (o.realize) {
    auto r = o.realize(g);
    if (!r.ok()) return InfeasibleScores();  // no kernels for it
    realized = std::move(r).value();
  }
  auto run_graph = WithProxies(realized ? *realized : g, p.proxies);
  if (!run_graph.ok()) return InfeasibleScores();
  auto out = calib::RunSamples(run_graph.value(), samples, true, o.num_threads, p.workspace);
  if (!out.ok()) return out.status();
  const size_t n = samples.count, outputs = p.proxy_slot.size();
  for (size_t k = 0; k < p.reference.size(); ++k)
    if (k >= out.value().size() || out.value()[k].size() != p.reference[k].size())
      return InfeasibleScores();
  // Each sample's squared error and signal per result slot, computed once
  // (the aggregates below and the per-sample figures share them), in place
  // (copies of a large output per candidate were a sixth of a search's time).
  std::vector<std::vector<std::array<double, 2>>> sums(p.reference.size());
  auto sums_of = [&](size_t slot) -> const std::vector<std::array<double, 2>>& {
    std::vector<std::array<double, 2>>& e = sums[slot];
    if (e.empty() && n) {
      const std::vector<float>& r = p.reference[slot];
      const std::vector<float>& q = out.value()[slot];
      const size_t per = r.size() / n;
      e.resize(n);
      for (size_t i = 0; i < n; ++i) kernels::SquaredError(r.data() + i * per, q.data() + i * per, per, e[i].data());
    }
    return e;
  };
  // SQNR over samples `which` of the results `slots`: calib::Worst of those
  // samples' outputs concatenated, summed in the same order.
  auto subset = [&](const std::vector<size_t>& which, const std::vector<size_t>& slots) {
    double worst = 200;
    for (size_t slot : slots) {
      const auto& e = sums_of(slot);
      double rr = 0, err = 0;
      for (size_t i : which) {
        err += e[i][0];
        rr += e[i][1];
      }
      worst = std::min(worst, calib::SqnrDb(rr, err));
    }
    return worst;
  };
  std::vector<size_t> all(n), outs(outputs);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  for (size_t k = 0; k < outputs; ++k) outs[k] = k;
  calib::Halves even_odd;
  if (p.halves.fit.empty())
    for (size_t i = 0; i < n; ++i) (i % 2 ? even_odd.held_out : even_odd.fit).push_back(i);
  const calib::Halves& h = p.halves.fit.empty() ? even_odd : p.halves;
  Scores sc;
  sc.sqnr = worst_half && !h.fit.empty() && !h.held_out.empty() ? std::min(subset(h.fit, outs), subset(h.held_out, outs))
                                                                 : subset(all, outs);
  sc.typical = subset(all, p.proxy_slot);
  std::vector<double> per_sample(n, 200);
  for (size_t slot : outs) {
    const auto& e = sums_of(slot);
    for (size_t i = 0; i < n; ++i) per_sample[i] = std::min(per_sample[i], calib::SqnrDb(e[i][1], e[i][0]));
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return per_sample[a] < per_sample[b]; });
  for (size_t k = 0; k < std::min(n, kWorstSamples); ++k) sc.worst.emplace_back(order[k], per_sample[order[k]]);
  if (n) {
    const double mid = per_sample[order[n / 2]];
    sc.median = n % 2 ? mid : 0.5 * (per_sample[order[n / 2 - 1]] + mid);
  }
  return sc;
}

std::vector<TensorId> TensorsOf(const std::vector<Unit>& units, const std::vector<size_t>& chosen) {
  std::vector<TensorId> ts;
  for (size_t i : chosen) ts.insert(ts.end(), units[i].tensors.begin(), units[i].tensors.end());
  return ts;
}

std::string Db(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

}  // namespace qairt::analyze::detail
