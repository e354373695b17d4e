// Target descriptors: built-ins compile, embed and say what the public facts
// say (targets/README.md); user descriptors load; hostile ones are refused.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "target/builtin_data.h"
#include "ir/op_registry.h"
#include "qairt/qairt_target.h"
#include "target/target_descriptor.h"
#include "target_generated.h"

namespace tg = qairt::target;
namespace fb = qairt::fb;
using qairt::DType;
using qairt::StatusCode;

namespace {

tg::TargetPtr Builtin(std::string_view name) {
  auto r = tg::LoadBuiltinTarget(name);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return r.value();
}

const tg::Kernel* FindKernel(const tg::Target& t, std::string_view op, std::string_view name) {
  const tg::OpKernels* o = t.FindOp(op);
  if (!o) return nullptr;
  for (const auto& k : o->kernels)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> KernelNames(const tg::Target& t, std::string_view op) {
  std::vector<std::string> out;
  if (const tg::OpKernels* o = t.FindOp(op))
    for (const auto& k : o->kernels) out.push_back(k.name);
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::span<const uint8_t> BlobOf(std::string_view name) {
  for (const auto& b : tg::BuiltinBlobs())
    if (name == b.name) return {b.data, b.size};
  FAIL("no blob " << name);
  return {};
}

// Builds a minimal valid descriptor; `mutate` may change the builder inputs.
struct MiniSpec {
  uint32_t min_reader_version = 1;
  uint8_t backend = 5;
  uint8_t slot_dtype = static_cast<uint8_t>(fb::DType::u8);
  uint8_t granularity = static_cast<uint8_t>(fb::Granularity::per_tensor);
  uint8_t symmetry = static_cast<uint8_t>(fb::Symmetry::symmetric);
  uint8_t via = 0;
  std::string op = "Relu";
  size_t extra_dtypes = 0;
};

std::vector<uint8_t> BuildMini(const MiniSpec& m) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<fb::DType> dtypes{static_cast<fb::DType>(m.slot_dtype)};
  for (size_t i = 0; i < m.extra_dtypes; ++i) dtypes.push_back(fb::DType::u8);
  std::vector<fb::Symmetry> syms{static_cast<fb::Symmetry>(m.symmetry)};
  std::vector<fb::Granularity> grans{static_cast<fb::Granularity>(m.granularity)};
  auto in = fb::CreateSlotDirect(b, fb::SlotRole::activation, false, &dtypes, &syms, &grans);
  auto out = fb::CreateSlotDirect(b, fb::SlotRole::activation, false, &dtypes);
  std::vector<flatbuffers::Offset<fb::Slot>> ins{in}, outs{out};
  auto kernel = fb::CreateKernelDirect(b, "a8", &ins, &outs);
  std::vector<flatbuffers::Offset<fb::Kernel>> kernels{kernel};
  auto op = fb::CreateOpKernelsDirect(b, m.op.c_str(), &kernels);
  std::vector<flatbuffers::Offset<fb::OpKernels>> ops{op};
  std::vector<fb::DType> from{fb::DType::u8}, to{fb::DType::s8};
  auto conv = fb::CreateConversionDirect(b, &from, &to, static_cast<fb::ConvertOp>(m.via));
  std::vector<flatbuffers::Offset<fb::Conversion>> convs{conv};
  auto root = fb::CreateTargetDirect(b, 1, m.min_reader_version, "mini", "test", static_cast<fb::Backend>(m.backend), 0,
                                     nullptr, 0, fb::DType::f32, 0, &ops, nullptr, nullptr, &convs);
  fb::FinishTargetBuffer(b, root);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

qairt::Result<tg::TargetPtr> LoadBin(const std::vector<uint8_t>& bytes) { return tg::LoadTargetFromBinary(bytes, "mini.qatd"); }

void RequireRejected(const qairt::Result<tg::TargetPtr>& r, const std::string& needle) {
  INFO("message: " << r.status().message());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find(needle) != std::string::npos);
}

// A made-up accelerator, written the way a user would.
constexpr const char* kAcmeNpu = R"json({
  "schema_version": 1, "min_reader_version": 1,
  "name": "acme_npu", "description": "ACME NPU 1 (made up for tests)", "backend": "Custom",
  "capabilities": {"fp16_compute": false, "int16_activations": true, "per_channel_weights": true},
  "default_float_dtype": "f32",
  "ops": [
    {"op": "Conv2d", "kernels": [
      {"name": "a8w8",
       "inputs": [
         {"role": "activation", "dtypes": ["u8"], "granularities": ["per_tensor"]},
         {"role": "weight", "dtypes": ["s8"], "symmetries": ["symmetric"], "granularities": ["per_channel"], "channel_axis": 0},
         {"role": "bias", "optional": true, "dtypes": ["s32"], "scale_rule": "product_of_inputs"}],
       "outputs": [{"role": "activation", "dtypes": ["u8"]}]}]},
    {"op": "Relu", "kernels": [{"name": "a8", "inputs": [{"role": "activation", "dtypes": ["u8"]}],
                                "outputs": [{"role": "activation", "dtypes": ["u8"]}]}]},
    {"op": "Sigmoid", "kernels": [{"name": "a16", "inputs": [{"role": "activation", "dtypes": ["u16"]}],
       "outputs": [{"role": "activation", "dtypes": ["u16"], "value_range": {"min": 0.0, "max": 1.0},
                    "fixed_encodings": [{"dtype": "u16", "offset": 0, "scale": 0.0000152587890625}]}]}]},
    {"op": "Concat", "kernels": [{"name": "a8", "variadic_inputs": true,
       "inputs": [{"role": "activation", "dtypes": ["u8"]}], "outputs": [{"role": "activation", "dtypes": ["u8"]}]}]}
  ],
  "data_movement_ops": ["Concat"],
  "super_groups": [{"ops": ["Conv2d", "Relu"]}],
  "conversions": [{"from": ["f32"], "to": ["u8", "u16"], "via": "Quantize"},
                  {"from": ["u8", "u16"], "to": ["f32"], "via": "Dequantize"}]
})json";

}  // namespace

