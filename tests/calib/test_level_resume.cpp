// Resuming runs from a cut: Executor::RunFrom gives what a run from the
// inputs gives, bit for bit, and refuses a cut it did not save; a
// sequential pass resuming between its levels (calib::LevelResume) observes
// exactly what passes from the inputs observe, while skipping ops, also when
// a change reaches ops before the level (a weight two ops share).
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <map>
#include <unordered_map>

#include "calib/bias_correction.h"
#include "calib/calib_test_models.h"
#include "calib/calibrate.h"
#include "calib/observe_level.h"
#include "calib/seqmse.h"
#include "exec/executor.h"
#include "exec/input_gram.h"

using namespace qairt;
using testing::FloatBytes;
using testing::Floats;
using testing::NormalFloats;

namespace {

constexpr int64_t kWidth = 16;

TensorId Fc(Graph* g, const std::string& name, TensorId in, TensorId w, uint32_t seed) {
  const TensorId b =
      g->AddConstant(name + ".b", DType::kFloat32, Shape{kWidth}, Floats(NormalFloats(kWidth, 0, 0.2f, seed))).value();
  const OpId op = g->AddOp("FullyConnected", name, {in, w, b}, {name + ".y"}).value();
  return g->op(op).outputs[0];
}

TensorId Weight(Graph* g, const std::string& name, uint32_t seed) {
  return g
      ->AddConstant(name, DType::kFloat32, Shape{kWidth, kWidth}, Floats(NormalFloats(kWidth * kWidth, 0, 0.3f, seed)))
      .value();
}

// x -> fc1 -> relu -> fc2 -> (+ fc3(x)) -> fc4, and fc5 reading the sum
// with fc1's weight: levels 1 (fc1, fc3), 2 (fc2), 3 (fc4, fc5).
Graph Network() {
  Graph g("resume");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{2, kWidth}).value();
  const TensorId w1 = Weight(&g, "w1", 1), w2 = Weight(&g, "w2", 2), w3 = Weight(&g, "w3", 3),
                 w4 = Weight(&g, "w4", 4);
  const TensorId a = Fc(&g, "fc1", x, w1, 11);
  const TensorId r = g.op(g.AddOp("Relu", "relu", {a}, {"r"}).value()).outputs[0];
  const TensorId c = Fc(&g, "fc2", r, w2, 12);
  const TensorId e = Fc(&g, "fc3", x, w3, 13);
  const TensorId s = g.op(g.AddOp("ElementWiseAdd", "add", {c, e}, {"s"}).value()).outputs[0];
  (void)g.MarkOutput(Fc(&g, "fc4", s, w4, 14));
  (void)g.MarkOutput(Fc(&g, "fc5", s, w1, 15));
  return g;
}

calib::SampleSource Samples(size_t n) {
  calib::SampleSource src;
  src.count = n;
  src.load = [](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    return std::vector<std::vector<uint8_t>>{FloatBytes(NormalFloats(2 * kWidth, 0, 1, 100 + static_cast<uint32_t>(i)))};
  };
  return src;
}

std::vector<float> Values(const exec::HostTensor& h) {
  std::vector<float> v(h.bytes.size() / 4);
  std::memcpy(v.data(), h.bytes.data(), h.bytes.size());
  return v;
}

// Every observed tensor's values, by id.
struct Seen {
  std::map<TensorId, std::vector<uint8_t>> values;
  exec::Observer observer() {
    return [this](const exec::ObservedTensor& t) {
      const auto* p = static_cast<const uint8_t*>(t.data);
      values[t.id].assign(p, p + t.bytes);
      return Status::Ok();
    };
  }
};

}  // namespace

TEST_CASE("RunFrom a saved cut gives the run from the inputs, bit for bit", "[exec][resume]") {
  const Graph g = Network();
  exec::Options eo;
  eo.observe_inputs = true;
  auto ex = exec::Executor::Create(g, eo);
  INFO(ex.status().message());
  REQUIRE(ex.ok());
  const std::vector<uint8_t> x = FloatBytes(NormalFloats(2 * kWidth, 0, 1, 7));
  Seen whole;
  exec::Observer ow = whole.observer();
  auto full = ex.value()->Run({x}, &ow);
  REQUIRE(full.ok());
  const size_t n = ex.value()->order().size();
  for (size_t pos = 0; pos <= n; ++pos) {
    exec::Cut cut;
    cut.position = pos;
    REQUIRE(ex.value()->RunPrefix({x}, nullptr, n, &cut).ok());
    CHECK(cut.ids == ex.value()->Crossing(pos));
    CHECK(cut.values.size() == cut.ids.size());
    // Another input in between, so the arena holds none of this run's values.
    REQUIRE(ex.value()->Run({FloatBytes(NormalFloats(2 * kWidth, 3, 2, 8))}).ok());
    Seen part;
    exec::Observer op = part.observer();
    auto resumed = ex.value()->RunFrom(cut, &op, n);
    REQUIRE(resumed.ok());
    REQUIRE(resumed.value().size() == 2);
    for (size_t k = 0; k < 2; ++k) CHECK(Values(resumed.value()[k]) == Values(full.value()[k]));
    // It sees the restored tensors and every output made after the cut.
    for (const auto& [id, bytes] : part.values) CHECK(whole.values.at(id) == bytes);
    for (size_t p = pos; p < n; ++p)
      for (TensorId out : g.op(ex.value()->order()[p]).outputs) CHECK(part.values.count(out) == 1);
  }
  // The input crosses every cut; after the last op only the outputs and it remain.
  const std::vector<TensorId> end = ex.value()->Crossing(n);
  CHECK(end.size() == 3);
  CHECK(end[0] == g.inputs()[0]);
}

