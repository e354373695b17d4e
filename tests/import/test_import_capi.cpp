// The import C API and its report (what `qairt inspect` / `convert --dry_run
// --json` print).
#include <catch2/catch.hpp>

#include <qairt/qairt_import.h>

#include "capi/capi_internal.h"
#include "import/onnx_model_builder.h"

namespace qairt {
namespace {

using testing::OnnxModelBuilder;
using P = onnx::TensorProto;

std::string Json(const qairt_import_report_t* r) {
  size_t len = 0;
  REQUIRE(qairt_import_report_json(r, nullptr, 0, &len) == nullptr);
  std::string s(len + 1, '\0');
  REQUIRE(qairt_import_report_json(r, s.data(), s.size(), &len) == nullptr);
  s.resize(len);
  return s;
}

std::string DynamicModel() {
  OnnxModelBuilder b(13);
  b.Input("image", P::FLOAT, {-1, 3, 8, 8});
  b.Init<float>("w", P::FLOAT, {4, 3, 1, 1}, std::vector<float>(12, 0.5f));
  b.Node("Conv", {"image", "w"}, {"feat"}, "conv");
  b.Node("Unknown", {"feat"}, {"odd"}, "mystery");
  b.Node("Relu", {"feat"}, {"out"}, "relu");
  b.Output("out", P::FLOAT, {-1, 4, 8, 8});
  return b.Bytes();
}

TEST_CASE("import report lists inputs, outputs, ops and problems", "[import][capi]") {
  const std::string bytes = DynamicModel();
  qairt_graph_t* g = nullptr;
  qairt_import_report_t* report = nullptr;
  qairt_status_t* s = qairt_import_onnx_bytes(bytes.data(), bytes.size(), nullptr, &g, &report);
  REQUIRE(qairt_status_code(s) == QAIRT_VALIDATION_FAILED);
  CHECK(std::string(qairt_status_message(s)).find("mystery") != std::string::npos);
  qairt_status_free(s);
  CHECK(g == nullptr);
  REQUIRE(report != nullptr);
  CHECK(qairt_import_report_ok(report) == 0);
  const std::string json = Json(report);
  CHECK(json.find("\"ok\":false") != std::string::npos);
  CHECK(json.find("\"unsupported\":[\"node 'mystery' (Unknown)\"]") != std::string::npos);
  CHECK(json.find("\"Conv\":1") != std::string::npos);
  qairt_import_report_destroy(report);
}

TEST_CASE("dry-run import requires static shapes and says which symbol is left", "[import][capi]") {
  OnnxModelBuilder b(13);
  b.Input("image", P::FLOAT, {-1, 3, 8, 8});
  b.Node("Relu", {"image"}, {"out"}, "relu");
  b.Output("out", P::FLOAT, {-1, 3, 8, 8});
  const std::string bytes = b.Bytes();
  qairt_import_options o;
  qairt_import_options_init(&o);
  o.flags = QAIRT_IMPORT_REQUIRE_STATIC;
  qairt_graph_t* g = nullptr;
  qairt_import_report_t* report = nullptr;
  qairt_status_t* s = qairt_import_onnx_bytes(bytes.data(), bytes.size(), &o, &g, &report);
  REQUIRE(qairt_status_code(s) == QAIRT_VALIDATION_FAILED);
  CHECK(std::string(qairt_status_message(s)).find("tensor 'image' dim 0 ('d0')") != std::string::npos);
  qairt_status_free(s);
  qairt_import_report_destroy(report);

  const char* names[] = {"d0"};
  const int64_t values[] = {2};
  o.num_define_symbols = 1;
  o.define_symbol_names = names;
  o.define_symbol_values = values;
  s = qairt_import_onnx_bytes(bytes.data(), bytes.size(), &o, &g, &report);
  REQUIRE(s == nullptr);
  REQUIRE(g != nullptr);
  CHECK(qairt_import_report_ok(report) == 1);
  const std::string json = Json(report);
  CHECK(json.find("\"inputs\":[{\"name\":\"image\",\"dtype\":\"float32\",\"shape\":[2,3,8,8],\"static\":true}]") !=
        std::string::npos);
  CHECK(json.find("\"outputs\":[{\"name\":\"out\",\"dtype\":\"float32\",\"shape\":[2,3,8,8],\"static\":true}]") !=
        std::string::npos);
  CHECK(qairt_graph_op_count(g) == 1);
  qairt_import_report_destroy(report);
  qairt_graph_destroy(g);
}

TEST_CASE("import options are checked", "[import][capi]") {
  const std::string bytes = DynamicModel();
  qairt_import_options o;
  qairt_import_options_init(&o);
  o.flags = 0x80;
  qairt_graph_t* g = nullptr;
  qairt_status_t* s = qairt_import_onnx_bytes(bytes.data(), bytes.size(), &o, &g, nullptr);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);
  const char* names[] = {"d0"};
  const int64_t values[] = {-3};
  qairt_import_options_init(&o);
  o.num_define_symbols = 1;
  o.define_symbol_names = names;
  o.define_symbol_values = values;
  s = qairt_import_onnx_bytes(bytes.data(), bytes.size(), &o, &g, nullptr);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  CHECK(std::string(qairt_status_message(s)).find("d0") != std::string::npos);
  qairt_status_free(s);
  CHECK(g == nullptr);
}

}  // namespace
}  // namespace qairt