TEST_CASE("every built-in descriptor compiles, embeds and passes the checks", "[target]") {
  const std::vector<std::string> expected = {"aic100", "cpu", "htp_v68", "htp_v69", "htp_v73",
                                             "htp_v75", "htp_v79", "htp_v81", "lpai_v6"};
  auto names = tg::BuiltinTargetNames();
  REQUIRE(std::vector<std::string>(names.begin(), names.end()) == expected);
  REQUIRE(qairt_target_builtin_count() == expected.size());
  for (const auto& name : expected) {
    auto t = Builtin(name);
    CHECK(t->name == name);
    CHECK(t->schema_version == tg::kSchemaVersion);
    CHECK(t->min_reader_version == 1);
    CHECK(t->ops.size() > 40);
    CHECK_FALSE(t->sources.empty());
    // The blob is the flatc output of targets/builtin/<name>.json.
    auto again = tg::LoadTargetFromBinary(BlobOf(name), name);
    REQUIRE(again.ok());
    // Its JSON dump loads back to an identical target.
    auto json = tg::TargetToJson(*t, "");
    REQUIRE(json.ok());
    auto back = tg::LoadTargetFromJson(json.value(), "dump");
    INFO(back.status().message());
    REQUIRE(back.ok());
    CHECK(tg::DiffTargets(*t, *back.value(), false).find("no differences") != std::string::npos);
  }
}

