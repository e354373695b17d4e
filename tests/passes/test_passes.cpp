// Target-specific processing on small graphs: each test asserts the graph
// change, the INFO CSV rows, the TRACE tokens and the stats lines.
#include <catch2/catch.hpp>

#include "passes/adapt.h"
#include "passes/pass_test_util.h"

using namespace qairt;
using namespace qairt::testing;

namespace {

// A copy of a built-in target that a test may edit.
std::shared_ptr<target::Target> Editable(const std::string& name) {
  return std::make_shared<target::Target>(*Builtin(name));
}

target::Kernel* FindKernel(target::Target& t, const std::string& op, const std::string& kernel) {
  for (auto& ok : t.ops)
    if (ok.op == op)
      for (auto& k : ok.kernels)
        if (k.name == kernel) return &k;
  return nullptr;
}

void KeepKernels(target::Target& t, const std::string& op, const std::vector<std::string>& names) {
  for (auto& ok : t.ops) {
    if (ok.op != op) continue;
    std::vector<target::Kernel> kept;
    for (auto& k : ok.kernels)
      if (std::find(names.begin(), names.end(), k.name) != names.end()) kept.push_back(k);
    ok.kernels = kept;
  }
}

// x[1,8,4,4] -> Conv2d(w[8,8,1,1], b[8]) -> c -> Relu -> y
struct ConvRelu {
  Graph g;
  TensorId x, w, b, c, y;
  OpId conv, relu;
  explicit ConvRelu(bool encode_all = true) {
    x = g.AddInput("x", DType::kFloat32, Shape{1, 8, 4, 4}).value();
    w = g.AddConstant("w", DType::kFloat32, Shape{8, 8, 1, 1}, FloatData(Ramp(64, -1.f, 1.f))).value();
    b = g.AddConstant("b", DType::kFloat32, Shape{8}, FloatData(Ramp(8, -0.5f, 0.5f))).value();
    conv = g.AddOp("Conv2d", "conv", {x, w, b}, {"c"}).value();
    c = g.op(conv).outputs[0];
    relu = g.AddOp("Relu", "relu", {c}, {"y"}).value();
    y = g.op(relu).outputs[0];
    REQUIRE(g.MarkOutput(y).ok());
    if (encode_all) {
      REQUIRE(g.SetEncoding(x, PerTensor(DType::kUFixed8, 0.02f, -128)).ok());
      REQUIRE(g.SetEncoding(w, PerChannel(DType::kSFixed8, std::vector<float>(8, 1.f / 127))).ok());
      REQUIRE(g.SetEncoding(y, PerTensor(DType::kUFixed8, 0.01f, 0)).ok());
    }
  }
};

}  // namespace

TEST_CASE("pipeline is registered in the spec's order, printable and stoppable", "[passes]") {
  const std::string p = pass::PrintPipeline();
  const std::vector<std::string> order = {"propagate-encodings", "tag-super-groups", "fill-missing-encodings",
                                          "duplicate-shared-biases", "make-requested-kernels", "select-kernels",
                                          "inject-converts", "compute-static-encodings", "quantize-static-tensors"};
  size_t pos = 0;
  for (const auto& name : order) {
    const size_t at = p.find(name, pos);
    INFO(name);
    REQUIRE(at != std::string::npos);
    pos = at;
  }
  ConvRelu m;
  pass::Options o;
  o.target = Builtin("htp_v73");
  o.stop_after = "fill-missing-encodings";
  o.log_level = pass::LogLevel::kTrace;
  pass::ProcessResult r;
  REQUIRE(pass::Process(&m.g, o, &r).ok());
  // The log opens with the resolved options.
  CHECK(r.log.rfind("======== OPTIONS ========\n", 0) == 0);
  CHECK(Contains(r.log, "  target = htp_v73 ("));
  CHECK(r.log.find("OPTIONS") < r.log.find("GRAPH: before"));
  CHECK(Contains(r.log, "BEGIN: Fill Missing Encodings"));
  CHECK_FALSE(Contains(r.log, "BEGIN: Kernel Selection"));
  CHECK(CountOps(m.g, "Quantize") == 0);

  ConvRelu m2;
  o.stop_after = "no-such-pass";
  Status s = pass::Process(&m2.g, o, &r);
  REQUIRE_FALSE(s.ok());
  CHECK(Contains(s.message(), "no-such-pass"));
}

