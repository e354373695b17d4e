// The TFLite import C API: same options, graph and report as the ONNX one;
// hostile bytes give a status naming the field and a report saying why.
#include <catch2/catch.hpp>

#include <qairt/qairt_import.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tflite/tflite_builder.h"

namespace qairt {
namespace {

using namespace tflite_test;  // NOLINT
using TT = tfb::TensorType;

std::string ReportJson(const qairt_import_report_t* r) {
  size_t len = 0;
  REQUIRE(qairt_import_report_json(r, nullptr, 0, &len) == nullptr);
  std::string s(len + 1, '\0');
  REQUIRE(qairt_import_report_json(r, s.data(), s.size(), &len) == nullptr);
  s.resize(len);
  return s;
}

TModel Small() {
  TModel m;
  const int x = m.Add({"x", {1, 2, 2, 2}, TT::INT8, {}, {0.5f}, {-1}});
  const int w = m.Add({"w", {3, 1, 1, 2}, TT::INT8, Bytes(std::vector<int8_t>{1, 2, 3, 4, 5, 6}), {0.25f}, {0}});
  const int y = m.Add({"y", {1, 2, 2, 3}, TT::INT8, {}, {0.75f}, {4}});
  m.Op(3, {x, w, -1}, {y}, Conv(tfb::Padding::VALID, 1, 1, tfb::ActivationFunctionType::RELU));
  m.inputs = {x};
  m.outputs = {y};
  return m;
}

TEST_CASE("qairt_import_tflite_bytes/file: graph, report and options", "[tflite][capi]") {
  const auto bytes = Build(Small());
  qairt_import_options opts;
  qairt_import_options_init(&opts);
  opts.flags = QAIRT_IMPORT_REQUIRE_STATIC;
  qairt_graph_t* g = nullptr;
  qairt_import_report_t* report = nullptr;
  qairt_status_t* s = qairt_import_tflite_bytes(bytes.data(), bytes.size(), &opts, &g, &report);
  INFO((s ? qairt_status_message(s) : ""));
  REQUIRE(s == nullptr);
  REQUIRE(g != nullptr);
  CHECK(qairt_import_report_ok(report) == 1);
  const std::string json = ReportJson(report);
  CHECK(json.find("\"opsets\":{\"tflite\":3}") != std::string::npos);
  CHECK(json.find("\"CONV_2D\"") != std::string::npos);
  qairt_import_report_destroy(report);
  qairt_graph_destroy(g);

  // The same from a file.
  const auto path = std::filesystem::temp_directory_path() / "qairt_test_tflite_capi.tflite";
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
  g = nullptr;
  REQUIRE(qairt_import_tflite_file(path.c_str(), nullptr, &g, nullptr) == nullptr);
  REQUIRE(g != nullptr);
  qairt_graph_destroy(g);
  std::filesystem::remove(path);
}

TEST_CASE("qairt_import_tflite_*: argument and file errors", "[tflite][capi]") {
  qairt_graph_t* g = nullptr;
  qairt_status_t* s = qairt_import_tflite_file(nullptr, nullptr, &g, nullptr);
  REQUIRE(s != nullptr);
  CHECK(qairt_status_code(s) == QAIRT_INVALID_ARGUMENT);
  qairt_status_free(s);
  s = qairt_import_tflite_file("/nonexistent/model.tflite", nullptr, &g, nullptr);
  REQUIRE(s != nullptr);
  CHECK(std::string(qairt_status_message(s)).find("/nonexistent/model.tflite") != std::string::npos);
  qairt_status_free(s);

  TModel m = Small();
  m.tensors[1].quantized_dimension = 9;
  const auto bytes = Build(m);
  qairt_import_report_t* report = nullptr;
  s = qairt_import_tflite_bytes(bytes.data(), bytes.size(), nullptr, &g, &report);
  REQUIRE(s != nullptr);
  CHECK(std::string(qairt_status_message(s)).find("'w'.quantization.quantized_dimension = 9") != std::string::npos);
  qairt_status_free(s);
  REQUIRE(report != nullptr);
  CHECK(qairt_import_report_ok(report) == 0);
  CHECK(ReportJson(report).find("quantized_dimension = 9") != std::string::npos);
  qairt_import_report_destroy(report);
  CHECK(g == nullptr);
}

}  // namespace
}  // namespace qairt
