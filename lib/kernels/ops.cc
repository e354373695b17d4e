#include "kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "kernels/common/scalar.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace qairt::kernels {

// ----- Grid -----------------------------------------------------------------

Grid Grid::PerTensor(std::vector<int64_t> dims) {
  Grid g;
  g.blocks = dims;
  for (auto& b : g.blocks) b = std::max<int64_t>(b, 1);
  g.dims = std::move(dims);
  return g;
}

Grid Grid::PerChannel(std::vector<int64_t> dims, size_t axis) {
  Grid g = PerTensor(std::move(dims));
  g.blocks[axis] = 1;
  return g;
}

Grid Grid::PerBlock(std::vector<int64_t> dims, std::vector<int64_t> blocks) {
  Grid g;
  g.dims = std::move(dims);
  g.blocks = std::move(blocks);
  return g;
}

size_t Grid::NumElements() const {
  size_t n = 1;
  for (auto d : dims) n *= static_cast<size_t>(d);
  return n;
}

std::vector<int64_t> Grid::ScaleDims() const {
  std::vector<int64_t> s(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t b = std::min(std::max<int64_t>(blocks[d], 1), std::max<int64_t>(dims[d], 1));
    s[d] = (dims[d] + b - 1) / b;
  }
  return s;
}

size_t Grid::NumScales() const {
  size_t n = 1;
  for (auto d : ScaleDims()) n *= static_cast<size_t>(d);
  return n;
}

namespace {

// Quantized outputs at least this large are written with non-temporal stores:
// they are far larger than L2, and the caller writes them out (or packs them)
// rather than reading them back at once.
constexpr size_t kStreamMinBytes = size_t{4} << 20;

// Asks for a line of input that will be read soon (into all cache levels).
inline void PrefetchRead(const char* p) { __builtin_prefetch(p, 0, 3); }

// Large inputs are read in pieces of kPieceBytes, and the next piece is
// prefetched while this one is worked on: a core that computes between its
// loads otherwise leaves memory idle meanwhile. On an Intel host whose single
// core streamed only ~8 GB/s, u8 quantize from memory took the sum of its
// compute and read times (0.80 ns/element against 0.21 from L1 + 0.50 for a
// read-only pass). Quantize kernels prefetch themselves, a line per vector
// (QuantParams::prefetch), kQuantAheadBytes ahead when nothing else reads
// the piece first; a burst of prefetches per piece (PrefetchedPieces, used
// by min/max, whose kernel takes no such parameter) stalls the core while
// the memory answers (int4 block-64 [4096, 4096]: 9.4-9.9 ms with a line per
// vector 2 KiB ahead, 10.9-12.8 with bursts, ~13 with neither).
constexpr size_t kPieceBytes = size_t{8} << 10;
constexpr size_t kQuantAheadBytes = size_t{2} << 10;

class PrefetchedPieces {
 public:
  PrefetchedPieces(const uint8_t* base, size_t elem_size, size_t begin, size_t end)
      : base_(base), isz_(elem_size), end_(end), next_(begin + kPieceBytes / elem_size) {}

  // Before processing [i, i + len): prefetch up to one piece past it.
  void Before(size_t i, size_t len) {
    const size_t upto = std::min(end_, i + len + kPieceBytes / isz_);
    for (; next_ < upto; next_ += 64 / isz_) PrefetchRead(reinterpret_cast<const char*>(base_ + next_ * isz_));
  }

 private:
  const uint8_t* base_;
  size_t isz_, end_, next_;
};

// The tensor seen as rows: dims [0, k) are the outer dims (one kernel call
// per row, each with its own base in the scale grid); dims [k, r) form a row
// whose runs (elements sharing a scale) have `run` elements.
struct RowPlan {
  size_t rows = 1;
  size_t row = 0;
  size_t run = 1;
  std::vector<size_t> odims, oblocks, ostrides;  // outer dims, blocks, scale strides

