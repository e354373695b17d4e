// Lowering of ONNX's data-movement, shape, reduction and control ops.
#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "onnx/importer.h"

namespace qairt::onnx_import {
namespace {

using Ints = std::vector<int64_t>;


// Axes from the attribute (old opsets) or from a constant input (new ones).
std::optional<Ints> AxesFrom(NodeContext& ctx, size_t input, int64_t since_opset, bool* present) {
  *present = true;
  if (ctx.opset() < since_opset) {
    *present = ctx.attr("axes") != nullptr;
    return ctx.Ints("axes");
  }
  if (!ctx.has_input(input)) {
    *present = false;
    return Ints{};
  }
  return ctx.in_ints(input);
}

Status LowerReshape(NodeContext& ctx) {
  std::optional<Ints> shape = ctx.opset() < 5 ? std::optional(ctx.Ints("shape")) : ctx.in_ints(1);
  if (!shape) {
    // Dynamic target shape: keep the shape tensor as an input.
    return Done(ctx.Emit("Reshape", {ctx.in_tensor(0), ctx.in_tensor(1)}, {{"allowzero", ctx.Int("allowzero", 0)}}));
  }
  return Done(ctx.Emit("Reshape", {ctx.in_tensor(0)}, {{"shape", *shape}, {"allowzero", ctx.Int("allowzero", 0)}}));
}

Status LowerFlatten(NodeContext& ctx) {
  const Shape& x = ctx.in(0).shape;
  int64_t axis = ctx.Int("axis", 1);
  if (!x.rank_known()) return ctx.Fail("inputs[0]", "Flatten needs an input of known rank");
  const auto r = static_cast<int64_t>(x.rank());
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return ctx.Fail("axis", "axis {} out of range for rank {}", ctx.Int("axis", 1), r);
  Ints shape;
  if (axis == 0) {
    shape = {1, -1};
  } else if (axis == 1) {
    shape = {0, -1};
  } else {
    int64_t lead = 1;
    for (int64_t k = 0; k < axis; ++k) {
      if (!x[static_cast<size_t>(k)].known()) return ctx.Fail("inputs[0]", "Flatten axis {} over dynamic dims {}", axis, x.ToString());
      lead *= x[static_cast<size_t>(k)].value;
    }
    shape = {lead, -1};
  }
  if (axis == r) shape = {axis == 0 ? 1 : -1, 1};
  return Done(ctx.Emit("Reshape", {ctx.in_tensor(0)}, {{"shape", shape}}));
}

Status LowerSqueezeLike(NodeContext& ctx) {
  const bool squeeze = ctx.op_type() == "Squeeze";
  bool present = false;
  auto axes = AxesFrom(ctx, 1, 13, &present);
  if (!axes) return ctx.Fail("axes", "axes must be a constant");
  const Shape& x = ctx.in(0).shape;
  // QNN spells both as Reshape; use it whenever the result is static.
  if (x.fully_known()) {
    Ints dims = x.extents();
    if (squeeze) {
      const auto r = static_cast<int64_t>(dims.size());
      std::vector<bool> drop(dims.size(), false);
      if (!present || axes->empty())
        for (size_t k = 0; k < dims.size(); ++k) drop[k] = dims[k] == 1;
      for (int64_t a : *axes) {
        const int64_t ax = a < 0 ? a + r : a;
        if (ax < 0 || ax >= r || dims[static_cast<size_t>(ax)] != 1)
          return ctx.Fail("axes", "cannot squeeze axis {} of shape {}", a, x.ToString());
        drop[static_cast<size_t>(ax)] = true;
      }
      Ints kept;
      for (size_t k = 0; k < dims.size(); ++k)
        if (!drop[k]) kept.push_back(dims[k]);
      dims = kept;
    } else {
      const auto r = static_cast<int64_t>(dims.size() + axes->size());
      Ints norm;
      for (int64_t a : *axes) norm.push_back(a < 0 ? a + r : a);
      std::sort(norm.begin(), norm.end());
      for (int64_t a : norm) {
        if (a < 0 || a > static_cast<int64_t>(dims.size())) return ctx.Fail("axes", "axis {} out of range", a);
        dims.insert(dims.begin() + a, 1);
      }
    }
    return Done(ctx.Emit("Reshape", {ctx.in_tensor(0)}, {{"shape", dims}}));
  }
  AttributeMap attrs;
  if (present) attrs["axes"] = *axes;
  return Done(ctx.Emit(squeeze ? "Squeeze" : "ExpandDims", {ctx.in_tensor(0)}, attrs));
}

Status LowerTranspose(NodeContext& ctx) {
  AttributeMap attrs;
  if (ctx.attr("perm")) attrs["perm"] = ctx.Ints("perm");
  return Done(ctx.Emit("Transpose", {ctx.in_tensor(0)}, attrs));
}

Status LowerConcat(NodeContext& ctx) {
  std::vector<TensorId> in;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    // Exporters concatenate empty tensors; they contribute nothing.
    if (!ctx.has_input(k)) continue;
    if (ctx.in_is_const(k) && ctx.in(k).shape.element_count() == 0u) continue;
    in.push_back(ctx.in_tensor(k));
  }
  if (in.empty()) return ctx.Fail("inputs", "Concat of only empty tensors");
  return Done(ctx.Emit("Concat", in, {{"axis", ctx.Int("axis", 0)}}));
}

Status LowerSplit(NodeContext& ctx) {
  const int64_t axis = ctx.Int("axis", 0);
  std::optional<Ints> split;
  if (ctx.opset() < 13) {
    if (ctx.attr("split")) split = ctx.Ints("split");
  } else if (ctx.has_input(1)) {
    split = ctx.in_ints(1);
    if (!split) return ctx.Fail("inputs[1]", "split sizes must be a constant");
  }
  AttributeMap attrs = {{"axis", axis}};
  if (split) attrs["split"] = *split;
  return Done(ctx.Emit("Split", {ctx.in_tensor(0)}, attrs));
}

Status LowerSlice(NodeContext& ctx) {
  Ints starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.Ints("starts");
    ends = ctx.Ints("ends");
    axes = ctx.Ints("axes");
  } else {
    auto s = ctx.in_ints(1), e = ctx.in_ints(2);
    if (!s || !e) return ctx.Fail("inputs[1]", "Slice starts/ends must be constants");
    starts = *s;
    ends = *e;
    if (ctx.has_input(3)) {
      auto a = ctx.in_ints(3);
      if (!a) return ctx.Fail("inputs[3]", "Slice axes must be a constant");
      axes = *a;
    }
    if (ctx.has_input(4)) {
      auto st = ctx.in_ints(4);
      if (!st) return ctx.Fail("inputs[4]", "Slice steps must be a constant");
      steps = *st;
    }
  }
  AttributeMap attrs = {{"starts", starts}, {"ends", ends}};
  if (!axes.empty()) attrs["axes"] = axes;
  if (!steps.empty()) attrs["steps"] = steps;
  return Done(ctx.Emit("StridedSlice", {ctx.in_tensor(0)}, attrs));
}

