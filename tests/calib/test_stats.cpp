// Calibration statistics (lib/calib/stats.h): sharded collection, exact
// merge, serialization, and every refusal (another model, round, options,
// overlapping or missing shards, corrupt files).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "calib/calib_test_models.h"
#include "calib/stats.h"

using namespace qairt;
using namespace qairt::calib;

namespace {

Graph Mlp(float scale = 0.5f) { return testing::SmallMlp(scale); }

SampleSource Samples(size_t n) {
  SampleSource s;
  s.count = n;
  s.load = [](size_t i) -> Result<std::vector<std::vector<uint8_t>>> {
    std::mt19937 rng(static_cast<uint32_t>(7 + i));
    std::normal_distribution<float> d(0.f, 1.f + 0.3f * static_cast<float>(i % 4));
    std::vector<float> v(16);
    for (auto& x : v) x = d(rng);
    std::vector<uint8_t> b(64);
    std::memcpy(b.data(), v.data(), 64);
    return std::vector<std::vector<uint8_t>>{b};
  };
  return s;
}

// Round 1 and (when the method needs it) round 2 over `shards` shards, merged.
Stats Sharded(const Graph& g, const SampleSource& src, const Options& o, uint32_t shards) {
  std::vector<Stats> r1(shards);
  std::vector<const Stats*> p1;
  for (uint32_t k = 0; k < shards; ++k) {
    // Round trip through the file format on the way, as between hosts.
    Stats local;
    REQUIRE(CollectStats(g, src, o, k, shards, nullptr, &local).ok());
    REQUIRE(ParseStats(SerializeStats(local), "shard", &r1[k]).ok());
    p1.push_back(&r1[k]);
  }
  Stats ranges;
  REQUIRE(MergeStats(p1, &ranges).ok());
  if (o.act_method == Method::kMinMax) return ranges;
  std::vector<Stats> r2(shards);
  std::vector<const Stats*> p2;
  for (uint32_t k = shards; k-- > 0;) {  // any order
    REQUIRE(CollectStats(g, src, o, k, shards, &ranges, &r2[k]).ok());
    p2.push_back(&r2[k]);
  }
  Stats hist;
  REQUIRE(MergeStats(p2, &hist).ok());
  return hist;
}

}  // namespace

TEST_CASE("sharded statistics give the single-process encodings for any shard count and method",
          "[calib][stats]") {
  const SampleSource src = Samples(7);
  for (Method m : {Method::kMinMax, Method::kPercentile, Method::kMse, Method::kSqnr}) {
    Options o;
    o.act_method = m;
    o.histogram_bins = 256;
    Graph whole = Mlp();
    Report rw;
    REQUIRE(Calibrate(&whole, src, o, &rw).ok());
    for (uint32_t shards : {1u, 2u, 3u, 7u}) {
      INFO(MethodName(m) << ", " << shards << " shards");
      Graph g = Mlp();
      const Stats st = Sharded(g, src, o, shards);
      CHECK(st.complete());
      CHECK(st.samples == 7);
      Report r;
      REQUIRE(CalibrateFromStats(&g, st, o, &r).ok());
      CHECK(Graph::Diff(whole, g).empty());
      CHECK(r.samples == rw.samples);
      CHECK(r.activations == rw.activations);
    }
  }
}