TEST_CASE("data-movement chain takes the minimum bit width with one Convert at its start", "[passes]") {
  // Gather -> Transpose -> Reshape, int16 in, int8 out. Transpose and Reshape
  // are declared data movement in this descriptor (HTP's list has Gather only).
  auto t = Editable("htp_v73");
  t->data_movement_ops.push_back("Transpose");
  t->data_movement_ops.push_back("Reshape");
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 4, 8}).value();
  const TensorId a = g.AddOp("Relu", "relu", {x}, {"a"}).value();
  const TensorId act = g.op(a).outputs[0];
  const TensorId idx = g.AddConstant("idx", DType::kInt32, Shape{2}, IntData({0, 2})).value();
  const OpId gather = g.AddOp("Gather", "gather", {act, idx}, {"g"}, {{"axis", int64_t{2}}}).value();
  const OpId tr = g.AddOp("Transpose", "transpose", {g.op(gather).outputs[0]}, {"t"},
                          {{"perm", std::vector<int64_t>{0, 2, 1}}}).value();
  const TensorId shape = g.AddConstant("shape", DType::kInt32, Shape{2}, IntData({1, 8})).value();
  const OpId rs = g.AddOp("Reshape", "reshape", {g.op(tr).outputs[0], shape}, {"r"}).value();
  const TensorId r_out = g.op(rs).outputs[0];
  REQUIRE(g.MarkOutput(r_out).ok());
  const Encoding in16 = PerTensor(DType::kUFixed16, 1e-4f, -32768);
  const Encoding out8 = PerTensor(DType::kUFixed8, 0.02f, -128);
  REQUIRE(g.SetEncoding(x, in16).ok());
  REQUIRE(g.SetEncoding(act, in16).ok());
  REQUIRE(g.SetEncoding(r_out, out8).ok());

  auto info = RunProcess(&g, t, pass::LogLevel::kInfo);
  for (const auto& e : info.errors) UNSCOPED_INFO(e);
  CHECK(info.errors.empty());
  CHECK(CountOps(g, "Convert") == 1);
  // The Convert sits between relu's output (u16) and the gather.
  OpId conv = kInvalidId;
  for (OpId i = 0; i < g.op_count(); ++i)
    if (g.op(i).type == "Convert") conv = i;
  REQUIRE(conv != kInvalidId);
  CHECK(g.op(conv).inputs[0] == act);
  const TensorId converted = g.op(conv).outputs[0];
  CHECK(g.tensor(converted).encoding->dtype == DType::kUFixed8);
  CHECK(g.op(gather).inputs[0] == converted);
  // The whole chain is int8 with the exit's encoding.
  for (OpId op : {gather, tr}) {
    const Tensor& o = g.tensor(g.op(op).outputs[0]);
    REQUIRE(o.encoding);
    CHECK(o.encoding->dtype == DType::kUFixed8);
    CHECK(o.encoding->scales == out8.scales);
  }
  // CSV rows: propagated tensors and the injected one.
  const auto row_g = Fields(CsvRow(info.log, "g"));
  REQUIRE(row_g.size() == 8);
  CHECK(row_g[3] == "u8");
  CHECK(row_g[5] == "DATA_MOVEMENT_PROPAGATION");
  const auto row_c = Fields(CsvRow(info.log, g.tensor(converted).name));
  REQUIRE(row_c.size() == 8);
  CHECK(row_c[1] == "a");
  CHECK(row_c[5] == "DATA_MOVEMENT_PROPAGATION");
  CHECK(Contains(info.stats, "[PROPAGATED] 2 "));
  CHECK(Contains(info.stats, "[CONVERTS] 3"));  // Quantize at x, the chain's Convert, Dequantize at r

  // TRACE tokens of the phase.
  Graph g2;
  {
    const TensorId x2 = g2.AddInput("x", DType::kFloat32, Shape{1, 4, 8}).value();
    const TensorId idx2 = g2.AddConstant("idx", DType::kInt32, Shape{2}, IntData({0, 2})).value();
    const OpId ga = g2.AddOp("Gather", "gather", {x2, idx2}, {"g"}, {{"axis", int64_t{2}}}).value();
    REQUIRE(g2.MarkOutput(g2.op(ga).outputs[0]).ok());
    REQUIRE(g2.SetEncoding(x2, out8).ok());
  }
  auto trace = RunProcess(&g2, t);
  CHECK(Contains(trace.log, "[INV. OP ] gather (Gather)"));
  CHECK(Contains(trace.log, "[INV. OP GRP.] [ gather ]"));
}

