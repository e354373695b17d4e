// ONNX export of the IR's elementwise ops and activations (reverse of
// lib/onnx/lower_elementwise.cpp).
#include <cmath>
#include <limits>

#include "onnx/exporter.h"

namespace qairt::onnx_export {
namespace {

const std::unordered_map<std::string, std::string>& DirectMap() {
  static const std::unordered_map<std::string, std::string> m = {
      {"ElementWiseAdd", "Add"}, {"ElementWiseSubtract", "Sub"}, {"ElementWiseMultiply", "Mul"},
      {"ElementWiseDivide", "Div"}, {"ElementWisePower", "Pow"}, {"ElementWiseSquareRoot", "Sqrt"},
      {"ElementWiseExp", "Exp"}, {"ElementWiseLog", "Log"}, {"ElementWiseAbs", "Abs"}, {"ElementWiseNeg", "Neg"},
      {"ElementWiseFloor", "Floor"}, {"ElementWiseCeil", "Ceil"}, {"ElementWiseRound", "Round"},
      {"ElementWiseSin", "Sin"}, {"ElementWiseCos", "Cos"}, {"ElementWiseAsin", "Asin"}, {"ElementWiseAtan", "Atan"},
      {"ElementWiseSign", "Sign"}, {"ElementWiseNot", "Not"}, {"ElementWiseAnd", "And"}, {"ElementWiseOr", "Or"},
      {"ElementWiseXor", "Xor"}, {"ElementWiseEqual", "Equal"}, {"ElementWiseLess", "Less"},
      {"ElementWiseGreater", "Greater"}, {"ElementWiseSelect", "Where"}, {"ElementWiseMaximum", "Max"},
      {"ElementWiseMinimum", "Min"}, {"Relu", "Relu"}, {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"Prelu", "PRelu"},
      {"IsNan", "IsNaN"}};
  return m;
}

Status ExportDirect(OpContext& ctx) {
  std::vector<std::string> in;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) in.push_back(ctx.in(k));
  ctx.Node(DirectMap().at(ctx.op().type), in, {ctx.out(0)});
  return Status::Ok();
}

// a <= b, a >= b: LessOrEqual/GreaterOrEqual since opset 12, Not(Greater/Less) before.
Status ExportOrEqual(OpContext& ctx) {
  const bool less = ctx.op().type == "ElementWiseLessEqual";
  if (ctx.opset() >= 12) {
    ctx.Node(less ? "LessOrEqual" : "GreaterOrEqual", {ctx.in(0), ctx.in(1)}, {ctx.out(0)});
    return Status::Ok();
  }
  const std::string t = ctx.Temp(less ? "greater" : "less");
  ctx.Node(less ? "Greater" : "Less", {ctx.in(0), ctx.in(1)}, {t});
  ctx.Node("Not", {t}, {ctx.out(0)}, "not");
  return Status::Ok();
}

Status ExportNotEqual(OpContext& ctx) {
  const std::string t = ctx.Temp("equal");
  ctx.Node("Equal", {ctx.in(0), ctx.in(1)}, {t});
  ctx.Node("Not", {t}, {ctx.out(0)}, "not");
  return Status::Ok();
}

Status ExportSquaredDifference(OpContext& ctx) {
  const std::string d = ctx.Temp("diff");
  ctx.Node("Sub", {ctx.in(0), ctx.in(1)}, {d});
  ctx.Node("Mul", {d, d}, {ctx.out(0)}, "square");
  return Status::Ok();
}

Status ExportFloorDiv(OpContext& ctx) {
  if (!IsFloat(ctx.out_dtype(0)))
    return ctx.Fail("integer floor division has no ONNX spelling (Div truncates)");
  const std::string q = ctx.Temp("quotient");
  ctx.Node("Div", {ctx.in(0), ctx.in(1)}, {q});
  ctx.Node("Floor", {q}, {ctx.out(0)}, "floor");
  return Status::Ok();
}

Status ExportRsqrt(OpContext& ctx) {
  const std::string s = ctx.Temp("sqrt");
  ctx.Node("Sqrt", {ctx.in(0)}, {s});
  ctx.Node("Reciprocal", {s}, {ctx.out(0)}, "reciprocal");
  return Status::Ok();
}

Status ExportMod(OpContext& ctx) {
  auto* n = ctx.Node("Mod", {ctx.in(0), ctx.in(1)}, {ctx.out(0)});
  SetAttr(n, "fmod", int64_t{ctx.op().type == "ElementWiseFmod"});
  return Status::Ok();
}

// Clip with bounds as inputs (opset >= 11); infinite bounds are left out.
Status EmitClip(OpContext& ctx, double lo, double hi) {
  const DType dt = ctx.in_dtype(0);
  std::string min_name, max_name;
  if (!std::isinf(lo)) {
    auto s = ctx.Scalar("min", dt, lo);
    if (!s.ok()) return s.status();
    min_name = s.value();
  }
  if (!std::isinf(hi)) {
    auto s = ctx.Scalar("max", dt, hi);
    if (!s.ok()) return s.status();
    max_name = s.value();
  }
  ctx.Node("Clip", {ctx.in(0), min_name, max_name}, {ctx.out(0)});
  return Status::Ok();
}

Status ExportReluMinMax(OpContext& ctx) {
  return EmitClip(ctx, ctx.Float("min_value", -std::numeric_limits<double>::infinity()),
                  ctx.Float("max_value", std::numeric_limits<double>::infinity()));
}
Status ExportRelu1(OpContext& ctx) { return EmitClip(ctx, -1.0, 1.0); }
Status ExportRelu6(OpContext& ctx) { return EmitClip(ctx, 0.0, 6.0); }

Status ExportElu(OpContext& ctx) {
  SetAttr(ctx.Node("Elu", {ctx.in(0)}, {ctx.out(0)}), "alpha", ctx.Float("alpha", 1.0));
  return Status::Ok();
}

Status ExportHardSwish(OpContext& ctx) {
  if (ctx.opset() >= 14) {
    ctx.Node("HardSwish", {ctx.in(0)}, {ctx.out(0)});
    return Status::Ok();
  }
  // x * HardSigmoid(x; 1/6, 0.5)
  const std::string hs = ctx.Temp("hardsigmoid");
  auto* n = ctx.Node("HardSigmoid", {ctx.in(0)}, {hs});
  SetAttr(n, "alpha", 1.0 / 6.0);
  SetAttr(n, "beta", 0.5);
  ctx.Node("Mul", {ctx.in(0), hs}, {ctx.out(0)}, "mul");
  return Status::Ok();
}

Status ExportGelu(OpContext& ctx) {
  const std::string approx = ctx.String("approximate", "none");
  if (approx != "none" && approx != "tanh") return ctx.Fail("approximate='{}' is not 'none' or 'tanh'", approx);
  if (ctx.opset() >= 20) {
    SetAttr(ctx.Node("Gelu", {ctx.in(0)}, {ctx.out(0)}), "approximate", approx);
    return Status::Ok();
  }
  const DType dt = ctx.in_dtype(0);
  const std::string x = ctx.in(0);
  auto half = ctx.Scalar("half", dt, 0.5);
  auto one = ctx.Scalar("one", dt, 1.0);
  if (!half.ok()) return half.status();
  if (!one.ok()) return one.status();
  std::string inner;  // erf(x / sqrt 2) or tanh(sqrt(2/pi) * (x + 0.044715 x^3))
  if (approx == "none") {
    auto r2 = ctx.Scalar("sqrt2", dt, std::sqrt(2.0));
    if (!r2.ok()) return r2.status();
    const std::string scaled = ctx.Temp("div_sqrt2"), e = ctx.Temp("erf");
    ctx.Node("Div", {x, r2.value()}, {scaled}, "div");
    ctx.Node("Erf", {scaled}, {e}, "erf");
    inner = e;
  } else {
    auto c = ctx.Scalar("coeff", dt, 0.044715);
    auto k = ctx.Scalar("sqrt_2_over_pi", dt, std::sqrt(2.0 / M_PI));
    if (!c.ok()) return c.status();
    if (!k.ok()) return k.status();
    const std::string x2 = ctx.Temp("x2"), x3 = ctx.Temp("x3"), cx3 = ctx.Temp("cx3"), s = ctx.Temp("sum"),
                      ks = ctx.Temp("scaled"), t = ctx.Temp("tanh");
    ctx.Node("Mul", {x, x}, {x2}, "x2");
    ctx.Node("Mul", {x2, x}, {x3}, "x3");
    ctx.Node("Mul", {x3, c.value()}, {cx3}, "cx3");
    ctx.Node("Add", {x, cx3}, {s}, "sum");
    ctx.Node("Mul", {s, k.value()}, {ks}, "scale");
    ctx.Node("Tanh", {ks}, {t}, "tanh");
    inner = t;
  }
  const std::string p1 = ctx.Temp("one_plus"), hx = ctx.Temp("half_x");
  ctx.Node("Add", {inner, one.value()}, {p1}, "one_plus");
  ctx.Node("Mul", {x, half.value()}, {hx}, "half_x");
  ctx.Node("Mul", {hx, p1}, {ctx.out(0)}, "gelu");
  return Status::Ok();
}

Status ExportUnary(OpContext& ctx) {
  static const std::unordered_map<std::string, std::string> kOps = {
      {"erf", "Erf"}, {"tan", "Tan"}, {"acos", "Acos"}, {"asin", "Asin"}, {"atan", "Atan"}, {"cos", "Cos"},
      {"sin", "Sin"}, {"sinh", "Sinh"}, {"cosh", "Cosh"}, {"asinh", "Asinh"}, {"acosh", "Acosh"},
      {"atanh", "Atanh"}, {"reciprocal", "Reciprocal"}, {"softsign", "Softsign"}, {"exp", "Exp"},
      {"log", "Log"}, {"sqrt", "Sqrt"}, {"abs", "Abs"}, {"neg", "Neg"}, {"floor", "Floor"}, {"ceil", "Ceil"},
      {"round", "Round"}, {"sign", "Sign"}};
  const std::string operation = ctx.String("operation", "");
  auto it = kOps.find(operation);
  if (it == kOps.end()) return ctx.Fail("operation '{}' has no ONNX export", operation);
  ctx.Node(it->second, {ctx.in(0)}, {ctx.out(0)});
  return Status::Ok();
}

Status ExportSoftplus(OpContext& ctx) {
  const double beta = ctx.Float("beta", 1.0);
  if (ctx.has("threshold")) return ctx.Fail("threshold is not supported by ONNX Softplus");
  if (beta == 1.0) {
    ctx.Node("Softplus", {ctx.in(0)}, {ctx.out(0)});
    return Status::Ok();
  }
  // softplus(beta * x) / beta
  auto b = ctx.Scalar("beta", ctx.in_dtype(0), beta);
  if (!b.ok()) return b.status();
  const std::string bx = ctx.Temp("beta_x"), sp = ctx.Temp("softplus");
  ctx.Node("Mul", {ctx.in(0), b.value()}, {bx}, "beta_x");
  ctx.Node("Softplus", {bx}, {sp}, "softplus");
  ctx.Node("Div", {sp, b.value()}, {ctx.out(0)}, "div");
  return Status::Ok();
}

Status ExportIsInf(OpContext& ctx) {
  auto* n = ctx.Node("IsInf", {ctx.in(0)}, {ctx.out(0)});
  SetAttr(n, "detect_negative", ctx.Int("detect_negative", 1));
  SetAttr(n, "detect_positive", ctx.Int("detect_positive", 1));
  return Status::Ok();
}

}  // namespace

