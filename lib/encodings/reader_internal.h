// The encodings reader's internals, shared by its files: reader.cpp (entry
// points, dialect detection), reader_json.cpp (typed JSON values),
// reader_checks.cpp (value checks and the entry list, common to every
// dialect) and one file per dialect: reader_v2.cpp (QAIRT 2.0.0),
// reader_aimet_v1.cpp (AIMET 1.0.0), reader_legacy.cpp (AIMET 0.4 / 0.5 /
// 0.6.1). Not part of any API.
#pragma once

#include <fmt/format.h>
#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "encodings/encodings.h"
#include "encodings/list_layout.h"
#include "encodings/number_array_scan.h"

namespace qairt::encodings::reader_internal {

namespace od = simdjson::ondemand;
using simdjson::error_code;

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

bool IsIntegral(double v);

// Where the value of the entry's `key` starts, or the entry itself when it
// has no such key: a diagnostic about a missing or defaulted field points at
// the entry.
inline uint64_t ValueOffset(const Entry& e, std::string_view key) {
  for (const auto& [k, off] : e.field_offsets)
    if (k == key) return off;
  return e.offset;
}

// The JSON key of an AIMET section.
inline const char* SectionKey(Section section) {
  return section == Section::kParam ? "param_encodings" : "activation_encodings";
}

struct ParseAbort {};  // internal: a structural error ended the parse

// The bytes simdjson iterates and where they sit in the file: the whole file;
// the file with its list's entries cut out (the skeleton of a windowed read);
// or a window of entries copied behind a '['. Diagnostics always carry file
// offsets.
struct View {
  const char* data = nullptr;
  size_t size = 0;
  uint64_t file_begin = 0;   // file offset of data[0]
  size_t gap_at = SIZE_MAX;  // from this index on, file offsets skip gap_len bytes
  uint64_t gap_len = 0;
  uint64_t ToFile(const char* p) const {
    if (!p || p < data || p > data + size) return Diag::kNoOffset;
    const auto i = static_cast<size_t>(p - data);
    return file_begin + i + (i >= gap_at ? gap_len : 0);
  }
  const char* ToPtr(uint64_t offset) const {
    if (offset == Diag::kNoOffset || offset < file_begin) return nullptr;
    uint64_t i = offset - file_begin;
    if (i >= gap_at) {
      if (i < gap_at + gap_len) return nullptr;  // inside the cut
      i -= gap_len;
    }
    return i <= size ? data + i : nullptr;
  }
};

// Takes a windowed read's entries window by window instead of the File
// (ReadAndApplyEncodingsFile applies them as they are read).
class WindowSink {
 public:
  virtual ~WindowSink() = default;
  // Before any window, on the reading thread: how many windows the list has
  // and the text they are read from (for locating diagnostics).
  virtual void Begin(size_t windows, const std::shared_ptr<const SourceText>& source) = 0;
  // A window's entries, read without errors, in file order. Called once per
  // window from worker threads (windows in any order, several at once); may
  // move from the entries. False fails the windowed read (the caller then
  // reads the file whole).
  virtual bool Take(size_t window, std::span<Entry> entries) = 0;
};

class Reader {
 public:
  Reader(std::shared_ptr<SourceText> src, std::string name, const ReadOptions& options, Diags* diags)
      : src_(std::move(src)), name_(std::move(name)), opt_(options), diags_(diags) {
    view_.data = src_->data();
    view_.size = src_->size();
  }

  // Reads the text: window by window when it is a large 2.0.0 list
  // (RunWindowed), otherwise, or if that fails, whole.
  Result<File> Run();
  // Whether a text of `size` bytes is read window by window first.
  static bool WindowedCandidate(uint64_t size, const ReadOptions& opt);
  // The windowed read, or nullopt (no diagnostics added) when the text is
  // not read that way and must be read whole (RunWhole, which needs a padded
  // text). Problems with the file as a whole (empty, too large, a byte order
  // mark) are its result.
  // With a sink, the list's entries go to it instead of the File, which
  // then holds what is outside the list.
  std::optional<Result<File>> RunWindowed(WindowSink* sink = nullptr);

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
  uint64_t Off(const char* p) const { return view_.ToFile(p); }
  const char* Ptr(uint64_t offset) const { return view_.ToPtr(offset); }
  uint64_t Off(od::value& v) {
    std::string_view tok = v.raw_json_token();
    return Off(tok.data());
  }
  // A structural error: record it and unwind to Run().
  [[noreturn]] void Fatal(error_code e, uint64_t offset);
  uint64_t DocLocation();
  void Check(error_code e) {
    if (e) Fatal(e, DocLocation());
  }
  // Reports a value that is not what `expected` says; NaN/Infinity literals
  // get their own message. Returns false.
  bool WrongType(od::value& v, std::string_view tensor, std::string_view field, const char* expected);

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