TEST_CASE("super groups: Conv2d+Relu only where the target lists it; escaping intermediates are not grouped",
          "[passes]") {
  ConvRelu m;
  auto r = RunProcess(&m.g, Builtin("htp_v73"));
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  CHECK(r.errors.empty());
  CHECK(Contains(r.log, "[SUPER GROUP] Conv2d + Relu : [ conv, relu ]"));
  CHECK(Contains(r.log, "[SUPER GRP. ENC.] c"));
  // The intermediate takes the group's output encoding: no convert between them.
  REQUIRE(m.g.tensor(m.c).encoding);
  CHECK(m.g.tensor(m.c).encoding->dtype == DType::kUFixed8);
  CHECK(m.g.tensor(m.c).encoding->scales == std::vector<float>{0.01f});
  CHECK(Contains(r.stats, "[SUPERGROUPED] 1 "));
  CHECK(r.annotations[m.conv].super_group == 0);
  CHECK(r.annotations[m.relu].super_group == 0);

  // Without the pattern: no group, the conv output falls back to float.
  auto t = Editable("htp_v73");
  t->super_groups.clear();
  ConvRelu m2;
  auto r2 = RunProcess(&m2.g, t);
  CHECK_FALSE(Contains(r2.log, "[SUPER GROUP] Conv2d + Relu"));
  CHECK(r2.annotations[m2.conv].super_group == -1);
  CHECK(Contains(r2.stats, "[SUPERGROUPED] 0 "));
  CHECK(Contains(r2.stats, "[FP16 FALLBACK] 1 "));

  // ElementWiseAdd -> Relu whose intermediate is also a graph output.
  Graph g;
  const TensorId a = g.AddInput("a", DType::kFloat32, Shape{1, 8}).value();
  const TensorId b = g.AddInput("b", DType::kFloat32, Shape{1, 8}).value();
  const OpId add = g.AddOp("ElementWiseAdd", "add", {a, b}, {"s"}).value();
  const TensorId s = g.op(add).outputs[0];
  const OpId relu = g.AddOp("Relu", "relu", {s}, {"y"}).value();
  const OpId neg = g.AddOp("ElementWiseNeg", "neg", {s}, {"n"}).value();
  REQUIRE(g.MarkOutput(g.op(relu).outputs[0]).ok());
  REQUIRE(g.MarkOutput(g.op(neg).outputs[0]).ok());
  for (TensorId id : {a, b, s, g.op(relu).outputs[0], g.op(neg).outputs[0]})
    REQUIRE(g.SetEncoding(id, PerTensor(DType::kUFixed8, 0.05f, -128)).ok());
  auto r3 = RunProcess(&g, Builtin("htp_v73"));
  CHECK(Contains(r3.log, "[SUPER GROUP] not formed at add (ElementWiseAdd + Relu): intermediate tensor 's' is consumed "
                         "outside the group"));
  CHECK(r3.annotations[add].super_group == -1);
}

