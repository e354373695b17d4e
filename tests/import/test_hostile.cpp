// Hostile ONNX models: each must be rejected with an error naming the node,
// tensor or field at fault. None may crash (the suite also runs under
// ASan/UBSan).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "onnx/onnx_import.h"
#include "import/onnx_model_builder.h"

namespace qairt {
namespace {

using testing::OnnxModelBuilder;
using P = onnx::TensorProto;
namespace fs = std::filesystem;

// A model reading one float initializer `w` [4] through Add.
OnnxModelBuilder AddModel() {
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {4});
  b.Node("Add", {"x", "w"}, {"y"}, "add");
  b.Output("y", P::FLOAT, {4});
  return b;
}

std::string ImportError(const std::string& bytes) {
  ImportReport report;
  auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", {}, &report);
  REQUIRE(!g.ok());
  return g.status().message();
}

// A scratch folder with the model written as model.onnx.
struct ModelDir {
  fs::path dir;
  ModelDir() {
    char templ[] = "/tmp/qairt_hostile_XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    dir = templ;
  }
  ~ModelDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  }
  std::string ImportError(const OnnxModelBuilder& b) const {
    Write("model.onnx", b.Bytes());
    ImportReport report;
    auto g = ImportOnnxFile((dir / "model.onnx").string(), {}, &report);
    REQUIRE(!g.ok());
    return g.status().message();
  }
};

