// Validation must report every injected defect in a single call.
#include <catch2/catch.hpp>

#include <set>

#include "ir/graph.h"

namespace qairt {
namespace {

std::shared_ptr<const StaticData> Floats(size_t n) {
  std::vector<float> v(n, 0.5f);
  return StaticData::Copy(v.data(), v.size() * sizeof(float));
}

bool HasKind(const Diagnostics& d, DiagKind k, const std::string& needle) {
  for (const Diagnostic& x : d)
    if (x.kind == k && x.message.find(needle) != std::string::npos) return true;
  return false;
}

TEST_CASE("a valid graph has no diagnostics", "[validate]") {
  Graph g("ok");
  auto x = g.AddInput("x", DType::kFloat32, Shape{2, 3}).value();
  auto r = g.AddOp("Relu", "relu", {x}, {"y"}).value();
  REQUIRE(g.MarkOutput(g.op(r).outputs[0]).ok());
  Diagnostics d = g.Validate();
  INFO(JoinMessages(d));
  CHECK(d.empty());
  CHECK(g.tensor(g.op(r).outputs[0]).shape == Shape({2, 3}));
  CHECK(g.tensor(g.op(r).outputs[0]).dtype == DType::kFloat32);
}

TEST_CASE("validation reports every defect kind at once", "[validate]") {
  Graph g("broken");
  auto x = g.AddInput("x", DType::kFloat32, Shape{3, 3}).value();
  auto i64 = g.AddInput("idx", DType::kInt64, Shape{3, 3}).value();

  // 1. cycle: a reads t2, b reads t1, a writes t1, b writes t2.
  auto t1 = g.AddTensor("t1").value();
  auto t2 = g.AddTensor("t2").value();
  REQUIRE(g.AddOp({"Relu", "cycle_a", {t2}, {t1}, {}, "", ""}).ok());
  REQUIRE(g.AddOp({"Relu", "cycle_b", {t1}, {t2}, {}, "", ""}).ok());

  // 2. duplicate tensor name; 3. duplicate op name.
  REQUIRE(g.AddConstant("x", DType::kFloat32, Shape{1}, Floats(1)).ok());
  REQUIRE(g.AddOp("Relu", "dup_op", {x}, {"d1"}).ok());
  REQUIRE(g.AddOp("Relu", "dup_op", {x}, {"d2"}).ok());

  // 4. dangling: reads a tensor nothing defines.
  auto ghost = g.AddTensor("ghost").value();
  REQUIRE(g.AddOp("Relu", "reads_ghost", {ghost}, {"after_ghost"}).ok());

  // 5. missing producer: an output nobody produces.
  auto orphan = g.AddTensor("orphan", DType::kFloat32, Shape{1}).value();
  REQUIRE(g.MarkOutput(orphan).ok());

  // 6. two producers of one tensor.
  auto shared = g.AddTensor("shared").value();
  REQUIRE(g.AddOp({"Relu", "writer_1", {x}, {shared}, {}, "", ""}).ok());
  REQUIRE(g.AddOp({"Sigmoid", "writer_2", {x}, {shared}, {}, "", ""}).ok());

  // 7. dtype mismatch between the inputs of an elementwise op.
  REQUIRE(g.AddOp("ElementWiseAdd", "float_plus_int", {x, i64}, {"mixed"}).ok());
  // 7b. declared output dtype disagrees with the op.
  auto bad_dtype = g.AddTensor("declared_int", DType::kInt32, Shape{3, 3}).value();
  REQUIRE(g.AddOp({"Relu", "relu_to_int", {x}, {bad_dtype}, {}, "", ""}).ok());

  // 8. declared output shape disagrees with the op.
  auto bad_shape = g.AddTensor("declared_2x2", DType::kFloat32, Shape{2, 2}).value();
  REQUIRE(g.AddOp({"Relu", "relu_to_2x2", {x}, {bad_shape}, {}, "", ""}).ok());

  // 9. arity: Conv2d with one input.
  REQUIRE(g.AddOp("Conv2d", "conv_no_weight", {x}, {"conv_out"}).ok());

  // 10. attribute: Transpose with a bad permutation.
  REQUIRE(g.AddOp("Transpose", "bad_perm", {x}, {"tr"}, {{"perm", std::vector<int64_t>{0, 0}}}).ok());

  // 11. unknown op type.
  REQUIRE(g.AddOp("FrobnicateTensor", "mystery", {x}, {"frob"}).ok());

  // 12. encoding that became invalid once the shape was known: per-channel
  // encoding with 5 scales set on a tensor of unknown shape, later inferred as [3, 3].
  auto late = g.AddTensor("late").value();
  Encoding pc;
  pc.kind = EncodingKind::kPerChannel;
  pc.dtype = DType::kSFixed8;
  pc.axis = 0;
  pc.scales = {1, 1, 1, 1, 1};
  REQUIRE(g.SetEncoding(late, pc).ok());
  REQUIRE(g.AddOp({"Relu", "makes_late", {x}, {late}, {}, "", ""}).ok());

  const Diagnostics d = g.Validate();
  INFO(JoinMessages(d));
  CHECK(HasKind(d, DiagKind::kCycle, "cycle_a"));
  CHECK(HasKind(d, DiagKind::kDuplicateTensorName, "'x'"));
  CHECK(HasKind(d, DiagKind::kDuplicateOpName, "'dup_op'"));
  CHECK(HasKind(d, DiagKind::kDanglingTensor, "'ghost'"));
  CHECK(HasKind(d, DiagKind::kMissingProducer, "'orphan'"));
  CHECK(HasKind(d, DiagKind::kMultipleProducers, "'shared'"));
  CHECK(HasKind(d, DiagKind::kDTypeMismatch, "float_plus_int"));
  CHECK(HasKind(d, DiagKind::kDTypeMismatch, "declared_int"));
  CHECK(HasKind(d, DiagKind::kShapeMismatch, "declared_2x2"));
  CHECK(HasKind(d, DiagKind::kArity, "conv_no_weight"));
  CHECK(HasKind(d, DiagKind::kAttribute, "bad_perm"));
  CHECK(HasKind(d, DiagKind::kUnknownOpType, "FrobnicateTensor"));
  CHECK(HasKind(d, DiagKind::kInvalidEncoding, "'late'"));

  // Every diagnostic is an error with a message, and points at an op or tensor
  // where it is about one.
  for (const Diagnostic& x_diag : d) {
    CHECK(!x_diag.message.empty());
    if (x_diag.kind == DiagKind::kArity || x_diag.kind == DiagKind::kUnknownOpType) CHECK(x_diag.op != kInvalidId);
    if (x_diag.kind == DiagKind::kInvalidEncoding) CHECK(x_diag.tensor == late);
  }
}

TEST_CASE("a graph without outputs is reported", "[validate]") {
  Graph g("empty");
  REQUIRE(g.AddInput("x", DType::kFloat32, Shape{1}).ok());
  CHECK(HasKind(g.Validate(), DiagKind::kNoOutputs, "no outputs"));
}

TEST_CASE("topological order is deterministic and fails on cycles", "[validate]") {
  Graph g;
  auto x = g.AddInput("x", DType::kFloat32, Shape{4}).value();
  // Added out of order: consumer first, via a forward reference.
  auto mid = g.AddTensor("mid").value();
  auto late = g.AddOp({"Sigmoid", "second", {mid}, {g.AddTensor("y").value()}, {}, "", ""}).value();
  auto early = g.AddOp({"Relu", "first", {x}, {mid}, {}, "", ""}).value();
  auto order = g.TopologicalOrder();
  REQUIRE(order.ok());
  CHECK(order.value() == std::vector<OpId>{early, late});
  // Shape inference after the fact fills y.
  g.InferShapes();
  CHECK(g.tensor(*g.FindTensor("y")).shape == Shape({4}));

  REQUIRE(g.SetOpInput(early, 0, *g.FindTensor("y")).ok());
  auto cyclic = g.TopologicalOrder();
  REQUIRE(!cyclic.ok());
  CHECK(cyclic.status().message().find("cycle") != std::string::npos);
}

TEST_CASE("builder rejects bad arguments at once", "[validate]") {
  Graph g;
  CHECK(!g.AddInput("", DType::kFloat32, Shape{1}).ok());
  CHECK(!g.AddInput("u", DType::kUndefined, Shape{1}).ok());
  CHECK(!g.AddInput("bad", static_cast<DType>(999), Shape{1}).ok());
  auto wrong_size = g.AddConstant("w", DType::kFloat32, Shape{2, 2}, Floats(3));
  REQUIRE(!wrong_size.ok());
  CHECK(wrong_size.status().message().find("'w'") != std::string::npos);
  CHECK(wrong_size.status().message().find("16 bytes") != std::string::npos);
  CHECK(!g.AddConstant("s", DType::kFloat32, Shape{-1}, Floats(1)).ok());
  auto bad_op = g.AddOp({"Relu", "r", {12345}, {}, {}, "", ""});
  REQUIRE(!bad_op.ok());
  CHECK(bad_op.status().message().find("inputs[0]") != std::string::npos);
  CHECK(!g.MarkOutput(99).ok());
}

TEST_CASE("int4 constants are packed two per byte", "[validate]") {
  Graph g;
  std::vector<uint8_t> packed(3);  // 5 int4 values -> 3 bytes
  CHECK(g.AddConstant("w4", DType::kSFixed4, Shape{5}, StaticData::Copy(packed.data(), packed.size())).ok());
  CHECK(!g.AddConstant("w4b", DType::kSFixed4, Shape{5}, StaticData::Copy(packed.data(), 2)).ok());
}

TEST_CASE("Validate re-checks an encoding only when its tensor's shape changed since SetEncoding", "[validate]") {
  Graph g("cache");
  auto x = g.AddInput("x", DType::kFloat32, Shape{3, 3}).value();
  auto y = g.AddTensor("y").value();
  Encoding pc;
  pc.kind = EncodingKind::kPerChannel;
  pc.dtype = DType::kSFixed8;
  pc.axis = 0;
  pc.scales = {1, 1, 1};
  REQUIRE(g.SetEncoding(y, pc).ok());  // checked against an unknown shape
  CHECK(g.EncodingCheckedForShape(y));
  REQUIRE(g.AddOp({"Relu", "makes_y", {x}, {y}, {}, "", ""}).ok());
  REQUIRE(g.MarkOutput(y).ok());
  CHECK_FALSE(g.EncodingCheckedForShape(y));  // the shape is [3, 3] now
  CHECK(g.Validate().empty());
  REQUIRE(g.SetEncoding(y, pc).ok());
  CHECK(g.EncodingCheckedForShape(y));
  CHECK(g.Validate().empty());

  // An encoding set as already validated is checked by Validate: a wrong one
  // is reported.
  Encoding wrong = pc;
  wrong.scales = {1, 1};
  REQUIRE(g.SetValidatedEncoding(y, wrong).ok());
  CHECK_FALSE(g.EncodingCheckedForShape(y));
  CHECK(HasKind(g.Validate(), DiagKind::kInvalidEncoding, "'y'"));
  REQUIRE(g.ClearEncoding(y).ok());
  CHECK_FALSE(g.EncodingCheckedForShape(y));
  CHECK(g.Validate().empty());
}

TEST_CASE("SetEncoding skips the check only for the checked encoding with its very tables", "[validate]") {
  Graph g("same");
  auto x = g.AddInput("x", DType::kFloat32, Shape{2, 4}).value();
  Encoding lp;
  lp.kind = EncodingKind::kLpbq;
  lp.dtype = DType::kSFixed4;
  lp.symmetry = Symmetry::kSymmetric;
  lp.axis = 1;
  lp.block_sizes = {1, 2};
  lp.scales = {0.5f, 0.25f};
  lp.block_int_scales = {1, 16, 2, 3};
  lp.decompressed_bitwidth = 8;
  REQUIRE(g.SetEncoding(x, lp).ok());
  REQUIRE(g.EncodingCheckedForShape(x));
  // Its copy (the same tables, `overridden` aside): accepted.
  Encoding copy = *g.tensor(x).encoding;
  copy.overridden = true;
  CHECK(SameEncodingSharingTables(*g.tensor(x).encoding, copy));
  REQUIRE(g.SetEncoding(x, copy).ok());
  CHECK(g.tensor(x).encoding->overridden);
  // A copy whose table was written has its own table: checked, and 0 is
  // outside [1, 16].
  Encoding written = *g.tensor(x).encoding;
  written.block_int_scales.mut()[2] = 0;
  CHECK_FALSE(SameEncodingSharingTables(*g.tensor(x).encoding, written));
  const Status st = g.SetEncoding(x, written);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("block_int_scales[2]") != std::string::npos);
  // Any other field differs: checked (an axis past the rank).
  Encoding axis = *g.tensor(x).encoding;
  axis.axis = 2;
  CHECK_FALSE(g.SetEncoding(x, axis).ok());
  // The shape changed since the check: checked against the new shape (two
  // channel scales for four channels).
  auto in = g.AddInput("in", DType::kFloat32, Shape{4, 4}).value();
  auto z = g.AddTensor("z").value();
  Encoding pc;
  pc.kind = EncodingKind::kPerChannel;
  pc.dtype = DType::kSFixed8;
  pc.axis = 0;
  pc.scales = {1, 1};
  REQUIRE(g.SetEncoding(z, pc).ok());  // against an unknown shape
  REQUIRE(g.AddOp({"Relu", "makes_z", {in}, {z}, {}, "", ""}).ok());
  CHECK_FALSE(g.EncodingCheckedForShape(z));
  CHECK_FALSE(g.SetEncoding(z, *g.tensor(z).encoding).ok());
}

}  // namespace
}  // namespace qairt