TEST_CASE("missing encodings: FP16 fallback on htp_v73, FP16 audit error on htp_v68", "[passes]") {
  ConvRelu m(false);  // no encodings at all
  auto r = RunProcess(&m.g, Builtin("htp_v73"), pass::LogLevel::kInfo);
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  CHECK(r.errors.empty());
  const auto row = Fields(CsvRow(r.log, "c"));
  REQUIRE(row.size() == 8);
  CHECK(row[3] == "f16");
  CHECK(row[5] == "FLOAT_FALLBACK");
  // x, w, b, c, y fall back to fp16: with a float weight the bias is float too.
  CHECK(Contains(r.stats, "[FP16 FALLBACK] 5 "));
  CHECK(Contains(r.stats, "[BIAS FXP] 0"));
  CHECK(Contains(r.stats, "[ADAPTED OPS] 0 / 2 ops"));
  CHECK(m.g.tensor(m.w).dtype == DType::kFloat16);  // static weights stored as fp16

  ConvRelu m68(false);
  auto r68 = RunProcess(&m68.g, Builtin("htp_v68"));
  REQUIRE_FALSE(r68.errors.empty());
  const std::string& last = r68.errors.back();
  CHECK(Contains(last, "FP16 audit: target 'htp_v68' has no float compute"));
  CHECK(Contains(last, "'c'"));
  CHECK(Contains(last, "'w'"));
  CHECK(Contains(r68.log, "[FP16 AUDIT] float tensor"));
  CHECK(Contains(r68.errors.front(), "No accuracy preserving kernels found for conv"));
}

TEST_CASE("a shared bias is duplicated; biases get int32 encodings = input scale x weight scale", "[passes]") {
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 4, 4, 4}).value();
  const TensorId w1 = g.AddConstant("w1", DType::kFloat32, Shape{4, 4, 1, 1}, FloatData(Ramp(16, -1, 1))).value();
  const TensorId w2 = g.AddConstant("w2", DType::kFloat32, Shape{4, 4, 1, 1}, FloatData(Ramp(16, -2, 2))).value();
  const TensorId b = g.AddConstant("b", DType::kFloat32, Shape{4}, FloatData({0.1f, -0.2f, 0.3f, -0.4f})).value();
  const OpId c1 = g.AddOp("Conv2d", "conv1", {x, w1, b}, {"y1"}).value();
  const OpId c2 = g.AddOp("Conv2d", "conv2", {x, w2, b}, {"y2"}).value();
  REQUIRE(g.MarkOutput(g.op(c1).outputs[0]).ok());
  REQUIRE(g.MarkOutput(g.op(c2).outputs[0]).ok());
  const float in_scale = 0.02f;
  REQUIRE(g.SetEncoding(x, PerTensor(DType::kUFixed8, in_scale, -128)).ok());
  const std::vector<float> s1 = {0.01f, 0.02f, 0.03f, 0.04f}, s2 = {0.05f, 0.06f, 0.07f, 0.08f};
  REQUIRE(g.SetEncoding(w1, PerChannel(DType::kSFixed8, s1)).ok());
  REQUIRE(g.SetEncoding(w2, PerChannel(DType::kSFixed8, s2)).ok());
  REQUIRE(g.SetEncoding(g.op(c1).outputs[0], PerTensor(DType::kUFixed8, 0.1f, -128)).ok());
  REQUIRE(g.SetEncoding(g.op(c2).outputs[0], PerTensor(DType::kUFixed8, 0.1f, -128)).ok());

  auto r = RunProcess(&g, Builtin("htp_v73"), pass::LogLevel::kInfo);
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  CHECK(r.errors.empty());
  const TensorId b1 = g.op(c1).inputs[2], b2 = g.op(c2).inputs[2];
  CHECK(b1 == b);
  CHECK(b2 != b);
  CHECK(g.tensor(b2).name == "b_conv2");
  const auto row = Fields(CsvRow(r.log, "b_conv2"));
  REQUIRE(row.size() == 8);
  CHECK(row[1] == "b");
  CHECK(Contains(row[5], "DUPLICATED_BIAS"));
  CHECK(Contains(r.stats, "[DUP. BIASES] 1"));
  CHECK(Contains(r.stats, "[BIAS FXP] 1"));
  for (auto [bias, scales] : {std::pair{b1, s1}, std::pair{b2, s2}}) {
    const Tensor& t = g.tensor(bias);
    REQUIRE(t.encoding);
    CHECK(t.encoding->dtype == DType::kSFixed32);
    CHECK(t.encoding->kind == EncodingKind::kPerChannel);
    REQUIRE(t.encoding->scales.size() == 4);
    for (size_t c = 0; c < 4; ++c) CHECK(t.encoding->scales[c] == in_scale * scales[c]);
    CHECK(t.dtype == DType::kSFixed32);  // stored quantized
    CHECK(t.data->size() == 16);
    int32_t q0;
    std::memcpy(&q0, t.data->data(), 4);
    CHECK(q0 == static_cast<int32_t>(std::lrint(0.1 / (in_scale * scales[0]))));
  }
  CHECK(Contains(r.stats, "[COMP. ENC.] 2 "));
}

