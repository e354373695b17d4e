// Lowering of ONNX's elementwise ops and activations.
#include <cmath>
#include <limits>

#include "onnx/importer.h"

namespace qairt::onnx_import {
namespace {

const std::unordered_map<std::string, std::string>& DirectMap() {
  static const std::unordered_map<std::string, std::string> m = {
      {"Add", "ElementWiseAdd"}, {"Sub", "ElementWiseSubtract"}, {"Mul", "ElementWiseMultiply"},
      {"Div", "ElementWiseDivide"}, {"Pow", "ElementWisePower"}, {"Sqrt", "ElementWiseSquareRoot"},
      {"Exp", "ElementWiseExp"}, {"Log", "ElementWiseLog"}, {"Abs", "ElementWiseAbs"}, {"Neg", "ElementWiseNeg"},
      {"Floor", "ElementWiseFloor"}, {"Ceil", "ElementWiseCeil"}, {"Round", "ElementWiseRound"},
      {"Sin", "ElementWiseSin"}, {"Cos", "ElementWiseCos"}, {"Asin", "ElementWiseAsin"}, {"Atan", "ElementWiseAtan"},
      {"Sign", "ElementWiseSign"}, {"Not", "ElementWiseNot"}, {"And", "ElementWiseAnd"}, {"Or", "ElementWiseOr"},
      {"Xor", "ElementWiseXor"}, {"Equal", "ElementWiseEqual"}, {"Less", "ElementWiseLess"},
      {"LessOrEqual", "ElementWiseLessEqual"}, {"Greater", "ElementWiseGreater"},
      {"GreaterOrEqual", "ElementWiseGreaterEqual"}, {"Where", "ElementWiseSelect"}, {"Relu", "Relu"},
      {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"HardSwish", "HardSwish"}, {"PRelu", "Prelu"},
      {"Softplus", "ElementWiseSoftplus"}, {"IsNaN", "IsNan"}};
  return m;
}

Status LowerDirect(NodeContext& ctx) {
  std::vector<TensorId> in;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) in.push_back(ctx.in_tensor(k));
  auto out = ctx.Emit(DirectMap().at(ctx.op_type()), in);
  return out.ok() ? Status::Ok() : out.status();
}

// Sum/Max/Min/Mean of N inputs: a chain of binary ops.
Status LowerVariadic(NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  const std::string type = op == "Max" ? "ElementWiseMaximum" : op == "Min" ? "ElementWiseMinimum" : "ElementWiseAdd";
  std::vector<TensorId> in;
  for (size_t k = 0; k < ctx.num_inputs(); ++k)
    if (ctx.has_input(k)) in.push_back(ctx.in_tensor(k));
  if (in.empty()) return ctx.Fail("inputs", "needs at least one input");
  const bool mean = op == "Mean";
  // Max/Min of an activation and a scalar constant is a one-sided Clip, and
  // lowered as Clip is: the bound an attribute, not a tensor to quantize
  // (a bound written as float32's largest value would otherwise become one
  // at the top of its own small range).
  if ((op == "Max" || op == "Min") && ctx.num_inputs() == 2 && in.size() == 2 &&
      ctx.in_is_const(0) != ctx.in_is_const(1)) {
    const size_t ki = ctx.in_is_const(0) ? 0 : 1;
    const Value& x = ctx.in(1 - ki);
    const Value& k = ctx.in(ki);
    auto bound = ctx.in_floats(ki);
    if (bound && bound->size() == 1 && IsFloat(x.dtype) && x.shape.rank_known() && k.shape.rank_known() &&
        k.shape.rank() <= x.shape.rank()) {
      const double v = (*bound)[0], inf = std::numeric_limits<double>::infinity();
      const bool relu = op == "Max" && v == 0.0;
      AttributeMap attrs;
      if (!relu) attrs = {{"min_value", op == "Max" ? v : -inf}, {"max_value", op == "Min" ? v : inf}};
      auto out = ctx.Emit(relu ? "Relu" : "ReluMinMax", {in[1 - ki]}, std::move(attrs));
      return out.ok() ? Status::Ok() : out.status();
    }
  }
  if (in.size() == 1 && !mean) {
    ctx.Alias(0, ctx.in(0));
    return Status::Ok();
  }
  TensorId acc = in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    const bool last = k + 1 == in.size() && !mean;
    if (last) {
      auto out = ctx.Emit(type, {acc, in[k]});
      return out.ok() ? Status::Ok() : out.status();
    }
    auto t = ctx.EmitTemp(type, fmt::format("partial{}", k), {acc, in[k]});
    if (!t.ok()) return t.status();
    acc = t.value();
  }
  const TensorId n = ctx.ScalarFloat("count", static_cast<float>(in.size()));
  auto out = ctx.Emit("ElementWiseDivide", {acc, n});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerClip(NodeContext& ctx) {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (ctx.opset() < 11) {
    lo = ctx.Float("min", lo);
    hi = ctx.Float("max", hi);
  } else {
    bool constant_bounds = true;
    for (size_t k : {size_t{1}, size_t{2}}) {
      if (!ctx.has_input(k)) continue;
      if (ctx.in_is_const(k)) {
        auto v = ctx.in_floats(k);
        if (!v || v->size() != 1) return ctx.Fail(fmt::format("inputs[{}]", k), "Clip bounds must be scalars");
        (k == 1 ? lo : hi) = (*v)[0];
      } else {
        constant_bounds = false;
      }
    }
    // A bound computed from the data (an audio front-end clips a log
    // spectrum at max(x) - 80 dB): min(max(x, lo), hi), as ONNX Runtime
    // evaluates Clip, so lo > hi gives hi.
    if (!constant_bounds) {
      // A constant infinite bound bounds nothing: no op, and no infinite
      // constant for calibration to refuse.
      const bool use_lo = ctx.has_input(1) && !(ctx.in_is_const(1) && std::isinf(lo) && lo < 0);
      const bool use_hi = ctx.has_input(2) && !(ctx.in_is_const(2) && std::isinf(hi) && hi > 0);
      TensorId x = ctx.in_tensor(0);
      if (use_lo) {
        if (!use_hi) {
          auto out = ctx.Emit("ElementWiseMaximum", {x, ctx.in_tensor(1)});
          return out.ok() ? Status::Ok() : out.status();
        }
        auto t = ctx.EmitTemp("ElementWiseMaximum", "min", {x, ctx.in_tensor(1)});
        if (!t.ok()) return t.status();
        x = t.value();
      }
      auto out = ctx.Emit("ElementWiseMinimum", {x, ctx.in_tensor(2)});
      return out.ok() ? Status::Ok() : out.status();
    }
  }
  if (lo == 0.0 && std::isinf(hi) && hi > 0) {
    auto out = ctx.Emit("Relu", {ctx.in_tensor(0)});
    return out.ok() ? Status::Ok() : out.status();
  }
  auto out = ctx.Emit("ReluMinMax", {ctx.in_tensor(0)}, {{"min_value", lo}, {"max_value", hi}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerLeakyRelu(NodeContext& ctx) {
  const TensorId slope = ctx.ScalarFloat("alpha", static_cast<float>(ctx.Float("alpha", 0.01)));
  auto out = ctx.Emit("Prelu", {ctx.in_tensor(0), slope});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerElu(NodeContext& ctx) {
  auto out = ctx.Emit("Elu", {ctx.in_tensor(0)}, {{"alpha", ctx.Float("alpha", 1.0)}});
  return out.ok() ? Status::Ok() : out.status();
}

// HardSigmoid(x) = clip(alpha * x + beta, 0, 1), spelled with QNN ops.
Status LowerIsInf(NodeContext& ctx) {
  auto out = ctx.Emit("IsInf", {ctx.in_tensor(0)}, {{"detect_negative", ctx.Int("detect_negative", 1)},
                                                    {"detect_positive", ctx.Int("detect_positive", 1)}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerHardSigmoid(NodeContext& ctx) {
  const auto alpha = static_cast<float>(ctx.Float("alpha", 0.2)), beta = static_cast<float>(ctx.Float("beta", 0.5));
  auto scaled = ctx.EmitTemp("ElementWiseMultiply", "scale", {ctx.in_tensor(0), ctx.ScalarFloat("alpha", alpha)});
  if (!scaled.ok()) return scaled.status();
  auto shifted = ctx.EmitTemp("ElementWiseAdd", "shift", {scaled.value(), ctx.ScalarFloat("beta", beta)});
  if (!shifted.ok()) return shifted.status();
  auto out = ctx.Emit("ReluMinMax", {shifted.value()}, {{"min_value", 0.0}, {"max_value", 1.0}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerGelu(NodeContext& ctx) {
  auto out = ctx.Emit("Gelu", {ctx.in_tensor(0)}, {{"approximate", ctx.String("approximate", "none")}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerErf(NodeContext& ctx) {
  auto out = ctx.Emit("ElementWiseUnary", {ctx.in_tensor(0)}, {{"operation", std::string("erf")}});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerReciprocal(NodeContext& ctx) {
  auto out = ctx.Emit("ElementWiseDivide", {ctx.ScalarFloat("one", 1.0f), ctx.in_tensor(0)});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerMod(NodeContext& ctx) {
  auto out = ctx.Emit(ctx.Int("fmod", 0) ? "ElementWiseFmod" : "ElementWiseMod", {ctx.in_tensor(0), ctx.in_tensor(1)});
  return out.ok() ? Status::Ok() : out.status();
}

Status LowerIdentity(NodeContext& ctx) {
  // Inference-mode Dropout is the identity; its mask is all true.
  if (ctx.op_type() == "Dropout" && ctx.has_output(1) && ctx.importer().ConsumerCount(ctx.output_name(1)) > 0)
    return ctx.Fail("outputs[1]", "Dropout's mask output is read by another node; that is not supported");
  if (ctx.op_type() == "Dropout" && ctx.has_input(2)) {
    // Training mode with ratio 0 is still the identity (torch exports
    // F.dropout(p=0.0) so even in eval mode: torchvision's Swin).
    auto training = ctx.in_ints(2);
    const auto ratio = ctx.has_input(1) ? ctx.in_floats(1) : std::optional<std::vector<double>>(std::vector<double>{0.5});
    const bool identity = training && training->size() == 1 &&
                          ((*training)[0] == 0 || (ratio && ratio->size() == 1 && (*ratio)[0] == 0.0));
    if (!identity)
      return ctx.Fail("inputs[2]", "Dropout in training mode (random masks) is not supported; export the model in "
                      "inference mode (model.eval())");
  }
  ctx.Alias(0, ctx.in(0));
  return Status::Ok();
}

}  // namespace

void RegisterElementwiseLowerings(std::unordered_map<std::string, LowerFn>* t) {
  for (const auto& [onnx_type, qnn] : DirectMap()) (*t)[onnx_type] = LowerDirect;
  for (const char* op : {"Sum", "Max", "Min", "Mean"}) (*t)[op] = LowerVariadic;
  (*t)["Clip"] = LowerClip;
  (*t)["IsInf"] = LowerIsInf;
  (*t)["LeakyRelu"] = LowerLeakyRelu;
  (*t)["Elu"] = LowerElu;
  (*t)["HardSigmoid"] = LowerHardSigmoid;
  (*t)["Gelu"] = LowerGelu;
  (*t)["Erf"] = LowerErf;
  (*t)["Reciprocal"] = LowerReciprocal;
  (*t)["Mod"] = LowerMod;
  (*t)["Identity"] = LowerIdentity;
  (*t)["Dropout"] = LowerIdentity;
}

}  // namespace qairt::onnx_import