onnx::TensorProto* ExternalW(OnnxModelBuilder& b, const std::string& location, const std::string& offset = "",
                             const std::string& length = "") {
  auto* t = b.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(P::FLOAT);
  t->add_dims(4);
  t->set_data_location(P::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    if (v.empty()) return;
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", offset);
  kv("length", length);
  return t;
}

TEST_CASE("external data inside the model folder is memory-mapped", "[import][hostile]") {
  ModelDir d;
  std::string data(8, 'h');
  const float w[4] = {1, 2, 3, 4};
  data.append(reinterpret_cast<const char*>(w), sizeof w);
  d.Write("weights.bin", data);
  OnnxModelBuilder b = AddModel();
  ExternalW(b, "weights.bin", "8", "16");
  d.Write("model.onnx", b.Bytes());
  auto g = ImportOnnxFile((d.dir / "model.onnx").string(), {}, nullptr);
  INFO((g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  const Tensor& t = g.value().tensor(*g.value().FindTensor("w"));
  CHECK(t.data->origin() == StaticDataOrigin::kMapped);
  float got[4];
  std::memcpy(got, t.data->data(), sizeof got);
  CHECK(got[3] == 4.0f);
}

TEST_CASE("hostile external data is rejected", "[import][hostile]") {
  ModelDir d;
  d.Write("weights.bin", std::string(16, '\0'));
  SECTION("parent directory") {
    OnnxModelBuilder b = AddModel();
    ExternalW(b, "../weights.bin");
    const std::string e = d.ImportError(b);
    CHECK(e.find("'w'") != std::string::npos);
    CHECK(e.find("..") != std::string::npos);
  }
  SECTION("absolute path") {
    OnnxModelBuilder b = AddModel();
    ExternalW(b, "/etc/passwd");
    const std::string e = d.ImportError(b);
    CHECK(e.find("absolute") != std::string::npos);
  }
  SECTION("symlink leaving the folder") {
    fs::create_symlink("/etc/hostname", d.dir / "escape.bin");
    OnnxModelBuilder b = AddModel();
    ExternalW(b, "escape.bin");
    const std::string e = d.ImportError(b);
    CHECK(e.find("outside the model's folder") != std::string::npos);
  }
  SECTION("ONNX Runtime memory marker") {
    OnnxModelBuilder b = AddModel();
    ExternalW(b, "*/_ORT_MEM_ADDR_/*", "140234", "16");
    const std::string e = d.ImportError(b);
    CHECK(e.find("_ORT_MEM_ADDR_") != std::string::npos);
  }
  SECTION("offset + length past the end of the file") {
    OnnxModelBuilder b = AddModel();
    ExternalW(b, "weights.bin", "8", "16");
    const std::string e = d.ImportError(b);
    CHECK(e.find("'w'") != std::string::npos);
    CHECK(e.find("16 bytes") != std::string::npos);
  }
  SECTION("offset overflowing int64") {
    OnnxModelBuilder b = AddModel();
    ExternalW(b, "weights.bin", "18446744073709551615", "16");
    CHECK(d.ImportError(b).find("overflows int64") != std::string::npos);
    OnnxModelBuilder b2 = AddModel();
    ExternalW(b2, "weights.bin", "99999999999999999999999", "16");
    CHECK(d.ImportError(b2).find("offset") != std::string::npos);
  }
  SECTION("declared length not matching the shape") {
    OnnxModelBuilder b = AddModel();
    ExternalW(b, "weights.bin", "0", "12");
    CHECK(d.ImportError(b).find("length 12") != std::string::npos);
  }
  SECTION("external data in a model given as bytes") {
    OnnxModelBuilder b = AddModel();
    ExternalW(b, "weights.bin");
    CHECK(ImportError(b.Bytes()).find("model folder") != std::string::npos);
  }
}

TEST_CASE("truncated and corrupt protobufs are rejected", "[import][hostile]") {
  OnnxModelBuilder b = AddModel();
  b.Init<float>("w", P::FLOAT, {4}, {1, 2, 3, 4});
  const std::string full = b.Bytes();
  for (size_t cut : {full.size() / 2, full.size() - 1, size_t{3}}) {
    const std::string e = ImportError(full.substr(0, cut));
    CHECK(e.find("not a valid ONNX model") != std::string::npos);
  }
  CHECK(ImportError(std::string(64, '\xff')).find("not a valid ONNX model") != std::string::npos);
  CHECK(ImportError("").find("no graph") != std::string::npos);
}

TEST_CASE("malformed tensors and graphs are rejected naming what is wrong", "[import][hostile]") {
  SECTION("raw_data size not matching the shape") {
    OnnxModelBuilder b = AddModel();
    b.Init<float>("w", P::FLOAT, {4}, {1, 2, 3});
    const std::string e = ImportError(b.Bytes());
    CHECK(e.find("'w'") != std::string::npos);
    CHECK(e.find("raw_data has 12 bytes") != std::string::npos);
  }
  SECTION("shape x dtype overflow") {
    OnnxModelBuilder b = AddModel();
    auto* t = b.Init<float>("w", P::FLOAT, {}, {1});
    t->clear_dims();
    t->add_dims(int64_t{1} << 40);
    t->add_dims(int64_t{1} << 40);
    const std::string e = ImportError(b.Bytes());
    CHECK(e.find("'w'") != std::string::npos);
    CHECK(e.find("overflows") != std::string::npos);
  }
  SECTION("negative dim") {
    OnnxModelBuilder b = AddModel();
    auto* t = b.Init<float>("w", P::FLOAT, {4}, {1, 2, 3, 4});
    t->set_dims(0, -4);
    CHECK(ImportError(b.Bytes()).find("negative") != std::string::npos);
  }
  SECTION("a cycle") {
    OnnxModelBuilder b(13);
    b.Input("x", P::FLOAT, {4});
    b.Node("Add", {"x", "b"}, {"a"}, "node_a");
    b.Node("Relu", {"a"}, {"b"}, "node_b");
    b.Output("b", P::FLOAT, {4});
    const std::string e = ImportError(b.Bytes());
    CHECK(e.find("cycle") != std::string::npos);
    CHECK(e.find("node_a") != std::string::npos);
  }
  SECTION("duplicate tensor names") {
    OnnxModelBuilder b(13);
    b.Input("x", P::FLOAT, {4});
    b.Node("Relu", {"x"}, {"y"}, "first");
    b.Node("Sigmoid", {"x"}, {"y"}, "second");
    b.Output("y", P::FLOAT, {4});
    const std::string e = ImportError(b.Bytes());
    CHECK(e.find("'y' is defined more than once") != std::string::npos);
    CHECK(e.find("second") != std::string::npos);
  }
  SECTION("a node input that nothing produces") {
    OnnxModelBuilder b(13);
    b.Input("x", P::FLOAT, {4});
    b.Node("Add", {"x", "ghost"}, {"y"}, "reads_ghost");
    b.Output("y", P::FLOAT, {4});
    const std::string e = ImportError(b.Bytes());
    CHECK(e.find("reads_ghost") != std::string::npos);
    CHECK(e.find("'ghost'") != std::string::npos);
  }
  SECTION("an unknown domain") {
    OnnxModelBuilder b(13);
    b.AddOpset("com.example", 1);
    b.Input("x", P::FLOAT, {4});
    b.Node("Frobnicate", {"x"}, {"y"}, "frob", "com.example");
    b.Output("y", P::FLOAT, {4});
    ImportReport report;
    const std::string bytes = b.Bytes();
    auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", {}, &report);
    REQUIRE(!g.ok());
    CHECK(g.status().message().find("frob") != std::string::npos);
    CHECK(g.status().message().find("com.example") != std::string::npos);
    REQUIRE(report.unsupported.size() == 1);
    CHECK(report.unsupported[0].find("Frobnicate") != std::string::npos);
  }
  SECTION("every unsupported op is listed, not just the first") {
    OnnxModelBuilder b(13);
    b.Input("x", P::FLOAT, {4});
    b.Node("Det", {"x"}, {"a"}, "det1");
    b.Node("Relu", {"x"}, {"r"}, "relu");
    b.Node("Hardmax", {"r"}, {"y"}, "hardmax1");
    b.Output("a", P::FLOAT, {4});
    b.Output("y", P::FLOAT, {4});
    ImportReport report;
    const std::string bytes = b.Bytes();
    auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", {}, &report);
    REQUIRE(!g.ok());
    CHECK(report.unsupported.size() == 2);
  }
  SECTION("string tensors") {
    OnnxModelBuilder b = AddModel();
    auto* t = b.graph().add_initializer();
    t->set_name("w");
    t->set_data_type(P::STRING);
    t->add_dims(1);
    t->add_string_data("hello");
    CHECK(ImportError(b.Bytes()).find("STRING") != std::string::npos);
  }
  SECTION("opset too old") {
    OnnxModelBuilder b(6);
    b.Input("x", P::FLOAT, {4});
    b.Node("Relu", {"x"}, {"y"});
    b.Output("y", P::FLOAT, {4});
    CHECK(ImportError(b.Bytes()).find("opset 6") != std::string::npos);
  }
}

TEST_CASE("static shapes from define_symbol and input_dim; dynamic dims are listed", "[import]") {
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {-1, 3, -1});  // d0, 3, d2
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", P::FLOAT, {-1, 3, -1});
  const std::string bytes = b.Bytes();
  {
    ImportReport report;
    auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", {}, &report);
    REQUIRE(g.ok());
    REQUIRE(report.dynamic_dims.size() >= 2);
    CHECK(report.dynamic_dims[0].find("'d0'") != std::string::npos);
  }
  {
    ImportOptions o;
    o.define_symbols["d0"] = 2;
    o.define_symbols["d2"] = 5;
    ImportReport report;
    auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", o, &report);
    REQUIRE(g.ok());
    CHECK(report.dynamic_dims.empty());
    CHECK(g.value().tensor(g.value().outputs()[0]).shape == Shape({2, 3, 5}));
  }
  {
    ImportOptions o;
    o.input_dims["x"] = {7, 3, 1};
    auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", o, nullptr);
    REQUIRE(g.ok());
    CHECK(g.value().tensor(g.value().outputs()[0]).shape == Shape({7, 3, 1}));
    o.input_dims["nope"] = {1};
    ImportReport report;
    auto bad = ImportOnnxBytes(bytes.data(), bytes.size(), "", o, &report);
    REQUIRE(!bad.ok());
    CHECK(bad.status().message().find("'nope'") != std::string::npos);
  }
}

TEST_CASE("shape subgraphs fold once shapes are static", "[import]") {
  // x -> Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape(x)
  OnnxModelBuilder b(13);
  b.Input("x", P::FLOAT, {-1, 4, 5});
  b.Init<int64_t>("zero", P::INT64, {}, {0});
  b.Init<int64_t>("axes0", P::INT64, {1}, {0});
  b.Init<int64_t>("minus1", P::INT64, {1}, {-1});
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("Gather", {"shape", "zero"}, {"batch"});
  b.Node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  auto* c = b.Node("Concat", {"batch1", "minus1"}, {"target"});
  OnnxModelBuilder::IntAttr(c, "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.Output("y", P::FLOAT, {-1, 20});
  const std::string bytes = b.Bytes();
  ImportOptions o;
  o.define_symbols["d0"] = 3;
  ImportReport report;
  auto g = ImportOnnxBytes(bytes.data(), bytes.size(), "", o, &report);
  INFO((g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  CHECK(g.value().op_count() == 1);
  CHECK(g.value().op(0).type == "Reshape");
  CHECK(g.value().tensor(g.value().outputs()[0]).shape == Shape({3, 20}));
  CHECK(report.constants_folded == 4);
}

}  // namespace
}  // namespace qairt