TEST_CASE("HTP v68 kernel tables", "[target]") {
  auto t = Builtin("htp_v68");
  CHECK(t->backend == tg::Backend::kHtp);
  CHECK(t->arch_version == 68);
  CHECK_FALSE(t->capabilities & tg::kCapFp16Compute);
  CHECK_FALSE(t->capabilities & tg::kCapA16W16);
  CHECK(t->default_float_dtype == DType::kUndefined);  // no fp16/fp32 execution path
  // Conv2d / FullyConnected: INT8 and A16W8 only.
  for (const char* op : {"Conv2d", "FullyConnected"}) {
    CHECK(KernelNames(*t, op) == std::vector<std::string>{"a8w8", "a16w8"});
    const tg::Kernel* k = FindKernel(*t, op, "a8w8");
    REQUIRE(k);
    REQUIRE(k->inputs.size() == 3);
    CHECK(k->inputs[2].role == tg::SlotRole::kBias);
    CHECK(k->inputs[2].optional);
    CHECK(k->inputs[2].dtypes == std::vector<DType>{DType::kSFixed32});
    CHECK(k->inputs[2].scale_rule == tg::ScaleRule::kProductOfInputs);
    CHECK(k->inputs[1].channel_axis == 0);
  }
  // MatMul: no 16x16; 8-bit second input must be symmetric below V73.
  CHECK(KernelNames(*t, "MatMul") == std::vector<std::string>{"a8w8", "a16w8"});
  const tg::Kernel* mm = FindKernel(*t, "MatMul", "a16w8");
  REQUIRE(mm);
  CHECK(mm->inputs[1].symmetry_mask == ((1u << 1) | (1u << 2)));
  CHECK(mm->inputs[0].granularity_mask == (1u << 2));  // per-tensor activations
  // ElementWiseAdd / Sigmoid: integer only; 16-bit Sigmoid output has QNN's fixed encoding.
  CHECK(KernelNames(*t, "ElementWiseAdd") == std::vector<std::string>{"a8", "a16"});
  CHECK(KernelNames(*t, "Sigmoid") == std::vector<std::string>{"a8", "a16"});
  const tg::Kernel* sig = FindKernel(*t, "Sigmoid", "a16");
  REQUIRE(sig);
  REQUIRE(sig->outputs[0].fixed_encodings.size() == 2);
  CHECK(sig->outputs[0].fixed_encodings[0].dtype == DType::kUFixed16);
  CHECK(sig->outputs[0].fixed_encodings[0].scale == 1.0 / 65536);
  CHECK(sig->outputs[0].fixed_encodings[0].offset == 0);
  CHECK_FALSE(sig->outputs[0].has_range);  // the [0, 1] rule starts with the V73 config
  // No float path at all.
  CHECK(t->ConversionOps(DType::kFloat32, DType::kFloat16) == 0);
  CHECK(t->ConversionOps(DType::kFloat32, DType::kUFixed8) == (1u << 2));  // Quantize at the boundary
  CHECK(t->IsDataMovement("Gather"));
  CHECK_FALSE(t->IsDataMovement("Conv2d"));
}

TEST_CASE("HTP v73 kernel tables", "[target]") {
  auto t = Builtin("htp_v73");
  CHECK(t->capabilities & tg::kCapFp16Compute);
  CHECK(t->capabilities & tg::kCapA16W16);
  CHECK(t->capabilities & tg::kCapLpbqWeights);
  CHECK(t->default_float_dtype == DType::kFloat16);
  for (const char* op : {"Conv2d", "FullyConnected"}) {
    auto names = KernelNames(*t, op);
    for (const char* k : {"a8w8", "a16w8", "a16w16", "fp16", "fp32", "a16w4"}) CHECK(Has(names, k));
    const tg::Kernel* w16 = FindKernel(*t, op, "a16w16");
    REQUIRE(w16);
    CHECK(w16->inputs[1].dtypes == std::vector<DType>{DType::kSFixed16});  // symmetric int16, per-tensor
    CHECK(w16->inputs[1].symmetry_mask == ((1u << 1) | (1u << 2)));
    CHECK(w16->inputs[1].granularity_mask == (1u << 2));
    const tg::Kernel* w4 = FindKernel(*t, op, "a16w4");
    REQUIRE(w4);
    CHECK(w4->inputs[1].dtypes == std::vector<DType>{DType::kSFixed4});
    CHECK((w4->inputs[1].granularity_mask & (1u << 5)) != 0);  // LPBQ
    const tg::Kernel* f32 = FindKernel(*t, op, "fp32");
    REQUIRE(f32);
    CHECK_FALSE(f32->accuracy_preserving);  // HTP computes fp32 graphs in fp16
    CHECK(FindKernel(*t, op, "fp16")->accuracy_preserving);
  }
  const tg::Kernel* mm = FindKernel(*t, "MatMul", "a16w16");
  REQUIRE(mm);
  CHECK(mm->inputs.size() == 2);
  CHECK(FindKernel(*t, "MatMul", "a8w8")->inputs[1].symmetry_mask == 0);  // asymmetric allowed from V73
  CHECK(Has(KernelNames(*t, "ElementWiseAdd"), "fp16"));
  const tg::Kernel* sig8 = FindKernel(*t, "Sigmoid", "a8");
  REQUIRE(sig8);
  CHECK(sig8->outputs[0].has_range);
  CHECK(sig8->outputs[0].range_min == 0.0);
  CHECK(sig8->outputs[0].range_max == 1.0);
  // Kernel matching by dtypes.
  const DType in[] = {DType::kUFixed16, DType::kSFixed16, DType::kUndefined};
  const DType out[] = {DType::kUFixed16};
  auto k = t->FindKernel("Conv2d", in, out);
  REQUIRE(k);
  CHECK(t->FindOp("Conv2d")->kernels[*k].name == "a16w16");
  REQUIRE_FALSE(Builtin("htp_v68")->FindKernel("Conv2d", in, out));
  CHECK(t->ConversionOps(DType::kFloat32, DType::kFloat16) == (1u << 1));  // Cast
  REQUIRE(t->super_groups.size() == 7);  // spec Appendix D
}

