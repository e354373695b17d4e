// Unit tests of the reference executor on graphs built directly in the IR.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <thread>
#include <vector>

#include "exec/executor.h"
#include "exec/kernel.h"
#include "ir/graph.h"

using namespace qairt;

namespace {

std::shared_ptr<const StaticData> Floats(const std::vector<float>& v) {
  return StaticData::Copy(v.data(), v.size() * sizeof(float));
}

std::vector<float> AsFloats(const exec::HostTensor& t) {
  std::vector<float> v(t.bytes.size() / 4);
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

Result<std::vector<exec::HostTensor>> RunF(exec::Executor& ex, const std::vector<std::vector<float>>& inputs,
                                           const exec::Observer* obs = nullptr) {
  std::vector<const void*> p;
  std::vector<size_t> n;
  for (const auto& v : inputs) {
    p.push_back(v.data());
    n.push_back(v.size() * 4);
  }
  return ex.Run(p, n, obs);
}

// x[1,2,3,3] -> Conv2d(3x3, pad 1, 2->2) -> Relu -> +1 -> out
Graph SmallConvGraph() {
  Graph g("conv");
  auto x = g.AddInput("x", DType::kFloat32, Shape{1, 2, 3, 3}).value();
  std::vector<float> w(2 * 2 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) - 2.0f;
  auto wt = g.AddConstant("w", DType::kFloat32, Shape{2, 2, 3, 3}, Floats(w)).value();
  auto bt = g.AddConstant("b", DType::kFloat32, Shape{2}, Floats({0.5f, -0.5f})).value();
  auto c = g.AddOp("Conv2d", "conv", {x, wt, bt}, {"c"},
                   {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{1, 1}}});
  REQUIRE(c.ok());
  auto r = g.AddOp("Relu", "relu", {g.op(c.value()).outputs[0]}, {"r"});
  auto one = g.AddConstant("one", DType::kFloat32, Shape{1}, Floats({1.0f})).value();
  auto a = g.AddOp("ElementWiseAdd", "add", {g.op(r.value()).outputs[0], one}, {"out"});
  REQUIRE(g.MarkOutput(g.op(a.value()).outputs[0]).ok());
  return g;
}

// Direct reference of SmallConvGraph.
std::vector<float> SmallConvReference(const std::vector<float>& x) {
  std::vector<float> out(2 * 9);
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        float acc = o == 0 ? 0.5f : -0.5f;
        for (int c = 0; c < 2; ++c)
          for (int ki = 0; ki < 3; ++ki)
            for (int kj = 0; kj < 3; ++kj) {
              const int ii = i + ki - 1, jj = j + kj - 1;
              if (ii < 0 || ii >= 3 || jj < 0 || jj >= 3) continue;
              const int widx = ((o * 2 + c) * 3 + ki) * 3 + kj;
              acc += (static_cast<float>(widx % 5) - 2.0f) * x[static_cast<size_t>((c * 3 + ii) * 3 + jj)];
            }
        out[static_cast<size_t>((o * 3 + i) * 3 + j)] = std::max(acc, 0.0f) + 1.0f;
      }
  return out;
}

}  // namespace

TEST_CASE("executor runs a conv graph like a direct reference", "[exec]") {
  Graph g = SmallConvGraph();
  auto ex = exec::Executor::Create(g);
  REQUIRE(ex.ok());
  std::vector<float> x(18);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
  auto out = RunF(*ex.value(), {x});
  REQUIRE(out.ok());
  const auto got = AsFloats(out.value()[0]);
  const auto want = SmallConvReference(x);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
  CHECK(out.value()[0].dims == std::vector<int64_t>{1, 2, 3, 3});
}

