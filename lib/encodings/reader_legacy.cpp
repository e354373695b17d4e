// The AIMET legacy dialect (0.4.0 / 0.5.0 / 0.6.1, also the classic
// `--quantization_overrides` format): "activation_encodings" and
// "param_encodings" objects {tensor name: [one encoding per channel]}.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "encodings/reader_internal.h"

namespace qairt::encodings::reader_internal {

void Reader::ReadLegacySection(od::value& v, Section section) {
  if (!ExpectSection(v, section, od::json_type::object, "an object {tensor name: [encodings]}",
                     "an object {tensor name: [encodings]} (a list is the 1.0.0 format: set "
                     "\"version\": \"1.0.0\")"))
    return;
  // Each member is one tensor's entry; a tensor named twice is a duplicate
  // entry (reported once all are read), not a duplicate key.
  ForEachMember(v, [&](std::string_view name, uint64_t name_offset, od::value& encodings) {
    ReadLegacyEntry(std::string(name), name_offset, encodings, section);
  });
}

void Reader::ReadLegacyEntry(std::string name, uint64_t key_offset, od::value& v, Section section) {
  const size_t errors_before = errors_;
  Entry e;
  e.name = std::move(name);
  e.section = section;
  e.offset = key_offset;
  const std::string& tn = e.name;
  if (tn.empty()) {
    Add(Severity::kError, "missing-field", key_offset, "", "name", "tensor name is empty");
    Validate(v, 1, "", "");
    return;
  }
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::array) {
    if (!v.type().get(t) && t == od::json_type::object)
      Add(Severity::kError, "wrong-type", Off(v), tn, "",
          "expected a list of encodings ([{{...}}]; one per channel), got a single object");
    else
      WrongType(v, tn, "", "a list of encodings");
    return;
  }
  e.field_offsets.Add("", Off(v));
  struct Item {
    int64_t bitwidth = -1;
    std::string dtype;
    bool has_sym = false, sym = false;
    bool has_scale = false, has_offset = false, has_min = false, has_max = false;
    double scale = 0, offset = 0, min = 0, max = 0;
    uint64_t off = 0, scale_off = 0, offset_off = 0, bw_off = 0;
  };
  std::vector<Item> items;
  size_t index = 0;
  static const char* kKnown = "bitwidth, dtype, is_symmetric, max, min, offset, scale";
  ForEachElement(v, [&](od::value& ev) {
    const std::string prefix = fmt::format("[{}]", index++);
    Item item;
    item.off = Off(ev);
    if (!Expect(ev, od::json_type::object, tn, prefix, "an encoding object {\"bitwidth\": ..., \"scale\": ..., ...}"))
      return;
    ForEachUniqueMember(ev, tn, [&](std::string_view key, uint64_t key_off, od::value& val) {
      const std::string field = prefix + "." + std::string(key);
      if (key == "bitwidth") {
        item.bw_off = Off(val);
        GetInt(val, tn, field, &item.bitwidth);
      } else if (key == "dtype") {
        GetString(val, tn, field, &item.dtype);
      } else if (key == "is_symmetric") {
        item.has_sym = GetBoolish(val, tn, field, &item.sym);
      } else if (key == "scale") {
        item.scale_off = Off(val);
        item.has_scale = GetNumber(val, tn, field, &item.scale);
      } else if (key == "offset") {
        item.offset_off = Off(val);
        item.has_offset = GetNumber(val, tn, field, &item.offset);
      } else if (key == "min") {
        item.has_min = GetNumber(val, tn, field, &item.min);
      } else if (key == "max") {
        item.has_max = GetNumber(val, tn, field, &item.max);
      } else {
        UnknownKey(key, key_off, tn, val, kKnown);
      }
    });
    items.push_back(std::move(item));
  });
  if (errors_ != errors_before) return;
  if (items.empty()) {
    Add(Severity::kError, "shape-mismatch", Off(v), tn, "", "empty list of encodings");
    return;
  }
  Encoding& enc = e.encoding;
  const Item& first = items[0];
  const std::string dtype = first.dtype.empty() ? "int" : first.dtype;  // 0.4.0 had no dtype
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const std::string p = fmt::format("[{}]", i);
    if (it.bitwidth < 0) {
      Add(Severity::kError, "missing-field", it.off, tn, p + ".bitwidth", "encoding has no \"bitwidth\"");
      return;
    }
    if ((it.dtype.empty() ? "int" : it.dtype) != dtype || it.bitwidth != first.bitwidth ||
        (it.has_sym ? it.sym : false) != (first.has_sym ? first.sym : false)) {
      Add(Severity::kError, "invalid-encoding", it.off, tn, p,
          "per-channel encodings disagree on dtype, bitwidth or is_symmetric with the first one");
      return;
    }
  }
  if (dtype == "float") {
    if (first.bitwidth != 16 && first.bitwidth != 32) {
      Add(Severity::kError, "value-range", first.bw_off, tn, "[0].bitwidth",
          "a float encoding has bitwidth 16 or 32, got {}", first.bitwidth);
      return;
    }
    if (items.size() != 1) {
      Add(Severity::kError, "invalid-encoding", Off(v), tn, "", "a float encoding is a list of one element");
      return;
    }
    enc.kind = EncodingKind::kFloat;
    enc.dtype = first.bitwidth == 16 ? DType::kFloat16 : DType::kFloat32;
    AddEntry(std::move(e), errors_before);
    return;
  }
  if (dtype != "int") {
    Add(Severity::kError, "value-range", first.off, tn, "[0].dtype", "dtype \"{}\" is not \"int\" or \"float\"",
        dtype);
    return;
  }
  const int64_t bw = first.bitwidth;
  if (bw != 2 && bw != 4 && bw != 8 && bw != 16 && bw != 32) {
    Add(Severity::kError, "value-range", first.bw_off, tn, "[0].bitwidth",
        "bitwidth {} is not supported: expected 4, 8, 16 or 32 (or 2)", bw);
    return;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const std::string p = fmt::format("[{}]", i);
    if (!it.has_scale || !it.has_offset) {
      Add(Severity::kError, "missing-field", it.off, tn, p + (it.has_scale ? ".offset" : ".scale"),
          "an int encoding needs \"scale\" and \"offset\"");
      return;
    }
    Nums n;
    n.scalar = true;
    n.values = {it.scale};
    n.offset = it.scale_off;
    if (!CheckScales(n, tn, (p + ".scale").c_str())) return;
    if (!IsIntegral(it.offset) || std::fabs(it.offset) > 4294967296.0) {
      Add(Severity::kError, "value-range", it.offset_off, tn, p + ".offset", "offset {} must be an integer",
          it.offset);
      return;
    }
    if (it.has_min && it.has_max && !(it.min <= it.max)) {
      Add(Severity::kError, "value-range", it.off, tn, p, "min {} is greater than max {}", it.min, it.max);
      return;
    }
    GridValue g;
    if (!FromUnsignedGrid(static_cast<int64_t>(it.offset), it.has_sym && it.sym, static_cast<uint32_t>(bw), tn,
                          (p + ".offset").c_str(), it.offset_off, &g))
      return;
    if (i == 0) {
      enc.dtype = g.dtype;
      enc.symmetry = g.symmetry;
    } else if (g.dtype != enc.dtype || g.symmetry != enc.symmetry) {
      Add(Severity::kError, "invalid-encoding", it.offset_off, tn, p + ".offset",
          "offset {} gives a different grid ({} {}) than channel 0 ({} {})", it.offset, DTypeShortName(g.dtype),
          SymmetryName(g.symmetry), DTypeShortName(enc.dtype), SymmetryName(enc.symmetry));
      return;
    }
    enc.scales.push_back(static_cast<float>(it.scale));
    enc.offsets.push_back(g.offset);
  }
  enc.kind = items.size() > 1 ? EncodingKind::kPerChannel : EncodingKind::kPerTensor;
  e.axis_inferred = items.size() > 1;
  e.field_offsets.Add("scale", items[0].scale_off);
  e.field_offsets.Add("offset", items[0].offset_off);
  e.field_offsets.Add("bitwidth", items[0].bw_off);
  AddEntry(std::move(e), errors_before);
}

}  // namespace qairt::encodings::reader_internal
