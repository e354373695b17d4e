#include "calib/seqmse.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>
#include <thread>

#include "calib/observe_level.h"
#include "calib/weight_search.h"
#include "exec/executor.h"
#include "exec/input_gram.h"

namespace qairt::calib {
namespace {

// Largest H (in double) gathered for one op input.
constexpr double kMaxGramMb = 1024;

struct Target {
  TensorId weight = kInvalidId;
  OpId op = kInvalidId;
  size_t level = 0;
  size_t gram = 0;  // index into the level's grams
};

}  // namespace

Status SequentialMse(Graph* graph, const SampleSource& samples, const std::vector<std::string>& weights,
                     const SeqMseOptions& options, SeqMseReport* report,
                     const std::function<void(size_t, size_t, const char*)>& progress) {
  if (!graph || !report) return InvalidArgument("SequentialMse: graph and report must not be NULL");
  *report = SeqMseReport{};
  if (samples.count == 0 || !samples.load)
    return InvalidArgument("--param_quantizer_calibration seqmse and --adaptive_rounding need calibration samples "
                           "(--input_list)");
  Graph work = *graph;  // an error leaves the graph as it was

  std::vector<Target> targets;
  for (const std::string& name : weights) {
    const std::optional<TensorId> id = work.FindTensor(name);
    if (!id) continue;
    const Tensor& t = work.tensor(*id);
    if (t.kind != TensorKind::kStatic || t.dtype != DType::kFloat32 || !t.data || !t.encoding ||
        !t.encoding->is_fixed_point())
      continue;
    if (t.consumers.size() != 1) {
      report->skipped.push_back(fmt::format("{}: read by {} ops", name, t.consumers.size()));
      continue;
    }
    const Use u = t.consumers.front();
    // A constant operand or a normalization's scale: not searched.
    if (u.slot != 1 || !exec::IsWeightedOpType(work.op(u.op).type)) continue;
    auto rows = exec::WeightRowsOf(work, u.op);
    if (!rows.ok()) {
      if (rows.status().code() != StatusCode::kUnsupported) return rows.status();
      report->skipped.push_back(fmt::format("{}: {}", name, rows.status().message()));
      continue;
    }
    // H is held in double, per worker in float and per search in float: a
    // weight whose rows are too long for that keeps min-max, said so.
    const double gram_mb = 8.0 * static_cast<double>(rows.value().groups) * static_cast<double>(rows.value().k) *
                           static_cast<double>(rows.value().k) / (1 << 20);
    if (gram_mb > kMaxGramMb) {
      report->skipped.push_back(fmt::format("{}: rows of {} need a {:.0f} MB second moment (limit {:.0f} MB)", name,
                                            rows.value().k, gram_mb, kMaxGramMb));
      continue;
    }
    targets.push_back(Target{*id, u.op, 0, 0});
  }
  if (targets.empty()) {
    *graph = std::move(work);
    return Status::Ok();
  }

  {
    std::vector<OpId> ops;
    for (const Target& t : targets) ops.push_back(t.op);
    auto levels = SequentialLevels(work, ops, &report->levels);
    if (!levels.ok()) return levels.status();
    for (size_t i = 0; i < targets.size(); ++i) targets[i].level = levels.value()[i];
  }

  size_t done = 0;
  const size_t total = report->levels * samples.count;
  LevelResume resume(options.resume_budget_bytes);
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
    std::vector<TensorId> changing;  // what this level's search may change: its weights
    for (size_t i : mine) changing.push_back(targets[i].weight);
    QAIRT_RETURN_IF_ERROR(ObserveLevel(
        work, samples, options.num_threads, /*quantized=*/true, "sequential MSE", &grams, grams_of_input,
        [&] {
          if (progress) progress(++done, total, "seqmse");
        },
        &resume, changing));
    // The level's weights are searched on worker threads (each search reads
    // the graph only) and applied in order: the result does not depend on
    // the thread count.
    std::vector<Result<WeightSearchResult>> found(mine.size(), Status::Ok());
    auto search = [&](size_t j) {
      const Target& tg = targets[mine[j]];
      const Tensor& t = work.tensor(tg.weight);
      const exec::InputGram& gram = grams[tg.gram];
      std::vector<const double*> per_group;
      for (int64_t g = 0; g < gram.rows().groups; ++g) per_group.push_back(gram.group(g));
      // The gram may be shared with ops of other widths reading the same input
      // (q, k and v projections): the rows are this op's.
      auto rows = exec::WeightRowsOf(work, tg.op);
      if (!rows.ok()) {
        found[j] = rows.status();
        return;
      }
      const auto [data, columns] = exec::WeightValues(t);
      WeightSearchOptions wo;
      wo.search_grids = options.search_grids;
      wo.adaptive_rounding = options.adaptive_rounding;
      found[j] = SearchWeightEncoding(t.name, data, columns, t.shape.extents(), rows.value(), *t.encoding, per_group, wo);
    };
    {
      const size_t workers = std::max<size_t>(
          1, std::min<size_t>(options.num_threads ? options.num_threads : std::thread::hardware_concurrency(),
                              mine.size()));
      std::atomic<size_t> next{0};
      auto worker = [&] {
        for (size_t j; (j = next.fetch_add(1)) < mine.size();) search(j);
      };
      std::vector<std::thread> threads;
      for (size_t w = 1; w < workers; ++w) threads.emplace_back(worker);
      worker();
      for (auto& t : threads) t.join();
    }
    for (size_t j = 0; j < mine.size(); ++j) {
      const Target& tg = targets[mine[j]];
      const std::string name = work.tensor(tg.weight).name;
      if (!found[j].ok()) {
        if (found[j].status().code() != StatusCode::kUnsupported) return found[j].status();
        report->skipped.push_back(fmt::format("{}: {}", name, found[j].status().message()));
        continue;
      }
      WeightSearchResult r = std::move(found[j]).value();
      report->weights.push_back(SeqMseWeight{name, level, r.base_error, r.error, r.cells_changed, r.roundings_changed});
      if (r.cells_changed) QAIRT_RETURN_IF_ERROR(work.SetEncoding(tg.weight, std::move(r.encoding)));
      if (!r.values.empty()) {
        // The rounding chosen is carried by the values: each on its grid point.
        std::vector<uint8_t> bytes(r.values.size() * sizeof(float));
        std::memcpy(bytes.data(), r.values.data(), bytes.size());
        QAIRT_RETURN_IF_ERROR(work.SetStaticData(tg.weight, DType::kFloat32, StaticData::Adopt(std::move(bytes))));
      }
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
  uint64_t flips = 0;
  for (const SeqMseWeight& w : r.weights) flips += w.roundings_changed;
  std::string out = fmt::format("sequential MSE: {} weight{} in {} level{}", r.weights.size(),
                                r.weights.size() == 1 ? "" : "s", r.levels, r.levels == 1 ? "" : "s");
  if (flips) out += fmt::format(", {} roundings changed", flips);
  if (!gains.empty()) {
    std::nth_element(gains.begin(), gains.begin() + static_cast<long>(gains.size() / 2), gains.end());
    out += fmt::format(", output error {:+.1f} dB median against min-max (best {:+.1f} dB, '{}')",
                       gains[gains.size() / 2], best_gain, best->name);
  }
  if (!r.skipped.empty()) out += fmt::format(", {} kept min-max (e.g. {})", r.skipped.size(), r.skipped.front());
  return out;
}

}  // namespace qairt::calib