TEST_CASE("executor observer sees every op output after the op", "[exec]") {
  Graph g = SmallConvGraph();
  auto ex = exec::Executor::Create(g).value();
  std::vector<std::string> seen;
  std::map<std::string, float> first;
  exec::Observer obs = [&](const exec::ObservedTensor& t) {
    seen.push_back(*t.name);
    REQUIRE(t.storage_dtype == DType::kFloat32);
    first[*t.name] = static_cast<const float*>(t.data)[0];
    return Status::Ok();
  };
  std::vector<float> x(18, 0.25f);
  auto out = RunF(*ex, {x}, &obs);
  REQUIRE(out.ok());
  CHECK(seen == std::vector<std::string>{"c", "r", "out"});
  CHECK(first["out"] == Approx(std::max(first["c"], 0.0f) + 1.0f));
  // An observer error stops the run and is returned.
  exec::Observer stop = [](const exec::ObservedTensor& t) {
    return *t.name == "r" ? InvalidArgument("stop at {}", *t.name) : Status::Ok();
  };
  auto stopped = RunF(*ex, {x}, &stop);
  REQUIRE_FALSE(stopped.ok());
  CHECK(stopped.status().message() == "stop at r");
}

TEST_CASE("executor reuses activation memory by liveness", "[exec]") {
  // A chain of 8 elementwise ops on [1024] floats: only two buffers are ever live.
  Graph g("chain");
  TensorId t = g.AddInput("x", DType::kFloat32, Shape{1024}).value();
  for (int i = 0; i < 8; ++i) t = g.op(g.AddOp("Relu", "r" + std::to_string(i), {t}, {"t" + std::to_string(i)}).value()).outputs[0];
  REQUIRE(g.MarkOutput(t).ok());
  auto ex = exec::Executor::Create(g).value();
  const auto& st = ex->stats();
  CHECK(st.unplanned_bytes == 9 * 4096u);
  CHECK(st.arena_bytes <= 3 * 4096u);  // input + two alternating buffers
  std::vector<float> x(1024, -1.0f);
  x[7] = 3.0f;
  auto out = RunF(*ex, {x});
  REQUIRE(out.ok());
  CHECK(AsFloats(out.value()[0])[7] == 3.0f);
  CHECK(AsFloats(out.value()[0])[8] == 0.0f);
}

TEST_CASE("executor reads float32 weights in place", "[exec]") {
  Graph g = SmallConvGraph();
  auto ex = exec::Executor::Create(g).value();
  CHECK(ex->stats().static_borrowed_bytes == (36 + 2 + 1) * 4u);
  CHECK(ex->stats().static_copied_bytes == 0u);
}

namespace {
// x[4] -> Relu -> y, y with an 8-bit encoding of step `scale` from 0.
Graph ReluOnGrid(float scale, TensorId* y) {
  Graph g("q");
  auto x = g.AddInput("x", DType::kFloat32, Shape{4}).value();
  *y = g.op(g.AddOp("Relu", "relu", {x}, {"y"}).value()).outputs[0];
  REQUIRE(g.MarkOutput(*y).ok());
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = DType::kUFixed8;
  e.scales = {scale};
  e.offsets = {0};
  REQUIRE(g.SetEncoding(*y, e).ok());
  return g;
}
}  // namespace

TEST_CASE("executor simulates quantization at encoded tensors", "[exec]") {
  TensorId y;
  const Graph g = ReluOnGrid(0.1f, &y);
  std::vector<float> in = {0.04f, 0.26f, 30.0f, -1.0f};
  auto sim = RunF(*exec::Executor::Create(g).value(), {in});
  REQUIRE(sim.ok());
  const auto v = AsFloats(sim.value()[0]);
  CHECK(v[0] == Approx(0.0f).margin(1e-7));
  CHECK(v[1] == Approx(0.3f));   // 2.6 -> 3 steps
  CHECK(v[2] == Approx(25.5f));  // saturates at 255 steps
  CHECK(v[3] == 0.0f);
  exec::Options no_sim;
  no_sim.simulate_quantization = false;
  auto flt = RunF(*exec::Executor::Create(g, no_sim).value(), {in});
  REQUIRE(flt.ok());
  CHECK(AsFloats(flt.value()[0])[1] == Approx(0.26f));
}

