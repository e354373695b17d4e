#include "calib/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "exec/executor.h"
#include "ir/fused_activation.h"
#include "support/json_writer.h"

namespace qairt::calib {

namespace {

// First index of the largest value.
size_t ArgMax(const float* v, size_t n) {
  size_t k = 0;
  for (size_t i = 1; i < n; ++i)
    if (v[i] > v[k]) k = i;
  return k;
}

struct Acc {
  double dot = 0, ref2 = 0, q2 = 0, err2 = 0, max_abs = 0;
  size_t argmax_agree = 0, positions = 0, positions_agree = 0, samples = 0;
  // `last`: the length of the output's last axis (0: unknown), whose argmax
  // is taken at every position of the leading axes (not for a last axis of
  // one value, where it cannot differ).
  void Add(const float* r, const float* q, size_t n, size_t last = 0) {
    ++samples;
    if (last > 1 && n % last == 0)
      for (size_t row = 0; row < n; row += last) {
        ++positions;
        if (ArgMax(r + row, last) == ArgMax(q + row, last)) ++positions_agree;
      }
    if (n && ArgMax(r, n) == ArgMax(q, n)) ++argmax_agree;
    for (size_t i = 0; i < n; ++i) {
      const double a = r[i], b = q[i];
      dot += a * b;
      ref2 += a * a;
      q2 += b * b;
      err2 += (a - b) * (a - b);
      max_abs = std::max(max_abs, std::fabs(a - b));
    }
  }
  Accuracy Get(const std::string& name) const {
    Accuracy x;
    x.name = name;
    x.cosine = (ref2 > 0 && q2 > 0) ? dot / std::sqrt(ref2 * q2) : (ref2 == q2 ? 1.0 : 0.0);
    x.sqnr_db = err2 > 0 ? 10.0 * std::log10(std::max(ref2, 1e-300) / err2) : INFINITY;
    x.max_abs = max_abs;
    x.argmax_agree = argmax_agree;
    x.positions = positions;
    x.positions_agree = positions_agree;
    x.samples = samples;
    return x;
  }
};

// Runs `g` on a sample; calls `keep(name, data, count)` for every float
// tensor (per_layer) and returns outputs by name.
// `last_dims` (may be null) gets each output's last axis length.
Result<std::map<std::string, std::vector<float>>> RunOne(exec::Executor& ex, const Graph& g,
                                                         const std::vector<std::vector<uint8_t>>& bufs, bool all,
                                                         std::map<std::string, size_t>* last_dims = nullptr) {
  std::map<std::string, std::vector<float>> values;
  exec::Observer obs = [&](const exec::ObservedTensor& t) -> Status {
    if (t.storage_dtype == DType::kFloat32) {
      const float* p = static_cast<const float*>(t.data);
      values[*t.name].assign(p, p + t.bytes / 4);
    }
    return Status::Ok();
  };
  auto out = ex.Run(bufs, all ? &obs : nullptr);
  if (!out.ok()) return out.status();
  for (size_t i = 0; i < out.value().size(); ++i) {
    const exec::HostTensor& h = out.value()[i];
    if (h.dtype != DType::kFloat32) continue;
    const float* p = reinterpret_cast<const float*>(h.bytes.data());
    const std::string& name = g.tensor(g.outputs()[i]).name;
    values[name].assign(p, p + h.bytes.size() / 4);
    if (last_dims && !h.dims.empty() && h.dims.back() > 0) (*last_dims)[name] = static_cast<size_t>(h.dims.back());
  }
  return values;
}

// The samples are read for the float graph's inputs. A quantized graph
// converted with int64 inputs narrowed to int32 (convert's default: HTP has
// no int64) takes those inputs as int32: narrowed here, as the convert's own
// calibration narrows an int64 file. Values outside int32 are an error.
Result<std::vector<std::vector<uint8_t>>> ForQuantized(const Graph& float_graph, const Graph& quantized,
                                                        const std::vector<std::vector<uint8_t>>& bufs) {
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < bufs.size() && i < float_graph.inputs().size(); ++i) {
    const Tensor& f = float_graph.tensor(float_graph.inputs()[i]);
    auto qid = quantized.FindTensor(f.name);
    const bool narrow = f.dtype == DType::kInt64 && qid && quantized.tensor(*qid).dtype == DType::kInt32;
    if (!narrow) {
      out.push_back(bufs[i]);
      continue;
    }
    std::vector<uint8_t> n(bufs[i].size() / 2);
    for (size_t k = 0; k < n.size() / 4; ++k) {
      int64_t v;
      std::memcpy(&v, bufs[i].data() + 8 * k, 8);
      if (v < INT32_MIN || v > INT32_MAX)
        return InvalidArgument("input '{}': value {} at index {} does not fit the quantized model's int32 input",
                               f.name, v, k);
      const auto w = static_cast<int32_t>(v);
      std::memcpy(n.data() + 4 * k, &w, 4);
    }
    out.push_back(std::move(n));
  }
  return out;
}

// Each measured tensor against the least accurate measured input of the op
// that makes it; the drops of 1 dB or more, largest first.
std::vector<AccuracyLoss> Losses(const Graph& g, const std::vector<Accuracy>& layers) {
  std::map<std::string, double> sqnr;
  for (const Accuracy& a : layers) sqnr[a.name] = a.sqnr_db;
  // A tensor the float graph lacks (made by a rewrite or legalization: the
  // Squeeze after a Conv1d's Conv2d) stands for the least accurate measured
  // tensor it is computed from; weights and graph inputs are exact.
  std::map<TensorId, std::pair<double, std::string>> memo;
  std::function<std::pair<double, std::string>(TensorId)> measured = [&](TensorId t) -> std::pair<double, std::string> {
    if (auto m = memo.find(t); m != memo.end()) return m->second;
    memo[t] = {INFINITY, ""};  // a cycle (invalid graph) ends here
    std::pair<double, std::string> r{INFINITY, ""};
    const Tensor& tensor = g.tensor(t);
    if (auto it = sqnr.find(tensor.name); it != sqnr.end()) {
      r = {it->second, it->first};
    } else if (tensor.producer != kInvalidId) {
      for (TensorId in : g.op(tensor.producer).inputs) {
        if (in == kInvalidId) continue;
        auto up = measured(in);
        if (!up.second.empty() && !(up.first >= r.first)) r = up;
      }
    }
    memo[t] = r;
    return r;
  };
  std::vector<AccuracyLoss> out;
  for (const Accuracy& a : layers) {
    auto id = g.FindTensor(a.name);
    if (!id || g.tensor(*id).producer == kInvalidId) continue;
    const Op& op = g.op(g.tensor(*id).producer);
    // Ops that only move or select values: a slice's SQNR differs from its
    // source's by which values it keeps, not by anything lost.
    static const std::set<std::string, std::less<>> kMoves = {
        "ChannelShuffle", "Concat", "DepthToSpace", "ExpandDims", "Gather", "GatherElements", "GatherNd", "Pad",
        "Reshape", "SpaceToDepth", "Split", "Squeeze", "StridedSlice", "Tile", "Transpose"};
    if (kMoves.count(op.type)) continue;
    AccuracyLoss l;
    l.tensor = a.name;
    l.op_name = op.name;
    l.op_type = op.type;
    // A clamping activation fused with the op before it (its input is not
    // measured) is reported as the pair.
    if (!op.inputs.empty() && op.inputs[0] != kInvalidId && IsClampedActivationInput(g, op.inputs[0])) {
      const Op& first = g.op(g.tensor(op.inputs[0]).producer);
      l.op_name = first.name + " + " + op.name;
      l.op_type = first.type + " + " + op.type;
    }
    l.sqnr_db = a.sqnr_db;
    l.input_sqnr_db = INFINITY;
    for (TensorId in : op.inputs) {
      if (in == kInvalidId) continue;
      const auto& [db, name] = measured(in);
      if (!name.empty() && !(db >= l.input_sqnr_db)) {
        l.input_sqnr_db = db;
        l.input = name;
      }
    }
    // Ops fed only by graph inputs and weights have no measured input to
    // be compared with (the layers list still shows their SQNR).
    if (!l.input.empty() && l.loss_db() >= 1.0) out.push_back(std::move(l));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AccuracyLoss& a, const AccuracyLoss& b) { return a.loss_db() > b.loss_db(); });
  return out;
}

}  // namespace

