// Reading encodings files: every fixture with spot-checked values, every
// example of the spec's Appendix C, hostile inputs rejected with located
// messages, the C API.
#include <regex>

#include "encodings/enc_test_util.h"
#include "qairt/qairt_encodings.h"

namespace qairt::encodings {
namespace {

using namespace testing;  // NOLINT

TEST_CASE("AIMET 0.6.1 export (fashionmnist)", "[encodings][read]") {
  File f = ReadFileOk(DataFile("aimet_0.6.1__xLPMG_fashionmnist-quantized.encodings"));
  CHECK(f.version == Version::kV0_6_1);
  CHECK(f.version_string == "0.6.1");
  CHECK(f.entries.size() == 7);
  const Entry& a = Get(f, "24");
  CHECK(a.section == Section::kActivation);
  CHECK(a.encoding.kind == EncodingKind::kPerTensor);
  CHECK(a.encoding.dtype == DType::kUFixed8);
  CHECK(a.encoding.symmetry == Symmetry::kAsymmetric);
  CHECK(a.encoding.scales[0] == static_cast<float>(0.19305303984997318));
  CHECK(a.encoding.offsets[0] == -82);
  const Entry& w = Get(f, "linear1.weight");
  CHECK(w.section == Section::kParam);
  CHECK(w.encoding.dtype == DType::kSFixed8);  // symmetric: signed grid, offset -128 + 128 = 0
  CHECK(w.encoding.symmetry == Symmetry::kSymmetric);
  CHECK(w.encoding.offsets[0] == 0);
  CHECK(w.encoding.scales[0] == static_cast<float>(0.002037044585220457));
  CHECK(w.encoding.effective_bitwidth() == 8);
}

TEST_CASE("AIMET 0.6.1 4-bit export", "[encodings][read]") {
  File f = ReadFileOk(DataFile("aimet_0.6.1_w4a4__xLPMG_10_1_4.encodings"));
  const Entry& act = Get(f, "5");
  CHECK(act.encoding.dtype == DType::kUFixed4);
  CHECK(act.encoding.offsets[0] == -8);
  CHECK(act.encoding.scales[0] == static_cast<float>(0.2815200169881185));
  const Entry& w = Get(f, "m_layer.weight");
  CHECK(w.encoding.dtype == DType::kSFixed4);
  CHECK(w.encoding.symmetry == Symmetry::kSymmetric);
  CHECK(w.encoding.offsets[0] == 0);
  CHECK(w.encoding.effective_bitwidth() == 4);
}

TEST_CASE("hand-written legacy overrides without version", "[encodings][read]") {
  File q = ReadFileOk(DataFile("aimet_legacy_override__qidk_mixed_precision_encoding_format.encodings"));
  CHECK(q.version == Version::kV0_6_1);
  CHECK(q.version_string.empty());
  const Entry& s = Get(q, "/model.22/Sigmoid_output_0");
  CHECK(s.encoding.dtype == DType::kUFixed16);
  CHECK(s.encoding.scales[0] == static_cast<float>(0.00001519941634241));
  CHECK(s.encoding.offsets[0] == 0);
  File h = ReadFileOk(DataFile("aimet_0.4-style_override__ai-hub-models_ssd_mobilenet_v2_encoding_format.encodings"));
  CHECK(h.entries.size() == 2);
  const Entry& p = Get(h, "647");
  CHECK(p.section == Section::kParam);
  CHECK(p.encoding.dtype == DType::kUFixed16);
  CHECK(p.encoding.scales[0] == static_cast<float>(0.00002105800130687419));
}

TEST_CASE("AIMET 1.0.0 (fastforward) per-channel and per-block", "[encodings][read]") {
  File f = ReadFileOk(DataFile("aimet_1.0.0__fastforward_test_export_schemas_TRANSCRIBED.json"));
  CHECK(f.version == Version::kV1_0_0);
  const Entry& c = Get(f, "conv1.weight");
  CHECK(c.encoding.kind == EncodingKind::kPerChannel);
  CHECK(c.axis_inferred);
  CHECK(c.encoding.scales.size() == 3);
  CHECK(c.encoding.scales[1] == static_cast<float>(0.014999999664723873));
  CHECK(c.encoding.dtype == DType::kSFixed8);
  CHECK(c.encoding.offsets == std::vector<int32_t>{0, 0, 0});  // offsets written as -128.0 on the unsigned grid
  const Entry& l = Get(f, "linear.weight");
  CHECK(l.encoding.kind == EncodingKind::kPerBlock);
  CHECK(l.block_size == 2);
  CHECK(l.encoding.scales.size() == 8);
  CHECK(Get(f, "input").encoding.dtype == DType::kUFixed8);
  CHECK(Get(f, "layer1_output").encoding.symmetry == Symmetry::kSymmetric);
}

TEST_CASE("AIMET 1.0.0 LPBQ and float entries", "[encodings][read]") {
  File f = ReadFileOk(DataFile("aimet_1.0.0_lpbq_float16__aimet_onnx_encoding_py_SHAPE_SYNTHETIC.json"));
  const Entry& x = Get(f, "x");
  CHECK(x.encoding.kind == EncodingKind::kFloat);
  CHECK(x.encoding.dtype == DType::kFloat16);
  const Entry& g = Get(f, "/fc1/Gemm_output_0");
  CHECK(g.encoding.dtype == DType::kUFixed16);
  CHECK(g.encoding.offsets[0] == -35799);
  const Entry& w = Get(f, "fc1.weight");
  CHECK(w.encoding.kind == EncodingKind::kLpbq);
  CHECK(w.encoding.dtype == DType::kSFixed4);
  CHECK(w.encoding.decompressed_bitwidth == 8);
  CHECK(w.encoding.scales == std::vector<float>{0.01f, 0.02f});
  CHECK(w.encoding.block_int_scales == std::vector<int32_t>{1, 16, 3, 7, 16, 2, 9, 1});
  CHECK(w.block_size == 32);
}

TEST_CASE("QAIRT 2.0.0 fixtures", "[encodings][read]") {
  File ff = ReadFileOk(DataFile("qairt_2.0.0__fastforward_test_export_schemas_TRANSCRIBED.json"));
  CHECK(ff.version == Version::kV2_0_0);
  CHECK(Get(ff, "input").encoding.dtype == DType::kUFixed8);
  const Entry& c = Get(ff, "conv1.weight");
  CHECK(c.encoding.kind == EncodingKind::kPerChannel);
  CHECK(c.encoding.axis == 0);
  CHECK(c.encoding.scales.size() == 3);
  const Entry& l = Get(ff, "linear.weight");
  CHECK(l.encoding.kind == EncodingKind::kPerBlock);
  CHECK(l.grid_shape == std::vector<int64_t>{4, 2});
  CHECK(l.block_size == 2);

  File d = ReadFileOk(DataFile("qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json"));
  CHECK(d.entries.size() == 7);
  const Entry& a = Get(d, "activation");
  CHECK(a.encoding.dtype == DType::kUFixed8);
  CHECK(a.encoding.offsets[0] == -128);  // offset = -y_zero_point
  CHECK(a.encoding.scales[0] == 1.0f);
  const Entry& bq = Get(d, "conv22.weight");
  CHECK(bq.encoding.kind == EncodingKind::kPerBlock);
  CHECK(bq.encoding.dtype == DType::kSFixed4);
  CHECK(bq.encoding.axis == 1);
  CHECK(bq.block_size == 32);
  CHECK(bq.grid_shape == std::vector<int64_t>{3, 2});
  const Entry& fo = Get(d, "conv22_floatoffset.weight");
  REQUIRE(fo.encoding.float_offsets.size() == 6);
  CHECK(fo.encoding.float_offsets[0] == 0.16f);
  CHECK(fo.encoding.offsets.empty());
  const Entry& lp = Get(d, "conv2.weight");
  CHECK(lp.encoding.kind == EncodingKind::kLpbq);
  CHECK(lp.encoding.block_sizes == std::vector<int64_t>{1, 3});
  CHECK(lp.encoding.axis == 1);
  CHECK(lp.encoding.block_int_scales.size() == 9);
  CHECK(lp.encoding.decompressed_bitwidth == 8);
  const Entry& mux = Get(d, "mux_output");
  CHECK(mux.encoding.kind == EncodingKind::kArrayOf);
  CHECK(mux.encoding.index_tensor == "condition_tensor");
  REQUIRE(mux.encoding.sub_encodings.size() == 2);
  CHECK(mux.encoding.sub_encodings[1].kind == EncodingKind::kPerTensor);
  CHECK(mux.encoding.sub_encodings[1].offsets[0] == -64);
  const Entry& pc = Get(d, "mux_output_pc");
  REQUIRE(pc.encoding.sub_encodings.size() == 2);
  CHECK(pc.encoding.sub_encodings[0].kind == EncodingKind::kPerChannel);
  CHECK(pc.encoding.sub_encodings[0].axis == 0);
  CHECK(pc.encoding.sub_encodings[1].scales[2] == 0.006f);
}

// The spec's examples as printed: curly quotes, missing and trailing commas.
std::vector<std::string> AppendixCExamples() {
  const std::string text = Slurp(DataFile("qairt_2.0.0__seed000_applyencodings_appendixC_VERBATIM.txt"));
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = text.find("{ ", pos)) != std::string::npos) {
    const size_t end = text.find(" } Copy to clipboard", pos);
    if (end == std::string::npos) break;
    std::string ex = text.substr(pos, end + 2 - pos);
    // Typography: curly quotes -> ", missing commas between members, trailing commas.
    for (const char* curly : {"\xE2\x80\x9C", "\xE2\x80\x9D"})
      for (size_t q; (q = ex.find(curly)) != std::string::npos;) ex.replace(q, 3, "\"");
    ex = std::regex_replace(ex, std::regex(R"(("|\]|[0-9])\s+("))"), "$1, $2");
    ex = std::regex_replace(ex, std::regex(R"(,\s*([\]}]))"), " $1");
    out.push_back(ex);
    pos = end;
  }
  return out;
}

