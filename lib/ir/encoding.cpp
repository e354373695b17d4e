#include "ir/encoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace qairt {

std::string_view EncodingKindName(EncodingKind k) {
  switch (k) {
    case EncodingKind::kFloat: return "float";
    case EncodingKind::kPerTensor: return "per_tensor";
    case EncodingKind::kPerChannel: return "per_channel";
    case EncodingKind::kPerBlock: return "per_block";
    case EncodingKind::kLpbq: return "lpbq";
    case EncodingKind::kArrayOf: return "array_of";
  }
  return "invalid";
}

std::string_view SymmetryName(Symmetry s) {
  switch (s) {
    case Symmetry::kAsymmetric: return "asymmetric";
    case Symmetry::kSymmetric: return "symmetric";
    case Symmetry::kStrictSymmetric: return "strict_symmetric";
    case Symmetry::kUnsignedSymmetric: return "unsigned_symmetric";
  }
  return "invalid";
}

namespace {

bool FloatsBitEqual(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

template <typename V>  // std::vector or CowVector
std::string Preview(const V& v) {
  constexpr size_t kMax = 5;  // the spec's INFO CSV also shows at most five values
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < kMax; ++i) s += (i ? ", " : "") + fmt::format("{}", v[i]);
  if (v.size() > kMax) s += fmt::format(", ... ({} values)", v.size());
  return s + "]";
}

}  // namespace

bool Encoding::operator==(const Encoding& o) const {
  return kind == o.kind && dtype == o.dtype && effective_bitwidth() == o.effective_bitwidth() && symmetry == o.symmetry &&
         overridden == o.overridden && axis == o.axis && block_sizes == o.block_sizes &&
         FloatsBitEqual(scales, o.scales) && offsets == o.offsets && FloatsBitEqual(float_offsets, o.float_offsets) &&
         block_int_scales == o.block_int_scales && decompressed_bitwidth == o.decompressed_bitwidth &&
         index_tensor == o.index_tensor && sub_encodings == o.sub_encodings;
}

bool SameEncodingSharingTables(const Encoding& a, const Encoding& b) {
  auto shared = [](const auto& x, const auto& y) { return x.SharesElementsWith(y); };
  return a.kind == b.kind && a.dtype == b.dtype && a.bitwidth == b.bitwidth && a.symmetry == b.symmetry &&
         a.axis == b.axis && a.block_sizes == b.block_sizes && shared(a.scales, b.scales) &&
         shared(a.offsets, b.offsets) && shared(a.float_offsets, b.float_offsets) &&
         shared(a.block_int_scales, b.block_int_scales) && a.decompressed_bitwidth == b.decompressed_bitwidth &&
         a.index_tensor == b.index_tensor && a.sub_encodings.empty() && b.sub_encodings.empty();
}

std::string Encoding::ToString() const {
  std::string s = fmt::format("{} {} bw={} {}", EncodingKindName(kind), DTypeShortName(dtype), effective_bitwidth(),
                              SymmetryName(symmetry));
  if (kind == EncodingKind::kFloat) return s;
  if (axis >= 0) s += fmt::format(" axis={}", axis);
  if (!block_sizes.empty()) s += " block_sizes=" + Preview(block_sizes);
  if (!scales.empty()) s += " scales=" + Preview(scales);
  if (!offsets.empty()) s += " offsets=" + Preview(offsets);
  if (!float_offsets.empty()) s += " float_offsets=" + Preview(float_offsets);
  if (!block_int_scales.empty())
    s += fmt::format(" block_int_scales={} decompressed_bw={}", Preview(block_int_scales), decompressed_bitwidth);
  if (!index_tensor.empty()) s += fmt::format(" index_tensor={} subs={}", index_tensor, sub_encodings.size());
  if (overridden) s += " overridden";
  return s;
}

QuantRange QuantRangeOf(DType dtype, uint32_t bitwidth) {
  if (bitwidth == 0 || bitwidth > 32) return {0, 0};
  if (IsSigned(dtype)) {
    const int64_t half = int64_t{1} << (bitwidth - 1);
    return {-half, half - 1};
  }
  return {0, (int64_t{1} << bitwidth) - 1};
}