Status Compare(const Graph& float_graph, const Graph& quantized, const SampleSource& samples, bool per_layer,
               CompareReport* report, const std::function<void(size_t, size_t, const char*)>& progress) {
  *report = CompareReport{};
  if (samples.count == 0) return InvalidArgument("compare: no samples");
  auto fex = exec::Executor::Create(float_graph, exec::Options{1, false});
  if (!fex.ok()) return fex.status();
  auto qex = exec::Executor::Create(quantized, exec::Options{1, true});
  if (!qex.ok()) return qex.status();
  std::vector<std::string> outputs;
  for (TensorId id : float_graph.outputs()) {
    const std::string& n = float_graph.tensor(id).name;
    if (!quantized.FindTensor(n)) return InvalidArgument("compare: the quantized graph has no output '{}'", n);
    outputs.push_back(n);
  }
  std::map<std::string, Acc> out_acc, layer_acc;
  for (size_t i = 0; i < samples.count; ++i) {
    auto s = samples.load(i);
    if (!s.ok()) return s.status();
    std::map<std::string, size_t> last_dims;
    auto f = RunOne(*fex.value(), float_graph, s.value(), per_layer, &last_dims);
    if (!f.ok()) return Status(f.status().code(), "float run: " + f.status().message());
    auto qin = ForQuantized(float_graph, quantized, s.value());
    if (!qin.ok()) return qin.status();
    auto q = RunOne(*qex.value(), quantized, qin.value(), per_layer);
    if (!q.ok()) return Status(q.status().code(), "quantized run: " + q.status().message());
    for (const auto& n : outputs) {
      auto a = f.value().find(n), b = q.value().find(n);
      if (a == f.value().end() || b == q.value().end() || a->second.size() != b->second.size()) continue;
      const auto last = last_dims.find(n);
      out_acc[n].Add(a->second.data(), b->second.data(), a->second.size(),
                     last == last_dims.end() ? 0 : last->second);
    }
    if (per_layer)
      for (const auto& [n, v] : f.value()) {
        auto b = q.value().find(n);
        if (b == q.value().end() || b->second.size() != v.size()) continue;
        auto id = quantized.FindTensor(n);
        if (!id || !quantized.tensor(*id).encoding) continue;
        // Inside a fused clamping activation: the simulation holds it
        // clamped to the activation's grid, which is neither what the fused
        // kernel computes inside nor a tensor the target materializes; the
        // activation's output is measured instead.
        if (IsClampedActivationInput(quantized, *id)) continue;
        layer_acc[n].Add(v.data(), b->second.data(), v.size());
      }
    if (progress) progress(i + 1, samples.count, "compare");
  }
  report->samples = samples.count;
  for (const auto& n : outputs) report->outputs.push_back(out_acc[n].Get(n));
  for (const auto& [n, a] : layer_acc) report->layers.push_back(a.Get(n));
  std::stable_sort(report->layers.begin(), report->layers.end(),
                   [](const Accuracy& a, const Accuracy& b) { return a.sqnr_db < b.sqnr_db; });
  report->losses = Losses(quantized, report->layers);
  return Status::Ok();
}