  size_t ScaleBase(size_t o) const {
    size_t base = 0;
    for (size_t d = odims.size(); d-- > 0;) {
      const size_t i = o % odims[d];
      o /= odims[d];
      base += (i / oblocks[d]) * ostrides[d];
    }
    return base;
  }
  // The kernel parameters of a call over row `row` from its element `pos`:
  // the row's scales and offsets and its run length.
  QuantParams RunParams(const QuantArgs& a, size_t row, size_t pos) const {
    QuantParams qp;
    const size_t base = ScaleBase(row);
    qp.scales = a.scales + base;
    qp.offsets = a.offsets ? a.offsets + base : nullptr;
    qp.block = run;
    qp.first = pos;
    return qp;
  }
};

RowPlan Plan(const Grid& g) {
  RowPlan p;
  const size_t r = g.dims.size();
  const std::vector<int64_t> sd = g.ScaleDims();
  // k: innermost dim whose scale extent is > 1.
  size_t k = r;
  for (size_t d = r; d-- > 0;)
    if (sd[d] > 1) {
      k = d;
      break;
    }
  const size_t n = g.NumElements();
  if (k == r) {  // one scale
    p.rows = 1;
    p.row = n;
    p.run = std::max<size_t>(n, 1);
    return p;
  }
  size_t inner = 1;
  for (size_t d = k + 1; d < r; ++d) inner *= static_cast<size_t>(g.dims[d]);
  const size_t bk = static_cast<size_t>(std::min(std::max<int64_t>(g.blocks[k], 1), g.dims[k]));
  p.row = static_cast<size_t>(g.dims[k]) * inner;
  p.run = std::max<size_t>(bk * inner, 1);
  size_t stride = static_cast<size_t>(sd[k]);
  p.odims.resize(k);
  p.oblocks.resize(k);
  p.ostrides.resize(k);
  for (size_t d = k; d-- > 0;) {
    p.odims[d] = static_cast<size_t>(g.dims[d]);
    p.oblocks[d] = static_cast<size_t>(std::min(std::max<int64_t>(g.blocks[d], 1), std::max<int64_t>(g.dims[d], 1)));
    p.ostrides[d] = stride;
    stride *= static_cast<size_t>(sd[d]);
  }
  p.rows = 1;
  for (size_t d = 0; d < k; ++d) p.rows *= p.odims[d];
  return p;
}

size_t InSize(InType in) { return in == InType::kF32 ? 4 : 2; }

// Calls fn(o, pos, len, flat) for every row piece of [a, b).
template <class Fn>
void ForPieces(const RowPlan& p, size_t a, size_t b, Fn&& fn) {
  while (a < b) {
    const size_t o = p.row ? a / p.row : 0;
    const size_t pos = a - o * p.row;
    const size_t len = std::min(b, (o + 1) * p.row) - a;
    fn(o, pos, len, a);
    a += len;
  }
}

// ForPieces, with each row piece cut to at most `piece` elements (a multiple
// of 64, so sub-byte outputs stay byte-aligned).
template <class Fn>
void ForPiecesOf(const RowPlan& p, size_t a, size_t b, size_t piece, Fn&& fn) {
  ForPieces(p, a, b, [&](size_t row, size_t pos, size_t len, size_t flat) {
    for (size_t done = 0; done < len; done += piece) fn(row, pos + done, std::min(piece, len - done), flat + done);
  });
}

size_t Tasks(size_t n, size_t chunk) { return (n + chunk - 1) / chunk; }

// Writes `len` values of `bits` bits at element index `at` (read-modify-write
// of the partial bytes).
void PackAt(const int8_t* q, size_t len, int bits, size_t at, uint8_t* y) {
  const size_t per = 8 / static_cast<size_t>(bits);
  const unsigned mask = (1u << bits) - 1u;
  for (size_t i = 0; i < len; ++i) {
    const size_t e = at + i;
    const unsigned sh = static_cast<unsigned>(bits) * static_cast<unsigned>(e % per);
    uint8_t& byte = y[e / per];
    byte = static_cast<uint8_t>((byte & ~(mask << sh)) | ((static_cast<unsigned>(q[i]) & mask) << sh));
  }
}

void UnpackAt(const uint8_t* y, size_t len, int bits, bool is_signed, size_t at, int8_t* q) {
  const size_t per = 8 / static_cast<size_t>(bits);
  const int mask = (1 << bits) - 1;
  for (size_t i = 0; i < len; ++i) {
    const size_t e = at + i;
    const int u = (y[e / per] >> (bits * static_cast<int>(e % per))) & mask;
    q[i] = static_cast<int8_t>(is_signed && u >= (1 << (bits - 1)) ? u - (1 << bits) : u);
  }
}

}  // namespace

