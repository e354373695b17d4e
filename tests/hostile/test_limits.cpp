// Explicit input limits (the table in docs/TESTING.md): each is exercised at
// the limit (accepted) and one past it (refused with the limit named).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "calib/input_list.h"
#include "container/container.h"
#include "fuzz/fuzz_models.h"
#include "hostile/hostile_util.h"
#include "encodings/encodings.h"
#include "onnx/onnx_import.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_encodings.h"
#include "qairt/qairt_import.h"
#include "qairt/qairt_target.h"
#include "lib/target/target_descriptor.h"

using qairt::hostile::Sandbox;
namespace fs = std::filesystem;

namespace {

std::string RepoFile(const std::string& rel) {
  return qairt::hostile::Slurp((fs::path(__FILE__).parent_path().parent_path().parent_path() / rel).string());
}

// A valid 2.0.0 document whose quantizer_args value is `levels` nested
// arrays: levels counts nesting below the document's root object, as the
// reader does.
std::string NestedEncodings(uint32_t levels) {
  return R"({"version":"2.0.0","encodings":[],"quantizer_args":)" + std::string(levels, '[') +
         std::string(levels, ']') + "}";
}

bool HasCode(const qairt::encodings::Diags& diags, const std::string& code) {
  return std::any_of(diags.begin(), diags.end(), [&](const auto& d) { return d.code == code; });
}

}  // namespace

TEST_CASE("limit: ONNX model bytes", "[hostile][limits]") {
  const std::string model = qairt_fuzz::SmallConvModel();
  qairt::ImportOptions o;
  o.max_model_bytes = model.size();
  CHECK(qairt::ImportOnnxBytes(model.data(), model.size(), "", o, nullptr).ok());
  o.max_model_bytes = model.size() - 1;
  auto r = qairt::ImportOnnxBytes(model.data(), model.size(), "", o, nullptr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == qairt::StatusCode::kInvalidArgument);
  CHECK(r.status().message().find("larger than a single ONNX protobuf may be") != std::string::npos);
  // The default: 2 GiB (protobuf's own cap), also enforced for files.
  CHECK(qairt::ImportOptions{}.max_model_bytes == uint64_t{2} << 30);
}

TEST_CASE("limit: encodings JSON nesting depth (64)", "[hostile][limits]") {
  qairt::encodings::ReadOptions o;
  REQUIRE(o.max_depth == 64);
  o.keep_going = false;  // strict, as QAIRT_ENCODINGS_LOAD_STRICT
  for (uint32_t levels : {64u, 65u, 100000u}) {
    const std::string text = NestedEncodings(levels);
    qairt::encodings::Diags d;
    auto r = qairt::encodings::ReadEncodingsBytes(text.data(), text.size(), "deep.json", o, &d);
    INFO("levels " << levels);
    CHECK(HasCode(d, "json-depth") == (levels > 64));
    CHECK(r.ok() == (levels <= 64));  // 10^5 levels: refused the same way, no stack overflow
  }
}

TEST_CASE("limit: encodings file bytes (max_bytes, default 1 GiB)", "[hostile][limits]") {
  Sandbox sb;
  std::string text = R"({"version":"2.0.0","encodings":[]})";
  text.resize(4096, ' ');
  qairt_encodings_load_options o;
  qairt_encodings_load_options_init(&o);
  o.max_bytes = 4096;
  qairt_encodings_t* enc = nullptr;
  CHECK(qairt_encodings_load_file(sb.Put("at.json", text).c_str(), &o, nullptr, &enc) == nullptr);
  qairt_encodings_destroy(enc);
  enc = nullptr;
  qairt_status_t* s = qairt_encodings_load_file(sb.Put("past.json", text + " ").c_str(), &o, nullptr, &enc);
  REQUIRE(s != nullptr);
  CHECK(qairt_status_code(s) == QAIRT_PARSE_ERROR);
  const std::string msg = qairt_status_message(s);
  CHECK(msg.find("past.json") != std::string::npos);
  CHECK(msg.find("above the limit of 4096 bytes") != std::string::npos);
  qairt_status_free(s);
  CHECK(enc == nullptr);
  CHECK(qairt::encodings::ReadOptions{}.max_bytes == uint64_t{1} << 30);
}

TEST_CASE("limit: input_list bytes (64 MiB) and samples (2^20)", "[hostile][limits]") {
  Sandbox sb;
  sb.Put("a.raw", std::string(8, '\0'));
  const std::vector<qairt::calib::InputSpec> inputs = {{"x", qairt::DType::kFloat32, {1, 2}, 8}};
  SECTION("bytes") {
    const std::string sample = "a.raw\n";
    std::string text = sample + "#";
    text.resize(qairt::calib::kMaxInputListBytes - 1, 'c');
    text += "\n";
    REQUIRE(text.size() == qairt::calib::kMaxInputListBytes);
    auto at = qairt::calib::ReadInputList(sb.Put("at.txt", text), inputs);
    INFO((at.ok() ? "" : at.status().message()));
    CHECK(at.ok());
    auto past = qairt::calib::ReadInputList(sb.Put("past.txt", text + "\n"), inputs);
    REQUIRE_FALSE(past.ok());
    CHECK(past.status().code() == qairt::StatusCode::kInvalidArgument);
    CHECK(past.status().message().find("past.txt") != std::string::npos);
    CHECK(past.status().message().find("more than the limit") != std::string::npos);
  }
  SECTION("samples") {
    std::string text;
    for (size_t i = 0; i < qairt::calib::kMaxSamples; ++i) text += "a.raw\n";
    auto at = qairt::calib::ReadInputList(sb.Put("at.txt", text), inputs);
    REQUIRE(at.ok());
    CHECK(at.value().samples.size() == qairt::calib::kMaxSamples);
    auto past = qairt::calib::ReadInputList(sb.Put("past.txt", text + "a.raw\n"), inputs);
    REQUIRE_FALSE(past.ok());
    CHECK(past.status().message().find("line 1048577: more than 1048576 samples") != std::string::npos);
  }
}

