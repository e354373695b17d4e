#include "calib/seqmse.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>
#include <condition_variable>
#include <mutex>
#include <thread>

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

// Runs every sample up to the last op producing an input in
// `grams_of_input` and adds each sample's x x^T to those grams. Samples run
// on up to num_threads workers (0: all cores), each with its own executor;
// their sums are added in sample order, so H does not depend on the thread
// count.
Status ObserveLevel(const Graph& g, const SampleSource& samples, uint32_t num_threads,
                    std::vector<exec::InputGram>* grams,
                    const std::unordered_map<TensorId, std::vector<size_t>>& grams_of_input,
                    const std::function<void()>& sample_done) {
  const uint32_t workers = std::max<uint32_t>(
      1, std::min<uint32_t>(num_threads ? num_threads : std::thread::hardware_concurrency(),
                            static_cast<uint32_t>(samples.count)));
  std::mutex mu;
  std::condition_variable turn;
  size_t next = 0;  // the sample whose sums are added next
  bool failed = false;
  std::vector<Status> errors(workers);
  auto fail = [&](uint32_t w, Status s) {
    std::lock_guard<std::mutex> lock(mu);
    errors[w] = std::move(s);
    failed = true;
    turn.notify_all();
  };
  auto worker = [&](uint32_t w) {
    exec::Options eo;
    eo.num_threads = 1;
    eo.simulate_quantization = true;
    eo.observe_inputs = true;
    auto ex = exec::Executor::Create(g, eo);
    if (!ex.ok()) return fail(w, ex.status());
    // Nothing after the last producer of an observed input matters here.
    size_t ops = 0;
    const std::vector<OpId>& order = ex.value()->order();
    for (size_t pos = 0; pos < order.size(); ++pos)
      for (TensorId out : g.op(order[pos]).outputs)
        if (out != kInvalidId && grams_of_input.count(out)) ops = pos + 1;
    std::vector<exec::InputGram::Sample> mine(grams->size());
    std::vector<char> seen(grams->size());
    exec::Observer observer = [&](const exec::ObservedTensor& t) -> Status {
      auto it = grams_of_input.find(t.id);
      if (it == grams_of_input.end() || t.storage_dtype != DType::kFloat32) return Status::Ok();
      for (size_t k : it->second) {
        QAIRT_RETURN_IF_ERROR((*grams)[k].Contribution(static_cast<const float*>(t.data), t.bytes / 4, &mine[k]));
        seen[k] = 1;
      }
      return Status::Ok();
    };
    for (size_t s = w; s < samples.count; s += workers) {
      auto sample = samples.load(s);
      if (!sample.ok()) return fail(w, sample.status());
      std::fill(seen.begin(), seen.end(), 0);
      auto run = ex.value()->RunPrefix(sample.value(), &observer, ops);
      if (!run.ok())
        return fail(w, Status(run.status().code(),
                              fmt::format("sequential MSE, sample {}: {}", s, run.status().message())));
      std::unique_lock<std::mutex> lock(mu);
      turn.wait(lock, [&] { return next == s || failed; });
      if (failed) return;
      for (size_t k = 0; k < mine.size(); ++k)
        if (seen[k]) (*grams)[k].Accumulate(mine[k]);
      ++next;
      sample_done();
      turn.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (uint32_t w = 1; w < workers; ++w) threads.emplace_back(worker, w);
  worker(0);
  for (auto& t : threads) t.join();
  for (const Status& e : errors)
    if (!e.ok()) return e;
  return Status::Ok();
}

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
  std::unordered_map<OpId, size_t> target_of_op;
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
    QAIRT_RETURN_IF_ERROR(ObserveLevel(work, samples, options.num_threads, &grams, grams_of_input, [&] {
      if (progress) progress(++done, total, "seqmse");
    }));
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
      const auto [data, columns] = WeightValues(t);
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