TEST_CASE("RunFrom refuses a cut its executor did not save", "[exec][resume]") {
  const Graph g = Network();
  auto ex = exec::Executor::Create(g, exec::Options{});
  REQUIRE(ex.ok());
  const std::vector<uint8_t> x = FloatBytes(NormalFloats(2 * kWidth, 0, 1, 7));
  exec::Cut cut;
  cut.position = 3;
  REQUIRE(ex.value()->RunPrefix({x}, nullptr, 5, &cut).ok());
  const size_t n = ex.value()->order().size();

  exec::Cut moved = cut;
  moved.position = 1;  // other tensors cross there
  auto r = ex.value()->RunFrom(moved, nullptr, n);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("graph 'resume'") && Catch::Contains("not saved by an executor"));

  exec::Cut shortened = cut;
  shortened.values.back().resize(4);
  r = ex.value()->RunFrom(shortened, nullptr, n);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("holds 4 bytes for tensor"));

  exec::Cut beyond;
  beyond.position = 2;  // a save outside the ops run
  r = ex.value()->RunPrefix({x}, nullptr, 1, &beyond);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("is not within the ops run"));

  exec::Options unsimulated;
  unsimulated.observe_unsimulated = true;
  auto other = exec::Executor::Create(g, unsimulated);
  REQUIRE(other.ok());
  r = other.value()->RunFrom(cut, nullptr, n);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("cannot resume from a cut"));
}

namespace {

// One sequential pass over the network's levels, changing after each level
// its ops' biases (and, with `tied`, at the last level fc5's weight, which
// fc1 reads first): the first moments each level observed.
std::vector<std::vector<double>> SequentialPass(calib::LevelResume* resume, bool tied, uint32_t threads = 2) {
  Graph g = Network();
  const calib::SampleSource samples = Samples(5);
  std::vector<OpId> ops;
  for (const char* name : {"fc1", "fc2", "fc3", "fc4", "fc5"}) ops.push_back(*g.FindOp(name));
  size_t levels = 0;
  auto level_of = calib::SequentialLevels(g, ops, &levels);
  REQUIRE(level_of.ok());
  REQUIRE(levels == 3);
  std::vector<std::vector<double>> observed;
  for (size_t level = 1; level <= levels; ++level) {
    std::vector<exec::InputGram> grams;
    std::unordered_map<TensorId, std::vector<size_t>> of_input;
    std::vector<TensorId> changing;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (level_of.value()[i] != level) continue;
      auto gram = exec::InputGram::For(g, ops[i], /*second_moment=*/false);
      REQUIRE(gram.ok());
      of_input[g.op(ops[i]).inputs[0]].push_back(grams.size());
      grams.push_back(std::move(gram).value());
      changing.push_back(g.op(ops[i]).inputs[2]);
      if (tied && level == levels) changing.push_back(g.op(ops[i]).inputs[1]);
    }
    REQUIRE(calib::ObserveLevel(g, samples, threads, /*quantized=*/true, "test", &grams, of_input, [] {}, resume,
                                changing)
                .ok());
    for (const exec::InputGram& m : grams) observed.emplace_back(m.sum(0), m.sum(0) + m.rows().k);
    // The changes: every bias read, shifted; fc5's weight (fc1's too).
    for (TensorId t : changing) {
      const Tensor& tensor = g.tensor(t);
      std::vector<float> v(static_cast<size_t>(*tensor.shape.element_count()));
      std::memcpy(v.data(), tensor.data->data(), v.size() * 4);
      for (float& f : v) f = f * 0.9f + 0.25f;
      REQUIRE(g.SetStaticData(t, DType::kFloat32, Floats(v)).ok());
    }
  }
  if (tied) {
    // A last pass observing the sum fc4 and fc5 read, which fc1's changed
    // weight reaches: a cut saved after fc1 would hand it back stale.
    std::vector<exec::InputGram> grams;
    std::unordered_map<TensorId, std::vector<size_t>> of_input;
    for (const char* name : {"fc4", "fc5"}) {
      auto gram = exec::InputGram::For(g, *g.FindOp(name), false);
      REQUIRE(gram.ok());
      of_input[g.op(*g.FindOp(name)).inputs[0]].push_back(grams.size());
      grams.push_back(std::move(gram).value());
    }
    REQUIRE(calib::ObserveLevel(g, samples, threads, true, "test", &grams, of_input, [] {}, resume, {}).ok());
    for (const exec::InputGram& m : grams) observed.emplace_back(m.sum(0), m.sum(0) + m.rows().k);
  }
  return observed;
}

}  // namespace

