// The scan behind FindListLayout: 64-byte blocks are classified at once (the
// bytes " \ { } [ ] as a bit mask) and only those bytes are visited, in file
// order, by a small state machine that tracks strings, escapes and nesting.
// Numbers, commas and whitespace inside entries are never looked at: a 100 MB
// file has ~2M such bytes and ~100M others.
#include "encodings/list_layout.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <thread>

namespace qairt::encodings {
namespace {

constexpr size_t kNone = SIZE_MAX;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

bool IsEvent(char c) { return c == '"' || c == '\\' || c == '{' || c == '}' || c == '[' || c == ']'; }

// Bit i set where p[i] is an event byte, for the n <= 64 bytes at p.
uint64_t ClassifyBlock(const char* p, size_t n) {
#if defined(__SSE2__)
  if (n == 64) {
    // c | 0x20 folds '[' onto '{' and ']' onto '}'; quote and backslash are
    // compared as they are (their folds, 0x22 and 0x7C, would catch other
    // bytes).
    const __m128i fold = _mm_set1_epi8(0x20), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'),
                  quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    uint64_t mask = 0;
    for (int k = 0; k < 4; ++k) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
      const __m128i f = _mm_or_si128(v, fold);
      const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(f, open), _mm_cmpeq_epi8(f, close)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
      mask |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(hit))) << (16 * k);
    }
    return mask;
  }
#endif
  uint64_t mask = 0;
  for (size_t i = 0; i < n; ++i)
    if (IsEvent(p[i])) mask |= uint64_t{1} << i;
  return mask;
}

// Where a scan of the list stops early: at the entry that starts at `at`,
// whose previous entry ends at `prev_end` (a split of the scan in two).
struct Split {
  size_t at = kNone;
  size_t prev_end = kNone;
};

class Scanner {
 public:
  Scanner(const char* data, size_t size, size_t window_bytes, ListLayout* out)
      : d_(data), n_(size), window_bytes_(window_bytes), out_(out) {}

  // Scans the document from its start. With a split, stops there when the
  // split is an entry boundary of the list (split_reached() then; the window
  // in progress is closed) and otherwise goes on as without it.
  bool Run(Split split = {}) {
    size_t first = 0;
    while (first < n_ && IsSpace(d_[first])) ++first;
    if (first == n_) return false;
    if (d_[first] == '[') {
      pending_open_ = first;  // a bare list: the document is the list
    } else if (d_[first] != '{') {
      return false;
    }
    stop_ = split;
    return Scan(0);
  }

  // Scans from `split.at`, an entry of the list at `list_depth` that the
  // scan from the start reaches there (the caller checks that it did):
  // entries and windows counted from there.
  bool RunFrom(Split split, size_t list_depth) {
    list_depth_ = depth_ = list_depth;
    prev_end_ = split.prev_end;
    continuing_ = true;
    return Scan(split.at);
  }

  bool split_reached() const { return split_reached_; }

 private:
  bool Scan(size_t from) {
    for (size_t base = from & ~size_t{63}; base < n_; base += 64) {
      const size_t len = n_ - base < 64 ? n_ - base : 64;
      uint64_t mask = ClassifyBlock(d_ + base, len);
      if (base < from) mask &= ~uint64_t{0} << (from - base);
      while (mask) {
        const size_t i = base + static_cast<size_t>(__builtin_ctzll(mask));
        mask &= mask - 1;
        if (i == skip_) continue;
        if (i >= stop_.at && stop_.at != kNone) {
          if (AtSplit(i)) return true;
          stop_ = Split{};  // not an entry boundary as far as this scan sees: go on without a split
        }
        const int r = Event(i);
        if (r < 0) return false;
        if (r > 0) return true;
      }
    }
    return false;  // the list never closed
  }

  // Whether event i is the split's entry, just after its previous entry and
  // a comma; then the window in progress is closed.
  bool AtSplit(size_t i) {
    if (i != stop_.at || in_string_ || list_depth_ == kNone || depth_ != list_depth_ || d_[i] != '{' ||
        prev_end_ != stop_.prev_end || out_->entries == 0 || !Gap(prev_end_, i, true))
      return false;
    if (window_.entries) out_->windows.push_back(window_);
    window_ = ListWindow{};
    split_reached_ = true;
    return true;
  }

  // 1: the list closed (done), 0: go on, -1: not a shape this path takes.
  int Event(size_t i) {
    const char c = d_[i];
    if (in_string_) {
      if (c == '\\') {
        skip_ = i + 1;
      } else if (c == '"') {
        in_string_ = false;
        if (depth_ == 1 && list_depth_ == kNone) return StringAtTop(string_begin_ + 1, i);
      }
      return 0;
    }
    switch (c) {
      case '"':
        if (depth_ == list_depth_) return -1;  // a string element
        in_string_ = true;
        string_begin_ = i;
        return 0;
      case '{':
      case '[':
        if (depth_ == list_depth_) {
          if (c != '{' || !Gap(prev_end_, i, out_->entries > 0 || continuing_)) return -1;
          entry_begin_ = i;
        } else if (i == pending_open_) {
          if (c != '[' || list_depth_ != kNone) return -1;
          out_->open = i;
          list_depth_ = depth_ + 1;
          prev_end_ = i + 1;
        }
        ++depth_;
        return 0;
      case '}':
      case ']':
        if (depth_ == 0) return -1;
        --depth_;
        if (list_depth_ == kNone) return 0;
        if (depth_ == list_depth_) return c == '}' ? EntryEnd(i + 1) : -1;
        if (depth_ + 1 == list_depth_) {  // the list closes
          if (c != ']' || !Gap(prev_end_, i, false)) return -1;
          out_->close = i;
          if (window_.entries) out_->windows.push_back(window_);
          return 1;
        }
        return 0;
      default:  // a backslash outside a string
        return -1;
    }
  }