TEST_CASE("statistics files: round trip and corrupt bytes refused naming the file", "[calib][stats]") {
  const Graph g = Mlp();
  Options o;
  o.act_method = Method::kMse;
  o.histogram_bins = 64;
  Stats r1, r2;
  REQUIRE(CollectStats(g, Samples(4), o, 0, 1, nullptr, &r1).ok());
  REQUIRE(CollectStats(g, Samples(4), o, 0, 1, &r1, &r2).ok());
  const std::string bytes = SerializeStats(r2);
  Stats back;
  REQUIRE(ParseStats(bytes, "h.stats", &back).ok());
  CHECK(SerializeStats(back) == bytes);

  Stats bad;
  Status s = ParseStats(bytes.substr(0, bytes.size() / 2), "h.stats", &bad);
  CHECK(s.code() == StatusCode::kParseError);
  CHECK(s.message().find("h.stats") != std::string::npos);
  CHECK(ParseStats("", "empty.stats", &bad).code() == StatusCode::kParseError);
  CHECK(ParseStats(std::string(64, 'x'), "x.stats", &bad).message().find("QACS") != std::string::npos);
  // One count changed on its own (a bit flip, a hand edit): the histogram no
  // longer sums to the total the file records. The serialized forms with and
  // without the change differ in the count and in the total; take only one.
  Stats tampered = r2;
  tampered.tensors[0].hist[3] += 1;
  const std::string t = SerializeStats(tampered);
  REQUIRE(t.size() == bytes.size());
  size_t at = t.size();
  for (size_t i = 0; i < t.size() && at == t.size(); ++i)
    if (t[i] != bytes[i]) at = i;
  REQUIRE(at < t.size());
  std::string corrupt = bytes;
  corrupt[at] = t[at];
  s = ParseStats(corrupt, "c.stats", &bad);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("c.stats") != std::string::npos);
}

TEST_CASE("merging and using statistics refuses what does not fit", "[calib][stats]") {
  const SampleSource src = Samples(6);
  Options o;
  o.act_method = Method::kPercentile;
  o.histogram_bins = 64;
  const Graph g = Mlp();
  Stats s0, s1, s0b, other_model, other_bins;
  REQUIRE(CollectStats(g, src, o, 0, 2, nullptr, &s0).ok());
  REQUIRE(CollectStats(g, src, o, 1, 2, nullptr, &s1).ok());
  REQUIRE(CollectStats(g, src, o, 0, 2, nullptr, &s0b).ok());
  REQUIRE(CollectStats(Mlp(0.25f), src, o, 1, 2, nullptr, &other_model).ok());
  Options o2 = o;
  o2.histogram_bins = 128;
  REQUIRE(CollectStats(g, src, o2, 1, 2, nullptr, &other_bins).ok());
  Stats m;
  auto msg = [](const Status& s) { return s.message(); };
  CHECK(msg(MergeStats({&s0, &s0b}, &m)).find("shard 0 of 2 is already") != std::string::npos);
  CHECK(msg(MergeStats({&s0, &other_model}, &m)).find("another model") != std::string::npos);
  CHECK(msg(MergeStats({&s0, &other_bins}, &m)).find("histogram bins") != std::string::npos);
  REQUIRE(MergeStats({&s1, &s0}, &m).ok());
  CHECK(m.shards == std::vector<uint32_t>{0, 1});
  Stats r2;
  REQUIRE(CollectStats(g, src, o, 0, 2, &m, &r2).ok());
  CHECK(msg(MergeStats({&r2, &s1}, &m)).find("round") != std::string::npos);

  // Incomplete ranges cannot seed round 2; round 1 cannot serve a histogram method.
  CHECK(msg(CollectStats(g, src, o, 0, 2, &s0, &r2)).find("cover 1 of 2 shards") != std::string::npos);
  Graph target = Mlp();
  Report r;
  Stats ranges;
  REQUIRE(MergeStats({&s0, &s1}, &ranges).ok());
  Status use = CalibrateFromStats(&target, ranges, o, &r, "m.stats");
  CHECK(use.message().find("round 1 (ranges) only") != std::string::npos);
  CHECK(use.message().find("m.stats") != std::string::npos);
  Options min_max = o;
  min_max.act_method = Method::kMinMax;
  use = CalibrateFromStats(&target, s0, min_max, &r, "half.stats");
  CHECK(use.message().find("missing: 1") != std::string::npos);
  Graph other = Mlp(0.25f);
  CHECK(msg(CalibrateFromStats(&other, ranges, min_max, &r)).find("another model") != std::string::npos);
  CHECK(msg(CalibrateFromStats(&target, ranges, Options{}, &r)).find("histogram bins") != std::string::npos);
  CHECK(Graph::Diff(other, Mlp(0.25f)).empty());  // untouched by the failed call
  CHECK(msg(CollectStats(g, src, o, 2, 2, nullptr, &r2)).find("shard 2/2") != std::string::npos);
}
