// Graph-building throughput: importers of large models (tens of thousands of
// ops) go through AddOp, Validate and TopologicalOrder; these must stay
// linear. Run: build/benchmarks/bench_graph
#include <benchmark/benchmark.h>

#include <string>

#include "ir/graph.h"

namespace {

// A residual chain: x -> [Relu -> Add(prev)]* -> out.
qairt::Graph BuildChain(int64_t blocks) {
  qairt::Graph g("chain");
  auto x = g.AddInput("x", qairt::DType::kFloat32, qairt::Shape{1, 64, 56, 56}).value();
  qairt::TensorId prev = x;
  for (int64_t i = 0; i < blocks; ++i) {
    const std::string n = std::to_string(i);
    auto relu = g.AddOp("Relu", "relu" + n, {prev}, {"r" + n}).value();
    auto add = g.AddOp("ElementWiseAdd", "add" + n, {g.op(relu).outputs[0], prev}, {"a" + n}).value();
    prev = g.op(add).outputs[0];
  }
  (void)g.MarkOutput(prev);
  return g;
}

void BM_BuildChain(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(BuildChain(state.range(0)));
  state.SetItemsProcessed(state.iterations() * state.range(0) * 2);
}
BENCHMARK(BM_BuildChain)->Arg(1000)->Arg(10000)->Arg(50000);

void BM_Validate(benchmark::State& state) {
  qairt::Graph g = BuildChain(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(g.Validate());
  state.SetItemsProcessed(state.iterations() * state.range(0) * 2);
}
BENCHMARK(BM_Validate)->Arg(1000)->Arg(10000)->Arg(50000);

void BM_TopologicalOrder(benchmark::State& state) {
  qairt::Graph g = BuildChain(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(g.TopologicalOrder());
  state.SetItemsProcessed(state.iterations() * state.range(0) * 2);
}
BENCHMARK(BM_TopologicalOrder)->Arg(1000)->Arg(10000)->Arg(50000);

}  // namespace

BENCHMARK_MAIN();