double AccuracyLoss::loss_db() const {
  const double in = std::isfinite(input_sqnr_db) ? input_sqnr_db : 300.0;
  const double out = std::isnan(sqnr_db) ? -300.0 : std::max(-300.0, std::min(300.0, sqnr_db));
  return in - out;
}

std::string ArgmaxText(const Accuracy& a, size_t samples) {
  if (!a.per_position()) return fmt::format("argmax {}/{}", a.argmax_agree, samples);
  return fmt::format("argmax {}/{} positions ({:.1f}%, last axis)", a.positions_agree, a.positions,
                     100.0 * static_cast<double>(a.positions_agree) / static_cast<double>(a.positions));
}

std::string CompareSummaryLine(const CompareReport& r) {
  std::string s = fmt::format("accuracy on {} sample{}:", r.samples, r.samples == 1 ? "" : "s");
  for (const auto& o : r.outputs)
    s += fmt::format(" {} SQNR {:.1f} dB, cosine {:.5f}, max abs {:.4g}, {};", o.name, o.sqnr_db, o.cosine,
                     o.max_abs, ArgmaxText(o, r.samples));
  if (!s.empty() && s.back() == ';') s.pop_back();
  return s;
}

std::string CompareText(const CompareReport& r, size_t max_layers) {
  std::string s = fmt::format("samples: {}\noutputs:\n", r.samples);
  for (const auto& o : r.outputs)
    s += fmt::format("  {:<32} SQNR {:7.2f} dB  cosine {:.6f}  max abs {:.4g}  {}\n", o.name, o.sqnr_db,
                     o.cosine, o.max_abs, ArgmaxText(o, r.samples));
  if (!r.layers.empty()) {
    s += fmt::format("layers (worst SQNR first, {} of {}):\n", std::min(max_layers, r.layers.size()), r.layers.size());
    for (size_t i = 0; i < r.layers.size() && i < max_layers; ++i)
      s += fmt::format("  {:<40} SQNR {:7.2f} dB  cosine {:.6f}\n", r.layers[i].name, r.layers[i].sqnr_db,
                       r.layers[i].cosine);
  }
  if (!r.losses.empty()) {
    const size_t n = std::min<size_t>(10, r.losses.size());
    s += fmt::format("where accuracy is lost (an op's output against its least accurate input, {} of {}):\n", n,
                     r.losses.size());
    for (size_t i = 0; i < n; ++i) {
      const AccuracyLoss& l = r.losses[i];
      s += fmt::format("  {} '{}' -> '{}': '{}' {:.1f} dB -> {:.1f} dB\n", l.op_type, l.op_name, l.tensor, l.input,
                       l.input_sqnr_db, l.sqnr_db);
    }
  }
  return s;
}