TEST_CASE("LPAI v6 kernel tables", "[target]") {
  auto t = Builtin("lpai_v6");
  CHECK(t->backend == tg::Backend::kLpai);
  CHECK(t->arch_version == 6);
  CHECK_FALSE(t->capabilities & (tg::kCapFp16Compute | tg::kCapFp32Compute));
  CHECK(t->quant_defaults.strict_symmetric);
  CHECK(t->quant_defaults.activations_symmetric);
  for (const char* op : {"Conv2d", "FullyConnected", "MatMul"})
    CHECK(KernelNames(*t, op) == std::vector<std::string>{"a8w8", "a8w16", "a16w8", "a16w16"});
  CHECK(FindKernel(*t, "FullyConnected", "a8w16")->inputs[1].dtypes == std::vector<DType>{DType::kSFixed16});
  CHECK(KernelNames(*t, "ElementWiseAdd") == std::vector<std::string>{"a8", "a16", "a32"});
  CHECK(KernelNames(*t, "Sigmoid") == std::vector<std::string>{"a8", "a16"});
  for (const auto& o : t->ops)
    for (const auto& k : o.kernels)
      for (const auto& s : k.inputs)
        for (DType d : s.dtypes)
          if (o.op != "Quantize") CHECK_FALSE(qairt::IsFloat(d));
  CHECK(t->super_groups.size() >= 20);
}

TEST_CASE("CPU and AIC100 descriptors", "[target]") {
  auto cpu = Builtin("cpu");
  CHECK(cpu->default_float_dtype == DType::kFloat32);
  CHECK(cpu->ops.size() >= 117);  // fp32 reference for every IR op (when derived)
  CHECK(cpu->FindOp("IsNan"));     // not in AIMET's CPU table: qairt's own fp32 kernel
  CHECK(Has(KernelNames(*cpu, "Conv2d"), "a8w8"));
  auto aic = Builtin("aic100");
  CHECK(aic->backend == tg::Backend::kAic);
  CHECK(aic->capabilities & tg::kCapFp16Compute);
  CHECK(KernelNames(*aic, "Softmax") == std::vector<std::string>{"fp16", "fp32"});  // no int8 Softmax
  CHECK(Has(KernelNames(*aic, "Conv2d"), "a8w8"));
}

TEST_CASE("SoC mapping", "[target]") {
  CHECK(tg::TargetNameForSoc("SM8550") == std::optional<std::string_view>("htp_v73"));
  CHECK(tg::TargetNameForSoc("sm8650") == std::optional<std::string_view>("htp_v75"));
  CHECK(tg::TargetNameForSoc("SM8350") == std::optional<std::string_view>("htp_v68"));
  CHECK(tg::TargetNameForSoc("SM8450") == std::optional<std::string_view>("htp_v69"));
  CHECK(tg::TargetNameForSoc("SM8750") == std::optional<std::string_view>("htp_v79"));
  CHECK(tg::TargetNameForSoc("SM8850") == std::optional<std::string_view>("htp_v81"));  // HTP before LPAI
  CHECK(tg::TargetNameForSoc("43") == std::optional<std::string_view>("htp_v73"));
  CHECK_FALSE(tg::TargetNameForSoc("SM9999"));
  CHECK_FALSE(tg::TargetNameForSoc(""));
  qairt_target_t* t = nullptr;
  qairt_status_t* s = qairt_target_for_soc("QCS9100", &t);
  REQUIRE(s == nullptr);
  qairt_target_info info;
  info.struct_size = sizeof info;
  REQUIRE(qairt_target_get_info(t, &info) == nullptr);
  CHECK(std::string(info.name) == "htp_v73");
  qairt_target_destroy(t);
  s = qairt_target_for_soc("SM0000", &t);
  REQUIRE(s != nullptr);
  CHECK(qairt_status_code(s) == QAIRT_NOT_FOUND);
  qairt_status_free(s);
}

