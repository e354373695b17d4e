// ONNX export with external data: initializers at or above the threshold go
// to one file next to the model, at 64-byte aligned offsets; the model and
// its data re-import to the graph the inline export gives; failures leave
// neither file nor temporary.
#include <catch2/catch.hpp>
#include <onnx/onnx_pb.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "common/model_builders.h"
#include "export/export_test_util.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"

namespace qairt {
namespace {

const auto& Slurp = testing::ReadFile;
const auto& Entries = testing::DirEntries;

std::string TempDir() {
  char tmpl[] = "/tmp/qairt_extdata_XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  return tmpl;
}

Graph SmallCnn() {
  Graph g("cnn");
  testing::CppModelBuilder b(&g);
  testing::BuildSmallCnn(b);
  return g;
}

}  // namespace

TEST_CASE("external data: big initializers go to an aligned data file and re-import identically",
          "[export][onnx][external]") {
  const std::string dir = TempDir();
  const Graph g = SmallCnn();
  OnnxExportOptions o;
  o.external_data = true;
  o.external_data_threshold = 64;
  bool wrote = false;
  REQUIRE(ExportOnnxFile(g, o, dir + "/m.onnx", &wrote).ok());
  CHECK(wrote);
  CHECK(Entries(dir) == std::vector<std::string>{"m.onnx", "m.onnx.data"});
  REQUIRE(ExportOnnxFile(g, {}, dir + "/inline.onnx").ok());

  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(Slurp(dir + "/m.onnx")));
  const uint64_t data_size = Slurp(dir + "/m.onnx.data").size();
  size_t external = 0, inline_small = 0;
  for (const auto& t : m.graph().initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) {
      CHECK(t.raw_data().size() < 64);
      ++inline_small;
      continue;
    }
    ++external;
    std::map<std::string, std::string> e;
    for (const auto& kv : t.external_data()) e[kv.key()] = kv.value();
    CHECK(e["location"] == "m.onnx.data");
    const uint64_t offset = std::stoull(e["offset"]), length = std::stoull(e["length"]);
    CHECK(offset % 64 == 0);
    CHECK(offset + length <= data_size);
    CHECK(t.raw_data().empty());
  }
  CHECK(external >= 2);
  CHECK(inline_small >= 1);

  ImportReport r1, r2;
  auto a = ImportOnnxFile(dir + "/m.onnx", {}, &r1);
  auto b = ImportOnnxFile(dir + "/inline.onnx", {}, &r2);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(Graph::Diff(a.value(), b.value()).empty());
}

TEST_CASE("external data: a custom file name, nothing above the threshold, and errors", "[export][onnx][external]") {
  const std::string dir = TempDir();
  const Graph g = SmallCnn();
  OnnxExportOptions o;
  o.external_data = true;
  o.external_data_threshold = 64;
  o.external_data_name = "weights.bin";
  REQUIRE(ExportOnnxFile(g, o, dir + "/m.onnx").ok());
  CHECK(Entries(dir) == std::vector<std::string>{"m.onnx", "weights.bin"});

  // No initializer reaches the threshold: no data file.
  const std::string solo = TempDir();
  o.external_data_name.clear();
  o.external_data_threshold = uint64_t{1} << 40;
  bool wrote = true;
  REQUIRE(ExportOnnxFile(g, o, solo + "/m.onnx", &wrote).ok());
  CHECK_FALSE(wrote);
  CHECK(Entries(solo) == std::vector<std::string>{"m.onnx"});

  // Bytes cannot carry external data; names with a folder or the model's own are refused.
  std::string bytes;
  o.external_data_threshold = 64;
  Status s = ExportOnnx(g, o, &bytes);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("external data") != std::string::npos);
  const std::string empty = TempDir();
  for (const char* name : {"sub/w.bin", "m.onnx", "..", "."}) {
    o.external_data_name = name;
    s = ExportOnnxFile(g, o, empty + "/m.onnx");
    INFO(name);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find(empty + "/m.onnx") != std::string::npos);
  }
  // A graph that fails to export leaves neither file nor temporary.
  o.external_data_name.clear();
  Graph bad("bad");
  auto x = bad.AddInput("x", DType::kFloat32, Shape{1, 4, 2, 2});
  REQUIRE(bad.AddOp("ChannelShuffle", "shuffle", {x.value()}, {"y"}, {{"num_groups", int64_t{2}}}).ok());
  REQUIRE(bad.MarkOutput(*bad.FindTensor("y")).ok());
  CHECK_FALSE(ExportOnnxFile(bad, o, empty + "/m.onnx").ok());
  CHECK(Entries(empty).empty());
}

}  // namespace qairt
