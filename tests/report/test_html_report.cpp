// The HTML report renderer (lib/report): one data-op element per op, names
// escaped everywhere (a name cannot end the data <script>), precision classes
// from encodings and dtypes, converts and fallbacks marked, accuracy badges,
// collapsed sections for large graphs, deterministic output. The page itself
// is rendered in headless Chromium by tests/cli/test_report.sh.
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "passes/pass_test_util.h"
#include "report/html_report.h"

using namespace qairt;
using namespace qairt::testing;

namespace {

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

// The element of op `name` (its opening tag up to the first '>').
std::string OpTag(const std::string& html, const std::string& escaped_name) {
  const size_t at = html.find("data-op=\"" + escaped_name + "\"");
  if (at == std::string::npos) return {};
  const size_t start = html.rfind("<div", at);
  return html.substr(start, html.find('>', at) - start);
}

constexpr const char* kHostile = "a<b>\"&'</script><script>x=1</script>";

// x(f32) -> Quantize -> Conv2d(int8 weights) -> y16 (int16) -> Relu (fp16 output, float fallback)
//                                             -> Convert -> out
struct SmallGraph {
  Graph g{"small"};
  report::ReportData data;
  SmallGraph() {
    TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 2, 2, 2}).value();
    OpId q = g.AddOp("Quantize", "quantize_x", {x}, {"xq"}).value();
    TensorId xq = g.op(q).outputs[0];
    REQUIRE(g.SetEncoding(xq, PerTensor(DType::kUFixed16, 1e-3f, 0, false)).ok());
    TensorId w = g.AddConstant("w", DType::kFloat32, Shape{2, 2, 1, 1}, FloatData({1, 2, 3, 4})).value();
    REQUIRE(g.SetEncoding(w, PerChannel(DType::kSFixed8, {0.1f, 0.2f})).ok());
    OpId conv = g.AddOp("Conv2d", kHostile, {xq, w}, {"y16"}).value();
    TensorId y16 = g.op(conv).outputs[0];
    REQUIRE(g.SetEncoding(y16, PerTensor(DType::kUFixed16, 2e-3f, -100, false)).ok());
    OpId relu = g.AddOp("Relu", "relu", {y16}, {"r"}).value();
    TensorId r = g.op(relu).outputs[0];
    Encoding fp16;
    fp16.kind = EncodingKind::kFloat;
    fp16.dtype = DType::kFloat16;
    REQUIRE(g.SetEncoding(r, fp16).ok());
    OpId cvt = g.AddOp("Convert", "convert_out", {r}, {"out"}).value();
    Encoding fp32 = fp16;
    fp32.dtype = DType::kFloat32;
    REQUIRE(g.SetEncoding(g.op(cvt).outputs[0], fp32).ok());
    REQUIRE(g.MarkOutput(g.op(cvt).outputs[0]).ok());

    data.target = "htp_v73";
    data.ops[kHostile] = {"int8_conv <fast>", 3, false};
    data.ops["relu"] = {"fp16", -1, true};
    data.reasons["r"] = "OP_ADAPTATION^FLOAT_FALLBACK";
    data.layers["y16"] = {12.25, 0.97, 0.5};
    data.layers["xq"] = {std::numeric_limits<double>::infinity(), 1.0, 0.0};
    data.outputs.push_back({"out", {41.0, 0.999, 0.01}, 4});
    data.samples = 4;
    data.stats = "[MISSING ENC.] 0 <none>";
    data.options.push_back({"act_bitwidth", "16 & more", "user"});
    Diag d;
    d.severity = Severity::kWarning;
    d.code = "bias-saturates";
    d.op = kHostile;
    d.message = "bias <saturates>";
    data.diagnostics.push_back(d);
  }
};

}  // namespace

TEST_CASE("report: one data-op element per op, every name escaped", "[report]") {
  SmallGraph s;
  Result<std::string> html = report::RenderHtml(s.g, s.data);
  REQUIRE(html.ok());
  const std::string& h = html.value();
  CHECK(Count(h, "data-op=\"") == s.g.op_count());
  for (const char* name : {"quantize_x", "relu", "convert_out"}) CHECK_FALSE(OpTag(h, name).empty());
  const std::string escaped = "a&lt;b&gt;&quot;&amp;&#39;&lt;/script&gt;&lt;script&gt;x=1&lt;/script&gt;";
  CHECK_FALSE(OpTag(h, escaped).empty());
  // Only the page's own two scripts open and close: no name ends a <script>.
  CHECK(Count(h, "<script") == 2);
  CHECK(Count(h, "</script>") == 2);
  CHECK(h.find("x=1</script><script>") == std::string::npos);
  CHECK(Contains(h, "bias &lt;saturates&gt;"));
  CHECK(Contains(h, "[MISSING ENC.] 0 &lt;none&gt;"));
  CHECK(Contains(h, "16 &amp; more"));
  // Self-contained: nothing is fetched.
  CHECK(h.find(" src=") == std::string::npos);
  CHECK(h.find("<link") == std::string::npos);
  CHECK(Contains(h, "default-src 'none'"));
}

