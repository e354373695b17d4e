// The container's data section: static bytes after the FlatBuffer, found
// through the trailer. Its layout, its hostile variants, files of schema 2
// (bytes inside the FlatBuffer), and a container larger than the 2 GiB a
// FlatBuffer can hold.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "container/container.h"
#include "container/container_generated.h"

using namespace qairt;
using namespace qairt::container;
namespace fbc = qairt::container::fb;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<const StaticData> Ramp(size_t n) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
  return StaticData::Adopt(std::move(b));
}

// x[4] + w1[4] -> t; t + w2[4] -> y: two static tensors (16 bytes each).
Graph TwoWeights() {
  Graph g("two");
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{4}).value();
  const TensorId w1 = g.AddConstant("w1", DType::kFloat32, Shape{4}, Ramp(16)).value();
  const TensorId w2 = g.AddConstant("w2", DType::kFloat32, Shape{4}, Ramp(16)).value();
  const OpId a = g.AddOp("ElementWiseAdd", "a", {x, w1}, {"t"}).value();
  const OpId b = g.AddOp("ElementWiseAdd", "b", {g.op(a).outputs[0], w2}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(b).outputs[0]).ok());
  return g;
}

uint64_t TrailerOffset(const std::vector<uint8_t>& f) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{f[f.size() - 8 + static_cast<size_t>(i)]} << (8 * i);
  return v;
}

void ExpectParseError(const std::vector<uint8_t>& bytes, const std::vector<std::string>& needles) {
  auto r = ReadContainer(bytes, "bad.qairt");
  REQUIRE_FALSE(r.ok());
  INFO(r.status().message());
  CHECK(r.status().code() == StatusCode::kParseError);
  for (const std::string& n : needles) CHECK(r.status().message().find(n) != std::string::npos);
}

struct TempFile {
  fs::path path;
  explicit TempFile(const char* name) : path(fs::temp_directory_path() / name) {}
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

}  // namespace

TEST_CASE("container data section: layout after the FlatBuffer", "[container]") {
  const Graph g = TwoWeights();
  const std::vector<uint8_t> f = SerializeContainer(g, {}).value();
  REQUIRE(f.size() > kDataTrailerBytes);
  CHECK(std::memcmp(f.data() + f.size() - kDataTrailerBytes, kDataTrailerMagic, 8) == 0);
  const uint64_t start = TrailerOffset(f);
  CHECK(start % kDataSectionAlignment == 0);
  // w1 at the section's start, w2 at the next multiple of 64.
  const auto* c = fbc::GetContainer(f.data());
  const auto* tensors = c->graph()->tensors();
  const fbc::DataRef* w1 = tensors->Get(1)->section();
  const fbc::DataRef* w2 = tensors->Get(2)->section();
  REQUIRE(w1);
  REQUIRE(w2);
  CHECK(tensors->Get(1)->data() == nullptr);
  CHECK(w1->offset() == 0);
  CHECK(w2->offset() == kSectionEntryAlignment);
  CHECK(std::memcmp(f.data() + start + w2->offset(), g.tensor(2).data->data(), 16) == 0);
  CHECK(f.size() == start + kSectionEntryAlignment + 16 + kDataTrailerBytes);
  CHECK(c->min_reader_version() == kMinReaderVersion);
  auto back = ReadContainer(f, "two.qairt");
  REQUIRE(back.ok());
  CHECK(Graph::Diff(g, back->graph) == "");

  // No static bytes: nothing needs the section, and readers of schema 2 read it.
  Graph plain("plain");
  const TensorId x = plain.AddInput("x", DType::kFloat32, Shape{4}).value();
  REQUIRE(plain.MarkOutput(plain.op(plain.AddOp("Relu", "r", {x}, {"y"}).value()).outputs[0]).ok());
  const auto p = SerializeContainer(plain, {}).value();
  CHECK(fbc::GetContainer(p.data())->min_reader_version() == 1);
  CHECK(ReadContainer(p, "plain.qairt").ok());
}

TEST_CASE("container data section: hostile references and trailers", "[container]") {
  const std::vector<uint8_t> good = SerializeContainer(TwoWeights(), {}).value();
  const uint64_t start = TrailerOffset(good);
  auto mutate_ref = [&](uint64_t offset, uint64_t size) {
    std::vector<uint8_t> bad = good;
    auto* t = fbc::GetMutableContainer(bad.data())->mutable_graph()->mutable_tensors()->GetMutableObject(2);
    t->mutable_section()->mutate_offset(offset);
    t->mutable_section()->mutate_size(size);
    return bad;
  };
  ExpectParseError(mutate_ref(1u << 20, 16), {"'w2'.section [1048576, +16) lies outside the 80-byte data section"});
  ExpectParseError(mutate_ref(64, ~uint64_t{0}), {"'w2'.section", "lies outside"});
  {
    auto r = ReadContainer(mutate_ref(32, 16), "bad.qairt");  // inside, aligned: the bytes are read from there
    REQUIRE(r.ok());
  }
  {
    auto r = ReadContainer(mutate_ref(8, 16), "bad.qairt");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("'w2'.section offset 8 is not a multiple of 32") != std::string::npos);
  }
  {
    auto r = ReadContainer(mutate_ref(64, 12), "bad.qairt");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("'w2'.section has 12 bytes, but dtype float32 and shape [4] need 16") !=
          std::string::npos);
  }
  // The trailer's offset: not on a page, past the end, zero.
  for (uint64_t off : {start + 8, uint64_t{1} << 40, uint64_t{0}}) {
    std::vector<uint8_t> bad = good;
    for (int i = 0; i < 8; ++i) bad[bad.size() - 8 + static_cast<size_t>(i)] = static_cast<uint8_t>(off >> (8 * i));
    ExpectParseError(bad, {"data section trailer gives offset", "corrupt"});
  }
  // Cut anywhere after the FlatBuffer: the trailer is gone.
  for (size_t keep : {static_cast<size_t>(start), good.size() - 1, good.size() - 9}) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(keep));
    ExpectParseError(cut, {"'w1'.section: the file has no data section", "truncated"});
  }
}