Status LowerGather(NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  AttributeMap attrs;
  std::string type = "Gather";
  if (op == "Gather") {
    attrs["axis"] = ctx.Int("axis", 0);
  } else if (op == "GatherElements") {
    type = "GatherElements";
    attrs["axis"] = ctx.Int("axis", 0);
  } else {
    type = "GatherNd";
    attrs["batch_dims"] = ctx.Int("batch_dims", 0);
  }
  return Done(ctx.Emit(type, {ctx.in_tensor(0), ctx.in_tensor(1)}, attrs));
}

Status LowerScatter(NodeContext& ctx) {
  const bool nd = ctx.op_type() == "ScatterND";
  AttributeMap attrs;
  if (!nd) attrs["axis"] = ctx.Int("axis", 0);
  const std::string reduction = ctx.String("reduction", "none");
  if (reduction != "none") attrs["reduction"] = reduction;
  return Done(ctx.Emit(nd ? "ScatterNd" : "ScatterElements", {ctx.in_tensor(0), ctx.in_tensor(1), ctx.in_tensor(2)}, attrs));
}

// Expand = broadcast against ones of the target shape (as ORT's QNN EP does).
Status LowerExpand(NodeContext& ctx) {
  auto shape = ctx.in_ints(1);
  if (!shape) return ctx.Fail("inputs[1]", "Expand's shape must be a constant");
  const Value& x = ctx.in(0);
  for (int64_t d : *shape)
    if (d < 0) return ctx.Fail("inputs[1]", "Expand shape has a negative dim {}", d);
  const Shape target = Shape::FromExtents(*shape);
  const auto n = target.element_count();
  if (!n || *n > (uint64_t{1} << 28)) return ctx.Fail("inputs[1]", "Expand target {} is too large", target.ToString());
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kInt64 && x.dtype != DType::kInt32)
    return ctx.Fail("inputs[0]", "Expand of {} is not supported", DTypeName(x.dtype));
  // One buffer per dtype and size, shared by the Expands to it; filled by
  // doubling copies (log2(n) memcpy calls, not n), up to 2 GiB.
  std::shared_ptr<const StaticData>& data = ctx.importer().ones()[{x.dtype, *n}];
  if (!data) {
    const size_t bytes = *StorageBytes(x.dtype, *n);
    uint8_t* ones = nullptr;
    auto made = StaticData::Uninitialized(bytes, &ones);
    const float one_f = 1.0f;
    const int64_t one_i64 = 1;
    const int32_t one_i32 = 1;
    const size_t width = x.dtype == DType::kInt64 ? 8 : 4;
    if (bytes >= width)  // an empty target has nothing to fill
      std::memcpy(ones, x.dtype == DType::kFloat32 ? static_cast<const void*>(&one_f)
                        : x.dtype == DType::kInt64 ? static_cast<const void*>(&one_i64)
                                                   : static_cast<const void*>(&one_i32),
                  width);
    for (size_t filled = width; filled < bytes;) {
      const size_t step = std::min(filled, bytes - filled);
      std::memcpy(ones + filled, ones, step);
      filled += step;
    }
    data = std::move(made);
  }
  auto t = ctx.Constant("ones", x.dtype, target, data);
  if (!t.ok()) return t.status();
  return Done(ctx.Emit("ElementWiseMultiply", {ctx.in_tensor(0), t.value()}));
}

