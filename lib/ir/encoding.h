// Quantization encoding attached to a tensor: one type for every form of the
// spec's Appendix A/C. QNN convention throughout: real = (q + offset) * scale,
// offset = -zero_point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/cow_vector.h"
#include "ir/dtype.h"
#include "ir/shape.h"

namespace qairt {

// Values equal enum qairt_encoding_kind / qairt_symmetry.
enum class EncodingKind : uint32_t {
  kFloat = 1, kPerTensor = 2, kPerChannel = 3, kPerBlock = 4, kLpbq = 5, kArrayOf = 6
};
enum class Symmetry : uint32_t { kAsymmetric = 0, kSymmetric = 1, kStrictSymmetric = 2, kUnsignedSymmetric = 3 };

std::string_view EncodingKindName(EncodingKind k);  // "per_tensor", ...
std::string_view SymmetryName(Symmetry s);

struct Encoding {
  EncodingKind kind = EncodingKind::kPerTensor;
  DType dtype = DType::kUndefined;  // quantized type (SFixed8, UFixed16, ...) or float type
  uint32_t bitwidth = 0;            // <= DTypeBits(dtype); 0 means "the dtype's"
  Symmetry symmetry = Symmetry::kAsymmetric;
  bool overridden = false;          // supplied by the user's encodings file

  int32_t axis = -1;                     // per-channel axis, or block axis (per-block/LPBQ)
  std::vector<int64_t> block_sizes;      // per-block/LPBQ: one per tensor dim
  // The tables are shared between copies of an encoding until one is changed
  // (CowVector): one entry per block is tens of MB for an LLM.
  CowVector<float> scales;               // LPBQ: per-channel float scales
  CowVector<int32_t> offsets;            // integer offsets (QNN sign convention)
  CowVector<float> float_offsets;        // per-block float offsets (alternative to offsets)
  CowVector<int32_t> block_int_scales;   // LPBQ per-block integer scales
  uint32_t decompressed_bitwidth = 0;    // LPBQ
  std::string index_tensor;              // Array-Of selector
  std::vector<Encoding> sub_encodings;   // Array-Of

  uint32_t effective_bitwidth() const { return bitwidth ? bitwidth : DTypeBits(dtype); }
  bool is_fixed_point() const { return IsFixedPoint(dtype); }

  bool operator==(const Encoding& o) const;  // floats compared bit-exactly
  bool operator!=(const Encoding& o) const { return !(*this == o); }

  // One line, e.g. "per_channel s8 bw=8 sym axis=0 scales=[0.01, 0.02] offsets=[0, 0]".
  std::string ToString() const;
};

// Whether `b` is `a` (but for `overridden`) with the very same tables: each
// of scales, offsets, float_offsets and block_int_scales empty in both or
// one buffer shared by both (CowVector), never compared element by element.
// What a check of `a` found holds for `b` then.
bool SameEncodingSharingTables(const Encoding& a, const Encoding& b);

// Representable integer range of a fixed-point grid: [qmin, qmax].
struct QuantRange {
  int64_t qmin;
  int64_t qmax;
};
QuantRange QuantRangeOf(DType dtype, uint32_t bitwidth);

// Checks an encoding on its own and against the tensor it describes (name is
// used in messages; shape may be partly unknown, then dependent checks are
// skipped). Appends one diagnostic per problem; returns true if none.
bool ValidateEncoding(const Encoding& e, const std::string& tensor_name, const Shape& shape, uint32_t tensor_id,
                      Diagnostics* out);

}  // namespace qairt
