// Checks and bookkeeping common to every encodings dialect: scale and
// zero-point ranges, the unsigned-grid offsets of AIMET 0.6.1 / 1.0.0, the IR's
// own validation of each entry, and duplicate entries.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "encodings/reader_internal.h"
#include "support/name_index.h"
#include "support/shares.h"

namespace qairt::encodings::reader_internal {

bool IsIntegral(double v) { return std::isfinite(v) && std::floor(v) == v; }

uint64_t Reader::ElementOffset(uint64_t array_offset, size_t index) const {
  if (array_offset == Diag::kNoOffset) return array_offset;
  const char* p = Ptr(array_offset);
  const char* end = view_.data + view_.size;
  if (!p || p >= end || *p != '[') return array_offset;
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
      if (leaf == index) return Off(p);
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
  const size_t n = entries.size();
  const auto name_of = [&](uint32_t i) -> const std::string& { return entries[i].name; };
  // A large file's names are hashed and indexed on several threads: each
  // name goes to the partition its hash selects, so all entries of one name
  // meet in one index, in file order; the duplicates found are reported in
  // file order afterwards, as one thread would.
  const unsigned threads = n < kItemsWorthAThread ? 1u : ThreadsFor(opt_.threads, 4);
  std::vector<uint32_t> hashes(n);
  RunShares(n, ShareOf(n, threads), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) hashes[i] = NameIndex::Hash(entries[i].name);
  });
  // The partition from the hash's high bits (the index's slots use its low ones).
  const auto part_of = [&](size_t i) { return static_cast<size_t>((uint64_t{hashes[i]} * threads) >> 32); };
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> found(threads);  // (entry, the first of its name)
  RunShares(threads, 1, [&](size_t part, size_t) {
    NameIndex first;
    first.reserve(n / threads + 16);
    constexpr size_t kAhead = 16;  // prefetch distance: the slots are random accesses
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n && part_of(i + kAhead) == part) first.Prefetch(hashes[i + kAhead]);
      if (part_of(i) != part) continue;
      const uint32_t kept = first.InsertHashed(entries[i].name, hashes[i], static_cast<uint32_t>(i), name_of);
      if (kept != i) found[part].emplace_back(static_cast<uint32_t>(i), kept);
    }
  });
  std::vector<std::pair<uint32_t, uint32_t>> duplicates;
  for (auto& f : found) duplicates.insert(duplicates.end(), f.begin(), f.end());
  if (duplicates.empty()) return;
  std::sort(duplicates.begin(), duplicates.end());
  std::vector<bool> drop(n, false);
  for (const auto& [i, kept] : duplicates) {
    auto [l, c] = src_->Locate(entries[kept].offset);
    Add(Severity::kError, "duplicate-entry", entries[i].offset, entries[i].name, "name",
        "a second entry for this tensor (the first is at line {}, column {}); which one should win is ambiguous", l,
        c);
    drop[i] = true;
  }
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
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
  if (slots_) {  // a window's entries go to their places in the list
    if (slots_filled_ == slots_count_) {
      ++errors_;  // more entries than the scan found: the window is not read this way
      return;
    }
    slots_[slots_filled_++] = std::move(e);
    return;
  }
  file_.entries.push_back(std::move(e));
}

}  // namespace qairt::encodings::reader_internal