TEST_CASE("every example of the spec's Appendix C parses", "[encodings][read][spec]") {
  const auto examples = AppendixCExamples();
  REQUIRE(examples.size() == 7);
  const char* kinds[] = {"per_tensor", "per_channel", "per_block", "per_block", "lpbq", "array_of", "array_of"};
  for (size_t i = 0; i < examples.size(); ++i) {
    INFO(examples[i]);
    File f = ReadOk("[" + examples[i] + "]", "appendix_c_" + std::to_string(i) + ".json");
    CHECK(f.bare_list);
    REQUIRE(f.entries.size() == 1);
    CHECK(EncodingKindName(f.entries[0].encoding.kind) == kinds[i]);
  }
  File per_channel = ReadOk("[" + examples[1] + "]");
  CHECK(per_channel.entries[0].encoding.scales[0] == static_cast<float>(0.0050100767984986305));
  File float_offsets = ReadOk("[" + examples[3] + "]");
  CHECK(float_offsets.entries[0].encoding.float_offsets[2] == 0.35f);
}

// ---------------------------------------------------------------------------
// Hostile inputs (../shared/research/reliability.md, catalogue B3)
// ---------------------------------------------------------------------------

struct Hostile {
  const char* what;
  std::string text;
  const char* code;        // expected diagnostic code
  uint32_t line;           // expected line (0 = any located line; UINT32_MAX = no location)
  const char* in_message;  // substring of the message
};

