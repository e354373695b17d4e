// ONNX export of the IR's data-movement, indexing, shape, reduction and cast
// ops (reverse of lib/onnx/lower_shape.cpp). Static attributes the IR
// keeps as attributes (Reshape's shape, Slice's starts/ends, Pad's pads, ...)
// become int64 initializers where ONNX wants inputs.
#include "onnx/exporter.h"
#include "onnx/onnx_tensor.h"

namespace qairt::onnx_export {
namespace {

using Ints = std::vector<int64_t>;

// ONNX always produces int64 indices; when the IR output has another integer
// type, the ONNX op writes a temporary and a Cast follows.
class IndexOutputs {
 public:
  explicit IndexOutputs(OpContext& ctx) : ctx_(ctx) {}
  std::string Name(size_t i) {
    const DType dt = ctx_.out_tensor(i).dtype;
    if (dt == DType::kInt64 || dt == DType::kUndefined) return ctx_.out(i);
    const std::string t = ctx_.Temp(fmt::format("output{}_int64", i));
    casts_.emplace_back(t, i);
    return t;
  }
  void Finish() {
    for (const auto& [tmp, i] : casts_)
      SetAttr(ctx_.Node("Cast", {tmp}, {ctx_.out(i)}, fmt::format("cast{}", i)), "to",
              static_cast<int64_t>(onnx_import::OnnxFromDType(ctx_.out_tensor(i).dtype)));
  }