TEST_CASE("int4 activations promote to int8 with converts and an [ADAPTED OP] table", "[passes]") {
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 16}).value();
  const OpId relu = g.AddOp("Relu", "relu", {x}, {"y"}).value();
  const TensorId y = g.op(relu).outputs[0];
  REQUIRE(g.MarkOutput(y).ok());
  REQUIRE(g.SetEncoding(x, PerTensor(DType::kUFixed4, 0.5f, -8)).ok());
  REQUIRE(g.SetEncoding(y, PerTensor(DType::kUFixed4, 0.25f, 0)).ok());
  // Quantize reaches u4 on this descriptor so the two-step rule applies.
  auto t = Editable("htp_v73");
  t->conversions.push_back({{DType::kFloat32}, {DType::kUFixed4}, target::ConvertOp::kQuantize});
  t->conversions.push_back({{DType::kUFixed4}, {DType::kUFixed8}, target::ConvertOp::kConvert});
  t->conversions.push_back({{DType::kUFixed8}, {DType::kFloat32}, target::ConvertOp::kDequantize});
  auto r = RunProcess(&g, t);
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  CHECK(r.errors.empty());
  CHECK(Contains(r.log, "[REQUESTED KERN.] IN < u4, > OUT < u4, >"));
  CHECK(Contains(r.log, "[SELECTED KERN.] a8 IN < u8, > OUT < u8, > distance: IN < 1, > OUT < 1, > total: 2"));
  CHECK(Contains(r.log, "[ADAPTED OP] relu"));
  CHECK(Contains(r.stats, "[ADAPTED OPS] 1 / 1 ops"));
  CHECK(Contains(r.stats, "IN < u4, > OUT < u4, > -> IN < u8, > OUT < u8, > : 1"));
  // Model f32 -> user u4 (Quantize) -> selected u8 (Convert); u8 -> f32 at the output.
  CHECK(CountOps(g, "Quantize") == 1);
  CHECK(CountOps(g, "Convert") == 1);
  CHECK(CountOps(g, "Dequantize") == 1);
  const TensorId relu_in = g.op(relu).inputs[0];
  REQUIRE(g.tensor(relu_in).encoding);
  CHECK(g.tensor(relu_in).encoding->dtype == DType::kUFixed8);
  // u4 -> u8 keeps the range: scale / 17, every u4 grid point representable.
  CHECK(g.tensor(relu_in).encoding->scales[0] == static_cast<float>(0.5 / 17));
  CHECK(Contains(r.log, "[INJECT CONVERT]"));
  CHECK(Contains(r.stats, "[CONVERTS] 3"));
  CHECK(g.tensor(g.outputs()[0]).name == "y");
  CHECK(g.tensor(g.outputs()[0]).dtype == DType::kFloat32);
}

