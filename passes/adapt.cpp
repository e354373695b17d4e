#include "passes/adapt.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace qairt::pass {

int PrecisionRank(DType d) {
  if (d == DType::kFloat32) return 6;
  if (d == DType::kFloat16 || d == DType::kBFloat16) return 5;
  if (!IsFixedPoint(d) && !IsInteger(d)) return -1;
  switch (DTypeBits(d)) {
    case 2: return 0;
    case 4: return 1;
    case 8: return 2;
    case 16: return 3;
    case 32: return 4;
    default: return -1;
  }
}

DType RequestedDType(const Tensor& t) {
  if (t.encoding && t.encoding->kind != EncodingKind::kArrayOf) return t.encoding->dtype;
  if (t.encoding) return t.encoding->dtype;
  return t.dtype;
}

Encoding FloatEncoding(DType dtype) {
  Encoding e;
  e.kind = EncodingKind::kFloat;
  e.dtype = dtype;
  return e;
}

namespace {

// Grid of `bits` bits: [qmin, qmax].
QuantRange Grid(bool is_signed, uint32_t bits) {
  if (is_signed) return {-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1};
  return {0, (int64_t{1} << bits) - 1};
}

bool HasScales(const Encoding& e) {
  return e.kind == EncodingKind::kPerTensor || e.kind == EncodingKind::kPerChannel ||
         (e.kind == EncodingKind::kPerBlock && e.float_offsets.empty());
}

}  // namespace

std::optional<Encoding> AdaptEncoding(const Encoding& e, DType to) {
  if (e.dtype == to) return e;
  if (IsFloat(to)) {
    if (!IsFloat(e.dtype) && !IsFixedPoint(e.dtype)) return std::nullopt;
    if (IsFloat(e.dtype) && PrecisionRank(to) < PrecisionRank(e.dtype)) return std::nullopt;
    return FloatEncoding(to);
  }
  if (!IsFixedPoint(e.dtype) || !IsFixedPoint(to) || !HasScales(e)) return std::nullopt;
  const uint32_t b1 = e.effective_bitwidth(), b2 = DTypeBits(to);
  if (b2 < b1) return std::nullopt;
  const bool s1 = IsSigned(e.dtype), s2 = IsSigned(to);
  Encoding r = e;
  r.dtype = to;
  r.bitwidth = 0;
  const QuantRange g1 = Grid(s1, b1), g2 = Grid(s2, b2);
  if (b2 == b1) {
    // Same grid, shifted: real = (q + o) * s with q' = q -/+ 2^(b-1).
    const int64_t shift = s2 ? (int64_t{1} << (b1 - 1)) : -(int64_t{1} << (b1 - 1));
    for (auto& o : r.offsets.mut()) o = static_cast<int32_t>(o + shift);
    if (r.symmetry == Symmetry::kUnsignedSymmetric) r.symmetry = Symmetry::kAsymmetric;
    return r;
  }
  // Wider grid holding every old grid point exactly.
  const bool symmetric_signed = e.symmetry != Symmetry::kAsymmetric && e.symmetry != Symmetry::kUnsignedSymmetric;
  if (symmetric_signed) {
    // Zero stays at the centre: scale / 2^(b2-b1), old q maps to q * 2^(b2-b1).
    const double k = std::ldexp(1.0, static_cast<int>(b2 - b1));
    for (auto& s : r.scales.mut()) s = static_cast<float>(s / k);
    const int64_t centre = s2 ? 0 : -(int64_t{1} << (b2 - 1));
    for (auto& o : r.offsets.mut()) o = static_cast<int32_t>(centre);
    return r;
  }
  // Asymmetric: k = (2^b2 - 1) / (2^b1 - 1) is an integer when b1 divides b2.
  const uint64_t n1 = (uint64_t{1} << b1) - 1, n2 = (uint64_t{1} << b2) - 1;
  if (n2 % n1 != 0) return std::nullopt;
  const int64_t k = static_cast<int64_t>(n2 / n1);
  for (auto& s : r.scales.mut()) s = static_cast<float>(s / static_cast<double>(k));
  for (auto& o : r.offsets.mut()) {
    const int64_t no = k * (g1.qmin + o) - g2.qmin;
    if (no < INT32_MIN || no > INT32_MAX) return std::nullopt;
    o = static_cast<int32_t>(no);
  }
  r.symmetry = Symmetry::kAsymmetric;
  return r;
}

std::string ConvertOpType(const target::Target& t, DType from, DType to) {
  // Same fixed-point type, different encodings: a requantizing Convert, when
  // the target converts that type at all (QNN's Convert requantizes).
  if (from == to && IsFixedPoint(from)) {
    for (const target::Conversion& c : t.conversions)
      if (c.via == target::ConvertOp::kConvert && std::find(c.from.begin(), c.from.end(), from) != c.from.end() &&
          std::find(c.to.begin(), c.to.end(), to) != c.to.end())
        return "Convert";
    return {};
  }
  const uint32_t ops = t.ConversionOps(from, to);
  if (!ops) return {};
  auto has = [&](target::ConvertOp c) { return (ops >> static_cast<uint32_t>(c)) & 1u; };
  // Prefer the op whose meaning matches the families involved.
  if (IsFloat(from) && IsFixedPoint(to) && has(target::ConvertOp::kQuantize)) return "Quantize";
  if (IsFixedPoint(from) && IsFloat(to) && has(target::ConvertOp::kDequantize)) return "Dequantize";
  if (IsFixedPoint(from) && IsFixedPoint(to) && has(target::ConvertOp::kConvert)) return "Convert";
  if (has(target::ConvertOp::kCast)) return "Cast";
  if (has(target::ConvertOp::kConvert)) return "Convert";
  if (has(target::ConvertOp::kQuantize)) return "Quantize";
  return "Dequantize";
}

std::string DTypeTuple(const std::vector<DType>& in, const std::vector<DType>& out) {
  std::string s = "IN < ";
  for (DType d : in) s += fmt::format("{}, ", DTypeShortName(d));
  s += "> OUT < ";
  for (DType d : out) s += fmt::format("{}, ", DTypeShortName(d));
  s += ">";
  return s;
}

std::string FormatDistance(double d) {
  if (std::isinf(d)) return "inf";
  return fmt::format("{:g}", d);
}

std::string DistanceTuple(const std::vector<double>& in, const std::vector<double>& out) {
  std::string s = "IN < ";
  for (double d : in) s += FormatDistance(d) + ", ";
  s += "> OUT < ";
  for (double d : out) s += FormatDistance(d) + ", ";
  s += ">";
  return s;
}

std::string_view EncodingTypeName(const std::optional<Encoding>& e) {
  if (!e || e->kind == EncodingKind::kFloat) return "undefined";
  switch (e->kind) {
    case EncodingKind::kPerTensor: return e->bitwidth && e->bitwidth < DTypeBits(e->dtype) ? "bw_scale_offset" : "scale_offset";
    case EncodingKind::kPerChannel: return "axis_scale_offset";
    case EncodingKind::kPerBlock: return "block";
    case EncodingKind::kLpbq: return "blockwise_expansion";
    case EncodingKind::kArrayOf: return "vector";
    default: return "undefined";
  }
}

}  // namespace qairt::pass