 private:
  OpContext& ctx_;
  std::vector<std::pair<std::string, size_t>> casts_;
};

// An int64 value for attribute `attr` or (static or not) input `input`; ""
// when neither is present. Non-int64 inputs are cast.
std::string IntsInput(OpContext& ctx, const char* attr, size_t input, const std::string& suffix) {
  if (auto v = ctx.Ints(attr)) return ctx.Int64s(suffix, *v);
  if (!ctx.has_in(input)) return "";
  if (ctx.in_tensor(input).dtype == DType::kInt64) return ctx.in(input);
  if (auto v = ctx.in_static_ints(input)) return ctx.Int64s(suffix, *v);
  const std::string t = ctx.Temp(suffix + "_int64");
  SetAttr(ctx.Node("Cast", {ctx.in(input)}, {t}, suffix + "_cast"), "to", int64_t{onnx::TensorProto::INT64});
  return t;
}

Status ExportReshape(OpContext& ctx) {
  const std::string shape = IntsInput(ctx, "shape", 1, "shape");
  if (shape.empty()) return ctx.Fail("needs a shape attribute or input");
  auto* n = ctx.Node("Reshape", {ctx.in(0), shape}, {ctx.out(0)});
  if (const int64_t az = ctx.Int("allowzero", 0); az) {
    if (ctx.opset() < 14) return ctx.Fail("allowzero=1 needs opset 14 (exporting opset {})", ctx.opset());
    SetAttr(n, "allowzero", az);
  }
  return Status::Ok();
}

// Unsqueeze/Squeeze: axes as an attribute before opset 13, an input from 13.
Status AxesOp(OpContext& ctx, const char* type, const std::optional<Ints>& axes) {
  if (ctx.opset() >= 13) {
    ctx.Node(type, {ctx.in(0), axes ? ctx.Int64s("axes", *axes) : std::string()}, {ctx.out(0)});
  } else {
    auto* n = ctx.Node(type, {ctx.in(0)}, {ctx.out(0)});
    if (axes) SetAttr(n, "axes", *axes);
  }
  return Status::Ok();
}

Status ExportExpandDims(OpContext& ctx) {
  Ints axes = ctx.has("axes") ? *ctx.Ints("axes") : ctx.Ints("axis").value_or(Ints{0});
  return AxesOp(ctx, "Unsqueeze", axes);
}

Status ExportSqueeze(OpContext& ctx) {
  auto axes = ctx.IntsOrInput("axes", 1);
  if (!axes && ctx.has_in(1)) return ctx.Fail("axes input must be static");
  return AxesOp(ctx, "Squeeze", axes);
}

Status ExportTranspose(OpContext& ctx) {
  auto* n = ctx.Node("Transpose", {ctx.in(0)}, {ctx.out(0)});
  if (auto perm = ctx.Ints("perm")) SetAttr(n, "perm", *perm);
  return Status::Ok();
}

Status ExportConcat(OpContext& ctx) {
  std::vector<std::string> in;
  for (size_t k = 0; k < ctx.num_inputs(); ++k)
    if (ctx.has_in(k)) in.push_back(ctx.in(k));
  SetAttr(ctx.Node("Concat", in, {ctx.out(0)}), "axis", ctx.Int("axis", 0));
  return Status::Ok();
}

Status ExportSplit(OpContext& ctx) {
  const int64_t axis = ctx.Int("axis", 0);
  auto split = ctx.IntsOrInput("split", 1);
  if (!split && ctx.has_in(1)) return ctx.Fail("split input must be static");
  std::vector<std::string> outs;
  for (size_t k = 0; k < ctx.num_outputs(); ++k) outs.push_back(ctx.out(k));
  onnx::NodeProto* n;
  if (ctx.opset() >= 13) {
    n = ctx.Node("Split", {ctx.in(0), split ? ctx.Int64s("split", *split) : std::string()}, outs);
    if (!split && ctx.opset() >= 18) SetAttr(n, "num_outputs", static_cast<int64_t>(ctx.num_outputs()));
  } else {
    n = ctx.Node("Split", {ctx.in(0)}, outs);
    if (split) SetAttr(n, "split", *split);
  }
  SetAttr(n, "axis", axis);
  return Status::Ok();
}

Status ExportSlice(OpContext& ctx) {
  const std::string starts = IntsInput(ctx, "starts", 1, "starts"), ends = IntsInput(ctx, "ends", 2, "ends");
  if (starts.empty() || ends.empty()) return ctx.Fail("needs starts and ends");
  ctx.Node("Slice", {ctx.in(0), starts, ends, IntsInput(ctx, "axes", 3, "axes"), IntsInput(ctx, "steps", 4, "steps")},
           {ctx.out(0)});
  return Status::Ok();
}

Status ExportPad(OpContext& ctx) {
  const std::string mode = ctx.String("mode", "constant");
  if (mode == "wrap" && ctx.opset() < 19) return ctx.Fail("mode 'wrap' needs opset 19 (exporting opset {})", ctx.opset());
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return ctx.Fail("mode '{}' has no ONNX spelling", mode);
  const std::string pads = IntsInput(ctx, "pads", 1, "pads");
  if (pads.empty()) return ctx.Fail("needs pads");
  std::string value = ctx.has("constant_value") || !ctx.has_in(2) ? std::string() : ctx.in(2);
  if (const double v = ctx.Float("constant_value", 0.0); ctx.has("constant_value") && v != 0.0 && mode == "constant") {
    auto s = ctx.Scalar("constant_value", ctx.in_dtype(0), v);
    if (!s.ok()) return s.status();
    value = s.value();
  }
  auto* n = ctx.Node("Pad", {ctx.in(0), pads, value}, {ctx.out(0)});
  if (mode != "constant") SetAttr(n, "mode", mode);
  return Status::Ok();
}

Status ExportTile(OpContext& ctx) {
  const std::string repeats = IntsInput(ctx, "multiples", 1, "repeats");
  if (repeats.empty()) return ctx.Fail("needs multiples");
  ctx.Node("Tile", {ctx.in(0), repeats}, {ctx.out(0)});
  return Status::Ok();
}

Status ExportGather(OpContext& ctx) {
  const std::string& type = ctx.op().type;
  if (type == "GatherNd") {
    auto* n = ctx.Node("GatherND", {ctx.in(0), ctx.in(1)}, {ctx.out(0)});
    if (const int64_t b = ctx.Int("batch_dims", 0); b) {
      if (ctx.opset() < 12) return ctx.Fail("batch_dims needs opset 12");
      SetAttr(n, "batch_dims", b);
    }
    return Status::Ok();
  }
  SetAttr(ctx.Node(type, {ctx.in(0), ctx.in(1)}, {ctx.out(0)}), "axis", ctx.Int("axis", 0));
  return Status::Ok();
}

Status ExportScatter(OpContext& ctx) {
  const bool nd = ctx.op().type == "ScatterNd";
  auto* n = ctx.Node(nd ? "ScatterND" : "ScatterElements", {ctx.in(0), ctx.in(1), ctx.in(2)}, {ctx.out(0)});
  if (!nd) SetAttr(n, "axis", ctx.Int("axis", 0));
  if (const std::string r = ctx.String("reduction", "none"); r != "none") {
    if (ctx.opset() < 16) return ctx.Fail("reduction '{}' needs opset 16", r);
    SetAttr(n, "reduction", r);
  }
  return Status::Ok();
}

// Cast, Convert, Quantize and Dequantize. Fixed-point values are float32 in
// the exported model (the Q-DQ pair after each one applies its encoding), so
// a requantization or a cast to or from a fixed-point type is the identity
// there, or a Cast between float types.
// A Quantize to integer codes (the graph ends in QuantizeLinear): the same
// QuantizeLinear back.
Status ExportQuantizeToCodes(OpContext& ctx) {
  const auto scale = ctx.Floats("scale");
  const auto zp = ctx.Ints("zero_point");
  const DType to = ctx.out_tensor(0).dtype;
  if (!scale || !zp || scale->size() != zp->size() || scale->empty())
    return ctx.Fail("needs scale and zero_point of the same length");
  std::vector<float> s(scale->begin(), scale->end());
  std::string zp_name;
  if (zp->size() == 1) {
    auto z = ctx.Scalar("zero_point", to, static_cast<double>((*zp)[0]));
    if (!z.ok()) return z.status();
    zp_name = z.value();
  } else {
    // Per-axis zero points: int64 values cast to the code type.
    const std::string wide = ctx.Int64s("zero_point_i64", *zp);
    zp_name = ctx.Temp("zero_point");
    SetAttr(ctx.Node("Cast", {wide}, {zp_name}, "zero_point"), "to",
            static_cast<int64_t>(onnx_import::OnnxFromDType(to)));
  }
  auto* n = ctx.Node("QuantizeLinear",
                     {ctx.in(0), ctx.Floats1d("scale", s), zp_name},
                     {ctx.out(0)});
  if (s.size() > 1) SetAttr(n, "axis", ctx.Int("axis", 1));
  return Status::Ok();
}

Status ExportConvert(OpContext& ctx) {
  if (ctx.op().type == "Quantize" && ctx.has("scale") && IsInteger(ctx.out_tensor(0).dtype))
    return ExportQuantizeToCodes(ctx);
  DType to = ctx.out_dtype(0);
  if (ctx.op().type == "Cast") {
    const int64_t attr = ctx.Int("to", 0);
    if (!IsValidDType(static_cast<uint32_t>(attr))) return ctx.Fail("cast to dtype {} has no ONNX spelling", attr);
    to = IsFixedPoint(static_cast<DType>(attr)) ? DType::kFloat32 : static_cast<DType>(attr);
  }
  const DType from = ctx.in_dtype(0);
  if (to == DType::kUndefined) to = from;
  if (from == to) {
    ctx.Alias(0, ctx.in(0));
    return Status::Ok();
  }
  const int32_t elem = onnx_import::OnnxFromDType(to);
  if (elem == 0) return ctx.Fail("cast to {} has no ONNX spelling", DTypeName(to));
  SetAttr(ctx.Node("Cast", {ctx.in(0)}, {ctx.out(0)}), "to", static_cast<int64_t>(elem));
  return Status::Ok();
}

Status ExportShape(OpContext& ctx) {
  IndexOutputs outs(ctx);
  auto* n = ctx.Node("Shape", {ctx.in(0)}, {outs.Name(0)});
  if (ctx.has("start") || ctx.has("end")) {
    if (ctx.opset() < 15) return ctx.Fail("Shape start/end need opset 15 (exporting opset {})", ctx.opset());
    if (ctx.has("start")) SetAttr(n, "start", ctx.Int("start", 0));
    if (ctx.has("end")) SetAttr(n, "end", ctx.Int("end", 0));
  }
  outs.Finish();
  return Status::Ok();
}

Status ExportTopK(OpContext& ctx) {
  auto k = ctx.IntsOrInput("k", 1);
  if (!k || k->size() != 1) return ctx.Fail("needs a scalar k");
  IndexOutputs outs(ctx);
  auto* n = ctx.Node("TopK", {ctx.in(0), ctx.Int64s("k", *k)}, {ctx.out(0), outs.Name(1)});
  SetAttr(n, "axis", ctx.Int("axis", -1));
  if (!ctx.Int("largest", 1)) SetAttr(n, "largest", int64_t{0});
  if (!ctx.Int("sorted", 1)) SetAttr(n, "sorted", int64_t{0});
  outs.Finish();
  return Status::Ok();
}

Status ExportArg(OpContext& ctx) {
  IndexOutputs outs(ctx);
  auto* n = ctx.Node(ctx.op().type == "Argmax" ? "ArgMax" : "ArgMin", {ctx.in(0)}, {outs.Name(0)});
  SetAttr(n, "axis", ctx.Int("axis", 0));
  SetAttr(n, "keepdims", ctx.Int("keepdims", 1));
  if (ctx.Int("select_last_index", 0)) SetAttr(n, "select_last_index", int64_t{1});
  outs.Finish();
  return Status::Ok();
}

Status ExportReduce(OpContext& ctx) {
  const std::string& type = ctx.op().type;
  auto axes = ctx.IntsOrInput("axes", 1);
  if (!axes && ctx.has_in(1)) return ctx.Fail("axes input must be static");
  // Axes moved from attribute to input: ReduceSum at opset 13, the others at 18.
  const bool as_input = ctx.opset() >= (type == "ReduceSum" ? 13 : 18);
  const bool all = !axes || axes->empty();
  onnx::NodeProto* n;
  if (as_input) {
    n = ctx.Node(type, {ctx.in(0), all ? std::string() : ctx.Int64s("axes", *axes)}, {ctx.out(0)});
  } else {
    n = ctx.Node(type, {ctx.in(0)}, {ctx.out(0)});
    if (!all) SetAttr(n, "axes", *axes);
  }
  SetAttr(n, "keepdims", ctx.Int("keepdims", 1));
  return Status::Ok();
}

Status ExportCumSum(OpContext& ctx) {
  auto* n = ctx.Node("CumSum", {ctx.in(0), ctx.Int64s("axis", {ctx.Int("axis", 0)}, true)}, {ctx.out(0)});
  if (ctx.Int("exclusive", 0)) SetAttr(n, "exclusive", int64_t{1});
  if (ctx.Int("reverse", 0)) SetAttr(n, "reverse", int64_t{1});
  return Status::Ok();
}

Status ExportNonZero(OpContext& ctx) {
  IndexOutputs outs(ctx);
  ctx.Node("NonZero", {ctx.in(0)}, {outs.Name(0)});
  outs.Finish();
  return Status::Ok();
}

}  // namespace

void RegisterShapeExports(std::unordered_map<std::string, ExportFn>* t) {
  (*t)["Reshape"] = ExportReshape;
  (*t)["ExpandDims"] = ExportExpandDims;
  (*t)["Squeeze"] = ExportSqueeze;
  (*t)["Transpose"] = ExportTranspose;
  (*t)["Concat"] = ExportConcat;
  (*t)["Split"] = ExportSplit;
  (*t)["StridedSlice"] = ExportSlice;
  (*t)["Pad"] = ExportPad;
  (*t)["Tile"] = ExportTile;
  (*t)["Gather"] = ExportGather;
  (*t)["GatherElements"] = ExportGather;
  (*t)["GatherNd"] = ExportGather;
  (*t)["ScatterNd"] = ExportScatter;
  (*t)["ScatterElements"] = ExportScatter;
  for (const char* c : {"Cast", "Convert", "Quantize", "Dequantize"}) (*t)[c] = ExportConvert;
  (*t)["Shape"] = ExportShape;
  (*t)["TopK"] = ExportTopK;
  (*t)["Argmax"] = ExportArg;
  (*t)["Argmin"] = ExportArg;
  for (const char* r : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    (*t)[r] = ExportReduce;
  (*t)["CumulativeSum"] = ExportCumSum;
  (*t)["NonZero"] = ExportNonZero;
}

}  // namespace qairt::onnx_export
