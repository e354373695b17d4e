// Malformed .tflite files (research notes tflite.md §5-§6: the official
// verifier's gaps and the CVEs that followed): each gives an error naming the
// field, and nothing crashes.
#include <catch2/catch.hpp>

#include <filesystem>

#include "tflite/tflite_builder.h"
#include "tflite/tflite_corrupt.h"
#include "tflite/tflite_import.h"

namespace qairt {
namespace {

using namespace tflite_test;  // NOLINT
using TT = tfb::TensorType;

// A valid int8 model: x -> CONV_2D(w, b) -> y -> ADD(y, c) -> z.
TModel Valid() {
  TModel m;
  const int x = m.Add({"x", {1, 4, 4, 2}, TT::INT8, {}, {0.5f}, {0}});
  const int w = m.Add({"w", {2, 1, 1, 2}, TT::INT8, Bytes(std::vector<int8_t>{1, 2, 3, 4}), {0.1f, 0.2f}, {0, 0}});
  const int b = m.Add({"b", {2}, TT::INT32, Bytes(std::vector<int32_t>{5, 6}), {0.05f, 0.1f}, {0, 0}});
  const int y = m.Add({"y", {1, 4, 4, 2}, TT::INT8, {}, {0.25f}, {1}});
  const int c = m.Add({"c", {1, 1, 1, 2}, TT::INT8, Bytes(std::vector<int8_t>{7, 8}), {0.25f}, {1}});
  const int z = m.Add({"z", {1, 4, 4, 2}, TT::INT8, {}, {0.5f}, {2}});
  m.Op(3, {x, w, b}, {y}, Conv(tfb::Padding::VALID, 1, 1));
  m.Op(0, {y, c}, {z}, AddOpts());
  m.inputs = {x};
  m.outputs = {z};
  return m;
}

std::string ImportError(const std::vector<uint8_t>& bytes) {
  ImportReport report;
  auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, &report);
  REQUIRE_FALSE(g.ok());
  CHECK_FALSE(report.diagnostics.empty());
  return g.status().message();
}

void ExpectError(const TModel& m, const std::string& needle) {
  const std::string msg = ImportError(Build(m));
  INFO(msg);
  CHECK_THAT(msg, Catch::Contains(needle));
}

TEST_CASE("the valid base model imports", "[tflite][hostile]") {
  const auto bytes = Build(Valid());
  auto g = ImportTfliteBytes(bytes.data(), bytes.size(), {}, nullptr);
  INFO((g.ok() ? std::string() : g.status().message()));
  REQUIRE(g.ok());
  // Misaligned bytes are copied before verification.
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  auto g2 = ImportTfliteBytes(shifted.data() + 1, bytes.size(), {}, nullptr);
  CHECK(g2.ok());
}

TEST_CASE("truncated and non-TFLite files", "[tflite][hostile]") {
  const auto bytes = Build(Valid());
  SECTION("truncated to half") {
    std::vector<uint8_t> half(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(bytes.size() / 2));
    CHECK_THAT(ImportError(half), Catch::Contains("FlatBuffers verifier rejected"));
  }
  SECTION("every truncation fails cleanly") {
    for (size_t n = 0; n < bytes.size(); n += 7) {
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
      auto g = ImportTfliteBytes(cut.data(), cut.size(), {}, nullptr);
      CHECK_FALSE(g.ok());
    }
  }
  SECTION("the 8-byte file of tensorflow#115308") {
    const std::vector<uint8_t> tiny = {0x18, 0, 0, 0, 'T', 'F', 'L', '3'};
    CHECK_THAT(ImportError(tiny), Catch::Contains("verifier rejected"));
  }
  SECTION("shorter than a header") {
    CHECK_THAT(ImportError({1, 2, 3}), Catch::Contains("too small for a TFLite model"));
  }
  SECTION("wrong identifier") {
    auto copy = bytes;
    copy[4] = 'X';
    CHECK_THAT(ImportError(copy), Catch::Contains("file identifier"));
  }
}

TEST_CASE("model-level fields", "[tflite][hostile]") {
  SECTION("schema version") {
    TModel m = Valid();
    m.version = 2;
    ExpectError(m, "version is 2");
  }
  SECTION("no subgraphs") {
    TModel m = Valid();
    m.no_subgraphs = true;
    ExpectError(m, "subgraphs is empty");
  }
  SECTION("metadata buffer out of range") {
    TModel m = Valid();
    m.metadata_buffer = 40;
    ExpectError(m, "metadata[0].buffer = 40 is out of range");
  }
}

TEST_CASE("indices: -1 and out of range (CVE-2020-15211, tflite-micro#3073)", "[tflite][hostile]") {
  SECTION("-1 in a non-optional input") {
    TModel m = Valid();
    m.ops[1].inputs[1] = -1;
    ExpectError(m, "subgraphs[0].operators[1] (ADD).inputs[1] is -1 (absent), but input 1 of ADD is not optional");
  }
  SECTION("-1 as the conv filter") {
    TModel m = Valid();
    m.ops[0].inputs[1] = -1;
    ExpectError(m, "operators[0] (CONV_2D).inputs[1] is -1");
  }
  SECTION("input index past the tensors") {
    TModel m = Valid();
    m.ops[0].inputs[0] = 99;
    ExpectError(m, "operators[0] (CONV_2D).inputs[0] = 99 is out of range (6 tensors)");
  }
  SECTION("negative input index other than -1") {
    TModel m = Valid();
    m.ops[0].inputs[0] = -7;
    ExpectError(m, "inputs[0] = -7 is out of range");
  }
  SECTION("output -1") {
    TModel m = Valid();
    m.ops[1].outputs[0] = -1;
    ExpectError(m, "operators[1] (ADD).outputs[0] = -1 is out of range");
  }
  SECTION("subgraph input -1") {
    TModel m = Valid();
    m.inputs = {-1};
    ExpectError(m, "subgraphs[0].inputs[0] = -1 is out of range");
  }
  SECTION("subgraph output past the tensors") {
    TModel m = Valid();
    m.outputs = {6};
    ExpectError(m, "subgraphs[0].outputs[0] = 6 is out of range (6 tensors)");
  }
  SECTION("opcode_index past operator_codes") {
    TModel m = Valid();
    m.ops[1].opcode_index = 5;
    ExpectError(m, "operators[1].opcode_index = 5 is out of range (2 operator_codes)");
  }
  SECTION("builtin code outside the enum") {
    TModel m = Valid();
    m.ops[1].code = 5000;
    ExpectError(m, "operator_codes[1]: builtin code 5000");
  }
  SECTION("negative deprecated and builtin code") {
    TModel m = Valid();
    m.ops[1].code = -3;
    m.ops[1].deprecated_code = -1;
    ExpectError(m, "operator_codes[1]: builtin code -1");
  }
  SECTION("tensor buffer index past the buffers") {
    TModel m = Valid();
    m.tensors[1].buffer_index = 99;
    ExpectError(m, "subgraphs[0].tensors[1] 'w'.buffer = 99 is out of range");
  }
  SECTION("input read before it is produced") {
    TModel m = Valid();
    std::swap(m.ops[0], m.ops[1]);
    ExpectError(m, "operators[0] (ADD).inputs[0] = 3 ('y') is neither a constant, a subgraph input nor the output "
                   "of an earlier operator");
  }
  SECTION("a tensor produced twice") {
    TModel m = Valid();
    m.ops[1].outputs[0] = 3;
    ExpectError(m, "operators[1] (ADD).outputs[0] = 3 is already");
  }
  SECTION("a constant overwritten by an op") {
    TModel m = Valid();
    m.ops[1].outputs[0] = 1;
    ExpectError(m, "outputs[0] = 1 is already a constant");
  }
}

TEST_CASE("shapes and buffer sizes (CVE-2022-23558, CVE-2020-15209)", "[tflite][hostile]") {
  SECTION("negative dim") {
    TModel m = Valid();
    m.tensors[3].shape = {1, -3, 4, 2};
    ExpectError(m, "tensors[3] 'y'.shape[1] = -3 is negative");
  }
  SECTION("overflowing element count") {
    TModel m = Valid();
    m.tensors[3].shape = {1 << 30, 1 << 30, 1 << 30, 2};
    ExpectError(m, "tensors[3] 'y'.shape: the element count overflows");
  }
  SECTION("constant data shorter than the shape") {
    TModel m = Valid();
    m.tensors[1].data.pop_back();
    ExpectError(m, "tensors[1] 'w': buffers[1] holds 3 bytes, but shape [2, 1, 1, 2] (4 elements of INT8) needs 4");
  }
  SECTION("int4 data is nibble-packed: 3 elements need 2 bytes") {
    TModel m = Valid();
    m.tensors[4].type = TT::INT4;
    m.tensors[4].shape = {1, 1, 1, 3};
    m.tensors[4].data = {0x21, 0x03, 0x00};
    m.tensors[4].scale = {0.25f};
    m.tensors[4].zero_point = {0};
    ExpectError(m, "tensors[4] 'c': buffers[3] holds 3 bytes, but shape [1, 1, 1, 3] (3 elements of INT4) needs 2");
  }
  SECTION("rank 17") {
    TModel m = Valid();
    m.tensors[3].shape = std::vector<int32_t>(17, 1);
    ExpectError(m, "tensors[3] 'y'.shape has rank 17");
  }
}

TEST_CASE("external buffers (tensorflow#116632)", "[tflite][hostile]") {
  SECTION("offset past the end of the file") {
    TModel m = Valid();
    m.tensors[1].data.clear();
    m.tensors[1].external = {{1u << 20, 4}};
    ExpectError(m, "buffers[1].offset = 1048576 + size = 4 is past the end of the file");
  }
  SECTION("offset + size wraps around 2^64") {
    TModel m = Valid();
    m.tensors[1].data.clear();
    m.tensors[1].external = {{16, UINT64_MAX - 8}};
    ExpectError(m, "buffers[1].offset = 16 + size = 18446744073709551607 is past the end of the file");
  }
  SECTION("schema 3d external_buffer") {
    TModel m = Valid();
    m.tensors[1].external_buffer = 3;
    ExpectError(m, "tensors[1] 'w'.external_buffer = 3");
  }
}

TEST_CASE("quantization parameters (unchecked by the official verifier)", "[tflite][hostile]") {
  SECTION("quantized_dimension past the rank") {
    TModel m = Valid();
    m.tensors[1].quantized_dimension = 7;
    ExpectError(m, "tensors[1] 'w'.quantization.quantized_dimension = 7 is out of range for a rank-4 tensor");
  }
  SECTION("negative quantized_dimension") {
    TModel m = Valid();
    m.tensors[1].quantized_dimension = -1;
    ExpectError(m, "quantized_dimension = -1 is out of range");
  }
  SECTION("scale count differs from the channel count") {
    TModel m = Valid();
    m.tensors[1].scale = {0.1f, 0.2f, 0.3f};
    m.tensors[1].zero_point = {0, 0, 0};
    ExpectError(m, "tensors[1] 'w'.quantization.scale has 3 values but dim 0 (quantized_dimension) has 2");
  }
  SECTION("zero_point count differs from scale count") {
    TModel m = Valid();
    m.tensors[1].zero_point = {0};
    ExpectError(m, "tensors[1] 'w'.quantization.zero_point has 1 values, scale has 2");
  }
  SECTION("zero point outside int8") {
    TModel m = Valid();
    m.tensors[0].zero_point = {300};
    ExpectError(m, "tensors[0] 'x'.quantization.zero_point[0] = 300 is outside the INT8 range [-128, 127]");
  }
  SECTION("zero scale") {
    TModel m = Valid();
    m.tensors[3].scale = {0.0f};
    ExpectError(m, "tensors[3] 'y'.quantization.scale[0] = 0 must be finite, normal and > 0");
  }
  SECTION("NaN scale") {
    TModel m = Valid();
    m.tensors[3].scale = {std::nanf("")};
    ExpectError(m, "tensors[3] 'y'.quantization.scale[0]");
  }
  SECTION("blockwise details") {
    TModel m = Valid();
    m.tensors[1].details_type = 2;
    ExpectError(m, "tensors[1] 'w'.quantization.details: blockwise quantization is not supported");
  }
  SECTION("multi-axis details") {
    TModel m = Valid();
    m.tensors[1].details_type = 3;
    ExpectError(m, "multi-axis quantization is not supported");
  }
}

TEST_CASE("refused structures: malformed sparsity, subgraph recursion, control flow, custom ops", "[tflite][hostile]") {
  SECTION("sparse tensor (CVE-2022-23560)") {
    TModel m = Valid();
    m.tensors[1].sparse = true;
    ExpectError(m, "tensors[1] 'w'.sparsity: traversal_order has 2 entries; a rank-4 tensor with 0 block dims needs 4");
  }
  SECTION("WHILE whose body is the main subgraph (CVE-2021-29591)") {
    TModel m = Valid();
    m.extra_subgraphs = 1;
    m.Op(119, {5}, {m.Add({"loop", {1, 4, 4, 2}, TT::INT8, {}, {0.5f}, {2}})}, While(1, 0));
    ExpectError(m, "subgraphs[0] calls subgraphs[0] (IF/WHILE builtin_options), which is already on the call path: "
                   "subgraph recursion");
  }
  SECTION("WHILE subgraph index out of range") {
    TModel m = Valid();
    m.Op(119, {5}, {m.Add({"loop", {1, 4, 4, 2}, TT::INT8, {}, {0.5f}, {2}})}, While(1, 7));
    ExpectError(m, "builtin_options.cond_subgraph_index = 1 is out of range (1 subgraphs)");
  }
  SECTION("valid WHILE is still rejected by name") {
    TModel m = Valid();
    m.extra_subgraphs = 2;
    const int out = m.Add({"loop", {1, 4, 4, 2}, TT::INT8, {}, {0.5f}, {2}});
    m.Op(119, {5}, {out}, While(1, 2));
    m.outputs = {out};
    ExpectError(m, "control flow (IF/WHILE/CALL_ONCE) is not supported");
  }
  SECTION("CUSTOM without a name") {
    TModel m = Valid();
    m.ops[1].code = 32;
    ExpectError(m, "operator_codes[1].custom_code is empty for a CUSTOM op");
  }
  SECTION("variable tensor") {
    TModel m = Valid();
    m.tensors[3].is_variable = true;
    ExpectError(m, "outputs[0] = 3 is already a constant, variable");
  }
}

TEST_CASE("fuzzer findings (tests/data/tflite/fuzz_*.tflite) import or fail cleanly", "[tflite][hostile]") {
  // Found by fuzz_tflite under ASan/UBSan: a zero_point vector of int64 at 4
  // mod 8 (the verifier checks a vector's length prefix for alignment, not its
  // 8-byte elements), and a DEQUANTIZE whose output shape is far larger than
  // its constant input (the weight permutation allocated for the output shape).
  const auto dir = std::filesystem::path(__FILE__).parent_path().parent_path() / "data/tflite";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("fuzz_", 0) != 0) continue;
    ++files;
    INFO(entry.path().string());
    ImportReport report;
    auto g = ImportTfliteFile(entry.path().string(), {}, &report);
    if (g.ok()) CHECK(g.value().Validate().empty());
    else CHECK_FALSE(g.status().message().empty());
    if (entry.path().filename() == "fuzz_dequantize_shape_mismatch.tflite") {
      REQUIRE_FALSE(g.ok());
      CHECK_THAT(g.status().message(), Catch::Contains("differ in size"));
    }
  }
  CHECK(files >= 2);
}

TEST_CASE("random byte corruption never crashes the importer", "[tflite][hostile]") {
  const auto bytes = Build(Valid());
  const CorruptionOutcome o = ImportCorrupted(bytes, 20261129, 4, 20000);
  CHECK(o.failed > 0);
}

}  // namespace
}  // namespace qairt