TEST_CASE("diff htp_v68 -> htp_v73 shows fp16, 16x16 MatMul and super groups", "[target]") {
  auto a = Builtin("htp_v68");
  auto b = Builtin("htp_v73");
  const std::string text = tg::DiffTargets(*a, *b, false);
  INFO(text.substr(0, 4000));
  CHECK(text.find("capability fp16_compute: false -> true") != std::string::npos);
  CHECK(text.find("capability a16w16: false -> true") != std::string::npos);
  CHECK(text.find("+ kernel MatMul a16w16") != std::string::npos);
  CHECK(text.find("super_group Conv2d + HardSwish") != std::string::npos);  // only v73
  CHECK(text.find("- super_group Conv2d + Batchnorm + Relu") != std::string::npos);  // only v68
  CHECK(tg::DiffTargets(*b, *b, false).find("no differences") != std::string::npos);
  const std::string json = tg::DiffTargets(*a, *b, true);
  CHECK(json.find(R"({"kind":"capability","item":"fp16_compute","a":"false","b":"true"})") != std::string::npos);
  CHECK(json.find(R"("kind":"kernel","item":"MatMul a16w16","a":null)") != std::string::npos);
}

TEST_CASE("a user descriptor (made-up NPU) loads and is usable", "[target]") {
  // From bytes through the C API.
  qairt_target_t* t = nullptr;
  qairt_status_t* s = qairt_target_load_bytes(kAcmeNpu, std::strlen(kAcmeNpu), &t);
  INFO((s ? qairt_status_message(s) : ""));
  REQUIRE(s == nullptr);
  qairt_target_info info;
  info.struct_size = sizeof info;
  REQUIRE(qairt_target_get_info(t, &info) == nullptr);
  CHECK(std::string(info.name) == "acme_npu");
  CHECK(info.backend == QAIRT_BACKEND_CUSTOM);
  CHECK(info.num_ops == 4);
  CHECK(info.default_float_dtype == QAIRT_DTYPE_FLOAT32);
  CHECK((info.capabilities & QAIRT_TARGET_CAP_INT16_ACTIVATIONS) != 0);
  size_t n = 0;
  REQUIRE(qairt_target_kernel_count(t, "Conv2d", &n) == nullptr);
  CHECK(n == 1);
  REQUIRE(qairt_target_kernel_count(t, "Softmax", &n) == nullptr);  // registered op, no kernel
  CHECK(n == 0);
  qairt_kernel_slot slot;
  slot.struct_size = sizeof slot;
  REQUIRE(qairt_target_kernel_slot(t, "Conv2d", 0, QAIRT_SLOT_INPUT, 1, &slot) == nullptr);
  CHECK(slot.role == QAIRT_SLOT_WEIGHT);
  REQUIRE(slot.num_dtypes == 1);
  CHECK(slot.dtypes[0] == QAIRT_DTYPE_SFIXED_POINT_8);
  CHECK(slot.symmetry_mask == (1u << QAIRT_SYMMETRY_SYMMETRIC));
  CHECK(slot.granularity_mask == (1u << QAIRT_ENCODING_PER_CHANNEL));
  CHECK(slot.channel_axis == 0);
  qairt_fixed_encoding fe;
  fe.struct_size = sizeof fe;
  REQUIRE(qairt_target_kernel_fixed_encoding(t, "Sigmoid", 0, QAIRT_SLOT_OUTPUT, 0, 0, &fe) == nullptr);
  CHECK(fe.dtype == QAIRT_DTYPE_UFIXED_POINT_16);
  CHECK(fe.scale == 1.0 / 65536);
  const qairt_dtype_t in[] = {QAIRT_DTYPE_UFIXED_POINT_8, QAIRT_DTYPE_UFIXED_POINT_8, QAIRT_DTYPE_UFIXED_POINT_8};
  int32_t found = 0;
  size_t index = 99;
  REQUIRE(qairt_target_find_kernel(t, "Concat", in, 3, in, 1, &found, &index) == nullptr);  // variadic
  CHECK(found == 1);
  CHECK(index == 0);
  REQUIRE(qairt_target_find_kernel(t, "Conv2d", in, 2, in, 1, &found, &index) == nullptr);
  CHECK(found == 0);  // weight must be s8
  CHECK(qairt_target_is_data_movement(t, "Concat") == 1);
  CHECK(qairt_target_conversion_ops(t, QAIRT_DTYPE_FLOAT32, QAIRT_DTYPE_UFIXED_POINT_16) ==
        (1u << QAIRT_CONVERT_OP_QUANTIZE));
  qairt_super_group g;
  g.struct_size = sizeof g;
  REQUIRE(qairt_target_get_super_group(t, 0, &g) == nullptr);
  REQUIRE(g.num_ops == 2);
  CHECK(std::string(g.ops[1]) == "Relu");
  // Query-then-fill JSON of one op, and a diff against a built-in.
  size_t len = 0;
  REQUIRE(qairt_target_to_json(t, "Sigmoid", nullptr, 0, &len) == nullptr);
  std::string buf(len + 1, '\0');
  s = qairt_target_to_json(t, "Sigmoid", buf.data(), 3, &len);
  REQUIRE(s != nullptr);
  CHECK(qairt_status_code(s) == QAIRT_BUFFER_TOO_SMALL);
  qairt_status_free(s);
  REQUIRE(qairt_target_to_json(t, "Sigmoid", buf.data(), buf.size(), &len) == nullptr);
  CHECK(buf.find("\"fixed_encodings\"") != std::string::npos);
  qairt_target_t* v73 = nullptr;
  REQUIRE(qairt_target_load("htp_v73", &v73) == nullptr);
  REQUIRE(qairt_target_diff(t, v73, QAIRT_TARGET_DIFF_TEXT, nullptr, 0, &len) == nullptr);
  CHECK(len > 100);
  qairt_target_destroy(v73);

  // The same descriptor from a file, as JSON and compiled.
  const std::string path = "qairt_test_acme_npu.json";
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f);
  std::fputs(kAcmeNpu, f);
  std::fclose(f);
  qairt_target_t* from_file = nullptr;
  REQUIRE(qairt_target_load(path.c_str(), &from_file) == nullptr);
  qairt_target_destroy(from_file);
  std::remove(path.c_str());
  qairt_target_destroy(t);
}