  // A string closed at the top object's level: if it is the key "encodings",
  // its value must be the list.
  int StringAtTop(size_t begin, size_t end) {
    static constexpr char kKey[] = "encodings";
    if (end - begin != sizeof kKey - 1 || std::memcmp(d_ + begin, kKey, sizeof kKey - 1) != 0) return 0;
    size_t p = end + 1;
    while (p < n_ && IsSpace(d_[p])) ++p;
    if (p == n_ || d_[p] != ':') return 0;  // a value "encodings", not the key
    ++p;
    while (p < n_ && IsSpace(d_[p])) ++p;
    if (p == n_ || d_[p] != '[' || pending_open_ != kNone) return -1;  // not a list, or a second key
    pending_open_ = p;
    return 0;
  }

  int EntryEnd(size_t end) {
    if (!window_.entries) {
      window_.begin = entry_begin_;
      window_.first_entry = out_->entries;
    }
    ++window_.entries;
    ++out_->entries;
    window_.end = end;
    prev_end_ = end;
    if (window_.end - window_.begin >= window_bytes_) {
      out_->windows.push_back(window_);
      window_ = ListWindow{};
    }
    return 0;
  }

  // [from, to) holds whitespace and, when `comma`, exactly one comma.
  bool Gap(size_t from, size_t to, bool comma) const {
    size_t commas = 0;
    for (size_t p = from; p < to; ++p) {
      if (d_[p] == ',') ++commas;
      else if (!IsSpace(d_[p])) return false;
    }
    return commas == (comma ? 1u : 0u);
  }

  const char* d_;
  size_t n_;
  size_t window_bytes_;
  ListLayout* out_;
  size_t depth_ = 0;
  bool in_string_ = false;
  size_t string_begin_ = 0;
  size_t skip_ = kNone;          // the byte after a backslash in a string
  size_t pending_open_ = kNone;  // where the list's '[' is expected
  size_t list_depth_ = kNone;    // depth inside the list, once open
  size_t prev_end_ = 0;          // end of the last entry (or just after '[')
  size_t entry_begin_ = 0;
  ListWindow window_;
  Split stop_;
  bool split_reached_ = false;
  bool continuing_ = false;  // scanning from a split: a comma precedes the first entry
};

// A split near the middle of a large document: the first "}, {" (with any
// whitespace) after it, which is an entry boundary when it is not inside a
// string (the scan from the start checks that when it gets there).
Split FindSplit(const char* d, size_t n) {
  constexpr size_t kSearch = size_t{1} << 20;
  const char* p = d + n / 2;
  const char* const end = d + std::min(n, n / 2 + kSearch);
  while (p < end) {
    p = static_cast<const char*>(std::memchr(p, '}', static_cast<size_t>(end - p)));
    if (!p) break;
    const char* q = p + 1;
    while (q < end && IsSpace(*q)) ++q;
    if (q < end && *q == ',') {
      ++q;
      while (q < end && IsSpace(*q)) ++q;
      if (q < end && *q == '{')
        return Split{static_cast<size_t>(q - d), static_cast<size_t>(p + 1 - d)};
    }
    ++p;
  }
  return Split{};
}

// The scan on two threads: the caller's from the start to a split near the
// middle, a second from the split to the end, assuming the split is an entry
// boundary of the list; the layouts are joined when the first scan confirms
// it, and otherwise the first goes on to the end alone.
bool TwoScans(const char* data, size_t size, size_t window_bytes, size_t list_depth, ListLayout* out) {
  const Split split = FindSplit(data, size);
  if (split.at == kNone) return Scanner(data, size, window_bytes, out).Run();
  ListLayout second;
  bool second_ok = false;
  std::thread worker;
  try {
    worker = std::thread([&] { second_ok = Scanner(data, size, window_bytes, &second).RunFrom(split, list_depth); });
  } catch (...) {  // no thread to be had
    return Scanner(data, size, window_bytes, out).Run();
  }
  Scanner first(data, size, window_bytes, out);
  const bool first_ok = first.Run(split);
  worker.join();
  if (!first.split_reached()) return first_ok;  // the first scan went to the end on its own
  if (!first_ok || !second_ok) return false;
  for (ListWindow w : second.windows) {
    w.first_entry += out->entries;
    out->windows.push_back(w);
  }
  out->entries += second.entries;
  out->close = second.close;
  return true;
}


}  // namespace

bool FindListLayout(const char* data, size_t size, size_t window_bytes, ListLayout* out, unsigned threads) {
  *out = ListLayout{};
  if (!data || size == 0) return false;
  if (window_bytes == 0) window_bytes = 1;
  // The depth of the list's entries: inside the top object's "encodings"
  // list, or the document itself when it is a bare list.
  size_t first = 0;
  while (first < size && IsSpace(data[first])) ++first;
  const size_t list_depth = first < size && data[first] == '[' ? 1 : 2;
  constexpr size_t kSplitBytes = size_t{8} << 20;  // below this, a second thread costs more than it saves
  const bool ok = threads >= 2 && size >= kSplitBytes ? TwoScans(data, size, window_bytes, list_depth, out)
                                                       : Scanner(data, size, window_bytes, out).Run();
  if (!ok) *out = ListLayout{};
  return ok;
}

}  // namespace qairt::encodings