std::string V2(const std::string& entry) { return "{\"version\": \"2.0.0\", \"encodings\": [\n" + entry + "\n]}"; }

TEST_CASE("hostile encodings files are rejected precisely", "[encodings][read][hostile]") {
  const std::string deep = std::string(70, '[') + std::string(70, ']');
  const std::vector<Hostile> cases = {
      {"empty file", "", "json-syntax", UINT32_MAX, "empty file"},
      {"UTF-8 BOM", "\xEF\xBB\xBF{\"version\": \"2.0.0\", \"encodings\": []}", "file-encoding", 1, "byte order mark"},
      {"UTF-16", std::string("\xFF\xFE{\0\"\0", 6), "file-encoding", 1, "UTF-16"},
      {"invalid UTF-8 in a name", V2("{\"name\": \"a\xC3\x28\", \"output_dtype\": \"uint8\", \"y_scale\": 1}"),
       "file-encoding", 2, "invalid UTF-8"},
      {"trailing garbage", V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 1}") + "\n}}", "json-syntax",
       0, ""},
      {"deep nesting", V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 1, \"x\": " + deep + "}"),
       "json-depth", 0, "deeper than"},
      {"duplicate key", V2("{\"name\": \"a\", \"output_dtype\": \"uint8\",\n \"y_scale\": 1, \"y_scale\": 2}"),
       "json-duplicate-key", 3, "duplicate key 'y_scale'"},
      {"duplicate tensor",
       V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 1},\n{\"name\": \"a\", \"output_dtype\": "
          "\"uint8\", \"y_scale\": 2}"),
       "duplicate-entry", 3, "second entry"},
      {"NaN literal", V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": NaN}"), "json-non-finite", 2,
       "allow_nan=False"},
      {"Infinity literal", V2("{\"name\": \"a\", \"output_dtype\": \"int8\", \"y_scale\": [1, -Infinity], \"axis\": 0}"),
       "json-non-finite", 2, "-Infinity"},
      {"number overflow", V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 1e999}"), "value-range", 2,
       "out of range"},
      {"64-bit overflow", V2("{\"name\": \"a\", \"output_dtype\": \"int8\", \"y_scale\": [1], \"axis\": 18446744073709551616}"),
       "value-range", 2, ""},
      {"bitwidth as string",
       "{\"activation_encodings\": {\"a\": [{\"bitwidth\": \"8\", \"dtype\": \"int\", \"is_symmetric\": \"False\", "
       "\"offset\": 0, \"scale\": 0.1}]}, \"param_encodings\": {}}",
       "wrong-type", 1, "expected an integer"},
      {"bitwidth 8.0",
       "{\"activation_encodings\": {\"a\": [{\"bitwidth\": 8.0, \"dtype\": \"int\", \"is_symmetric\": \"False\", "
       "\"offset\": 0, \"scale\": 0.1}]}}",
       "wrong-type", 1, "no decimal point"},
      {"bitwidth 3",
       "{\"activation_encodings\": {\"a\": [{\"bitwidth\": 3, \"dtype\": \"int\", \"is_symmetric\": \"False\", "
       "\"offset\": 0, \"scale\": 0.1}]}}",
       "value-range", 1, "bitwidth 3"},
      {"is_symmetric neither bool nor True/False",
       "{\"activation_encodings\": {\"a\": [{\"bitwidth\": 8, \"dtype\": \"int\", \"is_symmetric\": \"yes\", "
       "\"offset\": 0, \"scale\": 0.1}]}}",
       "wrong-type", 1, "not a boolean"},
      {"scale 0", V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 0}"), "value-range", 2, "> 0"},
      {"negative per-channel scale",
       V2("{\"name\": \"a\", \"output_dtype\": \"int8\",\n \"y_scale\": [0.5, 0.25, -1], \"axis\": 0}"),
       "value-range", 3, "must be > 0"},
      {"subnormal scale", V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 1e-45}"), "value-range", 2,
       "smallest normal"},
      {"zero point outside uint8",
       V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 0.1, \"y_zero_point\": 300}"), "value-range", 2,
       "[0, 255]"},
      {"0.6.1 offset outside the unsigned grid",
       "{\"activation_encodings\": {\"a\": [{\"bitwidth\": 8, \"dtype\": \"int\", \"is_symmetric\": \"False\", "
       "\"offset\": 12, \"scale\": 0.1}]}}",
       "value-range", 1, "unsigned 8-bit grid"},
      {"LPBQ int scale above 2^(bw-cbw)",
       V2("{\"name\": \"w\", \"output_dtype\": \"int4\", \"per_channel_float_scale\": [[0.1]], "
          "\"per_block_int_scale\": [[3, 17]], \"axis\": 1, \"block_size\": 32}"),
       "invalid-encoding", 2, "outside [1, 16]"},
      {"ragged y_scale", V2("{\"name\": \"w\", \"output_dtype\": \"int8\", \"y_scale\": [[1, 2], [3]], \"axis\": 1, "
                            "\"block_size\": 4}"),
       "shape-mismatch", 2, "ragged"},
      {"unknown version", "{\"version\": \"3.0.0\", \"encodings\": []}", "version", 1, "unsupported version"},
      {"not an encodings file", "{\"layers\": [1, 2, 3]}", "version", 1, "not an encodings file"},
      {"0.6.1 section given as a list",
       "{\"version\": \"0.6.1\", \"activation_encodings\": [{\"name\": \"a\"}], \"param_encodings\": {}}",
       "wrong-type", 1, "1.0.0 format"},
      {"unknown output_dtype", V2("{\"name\": \"a\", \"output_dtype\": \"int7\", \"y_scale\": 1}"), "value-range", 2,
       "int7"},
      {"missing y_scale", V2("{\"name\": \"a\", \"output_dtype\": \"uint8\"}"), "missing-field", 2, "y_scale"},
      {"float zero point on a per-tensor encoding",
       V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 1, \"y_zero_point\": 1.5}"), "value-range", 2,
       "integer"},
      {"min greater than max",
       "{\"activation_encodings\": {\"a\": [{\"bitwidth\": 8, \"dtype\": \"int\", \"is_symmetric\": \"False\", "
       "\"min\": 2, \"max\": 1, \"offset\": 0, \"scale\": 0.1}]}}",
       "value-range", 1, "greater than max"},
      {"1.0.0 VECTOR", "{\"version\": \"1.0.0\", \"param_encodings\": [{\"name\": \"w\", \"dtype\": \"INT\", "
                       "\"enc_type\": \"VECTOR\", \"bw\": 8, \"is_sym\": true, \"scale\": [1], \"offset\": [-128]}]}",
       "unsupported", 1, "VECTOR"},
  };
  REQUIRE(cases.size() >= 15);
  for (const Hostile& h : cases) {
    INFO(h.what);
    Diags d;
    auto r = ReadEncodingsBytes(h.text.data(), h.text.size(), "hostile.json", {}, &d);
    INFO(RenderDiagnostics(d, ReportFormat::kText));
    REQUIRE(CountErrors(d) >= 1);
    if (r.ok()) CHECK(r.value().entries.size() <= 1);  // bad entries are dropped
    const Diag* hit = nullptr;
    for (const Diag& x : d)
      if (x.severity == Severity::kError && x.code == h.code) {
        hit = &x;
        break;
      }
    REQUIRE(hit != nullptr);
    CHECK(hit->file == "hostile.json");
    CHECK(hit->message.find(h.in_message) != std::string::npos);
    if (h.line == UINT32_MAX) {
      CHECK(hit->line == 0);
    } else {
      CHECK(hit->line >= 1);
      CHECK(hit->column >= 1);
      if (h.line) CHECK(hit->line == h.line);
    }
    CHECK(hit->Format().rfind("hostile.json", 0) == 0);
    // Strict loading fails the whole file.
    ReadOptions strict;
    strict.keep_going = false;
    Diags d2;
    CHECK_FALSE(ReadEncodingsBytes(h.text.data(), h.text.size(), "hostile.json", strict, &d2).ok());
  }
}