// ----- quantize / dequantize --------------------------------------------------

void QuantizeGrid(InType in, const void* x, const Grid& g, const QuantArgs& a, QStorage out, void* y,
                  const ExecOptions& o, size_t* nonfinite) {
  const KernelConfig& c = ConfigFor(o);
  const RowPlan p = Plan(g);
  const size_t n = g.NumElements();
  const int bits = StorageBits(out);
  const size_t isz = InSize(in);
  const auto* xb = static_cast<const uint8_t*>(x);
  auto* yb = static_cast<uint8_t*>(y);
  // Sub-byte outputs use plain stores: a vector of them is 8 bytes or less,
  // and such small non-temporal stores between the input prefetches flush
  // partly filled write-combining lines (int4 block-64 [4096, 4096]: 13.2 ms
  // streamed, 10.7 plain, on the Intel host above).
  const bool stream = bits >= 8 && n * static_cast<size_t>(bits) / 8 >= kStreamMinBytes;
  auto params = [&](size_t row, size_t pos) {
    QuantParams qp = p.RunParams(a, row, pos);
    qp.qmin = a.qmin;
    qp.qmax = a.qmax;
    qp.stream = stream;
    return qp;
  };
  const size_t per = bits < 8 ? static_cast<size_t>(8 / bits) : 1;
  const bool count = nonfinite != nullptr && in == InType::kF32;
  if (per > 1 && p.row % per != 0) {
    if (count) *nonfinite = CountNonFinite(static_cast<const float*>(x), n, o);
    // Rows do not start on byte boundaries: quantize to int8 in pieces and
    // pack at bit offsets, on the calling thread (bytes are shared by rows).
    const QuantFn q8 = c.Quant(in, QStorage::kQ8);
    int8_t buf[4096];
    ForPieces(p, 0, n, [&](size_t row, size_t pos, size_t len, size_t flat) {
      for (size_t done = 0; done < len;) {
        const size_t m = std::min(len - done, sizeof(buf));
        QuantParams qp = params(row, pos + done);
        qp.stream = false;  // a stack buffer, read right back
        q8(m, xb + (flat + done) * isz, buf, &qp);
        PackAt(buf, m, bits, flat + done, yb);
        done += m;
      }
    });
    if ((n * static_cast<size_t>(bits)) % 8) {  // clear the unused high bits of the last byte
      const size_t last = n * static_cast<size_t>(bits) / 8;
      yb[last] = static_cast<uint8_t>(yb[last] & ((1u << ((n * static_cast<size_t>(bits)) % 8)) - 1u));
    }
    return;
  }
  const QuantFn fn = c.Quant(in, out);
  std::vector<size_t> bad(count ? Tasks(n, o.chunk) : 0, 0);
  ParallelFor(o.pool, Tasks(n, o.chunk), [&](size_t t, size_t) {
    const size_t b = std::min(n, (t + 1) * o.chunk);
    ForPiecesOf(p, t * o.chunk, b, kPieceBytes / isz, [&](size_t row, size_t pos, size_t len, size_t flat) {
      // Counted piece by piece: the count is the piece's first reader, and
      // the quantize (reading it again from L1) prefetches the next piece.
      if (count) bad[t] += c.nonfinite(len, static_cast<const float*>(x) + flat);
      QuantParams qp = params(row, pos);
      qp.prefetch = (count ? kPieceBytes : kQuantAheadBytes) / isz;
      fn(len, xb + flat * isz, yb + flat * static_cast<size_t>(bits) / 8, &qp);
    });
    if (stream) StoreFence();
  });
  if (count) *nonfinite = std::accumulate(bad.begin(), bad.end(), size_t{0});
}

