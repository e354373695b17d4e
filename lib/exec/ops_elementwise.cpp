// Element-wise kernels: unary maths and activations, binary arithmetic with
// numpy broadcasting, comparisons, logic, select.
// The kernels' loops are written to auto-vectorise (the module is built
// with -O3: CMakeLists.txt, qairt_exec).
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <utility>

#include "exec/isa_dispatch.h"
#include "exec/kernel.h"

namespace qairt::exec {
namespace {

// Calls f(out_offset, offsets[N], run, incs[N]) for runs of the innermost dim.
template <size_t N, typename F>
void BroadcastLoop(const std::vector<int64_t>& od, const std::array<std::vector<int64_t>, N>& st, F&& f) {
  const size_t r = od.size();
  const int64_t total = Count(od);
  if (total == 0) return;
  std::array<int64_t, N> off{}, inc{};
  if (r == 0) {
    f(int64_t{0}, off, int64_t{1}, inc);
    return;
  }
  const int64_t inner = od[r - 1];
  for (size_t k = 0; k < N; ++k) inc[k] = st[k][r - 1];
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < total; o += inner) {
    for (size_t k = 0; k < N; ++k) {
      int64_t v = 0;
      for (size_t d = 0; d + 1 < r; ++d) v += idx[d] * st[k][d];
      off[k] = v;
    }
    f(o, off, inner, inc);
    for (size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < od[d]) break;
      idx[d] = 0;
    }
  }
}

enum BinOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kFloorDiv, kMod, kFmod, kSqDiff, kPrelu,
             kEq, kNe, kGt, kGe, kLt, kLe, kAnd, kOr, kXor };
// The op type each BinOp's kernel is registered as, in enum order.
constexpr const char* kBinaryOpTypes[] = {
    "ElementWiseAdd", "ElementWiseSubtract", "ElementWiseMultiply", "ElementWiseDivide", "ElementWisePower",
    "ElementWiseMaximum", "ElementWiseMinimum", "ElementWiseFloorDiv", "ElementWiseMod", "ElementWiseFmod",
    "ElementWiseSquaredDifference", "Prelu",
    "ElementWiseEqual", "ElementWiseNotEqual", "ElementWiseGreater", "ElementWiseGreaterEqual", "ElementWiseLess",
    "ElementWiseLessEqual", "ElementWiseAnd", "ElementWiseOr", "ElementWiseXor"};
static_assert(std::size(kBinaryOpTypes) == kXor + 1, "one op type per BinOp");

template <int OP, typename T>
inline T Arith(T a, T b) {
  if constexpr (OP == kAdd) return a + b;
  else if constexpr (OP == kSub) return a - b;
  else if constexpr (OP == kMul) return a * b;
  else if constexpr (OP == kDiv) {
    if constexpr (std::is_integral_v<T>) return b == 0 ? 0 : (b == -1 ? static_cast<T>(0 - static_cast<uint64_t>(a)) : a / b);
    else return a / b;
  } else if constexpr (OP == kPow) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    // A square (RMSNorm's x^2) as a product: exact where powf may be 1 ulp
    // off, and a tenth of its time (ONNX Runtime does the same).
    else return b == T(2) ? a * a : std::pow(a, b);
  } else if constexpr (OP == kMax) {
    if constexpr (std::is_floating_point_v<T>) if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return a > b ? a : b;
  } else if constexpr (OP == kMin) {
    if constexpr (std::is_floating_point_v<T>) if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return a < b ? a : b;
  } else if constexpr (OP == kFloorDiv) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      T q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    } else return std::floor(a / b);
  } else if constexpr (OP == kMod) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      T r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      T r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  } else if constexpr (OP == kFmod) {
    if constexpr (std::is_integral_v<T>) return b == 0 ? 0 : a % b;
    else return std::fmod(a, b);
  } else if constexpr (OP == kSqDiff) return (a - b) * (a - b);
  else if constexpr (OP == kPrelu) return a < 0 ? a * b : a;
  else return a;
}

