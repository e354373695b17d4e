// The QAIRT 2.0.0 dialect: {"version": "2.0.0", "encodings": [...]} (or the
// bare list), one object per tensor with output_dtype, y_scale, y_zero_point,
// axis, block_size; LPBQ (per_channel_float_scale + per_block_int_scale) and
// Array-Of (index_tensor) entries.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "encodings/reader_internal.h"

namespace qairt::encodings::reader_internal {
namespace {

std::string ShapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The blocked dim of a per-dim block-size list: the one dim with a block
// size > 1, else the last (the specification's `block_size: [...]` form).
int BlockedAxis(const std::vector<int64_t>& block_sizes) {
  int found = -1, count = 0;
  for (size_t i = 0; i < block_sizes.size(); ++i)
    if (block_sizes[i] > 1) found = static_cast<int>(i), ++count;
  return count == 1 ? found : static_cast<int>(block_sizes.size()) - 1;
}

std::optional<DType> OutputDType(std::string_view s) {
  static const std::pair<std::string_view, DType> kTable[] = {
      {"int4", DType::kSFixed4},   {"uint4", DType::kUFixed4},   {"int8", DType::kSFixed8},
      {"uint8", DType::kUFixed8},  {"int16", DType::kSFixed16},  {"uint16", DType::kUFixed16},
      {"int32", DType::kSFixed32}, {"uint32", DType::kUFixed32}, {"float32", DType::kFloat32},
      {"float16", DType::kFloat16}, {"int2", DType::kSFixed2},   {"uint2", DType::kUFixed2},
  };
  for (const auto& [name, d] : kTable)
    if (name == s) return d;
  return std::nullopt;
}

}  // namespace

void Reader::ReadV2List(od::value& v) {
  const bool cut = layout_ && Off(v) == layout_->open;  // a skeleton's emptied list: its entries are in windows
  if (!Expect(v, od::json_type::array, "", "encodings", "an array of encoding objects")) return;
  ForEachElement(v, [&](od::value& entry) { ReadV2Entry(entry); });
  if (cut) ReadWindows();
}

bool Reader::ReadV2Blocks(const Nums& block_size, std::optional<int64_t> axis, bool lpbq, Entry* e) {
  const std::string& tn = e->name;
  Encoding& enc = e->encoding;
  const size_t rank = e->grid_shape.size();
  const char* grid_field = lpbq ? "per_block_int_scale" : "y_scale";  // the field whose shape is the grid
  if (!CheckIntegral(block_size, tn, "block_size")) return false;
  if (block_size.scalar) {
    if (!axis) {
      Add(Severity::kError, "missing-field", ValueOffset(*e, "block_size"), tn, "axis", "{}",
          lpbq ? "LPBQ with a single block_size needs \"axis\" (the block axis)"
               : "blockwise entry needs \"axis\" (the axis along which blocks of block_size run)");
      return false;
    }
    e->block_size = static_cast<int64_t>(block_size.values[0]);
  } else {
    // The specification's form: one block size per dim.
    if (block_size.values.size() != rank) {
      Add(Severity::kError, "shape-mismatch", block_size.offset, tn, "block_size",
          "has {} entries but {} has rank {} {}", block_size.values.size(), grid_field, rank,
          ShapeString(e->grid_shape));
      return false;
    }
    for (double b : block_size.values) enc.block_sizes.push_back(static_cast<int64_t>(b));
    if (!axis) axis = BlockedAxis(enc.block_sizes);
  }
  enc.axis = static_cast<int32_t>(*axis < 0 ? *axis + static_cast<int64_t>(rank) : *axis);
  if (enc.axis < 0 || static_cast<size_t>(enc.axis) >= rank) {
    if (lpbq)
      Add(Severity::kError, "value-range", ValueOffset(*e, "axis"), tn, "axis",
          "block axis {} is out of range for a block grid of rank {}", *axis, rank);
    else
      Add(Severity::kError, "value-range", ValueOffset(*e, "axis"), tn, "axis",
          "block axis {} is out of range for y_scale of shape {}", *axis, ShapeString(e->grid_shape));
    return false;
  }
  // A single block_size given as 0 stays 0 (and is reported below), not the
  // per-dim list it does not have.
  if (e->block_size == 0 && !enc.block_sizes.empty()) e->block_size = enc.block_sizes[static_cast<size_t>(enc.axis)];
  if (e->block_size < 1) {
    Add(Severity::kError, "value-range", ValueOffset(*e, "block_size"), tn, "block_size", "block size {} must be >= 1",
        e->block_size);
    return false;
  }
  return true;
}

void Reader::ReadV2Entry(od::value& v) {
  const uint64_t entry_off = Off(v);
  if (!Expect(v, od::json_type::object, "", "encodings[]",
              "an encoding object {\"name\": ..., \"output_dtype\": ...}"))
    return;
  const size_t errors_before = errors_;
  Entry e;
  e.offset = entry_off;
  std::string dtype_name, index_tensor;
  uint64_t dtype_off = entry_off;
  Nums &y_scale = nums_[0], &y_zp = nums_[1], &pcfs = nums_[2], &pbis = nums_[3], &offset_field = nums_[4],
       &block_size = nums_[5];
  for (Nums& n : nums_) Reset(&n);
  std::optional<int64_t> axis;
  bool has_name = false, has_dtype = false, has_index = false;
  size_t fields = 0;  // a repeated key is an error, so only unique keys need counting
  static const char* kKnown =
      "name, output_dtype, y_scale, y_zero_point, axis, block_size, per_channel_float_scale, per_block_int_scale, "
      "index_tensor";
  ForEachUniqueMember(v, e.name, [&](std::string_view key, uint64_t key_off, od::value& val) {
    ++fields;
    e.field_offsets.Add(key, Off(val));
    const std::string& tn = e.name;
    if (key == "name") {
      has_name = GetString(val, "", "name", &e.name);
      if (has_name && e.name.empty()) {
        Add(Severity::kError, "missing-field", key_off, "", "name", "tensor name is empty");
        has_name = false;
      }
    } else if (key == "output_dtype") {
      dtype_off = Off(val);
      has_dtype = GetString(val, tn, "output_dtype", &dtype_name);
    } else if (key == "y_scale") {
      GetNums(val, tn, "y_scale", &y_scale);
    } else if (key == "y_zero_point") {
      GetNums(val, tn, "y_zero_point", &y_zp, /*literal_kind=*/true);
    } else if (key == "offset") {
      GetNums(val, tn, "offset", &offset_field);
    } else if (key == "axis") {
      int64_t a;
      if (GetInt(val, tn, "axis", &a)) axis = a;
    } else if (key == "block_size") {
      GetNums(val, tn, "block_size", &block_size);
    } else if (key == "per_channel_float_scale") {
      GetNums(val, tn, "per_channel_float_scale", &pcfs);
    } else if (key == "per_block_int_scale") {
      GetNums(val, tn, "per_block_int_scale", &pbis);
    } else if (key == "index_tensor") {
      has_index = GetString(val, tn, "index_tensor", &index_tensor);
    } else {
      UnknownKey(key, key_off, tn, val, kKnown);
    }
  });
  if (errors_ != errors_before) return;
  if (!has_name) {
    Add(Severity::kError, "missing-field", entry_off, "", "name", "entry has no \"name\": it cannot be matched to a tensor");
    return;
  }
  const std::string& tn = e.name;
  if (!has_dtype) {
    if (fields == 1) {  // AIMET writes {} (+ name) for float16/bfloat16 tensors
      Add(Severity::kNote, "float-entry", entry_off, tn, "",
          "entry has only a name: the tensor stays in floating point (no encoding applied)");
      return;
    }
    Add(Severity::kError, "missing-field", entry_off, tn, "output_dtype",
        "entry has no \"output_dtype\" (one of int4, uint4, int8, uint8, int16, uint16, int32, uint32, float16, "
        "float32)");
    return;
  }
  const auto dtype = OutputDType(dtype_name);
  if (!dtype) {
    Add(Severity::kError, "value-range", dtype_off, tn, "output_dtype",
        "unknown output_dtype \"{}\": expected int4, uint4, int8, uint8, int16, uint16, int32, uint32, float16 or "
        "float32",
        dtype_name);
    return;
  }
  Encoding& enc = e.encoding;
  enc.dtype = *dtype;
  if (IsFloat(*dtype)) {
    enc.kind = EncodingKind::kFloat;
    for (const Nums* n : {&y_scale, &y_zp, &pcfs, &pbis, &block_size})
      if (n->present) {
        Add(Severity::kError, "invalid-encoding", n->offset, tn, "",
            "a float output_dtype ({}) takes no scales, zero points or blocks", dtype_name);
        return;
      }
    AddEntry(std::move(e), errors_before);
    return;
  }
  const bool is_signed = IsSigned(*dtype);
  const QuantRange range = QuantRangeOf(*dtype, DTypeBits(*dtype));
  // Zero points: integers on the output_dtype grid (floats only for blockwise).
  auto zero_points_to_offsets = [&](const Nums& zp, const char* what, bool allow_float,
                                    auto* offsets, auto* float_offsets) -> bool {  // std::vector or CowVector
    if (zp.any_float_literal && allow_float) {
      for (size_t i = 0; i < zp.values.size(); ++i) {
        if (!std::isfinite(zp.values[i]) || std::fabs(zp.values[i]) > 1e9) {
          Add(Severity::kError, "value-range", ElementOffset(zp.offset, i), tn, fmt::format("{}[{}]", what, i),
              "float zero point {} is out of range", zp.values[i]);
          return false;
        }
        float_offsets->push_back(static_cast<float>(-zp.values[i]));
      }
      return true;
    }
    if (!CheckIntegral(zp, tn, what)) return false;
    offsets->reserve(offsets->size() + zp.values.size());
    for (size_t i = 0; i < zp.values.size(); ++i) {
      const double z = zp.values[i];
      if (z < static_cast<double>(range.qmin) || z > static_cast<double>(range.qmax)) {
        Add(Severity::kError, "value-range", ElementOffset(zp.offset, i), tn,
            zp.scalar ? std::string(what) : fmt::format("{}[{}]", what, i),
            "zero point {} is outside the {} range [{}, {}]", z, dtype_name, range.qmin, range.qmax);
        return false;
      }
      offsets->push_back(static_cast<int32_t>(-z));
    }
    return true;
  };
  auto all_zero = [](std::span<const int32_t> vals) {
    for (int32_t x : vals)
      if (x != 0) return false;
    return true;
  };
  if (axis && (*axis < -64 || *axis > 64)) {
    Add(Severity::kError, "value-range", ValueOffset(e, "axis"), tn, "axis", "axis {} is out of range", *axis);
    return;
  }

  // ---- LPBQ ---------------------------------------------------------------
  if (pbis.present) {
    enc.kind = EncodingKind::kLpbq;
    enc.symmetry = Symmetry::kSymmetric;
    enc.decompressed_bitwidth = 2 * DTypeBits(*dtype);  // 2.0.0 LPBQ always decompresses to twice the width
    if (!is_signed) {
      Add(Severity::kError, "invalid-encoding", dtype_off, tn, "output_dtype",
          "LPBQ encodings are symmetric: output_dtype must be a signed type (int4, int8), got {}", dtype_name);
      return;
    }
    const Nums& pc = pcfs.present ? pcfs : y_scale;
    if (!pc.present) {
      Add(Severity::kError, "missing-field", entry_off, tn, "per_channel_float_scale",
          "LPBQ entry (it has per_block_int_scale) needs per_channel_float_scale");
      return;
    }
    if (!CheckScales(pc, tn, pcfs.present ? "per_channel_float_scale" : "y_scale")) return;
    if (!CheckIntegral(pbis, tn, "per_block_int_scale")) return;
    for (const Nums* zp : {&offset_field, &y_zp}) {
      if (!zp->present) continue;
      for (size_t i = 0; i < zp->values.size(); ++i)
        if (zp->values[i] != 0) {
          Add(Severity::kError, "invalid-encoding", ElementOffset(zp->offset, i), tn,
              zp == &y_zp ? "y_zero_point" : "offset", "LPBQ encodings are symmetric: the zero point must be 0, got {}",
              zp->values[i]);
          return;
        }
    }
    enc.scales.assign(pc.values.begin(), pc.values.end());  // double -> float
    enc.block_int_scales.assign(pbis.values.begin(), pbis.values.end());  // integral: checked
    enc.offsets = ZeroOffsets(enc.scales.size());
    e.grid_shape = pbis.scalar ? std::vector<int64_t>{1} : pbis.shape;
    if (!block_size.present) {
      Add(Severity::kError, "missing-field", entry_off, tn, "block_size", "LPBQ entry needs block_size");
      return;
    }
    if (!ReadV2Blocks(block_size, axis, /*lpbq=*/true, &e)) return;
    AddEntry(std::move(e), errors_before);
    return;
  }
  if (pcfs.present) {
    Add(Severity::kError, "missing-field", pcfs.offset, tn, "per_block_int_scale",
        "per_channel_float_scale is only used by LPBQ entries, which also need per_block_int_scale");
    return;
  }
  if (!y_scale.present) {
    Add(Severity::kError, "missing-field", entry_off, tn, "y_scale", "entry has no \"y_scale\"");
    return;
  }
  if (!CheckScales(y_scale, tn, "y_scale")) return;
  if (y_zp.present && !y_zp.scalar && y_zp.shape != y_scale.shape) {
    Add(Severity::kError, "shape-mismatch", y_zp.offset, tn, "y_zero_point",
        "has shape {} but y_scale has shape {}", ShapeString(y_zp.shape), ShapeString(y_scale.shape));
    return;
  }
  if (y_zp.present && y_zp.scalar && !y_scale.scalar && y_scale.values.size() != 1) {
    Add(Severity::kError, "shape-mismatch", y_zp.offset, tn, "y_zero_point",
        "is a single number but y_scale has {} values: give one zero point per scale", y_scale.values.size());
    return;
  }

  // ---- Array-Of -----------------------------------------------------------------
  if (has_index) {
    if (index_tensor.empty()) {
      Add(Severity::kError, "missing-field", ValueOffset(e, "index_tensor"), tn, "index_tensor", "is empty");
      return;
    }
    if (block_size.present) {
      Add(Severity::kError, "invalid-encoding", block_size.offset, tn, "block_size",
          "Array-Of sub-encodings are per-tensor or per-channel: block_size is not allowed");
      return;
    }
    if (y_scale.scalar || y_scale.shape.size() != 2) {
      Add(Severity::kError, "shape-mismatch", y_scale.offset, tn, "y_scale",
          "an Array-Of entry needs an array of arrays (one inner array per sub-encoding), got shape {}",
          y_scale.scalar ? "scalar" : ShapeString(y_scale.shape));
      return;
    }
    enc.kind = EncodingKind::kArrayOf;
    enc.index_tensor = index_tensor;
    const size_t subs = static_cast<size_t>(y_scale.shape[0]), per = static_cast<size_t>(y_scale.shape[1]);
    std::vector<int32_t> offsets;
    std::vector<float> unused;
    if (y_zp.present && !zero_points_to_offsets(y_zp, "y_zero_point", false, &offsets, &unused)) return;
    const bool per_channel = axis.has_value() || per > 1;
    for (size_t s = 0; s < subs; ++s) {
      Encoding sub;
      sub.dtype = *dtype;
      sub.kind = per_channel ? EncodingKind::kPerChannel : EncodingKind::kPerTensor;
      if (per_channel) sub.axis = axis ? static_cast<int32_t>(*axis) : -1;
      for (size_t i = 0; i < per; ++i) {
        sub.scales.push_back(static_cast<float>(y_scale.values[s * per + i]));
        sub.offsets.push_back(offsets.empty() ? 0 : offsets[s * per + i]);
      }
      sub.symmetry = is_signed && all_zero(sub.offsets) ? Symmetry::kSymmetric : Symmetry::kAsymmetric;
      enc.sub_encodings.push_back(std::move(sub));
    }
    enc.symmetry = enc.sub_encodings.empty() ? Symmetry::kAsymmetric : enc.sub_encodings[0].symmetry;
    e.axis_inferred = per_channel && !axis;
    if (axis && *axis < 0) {
      e.negative_axis = static_cast<int32_t>(*axis);
      for (auto& sub : enc.sub_encodings) sub.axis = -1;
    }
    AddEntry(std::move(e), errors_before);
    return;
  }

  // ---- blockwise ----------------------------------------------------------------
  if (block_size.present) {
    enc.kind = EncodingKind::kPerBlock;
    e.grid_shape = y_scale.scalar ? std::vector<int64_t>{1} : y_scale.shape;
    if (!ReadV2Blocks(block_size, axis, /*lpbq=*/false, &e)) return;
    enc.scales.assign(y_scale.values.begin(), y_scale.values.end());  // double -> float
    if (y_zp.present) {
      if (y_zp.scalar && y_scale.values.size() != 1) return;  // reported above
      if (!zero_points_to_offsets(y_zp, "y_zero_point", true, &enc.offsets, &enc.float_offsets)) return;
    }
    enc.symmetry = is_signed && enc.float_offsets.empty() && all_zero(enc.offsets) ? Symmetry::kSymmetric
                                                                                   : Symmetry::kAsymmetric;
    if (enc.float_offsets.empty() && all_zero(enc.offsets)) enc.offsets = ZeroOffsets(enc.scales.size());
    AddEntry(std::move(e), errors_before);
    return;
  }

  // ---- per-tensor / per-channel ------------------------------------------------
  if (!y_scale.scalar && y_scale.shape.size() != 1) {
    Add(Severity::kError, "shape-mismatch", y_scale.offset, tn, "y_scale",
        "has shape {}: nested scales need block_size (blockwise) or index_tensor (Array-Of)",
        ShapeString(y_scale.shape));
    return;
  }
  if (!y_scale.scalar && y_scale.values.empty()) {
    Add(Severity::kError, "shape-mismatch", y_scale.offset, tn, "y_scale", "is an empty array");
    return;
  }
  const bool per_channel = axis.has_value() || (!y_scale.scalar && y_scale.values.size() > 1);
  enc.kind = per_channel ? EncodingKind::kPerChannel : EncodingKind::kPerTensor;
  enc.scales.assign(y_scale.values.begin(), y_scale.values.end());  // double -> float
  if (y_zp.present) {
    std::vector<float> unused;
    if (!zero_points_to_offsets(y_zp, "y_zero_point", false, &enc.offsets, &unused)) return;
  } else {
    enc.offsets = ZeroOffsets(enc.scales.size());
  }
  enc.symmetry = is_signed && all_zero(enc.offsets) ? Symmetry::kSymmetric : Symmetry::kAsymmetric;
  if (per_channel) {
    if (axis && *axis >= 0) {
      enc.axis = static_cast<int32_t>(*axis);
    } else {
      enc.axis = -1;
      if (axis) e.negative_axis = static_cast<int32_t>(*axis);  // normalised against the rank when applied
      else e.axis_inferred = true;
    }
  }
  AddEntry(std::move(e), errors_before);
}

}  // namespace qairt::encodings::reader_internal