std::string CompareJson(const CompareReport& r) {
  JsonWriter w;
  auto item = [&](const Accuracy& a) {
    w.BeginObject();
    w.Key("name").String(a.name);
    w.Key("sqnr_db").Double(a.sqnr_db);  // +inf (identical) is written as null
    w.Key("cosine").Double(a.cosine);
    w.Key("max_abs").Double(a.max_abs);
    w.Key("argmax_agree").UInt(a.argmax_agree);
    if (a.positions) {
      w.Key("argmax_positions").UInt(a.positions);
      w.Key("argmax_positions_agree").UInt(a.positions_agree);
    }
    w.EndObject();
  };
  w.BeginObject();
  w.Key("samples").UInt(r.samples);
  w.Key("outputs").BeginArray();
  for (const auto& a : r.outputs) item(a);
  w.EndArray();
  w.Key("layers").BeginArray();
  for (const auto& a : r.layers) item(a);
  w.EndArray();
  w.Key("losses").BeginArray();
  for (const auto& l : r.losses) {
    w.BeginObject();
    w.Key("tensor").String(l.tensor);
    w.Key("op").String(l.op_name);
    w.Key("op_type").String(l.op_type);
    w.Key("input").String(l.input);
    w.Key("input_sqnr_db").Double(l.input_sqnr_db);
    w.Key("sqnr_db").Double(l.sqnr_db);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace qairt::calib