Status LowerTile(NodeContext& ctx) {
  auto repeats = ctx.opset() < 6 ? std::nullopt : ctx.in_ints(1);
  if (!repeats) return ctx.Fail("inputs[1]", "Tile repeats must be a constant");
  return Done(ctx.Emit("Tile", {ctx.in_tensor(0)}, {{"multiples", *repeats}}));
}

Status LowerPad(NodeContext& ctx) {
  Ints pads;
  double value = 0.0;
  if (ctx.opset() < 11) {
    pads = ctx.Ints("pads");
    value = ctx.Float("value", 0.0);
  } else {
    auto p = ctx.in_ints(1);
    if (!p) return ctx.Fail("inputs[1]", "Pad pads must be a constant");
    pads = *p;
    if (ctx.has_input(2)) {
      auto v = ctx.in_floats(2);
      if (!v || v->size() != 1) return ctx.Fail("inputs[2]", "Pad constant_value must be a scalar constant");
      value = (*v)[0];
    }
    if (ctx.has_input(3)) {
      // Pad-18 axes: expand pads to every dim.
      auto axes = ctx.in_ints(3);
      const Shape& x = ctx.in(0).shape;
      if (!axes || !x.rank_known()) return ctx.Fail("inputs[3]", "Pad axes must be a constant on a known-rank input");
      const auto r = static_cast<int64_t>(x.rank());
      Ints full(static_cast<size_t>(2 * r), 0);
      for (size_t k = 0; k < axes->size(); ++k) {
        int64_t a = (*axes)[k] < 0 ? (*axes)[k] + r : (*axes)[k];
        if (a < 0 || a >= r || pads.size() != 2 * axes->size()) return ctx.Fail("inputs[3]", "Pad axes out of range");
        full[static_cast<size_t>(a)] = pads[k];
        full[static_cast<size_t>(a + r)] = pads[k + axes->size()];
      }
      pads = full;
    }
  }
  return Done(ctx.Emit("Pad", {ctx.in_tensor(0)},
                       {{"pads", pads}, {"mode", ctx.String("mode", "constant")}, {"constant_value", value}}));
}

Status LowerCast(NodeContext& ctx) {
  auto to = DTypeFromOnnx(static_cast<int32_t>(ctx.Int("to", 0)));
  if (!to) return ctx.Fail("to", "Cast to {} is not supported", OnnxTypeName(static_cast<int32_t>(ctx.Int("to", 0))));
  // Narrowing int64 (see ImportOptions): a Cast of a constant folds and
  // keeps int64 for the shape arithmetic that reads it.
  if (*to == DType::kInt64 && ctx.importer().options().int64_to_int32 && !ctx.in_is_const(0)) to = DType::kInt32;
  if (*to == ctx.in(0).dtype) {
    ctx.Alias(0, ctx.in(0));
    return Status::Ok();
  }
  return Done(ctx.Emit("Cast", {ctx.in_tensor(0)}, {{"to", static_cast<int64_t>(*to)}}));
}