TEST_CASE("observe_unsimulated shows an output before it is rounded to its encoding", "[exec]") {
  TensorId y;
  const Graph g = ReluOnGrid(0.5f, &y);
  const std::vector<float> in = {0.3f, 1.2f, -1.f, 2.6f};
  for (bool before : {false, true}) {
    exec::Options o;
    o.observe_unsimulated = before;
    auto ex = exec::Executor::Create(g, o);
    REQUIRE(ex.ok());
    std::vector<float> seen;
    exec::Observer obs = [&](const exec::ObservedTensor& t) {
      if (t.id == y) seen.assign(static_cast<const float*>(t.data), static_cast<const float*>(t.data) + 4);
      return Status::Ok();
    };
    auto out = RunF(*ex.value(), {in}, &obs);
    REQUIRE(out.ok());
    REQUIRE(seen.size() == 4);
    const std::vector<float> result = AsFloats(out.value()[0]);
    CHECK(result == std::vector<float>{0.5f, 1.f, 0.f, 2.5f});  // the output is rounded either way
    if (before) CHECK(seen == std::vector<float>{0.3f, 1.2f, 0.f, 2.6f});
    else CHECK(seen == result);
  }
}

TEST_CASE("executor dequantizes fixed-point static weights once", "[exec]") {
  Graph g("fc");
  auto x = g.AddInput("x", DType::kFloat32, Shape{1, 2}).value();
  const std::vector<int8_t> q = {10, -20, 30, 40};  // [2 out, 2 in]
  auto w = g.AddConstant("w", DType::kSFixed8, Shape{2, 2}, StaticData::Copy(q.data(), q.size())).value();
  Encoding e;
  e.kind = EncodingKind::kPerChannel;
  e.dtype = DType::kSFixed8;
  e.axis = 0;
  e.scales = {0.5f, 0.25f};
  e.offsets = {0, 0};
  REQUIRE(g.SetEncoding(w, e).ok());
  auto y = g.op(g.AddOp("FullyConnected", "fc", {x, w}, {"y"}).value()).outputs[0];
  REQUIRE(g.MarkOutput(y).ok());
  auto ex = exec::Executor::Create(g).value();
  CHECK(ex->stats().static_copied_bytes > 0u);
  auto out = RunF(*ex, {{1.0f, 2.0f}});
  REQUIRE(out.ok());
  const auto v = AsFloats(out.value()[0]);
  CHECK(v[0] == Approx(1.0f * 5.0f + 2.0f * -10.0f));
  CHECK(v[1] == Approx(1.0f * 7.5f + 2.0f * 10.0f));
}

TEST_CASE("executor rejects bad inputs and unsupported graphs with named errors", "[exec]") {
  Graph g = SmallConvGraph();
  auto ex = exec::Executor::Create(g).value();
  std::vector<float> small(5);
  auto r = RunF(*ex, {small});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("input 'x' needs 72 bytes") != std::string::npos);
  CHECK_FALSE(ex->Run({}, {}).ok());

  Graph dyn("dyn");
  auto x = dyn.AddInput("x", DType::kFloat32, Shape{Dim::Symbolic("batch"), 3}).value();
  auto y = dyn.op(dyn.AddOp("Relu", "relu", {x}, {"y"}).value()).outputs[0];
  REQUIRE(dyn.MarkOutput(y).ok());
  auto bad = exec::Executor::Create(dyn);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("tensor 'x'") != std::string::npos);

  Graph unk("unk");
  auto u = unk.AddInput("x", DType::kFloat32, Shape{2}).value();
  auto o = unk.AddOp("NoSuchOp", "mystery", {u}, {"y"});
  if (o.ok()) {
    REQUIRE(unk.MarkOutput(unk.op(o.value()).outputs[0]).ok());
    auto e2 = exec::Executor::Create(unk);
    REQUIRE_FALSE(e2.ok());
    CHECK(e2.status().message().find("mystery") != std::string::npos);
  }
}