void DequantizeGrid(QKind kind, const void* q, const Grid& g, const QuantArgs& a, float* y, const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  const RowPlan p = Plan(g);
  const size_t n = g.NumElements();
  const int bits = KindBits(kind);
  const auto* qb = static_cast<const uint8_t*>(q);
  const size_t per = bits < 8 ? static_cast<size_t>(8 / bits) : 1;
  if (per > 1 && p.row % per != 0) {
    const DequantFn s8 = c.Dequant(QKind::kS8);
    int8_t buf[4096];
    ForPieces(p, 0, n, [&](size_t row, size_t pos, size_t len, size_t flat) {
      for (size_t done = 0; done < len;) {
        const size_t m = std::min(len - done, sizeof(buf));
        UnpackAt(qb, m, bits, KindSigned(kind), flat + done, buf);
        const QuantParams qp = p.RunParams(a, row, pos + done);
        s8(m, buf, y + flat + done, &qp);
        done += m;
      }
    });
    return;
  }
  const DequantFn fn = c.Dequant(kind);
  ParallelFor(o.pool, Tasks(n, o.chunk), [&](size_t t, size_t) {
    const size_t b = std::min(n, (t + 1) * o.chunk);
    ForPieces(p, t * o.chunk, b, [&](size_t row, size_t pos, size_t len, size_t flat) {
      const QuantParams qp = p.RunParams(a, row, pos);
      fn(len, qb + flat * static_cast<size_t>(bits) / 8, y + flat, &qp);
    });
  });
}

// ----- statistics ---------------------------------------------------------------

namespace {

// MinMaxGrid where each element of a row has its own scale and rows share
// them (blocks down the rows: an LLM weight read in its source layout,
// [k, n] in blocks of 64 rows): the rows that share their scales go through
// the kernel together, 4 KiB of each at a time, and NaN and Inf are counted
// only in a panel where the kernel saw some (from L1). A row at a time
// moved the mins and maxs through L1 once per row, and a counting pass
// read every piece once more: the range pass of an LLM's weights took
// 0.31-0.36 s on 2 threads, against 0.26-0.28 s.
void MinMaxRowGroups(const KernelConfig& c, const RowPlan& p, const float* x, size_t ns, const ExecOptions& o,
                     float* pmin, float* pmax, size_t* nonfinite) {
  constexpr size_t kGroupRows = 8;
  constexpr size_t kPanel = size_t{4096} / sizeof(float);
  const size_t rows_per_task = std::max<size_t>(1, o.chunk / p.row);
  std::vector<size_t> bad(nonfinite ? Tasks(p.rows, rows_per_task) : 0, 0);
  ParallelFor(o.pool, Tasks(p.rows, rows_per_task), [&](size_t t, size_t w) {
    float* wmin = pmin + w * ns;
    float* wmax = pmax + w * ns;
    const size_t r1 = std::min(p.rows, (t + 1) * rows_per_task);
    for (size_t r = t * rows_per_task; r < r1;) {
      const size_t base = p.ScaleBase(r);
      size_t group = 1;
      while (group < kGroupRows && r + group < r1 && p.ScaleBase(r + group) == base) ++group;
      const float* rows = x + r * p.row;
      for (size_t c0 = 0; c0 < p.row; c0 += kPanel) {
        const size_t len = std::min(kPanel, p.row - c0);
        if (c.vminmax(len, group, p.row, rows + c0, wmin + base + c0, wmax + base + c0) && nonfinite)
          for (size_t i = 0; i < group; ++i) bad[t] += c.nonfinite(len, rows + i * p.row + c0);
      }
      r += group;
    }
  });
  if (nonfinite) *nonfinite = std::accumulate(bad.begin(), bad.end(), size_t{0});
}

// MinMaxGrid over pieces of rows (runs of any length).
void MinMaxPieces(const KernelConfig& c, const RowPlan& p, const float* x, size_t n, size_t ns,
                  const ExecOptions& o, float* pmin, float* pmax, size_t* nonfinite) {
  std::vector<size_t> bad(nonfinite ? Tasks(n, o.chunk) : 0, 0);
  ParallelFor(o.pool, Tasks(n, o.chunk), [&](size_t t, size_t w) {
    float* wmin = pmin + w * ns;
    float* wmax = pmax + w * ns;
    const size_t b = std::min(n, (t + 1) * o.chunk);
    PrefetchedPieces ahead(reinterpret_cast<const uint8_t*>(x), sizeof(float), t * o.chunk, b);
    ForPiecesOf(p, t * o.chunk, b, kPieceBytes / sizeof(float), [&](size_t row, size_t pos, size_t len, size_t flat) {
      ahead.Before(flat, len);
      if (nonfinite) bad[t] += c.nonfinite(len, x + flat);
      const size_t base = p.ScaleBase(row);
      if (p.run == 1) {
        c.vminmax(len, 1, 0, x + flat, wmin + base + pos, wmax + base + pos);
      } else {
        c.minmax(len, x + flat, pos, p.run, wmin + base, wmax + base);
      }
    });
  });
  if (nonfinite) *nonfinite = std::accumulate(bad.begin(), bad.end(), size_t{0});
}

}  // namespace