template <int OP, typename T>
void RunBinary(const Buf& a, const T* pa, const Buf& b, const T* pb, Buf& o, T* po) {
  if (a.dims == o.dims && b.dims == o.dims) {
    for (int64_t k = 0; k < o.count; ++k) po[k] = Arith<OP, T>(pa[k], pb[k]);
    return;
  }
  if (a.dims == o.dims && b.count == 1) {
    const T bv = pb[0];
    for (int64_t k = 0; k < o.count; ++k) po[k] = Arith<OP, T>(pa[k], bv);
    return;
  }
  std::array<std::vector<int64_t>, 2> st = {BroadcastStrides(a.dims, o.dims), BroadcastStrides(b.dims, o.dims)};
  BroadcastLoop<2>(o.dims, st, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& inc) {
    const T* x = pa + off[0];
    const T* y = pb + off[1];
    T* z = po + oo;
    if (inc[0] == 1 && inc[1] == 1) for (int64_t k = 0; k < n; ++k) z[k] = Arith<OP, T>(x[k], y[k]);
    else if (inc[0] == 1 && inc[1] == 0) { const T yv = *y; for (int64_t k = 0; k < n; ++k) z[k] = Arith<OP, T>(x[k], yv); }
    else if (inc[0] == 0 && inc[1] == 1) { const T xv = *x; for (int64_t k = 0; k < n; ++k) z[k] = Arith<OP, T>(xv, y[k]); }
    else for (int64_t k = 0; k < n; ++k) z[k] = Arith<OP, T>(x[k * inc[0]], y[k * inc[1]]);
  });
}

template <int OP, typename T>
inline bool Compare(T a, T b) {
  if constexpr (OP == kEq) return a == b;
  else if constexpr (OP == kNe) return a != b;
  else if constexpr (OP == kGt) return a > b;
  else if constexpr (OP == kGe) return a >= b;
  else if constexpr (OP == kLt) return a < b;
  else if constexpr (OP == kLe) return a <= b;
  else if constexpr (OP == kAnd) return (a != 0) && (b != 0);
  else if constexpr (OP == kOr) return (a != 0) || (b != 0);
  else return (a != 0) != (b != 0);
}

template <int OP, typename T>
void RunCompare(const Buf& a, const T* pa, const Buf& b, const T* pb, Buf& o) {
  uint8_t* po = o.b();
  std::array<std::vector<int64_t>, 2> st = {BroadcastStrides(a.dims, o.dims), BroadcastStrides(b.dims, o.dims)};
  BroadcastLoop<2>(o.dims, st, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& inc) {
    for (int64_t k = 0; k < n; ++k) po[oo + k] = Compare<OP, T>(pa[off[0] + k * inc[0]], pb[off[1] + k * inc[1]]);
  });
}

template <int OP>
Status Binary(Ctx& c) {
  const Buf& a = c.in(0);
  const Buf& b = c.in(1);
  Buf& o = c.out(0);
  if constexpr (OP >= kEq) {
    if (a.store == Store::kF32 || b.store == Store::kF32) RunCompare<OP, float>(a, c.F32(0), b, c.F32(1), o);
    else RunCompare<OP, int64_t>(a, c.I64(0), b, c.I64(1), o);
    return Status::Ok();
  } else {
    if (o.store == Store::kF32) {
      RunBinary<OP, float>(a, c.F32(0), b, c.F32(1), o, o.f());
    } else if (o.store == Store::kI64) {
      RunBinary<OP, int64_t>(a, c.I64(0), b, c.I64(1), o, o.i());
    } else {
      return c.Fail("boolean output is not supported for this op");
    }
    return Status::Ok();
  }
}

enum UnOp { uRelu, uRelu1, uRelu6, uReluMinMax, uHardSwish, uSigmoid, uTanh, uGelu, uGeluTanh, uElu, uAbs, uNeg,
            uExp, uLog, uSqrt, uRsqrt, uSin, uCos, uAsin, uAtan, uFloor, uCeil, uRound, uSign, uSoftplus, uErf };
