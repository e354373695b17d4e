#include "calib/sample_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "calib/input_list.h"
#include "exec/executor.h"

namespace qairt::calib {

namespace {

// One sample's outputs appended to `outs` (float32 as is, int64 and bytes
// converted).
void AppendOutputs(const std::vector<exec::HostTensor>& r, size_t samples, SampleOutputs* outs) {
  for (size_t k = 0; k < r.size() && k < outs->size(); ++k) {
    const exec::HostTensor& h = r[k];
    std::vector<float>& o = (*outs)[k];
    if (h.dtype == DType::kFloat32) {
      const size_t n = h.bytes.size() / 4, at = o.size();
      if (at == 0) o.reserve(n * samples);  // every sample's output has this size: no regrowth copies
      o.resize(at + n);
      if (n) std::memcpy(o.data() + at, h.bytes.data(), n * 4);
    } else if (h.dtype == DType::kInt64) {
      for (size_t j = 0; j + 8 <= h.bytes.size(); j += 8) {
        int64_t v;
        std::memcpy(&v, h.bytes.data() + j, 8);
        o.push_back(static_cast<float>(v));
      }
    } else {
      for (uint8_t b : h.bytes) o.push_back(b);
    }
  }
}

}  // namespace

Result<SampleOutputs> RunSamples(const Graph& graph, const SampleSource& samples, bool simulate_quantization,
                                 uint32_t num_threads, std::shared_ptr<exec::Workspace> workspace) {
  SampleOutputs outs(graph.outputs().size());
  // Samples on up to num_threads workers (0: every core), each with its own
  // single-threaded executor, as calibration runs them: one sample at a
  // time leaves a second core mostly idle on models of small ops. The
  // executor's results do not depend on its threads, and outputs are
  // gathered in sample order: the same outputs for any count.
  const auto workers = static_cast<uint32_t>(std::max<size_t>(
      1, std::min<size_t>(num_threads ? num_threads : std::max(1u, std::thread::hardware_concurrency()),
                          samples.count)));
  if (workers == 1) {
    exec::Options eo;
    eo.num_threads = num_threads;
    eo.simulate_quantization = simulate_quantization;
    eo.workspace = std::move(workspace);
    auto ex = exec::Executor::Create(graph, eo);
    if (!ex.ok()) return ex.status();
    for (size_t i = 0; i < samples.count; ++i) {
      auto s = samples.load(i);
      if (!s.ok()) return s.status();
      auto r = ex.value()->Run(s.value());
      if (!r.ok()) return r.status();
      AppendOutputs(r.value(), samples.count, &outs);
    }
    return outs;
  }
  std::vector<std::vector<exec::HostTensor>> results(samples.count);
  std::vector<Status> errors(samples.count, Status::Ok());
  std::vector<Status> setup(workers, Status::Ok());
  auto work_once = [&](uint32_t w) {
    exec::Options eo;
    eo.num_threads = 1;
    eo.simulate_quantization = simulate_quantization;
    if (w == 0) eo.workspace = workspace;  // one executor at a time may use it
    auto ex = exec::Executor::Create(graph, eo);
    if (!ex.ok()) {
      setup[w] = ex.status();
      return;
    }
    for (size_t i = w; i < samples.count; i += workers) {
      auto s = samples.load(i);
      if (!s.ok()) {
        errors[i] = s.status();
        return;
      }
      auto r = ex.value()->Run(s.value());
      if (!r.ok()) {
        errors[i] = r.status();
        return;
      }
      results[i] = std::move(r).value();
    }
  };
  // Nothing escapes a worker (an exception on a thread would terminate).
  auto work = [&](uint32_t w) {
    try {
      work_once(w);
    } catch (...) {
      setup[w] = Status(StatusCode::kOutOfMemory, "out of memory running the samples");
    }
  };
  std::vector<std::thread> threads;
  uint32_t started = 1;
  try {
    for (; started < workers; ++started) threads.emplace_back(work, started);
  } catch (...) {
    // No thread for the rest: their shares run on this one, below.
  }
  work(0);
  for (uint32_t w = started; w < workers; ++w) work(w);
  for (auto& t : threads) t.join();
  for (const Status& st : setup)
    if (!st.ok()) return st;
  // The first failure in sample order (a worker stops at its first).
  for (size_t i = 0; i < samples.count; ++i) {
    if (!errors[i].ok()) return errors[i];
    AppendOutputs(results[i], samples.count, &outs);
    results[i] = {};
  }
  return outs;
}

double SqnrDb(double signal, double error) {
  if (!std::isfinite(error)) return -200;
  return error == 0 ? 200.0 : std::min(200.0, 10.0 * std::log10(std::max(signal, 1e-300) / error));
}

Agreement Agree(const std::vector<float>& ref, const std::vector<float>& x) {
  double dot = 0, rr = 0, xx = 0, err = 0;
  const size_t n = std::min(ref.size(), x.size());
  for (size_t k = 0; k < n; ++k) {
    const double a = ref[k], b = x[k];
    dot += a * b;
    rr += a * a;
    xx += b * b;
    err += (a - b) * (a - b);
  }
  Agreement g;
  if (ref.size() != x.size() || !std::isfinite(err)) return Agreement{0, -200};
  g.cosine = rr == 0 && xx == 0 ? 1.0 : (rr == 0 || xx == 0 ? 0.0 : dot / std::sqrt(rr * xx));
  g.sqnr_db = SqnrDb(rr, err);
  return g;
}

Agreement Worst(const SampleOutputs& ref, const SampleOutputs& x) {
  Agreement w{1, 200};
  for (size_t k = 0; k < ref.size(); ++k) {
    const Agreement a = Agree(ref[k], k < x.size() ? x[k] : std::vector<float>{});
    w.cosine = std::min(w.cosine, a.cosine);
    w.sqnr_db = std::min(w.sqnr_db, a.sqnr_db);
  }
  return w;
}

Result<SampleSource> SyntheticSamples(const Graph& graph, size_t count, uint64_t seed) {
  auto specs = GraphInputSpecs(graph);
  if (!specs.ok()) return specs.status();
  auto shared = std::make_shared<std::vector<InputSpec>>(std::move(specs).value());
  SampleSource s;
  s.count = count;
  s.load = [shared, seed](size_t index) -> Result<std::vector<std::vector<uint8_t>>> {
    std::mt19937_64 rng(seed + index * 0x9E3779B97F4A7C15ull);
    std::vector<std::vector<uint8_t>> bufs;
    for (const InputSpec& in : *shared) {
      std::vector<uint8_t> b(in.bytes, 0);
      if (in.dtype == DType::kFloat32) {
        // Box-Muller from the raw generator: the same numbers on every
        // standard library (std::normal_distribution is not specified).
        const double two_pi = 6.283185307179586;
        for (size_t k = 0; k + 4 <= b.size(); k += 4) {
          const double u1 = (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53;
          const double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
          const auto v = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2));
          std::memcpy(b.data() + k, &v, 4);
        }
      }
      bufs.push_back(std::move(b));
    }
    return bufs;
  };
  return s;
}

SampleSource Slice(const SampleSource& s, size_t begin, size_t end) {
  end = std::min(end, s.count);
  begin = std::min(begin, end);
  SampleSource out;
  out.count = end - begin;
  auto load = s.load;
  out.load = [load, begin](size_t i) { return load(begin + i); };
  return out;
}

Halves SplitInHalves(size_t count) {
  Halves h;
  for (size_t pair = 0; 2 * pair < count; ++pair) {
    const size_t a = 2 * pair, b = a + 1;
    if (b >= count) {
      h.fit.push_back(a);
      break;
    }
    // splitmix64 of the pair's index: a fixed sequence of coins.
    uint64_t z = (pair + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const bool swap = z >> 63;
    h.fit.push_back(swap ? b : a);
    h.held_out.push_back(swap ? a : b);
  }
  return h;
}

SampleSource Subset(const SampleSource& s, std::vector<size_t> indices) {
  SampleSource out;
  out.count = indices.size();
  auto load = s.load;
  out.load = [load, indices = std::move(indices)](size_t i) { return load(indices[i]); };
  return out;
}

}  // namespace qairt::calib