void MinMaxGrid(const float* x, const Grid& g, float* mins, float* maxs, const ExecOptions& o, size_t* nonfinite) {
  const KernelConfig& c = ConfigFor(o);
  const RowPlan p = Plan(g);
  const size_t n = g.NumElements();
  const size_t ns = g.NumScales();
  const size_t workers = PoolSize(o.pool);
  const float inf = std::numeric_limits<float>::infinity();
  // Per-worker partials: min/max is order-independent (NaN ignored, zeros
  // canonical), so the merge gives the same bits for any thread count.
  std::vector<float> pmin(workers * ns, inf), pmax(workers * ns, -inf);
  if (p.run == 1 && p.rows > 1 && p.row > 0) {
    MinMaxRowGroups(c, p, x, ns, o, pmin.data(), pmax.data(), nonfinite);
  } else {
    MinMaxPieces(c, p, x, n, ns, o, pmin.data(), pmax.data(), nonfinite);
  }
  for (size_t s = 0; s < ns; ++s) {
    float mn = inf, mx = -inf;
    for (size_t w = 0; w < workers; ++w) {
      mn = MinPs(pmin[w * ns + s], mn);
      mx = MaxPs(pmax[w * ns + s], mx);
    }
    mins[s] = CanonicalZero(mn);
    maxs[s] = CanonicalZero(mx);
  }
}

void Histogram(const float* x, size_t n, float lo, float hi, uint32_t bins, uint64_t* counts, const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  HistParams hp;
  hp.lo = lo;
  hp.hi = hi;
  hp.bins = bins;
  hp.scale = static_cast<float>(bins) / (hi - lo);
  hp.prefetch = kQuantAheadBytes / sizeof(float);
  const size_t workers = PoolSize(o.pool);
  std::vector<uint64_t> part(workers * bins, 0);
  ParallelFor(o.pool, Tasks(n, o.chunk), [&](size_t t, size_t w) {
    const size_t a = t * o.chunk;
    c.hist(std::min(n, a + o.chunk) - a, x + a, &hp, part.data() + w * bins);
  });
  for (uint32_t b = 0; b < bins; ++b) {
    uint64_t s = 0;
    for (size_t w = 0; w < workers; ++w) s += part[w * bins + b];
    counts[b] = s;
  }
}

size_t CountNonFinite(const float* x, size_t n, const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  std::vector<size_t> part(Tasks(n, o.chunk), 0);
  ParallelFor(o.pool, part.size(), [&](size_t t, size_t) {
    const size_t a = t * o.chunk;
    part[t] = c.nonfinite(std::min(n, a + o.chunk) - a, x + a);
  });
  size_t s = 0;
  for (auto v : part) s += v;
  return s;
}