TEST_CASE("hostile descriptors are refused with clear errors", "[target][hostile]") {
  SECTION("truncated") {
    auto blob = BlobOf("htp_v73");
    for (size_t len = 0; len < blob.size(); len += (len < 64 ? 1 : 997)) {
      auto r = tg::LoadTargetFromBinary(blob.subspan(0, len), "cut.qatd");
      INFO("length " << len);
      REQUIRE_FALSE(r.ok());
      CHECK(r.status().message().find("cut.qatd") != std::string::npos);
    }
    RequireRejected(tg::LoadTargetFromBinary(blob.subspan(0, 4), "x"), "too short");
    RequireRejected(tg::LoadTargetFromBinary(blob.subspan(0, blob.size() / 2), "x"), "verifier rejected");
    RequireRejected(tg::LoadTargetFromJson(std::string(kAcmeNpu).substr(0, 300), "half.json"), "invalid descriptor JSON");
  }
  SECTION("wrong file identifier") {
    std::vector<uint8_t> bytes(BlobOf("cpu").begin(), BlobOf("cpu").end());
    std::memcpy(bytes.data() + 4, "TFL3", 4);
    RequireRejected(tg::LoadTargetFromBinary(bytes, "model.tflite"), "expected 'QATD'");
    RequireRejected(tg::LoadTargetFromBytes(bytes, "model.tflite"), "file identifier");
  }
  SECTION("newer min_reader_version") {
    MiniSpec m;
    m.min_reader_version = 7;
    auto r = LoadBin(BuildMini(m));
    RequireRejected(r, "min_reader_version is 7");
    CHECK(r.status().code() == StatusCode::kUnsupported);
    REQUIRE(LoadBin(BuildMini(MiniSpec{})).ok());  // the unmutated descriptor is fine
  }
  SECTION("huge vectors") {
    // A vector whose length field points far outside the buffer.
    auto bytes = BuildMini(MiniSpec{});
    auto good = LoadBin(bytes);
    REQUIRE(good.ok());
    size_t patched = 0;
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      uint32_t v;
      std::memcpy(&v, bytes.data() + i, 4);
      if (v == 1) {  // the length of some one-element vector (or a scalar 1)
        auto copy = bytes;
        const uint32_t huge = 0x3FFFFFFF;
        std::memcpy(copy.data() + i, &huge, 4);
        auto r = LoadBin(copy);
        if (!r.ok()) ++patched;
      }
    }
    CHECK(patched > 0);
    // A well-formed but absurdly long list.
    MiniSpec m;
    m.extra_dtypes = 100000;
    RequireRejected(LoadBin(BuildMini(m)), "entries (limit");
    // Larger than the size limit: refused before the verifier runs.
    std::vector<uint8_t> big(tg::kMaxBinaryBytes + 1, 0);
    RequireRejected(tg::LoadTargetFromBinary(big, "big.qatd"), "larger than the limit");
  }
  SECTION("deep nesting") {
    std::string deep = R"({"name": "x", "backend": "HTP", "ops": )" + std::string(100000, '[');
    RequireRejected(tg::LoadTargetFromJson(deep, "deep.json"), "deep.json");
    std::string deep_obj = R"({"name": "x", "capabilities": )";
    for (int i = 0; i < 20000; ++i) deep_obj += R"({"fp16_compute": )";
    RequireRejected(tg::LoadTargetFromJson(deep_obj, "deep2.json"), "deep2.json");
  }
  SECTION("out-of-range enums") {
    MiniSpec m;
    m.backend = 200;
    RequireRejected(LoadBin(BuildMini(m)), "backend: value 200 is out of range");
    m = MiniSpec{};
    m.slot_dtype = 99;
    RequireRejected(LoadBin(BuildMini(m)), "ops[0] 'Relu'.kernels[0] 'a8'.inputs[0].dtypes[0]: value 99 is not a dtype");
    m = MiniSpec{};
    m.granularity = 0;
    RequireRejected(LoadBin(BuildMini(m)), "granularities[0]: value 0 is out of range");
    m = MiniSpec{};
    m.symmetry = 9;
    RequireRejected(LoadBin(BuildMini(m)), "symmetries[0]: value 9 is out of range");
    m = MiniSpec{};
    m.via = 17;
    RequireRejected(LoadBin(BuildMini(m)), "conversions[0].via: value 17");
    RequireRejected(tg::LoadTargetFromJson(R"({"name": "x", "backend": "Quantum"})", "enum.json"),
                    "invalid descriptor JSON");
  }
  SECTION("unknown op names") {
    MiniSpec m;
    m.op = "Conv2D";
    RequireRejected(LoadBin(BuildMini(m)), "unknown op type 'Conv2D'");
    std::string json = kAcmeNpu;
    json.replace(json.find("\"Relu\"]"), 6, "\"Rellu\"");
    RequireRejected(tg::LoadTargetFromJson(json, "acme.json"), "acme.json': super_groups[0].ops[1]: unknown op type 'Rellu'");
  }
  SECTION("inconsistent slots and other semantic errors") {
    auto bad = [](const std::string& from, const std::string& to) {
      std::string json = kAcmeNpu;
      const size_t at = json.find(from);
      REQUIRE(at != std::string::npos);
      json.replace(at, from.size(), to);
      return tg::LoadTargetFromJson(json, "acme.json");
    };
    RequireRejected(bad(R"({"op": "Relu", "kernels": [{"name": "a8", "inputs": [{"role": "activation", "dtypes": ["u8"]}])",
                        R"({"op": "Relu", "kernels": [{"name": "a8", "inputs": [{"role": "activation", "dtypes": ["u8"]}, {"role": "activation", "dtypes": ["u8"]}])"),
                    "2 slots but Relu takes at most 1 inputs");
    RequireRejected(bad(R"("dtypes": ["s32"], "scale_rule")", R"("dtypes": [], "scale_rule")"), "must list at least one dtype");
    RequireRejected(bad(R"("fixed_encodings": [{"dtype": "u16")", R"("fixed_encodings": [{"dtype": "u8")"),
                    "is not one of the slot's dtypes");
    RequireRejected(bad(R"("min": 0.0, "max": 1.0)", R"("min": 1.0, "max": 0.0)"), "min < max");
    RequireRejected(bad(R"("inputs": [{"role": "activation", "dtypes": ["u8"]}], "outputs": [{"role": "activation", "dtypes": ["u8"]}]})",
                        R"("inputs": [{"role": "activation", "dtypes": ["u8"]}], "outputs": []})"),
                    "at least one output slot");
    RequireRejected(bad(R"("name": "acme_npu")", R"("name": "acme npu!")"), "may only contain");
    RequireRejected(bad(R"("backend": "Custom")", R"("backend": "Custom", "colour": "red")"), "invalid descriptor JSON");
    RequireRejected(bad(R"([{"name": "a8", "inputs": [{"role": "activation", "dtypes": ["u8"]}])",
                        R"([{"name": "a8", "inputs": [{"role": "activation", "dtypes": ["u8"], "scale_rule": "product_of_inputs"}])"),
                    "product_of_inputs needs");
    RequireRejected(bad(R"({"role": "activation", "dtypes": ["u8"], "granularities": ["per_tensor"]})",
                        R"({"role": "activation", "optional": true, "dtypes": ["u8"], "granularities": ["per_tensor"]})"),
                    "input 0 of Conv2d is required");
    auto r = tg::LoadTargetFromJson(kAcmeNpu, "ok.json");
    REQUIRE(r.ok());
  }
  SECTION("random corruption never crashes") {
    auto blob = BlobOf("lpai_v6");
    std::mt19937 rng(20261129);
    size_t rejected = 0;
    for (int i = 0; i < 3000; ++i) {
      std::vector<uint8_t> bytes(blob.begin(), blob.end());
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
      auto r = tg::LoadTargetFromBytes(bytes, "fuzz");
      if (!r.ok()) ++rejected;
      else REQUIRE(tg::TargetToJson(*r.value(), "").ok());  // whatever loads is usable
    }
    CHECK(rejected > 0);
  }
  SECTION("through the C API") {
    qairt_target_t* t = reinterpret_cast<qairt_target_t*>(0x1);
    qairt_status_t* s = qairt_target_load_file("/nonexistent/npu.qatd", &t);
    REQUIRE(s);
    CHECK(qairt_status_code(s) == QAIRT_NOT_FOUND);
    CHECK(std::string(qairt_status_message(s)).find("/nonexistent/npu.qatd") != std::string::npos);
    qairt_status_free(s);
    CHECK(t == reinterpret_cast<qairt_target_t*>(0x1));  // untouched on error
    s = qairt_target_load_bytes("QATDQATD", 8, &t);
    REQUIRE(s);
    CHECK(qairt_status_code(s) == QAIRT_PARSE_ERROR);
    qairt_status_free(s);
    s = qairt_target_load_builtin("htp_v99", &t);
    REQUIRE(s);
    CHECK(std::string(qairt_status_message(s)).find("htp_v73") != std::string::npos);  // lists the names
    qairt_status_free(s);
    s = qairt_target_load_bytes(nullptr, 5, &t);
    REQUIRE(s);
    CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
    qairt_status_free(s);
  }
}