TEST_CASE("u8 weights where only s8 exists: sign flipped through the offset, no convert", "[passes]") {
  auto t = Editable("htp_v73");
  target::Kernel* k = FindKernel(*t, "Conv2d", "a8w8");
  REQUIRE(k);
  k->inputs[1].dtypes = {DType::kSFixed8};
  ConvRelu m;
  REQUIRE(m.g.SetEncoding(m.w, PerTensor(DType::kUFixed8, 2.f / 255, -128)).ok());
  auto r = RunProcess(&m.g, t);
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  CHECK(r.errors.empty());
  CHECK(Contains(r.log, "[SELECTED KERN.] a8w8 IN < u8, s8, s32, > OUT < u8, > distance: IN < 0, 0.1, 0, > OUT < 0, "
                        "> total: 0.1"));
  CHECK(CountOps(m.g, "Convert") == 0);
  const Tensor& w = m.g.tensor(m.w);
  CHECK(w.dtype == DType::kSFixed8);
  CHECK(w.encoding->offsets == std::vector<int32_t>{0});
  CHECK(w.encoding->scales == std::vector<float>{2.f / 255});
}

TEST_CASE("asymmetric weights where the kernel requires symmetry: the error names the constraint", "[passes]") {
  ConvRelu m;
  REQUIRE(m.g.SetEncoding(m.x, PerTensor(DType::kUFixed16, 1e-4f, -32768)).ok());
  REQUIRE(m.g.SetEncoding(m.w, PerTensor(DType::kSFixed16, 1e-4f, 100)).ok());
  REQUIRE(m.g.SetEncoding(m.y, PerTensor(DType::kUFixed16, 1e-4f, 0)).ok());
  auto r = RunProcess(&m.g, Builtin("htp_v73"));
  REQUIRE(r.errors.size() == 1);
  CHECK(Contains(r.errors[0], "conv (Conv2d)"));
  CHECK(Contains(r.errors[0], "constraint violation (symmetry: 'w' is asymmetric, the kernel needs "
                              "symmetric|strict_symmetric)"));
  CHECK(Contains(r.log, "[REJ. KERN.] a16w16"));
}

TEST_CASE("an op without a viable kernel: the documented error, every rejection reason in TRACE", "[passes]") {
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 8}).value();
  const OpId relu = g.AddOp("Relu", "relu", {x}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(relu).outputs[0]).ok());
  auto r = RunProcess(&g, Builtin("htp_v68"));  // no float kernels, no encodings
  REQUIRE_FALSE(r.errors.empty());
  CHECK(r.errors[0] == "No accuracy preserving kernels found for relu");
  CHECK(Contains(r.log, "[REJ. KERN.] a8 IN < u8, > OUT < u8, > reason: INF distance, likely a non-accuracy preserving "
                        "kernel distance: IN < inf, > OUT < inf, > total: inf"));
  CHECK(Contains(r.log, "[REJ. KERN.] a16"));

  // A Cast the target cannot do is named with its slot.
  Graph g2;
  const TensorId i64 = g2.AddInput("ids", DType::kInt64, Shape{4}).value();
  const TensorId table = g2.AddConstant("table", DType::kFloat32, Shape{10, 2}, FloatData(Ramp(20, 0, 1))).value();
  const OpId ga = g2.AddOp("Gather", "gather", {table, i64}, {"e"}).value();
  REQUIRE(g2.MarkOutput(g2.op(ga).outputs[0]).ok());
  auto r2 = RunProcess(&g2, Builtin("htp_v73"));
  CHECK(Contains(r2.log, "no Cast/Convert from is64 to is32 for input index 1"));
}

