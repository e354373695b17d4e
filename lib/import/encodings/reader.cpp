// Encodings reader: simdjson on-demand over the file's bytes, one pass per
// entry, every value type-checked and every problem located (file:line:col,
// tensor, JSON field).
//
// simdjson's on-demand API neither rejects duplicate keys nor validates values
// it skips, so this reader walks every object itself: duplicate keys are
// errors (simdjson keeps the first, Python the last: a parser differential),
// unknown keys are warnings and their values are still validated.
#include <fmt/format.h>
#include <simdjson.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "import/encodings/encodings.h"
#include "import/encodings/number_array_scan.h"
#include "support/name_index.h"

namespace qairt::encodings {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

static_assert(SourceText::kPadding >= simdjson::SIMDJSON_PADDING);
static_assert(std::is_nothrow_move_constructible_v<Entry>);

// A number or a (nested) array of numbers as written.
struct Nums {
  bool present = false;
  bool scalar = false;
  std::vector<int64_t> shape;  // empty for a scalar
  std::vector<double> values;  // row-major
  bool any_float_literal = false;
  bool literal_kind = false;  // track any_float_literal (slower: full number parse)
  bool ok = true;
  uint64_t offset = Diag::kNoOffset;
};

bool IsIntegral(double v) { return std::isfinite(v) && std::floor(v) == v; }

std::string ShapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Error codes after which the on-demand iterator can go on (the bad value is
// skipped); anything else ends the parse.
bool IsValueError(error_code e) {
  return e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_ERROR ||
         e == simdjson::NUMBER_OUT_OF_RANGE || e == simdjson::T_ATOM_ERROR || e == simdjson::F_ATOM_ERROR ||
         e == simdjson::N_ATOM_ERROR || e == simdjson::STRING_ERROR;
}

struct ParseAbort {};

bool IsNonFiniteLiteral(std::string_view tok) {
  for (std::string_view lit : {"NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "nan", "inf", "-inf"})
    if (tok.substr(0, lit.size()) == lit) return true;
  return false;
}  // internal: a structural error ended the parse

// The blocked dim of a per-dim block-size list: the one dim with a block
// size > 1, else the last (the specification's `block_size: [...]` form).
int BlockedAxis(const std::vector<int64_t>& block_sizes) {
  int found = -1, count = 0;
  for (size_t i = 0; i < block_sizes.size(); ++i)
    if (block_sizes[i] > 1) found = static_cast<int>(i), ++count;
  return count == 1 ? found : static_cast<int>(block_sizes.size()) - 1;
}

class Reader {
 public:
  Reader(std::shared_ptr<SourceText> src, std::string name, const ReadOptions& options, Diags* diags)
      : src_(std::move(src)), name_(std::move(name)), opt_(options), diags_(diags) {
    base_ = src_->data();
  }

  Result<File> Run();

 private:
  // ---- diagnostics ----------------------------------------------------------
  template <typename... Args>
  void Add(Severity sev, const char* code, uint64_t offset, std::string_view tensor, std::string_view field,
           fmt::format_string<Args...> format, Args&&... args) {
    Diag d;
    d.severity = sev;
    d.code = code;
    d.file = name_;
    d.offset = offset;
    if (offset != Diag::kNoOffset) {
      auto [l, c] = src_->Locate(offset);
      d.line = l;
      d.column = c;
    }
    d.tensor = std::string(tensor);
    d.field = std::string(field);
    d.message = fmt::format(format, std::forward<Args>(args)...);
    if (sev == Severity::kError) ++errors_;
    diags_->push_back(std::move(d));
  }
  uint64_t Off(const char* p) const {
    if (!p || p < base_ || p > base_ + src_->size()) return Diag::kNoOffset;
    return static_cast<uint64_t>(p - base_);
  }
  uint64_t Off(od::value& v) {
    std::string_view tok = v.raw_json_token();
    return Off(tok.data());
  }
  // A structural error: record it and unwind to Run().
  [[noreturn]] void Fatal(error_code e, uint64_t offset) {
    const char* what = simdjson::error_message(e);
    Add(Severity::kError, "json-syntax", offset, "", "", "invalid JSON: {}", what);
    fatal_ = fmt::format("{}{}: invalid JSON: {}", name_,
                         diags_->back().line ? fmt::format(":{}:{}", diags_->back().line, diags_->back().column) : "",
                         what);
    throw ParseAbort{};
  }
  uint64_t DocLocation() {
    const char* p = nullptr;
    if (doc_.current_location().get(p)) return Diag::kNoOffset;
    return Off(p);
  }
  void Check(error_code e) {
    if (e) Fatal(e, DocLocation());
  }
  // Reports a value that is not what `expected` says; NaN/Infinity literals
  // get their own message. Returns false.
  bool WrongType(od::value& v, std::string_view tensor, std::string_view field, const char* expected) {
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

  // A field's key. Keys without escapes (every key the formats define) are
  // read in place from the source; unescaping each one through simdjson
  // costs an indirect call per key (~1M keys in an LLM file).
  static error_code KeyText(od::field& fld, std::string_view* key) {
    const char* begin = fld.key().raw();  // just after the opening quote
    const char* p = begin;
    while (*p != '"' && *p != '\\') ++p;  // stage 1 validated the string: a quote ends it
    if (*p == '"') {
      *key = std::string_view(begin, static_cast<size_t>(p - begin));
      return simdjson::SUCCESS;
    }
    return fld.unescaped_key().get(*key);
  }

  // ---- typed getters (false = reported) --------------------------------------
  bool GetString(od::value& v, std::string_view tensor, std::string_view field, std::string* out) {
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
  bool GetInt(od::value& v, std::string_view tensor, std::string_view field, int64_t* out) {
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
  bool GetBoolish(od::value& v, std::string_view tensor, std::string_view field, bool* out) {
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
  bool GetNumber(od::value& v, std::string_view tensor, std::string_view field, double* out) {
    Nums n;
    if (!GetNums(v, tensor, field, &n)) return false;
    if (!n.scalar) {
      Add(Severity::kError, "wrong-type", n.offset, tensor, field, "expected a number, got an array");
      return false;
    }
    *out = n.values[0];
    return true;
  }
  // A number or a rectangular nested array of numbers (rank <= max_rank).
  static void Reset(Nums* n) {  // keeps the buffers' capacity
    n->present = n->scalar = n->any_float_literal = n->literal_kind = false;
    n->ok = true;
    n->shape.clear();
    n->values.clear();
    n->offset = Diag::kNoOffset;
  }
  bool GetNums(od::value& v, std::string_view tensor, std::string_view field, Nums* out,
               bool literal_kind = false) {
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
    if (out->offset != Diag::kNoOffset && ScanNumberArray(base_ + out->offset, static_cast<int>(opt_.max_rank), &scan_)) {
      // The common case, read from the text; simdjson only steps over it.
      od::array arr;
      std::string_view raw;
      Check(v.get_array().get(arr));
      Check(arr.raw_json().get(raw));
      const char* after = scan_.end;
      while (after < raw.data() + raw.size() && (*after == ' ' || *after == '\n' || *after == '\r' || *after == '\t'))
        ++after;
      if (raw.data() != base_ + out->offset || after != raw.data() + raw.size()) Fatal(simdjson::TAPE_ERROR, out->offset);
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
  bool ReadNumber(od::value& v, std::string_view tensor, std::string_view field, Nums* out) {
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
  bool ReadArray(od::value& v, int depth, std::vector<int64_t>* dims, int* leaf_depth, std::string_view tensor,
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
  bool Ragged(od::value& v, std::string_view tensor, std::string_view field, Nums* out) {
    Add(Severity::kError, "shape-mismatch", Off(v), tensor, field,
        "mixes numbers and arrays at one nesting level: arrays must be rectangular");
    return out->ok = false;
  }
  // Walks a value nobody reads, so garbage (NaN, bad numbers) inside it is
  // still reported.
  void Validate(od::value& v, int depth, std::string_view tensor, std::string_view field) {
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
      case od::json_type::array: {
        od::array a;
        Check(v.get_array().get(a));
        for (auto item : a) {
          od::value c;
          Check(item.get(c));
          Validate(c, depth + 1, tensor, field);
        }
        break;
      }
      case od::json_type::object: {
        od::object o;
        Check(v.get_object().get(o));
        KeySet keys;
        for (auto f : o) {
          od::field fld;
          Check(std::move(f).get(fld));
          const uint64_t key_off = Off(fld.key().raw()) - 1;
          std::string_view k;
          Check(KeyText(fld, &k));
          CheckDuplicate(&keys, k, key_off, tensor);
          od::value c = fld.value();
          Validate(c, depth + 1, tensor, field);
        }
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

  // ---- objects ----------------------------------------------------------------
  // The keys of one object so far. Inline storage: entries have ~5 keys, and
  // a heap vector per entry was 3 allocations in a 200k-entry file.
  struct KeySet {
    struct Key {  // no initializers: the inline array is not zeroed per entry
      const char* data;
      size_t size;
      uint64_t offset;
      std::string_view view() const { return {data, size}; }
    };
    static constexpr size_t kInline = 8;
    Key first[kInline];
    size_t count = 0;
    std::vector<Key> more;
    const Key* Seen(std::string_view key) const {
      for (size_t i = 0; i < count && i < kInline; ++i)
        if (first[i].view() == key) return &first[i];
      for (const Key& k : more)
        if (k.view() == key) return &k;
      return nullptr;
    }
    void Add(std::string_view key, uint64_t offset) {
      const Key k{key.data(), key.size(), offset};
      if (count < kInline) {
        first[count] = k;
      } else {
        more.push_back(k);
      }
      ++count;
    }
  };
  // False (and reported) if `key` was seen in this object.
  bool CheckDuplicate(KeySet* set, std::string_view key, uint64_t offset, std::string_view tensor) {
    if (const auto* seen = set->Seen(key)) {
      auto [l, c] = src_->Locate(seen->offset);
      Add(Severity::kError, "json-duplicate-key", offset, tensor, key,
          "duplicate key '{}' (first at line {}, column {}): JSON readers disagree on which one wins "
          "(simdjson keeps the first, Python the last), so the file is ambiguous",
          key, l, c);
      return false;
    }
    set->Add(key, offset);
    return true;
  }
  void UnknownKey(std::string_view key, uint64_t offset, std::string_view tensor, od::value& v, const char* known) {
    Add(Severity::kWarning, "unknown-key", offset, tensor, key, "unknown key '{}' ignored (known keys: {})", key,
        known);
    Validate(v, 1, tensor, key);
  }

  // ---- the formats ----------------------------------------------------------
  void ReadTopObject();
  void ReadV2List(od::value& v);
  void ReadV2Entry(od::value& v);
  void ReadLegacySection(od::value& v, Section section);
  void ReadLegacyEntry(std::string name, uint64_t key_offset, od::value& v, Section section);
  void ReadV1Section(od::value& v, Section section);
  void ReadV1Entry(od::value& v, Section section);
  void AddEntry(Entry e, size_t errors_before);
  void RemoveDuplicates();

  // Scales: finite, > 0, normal float32. `what` names the JSON field.
  bool CheckScales(const Nums& n, const std::string& tensor, const char* what);
  // Zero points / offsets: integral (unless allowed), within int32.
  bool CheckIntegral(const Nums& n, const std::string& tensor, const char* what);
  uint64_t ElementOffset(uint64_t array_offset, size_t index) const;
  // Converts an unsigned-grid offset (0.6.1 / 1.0.0) to the IR: dtype,
  // offset and symmetry. False (reported) if it cannot be represented.
  struct GridValue {
    DType dtype;
    int32_t offset;
    Symmetry symmetry;
  };
  bool FromUnsignedGrid(int64_t offset_u, bool symmetric, uint32_t bw, const std::string& tensor, const char* field,
                        uint64_t off, GridValue* out);

  std::shared_ptr<SourceText> src_;
  const char* base_;
  std::string name_;
  ReadOptions opt_;
  Diags* diags_;
  size_t errors_ = 0;
  std::string fatal_;
  std::unique_ptr<od::parser> own_parser_;
  od::parser* parser_ = nullptr;
  od::document doc_;
  File file_;
  Nums nums_[6];  // per-entry field buffers, reused (large y_scale arrays would otherwise be reallocated)
  NumberArrayScan scan_;  // the fast path's buffers, swapped with a Nums' on success
};

uint64_t Reader::ElementOffset(uint64_t array_offset, size_t index) const {
  if (array_offset == Diag::kNoOffset) return array_offset;
  const char* p = base_ + array_offset;
  const char* end = base_ + src_->size();
  if (p >= end || *p != '[') return array_offset;
  size_t leaf = 0;
  int depth = 0;
  for (; p < end; ++p) {
    const char c = *p;
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (--depth == 0) break;
    } else if (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      continue;
    } else {
      if (leaf == index) return static_cast<uint64_t>(p - base_);
      ++leaf;
      while (p + 1 < end && !std::strchr(",] \t\r\n", p[1])) ++p;
    }
  }
  return array_offset;
}

bool Reader::CheckScales(const Nums& n, const std::string& tensor, const char* what) {
  for (size_t i = 0; i < n.values.size(); ++i) {
    const double s = n.values[i];
    const char* problem = nullptr;
    if (!std::isfinite(s)) problem = "is not finite";
    else if (!(s > 0)) problem = "must be > 0";
    else if (s > FLT_MAX) problem = "does not fit a float32";
    else if (s < FLT_MIN) problem = "is below the smallest normal float32 (1.18e-38): 1/scale would overflow";
    if (problem) {
      const std::string field = n.scalar ? std::string(what) : fmt::format("{}[{}]", what, i);
      Add(Severity::kError, "value-range", ElementOffset(n.offset, i), tensor, field, "scale {} {}", s, problem);
      return false;
    }
  }
  return true;
}

bool Reader::CheckIntegral(const Nums& n, const std::string& tensor, const char* what) {
  for (size_t i = 0; i < n.values.size(); ++i) {
    const double v = n.values[i];
    if (!IsIntegral(v) || v < INT32_MIN || v > INT32_MAX) {
      const std::string field = n.scalar ? std::string(what) : fmt::format("{}[{}]", what, i);
      Add(Severity::kError, "value-range", ElementOffset(n.offset, i), tensor, field,
          "{} must be an integer in the int32 range", v);
      return false;
    }
  }
  return true;
}

bool Reader::FromUnsignedGrid(int64_t offset_u, bool symmetric, uint32_t bw, const std::string& tensor,
                              const char* field, uint64_t off, GridValue* out) {
  const int64_t half = int64_t{1} << (bw - 1);
  const int64_t steps = (int64_t{1} << bw) - 1;
  if (symmetric) {
    if (offset_u == -half) {
      *out = {*FixedPointDType(true, bw), 0, Symmetry::kSymmetric};
      return true;
    }
    if (offset_u == -(half - 1)) {
      *out = {*FixedPointDType(true, bw), 0, Symmetry::kStrictSymmetric};
      return true;
    }
    if (offset_u == 0) {
      *out = {*FixedPointDType(false, bw), 0, Symmetry::kUnsignedSymmetric};
      return true;
    }
    Add(Severity::kWarning, "symmetry", off, tensor, field,
        "symmetric encoding with offset {}: a {}-bit symmetric grid has offset {} (or {} if strict, 0 if "
        "unsigned); read as asymmetric",
        offset_u, bw, -half, -(half - 1));
  }
  if (offset_u > 0 || offset_u < -steps) {
    Add(Severity::kError, "value-range", off, tensor, field,
        "offset {} is outside [-{}, 0]: offsets of this format are on the unsigned {}-bit grid", offset_u, steps, bw);
    return false;
  }
  *out = {*FixedPointDType(false, bw), static_cast<int32_t>(offset_u), Symmetry::kAsymmetric};
  return true;
}

void Reader::RemoveDuplicates() {
  auto& entries = file_.entries;
  NameIndex first;
  first.reserve(entries.size());
  const auto name_of = [&](uint32_t i) -> const std::string& { return entries[i].name; };
  std::vector<bool> drop(entries.size(), false);
  bool any = false;
  std::vector<uint32_t> hashes(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) hashes[i] = NameIndex::Hash(entries[i].name);
  constexpr size_t kAhead = 16;  // prefetch distance: the slots are random accesses
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i + kAhead < entries.size()) first.Prefetch(hashes[i + kAhead]);
    const uint32_t kept = first.InsertHashed(entries[i].name, hashes[i], static_cast<uint32_t>(i), name_of);
    if (kept == i) continue;
    auto [l, c] = src_->Locate(entries[kept].offset);
    Add(Severity::kError, "duplicate-entry", entries[i].offset, entries[i].name, "name",
        "a second entry for this tensor (the first is at line {}, column {}); which one should win is ambiguous", l,
        c);
    drop[i] = any = true;
  }
  if (!any) return;
  size_t out = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (drop[i]) continue;
    // Never self-move: `v = std::move(v)` empties a std::vector (the kept
    // first entry lost its scales; found by fuzz_encodings).
    if (out != i) entries[out] = std::move(entries[i]);
    ++out;
  }
  entries.resize(out);
}

void Reader::AddEntry(Entry e, size_t errors_before) {
  if (errors_ != errors_before) return;  // reported; the entry is dropped
  // Checks that need no tensor: value ranges, counts, LPBQ scale range.
  Diagnostics ir;
  const bool blocked = e.encoding.kind == EncodingKind::kPerBlock || e.encoding.kind == EncodingKind::kLpbq;
  if (blocked && e.encoding.block_sizes.empty()) {
    e.encoding.block_sizes = {1};  // settled against the tensor shape when applied
    ValidateEncoding(e.encoding, e.name, Shape(), kInvalidId, &ir);
    e.encoding.block_sizes.clear();
  } else {
    ValidateEncoding(e.encoding, e.name, Shape(), kInvalidId, &ir);
  }
  for (const Diagnostic& d : ir) {
    std::string msg = d.message;
    const std::string prefix = fmt::format("tensor '{}': encoding field '{}': ", e.name, d.field);
    if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
    Add(Severity::kError, "invalid-encoding", e.FieldOffset(d.field), e.name, e.JsonField(d.field), "{}", msg);
  }
  if (errors_ != errors_before) return;
  file_.entries.push_back(std::move(e));
}

// ---------------------------------------------------------------------------
// QAIRT 2.0.0
// ---------------------------------------------------------------------------

void Reader::ReadV2List(od::value& v) {
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::array) {
    WrongType(v, "", "encodings", "an array of encoding objects");
    return;
  }
  od::array arr;
  Check(v.get_array().get(arr));
  for (auto item : arr) {
    od::value e;
    Check(item.get(e));
    ReadV2Entry(e);
  }
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

void Reader::ReadV2Entry(od::value& v) {
  const uint64_t entry_off = Off(v);
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::object) {
    WrongType(v, "", "encodings[]", "an encoding object {\"name\": ..., \"output_dtype\": ...}");
    return;
  }
  const size_t errors_before = errors_;
  od::object obj;
  Check(v.get_object().get(obj));
  Entry e;
  e.offset = entry_off;
  std::string dtype_name, index_tensor;
  uint64_t dtype_off = entry_off;
  Nums &y_scale = nums_[0], &y_zp = nums_[1], &pcfs = nums_[2], &pbis = nums_[3], &offset_field = nums_[4],
       &block_size = nums_[5];
  for (Nums& n : nums_) Reset(&n);
  std::optional<int64_t> axis;
  bool has_name = false, has_dtype = false, has_index = false;
  size_t fields = 0;
  KeySet keys;
  static const char* kKnown =
      "name, output_dtype, y_scale, y_zero_point, axis, block_size, per_channel_float_scale, per_block_int_scale, "
      "index_tensor";
  for (auto f : obj) {
    od::field fld;
    Check(std::move(f).get(fld));
    const uint64_t key_off = Off(fld.key().raw()) - 1;  // before unescaping, which consumes the raw key
    std::string_view key;
    Check(KeyText(fld, &key));  // the opening quote
    od::value val = fld.value();
    ++fields;
    if (!CheckDuplicate(&keys, key, key_off, e.name)) continue;
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
  }
  if (errors_ != errors_before) return;
  if (!has_name) {
    Add(Severity::kError, "missing-field", entry_off, "", "name", "entry has no \"name\": it cannot be matched to a tensor");
    return;
  }
  const std::string& tn = e.name;
  auto offset_of = [&](std::string_view k) {
    for (const auto& [key, off] : e.field_offsets)
      if (key == k) return off;
    return entry_off;
  };
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
                                    std::vector<int32_t>* offsets, std::vector<float>* float_offsets) -> bool {
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
  auto all_zero = [](const std::vector<int32_t>& vals) {
    for (int32_t x : vals)
      if (x != 0) return false;
    return true;
  };
  if (axis && (*axis < -64 || *axis > 64)) {
    Add(Severity::kError, "value-range", offset_of("axis"), tn, "axis", "axis {} is out of range", *axis);
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
    enc.offsets.assign(enc.scales.size(), 0);
    e.grid_shape = pbis.scalar ? std::vector<int64_t>{1} : pbis.shape;
    const size_t rank = e.grid_shape.size();
    if (!block_size.present) {
      Add(Severity::kError, "missing-field", entry_off, tn, "block_size", "LPBQ entry needs block_size");
      return;
    }
    if (!CheckIntegral(block_size, tn, "block_size")) return;
    if (block_size.scalar) {
      if (!axis) {
        Add(Severity::kError, "missing-field", offset_of("block_size"), tn, "axis",
            "LPBQ with a single block_size needs \"axis\" (the block axis)");
        return;
      }
      e.block_size = static_cast<int64_t>(block_size.values[0]);
    } else {
      // The specification's form: one block size per dim.
      if (block_size.values.size() != rank) {
        Add(Severity::kError, "shape-mismatch", block_size.offset, tn, "block_size",
            "has {} entries but per_block_int_scale has rank {} {}", block_size.values.size(), rank,
            ShapeString(e.grid_shape));
        return;
      }
      for (double b : block_size.values) enc.block_sizes.push_back(static_cast<int64_t>(b));
      if (!axis) axis = BlockedAxis(enc.block_sizes);
    }
    enc.axis = static_cast<int32_t>(*axis < 0 ? *axis + static_cast<int64_t>(rank) : *axis);
    if (enc.axis < 0 || static_cast<size_t>(enc.axis) >= rank) {
      Add(Severity::kError, "value-range", offset_of("axis"), tn, "axis",
          "block axis {} is out of range for a block grid of rank {}", *axis, rank);
      return;
    }
    if (e.block_size == 0 && !enc.block_sizes.empty()) e.block_size = enc.block_sizes[static_cast<size_t>(enc.axis)];
    if (e.block_size < 1) {
      Add(Severity::kError, "value-range", offset_of("block_size"), tn, "block_size", "block size {} must be >= 1",
          e.block_size);
      return;
    }
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
      Add(Severity::kError, "missing-field", offset_of("index_tensor"), tn, "index_tensor", "is empty");
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
    if (!CheckIntegral(block_size, tn, "block_size")) return;
    enc.kind = EncodingKind::kPerBlock;
    e.grid_shape = y_scale.scalar ? std::vector<int64_t>{1} : y_scale.shape;
    const size_t rank = e.grid_shape.size();
    if (block_size.scalar) {
      if (!axis) {
        Add(Severity::kError, "missing-field", offset_of("block_size"), tn, "axis",
            "blockwise entry needs \"axis\" (the axis along which blocks of block_size run)");
        return;
      }
      e.block_size = static_cast<int64_t>(block_size.values[0]);
    } else {
      if (block_size.values.size() != rank) {
        Add(Severity::kError, "shape-mismatch", block_size.offset, tn, "block_size",
            "has {} entries but y_scale has rank {} {}", block_size.values.size(), rank, ShapeString(e.grid_shape));
        return;
      }
      for (double b : block_size.values) enc.block_sizes.push_back(static_cast<int64_t>(b));
      if (!axis) axis = BlockedAxis(enc.block_sizes);
    }
    enc.axis = static_cast<int32_t>(*axis < 0 ? *axis + static_cast<int64_t>(rank) : *axis);
    if (enc.axis < 0 || static_cast<size_t>(enc.axis) >= rank) {
      Add(Severity::kError, "value-range", offset_of("axis"), tn, "axis",
          "block axis {} is out of range for y_scale of shape {}", *axis, ShapeString(e.grid_shape));
      return;
    }
    if (e.block_size == 0) e.block_size = enc.block_sizes[static_cast<size_t>(enc.axis)];
    if (e.block_size < 1) {
      Add(Severity::kError, "value-range", offset_of("block_size"), tn, "block_size", "block size {} must be >= 1",
          e.block_size);
      return;
    }
    enc.scales.assign(y_scale.values.begin(), y_scale.values.end());  // double -> float
    if (y_zp.present) {
      if (y_zp.scalar && y_scale.values.size() != 1) return;  // reported above
      if (!zero_points_to_offsets(y_zp, "y_zero_point", true, &enc.offsets, &enc.float_offsets)) return;
    }
    enc.symmetry = is_signed && enc.float_offsets.empty() && all_zero(enc.offsets) ? Symmetry::kSymmetric
                                                                                   : Symmetry::kAsymmetric;
    if (enc.float_offsets.empty() && all_zero(enc.offsets)) enc.offsets.assign(enc.scales.size(), 0);
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
    enc.offsets.assign(enc.scales.size(), 0);
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

// ---------------------------------------------------------------------------
// AIMET legacy 0.4 / 0.5 / 0.6.1
// ---------------------------------------------------------------------------

void Reader::ReadLegacySection(od::value& v, Section section) {
  const char* sname = section == Section::kParam ? "param_encodings" : "activation_encodings";
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::object) {
    WrongType(v, "", sname,
              t == od::json_type::array ? "an object {tensor name: [encodings]} (a list is the 1.0.0 format: set "
                                          "\"version\": \"1.0.0\")"
                                        : "an object {tensor name: [encodings]}");
    return;
  }
  od::object obj;
  Check(v.get_object().get(obj));
  for (auto f : obj) {
    od::field fld;
    Check(std::move(f).get(fld));
    const uint64_t key_off = Off(fld.key().raw()) - 1;  // before unescaping, which consumes the raw key
    std::string_view key;
    Check(KeyText(fld, &key));
    od::value val = fld.value();
    ReadLegacyEntry(std::string(key), key_off, val, section);
  }
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
  od::array arr;
  Check(v.get_array().get(arr));
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
  for (auto it : arr) {
    od::value ev;
    Check(it.get(ev));
    const std::string prefix = fmt::format("[{}]", index++);
    Item item;
    item.off = Off(ev);
    od::json_type et;
    if (ev.type().get(et) || et != od::json_type::object) {
      WrongType(ev, tn, prefix, "an encoding object {\"bitwidth\": ..., \"scale\": ..., ...}");
      continue;
    }
    od::object o;
    Check(ev.get_object().get(o));
    KeySet keys;
    for (auto f : o) {
      od::field fld;
      Check(std::move(f).get(fld));
      const uint64_t key_off = Off(fld.key().raw()) - 1;
      std::string_view key;
      Check(KeyText(fld, &key));
      od::value val = fld.value();
      const std::string field = prefix + "." + std::string(key);
      if (!CheckDuplicate(&keys, key, key_off, tn)) continue;
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
    }
    items.push_back(std::move(item));
  }
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

// ---------------------------------------------------------------------------
// AIMET 1.0.0
// ---------------------------------------------------------------------------

void Reader::ReadV1Section(od::value& v, Section section) {
  const char* sname = section == Section::kParam ? "param_encodings" : "activation_encodings";
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::array) {
    WrongType(v, "", sname,
              t == od::json_type::object ? "a list of encodings (an object {name: [...]} is the 0.6.1 format)"
                                         : "a list of encodings");
    return;
  }
  od::array arr;
  Check(v.get_array().get(arr));
  for (auto item : arr) {
    od::value e;
    Check(item.get(e));
    ReadV1Entry(e, section);
  }
}

void Reader::ReadV1Entry(od::value& v, Section section) {
  const uint64_t entry_off = Off(v);
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::object) {
    WrongType(v, "", "", "an encoding object {\"name\": ..., \"enc_type\": ..., ...}");
    return;
  }
  const size_t errors_before = errors_;
  od::object obj;
  Check(v.get_object().get(obj));
  Entry e;
  e.offset = entry_off;
  e.section = section;
  std::string enc_type, dtype;
  int64_t bw = -1, compressed_bw = -1, block_size = -1;
  bool has_sym = false, sym = false, has_name = false;
  Nums &scale = nums_[0], &offset = nums_[1], &pbis = nums_[2], &zps = nums_[3];
  for (Nums& n : nums_) Reset(&n);
  KeySet keys;
  static const char* kKnown =
      "name, enc_type, dtype, bw, is_sym, scale, offset, block_size, compressed_bw, per_block_int_scale, "
      "zero_point_shift";
  for (auto f : obj) {
    od::field fld;
    Check(std::move(f).get(fld));
    const uint64_t key_off = Off(fld.key().raw()) - 1;  // before unescaping, which consumes the raw key
    std::string_view key;
    Check(KeyText(fld, &key));
    od::value val = fld.value();
    if (!CheckDuplicate(&keys, key, key_off, e.name)) continue;
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
  }
  if (errors_ != errors_before) return;
  auto offset_of = [&](std::string_view k) {
    for (const auto& [key, off] : e.field_offsets)
      if (key == k) return off;
    return entry_off;
  };
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
      Add(Severity::kError, "value-range", offset_of("bw"), tn, "bw", "a FLOAT encoding has bw 16 or 32, got {}", bw);
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
    Add(Severity::kError, dtype.empty() ? "missing-field" : "value-range", offset_of("dtype"), tn, "dtype",
        "dtype must be \"INT\" or \"FLOAT\", got \"{}\"", dtype);
    return;
  }
  if (bw != 2 && bw != 4 && bw != 8 && bw != 16 && bw != 32) {
    Add(Severity::kError, "value-range", offset_of("bw"), tn, "bw", "bw {} is not supported: expected 4, 8, 16 or 32",
        bw);
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
      Add(Severity::kError, block_size < 0 ? "missing-field" : "value-range", offset_of("block_size"), tn,
          "block_size", "a {} entry needs block_size >= 1", enc_type);
      return;
    }
    e.block_size = block_size;
  } else if (enc_type == "VECTOR") {
    Add(Severity::kError, "unsupported", offset_of("enc_type"), tn, "enc_type",
        "VECTOR (vector quantization) encodings are not supported");
    return;
  } else {
    Add(Severity::kError, enc_type.empty() ? "missing-field" : "value-range", offset_of("enc_type"), tn, "enc_type",
        "enc_type must be PER_TENSOR, PER_CHANNEL, PER_BLOCK or LPBQ, got \"{}\"", enc_type);
    return;
  }
  if (offset.values.size() != n && !(offset.values.size() == 1 && lpbq)) {
    Add(Severity::kError, "shape-mismatch", offset.offset, tn, "offset", "has {} values but scale has {}",
        offset.values.size(), n);
    return;
  }
  if (lpbq) {
    if (!sym) {
      Add(Severity::kError, "invalid-encoding", offset_of("is_sym"), tn, "is_sym", "LPBQ encodings are symmetric");
      return;
    }
    if (compressed_bw < 1 || compressed_bw >= bw ||
        (compressed_bw != 2 && compressed_bw != 4 && compressed_bw != 8 && compressed_bw != 16)) {
      Add(Severity::kError, compressed_bw < 0 ? "missing-field" : "value-range", offset_of("compressed_bw"), tn,
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
    enc.offsets.assign(enc.scales.size(), 0);
    AddEntry(std::move(e), errors_before);
    return;
  }
  if (pbis.present || compressed_bw >= 0) {
    Add(Severity::kError, "invalid-encoding", pbis.present ? pbis.offset : offset_of("compressed_bw"), tn,
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

// ---------------------------------------------------------------------------
// Top level
// ---------------------------------------------------------------------------

void Reader::ReadTopObject() {
  // Pass 1: the keys and "version" (AIMET sorts keys, so "version" often
  // comes last); the values are skipped.
  od::object obj;
  Check(doc_.get_object().get(obj));
  KeySet keys;
  std::string version;
  uint64_t version_off = Diag::kNoOffset;
  bool has_encodings = false, has_sections = false, sections_are_lists = false, sections_are_objects = false;
  for (auto f : obj) {
    od::field fld;
    Check(std::move(f).get(fld));
    const uint64_t key_off = Off(fld.key().raw()) - 1;  // before unescaping, which consumes the raw key
    std::string_view key;
    Check(KeyText(fld, &key));
    CheckDuplicate(&keys, key, key_off, "");
    od::value val = fld.value();
    if (key == "version") {
      version_off = Off(val);
      GetString(val, "", "version", &version);
    } else if (key == "encodings") {
      has_encodings = true;
    } else if (key == "activation_encodings" || key == "param_encodings") {
      has_sections = true;
      od::json_type t;
      if (!val.type().get(t)) {
        sections_are_lists |= t == od::json_type::array;
        sections_are_objects |= t == od::json_type::object;
      }
    }
  }
  if (errors_) return;  // duplicate top-level keys or a bad version: nothing is trustworthy
  Version detected = Version::kAuto;
  if (!version.empty()) {
    auto v = VersionFromName(version);
    if (!v || *v == Version::kAuto) {
      Add(Severity::kError, "version", version_off, "", "version",
          "unsupported version \"{}\": expected 0.4.0, 0.5.0, 0.6.1, 1.0.0 or 2.0.0", version);
      return;
    }
    detected = *v;
  } else if (has_encodings) {
    detected = Version::kV2_0_0;
    Add(Severity::kWarning, "version", 0, "", "version",
        "no \"version\": read as 2.0.0 because of the \"encodings\" list (QAIRT falls back to the legacy format "
        "without it)");
  } else if (has_sections) {
    detected = sections_are_lists && !sections_are_objects ? Version::kV1_0_0 : Version::kV0_6_1;
    if (detected == Version::kV1_0_0)
      Add(Severity::kWarning, "version", 0, "", "version", "no \"version\": read as 1.0.0 (the sections are lists)");
  } else {
    Add(Severity::kError, "version", 0, "", "",
        "not an encodings file: expected {{\"version\": \"2.0.0\", \"encodings\": [...]}} or "
        "\"activation_encodings\"/\"param_encodings\" (AIMET)");
    return;
  }
  Version use = detected;
  if (opt_.version != Version::kAuto) {
    use = opt_.version;
    if (use != detected)
      Add(Severity::kWarning, "version", version_off == Diag::kNoOffset ? 0 : version_off, "", "version",
          "read as {} as requested, although the file looks like {}", VersionName(use), VersionName(detected));
  }
  file_.version = use;
  file_.version_string = version;

  // Pass 2: the entries.
  doc_.rewind();
  Check(doc_.get_object().get(obj));
  for (auto f : obj) {
    od::field fld;
    Check(std::move(f).get(fld));
    const uint64_t key_off = Off(fld.key().raw()) - 1;  // before unescaping, which consumes the raw key
    std::string_view key;
    Check(KeyText(fld, &key));
    od::value val = fld.value();
    if (key == "version") continue;
    if (use == Version::kV2_0_0) {
      if (key == "encodings") {
        ReadV2List(val);
      } else if (key == "quantizer_args" || key == "excluded_layers" || key == "producer") {
        Validate(val, 1, "", key);
      } else {
        UnknownKey(key, key_off, "", val, "version, encodings, quantizer_args");
      }
    } else {
      const bool v1 = use == Version::kV1_0_0;
      if (key == "activation_encodings" || key == "param_encodings") {
        const Section s = key == "param_encodings" ? Section::kParam : Section::kActivation;
        if (v1) ReadV1Section(val, s);
        else ReadLegacySection(val, s);
      } else if (key == "quantizer_args" || key == "excluded_layers" || key == "producer") {
        Validate(val, 1, "", key);
      } else {
        UnknownKey(key, key_off, "", val,
                   "version, activation_encodings, param_encodings, quantizer_args, excluded_layers");
      }
    }
  }
}

Result<File> Reader::Run() {
  file_.path = name_;
  const size_t size = src_->size();
  auto fail = [&](const char* code, std::string msg) -> Status {
    Add(Severity::kError, code, size ? 0 : Diag::kNoOffset, "", "", "{}", msg);
    return Status(StatusCode::kParseError, fmt::format("{}: {}", name_, msg));
  };
  if (size == 0) return fail("json-syntax", "empty file: expected a JSON encodings document");
  if (size > opt_.max_bytes)
    return fail("file-size", fmt::format("file is {} bytes, above the limit of {} bytes", size, opt_.max_bytes));
  const auto* u = reinterpret_cast<const unsigned char*>(base_);
  if (size >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
    return fail("file-encoding",
                "file starts with a UTF-8 byte order mark, which JSON forbids (RFC 8259 §8.1; Python's json rejects "
                "it too): save the file without BOM");
  if (size >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF) || u[0] == 0 ||
                    (size >= 2 && u[1] == 0)))
    return fail("file-encoding", "file is UTF-16 or binary: JSON encodings files must be UTF-8");

  // Room for the entries up front: an LLM file has ~200k of them, and growing
  // the vector moves every Entry ~log2(n) times. ~512 bytes per entry is a
  // mid estimate (an activation takes ~120, a blocked weight ~400k).
  file_.entries.reserve(std::min<size_t>(size / 512 + 16, size_t{1} << 22));

  // One parser per thread is reused for files up to 256 MiB (its buffers are
  // ~5x the largest file read); bigger files get their own.
  constexpr size_t kReuseLimit = size_t{256} << 20;
  if (size <= kReuseLimit) {
    static thread_local od::parser tl_parser;
    parser_ = &tl_parser;
  } else {
    own_parser_ = std::make_unique<od::parser>();
    parser_ = own_parser_.get();
  }
  // simdjson's own depth limit sits above ours so that the reader's check
  // (a diagnostic) always fires first: on-demand iteration *assumes* it never
  // reaches the parser's max_depth (an assertion in debug builds, undefined
  // behaviour in release ones).
  constexpr size_t kSimdjsonDepthMargin = 8;
  const size_t parser_depth = opt_.max_depth + kSimdjsonDepthMargin;
  error_code e = simdjson::SUCCESS;
  if (parser_->capacity() < size || parser_->max_depth() != parser_depth)
    e = parser_->allocate(std::max<size_t>(size, 4096), parser_depth);
  if (e) return fail("file-size", fmt::format("cannot allocate the JSON parser: {}", simdjson::error_message(e)));
  e = parser_->iterate(src_->data(), size, size + SourceText::kPadding).get(doc_);
  if (e) {
    if (e == simdjson::UTF8_ERROR) {
      // Locate the first invalid byte for the message.
      size_t i = 0;
      while (i < size) {
        const unsigned char c = u[i];
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = n != 0 && i + n <= size;
        for (size_t k = 1; ok && k < n; ++k) ok = (u[i + k] & 0xC0) == 0x80;
        if (!ok) break;
        i += n;
      }
      Add(Severity::kError, "file-encoding", i, "", "", "invalid UTF-8 byte 0x{:02X}", i < size ? u[i] : 0);
      return Status(StatusCode::kParseError,
                    fmt::format("{}: invalid UTF-8 at byte {}", name_, i));
    }
    if (e == simdjson::DEPTH_ERROR)
      return fail("json-depth", fmt::format("JSON nested deeper than {} levels", opt_.max_depth));
    return fail("json-syntax", fmt::format("invalid JSON: {}", simdjson::error_message(e)));
  }
  try {
    od::json_type t;
    Check(doc_.type().get(t));
    if (t == od::json_type::array) {
      file_.version = opt_.version == Version::kAuto ? Version::kV2_0_0 : opt_.version;
      file_.bare_list = true;
      if (file_.version != Version::kV2_0_0) {
        Add(Severity::kError, "version", 0, "", "",
            "a top-level list is the 2.0.0 format (without wrapper), not {}", VersionName(file_.version));
      } else {
        od::array arr;
        Check(doc_.get_array().get(arr));
        for (auto item : arr) {
          od::value ev;
          Check(item.get(ev));
          ReadV2Entry(ev);
        }
      }
    } else if (t == od::json_type::object) {
      ReadTopObject();
    } else {
      Add(Severity::kError, "wrong-type", 0, "", "", "the document must be a JSON object or array");
    }
    const char* rest = nullptr;
    if (errors_ == 0 && !doc_.current_location().get(rest) && rest) {
      const uint64_t off = Off(rest);
      Add(Severity::kError, "json-syntax", off, "", "", "unexpected content after the JSON document");
    }
  } catch (const ParseAbort&) {
    return Status(StatusCode::kParseError, fatal_);
  }
  RemoveDuplicates();
  if (errors_ && !opt_.keep_going) {
    std::string msg = fmt::format("{}: {} error{} in the encodings file", name_, errors_, errors_ > 1 ? "s" : "");
    size_t shown = 0;
    for (const Diag& d : *diags_)
      if (d.severity == Severity::kError && shown++ < 5) msg += "\n  " + d.Format();
    return Status(StatusCode::kParseError, msg);
  }
  file_.source = src_;
  return std::move(file_);
}

}  // namespace

Result<File> ReadEncodingsBytes(const void* data, size_t size, const std::string& display_name,
                                const ReadOptions& options, Diags* diags) {
  Diags local;
  if (!diags) diags = &local;
  if (!data && size) return InvalidArgument("encodings buffer is NULL");
  if (size > options.max_bytes) {
    Diag d;
    d.code = "file-size";
    d.file = display_name;
    d.message = fmt::format("buffer is {} bytes, above the limit of {} bytes", size, options.max_bytes);
    diags->push_back(d);
    return Status(StatusCode::kParseError, fmt::format("{}: {}", display_name, d.message));
  }
  auto src = std::make_shared<SourceText>(size);
  if (size) std::memcpy(src->mutable_data(), data, size);
  Reader r(std::move(src), display_name, options, diags);
  return r.Run();
}

Result<File> ReadEncodingsFile(const std::string& path, const ReadOptions& options, Diags* diags) {
  Diags local;
  if (!diags) diags = &local;
  auto io_error = [&](std::string msg) -> Status {
    Diag d;
    d.code = "io";
    d.file = path;
    d.message = msg;
    diags->push_back(d);
    return Status(StatusCode::kIoError, fmt::format("{}: {}", path, msg));
  };
  // O_NONBLOCK: a FIFO is refused below instead of blocking in open().
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return io_error(fmt::format("cannot open: {}", std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return io_error("not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > options.max_bytes) {
    Diag d;
    d.code = "file-size";
    d.file = path;
    d.message = fmt::format("file is {} bytes, above the limit of {} bytes", size, options.max_bytes);
    diags->push_back(d);
    return Status(StatusCode::kParseError, fmt::format("{}: {}", path, d.message));
  }
  auto src = std::make_shared<SourceText>(static_cast<size_t>(size));
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, src->mutable_data() + done, static_cast<size_t>(size) - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return io_error("short read (was the file changed while reading?)");
    done += static_cast<size_t>(n);
  }
  Reader r(std::move(src), path, options, diags);
  return r.Run();
}

}  // namespace qairt::encodings
