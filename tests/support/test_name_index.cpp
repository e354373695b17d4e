// NameIndex (open addressing, backward-shift deletion) against a
// std::unordered_map model, and the Graph name lookups built on it.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "support/name_index.h"

using namespace qairt;  // NOLINT

TEST_CASE("NameIndex matches a map model under random insert/erase", "[support][name_index]") {
  std::mt19937 rng(7);
  std::vector<std::string> names;  // id -> name (ids are never reused)
  std::unordered_map<std::string, uint32_t> model;
  NameIndex index;
  const auto name_of = [&](uint32_t id) -> const std::string& { return names[id]; };
  // A small name space makes repeats, long probe runs and wrap-around common.
  for (int step = 0; step < 20000; ++step) {
    const std::string name = "t" + std::to_string(rng() % 3000);
    if (rng() % 3 != 0) {
      const auto id = static_cast<uint32_t>(names.size());
      names.push_back(name);
      const uint32_t stored = index.Insert(name, id, name_of);
      const auto [it, inserted] = model.emplace(name, id);
      REQUIRE(stored == it->second);  // the first definition stays
      (void)inserted;
    } else if (auto it = model.find(name); it != model.end()) {
      REQUIRE_FALSE(index.Erase(name, it->second + 1000000, name_of));  // other id: not removed
      REQUIRE(index.Erase(name, it->second, name_of));
      model.erase(it);
    } else {
      REQUIRE_FALSE(index.Erase(name, 0, name_of));
    }
    REQUIRE(index.size() == model.size());
    if (step % 500 == 0) {
      for (int k = 0; k < 3000; ++k) {
        const std::string probe = "t" + std::to_string(k);
        const auto it = model.find(probe);
        REQUIRE(index.Find(probe, name_of) == (it == model.end() ? NameIndex::kNoId : it->second));
      }
    }
  }
}

TEST_CASE("Graph name lookups: first definition, rename, batch", "[support][name_index][ir]") {
  Graph g("g");
  std::vector<TensorId> ids;
  for (int i = 0; i < 5000; ++i)
    ids.push_back(g.AddInput("x" + std::to_string(i), DType::kFloat32, Shape({1})).value());
  const TensorId dup = g.AddInput("x7", DType::kFloat32, Shape({1})).value();  // duplicate name
  REQUIRE(*g.FindTensor("x7") == ids[7]);
  REQUIRE(g.RenameTensor(ids[7], "renamed").ok());
  REQUIRE(*g.FindTensor("renamed") == ids[7]);
  REQUIRE(*g.FindTensor("x7") == dup);  // the duplicate becomes the one found
  REQUIRE(g.RenameTensor(ids[8], "x9").ok());  // onto an existing name: the first (x9) stays
  REQUIRE(*g.FindTensor("x9") == ids[9]);
  REQUIRE_FALSE(g.FindTensor("x8"));
  const Graph copy = g;  // the index is copied with the names it refers to
  std::vector<std::string_view> names = {"x0", "renamed", "nope", "x4999", "x8", "x7"};
  const auto found = copy.FindTensors(names);
  REQUIRE(found == std::vector<TensorId>{ids[0], ids[7], kInvalidId, ids[4999], kInvalidId, dup});
  std::vector<std::string> many;
  for (int i = 0; i < 5000; i += 3) many.push_back("x" + std::to_string(i));
  names.assign(many.begin(), many.end());
  const auto batch = copy.FindTensors(names);
  for (size_t i = 0; i < names.size(); ++i) {
    const auto one = copy.FindTensor(names[i]);
    REQUIRE(batch[i] == (one ? *one : kInvalidId));
  }
}

TEST_CASE("Graph batch lookups and encodings on several threads equal one at a time", "[support][name_index][ir][threads]") {
  // More names than the batch calls' threshold for threads, some absent.
  Graph g("g");
  constexpr int kTensors = 50000;
  for (int i = 0; i < kTensors; ++i)
    REQUIRE(g.AddInput("t" + std::to_string(i), DType::kFloat32, Shape({4})).ok());
  std::vector<std::string> owned;
  for (int i = 0; i < kTensors + 5000; i += 1) owned.push_back("t" + std::to_string((i * 7919) % (kTensors + 5000)));
  const std::vector<std::string_view> names(owned.begin(), owned.end());
  const auto one_thread = g.FindTensors(names, 1);
  for (unsigned threads : {2u, 3u}) CHECK(g.FindTensors(names, threads) == one_thread);
  for (size_t i = 0; i < names.size(); i += 97) {
    const auto one = g.FindTensor(names[i]);
    REQUIRE(one_thread[i] == (one ? *one : kInvalidId));
  }
  // Encodings of every found tensor, set at once on 3 threads.
  std::vector<Encoding> encs;
  std::vector<std::pair<TensorId, Encoding*>> items;
  encs.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (one_thread[i] == kInvalidId) continue;
    Encoding e;
    e.kind = EncodingKind::kPerTensor;
    e.dtype = DType::kUFixed16;
    e.scales = {0.001f * static_cast<float>(one_thread[i] + 1)};
    e.offsets = {0};
    encs.push_back(e);
    items.emplace_back(one_thread[i], &encs.back());
  }
  REQUIRE(items.size() == kTensors);
  const uint64_t before = g.version();
  REQUIRE(g.SetValidatedEncodings(items, 3).ok());
  CHECK(g.version() != before);
  for (TensorId id = 0; id < kTensors; ++id) {
    REQUIRE(g.tensor(id).encoding);
    REQUIRE(g.tensor(id).encoding->scales[0] == 0.001f * static_cast<float>(id + 1));
  }
  // A tensor given twice, or an invalid id: refused, nothing changed.
  Graph h("h");
  const TensorId a = h.AddInput("a", DType::kFloat32, Shape({1})).value();
  Encoding e1;
  e1.kind = EncodingKind::kPerTensor;
  e1.dtype = DType::kUFixed8;
  e1.scales = {0.5f};
  e1.offsets = {0};
  Encoding e2 = e1;
  CHECK(encs[0].scales.empty());  // what was set was moved from
  auto twice = h.SetValidatedEncodings({{a, &e1}, {a, &e2}}, 2);
  CHECK_FALSE(twice.ok());
  CHECK(twice.message().find("'a' is given twice") != std::string::npos);
  CHECK_FALSE(h.SetValidatedEncodings({{a, &e1}, {a + 1, &e2}}, 2).ok());
  CHECK_FALSE(h.tensor(a).encoding);
  CHECK(e1.scales.size() == 1);  // not moved from
}
