// Lowering of TFLite's elementwise builtins: the binary arithmetic ops (with
// their fused activations), the unary math ops and activations, PRELU.
#include <limits>

#include "tflite/tflite_importer.h"

namespace qairt::tflite_import {
namespace {

bool ScalarConst(const Val& v) { return v.is_const() && v.shape.element_count() == 1u && v.shape.rank() <= 1; }

}  // namespace

Status LowerBinary(OpCtx& c) {
  Importer& imp = c.imp;
  std::string type;
  int act = 0;
  switch (c.code) {
    case kAdd: type = "ElementWiseAdd";
      if (auto* o = c.op.builtin_options_as_AddOptions()) act = ActOf(o->fused_activation_function());
      break;
    case kSub: type = "ElementWiseSubtract";
      if (auto* o = c.op.builtin_options_as_SubOptions()) act = ActOf(o->fused_activation_function());
      break;
    case kMul: type = "ElementWiseMultiply";
      if (auto* o = c.op.builtin_options_as_MulOptions()) act = ActOf(o->fused_activation_function());
      break;
    case kDiv: type = "ElementWiseDivide";
      if (auto* o = c.op.builtin_options_as_DivOptions()) act = ActOf(o->fused_activation_function());
      break;
    case kMaximum: type = "ElementWiseMaximum"; break;
    case kMinimum: type = "ElementWiseMinimum"; break;
    case kSquaredDifference: type = "ElementWiseSquaredDifference"; break;
    default: return imp.Fail(c, "", "not a binary op");
  }
  if (c.num_inputs() != 2) return imp.Fail(c, "inputs", "expects 2 inputs, got {}", c.num_inputs());
  const Val& a = imp.In(c, 0);
  const Val& b = imp.In(c, 1);
  // MINIMUM / MAXIMUM by a scalar constant is a one-sided clamp (what
  // tf.clip_by_value becomes), lowered as ONNX's Clip is: the bound an
  // attribute, not a tensor to quantize. Converters write "no bound" as
  // float32's largest value, which as a quantized operand would become a
  // bound at the top of its own small range.
  if ((c.code == kMinimum || c.code == kMaximum) && ScalarConst(a) != ScalarConst(b)) {
    const size_t xi = ScalarConst(a) ? 1 : 0;
    const Val& x = imp.In(c, xi);
    const Val& k = imp.In(c, 1 - xi);
    auto bound = imp.ConstFloats(k);
    if (bound && bound->size() == 1 && x.shape.rank_known() && k.shape.rank() <= x.shape.rank()) {
      const double v = (*bound)[0], inf = std::numeric_limits<double>::infinity();
      const bool relu = c.code == kMaximum && v == 0.0;
      AttributeMap attrs;
      if (!relu) attrs = {{"min_value", c.code == kMaximum ? v : -inf}, {"max_value", c.code == kMinimum ? v : inf}};
      const bool nchw = NchwOnly(x);
      auto xin = nchw ? imp.GetNchw(c, xi) : imp.Get(c, xi);
      if (!xin.ok()) return xin.status();
      return Done(imp.Emit(c, relu ? "Relu" : "ReluMinMax", {xin.value()}, std::move(attrs), 0, nchw));
    }
  }
  // Stay in NCHW when both operands are NCHW activations of one shape, or one is a scalar constant.
  const bool nchw = (NchwOnly(a) && (ScalarConst(b) || (NchwOnly(b) && a.shape == b.shape))) ||
                    (NchwOnly(b) && ScalarConst(a));
  std::vector<TensorId> in;
  for (size_t i = 0; i < 2; ++i) {
    const Val& v = imp.In(c, i);
    auto t = nchw && !ScalarConst(v) ? imp.GetNchw(c, i) : imp.Get(c, i);
    if (!t.ok()) return t.status();
    in.push_back(t.value());
  }
  return Done(imp.Emit(c, type, in, {}, 0, nchw, act));
}

Status LowerUnary(OpCtx& c) {
  Importer& imp = c.imp;
  std::string type;
  AttributeMap attrs;
  switch (c.code) {
    case kRelu: type = "Relu"; break;
    case kRelu6: type = "ReluMinMax"; attrs = {{"min_value", 0.0}, {"max_value", 6.0}}; break;
    case kReluN1To1: type = "ReluMinMax"; attrs = {{"min_value", -1.0}, {"max_value", 1.0}}; break;
    case kRelu0To1: type = "ReluMinMax"; attrs = {{"min_value", 0.0}, {"max_value", 1.0}}; break;
    case kLogistic: type = "Sigmoid"; break;
    case kTanh: type = "Tanh"; break;
    case kHardSwish: type = "HardSwish"; break;
    case kElu: type = "Elu"; attrs = {{"alpha", 1.0}}; break;
    case kExp: type = "ElementWiseExp"; break;
    case kLog: type = "ElementWiseLog"; break;
    case kSqrt: type = "ElementWiseSquareRoot"; break;
    case kRsqrt: type = "ElementWiseRsqrt"; break;
    case kAbs: type = "ElementWiseAbs"; break;
    case kNeg: type = "ElementWiseNeg"; break;
    case kFloor: type = "ElementWiseFloor"; break;
    default: break;
  }
  const bool nchw = NchwOnly(imp.In(c, 0));
  TRY(x, nchw ? imp.GetNchw(c, 0) : imp.Get(c, 0));
  if (c.code == kSquare) return Done(imp.Emit(c, "ElementWiseMultiply", {x, x}, {}, 0, nchw));
  if (c.code == kLeakyRelu) {
    const auto* o = c.op.builtin_options_as_LeakyReluOptions();
    const float alpha = o ? o->alpha() : 0.2f;
    auto slope = imp.graph().AddConstant(fmt::format("{}/alpha", c.name), DType::kFloat32, Shape::Scalar(),
                                         StaticData::Copy(&alpha, sizeof alpha));
    if (!slope.ok()) return imp.Fail(c, "builtin_options.alpha", "{}", slope.status().message());
    return Done(imp.Emit(c, "Prelu", {x, slope.value()}, {}, 0, nchw));
  }
  return Done(imp.Emit(c, type, {x}, attrs, 0, nchw));
}

Status LowerPrelu(OpCtx& c) {
  Importer& imp = c.imp;
  TRY(x, imp.Get(c, 0));
  TRY(alpha, imp.Get(c, 1));
  return Done(imp.Emit(c, "Prelu", {x, alpha}));
}

}  // namespace qairt::tflite_import