TEST_CASE("redundant converts are pruned and counted", "[passes]") {
  // t (u8) feeds two ops that both run at u16 only: one Convert, one pruned.
  auto tg = Editable("htp_v73");
  KeepKernels(*tg, "Relu", {"a16"});
  KeepKernels(*tg, "Sigmoid", {"a16"});
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 8}).value();
  const OpId neg = g.AddOp("ElementWiseNeg", "neg", {x}, {"t"}).value();
  const TensorId t = g.op(neg).outputs[0];
  const OpId r1 = g.AddOp("Relu", "relu", {t}, {"y1"}).value();
  const OpId r2 = g.AddOp("Sigmoid", "sig", {t}, {"y2"}).value();
  REQUIRE(g.MarkOutput(g.op(r1).outputs[0]).ok());
  REQUIRE(g.MarkOutput(g.op(r2).outputs[0]).ok());
  for (TensorId id : {x, t, g.op(r1).outputs[0], g.op(r2).outputs[0]})
    REQUIRE(g.SetEncoding(id, PerTensor(DType::kUFixed8, 0.05f, -128)).ok());
  auto r = RunProcess(&g, tg);
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  CHECK(r.errors.empty());
  CHECK(CountOps(g, "Convert") == 1);
  CHECK(g.op(r1).inputs[0] == g.op(r2).inputs[0]);
  CHECK(Contains(r.stats, "[PRUNED CONVERTS] 1"));
  CHECK(Contains(r.log, "[PRUNED]"));
  // Sigmoid's u16 output takes the kernel's fixed encoding (rescaled).
  CHECK(Contains(r.log, "[WARN: COMP. ENC.] y2"));
}

TEST_CASE("processing is deterministic", "[passes]") {
  ConvRelu a, b;
  auto ra = RunProcess(&a.g, Builtin("htp_v73"));
  auto rb = RunProcess(&b.g, Builtin("htp_v73"));
  CHECK(ra.log == rb.log);
  CHECK(ra.stats == rb.stats);
  CHECK(Graph::Diff(a.g, b.g).empty());
}

TEST_CASE("AdaptEncoding keeps the real range and the old grid", "[passes]") {
  const Encoding u8 = PerTensor(DType::kUFixed8, 0.1f, -10);
  auto s8 = pass::AdaptEncoding(u8, DType::kSFixed8);
  REQUIRE(s8);
  CHECK(s8->offsets[0] == 118);  // q' = q - 128
  auto u16 = pass::AdaptEncoding(u8, DType::kUFixed16);
  REQUIRE(u16);
  CHECK(u16->scales[0] == static_cast<float>(0.1 / 257));
  CHECK(u16->offsets[0] == -2570);
  const Encoding sym = SymmetricPerTensor(DType::kSFixed8, 0.5f);
  auto s16 = pass::AdaptEncoding(sym, DType::kSFixed16);
  REQUIRE(s16);
  CHECK(s16->offsets[0] == 0);
  CHECK(s16->scales[0] == 0.5f / 256);
  CHECK_FALSE(pass::AdaptEncoding(u16.value(), DType::kUFixed8));  // lower precision
  auto f = pass::AdaptEncoding(u8, DType::kFloat16);
  REQUIRE(f);
  CHECK(f->kind == EncodingKind::kFloat);
}

TEST_CASE("int4 weights: a16w4 selected, stored packed two per byte, CONTAINER annotation", "[passes]") {
  ConvRelu m;
  REQUIRE(m.g.SetEncoding(m.x, PerTensor(DType::kUFixed16, 1e-4f, -32768)).ok());
  REQUIRE(m.g.SetEncoding(m.y, PerTensor(DType::kUFixed16, 1e-4f, 0)).ok());
  REQUIRE(m.g.SetEncoding(m.w, PerChannel(DType::kSFixed4, std::vector<float>(8, 1.f / 7))).ok());
  auto r = RunProcess(&m.g, Builtin("htp_v73"));
  for (const auto& e : r.errors) UNSCOPED_INFO(e);
  CHECK(r.errors.empty());
  CHECK(Contains(r.log, "[SELECTED KERN.] a16w4 IN < u16, s4, s32, > OUT < u16, >"));
  CHECK(Contains(r.log, "CONTAINER IN[1]: s8"));
  const Tensor& w = m.g.tensor(m.w);
  CHECK(w.dtype == DType::kSFixed4);
  REQUIRE(w.data->size() == 32);  // 64 values, two per byte
  // Ramp -1..1 with scale 1/7: first values -7, -7 (low nibble first).
  CHECK(w.data->data()[0] == 0x99);
  // The bias follows the 16-bit input and the 4-bit weight scales.
  const Tensor& b = m.g.tensor(m.b);
  REQUIRE(b.encoding);
  CHECK(b.encoding->scales[0] == 1e-4f * (1.f / 7));
}