Status LowerShapeOp(NodeContext& ctx) {
  AttributeMap attrs;
  if (ctx.attr("start")) attrs["start"] = ctx.Int("start", 0);
  if (ctx.attr("end")) attrs["end"] = ctx.Int("end", 0);
  return Done(ctx.Emit("Shape", {ctx.in_tensor(0)}, attrs));
}

Status LowerTopK(NodeContext& ctx) {
  int64_t k = ctx.Int("k", -1);
  if (ctx.opset() >= 10) {
    auto kv = ctx.in_ints(1);
    if (!kv || kv->size() != 1) return ctx.Fail("inputs[1]", "TopK's K must be a scalar constant");
    k = (*kv)[0];
  }
  const DType index = ctx.importer().options().int64_to_int32 ? DType::kInt32 : DType::kInt64;
  AttributeMap attrs = {{"k", k}, {"axis", ctx.Int("axis", -1)}, {"output_dtype", static_cast<int64_t>(index)}};
  if (ctx.Int("largest", 1) == 0) attrs["largest"] = int64_t{0};
  if (ctx.Int("sorted", 1) == 0) attrs["sorted"] = int64_t{0};
  return Done(ctx.Emit("TopK", {ctx.in_tensor(0)}, attrs));
}

Status LowerArg(NodeContext& ctx) {
  AttributeMap attrs = {{"axis", ctx.Int("axis", 0)}, {"keepdims", ctx.Int("keepdims", 1)},
                        {"output_dtype", static_cast<int64_t>(ctx.importer().options().int64_to_int32 ? DType::kInt32
                                                                                                       : DType::kInt64)}};
  if (ctx.Int("select_last_index", 0) != 0) attrs["select_last_index"] = int64_t{1};
  return Done(ctx.Emit(ctx.op_type() == "ArgMax" ? "Argmax" : "Argmin", {ctx.in_tensor(0)}, attrs));
}

Status LowerReduce(NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  // Axes moved from attribute to input: ReduceSum at 13, the others at 18.
  bool present = false;
  auto axes = AxesFrom(ctx, 1, op == "ReduceSum" ? 13 : 18, &present);
  if (!axes) return ctx.Fail("axes", "reduction axes must be a constant");
  // No axes, or an empty axes input, with noop_with_empty_axes: the identity.
  if ((!present || axes->empty()) && ctx.Int("noop_with_empty_axes", 0)) {
    ctx.Alias(0, ctx.in(0));
    return Status::Ok();
  }
  AttributeMap attrs = {{"keepdims", ctx.Int("keepdims", 1)}};
  if (present && !axes->empty()) attrs["axes"] = *axes;
  static const std::unordered_map<std::string, std::string> kMap = {
      {"ReduceMean", "ReduceMean"}, {"ReduceSum", "ReduceSum"}, {"ReduceMax", "ReduceMax"},
      {"ReduceMin", "ReduceMin"}, {"ReduceProd", "ReduceProd"}, {"ReduceSumSquare", "ReduceSumSquare"}};
  if (op == "ReduceL2") {
    auto sq = ctx.EmitTemp("ReduceSumSquare", "sumsq", {ctx.in_tensor(0)}, attrs);
    if (!sq.ok()) return sq.status();
    return Done(ctx.Emit("ElementWiseSquareRoot", {sq.value()}));
  }
  return Done(ctx.Emit(kMap.at(op), {ctx.in_tensor(0)}, attrs));
}

