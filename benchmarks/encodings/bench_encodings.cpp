// Parse + apply throughput of the encodings reader on a synthetic LLM-scale
// 2.0.0 file (benchmarks/encodings/gen_synthetic.py). Not a test: prints
// MB/s; run_bench.sh puts Python's json module next to it.
//
//   bench_encodings FILE.json FILE.tensors [repeats] [threads (0: auto)] [window bytes (0: whole file)]
//                   [1: read, then apply]
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "encodings/encodings.h"

using namespace qairt;  // NOLINT

// System time and page faults of one phase: on this VM a page fault costs
// microseconds, so the first run (cold memory) is reported on its own.
struct Usage {
  rusage start;
  Usage() { getrusage(RUSAGE_SELF, &start); }
  std::string Since() const {
    rusage now;
    getrusage(RUSAGE_SELF, &now);
    const double sys_ms = (now.ru_stime.tv_sec - start.ru_stime.tv_sec) * 1e3 +
                          (now.ru_stime.tv_usec - start.ru_stime.tv_usec) / 1e3;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.1f ms system, %ld page faults", sys_ms, now.ru_minflt - start.ru_minflt);
    return buf;
  }
};

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_encodings FILE.json FILE.tensors [repeats] [threads] [window_bytes] [two_steps]\n");
    return 2;
  }
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  encodings::ReadOptions read_options;
  if (argc > 4) read_options.threads = static_cast<uint32_t>(std::atoi(argv[4]));
  if (argc > 5) read_options.window_bytes = static_cast<uint64_t>(std::atoll(argv[5]));
  // 1: read into entries, then apply them (ReadEncodingsFile + ApplyEncodings).
  const bool two_steps = argc > 6 && std::atoi(argv[6]) == 1;
  // A long-running process keeps freed memory: no mmap/munmap (and page
  // faults) per large array on every repeat. The first run is reported too.
  if (!mallopt(M_MMAP_THRESHOLD, 1 << 30) || !mallopt(M_TRIM_THRESHOLD, 1 << 30)) return 1;
  // The graph: one activation per listed tensor, with its shape.
  Graph base("synthetic");
  std::ifstream shapes(argv[2]);
  std::string line;
  while (std::getline(shapes, line)) {
    const size_t sp = line.rfind(' ');
    std::vector<Dim> dims;
    std::stringstream ss(line.substr(sp + 1));
    std::string d;
    while (std::getline(ss, d, ',')) dims.emplace_back(std::stoll(d));
    if (!base.AddInput(line.substr(0, sp), DType::kFloat32, Shape(dims)).ok()) return 1;
  }
  std::ifstream probe(argv[1], std::ios::binary | std::ios::ate);
  const double mb = static_cast<double>(probe.tellg()) / 1e6;
  double best_parse = 1e30, best_total = 1e30;
  size_t applied = 0;
  encodings::ApplyOptions ao;
  ao.threads = read_options.threads;
  const auto seconds = [](auto t0, auto t1) { return std::chrono::duration<double>(t1 - t0).count(); };
  // Read and applied as the CLI does it (convert --quantization_overrides):
  // the first run is a fresh process's, the rest warm.
  const auto read_and_apply = [&](int r) -> bool {
    Graph g = base;
    const Usage usage;
    const auto t0 = std::chrono::steady_clock::now();
    encodings::Diags diags;
    auto stats = [&]() -> Result<encodings::ApplyStats> {
      if (!two_steps) return encodings::ReadAndApplyEncodingsFile(argv[1], read_options, &g, ao, &diags);
      auto file = encodings::ReadEncodingsFile(argv[1], read_options, &diags);
      if (!file.ok()) return file.status();
      return encodings::ApplyEncodings(std::move(file.value()), &g, ao, &diags);
    }();
    const double t = seconds(t0, std::chrono::steady_clock::now());
    if (!stats.ok()) {
      std::fprintf(stderr, "%s\n", stats.status().message().c_str());
      return false;
    }
    applied = stats.value().applied;
    best_total = std::min(best_total, t);
    if (r == 0) std::printf("first run: parse+apply %.3f s (%.0f MB/s; %s)\n", t, mb / t, usage.Since().c_str());
    return true;
  };
  if (!read_and_apply(0)) return 1;
  for (int r = 1; r < repeats; ++r) {
    const Usage usage;
    const auto t0 = std::chrono::steady_clock::now();
    encodings::Diags diags;
    auto file = encodings::ReadEncodingsFile(argv[1], read_options, &diags);
    const double t = seconds(t0, std::chrono::steady_clock::now());
    if (!file.ok()) {
      std::fprintf(stderr, "%s\n", file.status().message().c_str());
      return 1;
    }
    std::printf("repeat %d: parse %.3f s (%s)\n", r, t, usage.Since().c_str());
    best_parse = std::min(best_parse, t);
    if (!read_and_apply(r)) return 1;
  }
  std::printf("file: %.1f MB, %zu applied\n", mb, applied);
  if (repeats > 1) std::printf("qairt parse:         %.3f s  %.0f MB/s\n", best_parse, mb / best_parse);
  std::printf("qairt parse+apply:   %.3f s  %.0f MB/s\n", best_total, mb / best_total);
  return 0;
}