TEST_CASE("limit: target descriptor sizes and string lengths", "[hostile][limits]") {
  auto load = [](const std::string& bytes, std::string* error) {
    qairt_target_t* t = nullptr;
    qairt_status_t* s = qairt_target_load_bytes(bytes.data(), bytes.size(), &t);
    qairt_target_destroy(t);
    if (s) {
      *error = qairt_status_message(s);
      qairt_status_free(s);
    }
    return s == nullptr;
  };
  std::string error;
  SECTION("compiled descriptor: 16 MiB") {
    std::string bin = RepoFile("tests/fuzz/corpus/target/cpu.qatd");
    REQUIRE(bin.size() > 8);
    bin.resize(qairt::target::kMaxBinaryBytes, '\0');
    CHECK(load(bin, &error));
    INFO(error);
    CHECK_FALSE(load(bin + std::string(1, '\0'), &error));
    CHECK(error.find("16777216") != std::string::npos);
  }
  SECTION("JSON descriptor: 32 MiB") {
    std::string json = RepoFile("targets/builtin/cpu.json");
    json.resize(qairt::target::kMaxJsonBytes, ' ');
    CHECK(load(json, &error));
    INFO(error);
    CHECK_FALSE(load(json + " ", &error));
    CHECK(error.find("33554432") != std::string::npos);
  }
  SECTION("strings: 4096 bytes") {
    const std::string json = RepoFile("targets/builtin/cpu.json");
    const std::string from = R"("description": ")";
    const size_t at = json.find(from);
    REQUIRE(at != std::string::npos);
    const size_t end = json.find('"', at + from.size());
    auto with = [&](size_t n) {
      std::string j = json;
      j.replace(at + from.size(), end - at - from.size(), std::string(n, 'd'));
      return j;
    };
    CHECK(load(with(qairt::target::kMaxStringBytes), &error));
    CHECK_FALSE(load(with(qairt::target::kMaxStringBytes + 1), &error));
    CHECK(error.find("description") != std::string::npos);
    CHECK(error.find("4097 bytes long (limit 4096)") != std::string::npos);
  }
}

TEST_CASE("limit: container strings (1 MiB)", "[hostile][limits]") {
  const std::string model = qairt_fuzz::SmallConvModel();
  qairt_graph_t* g = nullptr;
  REQUIRE(qairt_import_onnx_bytes(model.data(), model.size(), nullptr, &g, nullptr) == nullptr);
  auto roundtrip = [&](size_t n, std::string* error) {
    const std::string value(n, 'v');
    qairt_container_option opt{"user.note", value.c_str(), QAIRT_OPTION_SOURCE_USER, 0};
    qairt_container_write_options wo;
    qairt_container_write_options_init(&wo);
    wo.num_options = 1;
    wo.options = &opt;
    size_t size = 0;
    qairt_status_t* s = qairt_container_write_bytes(g, &wo, nullptr, 0, &size);
    std::vector<uint8_t> bytes(size);
    if (!s) s = qairt_container_write_bytes(g, &wo, bytes.data(), bytes.size(), &size);
    qairt_container_t* c = nullptr;
    if (!s) s = qairt_container_load_bytes(bytes.data(), bytes.size(), &c);
    qairt_container_destroy(c);
    if (s) {
      *error = qairt_status_message(s);
      qairt_status_free(s);
    }
    return s == nullptr;
  };
  std::string error;
  CHECK(roundtrip(qairt::container::kMaxStringBytes, &error));
  INFO(error);
  CHECK_FALSE(roundtrip(qairt::container::kMaxStringBytes + 1, &error));
  CHECK(error.find("1048577 bytes long (limit 1048576)") != std::string::npos);
  qairt_graph_destroy(g);
}

TEST_CASE("limit: tensor rank through the C API (64)", "[hostile][limits]") {
  qairt_graph_t* g = nullptr;
  REQUIRE(qairt_graph_create(nullptr, &g) == nullptr);
  std::vector<int64_t> dims(65, 1);
  qairt_tensor_desc d;
  qairt_tensor_desc_init(&d);
  d.dtype = QAIRT_DTYPE_FLOAT32;
  d.name = "at";
  d.rank = 64;
  d.dims = dims.data();
  qairt_tensor_id id = 0;
  CHECK(qairt_graph_add_input(g, &d, &id) == nullptr);
  d.name = "past";
  d.rank = 65;
  qairt_status_t* s = qairt_graph_add_input(g, &d, &id);
  REQUIRE(s != nullptr);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  CHECK(std::string(qairt_status_message(s)).find("'past' with rank=65: rank must be <= 64") != std::string::npos);
  qairt_status_free(s);
  qairt_graph_destroy(g);
}
