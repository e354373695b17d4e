#include "analyze/noise_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "exec/executor.h"
#include "kernels/ops.h"
#include "quant/quantize.h"

namespace qairt::analyze {
namespace {

// One observed tensor of the sample being processed, in executor storage form.
struct Stored {
  DType storage = DType::kFloat32;  // kFloat32, kInt64 or kBool
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
  const float* f() const { return reinterpret_cast<const float*>(bytes.data()); }
  size_t floats() const { return bytes.size() / 4; }
};

// A probe input in the probe graph input's external dtype: the stored bytes
// themselves where the storage is that dtype, else narrowed integers in
// `scratch`. False where neither works (the op is then not probed).
bool View(const Stored& s, DType ext, std::vector<uint8_t>* scratch, const void** data, size_t* size) {
  if ((s.storage == DType::kFloat32 && ext == DType::kFloat32) || (s.storage == DType::kInt64 && ext == DType::kInt64) ||
      (s.storage == DType::kBool && ext == DType::kBool)) {
    *data = s.bytes.data();
    *size = s.bytes.size();
    return true;
  }
  static const DType kNarrow[] = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32,
                                  DType::kUInt32, DType::kUInt64};
  if (s.storage != DType::kInt64 || std::find(std::begin(kNarrow), std::end(kNarrow), ext) == std::end(kNarrow))
    return false;
  const size_t width = DTypeBits(ext) / 8, n = s.bytes.size() / 8;
  scratch->resize(n * width);
  for (size_t k = 0; k < n; ++k) std::memcpy(scratch->data() + k * width, s.bytes.data() + k * 8, width);  // little-endian
  *data = scratch->data();
  *size = scratch->size();
  return true;
}

// The inputs of one probe run.
struct ProbeInputs {
  std::vector<const void*> data;
  std::vector<size_t> size;
  std::vector<std::vector<uint8_t>> scratch;
  explicit ProbeInputs(size_t n) : data(n), size(n), scratch(n) {}
  bool Set(size_t k, const Stored& s, DType ext) { return View(s, ext, &scratch[k], &data[k], &size[k]); }
};

double Power(const float* a, size_t n) {
  double s[2];
  kernels::SquaredError(a, a, n, s);
  return s[1];
}

double ErrorPower(const float* a, const float* b, size_t n) {
  double s[2];
  kernels::SquaredError(a, b, n, s);
  return std::isfinite(s[0]) ? s[0] : 0.0;
}

// Power of the noise `enc` adds to float values x.
Result<double> QuantNoise(const std::string& name, const Stored& x, const Encoding& enc, std::vector<float>* tmp,
                          std::vector<uint8_t>* scratch) {
  tmp->assign(x.f(), x.f() + x.floats());
  quant::QuantizeOptions qo;
  qo.nonfinite = quant::NonFinitePolicy::kWarnNanAsZero;
  std::vector<std::string> warnings;
  qo.warnings = &warnings;
  QAIRT_RETURN_IF_ERROR(quant::FakeQuantize(name, tmp->data(), x.dims, enc, scratch, qo));
  return ErrorPower(tmp->data(), x.f(), x.floats());
}

// `op` of `g` as a graph of its own: its distinct activation inputs become
// graph inputs (shaped as observed), its static inputs constants (the
// encodings of `encoded` taken from `enc_from`, others as in `g`), its
// outputs graph outputs.
Result<Graph> OneOpGraph(const Graph& g, const Op& op, const std::vector<TensorId>& acts,
                         const std::vector<const Stored*>& vals, const Graph* enc_from,
                         const std::vector<TensorId>& encoded) {
  Graph one("probe_" + op.name);
  std::map<TensorId, TensorId> map;
  for (size_t k = 0; k < acts.size(); ++k) {
    const Tensor& t = g.tensor(acts[k]);
    auto in = one.AddInput(t.name, t.dtype, Shape::FromExtents(vals[k]->dims));
    if (!in.ok()) return in.status();
    map[acts[k]] = in.value();
  }
  OpSpec spec;
  spec.type = op.type;
  spec.name = op.name;
  spec.attrs = op.attrs;
  for (TensorId t : op.inputs) {
    if (t == kInvalidId) {
      spec.inputs.push_back(kInvalidId);
      continue;
    }
    auto it = map.find(t);
    if (it == map.end()) {
      const Tensor& s = g.tensor(t);
      auto c = one.AddConstant(s.name, s.dtype, s.shape, s.data);
      if (!c.ok()) return c.status();
      const bool listed = std::find(encoded.begin(), encoded.end(), t) != encoded.end();
      const std::optional<Encoding> none;
      const auto& e = listed ? (enc_from ? enc_from->tensor(t).encoding : none) : s.encoding;
      if (e) QAIRT_RETURN_IF_ERROR(one.SetEncoding(c.value(), *e));
      it = map.emplace(t, c.value()).first;
    }
    spec.inputs.push_back(it->second);
  }
  std::vector<TensorId> outs;
  for (TensorId t : op.outputs) {
    if (t == kInvalidId) {
      spec.outputs.push_back(kInvalidId);
      continue;
    }
    auto o = one.AddTensor(g.tensor(t).name, g.tensor(t).dtype);
    if (!o.ok()) return o.status();
    spec.outputs.push_back(o.value());
    outs.push_back(o.value());
  }
  auto added = one.AddOp(std::move(spec));
  if (!added.ok()) return added.status();
  for (TensorId t : outs) QAIRT_RETURN_IF_ERROR(one.MarkOutput(t));
  return one;
}

// Per op (position in the float run's order): what its probes measured,
// summed over samples.
struct OpProbe {
  bool built = false, usable = false;
  std::vector<TensorId> acts;   // distinct activation inputs (probe graph inputs)
  std::vector<DType> ext;       // their external dtypes in the probe graph
  std::vector<TensorId> outs;   // valid outputs, probe graph output order
  std::unique_ptr<exec::Executor> clean, wlow, whigh;
  std::vector<TensorId> weights;  // static inputs owned by a weights unit
  std::vector<double> in_noise;   // per act: injected noise power
  std::vector<std::vector<double>> out_noise;  // per act, per output: noise power it caused
  std::vector<double> wnoise_low, wnoise_high;  // per output: noise of the weights at each precision
};

bool IsFloatOut(const exec::HostTensor& h) { return h.dtype == DType::kFloat32; }

}  // namespace

