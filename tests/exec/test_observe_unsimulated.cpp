// Executor observers see outputs after their quantization is simulated, or,
// with observe_unsimulated, as the op computed them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "exec/executor.h"

using namespace qairt;

TEST_CASE("observe_unsimulated shows an output before it is rounded to its encoding", "[exec]") {
  Graph g;
  const TensorId x = g.AddInput("x", DType::kFloat32, Shape{4}).value();
  const OpId op = g.AddOp("Relu", "relu", {x}, {"y"}).value();
  const TensorId y = g.op(op).outputs[0];
  REQUIRE(g.MarkOutput(y).ok());
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = DType::kUFixed8;
  e.scales = {0.5f};
  e.offsets = {0};
  REQUIRE(g.SetEncoding(y, e).ok());
  const std::vector<float> in = {0.3f, 1.2f, -1.f, 2.6f};
  std::vector<uint8_t> bytes(16);
  std::memcpy(bytes.data(), in.data(), 16);
  for (bool before : {false, true}) {
    exec::Options o;
    o.observe_unsimulated = before;
    auto ex = exec::Executor::Create(g, o);
    REQUIRE(ex.ok());
    std::vector<float> seen;
    exec::Observer obs = [&](const exec::ObservedTensor& t) {
      if (t.id == y) seen.assign(static_cast<const float*>(t.data), static_cast<const float*>(t.data) + 4);
      return Status::Ok();
    };
    auto out = ex.value()->Run(std::vector<std::vector<uint8_t>>{bytes}, &obs);
    REQUIRE(out.ok());
    REQUIRE(seen.size() == 4);
    std::vector<float> result(4);
    std::memcpy(result.data(), out.value()[0].bytes.data(), 16);
    CHECK(result == std::vector<float>{0.5f, 1.f, 0.f, 2.5f});  // the output is rounded either way
    if (before) CHECK(seen == std::vector<float>{0.3f, 1.2f, 0.f, 2.6f});
    else CHECK(seen == result);
  }
}