TEST_CASE("executor gives identical results with several threads", "[exec][threads]") {
  Graph g = SmallConvGraph();
  std::vector<float> x(18);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(static_cast<float>(i) * 0.7f);
  exec::Options o1, o2;
  o2.num_threads = 2;
  auto a = RunF(*exec::Executor::Create(g, o1).value(), {x});
  auto b = RunF(*exec::Executor::Create(g, o2).value(), {x});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a.value()[0].bytes == b.value()[0].bytes);
}

TEST_CASE("executor supports every op type the ONNX importer emits", "[exec]") {
  const auto ops = exec::SupportedOpTypes();
  for (const char* t : {"Conv2d", "DepthWiseConv2d", "TransposeConv2d", "FullyConnected", "MatMul", "PoolMax2d",
                        "PoolAvg2d", "Softmax", "LayerNorm", "GroupNorm", "InstanceNorm", "Batchnorm", "Gelu", "Resize",
                        "Gather", "GatherElements", "GatherNd", "ScatterNd", "ScatterElements", "Concat", "Split",
                        "StridedSlice", "Transpose", "Reshape", "Pad", "Tile", "Lstm", "Gru", "Cast", "Convert", "TopK",
                        "Argmax", "ReduceMean", "CumulativeSum", "ElementWiseSelect", "ElementWiseUnary", "Prelu",
                        "DepthToSpace", "SpaceToDepth", "Lrn", "ReluMinMax", "HardSwish", "Shape", "ExpandDims",
                        "Squeeze", "IsInf", "IsNan", "ElementWiseMod", "ElementWiseFmod"})
    CHECK(std::find(ops.begin(), ops.end(), t) != ops.end());
}

TEST_CASE("executor refuses a graph whose declared shapes disagree with its ops", "[exec]") {
  // As a hostile file could declare: Relu of [4] written into a [3] tensor.
  Graph g("bad");
  auto x = g.AddInput("x", DType::kFloat32, Shape{4}).value();
  auto y = g.AddTensor("y", DType::kFloat32, Shape{3}).value();
  OpSpec spec;
  spec.type = "Relu";
  spec.name = "relu";
  spec.inputs = {x};
  spec.outputs = {y};
  REQUIRE(g.AddOp(spec).ok());
  REQUIRE(g.MarkOutput(y).ok());
  auto ex = exec::Executor::Create(g);
  REQUIRE_FALSE(ex.ok());
  CHECK(ex.status().message().find("does not validate") != std::string::npos);
}