TEST_CASE("C API argument checks and versioned structs", "[target]") {
  qairt_target_t* t = nullptr;
  REQUIRE(qairt_target_load_builtin("htp_v75", &t) == nullptr);
  size_t n = 0;
  qairt_status_t* s = qairt_target_kernel_count(t, "NotAnOp", &n);
  REQUIRE(s);
  CHECK(qairt_status_code(s) == QAIRT_NOT_FOUND);
  qairt_status_free(s);
  qairt_kernel_info info;
  info.struct_size = 4;  // too small
  s = qairt_target_kernel_info(t, "Conv2d", 0, &info);
  REQUIRE(s);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);
  info.struct_size = sizeof info;
  s = qairt_target_kernel_info(t, "Conv2d", 1000, &info);
  REQUIRE(s);
  CHECK(qairt_status_code(s) == QAIRT_NOT_FOUND);
  qairt_status_free(s);
  qairt_kernel_slot slot;
  slot.struct_size = sizeof slot;
  s = qairt_target_kernel_slot(t, "Conv2d", 0, 7, 0, &slot);
  REQUIRE(s);
  qairt_status_free(s);
  CHECK(qairt_target_op_name(t, 100000) == nullptr);
  CHECK(qairt_target_builtin_name(1000) == nullptr);
  CHECK(qairt_target_conversion_ops(t, 500, 1) == 0);
  s = qairt_target_diff(t, t, 9, nullptr, 0, &n);
  REQUIRE(s);
  qairt_status_free(s);
  qairt_target_destroy(t);
  qairt_target_destroy(nullptr);
}

TEST_CASE("targets are shared between threads", "[target]") {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&failures, i] {
      const char* name = qairt_target_builtin_name(static_cast<size_t>(i) % qairt_target_builtin_count());
      for (int round = 0; round < 20; ++round) {
        qairt_target_t* t = nullptr;
        if (qairt_status_t* s = qairt_target_load(name, &t)) {
          qairt_status_free(s);
          ++failures;
          continue;
        }
        size_t len = 0;
        if (qairt_status_t* s = qairt_target_to_json(t, nullptr, nullptr, 0, &len)) qairt_status_free(s), ++failures;
        qairt_target_destroy(t);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
}
