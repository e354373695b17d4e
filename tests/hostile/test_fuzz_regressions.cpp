// Regression tests for what the fuzz targets (tests/fuzz) found: each input
// is kept in the target's seed corpus (tests/fuzz/corpus/<target>/regress_*)
// and checked here in the normal unit tests, with the exact error expected.
#include "fuzz/fuzz_models.h"
#include "hostile/hostile_util.h"
#include "qairt/qairt_encodings.h"
#include "qairt/qairt_import.h"

namespace fs = std::filesystem;

namespace {

std::string Seed(const std::string& rel) {
  return (fs::path(__FILE__).parent_path().parent_path() / "fuzz/corpus" / rel).string();
}

qairt::hostile::Outcome ImportBytes(const std::string& bytes) {
  qairt::hostile::Outcome out;
  qairt_graph_t* g = nullptr;
  if (qairt_status_t* s = qairt_import_onnx_bytes(bytes.data(), bytes.size(), nullptr, &g, nullptr)) {
    out.code = qairt_status_code(s);
    out.message = qairt_status_message(s);
    qairt_status_free(s);
  }
  qairt_graph_destroy(g);
  return out;
}

}  // namespace

TEST_CASE("fuzz_onnx: a Conv with only its X input is an error naming the weight, not an internal error",
          "[hostile][fuzz]") {
  // Found by fuzz_onnx (mutated Q-DQ seed): the Conv lowering read input 1
  // past the end of NodeProto.input, a protobuf CHECK (QAIRT_INTERNAL).
  const auto found = ImportBytes(qairt::hostile::Slurp(Seed("onnx/regress_conv_one_input.onnx")));
  INFO(found.message);
  CHECK(found.code == QAIRT_VALIDATION_FAILED);
  CHECK(found.message.find("(Conv): weight must have rank >= 3") != std::string::npos);

  // The same defect built on purpose: Conv(x) with no weight.
  qairt::testing::OnnxModelBuilder b;
  b.Input("x", 1, {1, 2, 4, 4});
  b.Output("y", 1, {1, 2, 4, 4});
  b.Node("Conv", {"x"}, {"y"}, "lonely_conv");
  const auto built = ImportBytes(b.Bytes());
  INFO(built.message);
  CHECK(built.code == QAIRT_VALIDATION_FAILED);
  CHECK(built.message.find("lonely_conv") != std::string::npos);
  CHECK(built.message.find("weight must have rank >= 3") != std::string::npos);
}

TEST_CASE("fuzz_onnx: a QuantizeLinear or DequantizeLinear whose input name is empty is an error naming the input",
          "[hostile][fuzz]") {
  // Found by fuzz_onnx (mutated Q-DQ seed): the Q/DQ lowerings looked up
  // input 0 by name without checking it was given; an empty name found no
  // value and the lowering dereferenced a null pointer (a crash).
  const auto found = ImportBytes(qairt::hostile::Slurp(Seed("onnx/regress_dq_empty_input.onnx")));
  INFO(found.message);
  CHECK(found.code == QAIRT_VALIDATION_FAILED);
  CHECK(found.message.find("(DequantizeLinear): input 0 is required but its name is empty") != std::string::npos);

  for (const std::string op : {"QuantizeLinear", "DequantizeLinear"}) {
    for (const bool short_list : {false, true}) {
      qairt::testing::OnnxModelBuilder b;
      b.Output("y", 1, {1});
      b.Init<float>("s", 1, {}, {0.1f});
      b.Init<uint8_t>("z", 2, {}, {0});
      b.Node(op, short_list ? std::vector<std::string>{} : std::vector<std::string>{"", "s", "z"}, {"y"}, "q_node");
      const auto built = ImportBytes(b.Bytes());
      INFO(op << (short_list ? " without inputs: " : " with an empty input name: ") << built.message);
      CHECK(built.code == QAIRT_VALIDATION_FAILED);
      CHECK(built.message.find("q_node") != std::string::npos);
      CHECK(built.message.find(short_list ? "input 0 is required but the node has only 0 inputs"
                                          : "input 0 is required but its name is empty") != std::string::npos);
    }
  }
}

