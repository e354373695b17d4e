// Kernel selection beyond the descriptors' quantized/float kernel lists:
// integer tensors (token ids, positions, indices) are not quantized, and an op
// with a variable number of outputs shares its last output slot.
#include <catch2/catch.hpp>

#include "ir/graph.h"
#include "passes/pass_manager.h"
#include "pass_test_util.h"

namespace qairt {
namespace {

TEST_CASE("integer tensors need no quantized kernel; a Split's outputs share its output slot", "[passes]") {
  // Token ids: input int32 -> Add 1 -> Reshape -> Gather from an embedding;
  // the embedding output is split in two (Split has a variable number of
  // outputs; the descriptor describes one output slot).
  auto htp = target::LoadBuiltinTarget("htp_v73");
  REQUIRE(htp.ok());
  Graph g("ids");
  auto ids = g.AddInput("ids", DType::kInt32, Shape{1, 4}).value();
  std::vector<int32_t> one = {1};
  auto k1 = g.AddConstant("one", DType::kInt32, Shape{1}, StaticData::Copy(one.data(), 4)).value();
  auto add = g.AddOp("ElementWiseAdd", "shift", {ids, k1}, {"ids1"}).value();
  auto rs = g.AddOp("Reshape", "flat", {g.op(add).outputs[0]}, {"ids2"}, {{"shape", std::vector<int64_t>{4}}}).value();
  auto emb = g.AddConstant("emb", DType::kFloat32, Shape{8, 6}, testing::FloatData(testing::Ramp(48, -1.0f, 1.0f))).value();
  auto ga = g.AddOp("Gather", "embed", {emb, g.op(rs).outputs[0]}, {"e"}, {{"axis", int64_t{0}}}).value();
  auto sp = g.AddOp("Split", "halves", {g.op(ga).outputs[0]}, {"lo", "hi"},
                    {{"axis", int64_t{1}}, {"split", std::vector<int64_t>{3, 3}}}).value();
  REQUIRE(g.MarkOutput(g.op(sp).outputs[0]).ok());
  REQUIRE(g.MarkOutput(g.op(sp).outputs[1]).ok());
  REQUIRE(g.Validate().empty());
  pass::Options o;
  o.target = htp.value();
  o.act_bitwidth = 16;
  o.weights_bitwidth = 8;
  o.log_level = pass::LogLevel::kTrace;
  pass::ProcessResult r;
  REQUIRE(pass::Process(&g, o, &r).ok());
  INFO(r.log);
  CHECK(r.errors.empty());
  CHECK(r.log.find("[SELECTED KERN.] integer") != std::string::npos);
  CHECK(g.tensor(g.FindTensor("ids1").value()).dtype == DType::kInt32);
}

}  // namespace
}  // namespace qairt