TEST_CASE("size limit and unreadable files", "[encodings][read][hostile]") {
  ReadOptions small;
  small.max_bytes = 10;
  Diags d;
  const std::string text = V2("");
  auto r = ReadEncodingsBytes(text.data(), text.size(), "big.json", small, &d);
  CHECK_FALSE(r.ok());
  CHECK(d.at(0).code == "file-size");
  Diags d2;
  auto missing = ReadEncodingsFile("/nonexistent/x.json", {}, &d2);
  CHECK_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kIoError);
  CHECK(d2.at(0).code == "io");
}

TEST_CASE("string and bool spellings of is_symmetric, unknown keys warn", "[encodings][read]") {
  File f = ReadOk(
      "{\"version\": \"0.6.1\", \"activation_encodings\": {}, \"param_encodings\": {\"w\": [{\"bitwidth\": 8, "
      "\"dtype\": \"int\", \"is_symmetric\": true, \"offset\": -127, \"scale\": 0.5, \"comment\": [1, 2]}]}}");
  const Entry& w = Get(f, "w");
  CHECK(w.encoding.symmetry == Symmetry::kStrictSymmetric);
  CHECK(w.encoding.dtype == DType::kSFixed8);
  Diags d;
  const std::string t = V2("{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 1, \"note\": \"x\"}");
  auto r = ReadEncodingsBytes(t.data(), t.size(), "w.json", {}, &d);
  REQUIRE(r.ok());
  REQUIRE(d.size() == 1);
  CHECK(d[0].severity == Severity::kWarning);
  CHECK(d[0].code == "unknown-key");
  CHECK(r.value().entries.size() == 1);
}