namespace {

// Collects problems about one encoding on one tensor; `prefix` locates nested
// sub-encodings ("sub_encodings[1].").
class EncodingChecker {
 public:
  EncodingChecker(const std::string& tensor_name, uint32_t tensor_id, Diagnostics* out)
      : tensor_name_(tensor_name), tensor_id_(tensor_id), out_(out) {}

  void Check(const Encoding& e, const Shape& shape, const std::string& prefix);
  bool ok() const { return ok_; }

 private:
  template <typename... Args>
  void Fail(const std::string& prefix, std::string_view field, fmt::format_string<Args...> format, Args&&... args) {
    ok_ = false;
    Diagnostic d;
    d.kind = DiagKind::kInvalidEncoding;
    d.tensor = tensor_id_;
    d.field = prefix + std::string(field);
    d.message = fmt::format("tensor '{}': encoding field '{}': {}", tensor_name_, d.field,
                            fmt::format(format, std::forward<Args>(args)...));
    if (out_) out_->push_back(std::move(d));
  }

  void CheckScales(const Encoding& e, const std::string& prefix, const char* field, std::span<const float> v);
  void CheckOffsets(const Encoding& e, const std::string& prefix, size_t expected);
  void CheckCount(const std::string& prefix, const char* field, size_t got, size_t expected, const char* what);
  void CheckFieldsFitKind(const Encoding& e, const std::string& prefix);
  // Validates block_sizes against the shape; returns the number of blocks and
  // the blocks along `axis`, or nullopt if unknown or invalid.
  std::optional<std::pair<uint64_t, uint64_t>> CheckBlockGrid(const Encoding& e, const Shape& shape,
                                                              const std::string& prefix);

  const std::string& tensor_name_;
  uint32_t tensor_id_;
  Diagnostics* out_;
  bool ok_ = true;
};

void EncodingChecker::CheckScales(const Encoding& e, const std::string& prefix, const char* field,
                                  std::span<const float> v) {
  (void)e;
  // A branch-free pass first (vectorised: LLM files carry millions of block
  // scales), then the search for the first bad one to report.
  bool all_ok = true;
  for (const float x : v) all_ok &= (x > 0.0f) & (x <= FLT_MAX);  // false for NaN, inf, <= 0
  if (all_ok) return;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]) || !(v[i] > 0.0f)) {
      Fail(prefix, fmt::format("{}[{}]", field, i), "is {}: scales must be finite and > 0", v[i]);
      return;  // one report per array is enough
    }
  }
}

void EncodingChecker::CheckCount(const std::string& prefix, const char* field, size_t got, size_t expected,
                                 const char* what) {
  if (got != expected) Fail(prefix, field, "has {} values but {} {} are needed", got, expected, what);
}

// The offset a symmetric grid must have: 0, or -2^(bw-1) on an unsigned type
// that is not unsigned-symmetric.
static int64_t CentredOffset(const Encoding& e) {
  const bool centred_unsigned = !IsSigned(e.dtype) && e.symmetry != Symmetry::kUnsignedSymmetric;
  return centred_unsigned ? -(int64_t{1} << (e.effective_bitwidth() - 1)) : 0;
}

