#include "calib/seqmse.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

#include "calib/weight_search.h"
#include "exec/executor.h"
#include "exec/input_gram.h"

namespace qairt::calib {
namespace {

struct Target {
  TensorId weight = kInvalidId;
  OpId op = kInvalidId;
  size_t level = 0;
  size_t gram = 0;  // index into the level's grams
};

// A weight's float32 values as the search reads them: the tensor's own
// layout, or for a transposed view (a MatMul weight under a FullyConnected)
// its source, flagged as the transpose, so no transposed copy is made.
std::pair<const float*, bool> WeightValues(const Tensor& t) {
  const StaticTransposition* view = t.data->transposition();
  if (view && view->elem == sizeof(float) && t.shape.rank() == 2 && t.shape[0].value == view->cols &&
      t.shape[1].value == view->rows)
    return {reinterpret_cast<const float*>(view->source->data()), true};
  return {reinterpret_cast<const float*>(t.data->data()), false};
}

}  // namespace

Status SequentialMse(Graph* graph, const SampleSource& samples, const std::vector<std::string>& weights,
                     uint32_t num_threads, SeqMseReport* report,
                     const std::function<void(size_t, size_t, const char*)>& progress) {
  if (!graph || !report) return InvalidArgument("SequentialMse: graph and report must not be NULL");
  *report = SeqMseReport{};
  if (samples.count == 0 || !samples.load)
    return InvalidArgument("--param_quantizer_calibration seqmse needs calibration samples (--input_list)");
  Graph work = *graph;  // an error leaves the graph as it was

  std::vector<Target> targets;
  std::unordered_map<OpId, size_t> target_of_op;
  for (const std::string& name : weights) {
    const std::optional<TensorId> id = work.FindTensor(name);
    if (!id) continue;
    const Tensor& t = work.tensor(*id);
    if (t.kind != TensorKind::kStatic || t.dtype != DType::kFloat32 || !t.data || !t.encoding ||
        !t.encoding->is_fixed_point())
      continue;
    if (t.consumers.size() != 1) {
      report->skipped.push_back(fmt::format("{}: read by {} ops (min-max kept)", name, t.consumers.size()));
      continue;
    }
    const Use u = t.consumers.front();
    if (u.slot != 1) continue;  // not the weight of its op (a constant operand)
    auto rows = exec::WeightRowsOf(work, u.op);
    if (!rows.ok()) {
      if (rows.status().code() != StatusCode::kUnsupported) return rows.status();
      report->skipped.push_back(fmt::format("{}: {}", name, rows.status().message()));
      continue;
    }
    target_of_op[u.op] = targets.size();
    targets.push_back(Target{*id, u.op, 0, 0});
  }
  if (targets.empty()) {
    *graph = std::move(work);
    return Status::Ok();
  }

  // Level of a weighted op: 1 + the highest level among the weighted ops upstream.
  auto topo = work.TopologicalOrder();
  if (!topo.ok()) return topo.status();
  std::vector<size_t> depth(work.tensor_count(), 0);
  for (OpId id : topo.value()) {
    const Op& op = work.op(id);
    size_t up = 0;
    for (TensorId in : op.inputs)
      if (in != kInvalidId) up = std::max(up, depth[in]);
    if (auto it = target_of_op.find(id); it != target_of_op.end()) {
      targets[it->second].level = ++up;
      report->levels = std::max(report->levels, up);
    }
    for (TensorId out : op.outputs)
      if (out != kInvalidId) depth[out] = up;
  }

  size_t done = 0;
  const size_t total = report->levels * samples.count;
  for (size_t level = 1; level <= report->levels; ++level) {
    // H per input: FullyConnected/MatMul ops reading one tensor (q, k and v
    // projections) share theirs; each convolution has its own geometry.
    std::vector<exec::InputGram> grams;
    std::map<std::pair<TensorId, OpId>, size_t> gram_of;
    std::unordered_map<TensorId, std::vector<size_t>> grams_of_input;
    std::vector<size_t> mine;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (targets[i].level != level) continue;
      mine.push_back(i);
      const Op& op = work.op(targets[i].op);
      const bool conv = op.type != "FullyConnected" && op.type != "MatMul";
      const auto key = std::make_pair(op.inputs[0], conv ? targets[i].op : kInvalidId);
      auto it = gram_of.find(key);
      if (it == gram_of.end()) {
        auto g = exec::InputGram::For(work, targets[i].op);
        if (!g.ok()) return g.status();
        it = gram_of.emplace(key, grams.size()).first;
        grams_of_input[op.inputs[0]].push_back(grams.size());
        grams.push_back(std::move(g).value());
      }
      targets[i].gram = it->second;
    }
    if (mine.empty()) continue;
    exec::Options eo;
    eo.num_threads = num_threads;
    eo.simulate_quantization = true;
    eo.observe_inputs = true;
    auto ex = exec::Executor::Create(work, eo);
    if (!ex.ok()) return ex.status();
    exec::Observer observer = [&](const exec::ObservedTensor& t) -> Status {
      auto it = grams_of_input.find(t.id);
      if (it == grams_of_input.end() || t.storage_dtype != DType::kFloat32) return Status::Ok();
      for (size_t g : it->second) QAIRT_RETURN_IF_ERROR(grams[g].Add(static_cast<const float*>(t.data), t.bytes / 4));
      return Status::Ok();
    };
    for (size_t s = 0; s < samples.count; ++s) {
      auto sample = samples.load(s);
      if (!sample.ok()) return sample.status();
      std::vector<const void*> ptrs;
      std::vector<size_t> sizes;
      for (const auto& b : sample.value()) {
        ptrs.push_back(b.data());
        sizes.push_back(b.size());
      }
      auto run = ex.value()->Run(ptrs, sizes, &observer);
      if (!run.ok())
        return Status(run.status().code(), fmt::format("sequential MSE, sample {}: {}", s, run.status().message()));
      if (progress) progress(++done, total, "seqmse");
    }
    ex.value().reset();
    for (size_t i : mine) {
      const Target& tg = targets[i];
      const Tensor& t = work.tensor(tg.weight);
      const exec::InputGram& gram = grams[tg.gram];
      std::vector<const double*> per_group;
      for (int64_t g = 0; g < gram.rows().groups; ++g) per_group.push_back(gram.group(g));
      const auto [data, columns] = WeightValues(t);
      auto found = SearchWeightEncoding(t.name, data, columns, t.shape.extents(), gram.rows(), *t.encoding, per_group);
      if (!found.ok()) {
        if (found.status().code() != StatusCode::kUnsupported) return found.status();
        report->skipped.push_back(fmt::format("{}: {}", t.name, found.status().message()));
        continue;
      }
      WeightSearchResult r = std::move(found).value();
      report->weights.push_back(SeqMseWeight{t.name, level, r.base_error, r.error, r.cells_changed});
      if (r.cells_changed) QAIRT_RETURN_IF_ERROR(work.SetEncoding(tg.weight, std::move(r.encoding)));
    }
  }
  *graph = std::move(work);
  return Status::Ok();
}

std::string SeqMseSummary(const SeqMseReport& r) {
  std::vector<double> gains;
  const SeqMseWeight* best = nullptr;
  double best_gain = 0;
  for (const SeqMseWeight& w : r.weights) {
    if (!(w.base_error > 0)) continue;
    const double g = 10.0 * std::log10(std::max(w.error, 1e-300) / w.base_error);
    gains.push_back(g);
    if (!best || g < best_gain) best = &w, best_gain = g;
  }
  std::string out = fmt::format("sequential MSE: {} weight{} in {} level{}", r.weights.size(),
                                r.weights.size() == 1 ? "" : "s", r.levels, r.levels == 1 ? "" : "s");
  if (!gains.empty()) {
    std::nth_element(gains.begin(), gains.begin() + static_cast<long>(gains.size() / 2), gains.end());
    out += fmt::format(", output error {:+.1f} dB median against min-max (best {:+.1f} dB, '{}')",
                       gains[gains.size() / 2], best_gain, best->name);
  }
  if (!r.skipped.empty()) out += fmt::format(", {} kept min-max (e.g. {})", r.skipped.size(), r.skipped.front());
  return out;
}

}  // namespace qairt::calib