namespace {

// Depthwise 3x3 (the direct-from-input fast path) and 5x5 (the padded path)
// against a direct reference: strides 1, 2 and (2, 1), pads 0..2, widths
// that leave no interior column, every border.
void CheckDepthwise(int64_t h, int64_t w, int64_t k, int64_t sh, int64_t sw, int64_t pad) {
  const int64_t ch = 3;
  Graph g("dw");
  auto x = g.AddInput("x", DType::kFloat32, Shape{1, ch, h, w}).value();
  std::vector<float> wv(static_cast<size_t>(ch * k * k)), xv(static_cast<size_t>(ch * h * w));
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = std::sin(static_cast<float>(i) * 0.7f);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::cos(static_cast<float>(i) * 0.3f);
  auto wt = g.AddConstant("w", DType::kFloat32, Shape{ch, 1, k, k}, Floats(wv)).value();
  auto bt = g.AddConstant("b", DType::kFloat32, Shape{ch}, Floats({0.25f, -0.5f, 1.0f})).value();
  auto c = g.AddOp("DepthWiseConv2d", "dw", {x, wt, bt}, {"y"},
                   {{"pads", std::vector<int64_t>{pad, pad, pad, pad}}, {"strides", std::vector<int64_t>{sh, sw}}});
  REQUIRE(c.ok());
  REQUIRE(g.MarkOutput(g.op(c.value()).outputs[0]).ok());
  auto ex = exec::Executor::Create(g, exec::Options{});
  INFO("h " << h << " w " << w << " k " << k << " stride " << sh << "x" << sw << " pad " << pad);
  REQUIRE(ex.ok());
  auto out = RunF(*ex.value(), {xv});
  REQUIRE(out.ok());
  const std::vector<float> y = AsFloats(out.value()[0]);
  const int64_t oh = (h + 2 * pad - k) / sh + 1, ow = (w + 2 * pad - k) / sw + 1;
  REQUIRE(static_cast<int64_t>(y.size()) == ch * oh * ow);
  const float bias[3] = {0.25f, -0.5f, 1.0f};
  for (int64_t c0 = 0; c0 < ch; ++c0)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double want = bias[c0];
        for (int64_t a = 0; a < k; ++a)
          for (int64_t bb = 0; bb < k; ++bb) {
            const int64_t r = i * sh + a - pad, col = j * sw + bb - pad;
            if (r >= 0 && r < h && col >= 0 && col < w)
              want += static_cast<double>(wv[static_cast<size_t>((c0 * k + a) * k + bb)]) *
                      xv[static_cast<size_t>((c0 * h + r) * w + col)];
          }
        CHECK(std::fabs(y[static_cast<size_t>((c0 * oh + i) * ow + j)] - want) < 1e-5);
      }
}

}  // namespace

TEST_CASE("depthwise convolutions match a direct reference on every border", "[exec]") {
  for (int64_t k : {3, 5})
    for (auto [sh, sw] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 2}, {2, 1}})
      for (int64_t pad : {0, 1, 2})
        for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{5, 5}, {7, 19}, {6, 37}, {9, 3}})
          if (h + 2 * pad >= k && w + 2 * pad >= k) CheckDepthwise(h, w, k, sh, sw, pad);
}

TEST_CASE("integer results beyond int64 saturate instead of wrapping", "[exec]") {
  // ScatterElements(reduction=add) on int64 sums in double: INT64_MAX +
  // INT64_MAX is 1.8e19, which a plain cast to int64 may not represent
  // (undefined behaviour; x86 yields INT64_MIN). The executor stores the
  // nearest end of the range.
  Graph g("scatter");
  auto data = g.AddInput("data", DType::kInt64, Shape{2}).value();
  auto idx = g.AddInput("idx", DType::kInt64, Shape{1}).value();
  auto upd = g.AddInput("upd", DType::kInt64, Shape{1}).value();
  auto op = g.AddOp("ScatterElements", "scatter", {data, idx, upd}, {"y"},
                    {{"axis", int64_t{0}}, {"reduction", std::string("add")}});
  REQUIRE(op.ok());
  REQUIRE(g.MarkOutput(g.op(op.value()).outputs[0]).ok());
  auto ex = exec::Executor::Create(g);
  REQUIRE(ex.ok());
  const int64_t d[2] = {INT64_MAX, -5}, i[1] = {0}, u[1] = {INT64_MAX};
  auto out = ex.value()->Run({d, i, u}, {sizeof d, sizeof i, sizeof u});
  REQUIRE(out.ok());
  int64_t y[2];
  REQUIRE(out.value()[0].bytes.size() == sizeof y);
  std::memcpy(y, out.value()[0].bytes.data(), sizeof y);
  CHECK(y[0] == INT64_MAX);
  CHECK(y[1] == -5);
  CHECK(exec::SaturatingInt64(std::nan("")) == 0);
  CHECK(exec::SaturatingInt64(-1e300) == INT64_MIN);
  CHECK(exec::SaturatingInt64(-3.9) == -3);
}