TEST_CASE("version is detected and can be forced", "[encodings][read]") {
  File bare = ReadOk("[{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 0.5}]");
  CHECK(bare.version == Version::kV2_0_0);
  CHECK(bare.bare_list);
  File v1 = ReadOk(
      "{\"activation_encodings\": [{\"name\": \"a\", \"dtype\": \"INT\", \"enc_type\": \"PER_TENSOR\", \"bw\": 8, "
      "\"is_sym\": false, \"scale\": [0.5], \"offset\": [-3]}]}");
  CHECK(v1.version == Version::kV1_0_0);
  ReadOptions forced;
  forced.version = Version::kV2_0_0;
  Diags d;
  const std::string t = "{\"version\": \"1.0.0\", \"encodings\": []}";
  auto r = ReadEncodingsBytes(t.data(), t.size(), "f.json", forced, &d);
  REQUIRE(r.ok());
  CHECK(r.value().version == Version::kV2_0_0);
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "version");
}

// ---------------------------------------------------------------------------
// C API
// ---------------------------------------------------------------------------

TEST_CASE("C API: load, inspect, render diagnostics", "[encodings][capi]") {
  qairt_encodings_diagnostics_t* diags = nullptr;
  REQUIRE(qairt_encodings_diagnostics_create(&diags) == nullptr);
  const std::string text = V2(
      "{\"name\": \"a\", \"output_dtype\": \"uint8\", \"y_scale\": 0.5, \"y_zero_point\": 3},\n"
      "{\"name\": \"b\", \"output_dtype\": \"uint8\", \"y_scale\": -1}");
  qairt_encodings_t* enc = nullptr;
  qairt_encodings_load_options lo;
  qairt_encodings_load_options_init(&lo);
  REQUIRE(qairt_encodings_load_bytes(text.data(), text.size(), "c.json", &lo, diags, &enc) == nullptr);
  CHECK(qairt_encodings_version(enc) == QAIRT_ENCODINGS_VERSION_2_0_0);
  REQUIRE(qairt_encodings_entry_count(enc) == 1);
  CHECK(std::string(qairt_encodings_entry_name(enc, 0)) == "a");
  CHECK(qairt_encodings_entry_name(enc, 1) == nullptr);
  qairt_encoding_t* e = nullptr;
  REQUIRE(qairt_encodings_entry_encoding(enc, 0, &e) == nullptr);
  const int32_t* offsets = nullptr;
  size_t n = 0;
  qairt_encoding_offsets(e, &offsets, &n);
  REQUIRE(n == 1);
  CHECK(offsets[0] == -3);
  qairt_encoding_destroy(e);
  CHECK(qairt_encodings_diagnostics_count_severity(diags, QAIRT_SEVERITY_ERROR) == 1);
  qairt_encodings_diagnostic d;
  d.struct_size = sizeof d;
  REQUIRE(qairt_encodings_diagnostics_get(diags, 0, &d) == nullptr);
  CHECK(std::string(d.code) == "value-range");
  CHECK(std::string(d.tensor) == "b");
  CHECK(d.line == 3);
  size_t len = 0;
  REQUIRE(qairt_encodings_diagnostics_render(diags, QAIRT_REPORT_SARIF, nullptr, 0, &len) == nullptr);
  std::string sarif(len + 1, '\0');
  REQUIRE(qairt_encodings_diagnostics_render(diags, QAIRT_REPORT_SARIF, sarif.data(), sarif.size(), &len) == nullptr);
  sarif.resize(len);
  CHECK(sarif.find("\"version\":\"2.1.0\"") != std::string::npos);
  CHECK(sarif.find("\"startLine\":3") != std::string::npos);
  // Strict loading fails and leaves the output untouched.
  lo.flags = QAIRT_ENCODINGS_LOAD_STRICT;
  qairt_encodings_t* untouched = nullptr;
  qairt_status_t* s = qairt_encodings_load_bytes(text.data(), text.size(), "c.json", &lo, nullptr, &untouched);
  CHECK(qairt_status_code(s) == QAIRT_PARSE_ERROR);
  CHECK(std::string(qairt_status_message(s)).find("c.json:3:") != std::string::npos);
  CHECK(untouched == nullptr);
  qairt_status_free(s);
  // Bad arguments.
  s = qairt_encodings_load_file(nullptr, nullptr, nullptr, &untouched);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);
  qairt_encodings_destroy(enc);
  qairt_encodings_diagnostics_destroy(diags);
}

}  // namespace
}  // namespace qairt::encodings

