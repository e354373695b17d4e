// Kernel throughput against memory bandwidth. Bytes are counted as
// read + written (memcpy of B bytes = 2B), so "bytes_per_second" of a
// quantize case divided by that of BM_Memcpy is its "% of memcpy".
// Arg 0 = threads (1 or 2), arg 1 (where present) = ISA level
// (0 scalar, 1 sse41, 2 avx2, 3 avx512; -1 = dispatched).
// Run: build/benchmarks/bench_kernels (or benchmarks/kernels_vs_numpy.py).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

#include "ir/encoding.h"
#include "kernels/ops.h"
#include "quant/quantize.h"

namespace {

namespace k = qairt::kernels;

constexpr size_t k64M = size_t{64} << 20;

// Random normal data, generated once per size and shared by the cases.
const std::vector<float>& Data(size_t n) {
  static std::vector<float> d;
  if (d.size() < n) {
    d.resize(n);
    std::mt19937 rng(1);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (auto& v : d) v = g(rng);
  }
  return d;
}

// --hold_idle_cpus: while a case runs on fewer threads than the machine has
// CPUs, keep the other CPUs busy with a pause loop. Why: on the 2-vCPU VM
// these figures come from, one thread ran 1.5-3x slower while the other
// vCPU sat idle than while it was held (memcpy 27-52 ms idle vs 17.5-19.7 ms
// held, same minute), so comparing one thread against two measured the
// host, not the kernel. A pause loop uses no memory bandwidth and little of
// the core.
bool g_hold_idle_cpus = false;

// CPUs this process may run on (taskset / cgroups), not the machine's:
// holders beyond them would share the benchmark's own CPU.
size_t UsableCpus() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<size_t>(CPU_COUNT(&set));
#endif
  return std::thread::hardware_concurrency();
}

class IdleCpuHolder {
 public:
  explicit IdleCpuHolder(size_t busy_threads) {
    const size_t cpus = UsableCpus();
    for (size_t i = busy_threads; g_hold_idle_cpus && i < cpus; ++i)
      holders_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
          _mm_pause();
#else
          std::this_thread::yield();
#endif
        }
      });
  }
  ~IdleCpuHolder() {
    stop_.store(true);
    for (auto& t : holders_) t.join();
  }
  size_t held() const { return holders_.size(); }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> holders_;
};

struct Env {
  std::unique_ptr<k::ThreadPool> pool;
  k::ExecOptions opt;
  IdleCpuHolder holder;
  explicit Env(const benchmark::State& state) : holder(static_cast<size_t>(state.range(0))) {
    const auto threads = static_cast<size_t>(state.range(0));
    if (threads > 1) pool = std::make_unique<k::ThreadPool>(threads);
    opt.pool = pool.get();
    if (state.range(1) >= 0) opt.config = &k::GetKernelConfig(static_cast<k::Isa>(state.range(1)));
    opt.chunk = size_t{1} << 18;
  }
};

void Label(benchmark::State& state, const Env& e) {
  const k::KernelConfig& c = e.opt.config ? *e.opt.config : k::GetKernelConfig();
  std::string label = std::string(k::IsaName(c.level)) + " threads=" + std::to_string(state.range(0));
  if (e.holder.held() > 0) label += " held=" + std::to_string(e.holder.held());
  state.SetLabel(label);
}

void BM_Memcpy(benchmark::State& state) {
  Env e(state);
  const size_t n = k64M;
  const std::vector<float>& x = Data(n);
  std::vector<float> y(n, 1.0f);
  const size_t tasks = n / e.opt.chunk;
  for (auto _ : state) {
    k::ParallelFor(e.opt.pool, tasks, [&](size_t t, size_t) {
      std::memcpy(y.data() + t * e.opt.chunk, x.data() + t * e.opt.chunk, e.opt.chunk * sizeof(float));
    });
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 8));
  Label(state, e);
}

// per-tensor u8 asymmetric, 64M elements
void BM_QuantU8PerTensor(benchmark::State& state) {
  Env e(state);
  const size_t n = k64M;
  const std::vector<float>& x = Data(n);
  std::vector<uint8_t> y(n, 1);
  const float scale = 10.0f / 255;
  const int32_t offset = -128;
  k::QuantArgs a;
  a.scales = &scale;
  a.offsets = &offset;
  a.qmin = 0;
  a.qmax = 255;
  const k::Grid g = k::Grid::PerTensor({static_cast<int64_t>(n)});
  for (auto _ : state) {
    k::QuantizeGrid(k::InType::kF32, x.data(), g, a, k::QStorage::kQ8, y.data(), e.opt);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 5));
  Label(state, e);
}