// Trilu: the kept triangle selected by a constant mask over the last two dims
// (zeros elsewhere). A select, not a product: a causal mask triangle of -inf
// times 0 would be NaN. On a constant input the select folds.
Status LowerTrilu(NodeContext& ctx) {
  const Value& x = ctx.in(0);
  if (!x.shape.rank_known() || x.shape.rank() < 2 || !x.shape[x.shape.rank() - 1].known() ||
      !x.shape[x.shape.rank() - 2].known())
    return ctx.Fail("inputs[0]", "Trilu needs static last two dims, got {}", x.shape.ToString());
  int64_t k = 0;
  if (ctx.has_input(1)) {
    auto kv = ctx.in_ints(1);
    if (!kv || kv->size() != 1) return ctx.Fail("inputs[1]", "Trilu's k must be a scalar constant");
    k = (*kv)[0];
  }
  const bool upper = ctx.Int("upper", 1) != 0;
  const int64_t rows = x.shape[x.shape.rank() - 2].value, cols = x.shape[x.shape.rank() - 1].value;
  if (rows * cols > (int64_t{1} << 26)) return ctx.Fail("inputs[0]", "Trilu over {} x {} is too large", rows, cols);
  std::vector<uint8_t> mask(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask[static_cast<size_t>(i * cols + j)] = upper ? (j - i >= k) : (j - i <= k);
  auto m = ctx.Constant("mask", DType::kBool, Shape{rows, cols}, StaticData::Adopt(std::move(mask)));
  if (!m.ok()) return m.status();
  auto bytes = StorageBytes(x.dtype, 1);
  if (!bytes || IsFixedPoint(x.dtype)) return ctx.Fail("inputs[0]", "Trilu of {} is not supported", DTypeName(x.dtype));
  auto zero = ctx.Constant("zero", x.dtype, Shape(std::vector<Dim>{}), StaticData::Adopt(std::vector<uint8_t>(*bytes, 0)));
  if (!zero.ok()) return zero.status();
  return Done(ctx.Emit("ElementWiseSelect", {m.value(), ctx.in_tensor(0), zero.value()}));
}

Status LowerCumSum(NodeContext& ctx) {
  auto axis = ctx.in_ints(1);
  if (!axis || axis->size() != 1) return ctx.Fail("inputs[1]", "CumSum axis must be a scalar constant");
  return Done(ctx.Emit("CumulativeSum", {ctx.in_tensor(0)},
                       {{"axis", (*axis)[0]}, {"exclusive", ctx.Int("exclusive", 0)}, {"reverse", ctx.Int("reverse", 0)}}));
}

// If with a condition known at import time: the taken branch is inlined.
// Lowers the nodes of one If branch like top-level nodes; returns the names
// of its outputs.
Result<std::vector<std::string>> InlineBranch(NodeContext& ctx, const char* which) {
  const auto* branch = ctx.attr(which);
  if (!branch || !branch->has_g()) return ctx.Fail(which, "If branch graph is missing");
  const onnx::GraphProto& g = branch->g();
  Importer& imp = ctx.importer();
  auto holder = std::make_shared<onnx::GraphProto>(g);
  for (const auto& init : holder->initializer()) {
    auto decoded = DecodeTensor(init, holder, ctx.importer().model_dir(), init.name());
    if (!decoded.ok()) return ctx.Fail("initializer", "{}", decoded.status().message());
    Value v;
    v.dtype = decoded->dtype;
    v.shape = decoded->shape;
    v.data = decoded->data;
    v.ir_name = init.name();
    imp.Bind(init.name(), std::move(v));
  }
  // Lowered like top-level nodes, in dependency order: exporters do not
  // always write a branch's nodes in order (torch 1.12 put silero VAD's
  // after their consumers).
  imp.KeepAlive(holder);
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < holder->node_size(); ++i)
    for (const auto& out : holder->node(i).output())
      if (!out.empty()) producer.emplace(out, i);
  std::vector<int> order, state(static_cast<size_t>(holder->node_size()), 0);  // 0 new, 1 on the stack, 2 done
  for (int root = 0; root < holder->node_size(); ++root) {
    if (state[static_cast<size_t>(root)]) continue;
    // Depth-first over in-branch producers, iteratively (branches can be long chains).
    std::vector<std::pair<int, int>> stack = {{root, 0}};
    state[static_cast<size_t>(root)] = 1;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const onnx::NodeProto& node = holder->node(n);
      if (next < node.input_size()) {
        const std::string& in = node.input(next++);
        auto it = in.empty() ? producer.end() : producer.find(in);
        if (it == producer.end()) continue;
        const auto dep = static_cast<size_t>(it->second);
        if (state[dep] == 1)
          return ctx.Fail(which, "branch node '{}' reads '{}', which depends on the node itself (a cycle)",
                          node.name(), in);
        if (state[dep] == 0) {
          state[dep] = 1;
          stack.emplace_back(it->second, 0);
        }
        continue;
      }
      state[static_cast<size_t>(n)] = 2;
      order.push_back(n);
      stack.pop_back();
    }
  }
  for (int i : order) {
    const onnx::NodeProto& node = holder->node(i);
    for (const auto& in : node.input())
      if (!in.empty() && !imp.Find(in))
        return ctx.Fail(which, "branch node '{}' reads '{}', which neither the branch nor the graph around it "
                        "defines", node.name(), in);
    imp.LowerNode(node, static_cast<size_t>(i));
  }
  if (holder->output_size() != static_cast<int>(ctx.num_outputs()))
    return ctx.Fail("outputs", "branch has {} outputs but If has {}", holder->output_size(), ctx.num_outputs());
  std::vector<std::string> outs;
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    const std::string& name = holder->output(static_cast<int>(k)).name();
    if (!imp.Find(name)) return ctx.Fail("outputs", "branch output '{}' is not produced", name);
    outs.push_back(name);
  }
  return outs;
}