void EncodingChecker::CheckOffsets(const Encoding& e, const std::string& prefix, size_t expected) {
  if (e.offsets.empty()) return;  // all zero
  CheckCount(prefix, "offsets", e.offsets.size(), expected, "(one per scale)");
  const QuantRange r = QuantRangeOf(e.dtype, e.effective_bitwidth());
  // offset = -zero_point and the zero point must be representable. Min/max
  // first (vectorised), the element to report only when out of range.
  int32_t lo = e.offsets[0], hi = e.offsets[0];
  for (const int32_t o : e.offsets) {  // not std::minmax_element: its branches do not vectorise
    lo = std::min(lo, o);
    hi = std::max(hi, o);
  }
  const bool in_range = -int64_t{hi} >= r.qmin && -int64_t{lo} <= r.qmax;
  const bool centred = e.symmetry == Symmetry::kAsymmetric || (lo == hi && lo == CentredOffset(e));
  if (in_range && centred) return;
  for (size_t i = 0; i < e.offsets.size(); ++i) {
    const int64_t zero_point = -int64_t{e.offsets[i]};
    if (zero_point < r.qmin || zero_point > r.qmax) {
      Fail(prefix, fmt::format("offsets[{}]", i),
           "offset {} means zero point {}, outside the {}-bit {} range [{}, {}]", e.offsets[i], zero_point,
           e.effective_bitwidth(), IsSigned(e.dtype) ? "signed" : "unsigned", r.qmin, r.qmax);
      return;
    }
  }
  // Symmetric grids put the zero point at the centre.
  if (e.symmetry != Symmetry::kAsymmetric) {
    const int64_t expected_offset = CentredOffset(e);
    for (size_t i = 0; i < e.offsets.size(); ++i) {
      if (e.offsets[i] != expected_offset) {
        Fail(prefix, fmt::format("offsets[{}]", i), "is {} but a {} {} encoding needs offset {}", e.offsets[i],
             SymmetryName(e.symmetry), DTypeShortName(e.dtype), expected_offset);
        return;
      }
    }
  }
}

std::optional<std::pair<uint64_t, uint64_t>> EncodingChecker::CheckBlockGrid(const Encoding& e, const Shape& shape,
                                                                             const std::string& prefix) {
  if (e.block_sizes.empty()) {
    Fail(prefix, "block_sizes", "is empty: a blockwise encoding needs one block size per tensor dim");
    return std::nullopt;
  }
  for (size_t i = 0; i < e.block_sizes.size(); ++i) {
    if (e.block_sizes[i] < 1) {
      Fail(prefix, fmt::format("block_sizes[{}]", i), "is {}: block sizes must be >= 1", e.block_sizes[i]);
      return std::nullopt;
    }
  }
  if (!shape.rank_known()) return std::nullopt;
  if (e.block_sizes.size() != shape.rank()) {
    Fail(prefix, "block_sizes", "has {} entries but the tensor has rank {} {}", e.block_sizes.size(), shape.rank(),
         shape.ToString());
    return std::nullopt;
  }
  if (e.axis < 0 || static_cast<size_t>(e.axis) >= shape.rank()) {
    Fail(prefix, "axis", "is {}: the block axis must be in [0, {}) for shape {}", e.axis, shape.rank(),
         shape.ToString());
    return std::nullopt;
  }
  uint64_t blocks = 1;
  uint64_t along_axis = 1;
  bool known = true;
  for (size_t i = 0; i < shape.rank(); ++i) {
    if (!shape[i].known()) {
      known = false;
      continue;
    }
    const auto dim = static_cast<uint64_t>(shape[i].value);
    const auto bs = static_cast<uint64_t>(e.block_sizes[i]);
    if (dim % bs != 0) {
      Fail(prefix, fmt::format("block_sizes[{}]", i), "is {}, which does not divide dim {} of size {} (shape {})", bs,
           i, dim, shape.ToString());
      return std::nullopt;
    }
    const uint64_t n = dim / bs;
    if (n != 0 && blocks > UINT64_MAX / n) return std::nullopt;
    blocks *= n;
    if (i == static_cast<size_t>(e.axis)) along_axis = n;
  }
  if (!known) return std::nullopt;
  return std::make_pair(blocks, along_axis);
}

void EncodingChecker::CheckFieldsFitKind(const Encoding& e, const std::string& prefix) {
  // A field the kind does not use is a sign the producer meant another kind;
  // accepting it silently would drop information.
  const auto kind = e.kind;
  const bool blocked = kind == EncodingKind::kPerBlock || kind == EncodingKind::kLpbq;
  auto reject = [&](bool present, const char* field) {
    if (present) Fail(prefix, field, "is set but a {} encoding does not use it", EncodingKindName(kind));
  };
  reject(!e.block_sizes.empty() && !blocked, "block_sizes");
  reject(!e.float_offsets.empty() && kind != EncodingKind::kPerBlock, "float_offsets");
  reject(!e.block_int_scales.empty() && kind != EncodingKind::kLpbq, "block_int_scales");
  reject(e.decompressed_bitwidth != 0 && kind != EncodingKind::kLpbq, "decompressed_bitwidth");
  reject(!e.index_tensor.empty() && kind != EncodingKind::kArrayOf, "index_tensor");
  reject(!e.sub_encodings.empty() && kind != EncodingKind::kArrayOf, "sub_encodings");
  reject(e.axis >= 0 && kind == EncodingKind::kPerTensor, "axis");
}