void QdqError(const float* x, size_t n, const QdqErrParams& qp, double out[2], const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  std::vector<double> part(2 * Tasks(n, o.chunk), 0.0);
  ParallelFor(o.pool, part.size() / 2, [&](size_t t, size_t) {
    const size_t a = t * o.chunk;
    c.qdqerr(std::min(n, a + o.chunk) - a, x + a, &qp, part.data() + 2 * t);
  });
  out[0] = out[1] = 0.0;
  for (size_t t = 0; t < part.size() / 2; ++t) {  // fixed order: same sum for any thread count
    out[0] += part[2 * t];
    out[1] += part[2 * t + 1];
  }
}

void SquaredError(const float* x, const float* y, size_t n, double out[2], const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  const size_t tasks = Tasks(n, o.chunk);
  if (tasks <= 1 || !o.pool) {  // one caller's sums, no allocation
    out[0] = out[1] = 0.0;
    for (size_t a = 0; a < n; a += o.chunk) c.sqerr(std::min(n, a + o.chunk) - a, x + a, y + a, out);
    return;
  }
  std::vector<double> part(2 * tasks, 0.0);
  ParallelFor(o.pool, tasks, [&](size_t t, size_t) {
    const size_t a = t * o.chunk;
    c.sqerr(std::min(n, a + o.chunk) - a, x + a, y + a, part.data() + 2 * t);
  });
  out[0] = out[1] = 0.0;
  for (size_t t = 0; t < tasks; ++t) {  // fixed order: same sum for any thread count
    out[0] += part[2 * t];
    out[1] += part[2 * t + 1];
  }
}

void QuantizeBias(const float* b, size_t n, const BiasParams& bp, int32_t* y, const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  ParallelFor(o.pool, Tasks(n, o.chunk), [&](size_t t, size_t) {
    const size_t a = t * o.chunk;
    BiasParams p = bp;
    if (p.per_channel) p.weight_scales += a;
    c.bias(std::min(n, a + o.chunk) - a, b + a, y + a, &p);
  });
}

void ConvertF32ToF16(const float* x, size_t n, Half* y, const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  ParallelFor(o.pool, Tasks(n, o.chunk), [&](size_t t, size_t) {
    const size_t a = t * o.chunk;
    c.f32_to_f16(std::min(n, a + o.chunk) - a, x + a, y + a);
  });
}

void ConvertF16ToF32(const Half* x, size_t n, float* y, const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  ParallelFor(o.pool, Tasks(n, o.chunk), [&](size_t t, size_t) {
    const size_t a = t * o.chunk;
    c.f16_to_f32(std::min(n, a + o.chunk) - a, x + a, y + a);
  });
}

// ----- encoding math ---------------------------------------------------------------

void ClampRange(uint32_t bitwidth, bool is_signed, Schema schema, int32_t* qmin, int32_t* qmax) {
  const int64_t levels = int64_t{1} << bitwidth;
  int64_t lo = is_signed ? -levels / 2 : 0;
  const int64_t hi = is_signed ? levels / 2 - 1 : levels - 1;
  if (schema == Schema::kStrictSymmetric) lo += 1;
  *qmin = static_cast<int32_t>(lo);
  *qmax = static_cast<int32_t>(hi);
}

GridParams ComputeGrid(float fmin, float fmax, uint32_t bitwidth, bool is_signed, Schema schema, float min_range) {
  double mn = std::min<double>(fmin, 0.0);
  double mx = std::max<double>(fmax, 0.0);
  if (mx - mn < min_range) mx = mn + min_range;
  const double levels = std::ldexp(1.0, static_cast<int>(bitwidth));
  double steps = levels - 1;
  const bool strict = schema == Schema::kStrictSymmetric;
  if (strict) steps -= 1;
  const bool unsigned_sym = schema == Schema::kUnsignedSymmetric && mn >= 0;
  const bool symmetric = schema != Schema::kAsymmetric && !unsigned_sym;
  double delta;
  double offset;  // on the unsigned grid [0, levels - 1], AIMET's convention
  if (symmetric) {
    const double pos = std::floor(steps / 2);
    const double neg = steps - pos;
    const double extra = steps == 3 ? 1 : 0;
    delta = std::max(mx / (pos + extra), -mn / neg);
    offset = -neg;
    if (strict) offset = -(levels / 2);  // zero point at the centre; the clamp drops the lowest code
  } else {
    delta = (mx - mn) / steps;
    offset = std::clamp(std::nearbyint(mn / delta), -steps, 0.0);
  }
  GridParams g;
  g.scale = static_cast<float>(delta);
  // Signed storage: q_signed = q_unsigned - levels / 2.
  g.offset = static_cast<int32_t>(is_signed ? offset + levels / 2 : offset);
  ClampRange(bitwidth, is_signed, schema, &g.qmin, &g.qmax);
  g.min = static_cast<float>((static_cast<double>(g.qmin) + g.offset) * g.scale);
  g.max = static_cast<float>((static_cast<double>(g.qmax) + g.offset) * g.scale);
  return g;
}

