#include "encodings/number_array_scan.h"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>

namespace qairt::encodings {
namespace {

constexpr double kExactPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int kMaxRank = 16;

inline bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }
inline bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
inline const char* SkipSpace(const char* p) {
  while (IsSpace(*p)) ++p;
  return p;
}

constexpr uint64_t kPow10u[] = {1,         10,         100,         1000,         10000,        100000,
                                1000000,   10000000,   100000000,   1000000000,   10000000000,  100000000000,
                                1000000000000, 10000000000000, 100000000000000, 1000000000000000,
                                10000000000000000};

// High bit set in each byte of v that is not an ASCII digit. Each byte is
// tested on its own 7 low bits, so no carry crosses bytes.
inline uint64_t NonDigitBytes(uint64_t v) {
  const uint64_t low7 = v & 0x7F7F7F7F7F7F7F7Full;
  const uint64_t at_least_0 = low7 + 0x5050505050505050ull;      // high bit: low7 >= '0'
  const uint64_t at_least_colon = low7 + 0x4646464646464646ull;  // high bit: low7 > '9'
  const uint64_t digit = at_least_0 & ~at_least_colon & ~v & 0x8080808080808080ull;
  return ~digit & 0x8080808080808080ull;
}

// The value of the first n (0..8) bytes of `digits` (byte values 0..9, the
// first byte the most significant), by the SWAR reduction of simdjson and
// fast_float after shifting the other bytes out.
inline uint64_t LeadingDigitsValue(uint64_t digits, unsigned n) {
  const unsigned shift = 8 * (8 - n);
  uint64_t v = shift >= 64 ? 0 : digits << shift;
  v = (v * 10) + (v >> 8);  // adjacent digit pairs
  v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  return static_cast<uint32_t>(v);
}

// Appends the run of digits at p to *m (m * 10^n + run) and returns its end.
// Runs of up to 15 digits take no branch that depends on their length: it
// varies from number to number, and a mispredicted loop exit costs more than
// the rest of the number. Longer runs go on digit by digit; past 19 digits *m
// wraps, and the caller, which counts digits, does not use it.
inline const char* ReadDigits(const char* p, uint64_t* m) {
  uint64_t first, second;
  std::memcpy(&first, p, 8);  // the text is padded: 16 bytes are readable
  std::memcpy(&second, p + 8, 8);
  const uint64_t first_stop = NonDigitBytes(first), second_stop = NonDigitBytes(second);
  const unsigned n1 = first_stop ? static_cast<unsigned>(__builtin_ctzll(first_stop)) >> 3 : 8;
  const unsigned n2 = n1 < 8 ? 0 : second_stop ? static_cast<unsigned>(__builtin_ctzll(second_stop)) >> 3 : 8;
  constexpr uint64_t kZeros = 0x3030303030303030ull;
  uint64_t v = *m * kPow10u[n1] + LeadingDigitsValue(first - kZeros, n1);
  v = v * kPow10u[n2] + LeadingDigitsValue(second - kZeros, n2);
  p += n1 + n2;
  if (n1 + n2 == 16)
    while (IsDigit(*p)) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  *m = v;
  return p;
}

// One JSON number at *pp; advances *pp past it. False: not a number this path
// reads exactly (see the header).
inline bool ReadNumber(const char** pp, bool* is_float, double* out) {
  const char* const start = *pp;
  const char* p = start;
  bool negative = false;
  if (*p == '-') [[unlikely]] {  // a branch, not p += (*p == '-'): it keeps the load off the chain from number to number
    negative = true;
    ++p;
  }
  uint64_t m = 0;
  const char* const int_start = p;
  if (*p == '0') {
    ++p;
    if (IsDigit(*p)) return false;  // leading zero: not JSON
  } else {
    if (!IsDigit(*p)) return false;
    p = ReadDigits(p, &m);
  }
  size_t digits = static_cast<size_t>(p - int_start);
  int64_t exp10 = 0;
  bool literal_float = false;
  if (*p == '.') {
    literal_float = true;
    const char* const frac_start = ++p;
    if (!IsDigit(*p)) return false;
    p = ReadDigits(p, &m);
    digits += static_cast<size_t>(p - frac_start);
    exp10 = -static_cast<int64_t>(p - frac_start);
  }
  if ((*p | 0x20) == 'e') {
    literal_float = true;
    ++p;
    bool exp_negative = false;
    if (*p == '-' || *p == '+') exp_negative = *p++ == '-';
    if (!IsDigit(*p)) return false;
    int64_t e = 0;
    for (; IsDigit(*p); ++p)
      if (e < 1000000) e = e * 10 + (*p - '0');
    exp10 += exp_negative ? -e : e;
  }
  *pp = p;
  *is_float |= literal_float;
  if (digits <= 19) {
    if (m == 0) {
      *out = negative ? -0.0 : 0.0;
      return true;
    }
    if (m <= (uint64_t{1} << 53) && exp10 >= -22 && exp10 <= 22) {
      // Clinger: both operands exact, so the one rounding is the correct one.
      double d = static_cast<double>(m);
      d = exp10 < 0 ? d / kExactPow10[-exp10] : d * kExactPow10[exp10];
      *out = negative ? -d : d;
      return true;
    }
  } else {
    // More digits than a uint64 holds: simdjson's own reading of these is not
    // always the correctly rounded one, and this path must equal it.
    return false;
  }
  double d;
  const auto r = std::from_chars(start, p, d);
  if (r.ec != std::errc() || r.ptr != p) return false;
  if (!std::isfinite(d) || std::fabs(d) < DBL_MIN) return false;  // incl. zero spelt with > 19 digits
  *out = d;
  return true;
}

}  // namespace

