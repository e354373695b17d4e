// Encodings and quantization of a static tensor's StaticData. Plain data
// goes straight to ComputeEncoding / QuantizeTensor. A transposed view
// (StaticData::TransposeOf: a MatMul weight the rewrite turned into a
// FullyConnected [N, K]) is read from its [K, N] source whenever the
// encoding is row-local, and its float transpose is never materialized:
// its ranges are reduced down the source's rows (a grid over columns), its
// quantization goes through bands of source rows, each quantized in the
// source's layout (a scale per column) and its quantized bytes transposed
// into place (TransposedQuantizer: a quarter of the floats' bytes move at
// int8, an eighth at int4); float16 views transpose the floats through a
// small buffer. Bands, not panels of source columns: a band is contiguous
// memory, read once in order, while a column panel touches one page per
// source row (a TLB miss each, and no prefetch across pages). That is the
// difference between one sequential pass over an LLM's weights and a second
// copy of the model.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "kernels/threadpool.h"
#include "support/thread_scratch.h"
#include "quant/quantize.h"

namespace qairt::quant {
namespace {

// Every row's scales depend on that row's values only: per tensor (one
// scale), per channel along rows, or blocks within rows (LPBQ channels are
// the rows). Float conversion is elementwise.
bool RowLocal(EncodingKind kind, int32_t axis, const std::vector<int64_t>& block_sizes) {
  switch (kind) {
    case EncodingKind::kFloat:
    case EncodingKind::kPerTensor: return true;
    case EncodingKind::kPerChannel: return axis == 0;
    case EncodingKind::kPerBlock: return block_sizes.size() == 2 && block_sizes[0] == 1;
    case EncodingKind::kLpbq: return block_sizes.size() == 2 && block_sizes[0] == 1 && axis == 1;
    default: return false;
  }
}

// The float32 transposed view this data is, or null when it must be read as
// plain bytes.
const StaticTransposition* FloatView(const StaticData& data, const std::vector<int64_t>& dims) {
  const StaticTransposition* t = data.transposition();
  if (!t || t->elem != sizeof(float) || dims.size() != 2 || dims[0] != t->cols || dims[1] != t->rows) return nullptr;
  return t;
}

// The encoding's block length along K: a band of source rows must hold
// whole blocks (1 for per tensor / per channel / float).
int64_t BlockLength(const Encoding& e) {
  return (e.kind == EncodingKind::kPerBlock || e.kind == EncodingKind::kLpbq) ? e.block_sizes[1] : 1;
}

// Bands of source rows: a multiple of the block length and of 8 (so each
// band's piece of a 2- or 4-bit output row starts on a byte), ~512 KiB.
int64_t BandRows(int64_t block, int64_t n) {
  const int64_t unit = std::lcm<int64_t>(block, 8);
  const int64_t want = (int64_t{512} << 10) / std::max<int64_t>(1, n * 4);
  return std::max<int64_t>(unit, want / unit * unit);
}

// Runs fn(band, k0, k1) over bands [k0, k1) of the source's rows, `band`
// holding columns [c0, c0 + width) of them transposed: [width, k1 - k0]
// floats, row i = the view's row c0 + i, columns k0..k1. False when some fn
// returned false.
template <class Fn>
bool ForEachBand(const StaticTransposition& t, int64_t c0, int64_t width, int64_t band_rows,
                 kernels::ThreadPool* pool, Fn fn) {
  const int64_t k = t.rows, ld = t.cols;
  const size_t bands = static_cast<size_t>((k + band_rows - 1) / band_rows);
  std::vector<char> ok(bands, 1);
  const auto* src = reinterpret_cast<const float*>(t.source->data()) + c0;
  kernels::ParallelFor(pool, bands, [&](size_t b, size_t) {
    const int64_t k0 = static_cast<int64_t>(b) * band_rows, k1 = std::min(k, k0 + band_rows);
    // Kept by the thread from tensor to tensor: a fresh ~512 KiB buffer per
    // weight is fresh pages, zeroed by the kernel and again by resize().
    thread_local std::vector<float> buf;
    const ScratchRelease release(buf);
    if (buf.size() < static_cast<size_t>(band_rows * width)) buf.resize(static_cast<size_t>(band_rows * width));
    kernels::Transpose2DStrided(sizeof(float), k1 - k0, width, src + k0 * ld, ld, buf.data(), k1 - k0);
    ok[b] = fn(buf.data(), k0, k1) ? 1 : 0;
  });
  return std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
}

// `e` without its per-channel / per-block tables: a slice fills them with
// its part (copying the whole tables first would move them bands x blocks
// times).
// Floats [begin, begin + count) of `data`: read from its file into `buf`
// (the caller's kept scratch) when `reader` reads the file, else where they
// lie. The pointer is valid while `buf` is.
const float* FloatsOf(const StaticData& data, const StaticDataReader& reader, size_t begin, size_t count,
                      std::vector<float>& buf) {
  if (!reader.from_file()) return reinterpret_cast<const float*>(data.data()) + begin;
  if (buf.size() < count) buf.resize(count);
  reader.Read(begin * sizeof(float), count * sizeof(float), reinterpret_cast<uint8_t*>(buf.data()));
  return buf.data();
}

Encoding WithoutTables(const Encoding& e) {
  Encoding s;
  s.kind = e.kind;
  s.dtype = e.dtype;
  s.bitwidth = e.bitwidth;
  s.symmetry = e.symmetry;
  s.overridden = e.overridden;
  s.axis = e.axis;
  s.block_sizes = e.block_sizes;
  s.decompressed_bitwidth = e.decompressed_bitwidth;
  return s;
}

// A row-local encoding of a plain (not transposed) tensor cut to rows
// [r0, r1) of its first dim: per-channel tables (axis 0) and per-block and
// LPBQ tables (blocks within rows) keep those rows' entries.
Encoding SliceRows(const Encoding& e, int64_t rows, int64_t r0, int64_t r1) {
  if (e.kind != EncodingKind::kPerChannel && e.kind != EncodingKind::kPerBlock && e.kind != EncodingKind::kLpbq)
    return e;
  Encoding s = WithoutTables(e);
  auto cut = [&](auto& v, const auto& from) {
    if (from.empty()) return;
    const auto per_row = static_cast<std::ptrdiff_t>(from.size() / static_cast<size_t>(rows));
    v.assign(from.begin() + r0 * per_row, from.begin() + r1 * per_row);
  };
  cut(s.scales, e.scales);
  cut(s.offsets, e.offsets);
  cut(s.float_offsets, e.float_offsets);
  cut(s.block_int_scales, e.block_int_scales);
  return s;
}

// Rows of a plain tensor's first dim can be quantized on their own: every
// table of the encoding is per row (or global) and a row's bytes are whole.
bool PlainRowLocal(const Encoding& e, const std::vector<int64_t>& dims) {
  if (dims.size() < 2 || dims[0] < 1) return false;
  switch (e.kind) {
    case EncodingKind::kFloat:
    case EncodingKind::kPerTensor: return true;
    case EncodingKind::kPerChannel: return e.axis == 0 && e.scales.size() == static_cast<size_t>(dims[0]);
    case EncodingKind::kPerBlock:
    case EncodingKind::kLpbq: return dims.size() == 2 && RowLocal(e.kind, e.axis, e.block_sizes);
    default: return false;
  }
}

// The IR's storage size of `count` values of the encoding's dtype (0 when
// it overflows: no destination matches it).
size_t StorageBytesOf(const Encoding& enc, int64_t count) {
  return static_cast<size_t>(StorageBytes(enc.dtype, static_cast<uint64_t>(std::max<int64_t>(count, 0))).value_or(0));
}

// The (min, max) ranges of a [k, n] float32 source down its rows: per
// column (`bs` = 0) or per bs x 1 block, lo/hi [k / bs or 1][n]. Read in
// bands of whole rows through a StaticDataReader (a pread each for a
// mapped file, or the mapping where the probe found that faster), each band
// reduced by the min/max kernel (the rows of a block together).
// Min and max do not depend on the order: the same ranges for any pool.
// The count of NaN and Inf values goes to *nonfinite.
void SourceRanges(const StaticTransposition& t, int64_t bs, kernels::ThreadPool* pool, float* lo, float* hi,
                  size_t* nonfinite) {
  const int64_t k = t.rows, n = t.cols;
  const int64_t band_rows = std::min(k, BandRows(bs > 0 ? bs : 1, n));
  const size_t bands = static_cast<size_t>((k + band_rows - 1) / band_rows);
  const auto un = static_cast<size_t>(n);
  const StaticDataReader reader(*t.source);
  std::vector<size_t> bad(bands, 0);
  // Per column: each worker folds its bands into its own row of ranges.
  const size_t workers = kernels::PoolSize(pool);
  std::vector<float> wlo, whi;
  if (bs == 0) {
    wlo.assign(workers * un, std::numeric_limits<float>::infinity());
    whi.assign(workers * un, -std::numeric_limits<float>::infinity());
  }
  kernels::ParallelFor(pool, bands, [&](size_t b, size_t worker) {
    const int64_t k0 = static_cast<int64_t>(b) * band_rows, k1 = std::min(k, k0 + band_rows);
    const auto rows = static_cast<size_t>(k1 - k0);
    // Kept by the thread from weight to weight (fresh pages per band would
    // cost more than the read).
    thread_local std::vector<float> buf, blo, bhi;
    const ScratchRelease release(buf, blo, bhi);
    const float* band = FloatsOf(*t.source, reader, static_cast<size_t>(k0) * un, rows * un, buf);
    const std::vector<int64_t> dims = {k1 - k0, n};
    if (bs > 0) {
      const size_t at = static_cast<size_t>(k0 / bs) * un;
      kernels::MinMaxGrid(band, kernels::Grid::PerBlock(dims, {bs, 1}), lo + at, hi + at, {}, &bad[b]);
      return;
    }
    if (blo.size() < un) {
      blo.resize(un);
      bhi.resize(un);
    }
    kernels::MinMaxGrid(band, kernels::Grid::PerChannel(dims, 1), blo.data(), bhi.data(), {}, &bad[b]);
    float* wl = wlo.data() + worker * un;
    float* wh = whi.data() + worker * un;
    for (size_t c = 0; c < un; ++c) {
      wl[c] = std::min(wl[c], blo[c]);
      wh[c] = std::max(wh[c], bhi[c]);
    }
  });
  *nonfinite = std::accumulate(bad.begin(), bad.end(), size_t{0});
  if (bs > 0) return;
  for (size_t c = 0; c < un; ++c) {
    lo[c] = wlo[c];
    hi[c] = whi[c];
    for (size_t w = 1; w < workers; ++w) {
      lo[c] = std::min(lo[c], wlo[w * un + c]);
      hi[c] = std::max(hi[c], whi[w * un + c]);
    }
  }
}

// ComputeEncoding's work (it records what it learned about the values).
Result<Encoding> EncodingOf(std::string_view name, const StaticData& data, const std::vector<int64_t>& dims,
                           const EncodingRequest& req, const QuantizeOptions& options) {
  const StaticTransposition* t = FloatView(data, dims);
  auto plain = [&] { return ComputeEncoding(name, reinterpret_cast<const float*>(data.data()), dims, req, options); };
  if (!t || req.kind == EncodingKind::kFloat) return plain();
  if (req.kind != EncodingKind::kPerTensor && !RowLocal(req.kind, req.axis, req.block_sizes)) return plain();
  const int64_t n = dims[0], k = dims[1];
  const bool blocks = req.kind == EncodingKind::kPerBlock || req.kind == EncodingKind::kLpbq;
  const int64_t bs = blocks ? req.block_sizes[1] : 1;
  if (n < 1 || k < 1 || bs < 1 || k % bs != 0) return plain();  // its message
  const auto un = static_cast<size_t>(n), cells = static_cast<size_t>(blocks ? k / bs : 1);  // ranges per row
  // The view's row r is the source's column r, and its block j the source
  // rows [j bs, (j + 1) bs) of that column: in the source's own layout these
  // ranges are a grid per column (per channel on axis 1) or of bs x 1
  // blocks, which the min/max kernel reduces down the rows, reading the
  // source once, in order, without transposing anything. Per tensor: the
  // range of the columns' ranges. The buffers are the thread's, kept from
  // weight to weight (an LLM's ranges are fresh pages otherwise).
  thread_local std::vector<float> lo, hi, mins, maxs;
  const ScratchRelease release(lo, hi, mins, maxs);
  const size_t nc = un * cells;
  for (auto* v : {&lo, &hi, &mins, &maxs})
    if (v->size() < nc) v->resize(nc);
  size_t nonfinite = 0;
  SourceRanges(*t, blocks ? bs : 0, options.pool, lo.data(), hi.data(), &nonfinite);
  // NaN or Inf: the plain path's report (indices, policy).
  if (nonfinite) return plain();
  QuantizeOptions single = options;
  single.pool = nullptr;
  Result<Encoding> enc = Status::Ok();
  if (req.kind == EncodingKind::kPerTensor) {
    const float lo1 = *std::min_element(lo.begin(), lo.begin() + static_cast<std::ptrdiff_t>(un));
    const float hi1 = *std::max_element(hi.begin(), hi.begin() + static_cast<std::ptrdiff_t>(un));
    enc = EncodingFromRanges(name, dims, &lo1, &hi1, req, single);
  } else if (cells == 1) {
    enc = EncodingFromRanges(name, dims, lo.data(), hi.data(), req, single);
  } else {
    // [cells, n] to the encoding's [n, cells].
    kernels::Transpose2DStrided(sizeof(float), static_cast<int64_t>(cells), n, lo.data(), n, mins.data(),
                                static_cast<int64_t>(cells));
    kernels::Transpose2DStrided(sizeof(float), static_cast<int64_t>(cells), n, hi.data(), n, maxs.data(),
                                static_cast<int64_t>(cells));
    enc = EncodingFromRanges(name, dims, mins.data(), maxs.data(), req, single);
  }
  if (!enc.ok()) return plain();
  return enc;
}

// A transposed view's quantization goes through bands of its source when
// its encoding is row-local and a band's piece of each row is whole bytes.
bool ViewRowsQuantizable(const Encoding& enc, const std::vector<int64_t>& dims, size_t dst_bytes) {
  if (!RowLocal(enc.kind, enc.axis, enc.block_sizes)) return false;
  const int64_t n = dims[0], k = dims[1], bs = BlockLength(enc);
  return k % 8 == 0 && bs >= 1 && k % bs == 0 && dst_bytes == StorageBytesOf(enc, n * k);
}

// Rows [r0, r1) of a transposed view quantized to `enc` (the whole view's
// encoding) into `out`, (r1 - r0) rows of its row bytes: columns [r0, r1) of
// its [k, n] source, in bands of source rows, by `quantizer` when there is
// one (fixed-point encodings), else each band's floats transposed through a
// small buffer. False when a band failed (non-finite values, a bad
// encoding): the caller's plain path reports it. `known_finite`: the source
// need not be checked for NaN and Inf.
bool QuantizeViewRows(std::string_view name, const StaticTransposition& t, const Encoding& enc,
                      const TransposedQuantizer* quantizer, bool known_finite, int64_t r0, int64_t r1,
                      uint8_t* out, const QuantizeOptions& options) {
  const int64_t k = t.rows, w = r1 - r0;
  if (quantizer) {
    // Quantized in the source's layout, the bytes transposed. A window of
    // whole source rows of a mapped file is read into a buffer (one pread a
    // band: see StaticDataReader); a narrower one is read in place (a
    // pread per row would cost more).
    // Bands of whole 128-row tiles: a tile of int4 (int8: two) fills a
    // cache line of each output row, which the kernel streams to memory.
    const int64_t band_rows = BandRows(std::lcm<int64_t>(quantizer->block() >= k ? 1 : quantizer->block(), 128), w);
    const size_t bands = static_cast<size_t>((k + band_rows - 1) / band_rows);
    std::vector<char> ok(bands, 1);
    std::optional<StaticDataReader> reader;
    if (w == t.cols) reader.emplace(*t.source);
    const bool read = reader && reader->from_file();
    const auto* src = read ? nullptr : reinterpret_cast<const float*>(t.source->data());
    kernels::ParallelFor(options.pool, bands, [&](size_t b, size_t) {
      const int64_t k0 = static_cast<int64_t>(b) * band_rows, k1 = std::min(k, k0 + band_rows);
      if (!read) {
        ok[b] = quantizer->Run(src, r0, r1, k0, k1, out, known_finite) ? 1 : 0;
        return;
      }
      thread_local std::vector<float> buf;  // kept, as SourceRanges' band
      const ScratchRelease release(buf);
      const float* band =
          FloatsOf(*t.source, *reader, static_cast<size_t>(k0 * w), static_cast<size_t>((k1 - k0) * w), buf);
      ok[b] = quantizer->RunBand(band, w, r0, r1, k0, k1, out, known_finite) ? 1 : 0;
    });
    return std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
  }
  // A fixed-point encoding the quantizer refused: the caller's plain path
  // reports why.
  if (enc.kind != EncodingKind::kFloat) return false;
  // Float encodings (float16, elementwise: no tables to cut): floats
  // transposed through a band buffer.
  constexpr size_t bits = 16;
  QuantizeOptions quiet = options;
  quiet.pool = nullptr;
  quiet.nonfinite = NonFinitePolicy::kError;
  quiet.warnings = nullptr;
  return ForEachBand(t, r0, w, BandRows(1, w), options.pool, [&](const float* band, int64_t k0, int64_t k1) {
    // The band's piece of every output row, quantized together, then
    // copied to its rows (k0 and the band height are multiples of 8: each
    // piece starts and ends on a byte).
    const int64_t h = k1 - k0;
    const size_t row_bytes = static_cast<size_t>(h) * bits / 8;
    thread_local std::vector<uint8_t> piece;  // kept, as the band buffer
    const ScratchRelease release(piece);
    if (piece.size() < static_cast<size_t>(w) * row_bytes) piece.resize(static_cast<size_t>(w) * row_bytes);
    if (!QuantizeTensor(name, DType::kFloat32, band, {w, h}, enc, piece.data(),
                        static_cast<size_t>(w) * row_bytes, quiet)
             .ok())
      return false;
    for (int64_t r = 0; r < w; ++r)
      std::memcpy(out + static_cast<size_t>(r * k + k0) * bits / 8, piece.data() + static_cast<size_t>(r) * row_bytes,
                  row_bytes);
    return true;
  });
}

}  // namespace

void RangeOf(const StaticData& data, size_t count, kernels::ThreadPool* pool, float* lo, float* hi,
             size_t* nonfinite) {
  const StaticDataReader reader(data);
  const auto* values = reinterpret_cast<const float*>(data.data());
  if (!reader.from_file()) {
    kernels::ExecOptions eo;
    eo.pool = pool;
    kernels::MinMaxGrid(values, kernels::Grid::PerTensor({static_cast<int64_t>(count)}), lo, hi, eo, nonfinite);
    return;
  }
  // Chunks' ranges combined: min and max of canonical values do not depend
  // on the split (a chunk of NaN only gives +inf, -inf: no effect).
  constexpr size_t kChunk = size_t{256} << 10;  // floats (1 MiB)
  const size_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<float> clo(chunks), chi(chunks);
  std::vector<size_t> bad(chunks, 0);
  kernels::ParallelFor(pool, chunks, [&](size_t c, size_t) {
    const size_t b = c * kChunk, n = std::min(count, b + kChunk) - b;
    thread_local std::vector<float> buf;
    const ScratchRelease release(buf);
    kernels::MinMaxGrid(FloatsOf(data, reader, b, n, buf), kernels::Grid::PerTensor({static_cast<int64_t>(n)}), &clo[c], &chi[c], {},
                        &bad[c]);
  });
  float mn = std::numeric_limits<float>::infinity(), mx = -mn;
  for (size_t c = 0; c < chunks; ++c) {
    mn = std::min(mn, clo[c]);
    mx = std::max(mx, chi[c]);
  }
  if (chunks == 0) kernels::MinMaxGrid(values, kernels::Grid::PerTensor({0}), &mn, &mx);
  *lo = mn;
  *hi = mx;
  if (nonfinite) *nonfinite = std::accumulate(bad.begin(), bad.end(), size_t{0});
}

Result<Encoding> ComputeEncoding(std::string_view name, const StaticData& data, const std::vector<int64_t>& dims,
                                 const EncodingRequest& req, const QuantizeOptions& options) {
  Result<Encoding> enc = EncodingOf(name, data, dims, req, options);
  // Every value was read, and NaN or Inf would have been refused.
  if (enc.ok() && options.nonfinite == NonFinitePolicy::kError) data.MarkFinite();
  return enc;
}

std::shared_ptr<const StaticData> DeferQuantization(std::string_view name, std::shared_ptr<const StaticData> data,
                                                    const std::vector<int64_t>& dims, const Encoding& enc,
                                                    size_t dst_bytes) {
  if (!data || !data->mapped() || !data->known_finite()) return nullptr;
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count < 0 || data->size() != static_cast<size_t>(count) * sizeof(float)) return nullptr;
  // A transposed view with a fixed-point encoding: the quantizer's plan is
  // CheckQuantizable's (the encoding's tables are checked once, not twice:
  // an LLM's integer scales are 13M values).
  const StaticTransposition* view = FloatView(*data, dims);
  std::shared_ptr<const TransposedQuantizer> quantizer;
  if (view && enc.kind != EncodingKind::kFloat && ViewRowsQuantizable(enc, dims, dst_bytes)) {
    auto made = TransposedQuantizer::Make(name, dims[0], dims[1], enc);
    if (made.ok()) quantizer = std::make_shared<const TransposedQuantizer>(std::move(made.value()));
  }
  if (!quantizer && !CheckQuantizable(name, DType::kFloat32, dims, enc, dst_bytes).ok()) return nullptr;
  if (!view && PlainRowLocal(enc, dims)) {
    // In pieces of whole rows: a streaming writer quantizes a piece at a time
    // into a buffer it reuses.
    const int64_t rows = dims[0], cols = count / rows;
    const size_t bits = enc.kind == EncodingKind::kFloat ? 16 : DTypeBits(enc.dtype);
    const size_t row_bytes = static_cast<size_t>(cols) * bits / 8;
    if ((static_cast<size_t>(cols) * bits) % 8 == 0 && row_bytes * static_cast<size_t>(rows) == dst_bytes) {
      return StaticData::DeferredInPieces(
          dst_bytes, row_bytes,
          [name = std::string(name), data, dims, enc, rows, cols, row_bytes](uint8_t* out, size_t begin, size_t end) {
            const auto r0 = static_cast<int64_t>(begin / row_bytes);
            const auto r1 = static_cast<int64_t>((end + row_bytes - 1) / row_bytes);
            // The piece's rows are contiguous: one read from the file, into
            // a buffer kept from piece to piece (released, when large, only
            // once the quantization below has read it).
            thread_local std::vector<float> buf;
            const ScratchRelease release(buf);
            const StaticDataReader reader(*data);
            const float* src = FloatsOf(*data, reader, static_cast<size_t>(r0 * cols),
                                        static_cast<size_t>((r1 - r0) * cols), buf);
            std::vector<int64_t> piece = dims;
            piece[0] = r1 - r0;
            const bool whole = r0 == 0 && r1 == rows;
            // Cannot fail (finite values, checked layout); zeros rather than
            // uninitialized bytes if it ever did.
            if (!QuantizeTensor(name, DType::kFloat32, src, piece, whole ? enc : SliceRows(enc, rows, r0, r1), out,
                                end - begin, {})
                     .ok())
              std::memset(out, 0, end - begin);
          });
    }
  }
  if (const StaticTransposition* t = view; t && ViewRowsQuantizable(enc, dims, dst_bytes)) {
    // A source in a file, quantized whole: its bands of whole rows are read
    // from the file, not through the mapping (StaticDataReader), at the cost
    // of a buffer of the quantized tensor (its pieces would be column panels
    // of the source: a read per source row). Up to 16 MB (an LLM's
    // projections): a larger one is made in pieces read in place, so that
    // its write overlaps its quantization (a 64 MB weight made whole took
    // 0.16 s before its first byte was written, against 0.1 s in pieces).
    constexpr size_t kWholeBytes = size_t{16} << 20;
    if (quantizer && !t->source->file_path().empty() && dst_bytes <= kWholeBytes) {
      const int64_t n = dims[0];
      return StaticData::Deferred(dst_bytes, [name = std::string(name), data, t, enc, quantizer, n,
                                              dst_bytes](uint8_t* out) {
        // Cannot fail (finite values, checked layout); zeros rather than
        // uninitialized bytes if it ever did.
        if (!QuantizeViewRows(name, *t, enc, quantizer.get(), /*known_finite=*/true, 0, n, out, {}))
          std::memset(out, 0, dst_bytes);
      });
    }
    // Pieces of whole rows of the view (column panels of the source).
    const size_t row_bytes = dst_bytes / static_cast<size_t>(dims[0]);
    return StaticData::DeferredInPieces(
        dst_bytes, row_bytes,
        [name = std::string(name), data, t, enc, quantizer, row_bytes](uint8_t* out, size_t begin, size_t end) {
          const auto r0 = static_cast<int64_t>(begin / row_bytes);
          const auto r1 = static_cast<int64_t>((end + row_bytes - 1) / row_bytes);
          // Cannot fail (finite values, checked layout); zeros rather than
          // uninitialized bytes if it ever did.
          if (!QuantizeViewRows(name, *t, enc, quantizer.get(), /*known_finite=*/true, r0, r1, out, {})) std::memset(out, 0, end - begin);
        });
  }
  return StaticData::Deferred(dst_bytes, [name = std::string(name), data, dims, enc, dst_bytes](uint8_t* out) {
    // Cannot fail (finite values, checked layout); zeros rather than
    // uninitialized bytes if it ever did.
    if (!QuantizeTensor(name, *data, dims, enc, out, dst_bytes, {}).ok()) std::memset(out, 0, dst_bytes);
  });
}