TEST_CASE("report: ops are classed by precision, converts and fallbacks marked", "[report]") {
  SmallGraph s;
  const std::string h = report::RenderHtml(s.g, s.data).value();
  CHECK(report::OpPrecision(s.g, s.g.FindOp("quantize_x").value()) == "int16");
  CHECK(report::OpPrecision(s.g, s.g.FindOp("relu").value()) == "fp16");
  CHECK(report::OpPrecision(s.g, s.g.FindOp("convert_out").value()) == "fp32");
  const std::string conv = OpTag(h, "a&lt;b&gt;&quot;&amp;&#39;&lt;/script&gt;&lt;script&gt;x=1&lt;/script&gt;");
  CHECK(Contains(conv, "class=\"op p-int16\""));
  CHECK(Contains(conv, "data-sg=\"3\""));
  CHECK(Contains(OpTag(h, "relu"), "class=\"op p-fp16 fallback\""));
  CHECK(Contains(OpTag(h, "convert_out"), "class=\"op p-fp32 convert\""));
  CHECK(Contains(OpTag(h, "quantize_x"), "class=\"op p-int16 convert\""));
  CHECK(Contains(h, "float fallback × 1"));
  CHECK(Contains(h, "convert × 2"));
  // A per-tensor encoding's real range: (qmin + offset) x scale .. (qmax + offset) x scale,
  // u16 with offset -100 and scale 2e-3: [-0.2, 130.87].
  CHECK(Contains(h, "\"min\":-0.2000000"));
  CHECK(Contains(h, "\"max\":130.87"));
  // Kernel names travel in the JSON data, '<' written as \u003c.
  CHECK(Contains(h, "\"kernel\":\"int8_conv \\u003cfast>\""));
}

TEST_CASE("report: per-op accuracy badges and the accuracy tables", "[report]") {
  SmallGraph s;
  const std::string h = report::RenderHtml(s.g, s.data).value();
  CHECK(Contains(h, "<span class=\"acc poor\">12.2 dB</span>"));  // 12.25 rounds to even
  CHECK(Contains(h, "<span class=\"acc good\">exact</span>"));
  CHECK(Contains(h, "Accuracy against float (4 samples)"));
  CHECK(Contains(h, "<td>out</td><td>41.0 dB</td>"));
  CHECK(Contains(h, "<td>4/4</td>"));  // one position per sample: per sample
  CHECK(Contains(h, "data-tensor=\"y16\""));
  // A sequence output (several positions per sample): per position.
  SmallGraph seq;
  seq.data.outputs[0].argmax_positions = 40;
  seq.data.outputs[0].argmax_positions_agree = 37;
  CHECK(Contains(report::RenderHtml(seq.g, seq.data).value(), "<td>37/40 positions</td>"));

  SmallGraph bare;
  bare.data = {};
  const std::string plain = report::RenderHtml(bare.g, bare.data).value();
  CHECK(Count(plain, "data-op=\"") == bare.g.op_count());
  CHECK(plain.find("class=\"acc") == std::string::npos);
  CHECK(plain.find("id=\"accuracy\"") == std::string::npos);
  CHECK(plain.find("id=\"stats\"") == std::string::npos);
}

TEST_CASE("report: a large graph comes in sections, only the first open; output is deterministic", "[report]") {
  Graph g("chain");
  TensorId t = g.AddInput("x", DType::kFloat32, Shape{1, 8}).value();
  const size_t kOps = 600;
  for (size_t i = 0; i < kOps; ++i) {
    OpId op = g.AddOp(i % 2 ? "Relu" : "Sigmoid", "op_" + std::to_string(i), {t}, {"t_" + std::to_string(i)}).value();
    t = g.op(op).outputs[0];
  }
  REQUIRE(g.MarkOutput(t).ok());
  report::ReportData d;
  const std::string h = report::RenderHtml(g, d).value();
  CHECK(Count(h, "data-op=\"") == kOps);
  const size_t sections = Count(h, "<details class=\"section\"");
  CHECK(sections == (kOps + 23) / 24);  // a chain: one op per row, 24 rows a section
  CHECK(Count(h, "<details class=\"section\" open>") == 1);
  CHECK(report::RenderHtml(g, d).value() == h);
}

TEST_CASE("report: an op feeding only its super group shows 'fused', not a figure", "[report]") {
  // x -> Conv2d "conv" -> Relu "relu" -> y, both in super group 0: the conv's
  // output is never materialized, so its per-layer SQNR is no device figure.
  Graph g("group");
  TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 2, 4, 4}).value();
  TensorId w = g.AddConstant("w", DType::kFloat32, Shape{2, 2, 1, 1}, FloatData({1, 0, 0, 1})).value();
  OpId conv = g.AddOp("Conv2d", "conv", {x, w}, {"c"}).value();
  OpId relu = g.AddOp("Relu", "relu", {g.op(conv).outputs[0]}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(relu).outputs[0]).ok());
  report::ReportData d;
  d.ops["conv"] = {"k", 0, false};
  d.ops["relu"] = {"k", 0, false};
  d.layers["c"] = {7.2, 0.5, 1.0};
  d.layers["y"] = {35.0, 0.999, 0.01};
  const std::string h = report::RenderHtml(g, d).value();
  CHECK(Contains(OpTag(h, "conv").empty() ? std::string() : h.substr(h.find("data-op=\"conv\"")), "fused</span>"));
  CHECK(h.find("7.2 dB") == std::string::npos);  // neither a badge nor a row of the worst tensors
  CHECK(Contains(h, "<span class=\"acc good\">35.0 dB</span>"));
}