namespace qairt::encodings {
namespace {

TEST_CASE("field offsets keep the known keys inline", "[encodings][read]") {
  FieldOffsets f;
  f.Add("y_scale", 120);
  f.Add("not_a_key", 7);  // unknown keys are not kept
  f.Add("", 5);           // an AIMET 0.6.1 list
  f.Add("axis", Diag::kNoOffset);
  f.Add("block_size", (uint64_t{1} << 32) + 9);  // past 4 GiB: kept as unknown, not wrapped to 9
  f.Add("offset", UINT32_MAX - 1);                // the largest offset kept
  REQUIRE(f.size() == 5);
  CHECK(f[3] == std::pair<std::string_view, uint64_t>{"block_size", Diag::kNoOffset});
  CHECK(f[4] == std::pair<std::string_view, uint64_t>{"offset", UINT32_MAX - 1});
  CHECK(f[0] == std::pair<std::string_view, uint64_t>{"y_scale", 120});
  CHECK(f[1] == std::pair<std::string_view, uint64_t>{"", 5});
  CHECK(f[2].second == Diag::kNoOffset);
  size_t seen = 0;
  for (const auto& [key, off] : f) seen += !key.empty() || off == 5;
  CHECK(seen == 5);
  for (size_t i = 0; i < 2 * FieldOffsets::kCapacity; ++i) f.Add("bw", i);
  CHECK(f.size() == FieldOffsets::kCapacity);
  CHECK(FieldOffsets::KeyIndex("per_block_int_scale") >= 0);
  CHECK(FieldOffsets::KeyName(FieldOffsets::KeyIndex("compressed_bw")) == "compressed_bw");
  CHECK(FieldOffsets::KeyIndex("y_scale ") == -1);
}

TEST_CASE("zero offsets of symmetric blockwise entries are shared by size", "[encodings][read]") {
  // Two sizes alternating, as a model's projections do: each size's table of
  // zeros is made once and shared (copy on write), not one per entry.
  auto entry = [](const std::string& name, int rows) {
    std::string scales;
    for (int r = 0; r < rows; ++r) scales += std::string(r ? "," : "") + "[0.01,0.02]";
    return "{\"name\": \"" + name + "\", \"output_dtype\": \"int4\", \"axis\": 0, \"block_size\": 16, \"y_scale\": [" +
           scales + "]}";
  };
  const std::string text = "{\"version\": \"2.0.0\", \"encodings\": [" + entry("a0", 3) + "," + entry("b0", 5) + "," +
                           entry("a1", 3) + "," + entry("b1", 5) + "]}";
  Diags d;
  auto f = ReadEncodingsBytes(text.data(), text.size(), "zeros.json", {}, &d);
  REQUIRE(f.ok());
  const Encoding &a0 = Get(f.value(), "a0").encoding, &a1 = Get(f.value(), "a1").encoding;
  const Encoding &b0 = Get(f.value(), "b0").encoding, &b1 = Get(f.value(), "b1").encoding;
  CHECK(a0.offsets == std::vector<int32_t>(6, 0));
  CHECK(b0.offsets == std::vector<int32_t>(10, 0));
  CHECK(a0.offsets.data() == a1.offsets.data());
  CHECK(b0.offsets.data() == b1.offsets.data());
  CHECK(a0.symmetry == Symmetry::kSymmetric);
}

}  // namespace
}  // namespace qairt::encodings