Status QuantizeTensor(std::string_view name, const StaticData& data, const std::vector<int64_t>& dims,
                      const Encoding& enc, void* dst, size_t dst_bytes, const QuantizeOptions& options) {
  auto plain = [&] { return QuantizeTensor(name, DType::kFloat32, data.data(), dims, enc, dst, dst_bytes, options); };
  const StaticTransposition* t = FloatView(data, dims);
  if (!t || !ViewRowsQuantizable(enc, dims, dst_bytes)) return plain();
  // Non-finite values (refused, or saturated with a warning) and bad
  // encodings: the plain path over the whole tensor says so exactly.
  auto quantizer = TransposedQuantizer::Make(name, dims[0], dims[1], enc);
  if (!QuantizeViewRows(name, *t, enc, quantizer.ok() ? &quantizer.value() : nullptr, data.known_finite(), 0, dims[0],
                        static_cast<uint8_t*>(dst), options))
    return plain();
  return Status::Ok();
}

Result<std::vector<uint8_t>> QuantizeTensor(std::string_view name, const StaticData& data,
                                            const std::vector<int64_t>& dims, const Encoding& enc,
                                            const QuantizeOptions& options) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<uint8_t> out(StorageBytesOf(enc, std::max<int64_t>(count, 0)));
  QAIRT_RETURN_IF_ERROR(QuantizeTensor(name, data, dims, enc, out.data(), out.size(), options));
  return out;
}

}  // namespace qairt::quant