  // ---- typed getters (false = reported; reader_json.cpp) ----------------------
  bool GetString(od::value& v, std::string_view tensor, std::string_view field, std::string* out);
  bool GetInt(od::value& v, std::string_view tensor, std::string_view field, int64_t* out);
  bool GetBoolish(od::value& v, std::string_view tensor, std::string_view field, bool* out);
  bool GetNumber(od::value& v, std::string_view tensor, std::string_view field, double* out);
  static void Reset(Nums* n) {  // keeps the buffers' capacity
    n->present = n->scalar = n->any_float_literal = n->literal_kind = false;
    n->ok = true;
    n->shape.clear();
    n->values.clear();
    n->offset = Diag::kNoOffset;
  }
  // A number or a rectangular nested array of numbers (rank <= max_rank).
  bool GetNums(od::value& v, std::string_view tensor, std::string_view field, Nums* out,
               bool literal_kind = false);
  bool ReadNumber(od::value& v, std::string_view tensor, std::string_view field, Nums* out);
  bool ReadArray(od::value& v, int depth, std::vector<int64_t>* dims, int* leaf_depth, std::string_view tensor,
                 std::string_view field, Nums* out);
  bool Ragged(od::value& v, std::string_view tensor, std::string_view field, Nums* out);
  // Walks a value nobody reads, so garbage (NaN, bad numbers) inside it is
  // still reported.
  void Validate(od::value& v, int depth, std::string_view tensor, std::string_view field);

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
  void UnknownKey(std::string_view key, uint64_t offset, std::string_view tensor, od::value& v, const char* known);

  // ---- walking objects and arrays -------------------------------------------
  // The readers' loops over objects and arrays (number arrays aside: GetNums
  // has its own fast paths), so a structural error is always fatal (Check) and
  // every key is located the same way. `json` is an od::value or the
  // od::document itself.
  //
  // Calls each(item) per item of an opened od::array (Item = od::value) or
  // od::object (Item = od::field), in file order.
  template <typename Item, typename Container, typename Each>
  void ForEachItem(Container& container, Each&& each) {
    for (auto result : container) {
      Item item;
      Check(std::move(result).get(item));
      each(item);
    }
  }
  // Calls each(key, key_offset, value) per member, in file order; key_offset is
  // where the key's opening quote is.
  template <typename Json, typename Each>
  void ForEachMember(Json& json, Each&& each) {
    od::object obj;
    Check(json.get_object().get(obj));
    ForEachItem<od::field>(obj, [&](od::field& fld) {
      const uint64_t key_offset = Off(fld.key().raw()) - 1;  // before unescaping, which consumes the raw key
      std::string_view key;
      Check(KeyText(fld, &key));
      od::value value = fld.value();
      each(key, key_offset, value);
    });
  }
  // ForEachMember for the objects whose keys the reader interprets (entries):
  // a repeated key is reported against `tensor` (the name as read so far) and
  // its value skipped, so each(...) sees every key once.
  template <typename Each>
  void ForEachUniqueMember(od::value& v, const std::string& tensor, Each&& each) {
    KeySet keys;
    ForEachMember(v, [&](std::string_view key, uint64_t key_offset, od::value& value) {
      if (CheckDuplicate(&keys, key, key_offset, tensor)) each(key, key_offset, value);
    });
  }
  // Calls each(element) per array element, in file order.
  template <typename Json, typename Each>
  void ForEachElement(Json& json, Each&& each) {
    od::array arr;
    Check(json.get_array().get(arr));
    ForEachItem<od::value>(arr, each);
  }
  // True if `v` is a JSON `type`; else reports it (WrongType) and returns false.
  bool Expect(od::value& v, od::json_type type, std::string_view tensor, std::string_view field,
              const char* expected) {
    od::json_type t;
    if (!v.type().get(t) && t == type) return true;
    return WrongType(v, tensor, field, expected);
  }
  // The AIMET sections ("activation_encodings", "param_encodings") are lists
  // in 1.0.0 and objects in 0.6.1: true if `v` has the layout of the dialect
  // being read; else reports it, with `expected_other` when `v` has the other
  // dialect's layout (the file's "version" is likely wrong).
  bool ExpectSection(od::value& v, Section section, od::json_type layout, const char* expected,
                     const char* expected_other);