namespace {

LpbqParams MakeLpbqParams(uint32_t bitwidth, uint32_t decompressed_bitwidth, float min_range) {
  // ComputeGrid's signed symmetric case, with its constants hoisted (this runs
  // once per block of LLM-sized weights).
  LpbqParams p;
  const double steps = std::ldexp(1.0, static_cast<int>(bitwidth)) - 1;
  p.pos = std::floor(steps / 2) + (steps == 3 ? 1 : 0);
  p.neg = steps - std::floor(steps / 2);
  p.min_range = min_range;
  p.levels = std::ldexp(1.0f, static_cast<int>(decompressed_bitwidth - bitwidth));
  return p;
}

}  // namespace

void ComputeLpbq(size_t nblocks, const float* bmins, const float* bmaxs, const size_t* block_channel,
                 size_t nchannels, uint32_t bitwidth, uint32_t decompressed_bitwidth, float min_range,
                 float* channel_scales, int32_t* int_scales, float* effective_scales, const ExecOptions& o) {
  const LpbqParams p = MakeLpbqParams(bitwidth, decompressed_bitwidth, min_range);
  // Each channel's blocks contiguous and equally many (weights blocked along
  // their innermost scale dim): the lpbq-scales kernel, a channel per call.
  const size_t per = nchannels ? nblocks / nchannels : 0;
  bool contiguous = per > 0 && per * nchannels == nblocks;
  for (size_t ch = 0, b = 0; contiguous && ch < nchannels; ++ch)
    for (size_t i = 0; contiguous && i < per; ++i, ++b) contiguous = block_channel[b] == ch;
  if (contiguous) {
    const KernelConfig& c = ConfigFor(o);
    for (size_t ch = 0; ch < nchannels; ++ch)
      c.lpbq_scales(per, bmins + ch * per, bmaxs + ch * per, &p, channel_scales + ch, int_scales + ch * per,
                    effective_scales + ch * per);
    return;
  }
  std::fill(channel_scales, channel_scales + nchannels, 0.0f);
  for (size_t b = 0; b < nblocks; ++b) {
    const float bs = LpbqBlockScale(bmins[b], bmaxs[b], &p);
    effective_scales[b] = bs;  // block scale for now
    float& cs = channel_scales[block_channel[b]];
    cs = std::max(cs, bs);
  }
  for (size_t ch = 0; ch < nchannels; ++ch) channel_scales[ch] /= p.levels;
  for (size_t b = 0; b < nblocks; ++b) {
    const float cs = channel_scales[block_channel[b]];
    const int32_t k = LpbqIntScale(effective_scales[b], cs, p.levels);
    int_scales[b] = k;
    effective_scales[b] = static_cast<float>(k) * cs;
  }
}

