// Q-DQ folding (spec Appendix B): QuantizeLinear/DequantizeLinear carry
// quantization parameters, not computation. They are folded away:
//  - Q(x) -> DQ pairs around an activation become an encoding on x;
//  - DQ(integer initializer) becomes a quantized static tensor (fixed-point
//    dtype, the integer bytes unchanged) with its encoding;
//  - DQ of an integer graph input puts the encoding on that input.
// QNN convention: offset = -zero_point.
#include <cmath>

#include "onnx/importer.h"

namespace qairt::onnx_import {
namespace {

std::optional<DType> FixedPointOf(DType integer) {
  switch (integer) {
    case DType::kUInt8: return DType::kUFixed8;
    case DType::kInt8: return DType::kSFixed8;
    case DType::kUInt16: return DType::kUFixed16;
    case DType::kInt16: return DType::kSFixed16;
    case DType::kInt32: return DType::kSFixed32;
    case DType::kUInt32: return DType::kUFixed32;
    case DType::kInt4: return DType::kSFixed4;
    case DType::kUInt4: return DType::kUFixed4;
    default: return IsFixedPoint(integer) ? std::optional(integer) : std::nullopt;
  }
}

// The `axis` attribute (default 1; negative counts from the end) as a dim of
// x, whose rank is known.
Result<int32_t> QuantAxis(NodeContext& ctx, const Shape& x) {
  const auto r = static_cast<int64_t>(x.rank());
  int64_t axis = ctx.Int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return ctx.Fail("axis", "axis {} out of range for rank {}", ctx.Int("axis", 1), r);
  return static_cast<int32_t>(axis);
}

// Builds the encoding described by (scale, zero_point, axis, block_size) for a
// tensor of shape `x`; `quant_dtype` is the integer dtype of the quantized side.
Result<Encoding> EncodingFromQdq(NodeContext& ctx, const Shape& x, DType quant_dtype) {
  auto scales = ctx.in_floats(1);
  if (!scales || scales->empty()) return ctx.Fail("inputs[1]", "scale must be a non-empty constant");
  auto fp = FixedPointOf(quant_dtype);
  if (!fp) return ctx.Fail("inputs[2]", "quantized type {} is not supported", DTypeName(quant_dtype));
  Encoding e;
  e.dtype = *fp;
  e.overridden = false;
  for (double s : *scales) e.scales.push_back(static_cast<float>(s));
  std::vector<int64_t> zps(scales->size(), 0);
  if (ctx.has_input(2)) {
    auto z = ctx.in_floats(2);  // handles int4 too
    if (!z || z->size() != scales->size())
      return ctx.Fail("inputs[2]", "zero_point must be a constant with as many values as scale ({})", scales->size());
    for (size_t k = 0; k < z->size(); ++k) zps[k] = static_cast<int64_t>((*z)[k]);
  }
  for (int64_t zp : zps) e.offsets.push_back(static_cast<int32_t>(-zp));
  const int64_t block_size = ctx.Int("block_size", 0);
  const Shape& scale_shape = ctx.in(1).shape;
  if (block_size > 0) {
    if (!x.rank_known() || !scale_shape.rank_known() || scale_shape.rank() != x.rank())
      return ctx.Fail("block_size", "blocked quantization needs scale of the same rank as the input ({} vs {})",
                      scale_shape.ToString(), x.ToString());
    const Result<int32_t> axis = QuantAxis(ctx, x);
    if (!axis.ok()) return axis.status();
    e.kind = EncodingKind::kPerBlock;
    e.axis = axis.value();
    e.block_sizes.assign(x.rank(), 1);
    e.block_sizes[static_cast<size_t>(e.axis)] = block_size;
  } else if (scales->size() > 1 || (scale_shape.rank_known() && scale_shape.rank() == 1 && x.rank_known() &&
                                    x.rank() > 0 && ctx.attr("axis"))) {
    if (!x.rank_known()) return ctx.Fail("axis", "per-axis quantization of an input of unknown rank");
    const Result<int32_t> axis = QuantAxis(ctx, x);
    if (!axis.ok()) return axis.status();
    e.kind = EncodingKind::kPerChannel;
    e.axis = axis.value();
  } else {
    e.kind = EncodingKind::kPerTensor;
  }
  // Symmetric when the zero point sits at the grid's centre (0 for signed,
  // 2^(b-1) for unsigned, as ORT's activation_symmetric writes it).
  const int64_t centre = IsSigned(e.dtype) ? 0 : (int64_t{1} << (DTypeBits(e.dtype) - 1));
  bool symmetric = true;
  for (int64_t zp : zps) symmetric = symmetric && zp == centre;
  e.symmetry = symmetric ? Symmetry::kSymmetric : Symmetry::kAsymmetric;
  return e;
}

DType ZeroPointDType(NodeContext& ctx, DType dflt) {
  if (ctx.has_input(2)) return ctx.in(2).dtype;
  if (ctx.attr("output_dtype")) {
    auto d = DTypeFromOnnx(static_cast<int32_t>(ctx.Int("output_dtype", 2)));
    if (d) return *d;
  }
  return dflt;
}

Status LowerQuantize(NodeContext& ctx) {
  if (Status s = ctx.RequireInputs(2); !s.ok()) return s;
  const Value& x = ctx.in(0);
  auto enc = EncodingFromQdq(ctx, x.shape, ZeroPointDType(ctx, DType::kUInt8));
  if (!enc.ok()) return enc.status();
  ++ctx.importer().report().qdq_folded;
  Value* target = ctx.importer().Find(ctx.node().input(0));
  if (target->is_const()) {
    // Float weights followed by Q: the encoding travels with the constant.
    Value v = *target;
    v.encoding = enc.value();
    ctx.Alias(0, v);
    return Status::Ok();
  }
  const Tensor& t = ctx.importer().graph().tensor(target->tensor);
  const DType code_dtype = ZeroPointDType(ctx, DType::kUInt8);
  // (ConsumerCount counts the graph output as one use.)
  if (ctx.importer().IsGraphOutput(ctx.output_name(0)) && ctx.importer().ConsumerCount(ctx.output_name(0)) == 1 &&
      IsInteger(code_dtype) && DTypeBits(code_dtype) >= 8) {
    // The graph ends in integer codes: an explicit Quantize to the integer
    // type (the encoding, as attributes, says how), after x keeps the
    // encoding for calibration and processing as any Q-DQ pair would.
    if (!t.encoding) {
      Status s = ctx.importer().graph().SetEncoding(target->tensor, enc.value());
      if (!s.ok()) return ctx.Fail("inputs[1]", "{}", s.message());
    }
    const Encoding& e = enc.value();
    std::vector<double> scales(e.scales.begin(), e.scales.end());
    std::vector<int64_t> zero_points;
    for (int32_t o : e.offsets) zero_points.push_back(-int64_t{o});
    AttributeMap attrs = {{"output_dtype", static_cast<int64_t>(code_dtype)}, {"scale", scales},
                          {"zero_point", zero_points}};
    if (e.kind == EncodingKind::kPerChannel) attrs["axis"] = int64_t{e.axis};
    else if (e.kind != EncodingKind::kPerTensor)
      return ctx.Fail("block_size", "a blocked QuantizeLinear ending the graph is not supported");
    auto out = ctx.Emit("Quantize", {target->tensor}, attrs);
    return out.ok() ? Status::Ok() : out.status();
  }
  if (t.encoding && *t.encoding != enc.value()) {
    // Requantization (Q-DQ-Q with other parameters): an explicit Convert.
    auto out = ctx.Emit("Convert", {target->tensor}, {{"output_dtype", static_cast<int64_t>(t.dtype)}});
    if (!out.ok()) return out.status();
    Status s = ctx.importer().graph().SetEncoding(out.value()[0], enc.value());
    return s.ok() ? Status::Ok() : ctx.Fail("", "{}", s.message());
  }
  Status s = ctx.importer().graph().SetEncoding(target->tensor, enc.value());
  if (!s.ok()) return ctx.Fail("inputs[1]", "{}", s.message());
  ctx.Alias(0, *target);
  return Status::Ok();
}

Status LowerDequantize(NodeContext& ctx) {
  if (Status s = ctx.RequireInputs(2); !s.ok()) return s;
  Value* x = ctx.importer().Find(ctx.node().input(0));
  ++ctx.importer().report().qdq_folded;
  if (x->is_const() && !x->encoding) {
    // Integer initializer: a quantized static tensor.
    auto enc = EncodingFromQdq(ctx, x->shape, x->dtype);
    if (!enc.ok()) return enc.status();
    auto fp = FixedPointOf(x->dtype);
    Value v = *x;
    v.dtype = *fp;
    v.encoding = enc.value();
    v.tensor = kInvalidId;  // materialised with its encoding on first use
    v.ir_name = ctx.node().input(0);
    ctx.Alias(0, v);
    return Status::Ok();
  }
  if (x->is_const()) {  // Q on float weights, then DQ: keep the float weights
    ctx.Alias(0, *x);
    return Status::Ok();
  }
  const Tensor& t = ctx.importer().graph().tensor(x->tensor);
  if (!t.encoding) {
    // DQ of an integer graph input (or op output).
    auto enc = EncodingFromQdq(ctx, t.shape, t.dtype);
    if (!enc.ok()) return enc.status();
    Status s = ctx.importer().graph().SetEncoding(x->tensor, enc.value());
    if (!s.ok()) return ctx.Fail("inputs[1]", "{}", s.message());
  }
  ctx.Alias(0, *x);
  return Status::Ok();
}

}  // namespace

void RegisterQdqLowerings(std::unordered_map<std::string, LowerFn>* t) {
  (*t)["QuantizeLinear"] = LowerQuantize;
  (*t)["DequantizeLinear"] = LowerDequantize;
}

}  // namespace qairt::onnx_import
