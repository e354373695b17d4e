// Per-op shape functions: exact shapes for representative cases, symbolic
// dim propagation, error reporting, and a robustness sweep over every schema.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <cctype>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "ir/op_registry.h"

namespace qairt {
namespace {

struct InferRun {
  Op op;
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
  Diagnostics diags;

  const Shape& shape(size_t i = 0) const { return outputs[i].shape; }
  DType dtype(size_t i = 0) const { return outputs[i].dtype; }
  bool ok() const { return diags.empty(); }
  bool HasError(DiagKind kind) const {
    for (const Diagnostic& d : diags)
      if (d.kind == kind) return true;
    return false;
  }
  std::string messages() const {
    std::string s;
    for (const Diagnostic& d : diags) s += d.message + "\n";
    return s;
  }
};

// Runs the registered shape function of `type`. Absent optional inputs are
// std::nullopt.
InferRun Infer(const std::string& type, std::vector<std::optional<TensorType>> inputs, AttributeMap attrs = {},
               size_t num_outputs = 1) {
  InferRun run;
  run.op.type = type;
  run.op.name = "node";
  run.op.attrs = std::move(attrs);
  run.inputs.reserve(inputs.size());
  std::vector<const TensorType*> pointers;
  for (auto& in : inputs) {
    run.inputs.push_back(in.value_or(TensorType{}));
    pointers.push_back(in ? &run.inputs.back() : nullptr);
  }
  run.outputs.resize(num_outputs);
  const OpSchema* schema = FindOpSchema(type);
  REQUIRE(schema != nullptr);
  InferContext ctx(run.op, 0, std::move(pointers), &run.outputs, &run.diags);
  schema->infer(ctx);
  return run;
}

TensorType T(Shape shape, DType dtype = DType::kFloat32) { return TensorType{dtype, std::move(shape), nullptr}; }

// A static int tensor (Reshape's shape, Split's sizes) that owns its bytes.
TensorType StaticInts(const std::vector<int64_t>& values, DType dtype = DType::kInt64) {
  std::vector<uint8_t> bytes;
  for (int64_t v : values) {
    uint8_t buf[8];
    if (dtype == DType::kInt64) {
      std::memcpy(buf, &v, 8);
      bytes.insert(bytes.end(), buf, buf + 8);
    } else {
      const auto v32 = static_cast<int32_t>(v);
      std::memcpy(buf, &v32, 4);
      bytes.insert(bytes.end(), buf, buf + 4);
    }
  }
  auto owner = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  static std::vector<std::shared_ptr<const StaticData>> keep;  // TensorType holds a raw pointer
  keep.push_back(std::make_shared<StaticData>(owner->data(), owner->size(), StaticDataOrigin::kOwned, owner));
  return TensorType{dtype, Shape{static_cast<int64_t>(values.size())}, keep.back().get()};
}

const Dim kBatch = Dim::Symbolic("batch");
// Note: Shape{} is the unknown-rank shape; a rank-0 shape is built from an empty vector.
const Shape kScalar = Shape(std::vector<Dim>{});
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

void RequireErrorNamingOp(const InferRun& run, DiagKind kind) {
  INFO(run.messages());
  REQUIRE(run.HasError(kind));
  for (const Diagnostic& d : run.diags) {
    CHECK(d.message.find("op 'node' (" + run.op.type + ")") != std::string::npos);
    CHECK(d.severity == Severity::kError);
  }
}

// ---------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------

TEST_CASE("every schema has a shape function and a summary", "[shape]") {
  auto schemas = AllOpSchemas();
  REQUIRE(schemas.size() >= 100);
  std::set<std::string_view> names;
  for (const OpSchema& s : schemas) {
    INFO(s.type);
    CHECK(s.infer != nullptr);
    CHECK(!s.summary.empty());
    CHECK(s.min_inputs <= s.max_inputs);
    CHECK(s.min_outputs <= s.max_outputs);
    CHECK(s.min_outputs >= 1);
    CHECK(names.insert(s.type).second);  // no duplicates
  }
  for (std::string_view t : {"Conv2d", "ElementWiseAdd", "Reshape", "Lstm", "Gru", "TopK", "Cast", "Dequantize",
                             "StridedSlice", "GridSample", "NonZero", "ReduceSumSquare", "ElementWiseSelect"})
    CHECK(FindOpSchema(t) != nullptr);
  CHECK(FindOpSchema("Conv") == nullptr);
}

// ---------------------------------------------------------------------------
// Elementwise
// ---------------------------------------------------------------------------

TEST_CASE("elementwise unary keeps shape and dtype", "[shape][elementwise]") {
  auto run = Infer("Relu", {T({kBatch, 3, 8}, DType::kUFixed8)});
  CHECK(run.ok());
  CHECK(run.shape() == Shape{kBatch, 3, 8});
  CHECK(run.dtype() == DType::kUFixed8);
  CHECK(Infer("IsNan", {T({2, 3})}).dtype() == DType::kBool);
  CHECK(Infer("ElementWiseNot", {T({2}, DType::kBool)}).dtype() == DType::kBool);
  RequireErrorNamingOp(Infer("ElementWiseNot", {T({2}, DType::kFloat32)}), DiagKind::kDTypeMismatch);
  RequireErrorNamingOp(Infer("ReluMinMax", {T({2})}, {{"min_value", 3.0}, {"max_value", 1.0}}), DiagKind::kAttribute);
}

TEST_CASE("binary elementwise broadcasts with symbolic dims", "[shape][elementwise]") {
  auto run = Infer("ElementWiseAdd", {T({kBatch, 1, 4}), T({3, 1})});
  CHECK(run.ok());
  CHECK(run.shape() == Shape{kBatch, 3, 4});
  // Same symbol on both sides stays; different unknowns become unknown.
  CHECK(Infer("ElementWiseMultiply", {T({kBatch, 4}), T({kBatch, 4})}).shape() == Shape{kBatch, 4});
  CHECK(Infer("ElementWiseMultiply", {T({kBatch, 4}), T({Dim::Symbolic("n"), 4})}).shape() == Shape{Dim(), 4});
  CHECK(Infer("ElementWiseAdd", {T({2, 3}), T(Shape())}).shape() == Shape());
  CHECK(Infer("ElementWiseAdd", {T(kScalar), T({5})}).shape() == Shape{5});
}

TEST_CASE("binary elementwise errors and dtype rules", "[shape][elementwise]") {
  RequireErrorNamingOp(Infer("ElementWiseAdd", {T({2, 3}), T({4, 3})}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("ElementWiseAdd", {T({2}), T({2}, DType::kInt32)}), DiagKind::kDTypeMismatch);
  RequireErrorNamingOp(Infer("ElementWiseAdd", {T({2}), T({2}, DType::kBool)}), DiagKind::kDTypeMismatch);
  // Quantized graphs mix fixed-point types freely.
  auto mixed = Infer("ElementWiseAdd", {T({2}, DType::kSFixed8), T({2}, DType::kUFixed16)});
  CHECK(mixed.ok());
  CHECK(mixed.dtype() == DType::kSFixed8);
  auto cmp = Infer("ElementWiseGreaterEqual", {T({2, 1}), T({1, 5})});
  CHECK(cmp.ok());
  CHECK(cmp.dtype() == DType::kBool);
  CHECK(cmp.shape() == Shape{2, 5});
  // Unknown dtype on one side is not an error and the known one is used.
  CHECK(Infer("ElementWiseSubtract", {T({2}, DType::kUndefined), T({2}, DType::kFloat16)}).dtype() == DType::kFloat16);
  CHECK(Infer("ElementWisePower", {T({2}), T(kScalar, DType::kInt32)}).ok());
}

TEST_CASE("Select and Prelu", "[shape][elementwise]") {
  auto run = Infer("ElementWiseSelect", {T({kBatch, 1, 1}, DType::kBool), T({3, 1}, DType::kUFixed8), T({4})});
  CHECK(run.shape() == Shape{kBatch, 3, 4});
  CHECK(run.dtype() == DType::kUFixed8);
  RequireErrorNamingOp(Infer("ElementWiseSelect", {T({2}), T({2}), T({2})}), DiagKind::kDTypeMismatch);
  CHECK(Infer("Prelu", {T({1, 16, 8, 8}), T({16, 1, 1})}).ok());
  RequireErrorNamingOp(Infer("Prelu", {T({1, 16, 8, 8}), T({15, 1, 1})}), DiagKind::kShapeMismatch);
}

// ---------------------------------------------------------------------------
// NN
// ---------------------------------------------------------------------------

TEST_CASE("Conv2d output shape", "[shape][nn]") {
  auto run = Infer("Conv2d", {T({1, 3, 224, 224}), T({64, 3, 7, 7}), T({64})},
                   {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{3, 3, 3, 3}}});
  INFO(run.messages());
  CHECK(run.ok());
  CHECK(run.shape() == Shape{1, 64, 112, 112});
  CHECK(run.dtype() == DType::kFloat32);

  auto grouped = Infer("Conv2d", {T({kBatch, 32, 56, 56}), T({64, 8, 3, 3})},
                       {{"group", int64_t{4}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  CHECK(grouped.ok());
  CHECK(grouped.shape() == Shape{kBatch, 64, 56, 56});

  auto dilated = Infer("Conv1d", {T({1, 4, 20}), T({8, 4, 3})}, {{"dilations", std::vector<int64_t>{2}}});
  CHECK(dilated.shape() == Shape{1, 8, 16});
  auto same = Infer("Conv2d", {T({1, 3, 15, 15}), T({8, 3, 3, 3})},
                    {{"auto_pad", std::string("SAME_UPPER")}, {"strides", std::vector<int64_t>{2, 2}}});
  CHECK(same.shape() == Shape{1, 8, 8, 8});
  // A 1x1 conv keeps symbolic spatial dims.
  auto pointwise = Infer("Conv2d", {T({kBatch, 3, Dim::Symbolic("h"), 5}), T({8, 3, 1, 1})});
  CHECK(pointwise.shape() == Shape{kBatch, 8, Dim::Symbolic("h"), 5});
  auto conv3d = Infer("Conv3d", {T({1, 2, 8, 8, 8}), T({4, 2, 3, 3, 3})});
  CHECK(conv3d.shape() == Shape{1, 4, 6, 6, 6});
  auto depthwise = Infer("DepthWiseConv2d", {T({1, 16, 10, 10}), T({32, 1, 3, 3})});
  CHECK(depthwise.ok());
  CHECK(depthwise.shape() == Shape{1, 32, 8, 8});
}

TEST_CASE("Conv2d errors", "[shape][nn]") {
  auto mismatch = Infer("Conv2d", {T({1, 3, 32, 32}), T({64, 4, 3, 3})});
  RequireErrorNamingOp(mismatch, DiagKind::kShapeMismatch);
  CHECK(mismatch.diags[0].message.find("3 channels but weight expects 4") != std::string::npos);
  CHECK(mismatch.diags[0].field == "inputs[1]");
  RequireErrorNamingOp(Infer("Conv2d", {T({1, 3, 32, 32}), T({64, 3, 3, 3})}, {{"strides", std::vector<int64_t>{0, 1}}}),
                       DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Conv2d", {T({1, 3, 32, 32}), T({64, 3, 3, 3})}, {{"pads", std::vector<int64_t>{1, 1}}}),
                       DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Conv2d", {T({1, 3, 32, 32}), T({64, 3, 3, 3})}, {{"group", int64_t{0}}}),
                       DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Conv2d", {T({1, 3, 2, 2}), T({64, 3, 3, 3})}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("Conv2d", {T({1, 3, 32}), T({64, 3, 3, 3})}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("Conv2d", {T({1, 3, 8, 8}), T({64, 3, 3, 3}), T({63})}), DiagKind::kShapeMismatch);
  // Float precisions may mix (fp16 weights, fp32 data); float with integer may not.
  CHECK(Infer("Conv2d", {T({1, 3, 8, 8}), T({64, 3, 3, 3}, DType::kFloat16)}).ok());
  RequireErrorNamingOp(Infer("Conv2d", {T({1, 3, 8, 8}), T({64, 3, 3, 3}, DType::kInt8)}), DiagKind::kDTypeMismatch);
  CHECK(Infer("Conv2d", {T({1, 3, 8, 8}, DType::kUFixed16), T({64, 3, 3, 3}, DType::kSFixed8)}).ok());
  RequireErrorNamingOp(Infer("Conv2d", {T({1, 3, 32, 32}), T({64, 3, 3, 3})}, {{"strides", std::string("2")}}),
                       DiagKind::kAttribute);
}

TEST_CASE("TransposeConv2d output shape", "[shape][nn]") {
  auto run = Infer("TransposeConv2d", {T({kBatch, 16, 8, 8}), T({16, 8, 4, 4})},
                   {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  INFO(run.messages());
  CHECK(run.ok());
  CHECK(run.shape() == Shape{kBatch, 8, 16, 16});
  auto padded = Infer("TransposeConv2d", {T({1, 16, 8, 8}), T({16, 4, 3, 3})},
                      {{"strides", std::vector<int64_t>{2, 2}},
                       {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                       {"output_padding", std::vector<int64_t>{1, 1}},
                       {"group", int64_t{2}}});
  CHECK(padded.shape() == Shape{1, 8, 16, 16});
  auto explicit_shape = Infer("TransposeConv2d", {T({1, 16, 8, 8}), T({16, 4, 3, 3})},
                              {{"output_shape", std::vector<int64_t>{17, 17}}});
  CHECK(explicit_shape.shape() == Shape{1, 4, 17, 17});
  RequireErrorNamingOp(Infer("TransposeConv2d", {T({1, 16, 8, 8}), T({15, 4, 3, 3})}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("TransposeConv2d", {T({1, 16, 8, 8}), T({16, 4, 3, 3})},
                             {{"output_padding", std::vector<int64_t>{2, 2}}}),
                       DiagKind::kAttribute);
}

TEST_CASE("pooling with ceil_mode", "[shape][nn]") {
  AttributeMap attrs = {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}};
  CHECK(Infer("PoolMax2d", {T({1, 8, 5, 5})}, attrs).shape() == Shape{1, 8, 2, 2});
  attrs["ceil_mode"] = int64_t{1};
  CHECK(Infer("PoolMax2d", {T({kBatch, 8, 5, 5})}, attrs).shape() == Shape{kBatch, 8, 3, 3});
  // The last window would start in the end padding: dropped (ORT/PyTorch rule).
  auto edge = Infer("PoolAvg2d", {T({1, 1, 3, 3})},
                    {{"kernel_shape", std::vector<int64_t>{1, 1}},
                     {"strides", std::vector<int64_t>{2, 2}},
                     {"pads", std::vector<int64_t>{0, 0, 1, 1}},
                     {"ceil_mode", int64_t{1}}});
  CHECK(edge.shape() == Shape{1, 1, 2, 2});
  CHECK(Infer("PoolAvg3d", {T({1, 2, 4, 4, 4})}, {{"kernel_shape", std::vector<int64_t>{2, 2, 2}}}).shape() ==
        Shape{1, 2, 3, 3, 3});
  RequireErrorNamingOp(Infer("PoolMax2d", {T({1, 8, 5, 5})}), DiagKind::kAttribute);  // kernel_shape missing
  RequireErrorNamingOp(Infer("PoolMax2d", {T({1, 8, 5, 5})}, {{"kernel_shape", std::vector<int64_t>{2}}}),
                       DiagKind::kAttribute);
}

TEST_CASE("FullyConnected and MatMul", "[shape][nn]") {
  auto fc = Infer("FullyConnected", {T({kBatch, 7, 512}), T({1000, 512}), T({1000})});
  CHECK(fc.ok());
  CHECK(fc.shape() == Shape{kBatch, 7, 1000});
  RequireErrorNamingOp(Infer("FullyConnected", {T({2, 511}), T({1000, 512})}), DiagKind::kShapeMismatch);

  auto batched = Infer("MatMul", {T({2, 1, 3, 4}), T({5, 4, 6})});
  CHECK(batched.ok());
  CHECK(batched.shape() == Shape{2, 5, 3, 6});
  CHECK(Infer("MatMul", {T({3, 4}), T({6, 4})}, {{"transpose_in1", int64_t{1}}}).shape() == Shape{3, 6});
  CHECK(Infer("MatMul", {T({4, 3}), T({4, 6})}, {{"transpose_in0", int64_t{1}}}).shape() == Shape{3, 6});
  CHECK(Infer("MatMul", {T({4}), T({kBatch, 4, 6})}).shape() == Shape{kBatch, 6});
  CHECK(Infer("MatMul", {T({2, 3, 4}), T({4})}).shape() == Shape{2, 3});
  CHECK(Infer("MatMul", {T({4}), T({4})}).shape() == kScalar);
  RequireErrorNamingOp(Infer("MatMul", {T({3, 4}), T({5, 6})}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("MatMul", {T({2, 3, 4}), T({3, 4, 6})}), DiagKind::kShapeMismatch);
}

TEST_CASE("softmax, norms, moments", "[shape][nn]") {
  CHECK(Infer("Softmax", {T({kBatch, 10})}).shape() == Shape{kBatch, 10});
  RequireErrorNamingOp(Infer("Softmax", {T({2, 10})}, {{"axis", int64_t{4}}}), DiagKind::kAttribute);
  CHECK(Infer("LayerNorm", {T({2, 5, 64}), T({64}), T({64})}).ok());
  RequireErrorNamingOp(Infer("LayerNorm", {T({2, 5, 64}), T({32})}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("GroupNorm", {T({2, 6, 4, 4})}, {{"num_groups", int64_t{4}}}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("Batchnorm", {T({2, 6, 4, 4}), T({5}), T({6})}), DiagKind::kShapeMismatch);
  auto moments = Infer("Moments", {T({2, 6, 4, 4})}, {{"axes", std::vector<int64_t>{2, 3}}}, 2);
  CHECK(moments.shape(0) == Shape{2, 6, 1, 1});
  CHECK(moments.shape(1) == Shape{2, 6, 1, 1});
}

TEST_CASE("resize, depth/space, grid sample", "[shape][nn]") {
  CHECK(Infer("Resize", {T({kBatch, 3, 10, 10})}, {{"scales", std::vector<double>{2.0, 1.5}}}).shape() ==
        Shape{kBatch, 3, 20, 15});
  CHECK(Infer("ResizeBilinear", {T({1, 3, 10, 10})}, {{"sizes", std::vector<int64_t>{1, 3, 7, 9}}}).shape() ==
        Shape{1, 3, 7, 9});
  RequireErrorNamingOp(Infer("Resize", {T({1, 3, 10, 10})}, {{"sizes", std::vector<int64_t>{7}}}), DiagKind::kAttribute);
  CHECK(Infer("DepthToSpace", {T({1, 8, 3, 3})}, {{"block_size", int64_t{2}}}).shape() == Shape{1, 2, 6, 6});
  CHECK(Infer("SpaceToDepth", {T({1, 2, 6, 6})}, {{"block_size", int64_t{2}}}).shape() == Shape{1, 8, 3, 3});
  RequireErrorNamingOp(Infer("DepthToSpace", {T({1, 6, 3, 3})}, {{"block_size", int64_t{2}}}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("DepthToSpace", {T({1, 8, 3, 3})}), DiagKind::kAttribute);
  CHECK(Infer("GridSample", {T({kBatch, 3, 10, 10}), T({kBatch, 5, 7, 2})}).shape() == Shape{kBatch, 3, 5, 7});
  RequireErrorNamingOp(Infer("GridSample", {T({1, 3, 10, 10}), T({1, 5, 7, 3})}), DiagKind::kShapeMismatch);
}

// ---------------------------------------------------------------------------
// Data movement
// ---------------------------------------------------------------------------

TEST_CASE("Reshape with 0 and -1", "[shape][data]") {
  CHECK(Infer("Reshape", {T({2, 3, 4})}, {{"shape", std::vector<int64_t>{0, -1}}}).shape() == Shape{2, 12});
  auto symbolic = Infer("Reshape", {T({kBatch, 3, 4})}, {{"shape", std::vector<int64_t>{0, -1}}});
  CHECK(symbolic.ok());
  CHECK(symbolic.shape() == Shape{kBatch, 12});
  auto from_input = Infer("Reshape", {T({2, 3, 4}), StaticInts({-1, 6})});
  CHECK(from_input.shape() == Shape{4, 6});
  auto int32_input = Infer("Reshape", {T({2, 3, 4}), StaticInts({4, 0, -1}, DType::kInt32)});
  CHECK(int32_input.shape() == Shape{4, 3, 2});
  // A dynamic shape input of known length gives the rank only.
  CHECK(Infer("Reshape", {T({2, 3, 4}), T({3}, DType::kInt64)}).shape() == Shape{Dim(), Dim(), Dim()});
  // Unknown input dims the output does not account for leave -1 unknown.
  CHECK(Infer("Reshape", {T({kBatch, 3, 4})}, {{"shape", std::vector<int64_t>{-1, 4}}}).shape() == Shape{Dim(), 4});
  RequireErrorNamingOp(Infer("Reshape", {T({2, 3, 4})}, {{"shape", std::vector<int64_t>{5, 5}}}),
                       DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("Reshape", {T({2, 3, 4})}, {{"shape", std::vector<int64_t>{-1, -1}}}),
                       DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Reshape", {T({2, 3, 4})}), DiagKind::kAttribute);
}

TEST_CASE("Transpose, Squeeze, ExpandDims, Concat", "[shape][data]") {
  CHECK(Infer("Transpose", {T({kBatch, 3, 5})}, {{"perm", std::vector<int64_t>{2, 0, 1}}}).shape() ==
        Shape{5, kBatch, 3});
  CHECK(Infer("Transpose", {T({1, 2, 3})}).shape() == Shape{3, 2, 1});
  RequireErrorNamingOp(Infer("Transpose", {T({1, 2, 3})}, {{"perm", std::vector<int64_t>{0, 0, 1}}}),
                       DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Transpose", {T({1, 2, 3})}, {{"perm", std::vector<int64_t>{0, 1}}}), DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Transpose", {T({1, 2, 3})}, {{"perm", std::string("0,1,2")}}), DiagKind::kAttribute);
  CHECK(Infer("Squeeze", {T({1, 3, 1, 5})}).shape() == Shape{3, 5});
  CHECK(Infer("Squeeze", {T({1, 3, 1, 5})}, {{"axes", std::vector<int64_t>{-2}}}).shape() == Shape{1, 3, 5});
  RequireErrorNamingOp(Infer("Squeeze", {T({1, 3})}, {{"axes", std::vector<int64_t>{1}}}), DiagKind::kShapeMismatch);
  CHECK(Infer("ExpandDims", {T({3, 5})}, {{"axes", std::vector<int64_t>{0, 3}}}).shape() == Shape{1, 3, 5, 1});
  auto concat = Infer("Concat", {T({2, kBatch, 3}), T({4, kBatch, 3}), T({1, Dim(), 3})}, {{"axis", int64_t{0}}});
  CHECK(concat.ok());
  CHECK(concat.shape() == Shape{7, kBatch, 3});
  RequireErrorNamingOp(Infer("Concat", {T({2, 3}), T({2, 4})}, {{"axis", int64_t{0}}}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("Concat", {T({2, 3}), T({2, 4})}, {{"axis", int64_t{2}}}), DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Concat", {T({2, 3}), T({2, 4})}), DiagKind::kAttribute);
}

TEST_CASE("Split", "[shape][data]") {
  auto sized = Infer("Split", {T({6, kBatch})}, {{"split", std::vector<int64_t>{2, 4}}}, 2);
  CHECK(sized.ok());
  CHECK(sized.shape(0) == Shape{2, kBatch});
  CHECK(sized.shape(1) == Shape{4, kBatch});
  auto equal = Infer("Split", {T({4, 9})}, {{"axis", int64_t{-1}}}, 3);
  for (size_t i = 0; i < 3; ++i) CHECK(equal.shape(i) == Shape{4, 3});
  auto uneven = Infer("Split", {T({7})}, {}, 3);
  CHECK(uneven.shape(2) == Shape{1});
  auto from_input = Infer("Split", {T({6}), StaticInts({1, 5})}, {}, 2);
  CHECK(from_input.shape(1) == Shape{5});
  CHECK(Infer("Split", {T({6}), T({2}, DType::kInt64)}, {}, 2).shape(0) == Shape{Dim()});
  RequireErrorNamingOp(Infer("Split", {T({6})}, {{"split", std::vector<int64_t>{2, 3}}}, 2), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("Split", {T({6})}, {{"split", std::vector<int64_t>{6}}}, 2), DiagKind::kAttribute);
}

TEST_CASE("StridedSlice", "[shape][data]") {
  auto reversed = Infer("StridedSlice", {T({10, 4})},
                        {{"starts", std::vector<int64_t>{-1}},
                         {"ends", std::vector<int64_t>{kInt64Min}},
                         {"steps", std::vector<int64_t>{-1}}});
  INFO(reversed.messages());
  CHECK(reversed.ok());
  CHECK(reversed.shape() == Shape{10, 4});
  CHECK(Infer("StridedSlice", {T({10})},
              {{"starts", std::vector<int64_t>{8}}, {"ends", std::vector<int64_t>{1}}, {"steps", std::vector<int64_t>{-3}}})
            .shape() == Shape{3});
  CHECK(Infer("StridedSlice", {T({kBatch, 6})},
              {{"starts", std::vector<int64_t>{1}}, {"ends", std::vector<int64_t>{kInt64Max}}, {"axes", std::vector<int64_t>{-1}}})
            .shape() == Shape{kBatch, 5});
  CHECK(Infer("StridedSlice", {T({kBatch, 6})},
              {{"starts", std::vector<int64_t>{0}}, {"ends", std::vector<int64_t>{kInt64Max}}})
            .shape() == Shape{kBatch, 6});
  CHECK(Infer("StridedSlice", {T({10}), StaticInts({2}), StaticInts({100})}).shape() == Shape{8});
  CHECK(Infer("StridedSlice", {T({10})},
              {{"starts", std::vector<int64_t>{5}}, {"ends", std::vector<int64_t>{2}}})
            .shape() == Shape{0});
  RequireErrorNamingOp(Infer("StridedSlice", {T({10})},
                             {{"starts", std::vector<int64_t>{0}}, {"ends", std::vector<int64_t>{5}}, {"steps", std::vector<int64_t>{0}}}),
                       DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("StridedSlice", {T({10})}, {{"ends", std::vector<int64_t>{5}}}), DiagKind::kAttribute);
}

TEST_CASE("Pad, Tile, Gather family", "[shape][data]") {
  CHECK(Infer("Pad", {T({kBatch, 3, 4})}, {{"pads", std::vector<int64_t>{0, 1, 2, 0, 1, -1}}}).shape() ==
        Shape{kBatch, 5, 5});
  RequireErrorNamingOp(Infer("Pad", {T({3, 4})}, {{"pads", std::vector<int64_t>{1, 1}}}), DiagKind::kAttribute);
  CHECK(Infer("Tile", {T({kBatch, 3})}, {{"multiples", std::vector<int64_t>{1, 4}}}).shape() == Shape{kBatch, 12});
  auto gather = Infer("Gather", {T({5, 4, 3}), T({2, 7}, DType::kInt32)}, {{"axis", int64_t{1}}});
  CHECK(gather.ok());
  CHECK(gather.shape() == Shape{5, 2, 7, 3});
  CHECK(Infer("Gather", {T({5, 4}), T(kScalar, DType::kInt64)}).shape() == Shape{4});
  RequireErrorNamingOp(Infer("Gather", {T({5, 4}), T({2}, DType::kFloat32)}), DiagKind::kDTypeMismatch);
  RequireErrorNamingOp(Infer("Gather", {T({5, 4}), T({2}, DType::kInt32)}, {{"axis", int64_t{2}}}), DiagKind::kAttribute);
  CHECK(Infer("GatherElements", {T({5, 4}), T({5, 2}, DType::kInt64)}, {{"axis", int64_t{1}}}).shape() == Shape{5, 2});
  CHECK(Infer("GatherNd", {T({2, 3, 4}), T({5, 2}, DType::kInt64)}).shape() == Shape{5, 4});
  CHECK(Infer("GatherNd", {T({2, 3, 4}), T({2, 1}, DType::kInt64)}, {{"batch_dims", int64_t{1}}}).shape() == Shape{2, 4});
  CHECK(Infer("ScatterNd", {T({4, 5}), T({3, 1}, DType::kInt64), T({3, 5})}).ok());
  RequireErrorNamingOp(Infer("ScatterNd", {T({4, 5}), T({3, 1}, DType::kInt64), T({3, 6})}), DiagKind::kShapeMismatch);
  CHECK(Infer("ScatterElements", {T({4, 5}), T({2, 5}, DType::kInt64), T({2, 5})}).shape() == Shape{4, 5});
}

TEST_CASE("space/batch, shape ops, one-hot", "[shape][data]") {
  CHECK(Infer("SpaceToBatch", {T({2, 3, 6, 8})}, {{"block_shape", std::vector<int64_t>{2, 2}}}).shape() ==
        Shape{8, 3, 3, 4});
  CHECK(Infer("BatchToSpace", {T({8, 3, 3, 4})},
              {{"block_shape", std::vector<int64_t>{2, 2}}, {"crops", std::vector<int64_t>{0, 1, 0, 1}}})
            .shape() == Shape{2, 3, 6, 6});
  RequireErrorNamingOp(Infer("BatchToSpace", {T({6, 3, 3, 4})}, {{"block_shape", std::vector<int64_t>{2, 2}}}),
                       DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("ChannelShuffle", {T({1, 6, 4, 4})}, {{"num_groups", int64_t{4}}}), DiagKind::kShapeMismatch);
  auto shape = Infer("Shape", {T({kBatch, 3})});
  CHECK(shape.dtype() == DType::kInt64);
  CHECK(shape.shape() == Shape{2});
  CHECK(Infer("NonZero", {T({2, 3})}).shape() == Shape{2, Dim()});
  CHECK(Infer("OneHot", {T({kBatch, 5}, DType::kInt32)}, {{"depth", int64_t{10}}}).shape() == Shape{kBatch, 5, 10});
  CHECK(Infer("OneHot", {T({4}, DType::kInt32)}, {{"depth", int64_t{10}}, {"axis", int64_t{0}}}).shape() ==
        Shape{10, 4});
}

// ---------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------

TEST_CASE("reductions, arg reductions, TopK", "[shape][reduction]") {
  CHECK(Infer("ReduceMean", {T({kBatch, 3, 4})}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}})
            .shape() == Shape{kBatch, 4});
  CHECK(Infer("ReduceSum", {T({2, 3, 4})}).shape() == Shape{1, 1, 1});
  CHECK(Infer("ReduceMax", {T({2, 3, 4}), StaticInts({-1})}).shape() == Shape{2, 3, 1});
  RequireErrorNamingOp(Infer("ReduceMax", {T({2, 3})}, {{"axes", std::vector<int64_t>{2}}}), DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("ReduceMax", {T({2, 3})}, {{"axes", std::vector<int64_t>{1, -1}}}), DiagKind::kAttribute);
  auto argmax = Infer("Argmax", {T({2, 3, 4}, DType::kUFixed8)}, {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}});
  CHECK(argmax.dtype() == DType::kInt32);
  CHECK(argmax.shape() == Shape{2, 4});
  CHECK(Infer("Argmin", {T({2, 3})}, {{"output_dtype", int64_t(DType::kUInt32)}}).dtype() == DType::kUInt32);
  auto topk = Infer("TopK", {T({kBatch, 10}, DType::kFloat16)}, {{"k", int64_t{4}}}, 2);
  CHECK(topk.ok());
  CHECK(topk.shape(0) == Shape{kBatch, 4});
  CHECK(topk.shape(1) == Shape{kBatch, 4});
  CHECK(topk.dtype(0) == DType::kFloat16);
  CHECK(topk.dtype(1) == DType::kInt32);
  RequireErrorNamingOp(Infer("TopK", {T({3, 10})}, {{"k", int64_t{11}}}, 2), DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("TopK", {T({3, 10})}, {}, 2), DiagKind::kAttribute);
  CHECK(Infer("CumulativeSum", {T({3, 10})}, {{"axis", int64_t{1}}}).shape() == Shape{3, 10});
}

// ---------------------------------------------------------------------------
// Recurrent
// ---------------------------------------------------------------------------

TEST_CASE("Lstm and Gru", "[shape][recurrent]") {
  auto lstm = Infer("Lstm",
                    {T({7, kBatch, 16}), T({2, 128, 16}), T({2, 128, 32}), T({2, 256}), std::nullopt,
                     T({2, kBatch, 32}), T({2, kBatch, 32})},
                    {{"direction", std::string("bidirectional")}, {"hidden_size", int64_t{32}}}, 3);
  INFO(lstm.messages());
  CHECK(lstm.ok());
  CHECK(lstm.shape(0) == Shape{7, 2, kBatch, 32});
  CHECK(lstm.shape(1) == Shape{2, kBatch, 32});
  CHECK(lstm.shape(2) == Shape{2, kBatch, 32});
  auto batch_first = Infer("Lstm", {T({4, 7, 16}), T({1, 64, 16}), T({1, 64, 16})}, {{"layout", int64_t{1}}}, 2);
  CHECK(batch_first.shape(0) == Shape{4, 7, 1, 16});
  CHECK(batch_first.shape(1) == Shape{4, 1, 16});
  RequireErrorNamingOp(Infer("Lstm", {T({7, 2, 16}), T({1, 128, 15}), T({1, 128, 32})}), DiagKind::kShapeMismatch);
  RequireErrorNamingOp(Infer("Lstm", {T({7, 2, 16}), T({1, 128, 16}), T({1, 128, 32})},
                             {{"direction", std::string("sideways")}}),
                       DiagKind::kAttribute);
  auto gru = Infer("Gru", {T({5, 3, 8}), T({1, 30, 8}), T({1, 30, 10})}, {}, 2);
  CHECK(gru.ok());
  CHECK(gru.shape(0) == Shape{5, 1, 3, 10});
  CHECK(gru.shape(1) == Shape{1, 3, 10});
}

// ---------------------------------------------------------------------------
// Quantization
// ---------------------------------------------------------------------------

TEST_CASE("Cast, Convert, Quantize, Dequantize", "[shape][quantization]") {
  auto cast = Infer("Cast", {T({kBatch, 3})}, {{"to", int64_t(DType::kInt32)}});
  CHECK(cast.dtype() == DType::kInt32);
  CHECK(cast.shape() == Shape{kBatch, 3});
  RequireErrorNamingOp(Infer("Cast", {T({2})}), DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Cast", {T({2})}, {{"to", int64_t{999}}}), DiagKind::kAttribute);
  RequireErrorNamingOp(Infer("Cast", {T({2})}, {{"to", 1.5}}), DiagKind::kAttribute);
  CHECK(Infer("Convert", {T({2}, DType::kUFixed8)}).dtype() == DType::kUndefined);
  CHECK(Infer("Convert", {T({2}, DType::kUFixed8)}, {{"output_dtype", int64_t(DType::kUFixed16)}}).dtype() ==
        DType::kUFixed16);
  CHECK(Infer("Quantize", {T({2})}, {{"output_dtype", int64_t(DType::kSFixed8)}}).dtype() == DType::kSFixed8);
  RequireErrorNamingOp(Infer("Dequantize", {T({2}, DType::kUFixed8)}, {{"output_dtype", int64_t(DType::kInt8)}}),
                       DiagKind::kAttribute);
}

// ---------------------------------------------------------------------------
// Robustness: every schema on unknown, unranked, attribute-less and random inputs
// ---------------------------------------------------------------------------

void RunWith(const OpSchema& schema, const Op& op, std::vector<std::optional<TensorType>> inputs, size_t outputs) {
  std::vector<TensorType> storage;
  storage.reserve(inputs.size());
  std::vector<const TensorType*> pointers;
  for (auto& in : inputs) {
    storage.push_back(in.value_or(TensorType{}));
    pointers.push_back(in ? &storage.back() : nullptr);
  }
  std::vector<TensorType> outs(outputs);
  Diagnostics diags;
  InferContext ctx(op, 0, std::move(pointers), &outs, &diags);
  schema.infer(ctx);
  for (const TensorType& t : outs) {
    if (!t.shape.rank_known()) continue;
    for (const Dim& d : t.shape.dims()) CHECK(d.value >= -1);  // never a garbage extent
  }
  for (const Diagnostic& d : diags) CHECK(d.message.find("(" + op.type + ")") != std::string::npos);
}

size_t OutputsFor(const OpSchema& s) { return s.max_outputs == kVariadic ? s.min_outputs + 1 : s.max_outputs; }

TEST_CASE("every schema tolerates unknown inputs and no attributes", "[shape][robustness]") {
  for (const OpSchema& s : AllOpSchemas()) {
    INFO(s.type);
    Op op;
    op.type = std::string(s.type);
    op.name = "node";
    // (a) inputs of unknown dtype and rank, (b) unknown-rank typed inputs,
    // (c) no attributes; also with every optional input absent.
    std::vector<std::optional<TensorType>> unknown(s.min_inputs, TensorType{});
    RunWith(s, op, unknown, OutputsFor(s));
    std::vector<std::optional<TensorType>> unranked(s.min_inputs, TensorType{DType::kFloat32, Shape(), nullptr});
    RunWith(s, op, unranked, OutputsFor(s));
    std::vector<std::optional<TensorType>> known(s.min_inputs, TensorType{DType::kFloat32, Shape{1, 4, 8, 8}, nullptr});
    RunWith(s, op, known, s.min_outputs);
    if (s.max_inputs != kVariadic && s.max_inputs > s.min_inputs) {
      std::vector<std::optional<TensorType>> sparse(s.max_inputs, std::nullopt);
      for (size_t i = 0; i < s.min_inputs; ++i) sparse[i] = TensorType{DType::kFloat32, Shape{2, 3, 4, 5}, nullptr};
      RunWith(s, op, sparse, s.min_outputs);
    }
    RunWith(s, op, {}, s.min_outputs);  // fewer inputs than the schema wants
  }
}

class Fuzzer {
 public:
  explicit Fuzzer(uint32_t seed) : rng_(seed) {}

  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  int64_t Int() {
    static constexpr int64_t kPool[] = {kInt64Min, -1000, -3, -2, -1, 0, 0, 1, 1, 1, 2, 2, 3, 4, 5, 7, 8, 16,
                                        int64_t{1} << 40, kInt64Max, static_cast<int64_t>(DType::kSFixed8)};
    return kPool[Pick(std::size(kPool))];
  }
  double Float() {
    static constexpr double kPool[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                       -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 1e300};
    return kPool[Pick(std::size(kPool))];
  }
  std::string String() {
    static const char* kPool[] = {"", "garbage", "SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET", "forward",
                                  "reverse", "bidirectional", "DCR", "CRD", "constant", "reflect", "edge"};
    return kPool[Pick(std::size(kPool))];
  }

  Attribute Attr() {
    const size_t len = Pick(7);
    switch (Pick(6)) {
      case 0:
        return Int();
      case 1:
        return Float();
      case 2:
        return String();
      case 3: {
        std::vector<int64_t> v;
        for (size_t i = 0; i < len; ++i) v.push_back(Int());
        return v;
      }
      case 4: {
        std::vector<double> v;
        for (size_t i = 0; i < len; ++i) v.push_back(Float());
        return v;
      }
      default:
        return std::vector<std::string>(len, String());
    }
  }

  Shape RandomShape() {
    if (Chance(0.1)) return Shape();
    std::vector<Dim> dims;
    const size_t rank = Pick(6);
    static constexpr int64_t kDims[] = {0, 1, 1, 2, 3, 4, 5, 6, 8, 16, 64, kInt64Max / 2, kInt64Max};
    for (size_t i = 0; i < rank; ++i) {
      if (Chance(0.15))
        dims.push_back(Chance(0.5) ? Dim::Symbolic(Chance(0.5) ? "batch" : "n") : Dim());
      else
        dims.emplace_back(kDims[Pick(std::size(kDims))]);
    }
    return Shape(std::move(dims));
  }

  TensorType Tensor() {
    TensorType t;
    t.dtype = static_cast<DType>(Pick(kDTypeCount + 2));  // includes out-of-range values
    t.shape = RandomShape();
    if (Chance(0.25)) {
      t.dtype = Chance(0.5) ? DType::kInt64 : DType::kInt32;
      const size_t width = t.dtype == DType::kInt64 ? 8 : 4;
      const size_t count = Pick(6);
      if (Chance(0.7)) t.shape = Shape{static_cast<int64_t>(count)};
      std::vector<uint8_t> bytes(count * width + (Chance(0.1) ? 1 : 0));
      for (size_t i = 0; i + width <= bytes.size(); i += width) {
        const int64_t v = Int();
        std::memcpy(&bytes[i], &v, width);  // little-endian truncation for int32
      }
      auto owner = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
      data_.push_back(std::make_shared<StaticData>(owner->data(), owner->size(), StaticDataOrigin::kOwned, owner));
      t.data = data_.back().get();
    }
    return t;
  }

 private:
  std::mt19937 rng_;
  std::vector<std::shared_ptr<const StaticData>> data_;
};

TEST_CASE("every schema survives random inputs and attributes", "[shape][robustness]") {
  static const char* kAttrNames[] = {
      "strides", "pads", "dilations", "group", "kernel_shape", "ceil_mode", "count_include_pad", "auto_pad", "axis",
      "axes", "keepdims", "perm", "epsilon", "alpha", "beta", "to", "k", "block_size", "mode", "split", "num_outputs",
      "starts", "ends", "steps", "output_padding", "output_shape", "sizes", "scales", "hidden_size", "direction",
      "layout", "shape", "allowzero", "multiples", "batch_dims", "block_shape", "crops", "num_groups", "depth",
      "output_dtype", "transpose_in0", "transpose_in1", "min_value", "max_value", "operation", "size"};
  Fuzzer fuzz(20240611);
  for (const OpSchema& s : AllOpSchemas()) {
    INFO(s.type);
    // Mostly the attributes this op documents, so their validation is exercised.
    std::vector<const char*> relevant;
    for (const char* name : kAttrNames) {
      const size_t at = s.summary.find(name);
      const auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
      const size_t end = at + std::strlen(name);
      if (at != std::string_view::npos && (at == 0 || !is_ident(s.summary[at - 1])) &&
          (end >= s.summary.size() || !is_ident(s.summary[end])))
        relevant.push_back(name);
    }
    for (int iteration = 0; iteration < 300; ++iteration) {
      Op op;
      op.type = std::string(s.type);
      op.name = "node";
      const size_t attr_count = fuzz.Pick(6);
      for (size_t i = 0; i < attr_count; ++i) {
        const char* name = !relevant.empty() && fuzz.Chance(0.7) ? relevant[fuzz.Pick(relevant.size())]
                                                                 : kAttrNames[fuzz.Pick(std::size(kAttrNames))];
        op.attrs[name] = fuzz.Attr();
      }
      const size_t extra_inputs = s.max_inputs == kVariadic ? fuzz.Pick(4) : fuzz.Pick(s.max_inputs - s.min_inputs + 1);
      std::vector<std::optional<TensorType>> inputs;
      for (size_t i = 0; i < s.min_inputs + extra_inputs; ++i) {
        if (i >= s.min_inputs && fuzz.Chance(0.3))
          inputs.emplace_back(std::nullopt);
        else
          inputs.emplace_back(fuzz.Tensor());
      }
      const size_t outputs =
          s.min_outputs + (s.max_outputs == kVariadic ? fuzz.Pick(4) : fuzz.Pick(s.max_outputs - s.min_outputs + 1));
      RunWith(s, op, std::move(inputs), outputs);
    }
  }
}

}  // namespace
}  // namespace qairt