// The op type each UnOp's UnaryKernel is registered as, in enum order; null
// for the ops another kernel serves (Gelu picks its form from `approximate`,
// Softplus has a beta, erf comes as ElementWiseUnary's operation).
constexpr const char* kUnaryOpTypes[] = {
    "Relu", "Relu1", "Relu6", "ReluMinMax", "HardSwish", "Sigmoid", "Tanh", nullptr, nullptr, "Elu",
    "ElementWiseAbs", "ElementWiseNeg", "ElementWiseExp", "ElementWiseLog", "ElementWiseSquareRoot", "ElementWiseRsqrt",
    "ElementWiseSin", "ElementWiseCos", "ElementWiseAsin", "ElementWiseAtan", "ElementWiseFloor", "ElementWiseCeil",
    "ElementWiseRound", "ElementWiseSign", nullptr, nullptr};
static_assert(std::size(kUnaryOpTypes) == uErf + 1, "one entry per UnOp");

struct UnParams {
  float lo = 0, hi = 0, alpha = 1;
};

// Clip (ReLU6 and friends; a tenth of a MobileNet-style model's time) with
// NaN passed through, compiled per ISA (isa_dispatch.h).
QAIRT_EXEC_ISA_VARIANTS(void, ClipF32Isa,
                        (const float* __restrict x, float* __restrict y, int64_t n, float lo, float hi), {
                          for (int64_t k = 0; k < n; ++k) {
                            const float v = x[k];
                            const float raised = v < lo ? lo : v;             // std::max(v, lo)
                            const float clipped = hi < raised ? hi : raised;  // std::min(raised, hi)
                            y[k] = v != v ? v : clipped;
                          }
                        })
inline void ClipF32(const float* x, float* y, int64_t n, float lo, float hi) {
  QAIRT_EXEC_ISA_CALL(ClipF32Isa, x, y, n, lo, hi);
}

// HardSwish, Unary<uHardSwish> vectorized (the same operations in the same
// order, so the same bits; NaN and -0 included): left to the scalar loop it
// was a seventh of a MobileNetV3-style recognizer's simulation time.
QAIRT_EXEC_ISA_VARIANTS(void, HardSwishF32Isa, (const float* __restrict x, float* __restrict y, int64_t n), {
  for (int64_t k = 0; k < n; ++k) {
    const float v = x[k];
    const float t = v * (1.0f / 6.0f) + 0.5f;
    const float raised = t < 0.0f ? 0.0f : t;            // std::max(t, 0.0f)
    const float gate = 1.0f < raised ? 1.0f : raised;    // std::min(raised, 1.0f)
    y[k] = v * gate;
  }
})