TEST_CASE("A sequential pass resuming between levels observes what passes from the inputs do", "[calib][resume]") {
  for (bool tied : {false, true}) {
    INFO("tied weight changed: " << tied);
    const auto from_inputs = SequentialPass(nullptr, tied);
    calib::LevelResume resume;
    const auto resumed = SequentialPass(&resume, tied);
    REQUIRE(resumed.size() == from_inputs.size());
    for (size_t k = 0; k < resumed.size(); ++k) CHECK(resumed[k] == from_inputs[k]);
    // Untied, level 3 resumes after fc2's input (fc1, fc3 and relu skipped);
    // tied, a change fc1 reads puts every cut at the inputs.
    CHECK(resume.ops_skipped == (tied ? 0u : 3u * 5u));
    CHECK(resume.ops_run > 0);

    // No budget: nothing is saved, every sample runs from its inputs.
    calib::LevelResume none(0);
    CHECK(SequentialPass(&none, tied) == from_inputs);
    CHECK(none.ops_skipped == 0);
    // A budget for about two samples' cuts: some resume, the others run
    // from their inputs, the sums the same (one thread and two).
    for (uint32_t threads : {1u, 2u}) {
      calib::LevelResume some(600);
      CHECK(SequentialPass(&some, tied, threads) == from_inputs);
      if (!tied) CHECK(some.ops_skipped > 0);
      if (!tied) CHECK(some.ops_skipped < resume.ops_skipped);
    }
  }
}

namespace {

// The network with 8-bit encodings from min-max calibration on `samples`.
Graph Calibrated(const calib::SampleSource& samples) {
  Graph g = Network();
  calib::Options o;
  o.weights_bitwidth = 4;
  o.act_bitwidth = 8;
  calib::Report r;
  REQUIRE(calib::Calibrate(&g, samples, o, &r).ok());
  return g;
}

// Every static tensor's bytes and encoding, by name: what a pass changed.
std::map<std::string, std::pair<std::vector<uint8_t>, std::string>> Statics(const Graph& g) {
  std::map<std::string, std::pair<std::vector<uint8_t>, std::string>> out;
  for (TensorId t = 0; t < g.tensor_count(); ++t) {
    const Tensor& tensor = g.tensor(t);
    if (tensor.kind != TensorKind::kStatic || !tensor.data) continue;
    const auto* p = tensor.data->data();
    out[tensor.name] = {std::vector<uint8_t>(p, p + tensor.data->size()),
                        tensor.encoding ? fmt::format("{}", tensor.encoding->scales.to_vector()) : ""};
  }
  return out;
}

}  // namespace

TEST_CASE("Bias correction and sequential MSE give the same model resuming or not", "[calib][resume]") {
  const calib::SampleSource samples = Samples(6);
  const Graph float_graph = Network();
  const Graph base = Calibrated(samples);
  // Processing as a hook: fc4's weight on a coarser grid.
  const auto coarser = testing::CoarserWeight("w4", 2.0f);
  for (uint64_t budget : {calib::kLevelResumeBudget, uint64_t{0}, uint64_t{600}}) {
    INFO("resume budget " << budget);
    Graph corrected = base, reference = base;
    calib::BiasCorrectionReport a, b;
    REQUIRE(calib::CorrectBiases(&corrected, float_graph, samples, 2, coarser, &a, {}, budget).ok());
    REQUIRE(calib::CorrectBiases(&reference, float_graph, samples, 2, coarser, &b, {}, 0).ok());
    CHECK(a.corrected == 5);
    CHECK(Statics(corrected) == Statics(reference));
    CHECK(Statics(corrected) != Statics(base));

    Graph searched = base, searched_reference = base;
    calib::SeqMseOptions so;
    so.adaptive_rounding = true;
    so.num_threads = 2;
    so.resume_budget_bytes = budget;
    calib::SeqMseReport sa, sb;
    const std::vector<std::string> weights = {"w1", "w2", "w3", "w4"};
    REQUIRE(calib::SequentialMse(&searched, samples, weights, so, &sa).ok());
    so.resume_budget_bytes = 0;
    REQUIRE(calib::SequentialMse(&searched_reference, samples, weights, so, &sb).ok());
    CHECK(sa.weights.size() == 3);  // w1 is read by two ops: left as it is
    CHECK(Statics(searched) == Statics(searched_reference));
    CHECK(Statics(searched) != Statics(base));
  }
}