namespace qairt {
namespace {

TEST_CASE("a graph's version changes with every edit and is kept by copies", "[validate][version]") {
  Graph g("v");
  const uint64_t empty = g.version();
  auto x = g.AddInput("x", DType::kFloat32, Shape{2, 3}).value();
  const uint64_t with_input = g.version();
  CHECK(with_input != empty);
  auto c = g.AddConstant("c", DType::kFloat32, Shape{2, 3}, Floats(6)).value();
  auto r = g.AddOp("ElementWiseAdd", "add", {x, c}, {"y"}).value();
  const uint64_t built = g.version();
  CHECK(built != with_input);
  // Reading changes nothing.
  (void)g.Validate();
  (void)g.FindTensor("y");
  CHECK(g.version() == built);
  // A copy is the same graph until one of them is edited.
  Graph copy = g;
  CHECK(copy.version() == built);
  REQUIRE(copy.MarkOutput(copy.op(r).outputs[0]).ok());
  CHECK(copy.version() != built);
  CHECK(g.version() == built);
  // Every kind of edit.
  uint64_t last = g.version();
  auto changed = [&] {
    const bool c2 = g.version() != last;
    last = g.version();
    return c2;
  };
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = DType::kUFixed8;
  e.bitwidth = 8;
  e.scales = {0.1f};
  e.offsets = {0};
  REQUIRE(g.SetEncoding(x, e).ok());
  CHECK(changed());
  REQUIRE(g.ClearEncoding(x).ok());
  CHECK(changed());
  REQUIRE(g.SetStaticData(c, DType::kFloat32, Floats(6)).ok());
  CHECK(changed());
  REQUIRE(g.RenameTensor(c, "c2").ok());
  CHECK(changed());
  REQUIRE(g.SetOpInput(r, 1, x).ok());
  CHECK(changed());
  g.InferShapes();
  CHECK(changed());
  // A graph built the same way from scratch has a version of its own.
  Graph other("v");
  CHECK(other.version() != empty);
}

}  // namespace
}  // namespace qairt