// per-channel s8 symmetric, [4096, 16384] axis 0
void BM_QuantS8PerChannel(benchmark::State& state) {
  Env e(state);
  const int64_t c = 4096, kk = 16384;
  const size_t n = static_cast<size_t>(c * kk);
  const std::vector<float>& x = Data(n);
  std::vector<int8_t> y(n, 1);
  std::vector<float> scales(static_cast<size_t>(c));
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.02f + 0.00001f * static_cast<float>(i);
  k::QuantArgs a;
  a.scales = scales.data();
  a.qmin = -128;
  a.qmax = 127;
  const k::Grid g = k::Grid::PerChannel({c, kk}, 0);
  for (auto _ : state) {
    k::QuantizeGrid(k::InType::kF32, x.data(), g, a, k::QStorage::kQ8, y.data(), e.opt);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 5));
  Label(state, e);
}

// int4 block-64 symmetric with packing, [4096, 4096] (blocks along the last axis)
void BM_QuantS4Block64(benchmark::State& state) {
  Env e(state);
  const int64_t c = 4096, kk = 4096, b = 64;
  const size_t n = static_cast<size_t>(c * kk);
  const std::vector<float>& x = Data(n);
  std::vector<uint8_t> y(n / 2, 1);
  std::vector<float> scales(n / static_cast<size_t>(b));
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.3f + 0.001f * static_cast<float>(i % 97);
  k::QuantArgs a;
  a.scales = scales.data();
  a.qmin = -8;
  a.qmax = 7;
  const k::Grid g = k::Grid::PerBlock({c, kk}, {1, b});
  for (auto _ : state) {
    k::QuantizeGrid(k::InType::kF32, x.data(), g, a, k::QStorage::kQ4, y.data(), e.opt);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (n * 4 + n / 2)));
  Label(state, e);
}

// int4 blocks of 64 of a MatMul weight read transposed: the source is
// [K, N] = [4096, 4096] (a [N, K] FullyConnected weight as torch exports
// it), quantized in bands of 64 source rows, each band's int4 bytes moved
// into the [N, K / 2] output -- what a converted LLM's projections cost.
// Per band, as the library's bands are handed out (one thread each).
void BM_QuantS4Block64Transposed(benchmark::State& state) {
  Env e(state);
  const size_t kk = 4096, nn = 4096, b = 64, band = 128;
  const size_t n = kk * nn;
  const std::vector<float>& x = Data(n);
  // Cache-line aligned, as the library's output buffers.
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> out(new (std::align_val_t{64}) uint8_t[n / 2],
                                                     [](uint8_t* p) { ::operator delete[](p, std::align_val_t{64}); });
  uint8_t* const y = out.get();
  std::memset(y, 1, n / 2);
  std::vector<float> scales(n / b);
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.3f + 0.001f * static_cast<float>(i % 97);
  k::QuantArgs a;
  a.qmin = -8;
  a.qmax = 7;
  for (auto _ : state) {
    k::ParallelFor(e.opt.pool, kk / band, [&](size_t t, size_t) {
      k::QuantArgs ta = a;
      ta.scales = scales.data() + t * (band / b) * nn;  // [band / b][nn] scales of this band
      k::QuantizeTransposed(x.data() + t * band * nn, band, nn, nn, ta, nn, b, k::QStorage::kQ4,
                            y + t * band / 2, kk, {}, nullptr);
    });
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (n * 4 + n / 2)));
  Label(state, e);
}

// LPBQ 4 -> 8 bit, block 64, on [rows, 4096]: block min/max, per-channel
// float scale and per-block integer scales, then quantize + pack (fused per
// row).
void RunLpbq(benchmark::State& state, size_t rows) {
  Env e(state);
  const size_t kk = 4096, b = 64;
  const size_t n = rows * kk;
  const std::vector<float>& x = Data(n);
  std::vector<uint8_t> y(n / 2, 1);
  std::vector<float> cs(rows);
  std::vector<int32_t> is(n / b);
  for (auto _ : state) {
    k::QuantizeLpbqRows(x.data(), rows, kk, b, 4, 8, k::kDefaultMinRange, cs.data(), is.data(), y.data(), e.opt);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (n * 4 + n / 2)));
  Label(state, e);
}

// [4096, 4096]: 64 MiB, from memory.
void BM_LpbqS4Block64(benchmark::State& state) { RunLpbq(state, 4096); }

// [32, 4096] (512 KiB, resident in L2 across iterations): the kernels'
// compute cost alone, to tell it from the memory traffic above.
void BM_LpbqS4Block64Cached(benchmark::State& state) { RunLpbq(state, 32); }

