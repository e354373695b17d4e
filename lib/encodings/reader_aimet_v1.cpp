// The AIMET 1.0.0 dialect: "activation_encodings" and "param_encodings"
// lists of objects with name, enc_type (PER_TENSOR, PER_CHANNEL, PER_BLOCK,
// LPBQ), dtype, bw, is_sym, scale and offset.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "encodings/reader_internal.h"

namespace qairt::encodings::reader_internal {

void Reader::ReadV1Section(od::value& v, Section section) {
  if (!ExpectSection(v, section, od::json_type::array, "a list of encodings",
                     "a list of encodings (an object {name: [...]} is the 0.6.1 format)"))
    return;
  ForEachElement(v, [&](od::value& entry) { ReadV1Entry(entry, section); });
}

void Reader::ReadV1Entry(od::value& v, Section section) {
  const uint64_t entry_off = Off(v);
  if (!Expect(v, od::json_type::object, "", "", "an encoding object {\"name\": ..., \"enc_type\": ..., ...}"))
    return;
  const size_t errors_before = errors_;
  Entry e;
  e.offset = entry_off;
  e.section = section;
  std::string enc_type, dtype;
  int64_t bw = -1, compressed_bw = -1, block_size = -1;
  bool has_sym = false, sym = false, has_name = false;
  Nums &scale = nums_[0], &offset = nums_[1], &pbis = nums_[2], &zps = nums_[3];
  for (Nums& n : nums_) Reset(&n);
  static const char* kKnown =
      "name, enc_type, dtype, bw, is_sym, scale, offset, block_size, compressed_bw, per_block_int_scale, "
      "zero_point_shift";
  ForEachUniqueMember(v, e.name, [&](std::string_view key, uint64_t key_off, od::value& val) {
    e.field_offsets.Add(key, Off(val));
    const std::string& tn = e.name;
    if (key == "name") {
      has_name = GetString(val, "", "name", &e.name) && !e.name.empty();
      if (!has_name) Add(Severity::kError, "missing-field", key_off, "", "name", "tensor name is empty");
    } else if (key == "enc_type") {
      GetString(val, tn, "enc_type", &enc_type);
    } else if (key == "dtype") {
      GetString(val, tn, "dtype", &dtype);
    } else if (key == "bw") {
      GetInt(val, tn, "bw", &bw);
    } else if (key == "is_sym") {
      has_sym = GetBoolish(val, tn, "is_sym", &sym);
    } else if (key == "scale") {
      GetNums(val, tn, "scale", &scale);
    } else if (key == "offset") {
      GetNums(val, tn, "offset", &offset);
    } else if (key == "block_size") {
      GetInt(val, tn, "block_size", &block_size);
    } else if (key == "compressed_bw") {
      GetInt(val, tn, "compressed_bw", &compressed_bw);
    } else if (key == "per_block_int_scale") {
      GetNums(val, tn, "per_block_int_scale", &pbis);
    } else if (key == "zero_point_shift") {
      GetNums(val, tn, "zero_point_shift", &zps);
    } else {
      UnknownKey(key, key_off, tn, val, kKnown);
    }
  });
  if (errors_ != errors_before) return;
  if (!has_name) {
    Add(Severity::kError, "missing-field", entry_off, "", "name", "entry has no \"name\"");
    return;
  }
  const std::string& tn = e.name;
  if (bw < 0) {
    Add(Severity::kError, "missing-field", entry_off, tn, "bw", "entry has no \"bw\"");
    return;
  }
  Encoding& enc = e.encoding;
  if (dtype == "FLOAT" || dtype == "float") {
    if (bw != 16 && bw != 32) {
      Add(Severity::kError, "value-range", ValueOffset(e, "bw"), tn, "bw", "a FLOAT encoding has bw 16 or 32, got {}",
          bw);
      return;
    }
    if (scale.present || offset.present) {
      Add(Severity::kError, "invalid-encoding", scale.present ? scale.offset : offset.offset, tn, "",
          "a FLOAT encoding takes no scale or offset");
      return;
    }
    enc.kind = EncodingKind::kFloat;
    enc.dtype = bw == 16 ? DType::kFloat16 : DType::kFloat32;
    AddEntry(std::move(e), errors_before);
    return;
  }
  if (dtype != "INT" && dtype != "int") {
    Add(Severity::kError, dtype.empty() ? "missing-field" : "value-range", ValueOffset(e, "dtype"), tn, "dtype",
        "dtype must be \"INT\" or \"FLOAT\", got \"{}\"", dtype);
    return;
  }
  if (bw != 2 && bw != 4 && bw != 8 && bw != 16 && bw != 32) {
    Add(Severity::kError, "value-range", ValueOffset(e, "bw"), tn, "bw",
        "bw {} is not supported: expected 4, 8, 16 or 32", bw);
    return;
  }
  if (!has_sym) {
    Add(Severity::kError, "missing-field", entry_off, tn, "is_sym", "an INT entry needs \"is_sym\"");
    return;
  }
  if (!scale.present || !offset.present) {
    Add(Severity::kError, "missing-field", entry_off, tn, scale.present ? "offset" : "scale",
        "an INT entry needs \"scale\" and \"offset\" lists");
    return;
  }
  if (scale.scalar || offset.scalar || scale.shape.size() != 1 || offset.shape.size() != 1) {
    Add(Severity::kError, "wrong-type", scale.scalar || scale.shape.size() != 1 ? scale.offset : offset.offset, tn,
        scale.scalar || scale.shape.size() != 1 ? "scale" : "offset", "expected a flat list of numbers");
    return;
  }
  if (!CheckScales(scale, tn, "scale") || !CheckIntegral(offset, tn, "offset")) return;
  if (zps.present) {
    for (size_t i = 0; i < zps.values.size(); ++i)
      if (zps.values[i] != 0) {
        Add(Severity::kError, "unsupported", ElementOffset(zps.offset, i), tn, "zero_point_shift",
            "zero_point_shift {} (QNN's exclude-zero symmetric mapping) is not supported", zps.values[i]);
        return;
      }
  }
  const bool lpbq = enc_type == "LPBQ";
  const size_t n = scale.values.size();
  if (enc_type == "PER_TENSOR") {
    enc.kind = EncodingKind::kPerTensor;
    if (n != 1) {
      Add(Severity::kError, "shape-mismatch", scale.offset, tn, "scale", "a PER_TENSOR entry has 1 scale, got {}", n);
      return;
    }
  } else if (enc_type == "PER_CHANNEL") {
    enc.kind = EncodingKind::kPerChannel;
    e.axis_inferred = true;
  } else if (enc_type == "PER_BLOCK" || lpbq) {
    enc.kind = lpbq ? EncodingKind::kLpbq : EncodingKind::kPerBlock;
    e.axis_inferred = true;
    if (block_size < 1) {
      Add(Severity::kError, block_size < 0 ? "missing-field" : "value-range", ValueOffset(e, "block_size"), tn,
          "block_size", "a {} entry needs block_size >= 1", enc_type);
      return;
    }
    e.block_size = block_size;
  } else if (enc_type == "VECTOR") {
    Add(Severity::kError, "unsupported", ValueOffset(e, "enc_type"), tn, "enc_type",
        "VECTOR (vector quantization) encodings are not supported");
    return;
  } else {
    Add(Severity::kError, enc_type.empty() ? "missing-field" : "value-range", ValueOffset(e, "enc_type"), tn,
        "enc_type", "enc_type must be PER_TENSOR, PER_CHANNEL, PER_BLOCK or LPBQ, got \"{}\"", enc_type);
    return;
  }
  if (offset.values.size() != n && !(offset.values.size() == 1 && lpbq)) {
    Add(Severity::kError, "shape-mismatch", offset.offset, tn, "offset", "has {} values but scale has {}",
        offset.values.size(), n);
    return;
  }
  if (lpbq) {
    if (!sym) {
      Add(Severity::kError, "invalid-encoding", ValueOffset(e, "is_sym"), tn, "is_sym", "LPBQ encodings are symmetric");
      return;
    }
    if (compressed_bw < 1 || compressed_bw >= bw ||
        (compressed_bw != 2 && compressed_bw != 4 && compressed_bw != 8 && compressed_bw != 16)) {
      Add(Severity::kError, compressed_bw < 0 ? "missing-field" : "value-range", ValueOffset(e, "compressed_bw"), tn,
          "compressed_bw", "LPBQ needs compressed_bw in {{2, 4, 8, 16}} below bw {}, got {}", bw, compressed_bw);
      return;
    }
    const int64_t centre = -(int64_t{1} << (bw - 1));
    for (size_t i = 0; i < offset.values.size(); ++i)
      if (offset.values[i] != static_cast<double>(centre) && offset.values[i] != 0) {
        Add(Severity::kError, "invalid-encoding", ElementOffset(offset.offset, i), tn, fmt::format("offset[{}]", i),
            "LPBQ offset {} is not symmetric: expected {} (the unsigned-grid offset of a symmetric {}-bit grid)",
            offset.values[i], centre, bw);
        return;
      }
    if (!pbis.present || pbis.scalar || pbis.shape.size() != 1) {
      Add(Severity::kError, "missing-field", pbis.present ? pbis.offset : entry_off, tn, "per_block_int_scale",
          "an LPBQ entry needs a flat per_block_int_scale list");
      return;
    }
    if (!CheckIntegral(pbis, tn, "per_block_int_scale")) return;
    enc.dtype = *FixedPointDType(true, static_cast<uint32_t>(compressed_bw));
    enc.symmetry = Symmetry::kSymmetric;
    enc.decompressed_bitwidth = static_cast<uint32_t>(bw);
    enc.scales.assign(scale.values.begin(), scale.values.end());  // double -> float
    enc.block_int_scales.assign(pbis.values.begin(), pbis.values.end());  // integral: checked
    enc.offsets = ZeroOffsets(enc.scales.size());
    AddEntry(std::move(e), errors_before);
    return;
  }
  if (pbis.present || compressed_bw >= 0) {
    Add(Severity::kError, "invalid-encoding", pbis.present ? pbis.offset : ValueOffset(e, "compressed_bw"), tn,
        pbis.present ? "per_block_int_scale" : "compressed_bw", "only LPBQ entries take this field");
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    GridValue g;
    const std::string field = fmt::format("offset[{}]", i);
    if (!FromUnsignedGrid(static_cast<int64_t>(offset.values[i]), sym, static_cast<uint32_t>(bw), tn, field.c_str(),
                          ElementOffset(offset.offset, i), &g))
      return;
    if (i == 0) {
      enc.dtype = g.dtype;
      enc.symmetry = g.symmetry;
    } else if (g.dtype != enc.dtype || g.symmetry != enc.symmetry) {
      Add(Severity::kError, "invalid-encoding", ElementOffset(offset.offset, i), tn, field,
          "offset {} gives a different grid than offset[0]", offset.values[i]);
      return;
    }
    enc.scales.push_back(static_cast<float>(scale.values[i]));
    enc.offsets.push_back(g.offset);
  }
  AddEntry(std::move(e), errors_before);
}

}  // namespace qairt::encodings::reader_internal