void QuantizeLpbqRows(const float* x, size_t rows, size_t row, size_t block, uint32_t bitwidth,
                      uint32_t decompressed_bitwidth, float min_range, float* channel_scales, int32_t* int_scales,
                      void* y, const ExecOptions& o) {
  const KernelConfig& c = ConfigFor(o);
  const size_t nb = (row + block - 1) / block;
  const QStorage st = bitwidth <= 2 ? QStorage::kQ2 : bitwidth <= 4 ? QStorage::kQ4 : bitwidth <= 8 ? QStorage::kQ8 : QStorage::kQ16;
  const int bits = StorageBits(st);
  const QuantFn fn = c.Quant(InType::kF32, st);
  int32_t qmin, qmax;
  ClampRange(bitwidth, true, Schema::kSymmetric, &qmin, &qmax);
  auto* yb = static_cast<uint8_t*>(y);
  // Rows per task so a task is about four chunks: each task's first row is
  // read without a prefetch ahead of it.
  const size_t rows_per_task = std::max<size_t>(1, 4 * o.chunk / std::max<size_t>(row, 1));
  const size_t workers = PoolSize(o.pool);
  // Per worker: block mins, maxs and effective scales, each padded to whole
  // cache lines so two workers never write the same line.
  const size_t stride = (nb + 15) / 16 * 16;
  std::vector<float> scratch(workers * 3 * stride + 16);
  float* const scratch_base = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
  const LpbqParams lpbq = MakeLpbqParams(bitwidth, decompressed_bitwidth, min_range);
  // Each row is read from memory once, by its block min/max, then quantized
  // from L1. To keep memory busy through both phases, the next row is
  // prefetched while this one is processed, between the min/max and the
  // quantize pieces (pieces of ~512 elements, whole blocks). Measured on
  // [4096, 4096], block 64, on an AMD host: 3.2 ms with half of the row
  // prefetched in each pass, against 3.6 with prefetches only between
  // quantize pieces and ~6 with none; on an Intel host, a third during
  // min/max (the pace of the compute) took 12.8-13.2 ms against 13.7-14.4
  // with half (four alternating rounds). The output is
  // written with plain stores: non-temporal ones, interleaved with the
  // prefetches, made the same run 2-3x slower.
  size_t piece = std::max<size_t>(block, 512 / block * block);
  if (piece * static_cast<size_t>(bits) % 8 != 0) piece = row;  // pieces must start on whole output bytes
  const size_t row_bytes = row * sizeof(float);
  ParallelFor(o.pool, Tasks(rows, rows_per_task), [&](size_t t, size_t w) {
    float* bmin = scratch_base + w * 3 * stride;
    float* bmax = bmin + stride;
    float* eff = bmax + stride;
    const size_t r_end = std::min(rows, (t + 1) * rows_per_task);
    for (size_t r = t * rows_per_task; r < r_end; ++r) {
      const float* xr = x + r * row;
      const char* next = r + 1 < r_end ? reinterpret_cast<const char*>(xr + row) : nullptr;
      size_t prefetched = 0;
      // Prefetch the next row at the pace of this row's compute: min/max
      // takes about a third of it, quantize two thirds (perf), so the next
      // row's first third is asked for during min/max and the rest during
      // quantize (`done` counts elements through both passes, 2 * row).
      auto prefetch_upto = [&](size_t done) {
        if (next == nullptr) return;
        const size_t upto = done <= row ? done * sizeof(float) / 3
                                        : std::min(row_bytes, row_bytes / 3 + (done - row) * sizeof(float) * 2 / 3);
        for (; prefetched < upto; prefetched += 64) PrefetchRead(next + prefetched);
      };
      std::fill(bmin, bmin + nb, std::numeric_limits<float>::infinity());
      std::fill(bmax, bmax + nb, -std::numeric_limits<float>::infinity());
      for (size_t i = 0; i < row; i += piece) {
        const size_t n = std::min(piece, row - i);
        c.minmax(n, xr + i, i, block, bmin, bmax);
        prefetch_upto(i + n);
      }
      c.lpbq_scales(nb, bmin, bmax, &lpbq, channel_scales + r, int_scales + r * nb, eff);
      QuantParams qp;
      qp.scales = eff;
      qp.block = block;
      qp.qmin = qmin;
      qp.qmax = qmax;
      uint8_t* yr = yb + r * row * static_cast<size_t>(bits) / 8;
      for (size_t i = 0; i < row; i += piece) {
        const size_t n = std::min(piece, row - i);
        qp.first = i;
        fn(n, xr + i, yr + i * static_cast<size_t>(bits) / 8, &qp);
        prefetch_upto(row + i + n);
      }
    }
  });
}

}  // namespace qairt::kernels