void EncodingChecker::Check(const Encoding& e, const Shape& shape, const std::string& prefix) {
  const uint32_t bits = DTypeBits(e.dtype);
  if (!IsValidDType(static_cast<uint32_t>(e.dtype)) || e.dtype == DType::kUndefined) {
    Fail(prefix, "dtype", "is undefined or not a known dtype");
    return;
  }
  if (e.kind == EncodingKind::kFloat) {
    if (!IsFloat(e.dtype))
      Fail(prefix, "dtype", "is {} but a float encoding needs float16, bfloat16, float32 or float64",
           DTypeName(e.dtype));
    if (!e.scales.empty() || !e.offsets.empty()) Fail(prefix, "scales", "must be empty for a float encoding");
    return;
  }
  if (!IsFixedPoint(e.dtype) && !IsInteger(e.dtype)) {
    Fail(prefix, "dtype", "is {} but a {} encoding needs a fixed-point or integer dtype", DTypeName(e.dtype),
         EncodingKindName(e.kind));
    return;
  }
  if (e.bitwidth > bits) {
    Fail(prefix, "bitwidth", "is {} but the dtype {} holds only {} bits", e.bitwidth, DTypeName(e.dtype), bits);
    return;
  }
  if (e.effective_bitwidth() > 32) {  // the grids' arithmetic (offsets, int32 accumulators) stops at 32 bits
    Fail(prefix, "bitwidth", "is {} ({}) but a quantized encoding holds at most 32 bits", e.effective_bitwidth(),
         DTypeName(e.dtype));
    return;
  }
  if (e.symmetry == Symmetry::kUnsignedSymmetric && IsSigned(e.dtype))
    Fail(prefix, "symmetry", "unsigned_symmetric needs an unsigned dtype, got {}", DTypeName(e.dtype));

  CheckFieldsFitKind(e, prefix);

  switch (e.kind) {
    case EncodingKind::kPerTensor:
      CheckCount(prefix, "scales", e.scales.size(), 1, "(per-tensor)");
      CheckScales(e, prefix, "scales", e.scales);
      CheckOffsets(e, prefix, 1);
      break;
    case EncodingKind::kPerChannel: {
      CheckScales(e, prefix, "scales", e.scales);
      if (e.scales.empty()) Fail(prefix, "scales", "is empty");
      CheckOffsets(e, prefix, e.scales.size());
      if (!shape.rank_known()) break;
      if (e.axis < 0 || static_cast<size_t>(e.axis) >= shape.rank()) {
        Fail(prefix, "axis", "is {}: the channel axis must be in [0, {}) for shape {}", e.axis, shape.rank(),
             shape.ToString());
        break;
      }
      const Dim& d = shape[static_cast<size_t>(e.axis)];
      if (d.known())
        CheckCount(prefix, "scales", e.scales.size(), static_cast<size_t>(d.value), "(one per channel of axis)");
      break;
    }
    case EncodingKind::kPerBlock: {
      CheckScales(e, prefix, "scales", e.scales);
      if (!e.offsets.empty() && !e.float_offsets.empty())
        Fail(prefix, "float_offsets", "cannot be combined with integer offsets");
      CheckOffsets(e, prefix, e.scales.size());
      for (size_t i = 0; i < e.float_offsets.size(); ++i) {
        if (!std::isfinite(e.float_offsets[i])) {
          Fail(prefix, fmt::format("float_offsets[{}]", i), "is not finite");
          break;
        }
      }
      if (!e.float_offsets.empty())
        CheckCount(prefix, "float_offsets", e.float_offsets.size(), e.scales.size(), "(one per scale)");
      if (auto grid = CheckBlockGrid(e, shape, prefix))
        CheckCount(prefix, "scales", e.scales.size(), grid->first, "(one per block)");
      break;
    }
    case EncodingKind::kLpbq: {
      CheckScales(e, prefix, "scales", e.scales);
      if (e.decompressed_bitwidth <= e.effective_bitwidth() || e.decompressed_bitwidth > 32) {
        Fail(prefix, "decompressed_bitwidth", "is {} but must be in ({}, 32] (greater than the bitwidth)",
             e.decompressed_bitwidth, e.effective_bitwidth());
        break;
      }
      const int64_t max_int_scale = int64_t{1} << (e.decompressed_bitwidth - e.effective_bitwidth());
      // Branch-free passes first (vectorised: one integer scale per block of
      // an LLM's weights), the element to report only when one is bad.
      // A min/max reduction: GCC leaves a widening compare-and-and loop
      // scalar, and a 1B-parameter model has ~13M integer scales.
      const std::span<const int32_t> bis = e.block_int_scales;
      int32_t lo_bis = INT32_MAX, hi_bis = INT32_MIN;
      for (const int32_t v : bis) {
        lo_bis = std::min(lo_bis, v);
        hi_bis = std::max(hi_bis, v);
      }
      const bool all_ok = bis.empty() || (lo_bis >= 1 && int64_t{hi_bis} <= max_int_scale);
      int32_t any_offset = 0;
      for (const int32_t o : e.offsets) any_offset |= o;
      for (size_t i = 0; !all_ok && i < e.block_int_scales.size(); ++i) {
        if (e.block_int_scales[i] < 1 || e.block_int_scales[i] > max_int_scale) {
          Fail(prefix, fmt::format("block_int_scales[{}]", i), "is {}, outside [1, {}]", e.block_int_scales[i],
               max_int_scale);
          break;
        }
      }
      for (size_t i = 0; any_offset != 0 && i < e.offsets.size(); ++i) {
        if (e.offsets[i] != 0) {
          Fail(prefix, fmt::format("offsets[{}]", i), "is {} but LPBQ encodings are symmetric (offset 0)",
               e.offsets[i]);
          break;
        }
      }
      if (auto grid = CheckBlockGrid(e, shape, prefix)) {
        CheckCount(prefix, "block_int_scales", e.block_int_scales.size(), grid->first, "(one per block)");
        if (grid->second != 0)
          CheckCount(prefix, "scales", e.scales.size(), grid->first / grid->second,
                     "(one per channel: the block grid without the block axis)");
      }
      break;
    }
    case EncodingKind::kArrayOf: {
      if (e.index_tensor.empty()) Fail(prefix, "index_tensor", "is empty: an Array-Of encoding names its selector");
      if (e.sub_encodings.empty()) Fail(prefix, "sub_encodings", "is empty");
      if (!e.scales.empty()) Fail(prefix, "scales", "must be empty: Array-Of values live in sub_encodings");
      for (size_t i = 0; i < e.sub_encodings.size(); ++i) {
        const Encoding& sub = e.sub_encodings[i];
        const std::string sub_prefix = fmt::format("{}sub_encodings[{}].", prefix, i);
        if (sub.kind != EncodingKind::kPerTensor && sub.kind != EncodingKind::kPerChannel) {
          Fail(sub_prefix, "kind", "is {} but Array-Of sub-encodings are per_tensor or per_channel",
               EncodingKindName(sub.kind));
          continue;
        }
        Check(sub, shape, sub_prefix);
      }
      break;
    }
    case EncodingKind::kFloat:
      break;
    default:
      Fail(prefix, "kind", "is not a known encoding kind ({})", static_cast<uint32_t>(e.kind));
  }
}

}  // namespace

bool ValidateEncoding(const Encoding& e, const std::string& tensor_name, const Shape& shape, uint32_t tensor_id,
                      Diagnostics* out) {
  EncodingChecker checker(tensor_name, tensor_id, out);
  checker.Check(e, shape, "");
  return checker.ok();
}

}  // namespace qairt