// The library's own path for a weight without a given encoding, as the
// calibration uses it: quant::ComputeEncoding (block min/max over the tensor,
// then the LPBQ scales), then quant::QuantizeTensor (a second pass over the
// weights) -- two reads of the tensor where QuantizeLpbqRows makes one.
void BM_LpbqEncodeThenQuantize(benchmark::State& state) {
  Env e(state);
  const size_t c = 4096, kk = 4096, b = 64;
  const size_t n = c * kk;
  const std::vector<float>& x = Data(n);
  std::vector<uint8_t> y(n / 2, 1);
  qairt::quant::QuantizeOptions qo;
  qo.pool = e.opt.pool;
  qairt::quant::EncodingRequest req;
  req.kind = qairt::EncodingKind::kLpbq;
  req.dtype = qairt::DType::kSFixed4;
  req.symmetry = qairt::Symmetry::kSymmetric;
  req.axis = 1;
  req.block_sizes = {1, static_cast<int64_t>(b)};
  req.decompressed_bitwidth = 8;
  const std::vector<int64_t> dims = {static_cast<int64_t>(c), static_cast<int64_t>(kk)};
  for (auto _ : state) {
    auto enc = qairt::quant::ComputeEncoding("w", x.data(), dims, req, qo);
    if (!enc.ok() || !qairt::quant::QuantizeTensor("w", qairt::DType::kFloat32, x.data(), dims, enc.value(), y.data(),
                                                   y.size(), qo)
                          .ok()) {
      state.SkipWithError("LPBQ encode or quantize failed");
      break;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (n * 4 + n / 2)));
  Label(state, e);
}

// 2048-bin histogram of 64M elements
void BM_Hist2048(benchmark::State& state) {
  Env e(state);
  const size_t n = k64M;
  const std::vector<float>& x = Data(n);
  std::vector<uint64_t> h(2048);
  for (auto _ : state) {
    k::Histogram(x.data(), n, -4.0f, 4.0f, 2048, h.data(), e.opt);
    benchmark::DoNotOptimize(h.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 4));
  Label(state, e);
}

// per-tensor min/max of 64M elements (calibration / encoding computation)
void BM_MinMax(benchmark::State& state) {
  Env e(state);
  const size_t n = k64M;
  const std::vector<float>& x = Data(n);
  const k::Grid g = k::Grid::PerTensor({static_cast<int64_t>(n)});
  float mn, mx;
  for (auto _ : state) {
    k::MinMaxGrid(x.data(), g, &mn, &mx, e.opt);
    benchmark::DoNotOptimize(mn);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 4));
  Label(state, e);
}

// u8 -> f32 per-tensor dequantize, 64M elements
void BM_DequantU8PerTensor(benchmark::State& state) {
  Env e(state);
  const size_t n = k64M;
  std::vector<uint8_t> q(n);
  for (size_t i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(i * 7);
  std::vector<float> y(n, 1.0f);
  const float scale = 0.01f;
  const int32_t offset = -128;
  k::QuantArgs a;
  a.scales = &scale;
  a.offsets = &offset;
  const k::Grid g = k::Grid::PerTensor({static_cast<int64_t>(n)});
  for (auto _ : state) {
    k::DequantizeGrid(k::QKind::kU8, q.data(), g, a, y.data(), e.opt);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 5));
  Label(state, e);
}

// Thread-pool overhead: back-to-back jobs of 8 tasks of ~5 us of busy work
// (ideal: 40 us on one thread, 20 us on two). What is left above the ideal
// is waking workers and waiting for them.
void BM_ParallelForOverhead(benchmark::State& state) {
  Env e(state);
  auto busy = [] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  for (auto _ : state) k::ParallelFor(e.opt.pool, 8, [&](size_t, size_t) { busy(); });
  Label(state, e);
}

void Threads(benchmark::internal::Benchmark* b) {
  b->Args({1, -1})->Args({2, -1})->UseRealTime()->Unit(benchmark::kMillisecond);
}
void ThreadsAndIsas(benchmark::internal::Benchmark* b) {
  Threads(b);
  for (int isa = 0; isa < 4; ++isa) b->Args({1, isa});
}

BENCHMARK(BM_Memcpy)->Apply(Threads);
BENCHMARK(BM_QuantU8PerTensor)->Apply(ThreadsAndIsas);
BENCHMARK(BM_QuantS8PerChannel)->Apply(Threads);
BENCHMARK(BM_QuantS4Block64)->Apply(Threads);
BENCHMARK(BM_QuantS4Block64Transposed)->Apply(Threads);
BENCHMARK(BM_LpbqS4Block64)->Apply(Threads);
BENCHMARK(BM_LpbqS4Block64Cached)->Apply(ThreadsAndIsas);
BENCHMARK(BM_LpbqEncodeThenQuantize)->Apply(Threads);
BENCHMARK(BM_Hist2048)->Apply(Threads);
BENCHMARK(BM_MinMax)->Apply(Threads);
BENCHMARK(BM_DequantU8PerTensor)->Apply(Threads);
BENCHMARK(BM_ParallelForOverhead)->Args({1, -1})->Args({2, -1})->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  // Take out this program's own flags before Google Benchmark sees argv.
  // --hold_cpus_only: run no benchmark, hold all CPUs but one until stdin
  // closes (kernels_vs_numpy.py times numpy under the same condition).
  bool hold_only = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--hold_idle_cpus") {
      g_hold_idle_cpus = true;
    } else if (arg == "--hold_cpus_only") {
      hold_only = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (hold_only) {
    g_hold_idle_cpus = true;
    IdleCpuHolder holder(1);
    char buf[64];
    while (std::fread(buf, 1, sizeof buf, stdin) > 0) {
    }
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