TEST_CASE("container data section: schema 2 files (bytes inside the FlatBuffer) are read", "[container]") {
  // What the schema-2 writer produced for x[4] + w[4] -> y.
  flatbuffers::FlatBufferBuilder b;
  b.ForceDefaults(true);
  const std::vector<int64_t> dims = {4};
  const auto w = Ramp(16);
  b.ForceVectorAlignment(16, 1, kStaticDataAlignment);
  const auto data = b.CreateVector(w->data(), w->size());
  const std::vector<fbc::Use> x_use = {fbc::Use(0, 0)}, w_use = {fbc::Use(0, 1)};
  auto tensor = [&](const char* name, fbc::TensorKind kind, bool out, const std::vector<fbc::Use>* uses,
                    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> bytes) {
    flatbuffers::Offset<flatbuffers::Vector<const fbc::Use*>> consumers = 0;
    if (uses) consumers = b.CreateVectorOfStructs(*uses);
    const auto tname = b.CreateString(name);
    const auto tdims = b.CreateVector(dims);
    return fbc::CreateTensor(b, tname, fbc::DType::f32, kind, out, true, tdims, 0, bytes, 0, consumers);
  };
  std::vector<flatbuffers::Offset<fbc::Tensor>> tensors = {
      tensor("x", fbc::TensorKind::Input, false, &x_use, 0),
      tensor("w", fbc::TensorKind::Static, false, &w_use, data),
      tensor("y", fbc::TensorKind::Activation, true, nullptr, 0)};
  const std::vector<uint32_t> ins = {0, 1}, outs = {2}, gin = {0}, gout = {2};
  auto op = fbc::CreateOp(b, b.CreateString("ElementWiseAdd"), b.CreateString("add"), b.CreateVector(ins),
                          b.CreateVector(outs));
  std::vector<flatbuffers::Offset<fbc::Op>> ops = {op};
  auto graph = fbc::CreateGraph(b, b.CreateString("v2"), b.CreateVector(tensors), b.CreateVector(ops),
                                b.CreateVector(gin), b.CreateVector(gout));
  fbc::FinishContainerBuffer(b, fbc::CreateContainer(b, 2, 1, b.CreateString("qairt 0.1.0"), b.CreateString(""), graph));
  const std::vector<uint8_t> v2(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  auto r = ReadContainer(v2, "v2.qairt");
  REQUIRE(r.ok());
  CHECK(r->schema_version == 2);
  const Tensor& wt = r->graph.tensor(*r->graph.FindTensor("w"));
  REQUIRE(wt.data->size() == 16);
  CHECK(std::memcmp(wt.data->data(), w->data(), 16) == 0);
}

TEST_CASE("container data section: a container larger than 2 GiB is written and mapped back", "[container][large]") {
  // A 2.2 GB static tensor mapped from a sparse file: the FlatBuffer alone
  // could not hold it. The written container is read back by mapping; its
  // last weight bytes are the source's.
  TempFile src("qairt_big_weight.bin"), out("qairt_big.qairt");
  const uint64_t n = (uint64_t{1} << 31) + (uint64_t{200} << 20);
  {
    const int fd = ::open(src.path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(n)) == 0);
    const uint8_t tail[4] = {1, 2, 3, 4};
    REQUIRE(::pwrite(fd, tail, 4, static_cast<off_t>(n - 4)) == 4);
    ::close(fd);
  }
  Graph g("big");
  const TensorId idx = g.AddInput("i", DType::kInt32, Shape{1}).value();
  const TensorId w =
      g.AddConstant("w", DType::kUInt8, Shape{static_cast<int64_t>(n)}, StaticData::MapFile(src.path, 0, n).value())
          .value();
  const OpId op = g.AddOp("Gather", "g", {w, idx}, {"y"}, {{"axis", int64_t{0}}}).value();
  REQUIRE(g.MarkOutput(g.op(op).outputs[0]).ok());
  const Status written = WriteContainer(g, {}, out.path);
  INFO(written.message());
  REQUIRE(written.ok());
  CHECK(fs::file_size(out.path) > n);
  // The source's hole stays a hole: the container takes megabytes of disk,
  // not the 2.2 GB of zeros (so this test also runs where disk is short).
  struct stat st {};
  REQUIRE(::stat(out.path.c_str(), &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_blocks) * 512 < (uint64_t{64} << 20));
  auto back = ReadContainerFile(out.path);
  REQUIRE(back.ok());
  const Tensor& wt = back->graph.tensor(*back->graph.FindTensor("w"));
  REQUIRE(wt.data->size() == n);
  CHECK(wt.data->origin() == StaticDataOrigin::kMapped);
  const uint8_t* end = wt.data->data() + n - 4;
  CHECK((end[0] == 1 && end[1] == 2 && end[2] == 3 && end[3] == 4));
}