bool ScanNumberArray(const char* text, int max_rank, NumberArrayScan* out) {
  out->shape.clear();
  out->values.clear();
  out->any_float_literal = false;
  if (*text != '[' || max_rank < 1) return false;
  if (max_rank > kMaxRank) max_rank = kMaxRank;
  int64_t count[kMaxRank];  // elements so far in the open array at each level
  int64_t dims[kMaxRank];   // each level's length, fixed by its first array
  for (int i = 0; i < max_rank; ++i) dims[i] = -1;
  int depth = 1;         // open '['
  int leaf_depth = -1;   // the level numbers sit at
  count[0] = 0;
  const char* p = text + 1;
  for (;;) {
    // At the start of an element.
    p = SkipSpace(p);
    if (*p == '[') {
      if (depth >= max_rank || (leaf_depth >= 0 && leaf_depth <= depth)) return false;
      count[depth++] = 0;
      ++p;
      continue;
    }
    if (leaf_depth < 0) leaf_depth = depth;
    if (leaf_depth != depth) return false;
    // A run of numbers, the bulk of the work.
    int64_t run = 0;
    for (;;) {
      double d;
      if (!ReadNumber(&p, &out->any_float_literal, &d)) return false;
      out->values.push_back(d);
      ++run;
      if (*p != ',') p = SkipSpace(p);
      if (*p != ',') break;
      p = SkipSpace(p + 1);
    }
    count[depth - 1] += run - 1;  // the loop below counts the last one
    // After an element (a number, or an array just closed).
    for (;;) {
      ++count[depth - 1];
      p = SkipSpace(p);
      if (*p == ',') {
        ++p;
        break;
      }
      if (*p != ']') return false;
      ++p;
      const int level = depth - 1;
      if (dims[level] < 0) {
        dims[level] = count[level];
      } else if (dims[level] != count[level]) {
        return false;
      }
      if (--depth == 0) {
        out->shape.assign(dims, dims + leaf_depth);
        out->end = p;
        return true;
      }
    }
  }
}

}  // namespace qairt::encodings