  // ---- the document ---------------------------------------------------------
  // The whole file in one simdjson document (reader.cpp).
  Result<File> RunWhole();
  // Reads doc_ (any dialect; reader.cpp). Throws ParseAbort.
  void ReadDocument();
  void ReadTopObject();  // the dialect dispatcher (reader.cpp)
  // A large 2.0.0 file window by window (reader_windows.cpp): the skeleton
  // (the file with its list emptied) in one document, the list's entries in
  // windows parsed on worker threads. nullopt when the result would differ
  // from RunWhole's in any way (any error, a shape the scan does not take):
  // the caller then reads the file whole, so diagnostics of bad files never
  // depend on this path.
  std::optional<Result<File>> RunSkeleton(const ListLayout& layout, WindowSink* sink);
  // Reads the cut list's entries from its windows into file_.entries, or
  // into sink_ (throws WindowsFailed when a window fails).
  void ReadWindows();
  // One window into `slots` (its entries' places in the list); false if it
  // failed or had errors.
  bool ReadWindow(const ListWindow& w, Entry* slots, Diags* diags, od::parser* parser, std::vector<char>* buf);
  size_t ParserDepth() const;

  // ---- the formats ----------------------------------------------------------
  // QAIRT 2.0.0 (reader_v2.cpp)
  void ReadV2List(od::value& v);
  void ReadV2Entry(od::value& v);
  // The blocks of a blockwise (lpbq = false) or LPBQ entry whose block grid
  // is e->grid_shape: block_size, and the block axis (`axis`, else inferred).
  // Sets e->block_size, e->encoding.block_sizes and .axis; false if reported.
  bool ReadV2Blocks(const Nums& block_size, std::optional<int64_t> axis, bool lpbq, Entry* e);
  // AIMET legacy 0.4 / 0.5 / 0.6.1 (reader_legacy.cpp)
  void ReadLegacySection(od::value& v, Section section);
  void ReadLegacyEntry(std::string name, uint64_t key_offset, od::value& v, Section section);
  // AIMET 1.0.0 (reader_aimet_v1.cpp)
  void ReadV1Section(od::value& v, Section section);
  void ReadV1Entry(od::value& v, Section section);

  // n zero offsets, shared with the entries before that had as many (the
  // tables are copy-on-write): an LLM file's symmetric blockwise weights would
  // otherwise each allocate, and fault in, a table of zeros. A few sizes are
  // kept: a model's projections alternate between them.
  CowVector<int32_t> ZeroOffsets(size_t n) {
    for (const CowVector<int32_t>& z : zeros_)
      if (z.size() == n) return z;
    if (zeros_.size() == kZeroTables) zeros_.erase(zeros_.begin());  // the oldest size
    zeros_.emplace_back(n, 0);
    return zeros_.back();
  }

  // ---- checks and the entry list, common to the formats (reader_checks.cpp) --
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
  View view_;
  std::string name_;
  ReadOptions opt_;
  Diags* diags_;
  size_t errors_ = 0;
  std::string fatal_;
  std::unique_ptr<od::parser> own_parser_;
  od::parser* parser_ = nullptr;
  od::document doc_;
  File file_;
  static constexpr size_t kZeroTables = 8;
  std::vector<CowVector<int32_t>> zeros_;
  Nums nums_[6];  // per-entry field buffers, reused (large y_scale arrays would otherwise be reallocated)
  NumberArrayScan scan_;  // the fast path's buffers, swapped with a Nums' on success
  // Windowed reads: the skeleton's layout (the list whose entries it cut),
  // whether its windows were read, and a window's entry places.
  const ListLayout* layout_ = nullptr;
  bool windows_read_ = false;
  Entry* slots_ = nullptr;
  size_t slots_filled_ = 0, slots_count_ = 0;
  WindowSink* sink_ = nullptr;
};

// ReadEncodingsFile, with the entries of a large 2.0.0 file's list handed to
// `sink` window by window when it is read that way (*streamed then true and
// the File holds what is outside the list); otherwise (*streamed false) the
// whole File, as ReadEncodingsFile reads it. A sink may have taken windows
// even then: a window failed and the file was read whole after it.
Result<File> ReadFile(const std::string& path, const ReadOptions& options, Diags* diags, WindowSink* sink,
                      bool* streamed);

}  // namespace qairt::encodings::reader_internal
