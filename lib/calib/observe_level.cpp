#include "calib/observe_level.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "exec/executor.h"

namespace qairt::calib {

Status ObserveLevel(const Graph& g, const SampleSource& samples, uint32_t num_threads, bool quantized,
                    std::string_view what, std::vector<exec::InputGram>* grams,
                    const std::unordered_map<TensorId, std::vector<size_t>>& grams_of_input,
                    const std::function<void()>& sample_done, LevelResume* resume,
                    const std::vector<TensorId>& changing) {
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
  if (resume) resume->cuts.resize(samples.count);
  std::vector<OpId> order;  // worker 0's, for the next pass
  std::atomic<uint64_t> saved_bytes{0}, ops_run{0}, ops_skipped{0};
  auto worker = [&](uint32_t w) {
    exec::Options eo;
    eo.num_threads = 1;
    eo.simulate_quantization = quantized;
    eo.observe_inputs = true;
    auto ex = exec::Executor::Create(g, eo);
    if (!ex.ok()) return fail(w, ex.status());
    // Nothing after the last producer of an observed input matters here.
    size_t ops = 0;
    const std::vector<OpId>& ex_order = ex.value()->order();
    for (size_t pos = 0; pos < ex_order.size(); ++pos)
      for (TensorId out : g.op(ex_order[pos]).outputs)
        if (out != kInvalidId && grams_of_input.count(out)) ops = pos + 1;
    // The cut for the next pass: where its changes begin (the first op
    // reading a changing tensor), or where this run stops if that is sooner.
    size_t save_at = ops;
    if (resume) {
      std::vector<char> changes(g.tensor_count());
      for (TensorId t : changing)
        if (t < changes.size()) changes[t] = 1;
      for (size_t pos = 0; pos < save_at; ++pos)
        for (TensorId in : g.op(ex_order[pos]).inputs)
          if (in != kInvalidId && changes[in]) save_at = pos;
    }
    const bool resumable = resume && resume->order == ex_order;
    // A cut serves only if every observed input made before it crosses it
    // (the resumed run sees it restored); otherwise the sample runs from
    // its inputs.
    std::vector<size_t> made_at(g.tensor_count(), 0);  // 1 + producer's position; 0: a graph input
    for (size_t pos = 0; pos < ex_order.size(); ++pos)
      for (TensorId out : g.op(ex_order[pos]).outputs)
        if (out != kInvalidId) made_at[out] = pos + 1;
    auto serves = [&](const exec::Cut& c) {
      if (c.position > save_at || c.ids != ex.value()->Crossing(c.position)) return false;
      for (const auto& observed : grams_of_input)
        if (made_at[observed.first] <= c.position && !std::binary_search(c.ids.begin(), c.ids.end(), observed.first))
          return false;
      return true;
    };
    if (w == 0) order = ex_order;
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
      std::fill(seen.begin(), seen.end(), 0);
      const exec::Cut* from = resumable && resume->cuts[s] && serves(*resume->cuts[s]) ? &*resume->cuts[s] : nullptr;
      exec::Cut cut;
      cut.position = save_at;
      exec::Cut* save = resume ? &cut : nullptr;
      Result<std::vector<exec::HostTensor>> run = std::vector<exec::HostTensor>{};
      if (from) {
        run = ex.value()->RunFrom(*from, &observer, ops, save);
      } else {
        auto sample = samples.load(s);
        if (!sample.ok()) return fail(w, sample.status());
        run = ex.value()->RunPrefix(sample.value(), &observer, ops, save);
      }
      if (!run.ok())
        return fail(w, Status(run.status().code(),
                              fmt::format("{}, sample {}: {}", what, s, run.status().message())));
      const size_t first = from ? from->position : 0;
      ops_run += ops - std::min(ops, first);
      ops_skipped += first;
      if (resume) {
        // Within the budget the cut replaces this sample's last one; past it
        // the sample runs from its inputs next time.
        const uint64_t bytes = cut.bytes();
        if (saved_bytes.fetch_add(bytes) + bytes <= resume->budget) resume->cuts[s] = std::move(cut);
        else resume->cuts[s].reset();
      }
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
  if (resume) {
    resume->order = std::move(order);
    resume->ops_run += ops_run;
    resume->ops_skipped += ops_skipped;
  }
  return Status::Ok();
}

Result<std::vector<size_t>> SequentialLevels(const Graph& g, const std::vector<OpId>& ops, size_t* levels) {
  std::unordered_map<OpId, size_t> index;
  for (size_t i = 0; i < ops.size(); ++i) index[ops[i]] = i;
  auto topo = g.TopologicalOrder();
  if (!topo.ok()) return topo.status();
  std::vector<size_t> out(ops.size(), 0), depth(g.tensor_count(), 0);
  *levels = 0;
  for (OpId id : topo.value()) {
    const Op& op = g.op(id);
    size_t up = 0;
    for (TensorId in : op.inputs)
      if (in != kInvalidId) up = std::max(up, depth[in]);
    if (auto it = index.find(id); it != index.end()) {
      out[it->second] = ++up;
      *levels = std::max(*levels, up);
    }
    for (TensorId o : op.outputs)
      if (o != kInvalidId) depth[o] = up;
  }
  return out;
}

}  // namespace qairt::calib