template <int OP>
inline float Unary(float x, const UnParams& p) {
  if constexpr (OP == uRelu) return std::max(x, 0.0f);
  else if constexpr (OP == uRelu1) return std::min(std::max(x, -1.0f), 1.0f);
  else if constexpr (OP == uRelu6) return std::min(std::max(x, 0.0f), 6.0f);
  else if constexpr (OP == uReluMinMax) return std::isnan(x) ? x : std::min(std::max(x, p.lo), p.hi);
  // ONNX's definition, x * clamp(x / 6 + 1 / 2, 0, 1), with its float constants: ONNX Runtime
  // computes exactly this, so Q-DQ exports agree with it bit for bit (gemm.cpp).
  else if constexpr (OP == uHardSwish) return x * std::min(std::max(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
  else if constexpr (OP == uSigmoid) return x >= 0 ? 1.0f / (1.0f + std::exp(-x)) : std::exp(x) / (1.0f + std::exp(x));
  else if constexpr (OP == uTanh) return std::tanh(x);
  else if constexpr (OP == uGelu) return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
  else if constexpr (OP == uGeluTanh) return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  else if constexpr (OP == uElu) return x >= 0 ? x : p.alpha * (std::exp(x) - 1.0f);
  else if constexpr (OP == uAbs) return std::fabs(x);
  else if constexpr (OP == uNeg) return -x;
  else if constexpr (OP == uExp) return std::exp(x);
  else if constexpr (OP == uLog) return std::log(x);
  else if constexpr (OP == uSqrt) return std::sqrt(x);
  else if constexpr (OP == uRsqrt) return 1.0f / std::sqrt(x);
  else if constexpr (OP == uSin) return std::sin(x);
  else if constexpr (OP == uCos) return std::cos(x);
  else if constexpr (OP == uAsin) return std::asin(x);
  else if constexpr (OP == uAtan) return std::atan(x);
  else if constexpr (OP == uFloor) return std::floor(x);
  else if constexpr (OP == uCeil) return std::ceil(x);
  else if constexpr (OP == uRound) return std::nearbyint(x);
  else if constexpr (OP == uSign) return x > 0 ? 1.0f : x < 0 ? -1.0f : x;
  else if constexpr (OP == uSoftplus) return x > 20.0f ? x : std::log1p(std::exp(x));
  else return std::erf(x);
}

template <int OP>
Status UnaryKernel(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& o = c.out(0);
  UnParams p;
  if constexpr (OP == uReluMinMax) {
    p.lo = static_cast<float>(c.Float("min_value", -std::numeric_limits<double>::infinity()));
    p.hi = static_cast<float>(c.Float("max_value", std::numeric_limits<double>::infinity()));
  }
  if constexpr (OP == uElu) p.alpha = static_cast<float>(c.Float("alpha", 1.0));
  if (o.store == Store::kI64) {
    const int64_t* xi = c.I64(0);
    int64_t* y = o.i();
    for (int64_t k = 0; k < o.count; ++k) {
      const int64_t v = xi[k];
      if constexpr (OP == uAbs) y[k] = v < 0 ? -v : v;
      else if constexpr (OP == uNeg) y[k] = -v;
      else if constexpr (OP == uSign) y[k] = v > 0 ? 1 : v < 0 ? -1 : 0;
      else if constexpr (OP == uRelu) y[k] = v > 0 ? v : 0;
      else if constexpr (OP == uReluMinMax) y[k] = static_cast<int64_t>(std::min<double>(std::max<double>(static_cast<double>(v), p.lo), p.hi));
      else y[k] = static_cast<int64_t>(Unary<OP>(static_cast<float>(v), p));
    }
    return Status::Ok();
  }
  const float* xf = c.F32(0);
  float* y = o.f();
  // Vectorized clamps; the same values as Unary<OP> (NaN and -0 included).
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if constexpr (OP == uReluMinMax) {
    ClipF32(xf, y, o.count, p.lo, p.hi);
  } else if constexpr (OP == uRelu) {
    ClipF32(xf, y, o.count, 0.0f, kInf);
  } else if constexpr (OP == uRelu6) {
    ClipF32(xf, y, o.count, 0.0f, 6.0f);
  } else if constexpr (OP == uRelu1) {
    ClipF32(xf, y, o.count, -1.0f, 1.0f);
  } else if constexpr (OP == uHardSwish) {
    QAIRT_EXEC_ISA_CALL(HardSwishF32Isa, xf, y, o.count);
  } else {
    for (int64_t k = 0; k < o.count; ++k) y[k] = Unary<OP>(xf[k], p);
  }
  (void)x;
  return Status::Ok();
}

Status GeluKernel(Ctx& c) {
  return c.Str("approximate", "none") == "tanh" ? UnaryKernel<uGeluTanh>(c) : UnaryKernel<uGelu>(c);
}

Status ElementWiseUnary(Ctx& c) {
  const std::string op = c.Str("operation", "");
  if (op == "erf") return UnaryKernel<uErf>(c);
  return c.Fail("operation '{}' is not supported", op);
}

Status Softplus(Ctx& c) {
  const float beta = static_cast<float>(c.Float("beta", 1.0));
  const float threshold = static_cast<float>(c.Float("threshold", 20.0));
  const float* x = c.F32(0);
  float* y = c.out(0).f();
  for (int64_t k = 0; k < c.out(0).count; ++k) {
    const float bx = beta * x[k];
    y[k] = bx > threshold ? x[k] : std::log1p(std::exp(bx)) / beta;
  }
  return Status::Ok();
}

Status NotKernel(Ctx& c) {
  const int64_t* x = c.I64(0);
  for (int64_t k = 0; k < c.out(0).count; ++k) c.out(0).b()[k] = x[k] == 0;
  return Status::Ok();
}

Status IsNanKernel(Ctx& c) {
  const float* x = c.F32(0);
  for (int64_t k = 0; k < c.out(0).count; ++k) c.out(0).b()[k] = std::isnan(x[k]);
  return Status::Ok();
}

Status IsInfKernel(Ctx& c) {
  const bool neg = c.Int("detect_negative", 1) != 0, pos = c.Int("detect_positive", 1) != 0;
  const float* x = c.F32(0);
  for (int64_t k = 0; k < c.out(0).count; ++k)
    c.out(0).b()[k] = std::isinf(x[k]) && ((x[k] > 0 && pos) || (x[k] < 0 && neg));
  return Status::Ok();
}

template <typename T>
void RunSelect(const Buf& cb, const uint8_t* pc, const Buf& a, const T* pa, const Buf& b, const T* pb, Buf& o, T* po) {
  std::array<std::vector<int64_t>, 3> st = {BroadcastStrides(cb.dims, o.dims), BroadcastStrides(a.dims, o.dims),
                                            BroadcastStrides(b.dims, o.dims)};
  BroadcastLoop<3>(o.dims, st, [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& inc) {
    for (int64_t k = 0; k < n; ++k)
      po[oo + k] = pc[off[0] + k * inc[0]] ? pa[off[1] + k * inc[1]] : pb[off[2] + k * inc[2]];
  });
}

Status Select(Ctx& c) {
  const Buf& cond = c.in(0);
  std::vector<uint8_t> cv;
  const uint8_t* pc = cond.b();
  if (cond.store != Store::kBool) {
    const int64_t* ci = c.I64(0);
    cv.resize(static_cast<size_t>(cond.count));
    for (int64_t k = 0; k < cond.count; ++k) cv[static_cast<size_t>(k)] = ci[k] != 0;
    pc = cv.data();
  }
  Buf& o = c.out(0);
  if (o.store == Store::kF32) RunSelect<float>(cond, pc, c.in(1), c.F32(1), c.in(2), c.F32(2), o, o.f());
  else if (o.store == Store::kI64) RunSelect<int64_t>(cond, pc, c.in(1), c.I64(1), c.in(2), c.I64(2), o, o.i());
  else RunSelect<uint8_t>(cond, pc, c.in(1), c.in(1).b(), c.in(2), c.in(2).b(), o, o.b());
  return Status::Ok();
}

// Binary<op> for every BinOp, UnaryKernel<op> for every UnOp with an op type.
template <size_t... Ops>
void RegisterBinary(KernelTable& m, std::index_sequence<Ops...>) {
  ((m[kBinaryOpTypes[Ops]] = Binary<static_cast<int>(Ops)>), ...);
}
template <int Op>
void RegisterUnaryOp(KernelTable& m) {
  if constexpr (kUnaryOpTypes[Op] != nullptr) m[kUnaryOpTypes[Op]] = UnaryKernel<Op>;
}
template <size_t... Ops>
void RegisterUnary(KernelTable& m, std::index_sequence<Ops...>) {
  (RegisterUnaryOp<static_cast<int>(Ops)>(m), ...);
}

}  // namespace

void RegisterElementwise(KernelTable* t) {
  auto& m = *t;
  RegisterBinary(m, std::make_index_sequence<std::size(kBinaryOpTypes)>());
  RegisterUnary(m, std::make_index_sequence<std::size(kUnaryOpTypes)>());
  // The kernels outside BinOp and UnOp.
  m.insert({{"ElementWiseSelect", Select}, {"Gelu", GeluKernel}, {"ElementWiseSoftplus", Softplus},
            {"ElementWiseUnary", ElementWiseUnary}, {"ElementWiseNot", NotKernel}, {"IsNan", IsNanKernel},
            {"IsInf", IsInfKernel}});
}

}  // namespace qairt::exec