TEST_CASE("a kernel's fixed output range that leaves most of an 8-bit grid unused is a warning", "[passes]") {
  // Softmax on HTP v73 fixes its output to [0, 1]: values reaching 0.03 keep about 8 of 256 levels.
  auto run = [](float hi) {
    Graph g;
    const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 32}).value();
    const OpId sm = g.AddOp("Softmax", "attn", {x}, {"p"}).value();
    const TensorId p = g.op(sm).outputs[0];
    REQUIRE(g.MarkOutput(p).ok());
    REQUIRE(g.SetEncoding(x, PerTensor(DType::kUFixed8, 0.05f, -128)).ok());
    REQUIRE(g.SetEncoding(p, PerTensor(DType::kUFixed8, hi / 255, 0)).ok());
    auto r = RunProcess(&g, Builtin("htp_v73"));
    for (const auto& e : r.errors) UNSCOPED_INFO(e);
    CHECK(r.errors.empty());
    CHECK(g.tensor(p).encoding->scales[0] == Approx(1.0f / 255));  // the target's range stands
    return r;
  };
  auto narrow = run(0.03f);
  REQUIRE(HasWarning(narrow, "fixed-range-unused-levels"));
  std::string text;
  for (const auto& w : narrow.warnings) text += w;
  CHECK(Contains(text, "'p': the target's Softmax kernel fixes this 8-bit output to [0, 1]"));
  CHECK(Contains(text, "about 5.1 of its 8 bits are unused"));
  CHECK_FALSE(HasWarning(run(0.9f), "fixed-range-unused-levels"));
}

TEST_CASE("a fixed-range output with a computed encoding is read on the kernel's grid; an overridden one is converted",
          "[passes]") {
  // x -> Sigmoid -> s -> Mul(x, s) -> y (SiLU) at 8 bits: HTP fixes Sigmoid's output to [0, 1].
  auto run = [](bool overridden) {
    Graph g;
    const TensorId x = g.AddInput("x", DType::kFloat32, Shape{1, 32}).value();
    const TensorId s = g.op(g.AddOp("Sigmoid", "sig", {x}, {"s"}).value()).outputs[0];
    const TensorId y = g.op(g.AddOp("ElementWiseMultiply", "mul", {x, s}, {"y"}).value()).outputs[0];
    REQUIRE(g.MarkOutput(y).ok());
    REQUIRE(g.SetEncoding(x, PerTensor(DType::kUFixed8, 0.05f, -128)).ok());
    REQUIRE(g.SetEncoding(s, PerTensor(DType::kUFixed8, 0.99f / 255, 0, overridden)).ok());
    REQUIRE(g.SetEncoding(y, PerTensor(DType::kUFixed8, 0.04f, -20)).ok());
    auto r = RunProcess(&g, Builtin("htp_v73"));
    for (const auto& e : r.errors) UNSCOPED_INFO(e);
    CHECK(r.errors.empty());
    CHECK(g.tensor(s).encoding->scales[0] == Approx(1.0f / 255));  // the kernel's range
    size_t converts_of_s = 0;
    for (const Use& u : g.tensor(s).consumers) converts_of_s += g.op(u.op).type == "Convert";
    return converts_of_s;
  };
  CHECK(run(false) == 0);  // calibration's encoding: the Mul reads the kernel's grid
  CHECK(run(true) == 1);   // the user's: converted to it
}