Status EstimateNoise(const Graph& float_graph, const Graph& low, const Graph& high, const std::vector<Unit>& units,
                     const std::vector<TensorId>& ranked, const std::vector<TensorId>& terminal,
                     const calib::SampleSource& samples, uint32_t num_threads, NoiseEstimate* out,
                     const std::function<void(size_t, size_t, const char*)>& progress) {
  *out = NoiseEstimate{};
  const Graph& g = float_graph;
  exec::Options eo;
  eo.num_threads = num_threads;
  eo.simulate_quantization = false;
  eo.observe_inputs = true;
  auto ex = exec::Executor::Create(g, eo);
  if (!ex.ok()) return ex.status();
  const std::vector<OpId>& order = ex.value()->order();
  std::vector<int64_t> pos_of_tensor(g.tensor_count(), -1), last_use(g.tensor_count(), -1);
  for (size_t p = 0; p < order.size(); ++p) {
    for (TensorId t : g.op(order[p]).outputs)
      if (t != kInvalidId && pos_of_tensor[t] < 0) pos_of_tensor[t] = static_cast<int64_t>(p);
    for (TensorId t : g.op(order[p]).inputs)
      if (t != kInvalidId) last_use[t] = static_cast<int64_t>(p);
  }
  // Weights owned by a unit, by op name.
  std::map<std::string, std::vector<TensorId>> unit_weights;
  for (const Unit& u : units)
    for (TensorId t : u.tensors)
      if (g.tensor(t).kind == TensorKind::kStatic) unit_weights[u.name].push_back(t);

  std::vector<OpProbe> probes(order.size());
  // The probes run one at a time, never inside each other: one arena for all.
  auto probe_space = std::make_shared<exec::Workspace>();
  // Noise each tensor's rounding adds (graph inputs: on their float values;
  // op outputs: in the quantized run), at each precision.
  std::vector<double> n_low(g.tensor_count(), 0), n_high(g.tensor_count(), 0), signal(g.tensor_count(), 0);
  std::vector<bool> owned(g.tensor_count(), false);  // a unit's tensor: its high-precision noise is needed
  for (const Unit& u : units)
    for (TensorId t : u.tensors) owned[t] = true;
  std::vector<bool> is_ranked(g.tensor_count(), false);
  for (TensorId t : ranked) is_ranked[t] = true;
  for (TensorId t : terminal) is_ranked[t] = true;
  std::map<TensorId, Stored> live;
  std::map<TensorId, Stored> quantized;  // the current sample's values in the base quantized model
  std::vector<float> tmp;
  std::vector<uint8_t> scratch;
  std::mt19937 rng(0x6e6f6973);

  // Builds op p's probes from the first sample's shapes.
  auto build = [&](size_t p) -> Status {
    OpProbe& pr = probes[p];
    pr.built = true;
    const Op& op = g.op(order[p]);
    std::vector<const Stored*> vals;
    for (TensorId t : op.inputs) {
      if (t == kInvalidId || g.tensor(t).kind == TensorKind::kStatic) continue;
      if (std::find(pr.acts.begin(), pr.acts.end(), t) != pr.acts.end()) continue;
      auto it = live.find(t);
      if (it == live.end()) return Status::Ok();  // not observed: not probed
      pr.acts.push_back(t);
      vals.push_back(&it->second);
      pr.ext.push_back(g.tensor(t).dtype);
    }
    for (TensorId t : op.outputs)
      if (t != kInvalidId) pr.outs.push_back(t);
    exec::Options po;
    po.num_threads = num_threads;
    po.workspace = probe_space;
    auto make = [&](const Graph* from, const std::vector<TensorId>& enc) -> std::unique_ptr<exec::Executor> {
      auto one = OneOpGraph(g, op, pr.acts, vals, from, enc);
      if (!one.ok()) return nullptr;
      po.simulate_quantization = from != nullptr;  // as the float run computes it, or with quantized weights
      auto e = exec::Executor::Create(one.value(), po);
      return e.ok() ? std::move(e).value() : nullptr;
    };
    if (auto w = unit_weights.find(op.name); w != unit_weights.end())
      for (TensorId t : w->second)
        if (std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end()) pr.weights.push_back(t);
    pr.clean = make(nullptr, pr.weights);  // the unit's weights float
    if (!pr.clean) return Status::Ok();
    if (!pr.weights.empty()) {
      pr.wlow = make(&low, pr.weights);
      pr.whigh = make(&high, pr.weights);
    }
    pr.usable = true;
    pr.in_noise.assign(pr.acts.size(), 0);
    pr.out_noise.assign(pr.acts.size(), std::vector<double>(pr.outs.size(), 0));
    pr.wnoise_low.assign(pr.outs.size(), 0);
    pr.wnoise_high.assign(pr.outs.size(), 0);
    return Status::Ok();
  };

  // Runs op p's probes on the current sample's values.
  auto probe = [&](size_t p) -> Status {
    if (!probes[p].built) QAIRT_RETURN_IF_ERROR(build(p));
    OpProbe& pr = probes[p];
    if (!pr.usable) return Status::Ok();
    ProbeInputs in(pr.acts.size());
    for (size_t k = 0; k < pr.acts.size(); ++k) {
      auto it = live.find(pr.acts[k]);
      if (it == live.end() || !in.Set(k, it->second, pr.ext[k])) return Status::Ok();
    }
    // The op's float outputs, as the float run computed them.
    std::vector<const Stored*> y0(pr.outs.size(), nullptr);
    for (size_t o = 0; o < pr.outs.size(); ++o)
      if (auto it = live.find(pr.outs[o]); it != live.end() && it->second.storage == DType::kFloat32)
        y0[o] = &it->second;
    auto noise_of = [&](const std::vector<exec::HostTensor>& ys, std::vector<double>* acc) {
      for (size_t o = 0; o < pr.outs.size() && o < ys.size(); ++o)
        if (y0[o] && IsFloatOut(ys[o]) && ys[o].bytes.size() == y0[o]->bytes.size())
          (*acc)[o] += ErrorPower(reinterpret_cast<const float*>(ys[o].bytes.data()), y0[o]->f(), y0[o]->floats());
    };
    for (size_t k = 0; k < pr.acts.size(); ++k) {
      const Stored& x = live.at(pr.acts[k]);
      if (x.storage != DType::kFloat32 || pr.ext[k] != DType::kFloat32 || x.floats() == 0) continue;
      // The error the quantized model carries into this input: the noise of
      // every quantizer upstream, shaped by the ops it went through, which is
      // what this op's gain applies to (white noise would see gains the real
      // error never meets, and compounded over fifty layers the estimate
      // favoured the first ones tenfold). Else the input's own quantization
      // noise; else small random noise.
      double injected = 0;
      if (auto q = quantized.find(pr.acts[k]);
          q != quantized.end() && q->second.storage == DType::kFloat32 && q->second.bytes.size() == x.bytes.size()) {
        tmp.assign(q->second.f(), q->second.f() + x.floats());
        injected = ErrorPower(tmp.data(), x.f(), x.floats());
      }
      if (!(injected > 0)) {
        tmp.assign(x.f(), x.f() + x.floats());
        if (const auto& e = low.tensor(pr.acts[k]).encoding; e && e->is_fixed_point()) {
          auto n = QuantNoise(g.tensor(pr.acts[k]).name, x, *e, &tmp, &scratch);
          if (n.ok()) injected = n.value();
        }
      }
      if (!(injected > 0)) {
        const double rms = std::sqrt(Power(x.f(), x.floats()) / static_cast<double>(x.floats()));
        std::normal_distribution<float> nd(0.f, static_cast<float>(rms > 0 ? 1e-3 * rms : 1e-6));
        tmp.assign(x.f(), x.f() + x.floats());
        for (float& v : tmp) v += nd(rng);
        injected = ErrorPower(tmp.data(), x.f(), x.floats());
      }
      if (!(injected > 0)) continue;
      const void* clean_input = in.data[k];
      in.data[k] = tmp.data();  // the perturbed values
      auto r = pr.clean->Run(in.data, in.size);
      in.data[k] = clean_input;
      ++out->op_runs;
      if (!r.ok()) continue;
      pr.in_noise[k] += injected;
      noise_of(r.value(), &pr.out_noise[k]);
    }
    if (pr.wlow && pr.whigh) {
      auto rl = pr.wlow->Run(in.data, in.size);
      auto rh = pr.whigh->Run(in.data, in.size);
      out->op_runs += 2;
      if (rl.ok() && rh.ok()) {
        noise_of(rl.value(), &pr.wnoise_low);
        noise_of(rh.value(), &pr.wnoise_high);
      }
    }
    return Status::Ok();
  };

  size_t next = 0;  // first op not yet probed on this sample
  auto finish_upto = [&](size_t end) -> Status {
    for (; next < end; ++next) {
      QAIRT_RETURN_IF_ERROR(probe(next));
      for (auto it = live.begin(); it != live.end();)  // values no later op or probe reads
        it = last_use[it->first] <= static_cast<int64_t>(next) && pos_of_tensor[it->first] <= static_cast<int64_t>(next) &&
                     !is_ranked[it->first]
                 ? live.erase(it)
                 : std::next(it);
    }
    return Status::Ok();
  };
  exec::Observer observer = [&](const exec::ObservedTensor& o) -> Status {
    if (pos_of_tensor[o.id] >= 0) QAIRT_RETURN_IF_ERROR(finish_upto(static_cast<size_t>(pos_of_tensor[o.id])));
    Stored s;
    s.storage = o.storage_dtype;
    s.dims = *o.dims;
    s.bytes.assign(static_cast<const uint8_t*>(o.data), static_cast<const uint8_t*>(o.data) + o.bytes);
    if (s.storage == DType::kFloat32) {
      if (is_ranked[o.id]) signal[o.id] += Power(s.f(), s.floats());
      const auto& el = pos_of_tensor[o.id] < 0 ? low.tensor(o.id).encoding : std::nullopt;  // graph inputs
      const auto& eh = high.tensor(o.id).encoding;
      if (el && el->is_fixed_point()) {
        auto n = QuantNoise(*o.name, s, *el, &tmp, &scratch);
        if (!n.ok()) return n.status();
        n_low[o.id] += n.value();
        if (eh && eh->is_fixed_point() && owned[o.id]) {
          auto h = QuantNoise(*o.name, s, *eh, &tmp, &scratch);
          if (!h.ok()) return h.status();
          n_high[o.id] += h.value();
        }
      }
    }
    live[o.id] = std::move(s);
    return Status::Ok();
  };
  // The quantized run, seen before each output is rounded: the noise
  // rounding adds where the quantized model computes the op (on quantized
  // inputs and weights; measured on the float values instead, a Relu after a
  // FullyConnected would count the same rounding twice, its input being on
  // nearly the same grid already), and, rounded, the values the next ops read.
  exec::Options qo = eo;
  qo.simulate_quantization = true;
  qo.observe_inputs = false;
  qo.observe_unsimulated = true;
  auto qex = exec::Executor::Create(low, qo);
  if (!qex.ok()) return qex.status();
  // One sample's quantized run: its input, its rounded values and the
  // noise each op output's rounding adds (n_low / n_high of op outputs; the
  // float run's observer adds only graph inputs' noise, so the two never
  // touch the same entries).
  struct QuantizedRun {
    std::vector<std::vector<uint8_t>> input;
    std::map<TensorId, Stored> values;
    std::vector<float> tmp;
    std::vector<uint8_t> scratch;
    Status status = Status::Ok();
  };
  auto run_quantized_once = [&](size_t i, QuantizedRun* q) {
    q->status = Status::Ok();
    auto in = samples.load(i);
    if (!in.ok()) {
      q->status = in.status();
      return;
    }
    q->input = std::move(in).value();
    q->values.clear();
    exec::Observer keep_quantized = [&](const exec::ObservedTensor& o) -> Status {
      if (o.storage_dtype != DType::kFloat32) return Status::Ok();
      Stored v;
      v.dims = *o.dims;
      v.bytes.assign(static_cast<const uint8_t*>(o.data), static_cast<const uint8_t*>(o.data) + o.bytes);
      const auto& el = low.tensor(o.id).encoding;
      if (el && el->is_fixed_point()) {
        if (const auto& eh = high.tensor(o.id).encoding; eh && eh->is_fixed_point() && owned[o.id]) {
          auto nh = QuantNoise(*o.name, v, *eh, &q->tmp, &q->scratch);
          if (!nh.ok()) return nh.status();
          n_high[o.id] += nh.value();
        }
        auto n = QuantNoise(*o.name, v, *el, &q->tmp, &q->scratch);  // leaves the rounded values in tmp
        if (!n.ok()) return n.status();
        n_low[o.id] += n.value();
        std::memcpy(v.bytes.data(), q->tmp.data(), v.bytes.size());
      }
      if (last_use[o.id] >= 0) q->values[o.id] = std::move(v);
      return Status::Ok();
    };
    if (auto r = qex.value()->Run(q->input, &keep_quantized); !r.ok()) q->status = r.status();
  };
  // Nothing escapes a helper thread (an exception there would terminate).
  auto run_quantized = [&](size_t i, QuantizedRun* q) {
    try {
      run_quantized_once(i, q);
    } catch (...) {
      q->status = Status(StatusCode::kOutOfMemory, fmt::format("noise estimate: out of memory on sample {}", i));
    }
  };
  // With threads, sample i + 1's quantized run overlaps sample i's float run
  // and probes (which read sample i's quantized values): every sum is still
  // made in sample order, so the estimate does not depend on the threads.
  const bool overlap = num_threads != 1 && samples.count > 1;
  QuantizedRun runs[2];
  if (samples.count > 0) run_quantized(0, &runs[0]);
  for (size_t i = 0; i < samples.count; ++i) {
    QuantizedRun& cur = runs[i % 2];
    QuantizedRun& ahead = runs[(i + 1) % 2];
    QAIRT_RETURN_IF_ERROR(cur.status);
    std::thread next_run;
    struct JoinOnExit {
      std::thread& t;
      ~JoinOnExit() {
        if (t.joinable()) t.join();
      }
    } join_on_exit{next_run};  // also when this thread's work throws
    bool ran_ahead = false;
    if (i + 1 < samples.count && overlap) {
      try {
        next_run = std::thread(run_quantized, i + 1, &ahead);
        ran_ahead = true;
      } catch (...) {
        // No thread: the next quantized run comes after this sample.
      }
    }
    quantized = std::move(cur.values);
    out->op_runs += order.size();
    live.clear();
    next = 0;
    auto r = ex.value()->Run(cur.input, &observer);
    Status done = r.ok() ? finish_upto(order.size()) : r.status();
    if (next_run.joinable()) next_run.join();
    QAIRT_RETURN_IF_ERROR(done);
    out->op_runs += order.size();
    if (i + 1 < samples.count && !ran_ahead) run_quantized(i + 1, &ahead);
    cur.input.clear();
    if (progress) progress(i + 1, samples.count, "noise estimate");
  }

  // Gains to the ranked outputs, backwards over the graph. A terminal
  // output's own noise counts, but its gain is not carried back through the
  // head that produced it: its input is ranked itself.
  std::vector<double> gain(g.tensor_count(), 0), own(g.tensor_count(), 0);
  for (TensorId t : ranked)
    if (signal[t] > 0) gain[t] += 1.0 / signal[t];
  for (TensorId t : terminal)
    if (signal[t] > 0) own[t] = 1.0 / signal[t];
  for (size_t p = order.size(); p-- > 0;) {
    const OpProbe& pr = probes[p];
    const Op& op = g.op(order[p]);
    if (!pr.usable) {
      // Not probed: every float input reaches every output unchanged.
      double downstream = 0;
      for (TensorId o : op.outputs)
        if (o != kInvalidId) downstream += gain[o];
      std::set<TensorId> seen;
      for (TensorId t : op.inputs)
        if (t != kInvalidId && g.tensor(t).kind != TensorKind::kStatic && seen.insert(t).second) gain[t] += downstream;
      continue;
    }
    for (size_t k = 0; k < pr.acts.size(); ++k) {
      if (!(pr.in_noise[k] > 0)) continue;
      for (size_t o = 0; o < pr.outs.size(); ++o)
        gain[pr.acts[k]] += pr.out_noise[k][o] / pr.in_noise[k] * gain[pr.outs[o]];
    }
  }
  // Contributions.
  for (TensorId t = 0; t < g.tensor_count(); ++t) {
    gain[t] += own[t];
    out->total_base += n_low[t] * gain[t];
    out->total_high += n_high[t] * gain[t];
  }
  std::map<std::string, size_t> pos_of_op;
  for (size_t p = 0; p < order.size(); ++p) pos_of_op[g.op(order[p]).name] = p;
  out->base.assign(units.size(), 0);
  out->high.assign(units.size(), 0);
  for (size_t u = 0; u < units.size(); ++u) {
    bool weights = false;
    for (TensorId t : units[u].tensors) {
      if (g.tensor(t).kind == TensorKind::kStatic) {
        weights = true;
        continue;
      }
      out->base[u] += n_low[t] * gain[t];
      out->high[u] += n_high[t] * gain[t];
    }
    auto p = pos_of_op.find(units[u].name);
    if (!weights || p == pos_of_op.end()) continue;
    const OpProbe& pr = probes[p->second];
    double wl = 0, wh = 0;
    for (size_t o = 0; o < pr.outs.size() && o < pr.wnoise_low.size(); ++o) {
      wl += pr.wnoise_low[o] * gain[pr.outs[o]];
      wh += pr.wnoise_high[o] * gain[pr.outs[o]];
    }
    out->base[u] += wl;
    out->high[u] += wh;
    out->total_base += wl;
    out->total_high += wh;
  }
  // Weight noise of ops no unit owns is not measured: it is the same at both precisions.
  return Status::Ok();
}

}  // namespace qairt::analyze