TEST_CASE("a transposed view read by several threads at once is made once", "[exec][threads]") {
  // Executors on several threads share a graph's StaticData; the first
  // data() of a transposed view makes its bytes, under call_once.
  constexpr int64_t kRows = 64, kCols = 48;
  std::vector<uint8_t> src(kRows * kCols * sizeof(float));
  for (size_t i = 0; i < src.size() / sizeof(float); ++i) {
    const float v = static_cast<float>(i);
    std::memcpy(&src[i * sizeof(float)], &v, sizeof v);
  }
  std::atomic<int> made{0};
  const auto view = qairt::StaticData::TransposeOf(
      qairt::StaticData::Adopt(std::move(src)), sizeof(float), kRows, kCols, [&](const uint8_t* in, uint8_t* out) {
        ++made;
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t c = 0; c < kCols; ++c)
            std::memcpy(out + (c * kRows + r) * sizeof(float), in + (r * kCols + c) * sizeof(float), sizeof(float));
      });
  std::vector<const uint8_t*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&, t] { seen[t] = view->data(); });
  for (auto& th : threads) th.join();
  CHECK(made == 1);
  for (const uint8_t* p : seen) CHECK(p == seen[0]);
  float v = 0;
  std::memcpy(&v, seen[0] + (5 * kRows + 7) * sizeof(float), sizeof v);  // view [5][7] = source [7][5]
  CHECK(v == static_cast<float>(7 * kCols + 5));
  CHECK(view->materialized());
}

TEST_CASE("executors sharing a workspace run in turn as they run alone", "[exec][workspace]") {
  // Two graphs with different arenas: the shared one grows to the larger,
  // and each executor's tensors follow it when it moves.
  Graph small = SmallConvGraph();
  Graph big("big");
  auto bx = big.AddInput("x", DType::kFloat32, Shape{1, 4, 32, 32}).value();
  auto h = big.AddOp("HardSwish", "hs", {bx}, {"h"});
  REQUIRE(h.ok());
  auto two = big.AddConstant("two", DType::kFloat32, Shape{1}, Floats({2.0f})).value();
  auto m = big.AddOp("ElementWiseMultiply", "mul", {big.op(h.value()).outputs[0], two}, {"out"});
  REQUIRE(m.ok());
  REQUIRE(big.MarkOutput(big.op(m.value()).outputs[0]).ok());

  std::vector<float> xs(18), xb(4 * 32 * 32);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(static_cast<float>(i)) * 3.0f;
  for (size_t i = 0; i < xb.size(); ++i) xb[i] = std::cos(static_cast<float>(i) * 0.37f) * 5.0f;
  for (uint32_t threads : {1u, 2u}) {
    INFO("threads " << threads);
    exec::Options own;
    own.num_threads = threads;
    auto alone_small = exec::Executor::Create(small, own);
    auto alone_big = exec::Executor::Create(big, own);
    REQUIRE(alone_small.ok());
    REQUIRE(alone_big.ok());
    const auto want_small = RunF(*alone_small.value(), {xs});
    const auto want_big = RunF(*alone_big.value(), {xb});
    REQUIRE(want_small.ok());
    REQUIRE(want_big.ok());

    exec::Options shared = own;
    shared.workspace = std::make_shared<exec::Workspace>();
    auto es = exec::Executor::Create(small, shared);
    auto eb = exec::Executor::Create(big, shared);
    REQUIRE(es.ok());
    REQUIRE(eb.ok());
    for (int round = 0; round < 3; ++round) {  // small first: the arena grows under it
      auto gs = RunF(*es.value(), {xs});
      auto gb = RunF(*eb.value(), {xb});
      REQUIRE(gs.ok());
      REQUIRE(gb.ok());
      CHECK(gs.value()[0].bytes == want_small.value()[0].bytes);
      CHECK(gb.value()[0].bytes == want_big.value()[0].bytes);
    }
    CHECK(shared.workspace->arena_bytes() ==
          std::max(es.value()->stats().arena_bytes, eb.value()->stats().arena_bytes));

    // One run inside another's observer would overwrite its tensors: refused,
    // and the workspace is usable again once the outer run returns.
    exec::Observer nested = [&](const exec::ObservedTensor&) -> Status {
      auto inner = RunF(*eb.value(), {xb});
      return inner.ok() ? Status::Ok() : inner.status();
    };
    auto refused = RunF(*es.value(), {xs}, &nested);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.status().message(), Catch::Contains("workspace"));
    auto again = RunF(*eb.value(), {xb});
    REQUIRE(again.ok());
    CHECK(again.value()[0].bytes == want_big.value()[0].bytes);
  }
}