TEST_CASE("fuzz_onnx: a node without outputs is an error naming it", "[hostile][fuzz]") {
  // Found by fuzz_onnx (a bit flipped in a Q-DQ seed): a QuantizeLinear
  // with no outputs; its lowering read output 0, a protobuf CHECK
  // (QAIRT_INTERNAL).
  const auto found = ImportBytes(qairt::hostile::Slurp(Seed("onnx/regress_q_without_output.onnx")));
  INFO(found.message);
  CHECK(found.code == QAIRT_VALIDATION_FAILED);
  CHECK(found.message.find("(QuantizeLinear): the node has no outputs") != std::string::npos);

  for (const std::vector<std::string>& outs : {std::vector<std::string>{}, std::vector<std::string>{""}}) {
    qairt::testing::OnnxModelBuilder b;
    b.Input("x", 1, {1, 4});
    b.Output("y", 1, {1, 4});
    b.Node("Relu", {"x"}, {"y"}, "relu");
    b.Node("Sigmoid", {"x"}, outs, "silent");
    const auto built = ImportBytes(b.Bytes());
    INFO(outs.size() << " output names: " << built.message);
    CHECK(built.code == QAIRT_VALIDATION_FAILED);
    CHECK(built.message.find("node 'silent' (Sigmoid): the node has no outputs") != std::string::npos);
  }
}

TEST_CASE("fuzz_onnx: a Reshape whose target shape overflows int64 is refused without overflowing",
          "[hostile][fuzz]") {
  // Found by fuzz_onnx under UBSan: folding a Reshape of a constant
  // multiplied the target's dimensions unchecked (66 x 3.4e18). The
  // sanitizer build aborts on the overflow, so this runs the fold there.
  const auto found = ImportBytes(qairt::hostile::Slurp(Seed("onnx/regress_reshape_overflow.onnx")));
  INFO(found.message);
  CHECK(found.code != QAIRT_INTERNAL);

  qairt::testing::OnnxModelBuilder b;
  b.Output("y", 1, {6});
  b.Init<float>("c", 1, {2, 3}, {1, 2, 3, 4, 5, 6});
  b.Init<int64_t>("shape", 7, {2}, {66, 3386706919782612991});
  b.Node("Reshape", {"c", "shape"}, {"y"}, "reshape");
  const auto built = ImportBytes(b.Bytes());
  INFO(built.message);
  CHECK(built.code == QAIRT_VALIDATION_FAILED);
  CHECK(built.message.find("reshape") != std::string::npos);
}

TEST_CASE("fuzz_encodings: a duplicated entry is dropped and the first one keeps its values", "[hostile][fuzz]") {
  // Found by fuzz_encodings: removing the duplicate self-move-assigned the
  // entries before it, which emptied their scales; writing them then failed
  // with QAIRT_INTERNAL (vector::at).
  const std::string text = qairt::hostile::Slurp(Seed("encodings/regress_duplicate_entry.json"));
  qairt_encodings_t* enc = nullptr;
  REQUIRE(qairt_encodings_load_bytes(text.data(), text.size(), "dup.json", nullptr, nullptr, &enc) == nullptr);
  REQUIRE(qairt_encodings_entry_count(enc) == 1);
  qairt_encoding_t* e = nullptr;
  REQUIRE(qairt_encodings_entry_encoding(enc, 0, &e) == nullptr);
  const float* scales = nullptr;
  size_t n = 0;
  qairt_encoding_scales(e, &scales, &n);
  REQUIRE(n == 1);
  CHECK(scales[0] == 0.001f);  // the first entry's value
  qairt_encoding_destroy(e);
  size_t len = 0;
  qairt_status_t* s = qairt_encodings_write_bytes(enc, nullptr, nullptr, nullptr, nullptr, 0, &len);
  INFO((s ? qairt_status_message(s) : ""));
  CHECK(s == nullptr);
  qairt_status_free(s);
  CHECK(len > 0);
  qairt_encodings_destroy(enc);
}
