// The encodings reader's JSON layer, shared by every dialect: typed values
// (strings, integers, booleans, numbers and rectangular nested number arrays),
// located diagnostics for values of the wrong type, and the walk that still
// validates values nobody reads.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "encodings/reader_internal.h"

namespace qairt::encodings::reader_internal {
namespace {

// Error codes after which the on-demand iterator can go on (the bad value is
// skipped); anything else ends the parse.
bool IsValueError(error_code e) {
  return e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_ERROR ||
         e == simdjson::NUMBER_OUT_OF_RANGE || e == simdjson::T_ATOM_ERROR || e == simdjson::F_ATOM_ERROR ||
         e == simdjson::N_ATOM_ERROR || e == simdjson::STRING_ERROR;
}

bool IsNonFiniteLiteral(std::string_view tok) {
  for (std::string_view lit : {"NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "nan", "inf", "-inf"})
    if (tok.substr(0, lit.size()) == lit) return true;
  return false;
}

}  // namespace

void Reader::Fatal(error_code e, uint64_t offset) {
  const char* what = simdjson::error_message(e);
  Add(Severity::kError, "json-syntax", offset, "", "", "invalid JSON: {}", what);
  fatal_ = fmt::format("{}{}: invalid JSON: {}", name_,
                       diags_->back().line ? fmt::format(":{}:{}", diags_->back().line, diags_->back().column) : "",
                       what);
  throw ParseAbort{};
}

uint64_t Reader::DocLocation() {
  const char* p = nullptr;
  if (doc_.current_location().get(p)) return Diag::kNoOffset;
  return Off(p);
}

bool Reader::WrongType(od::value& v, std::string_view tensor, std::string_view field, const char* expected) {
  std::string_view tok = v.raw_json_token();
  const uint64_t off = Off(tok.data());
  std::string_view t = tok.substr(0, 12);
  for (std::string_view lit : {"NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "nan", "inf", "-inf"}) {
    if (t.substr(0, lit.size()) == lit) {
      Add(Severity::kError, "json-non-finite", off, tensor, field,
          "'{}' is not valid JSON: JSON has no NaN or Infinity (Python's json.dump writes them unless "
          "allow_nan=False); scales and offsets must be finite numbers",
          lit);
      return false;
    }
  }
  std::string shown(tok.substr(0, 40));
  while (!shown.empty() && (shown.back() == ',' || shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
  Add(Severity::kError, "wrong-type", off, tensor, field, "expected {}, got `{}{}`", expected, shown,
      tok.size() > 40 ? "..." : "");
  return false;
}

bool Reader::ExpectSection(od::value& v, Section section, od::json_type layout, const char* expected,
                           const char* expected_other) {
  od::json_type t = od::json_type::null;  // stays null (no hint) when simdjson cannot tell the type
  if (!v.type().get(t) && t == layout) return true;
  const od::json_type other = layout == od::json_type::array ? od::json_type::object : od::json_type::array;
  return WrongType(v, "", SectionKey(section), t == other ? expected_other : expected);
}

bool Reader::GetString(od::value& v, std::string_view tensor, std::string_view field, std::string* out) {
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::string) return WrongType(v, tensor, field, "a string");
  std::string_view s;
  error_code e = v.get_string().get(s);
  if (e) {
    if (!IsValueError(e)) Fatal(e, Off(v));
    Add(Severity::kError, "wrong-type", Off(v), tensor, field, "invalid string: {}", simdjson::error_message(e));
    return false;
  }
  *out = std::string(s);
  return true;
}

bool Reader::GetInt(od::value& v, std::string_view tensor, std::string_view field, int64_t* out) {
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::number) return WrongType(v, tensor, field, "an integer");
  od::number n;
  error_code e = v.get_number().get(n);
  if (e) {
    if (!IsValueError(e)) Fatal(e, Off(v));
    Add(Severity::kError, "value-range", Off(v), tensor, field, "number out of range ({})",
        simdjson::error_message(e));
    return false;
  }
  if (n.is_int64()) {
    *out = n.get_int64();
    return true;
  }
  if (n.is_uint64()) {
    Add(Severity::kError, "value-range", Off(v), tensor, field, "{} does not fit a 64-bit signed integer",
        n.get_uint64());
    return false;
  }
  return WrongType(v, tensor, field, "an integer (no decimal point or exponent)");
}

bool Reader::GetBoolish(od::value& v, std::string_view tensor, std::string_view field, bool* out) {
  od::json_type t;
  if (v.type().get(t)) return WrongType(v, tensor, field, "true, false, \"True\" or \"False\"");
  if (t == od::json_type::boolean) {
    if (v.get_bool().get(*out)) return WrongType(v, tensor, field, "true or false");
    return true;
  }
  if (t == od::json_type::string) {
    std::string s;
    if (!GetString(v, tensor, field, &s)) return false;
    // AIMET writes Python's str(bool); accept exactly these spellings.
    if (s == "True" || s == "true") return *out = true, true;
    if (s == "False" || s == "false") return *out = false, true;
    Add(Severity::kError, "wrong-type", Off(v), tensor, field,
        "\"{}\" is not a boolean: expected true, false, \"True\" or \"False\"", s);
    return false;
  }
  return WrongType(v, tensor, field, "true, false, \"True\" or \"False\"");
}

bool Reader::GetNumber(od::value& v, std::string_view tensor, std::string_view field, double* out) {
  Nums n;
  if (!GetNums(v, tensor, field, &n)) return false;
  if (!n.scalar) {
    Add(Severity::kError, "wrong-type", n.offset, tensor, field, "expected a number, got an array");
    return false;
  }
  *out = n.values[0];
  return true;
}

bool Reader::GetNums(od::value& v, std::string_view tensor, std::string_view field, Nums* out, bool literal_kind) {
  Reset(out);
  out->present = true;
  out->literal_kind = literal_kind;
  out->offset = Off(v);
  od::json_type t;
  if (v.type().get(t)) return WrongType(v, tensor, field, "a number or an array of numbers");
  if (t == od::json_type::number) {
    out->scalar = true;
    return ReadNumber(v, tensor, field, out);
  }
  if (t != od::json_type::array) return WrongType(v, tensor, field, "a number or an array of numbers");
  const char* text = Ptr(out->offset);
  if (text && ScanNumberArray(text, static_cast<int>(opt_.max_rank), &scan_)) {
    // The common case, read from the text; simdjson only steps over it.
    od::array arr;
    std::string_view raw;
    Check(v.get_array().get(arr));
    Check(arr.raw_json().get(raw));
    const char* after = scan_.end;
    while (after < raw.data() + raw.size() && (*after == ' ' || *after == '\n' || *after == '\r' || *after == '\t'))
      ++after;
    if (raw.data() != text || after != raw.data() + raw.size()) Fatal(simdjson::TAPE_ERROR, out->offset);
    out->values.swap(scan_.values);
    out->shape.swap(scan_.shape);
    if (literal_kind) out->any_float_literal = scan_.any_float_literal;
    return true;
  }
  std::vector<int64_t> dims(opt_.max_rank + 1, -1);
  int leaf_depth = -1;
  if (!ReadArray(v, 0, &dims, &leaf_depth, tensor, field, out)) return false;
  const int rank = leaf_depth < 0 ? 1 : leaf_depth;
  out->shape.assign(dims.begin(), dims.begin() + rank);
  for (auto& d : out->shape)
    if (d < 0) d = 0;
  return out->ok;
}

bool Reader::ReadNumber(od::value& v, std::string_view tensor, std::string_view field, Nums* out) {
  od::number n;
  error_code e = v.get_number().get(n);
  if (e) {
    if (!IsValueError(e)) Fatal(e, Off(v));
    std::string_view tok = v.raw_json_token();
    if (e == simdjson::INCORRECT_TYPE || IsNonFiniteLiteral(tok)) {
      WrongType(v, tensor, field, "a number");
      return out->ok = false;
    }
    Add(Severity::kError, "value-range", Off(v), tensor, field,
        "number `{}` is out of range of a double (or malformed)", tok.substr(0, std::min<size_t>(tok.find_first_of(",]} \n"), 40)));
    return out->ok = false;
  }
  if (n.is_double()) {
    out->any_float_literal = true;
    out->values.push_back(n.get_double());
  } else if (n.is_int64()) {
    out->values.push_back(static_cast<double>(n.get_int64()));
  } else {
    out->values.push_back(static_cast<double>(n.get_uint64()));
  }
  return true;
}

bool Reader::ReadArray(od::value& v, int depth, std::vector<int64_t>* dims, int* leaf_depth, std::string_view tensor,
                       std::string_view field, Nums* out) {
  if (depth >= static_cast<int>(opt_.max_rank)) {
    Add(Severity::kError, "json-depth", Off(v), tensor, field, "arrays nested deeper than {} levels",
        opt_.max_rank);
    return out->ok = false;
  }
  od::array arr;
  error_code e = v.get_array().get(arr);
  if (e) Fatal(e, Off(v));
  int64_t count = 0;
  for (auto item : arr) {
    od::value child;
    if (item.get(child)) Check(item.error());
    if (!out->literal_kind) {
      // Fast path: most elements are plain numbers.
      double d;
      if (!child.get_double().get(d)) {
        if (*leaf_depth < 0) *leaf_depth = depth + 1;
        if (*leaf_depth != depth + 1) return Ragged(child, tensor, field, out);
        out->values.push_back(d);
        ++count;
        continue;
      }
    }
    od::json_type t;
    error_code te = child.type().get(t);
    if (te) {
      WrongType(child, tensor, field, "a number or an array");
      return out->ok = false;
    }
    if (t == od::json_type::array) {
      if (*leaf_depth >= 0 && *leaf_depth <= depth) return Ragged(child, tensor, field, out);
      if (!ReadArray(child, depth + 1, dims, leaf_depth, tensor, field, out)) return false;
    } else if (t == od::json_type::number) {
      if (*leaf_depth < 0) *leaf_depth = depth + 1;
      if (*leaf_depth != depth + 1) return Ragged(child, tensor, field, out);
      if (!ReadNumber(child, tensor, field, out)) return false;
    } else {
      WrongType(child, tensor, field, "a number");
      return out->ok = false;
    }
    ++count;
  }
  int64_t& d = (*dims)[static_cast<size_t>(depth)];
  if (d < 0) {
    d = count;
  } else if (d != count) {
    Add(Severity::kError, "shape-mismatch", Off(v), tensor, field,
        "ragged array: {} elements at nesting level {} where an earlier sibling has {}", count, depth + 1, d);
    return out->ok = false;
  }
  return true;
}

bool Reader::Ragged(od::value& v, std::string_view tensor, std::string_view field, Nums* out) {
  Add(Severity::kError, "shape-mismatch", Off(v), tensor, field,
      "mixes numbers and arrays at one nesting level: arrays must be rectangular");
  return out->ok = false;
}

void Reader::Validate(od::value& v, int depth, std::string_view tensor, std::string_view field) {
  if (depth > static_cast<int>(opt_.max_depth)) {
    Add(Severity::kError, "json-depth", Off(v), tensor, field, "nested deeper than {} levels", opt_.max_depth);
    return;
  }
  od::json_type t;
  if (v.type().get(t)) {
    WrongType(v, tensor, field, "a JSON value");
    return;
  }
  switch (t) {
    case od::json_type::array:
      ForEachElement(v, [&](od::value& element) { Validate(element, depth + 1, tensor, field); });
      break;
    case od::json_type::object: {
      // Duplicates are reported and, like every other value, still validated.
      KeySet keys;
      ForEachMember(v, [&](std::string_view key, uint64_t key_offset, od::value& value) {
        CheckDuplicate(&keys, key, key_offset, tensor);
        Validate(value, depth + 1, tensor, field);
      });
      break;
    }
    case od::json_type::number: {
      Nums n;
      ReadNumber(v, tensor, field, &n);
      break;
    }
    case od::json_type::string: {
      std::string s;
      GetString(v, tensor, field, &s);
      break;
    }
    case od::json_type::boolean: {
      bool b;
      if (v.get_bool().get(b)) WrongType(v, tensor, field, "true or false");
      break;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (v.is_null().get(is_null) || !is_null) WrongType(v, tensor, field, "null");
      break;
    }
  }
}

void Reader::UnknownKey(std::string_view key, uint64_t offset, std::string_view tensor, od::value& v,
                        const char* known) {
  Add(Severity::kWarning, "unknown-key", offset, tensor, key, "unknown key '{}' ignored (known keys: {})", key,
      known);
  Validate(v, 1, tensor, key);
}

}  // namespace qairt::encodings::reader_internal