Status LowerIf(NodeContext& ctx) {
  Importer& imp = ctx.importer();
  if (auto cond = ctx.in_ints(0)) {
    if (cond->size() != 1) return ctx.Fail("inputs[0]", "If's condition must hold one value, got {}", cond->size());
    auto outs = InlineBranch(ctx, (*cond)[0] ? "then_branch" : "else_branch");
    if (!outs.ok()) return outs.status();
    for (size_t k = 0; k < outs->size(); ++k) ctx.Alias(k, *imp.Find(outs.value()[k]));
    return Status::Ok();
  }
  // A condition computed from the data (a wake-word model runs its verifier
  // only above a score threshold): QNN has no control flow, so both branches
  // are computed and each output is selected by the condition. Same values,
  // both branches' cost.
  const Value& c = ctx.in(0);
  if (!c.shape.fully_known() || c.shape.element_count() != std::optional<uint64_t>(1))
    return ctx.Fail("inputs[0]", "If's condition must be a single value, got shape {}", c.shape.ToString());
  auto then_outs = InlineBranch(ctx, "then_branch");
  if (!then_outs.ok()) return then_outs.status();
  auto else_outs = InlineBranch(ctx, "else_branch");
  if (!else_outs.ok()) return else_outs.status();
  TensorId cond = ctx.in_tensor(0);
  if (c.dtype != DType::kBool) {
    auto b = ctx.EmitTemp("Cast", "cond", {cond}, {{"to", static_cast<int64_t>(DType::kBool)}});
    if (!b.ok()) return b.status();
    cond = b.value();
  }
  for (size_t k = 0; k < then_outs->size(); ++k) {
    const TensorId t = imp.Materialize(then_outs.value()[k]), e = imp.Materialize(else_outs.value()[k]);
    if (t == kInvalidId || e == kInvalidId) return ctx.Fail("outputs", "branch output {} has no value", k);
    auto out = ctx.Emit("ElementWiseSelect", {cond, t, e}, {}, std::vector<size_t>{k});
    if (!out.ok()) return out.status();
  }
  ctx.Warn("the condition is computed from the data: both branches are computed and their outputs selected");
  return Status::Ok();
}

}  // namespace

void RegisterShapeLowerings(std::unordered_map<std::string, LowerFn>* t) {
  (*t)["Reshape"] = LowerReshape;
  (*t)["Flatten"] = LowerFlatten;
  (*t)["Squeeze"] = LowerSqueezeLike;
  (*t)["Unsqueeze"] = LowerSqueezeLike;
  (*t)["Transpose"] = LowerTranspose;
  (*t)["Concat"] = LowerConcat;
  (*t)["Split"] = LowerSplit;
  (*t)["Slice"] = LowerSlice;
  (*t)["Gather"] = LowerGather;
  (*t)["GatherElements"] = LowerGather;
  (*t)["GatherND"] = LowerGather;
  (*t)["ScatterND"] = LowerScatter;
  (*t)["ScatterElements"] = LowerScatter;
  (*t)["Expand"] = LowerExpand;
  (*t)["Tile"] = LowerTile;
  (*t)["Pad"] = LowerPad;
  (*t)["Cast"] = LowerCast;
  (*t)["Shape"] = LowerShapeOp;
  (*t)["TopK"] = LowerTopK;
  (*t)["ArgMax"] = LowerArg;
  (*t)["ArgMin"] = LowerArg;
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceSumSquare"})
    (*t)[op] = LowerReduce;
  (*t)["CumSum"] = LowerCumSum;
  (*t)["Trilu"] = LowerTrilu;
  (*t)["If"] = LowerIf;
}

}  // namespace qairt::onnx_import