TEST_CASE("softmax over the last axis equals softmax over another axis, bit for bit, subnormals included",
          "[exec]") {
  // Rows of attention-like scores with a -100 mask: exp() of the masked
  // ones is subnormal. The last axis runs on contiguous rows, any other
  // axis on strided lanes: the same values either way.
  constexpr int64_t kRows = 6, kN = 40;
  std::vector<float> x(kRows * kN), xt(kRows * kN);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t k = 0; k < kN; ++k) {
      const float v = (k > r * 7 ? -100.0f : 0.0f) + 0.37f * static_cast<float>((k * 13 + r * 5) % 11) - 1.5f;
      x[static_cast<size_t>(r * kN + k)] = v;
      xt[static_cast<size_t>(k * kRows + r)] = v;
    }
  auto run = [](const std::vector<float>& in, Shape shape, int64_t axis) {
    Graph g("softmax");
    auto t = g.AddInput("x", DType::kFloat32, shape).value();
    auto s = g.AddOp("Softmax", "softmax", {t}, {"y"}, {{"axis", axis}});
    REQUIRE(s.ok());
    REQUIRE(g.MarkOutput(g.op(s.value()).outputs[0]).ok());
    auto ex = exec::Executor::Create(g).value();
    auto out = RunF(*ex, {in});
    REQUIRE(out.ok());
    return AsFloats(out.value()[0]);
  };
  const std::vector<float> last = run(x, Shape{kRows, kN}, -1);
  const std::vector<float> first = run(xt, Shape{kN, kRows}, 0);
  size_t subnormal = 0, differ = 0;
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t k = 0; k < kN; ++k) {
      const float a = last[static_cast<size_t>(r * kN + k)], b = first[static_cast<size_t>(k * kRows + r)];
      differ += std::memcmp(&a, &b, sizeof a) != 0;
      subnormal += std::fpclassify(a) == FP_SUBNORMAL;
    }
  CHECK(differ == 0);
  CHECK(subnormal > 0);  // the case the contiguous path is for
  for (int64_t r = 0; r < kRows; ++r) {
    double sum = 0;
    for (int64_t k = 0; k < kN; ++k) sum += last[static_cast<size_t>(r * kN + k)];
    CHECK(sum == Approx(1.0).epsilon(1e-6));
  }
}

TEST_CASE("a power of two is the product of the value with itself", "[exec]") {
  Graph g("square");
  auto x = g.AddInput("x", DType::kFloat32, Shape{8}).value();
  auto two = g.AddConstant("two", DType::kFloat32, Shape{1}, Floats({2.0f})).value();
  auto p = g.AddOp("ElementWisePower", "pow", {x, two}, {"y"});
  REQUIRE(p.ok());
  REQUIRE(g.MarkOutput(g.op(p.value()).outputs[0]).ok());
  auto ex = exec::Executor::Create(g).value();
  const std::vector<float> in = {-3.0f, 1.1f, 0.0f, -0.0f, 1e-30f, 3e19f, -std::numeric_limits<float>::infinity(),
                                 1.0000001f};
  auto out = RunF(*ex, {in});
  REQUIRE(out.ok());
  const std::vector<float> y = AsFloats(out.value()[0]);
  for (size_t i = 0; i < in.size(); ++i) {
    INFO("x = " << in[i]);
    const float want = in[i] * in[i];
    CHECK(std::memcmp(&y[i], &want, sizeof want) == 0);
  }
}