void RegisterElementwiseExports(std::unordered_map<std::string, ExportFn>* t) {
  for (const auto& [ir, onnx_type] : DirectMap()) (*t)[ir] = ExportDirect;
  (*t)["ElementWiseLessEqual"] = ExportOrEqual;
  (*t)["ElementWiseGreaterEqual"] = ExportOrEqual;
  (*t)["ElementWiseNotEqual"] = ExportNotEqual;
  (*t)["ElementWiseSquaredDifference"] = ExportSquaredDifference;
  (*t)["ElementWiseFloorDiv"] = ExportFloorDiv;
  (*t)["ElementWiseRsqrt"] = ExportRsqrt;
  (*t)["ElementWiseMod"] = ExportMod;
  (*t)["ElementWiseFmod"] = ExportMod;
  (*t)["ReluMinMax"] = ExportReluMinMax;
  (*t)["Relu1"] = ExportRelu1;
  (*t)["Relu6"] = ExportRelu6;
  (*t)["Elu"] = ExportElu;
  (*t)["HardSwish"] = ExportHardSwish;
  (*t)["Gelu"] = ExportGelu;
  (*t)["ElementWiseUnary"] = ExportUnary;
  (*t)["ElementWiseSoftplus"] = ExportSoftplus;
  (*t)["IsInf"] = ExportIsInf;
}

}  // namespace qairt::onnx_export
