// Applying many entries at once: the encodings go to their tensors in one
// batch (on several threads); a File built by hand that names a tensor twice
// is still applied entry by entry.
#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "enc_test_util.h"

namespace qairt::encodings {
namespace {

using testing::ReadOk;

std::string Entries(int n) {
  std::string s = "{\"version\": \"2.0.0\", \"encodings\": [\n";
  for (int i = 0; i < n; ++i)
    s += std::string(i ? ",\n" : "") + "{\"name\": \"t" + std::to_string(i) +
         "\", \"output_dtype\": \"uint16\", \"y_scale\": 0." + std::to_string(i + 1) + ", \"y_zero_point\": 3}";
  return s + "\n]}";
}

Graph Tensors(int n) {
  Graph g("g");
  for (int i = 0; i < n; ++i) REQUIRE(g.AddInput("t" + std::to_string(i), DType::kFloat32, Shape({1, 4})).ok());
  return g;
}

TEST_CASE("many entries are applied at once on several threads, as one at a time", "[encodings][apply][threads]") {
  constexpr int kEntries = 40000;  // above the batch's threshold for threads
  const File file = ReadOk(Entries(kEntries));
  for (uint32_t threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    Graph g = Tensors(kEntries);
    ApplyOptions o;
    o.threads = threads;
    Diags d;
    File moved = file;
    auto r = ApplyEncodings(std::move(moved), &g, o, &d);
    REQUIRE(r.ok());
    CHECK(r.value().applied == kEntries);
    for (int i = 0; i < kEntries; i += 997) {
      const auto id = g.FindTensor("t" + std::to_string(i));
      REQUIRE(id);
      REQUIRE(g.tensor(*id).encoding);
      CHECK(*g.tensor(*id).encoding == [&] {
        Encoding e = file.entries[static_cast<size_t>(i)].encoding;
        e.overridden = true;
        return e;
      }());
    }
  }
}

TEST_CASE("a File built by hand naming a tensor twice applies both, the last winning", "[encodings][apply]") {
  // The reader refuses such files; a caller's own File is applied entry by
  // entry.
  File f = ReadOk(Entries(1));
  REQUIRE(f.entries.size() == 1);
  f.entries.push_back(f.entries[0]);
  f.entries[1].encoding.scales = {0.5f};
  Graph g = Tensors(1);
  Diags d;
  auto r = ApplyEncodings(std::move(f), &g, {}, &d);
  REQUIRE(r.ok());
  CHECK(r.value().applied == 2);
  REQUIRE(g.tensor(0).encoding);
  CHECK(g.tensor(0).encoding->scales[0] == 0.5f);
}

}  // namespace
}  // namespace qairt::encodings
