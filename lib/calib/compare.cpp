#include "calib/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "exec/executor.h"
#include "support/json_writer.h"

namespace qairt::calib {

namespace {

struct Acc {
  double dot = 0, ref2 = 0, q2 = 0, err2 = 0, max_abs = 0;
  size_t argmax_agree = 0;
  void Add(const float* r, const float* q, size_t n) {
    size_t ar = 0, aq = 0;
    for (size_t i = 0; i < n; ++i) {
      const double a = r[i], b = q[i];
      dot += a * b;
      ref2 += a * a;
      q2 += b * b;
      err2 += (a - b) * (a - b);
      max_abs = std::max(max_abs, std::fabs(a - b));
      if (r[i] > r[ar]) ar = i;
      if (q[i] > q[aq]) aq = i;
    }
    if (n && ar == aq) ++argmax_agree;
  }
  Accuracy Get(const std::string& name) const {
    Accuracy x;
    x.name = name;
    x.cosine = (ref2 > 0 && q2 > 0) ? dot / std::sqrt(ref2 * q2) : (ref2 == q2 ? 1.0 : 0.0);
    x.sqnr_db = err2 > 0 ? 10.0 * std::log10(std::max(ref2, 1e-300) / err2) : INFINITY;
    x.max_abs = max_abs;
    x.argmax_agree = argmax_agree;
    return x;
  }
};

// Runs `g` on a sample; calls `keep(name, data, count)` for every float
// tensor (per_layer) and returns outputs by name.
Result<std::map<std::string, std::vector<float>>> RunOne(exec::Executor& ex, const Graph& g,
                                                         const std::vector<std::vector<uint8_t>>& bufs, bool all) {
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
    values[g.tensor(g.outputs()[i]).name].assign(p, p + h.bytes.size() / 4);
  }
  return values;
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
    auto f = RunOne(*fex.value(), float_graph, s.value(), per_layer);
    if (!f.ok()) return Status(f.status().code(), "float run: " + f.status().message());
    auto q = RunOne(*qex.value(), quantized, s.value(), per_layer);
    if (!q.ok()) return Status(q.status().code(), "quantized run: " + q.status().message());
    for (const auto& n : outputs) {
      auto a = f.value().find(n), b = q.value().find(n);
      if (a == f.value().end() || b == q.value().end() || a->second.size() != b->second.size()) continue;
      out_acc[n].Add(a->second.data(), b->second.data(), a->second.size());
    }
    if (per_layer)
      for (const auto& [n, v] : f.value()) {
        auto b = q.value().find(n);
        if (b == q.value().end() || b->second.size() != v.size()) continue;
        auto id = quantized.FindTensor(n);
        if (!id || !quantized.tensor(*id).encoding) continue;
        layer_acc[n].Add(v.data(), b->second.data(), v.size());
      }
    if (progress) progress(i + 1, samples.count, "compare");
  }
  report->samples = samples.count;
  for (const auto& n : outputs) report->outputs.push_back(out_acc[n].Get(n));
  for (const auto& [n, a] : layer_acc) report->layers.push_back(a.Get(n));
  std::stable_sort(report->layers.begin(), report->layers.end(),
                   [](const Accuracy& a, const Accuracy& b) { return a.sqnr_db < b.sqnr_db; });
  return Status::Ok();
}

std::string CompareSummaryLine(const CompareReport& r) {
  std::string s = fmt::format("accuracy on {} sample{}:", r.samples, r.samples == 1 ? "" : "s");
  for (const auto& o : r.outputs)
    s += fmt::format(" {} SQNR {:.1f} dB, cosine {:.5f}, max abs {:.4g}, argmax {}/{};", o.name, o.sqnr_db, o.cosine,
                     o.max_abs, o.argmax_agree, r.samples);
  if (!s.empty() && s.back() == ';') s.pop_back();
  return s;
}

std::string CompareText(const CompareReport& r, size_t max_layers) {
  std::string s = fmt::format("samples: {}\noutputs:\n", r.samples);
  for (const auto& o : r.outputs)
    s += fmt::format("  {:<32} SQNR {:7.2f} dB  cosine {:.6f}  max abs {:.4g}  argmax {}/{}\n", o.name, o.sqnr_db,
                     o.cosine, o.max_abs, o.argmax_agree, r.samples);
  if (!r.layers.empty()) {
    s += fmt::format("layers (worst SQNR first, {} of {}):\n", std::min(max_layers, r.layers.size()), r.layers.size());
    for (size_t i = 0; i < r.layers.size() && i < max_layers; ++i)
      s += fmt::format("  {:<40} SQNR {:7.2f} dB  cosine {:.6f}\n", r.layers[i].name, r.layers[i].sqnr_db,
                       r.layers[i].cosine);
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
  w.EndObject();
  return w.Take();
}

}  // namespace qairt::calib
