// QuantizeTransposed: a window of a [K, N] matrix quantized as the rows of
// its transpose [N, K] (a MatMul weight read as a FullyConnected one), its
// bytes written into rows of the transposed output. Two ways: with zero
// offsets and a width of 2 to 16 bits, the column-packed quantize kernels
// put each column's values straight into packed dwords, which are then
// transposed; otherwise rows are quantized into an int8 (or wider) tile,
// sub-byte values packed by row groups, and the bytes transposed.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/config.h"
#include "kernels/ops.h"

namespace qairt::kernels {

namespace {

// Rows of kRows per tile (the int8-tile path).
constexpr size_t kRows = 64;

// The column-packed path. A tile is 16 dwords of every column: 16 x (32 /
// bits) rows, whose values fill one 64-byte line of each y row. Per tile
// and chunk of columns, dword row g of `dwords` holds rows [g per, (g + 1)
// per) of each column packed (per = 32 / bits); ColsStore16 writes the
// transpose as whole lines, streamed around the caches when aligned. (y's
// rows lie a tensor row apart, often a power of two: pieces of a line per
// row, written through the cache, kept a few sets busy and read every line
// back from memory before writing it.) A last, shorter tile goes through
// Transpose2DStrided and copies of its bytes. Chunks keep `dwords` in L1.
void QuantizeTransposedPacked(const KernelConfig& c, QuantColsFn fn, const float* x, size_t rows, size_t cols,
                              size_t ld, const QuantArgs& a, size_t scale_ld, size_t row_block, int bits,
                              uint8_t* yb, size_t y_ld, size_t* nonfinite) {
  constexpr size_t kGroups = 16;
  constexpr size_t kChunk = 256;  // 16 KiB of dwords
  const size_t per = 32 / static_cast<size_t>(bits);
  const size_t tile_rows = kGroups * per;
  alignas(64) uint32_t dw[kGroups * kChunk];
  thread_local std::vector<uint8_t> moved;  // the short tile's transpose
  const size_t y_row = y_ld * static_cast<size_t>(bits) / 8;
  const bool stream = y_row % 64 == 0;  // each row's line starts aligned when the first does
  bool streamed = false;
  size_t bad = 0;
  for (size_t r0 = 0; r0 < rows; r0 += tile_rows) {
    const size_t tr = std::min(tile_rows, rows - r0);
    const size_t groups = (tr + per - 1) / per;
    const size_t piece = tr * static_cast<size_t>(bits) / 8;  // bytes of one y row from this tile
    uint8_t* const y0 = yb + r0 * static_cast<size_t>(bits) / 8;
    const bool full = groups == kGroups && piece == 64;
    for (size_t c0 = 0; c0 < cols; c0 += kChunk) {
      const size_t w = std::min(kChunk, cols - c0);
      for (size_t g = 0; g < groups; ++g) {
        const size_t r = r0 + g * per;
        const size_t n_rows = std::min(per, rows - r);
        const float* xr = x + r * ld + c0;
        if (nonfinite)
          for (size_t j = 0; j < n_rows; ++j) bad += c.nonfinite(w, xr + j * ld);
        QuantParams qp;
        qp.scales = a.scales + (r / row_block) * scale_ld + c0;
        qp.qmin = a.qmin;
        qp.qmax = a.qmax;
        fn(w, n_rows, ld, xr, &qp, dw + g * w);
      }
      if (full) {
        c.cols_store16(w, dw, w, y0 + c0 * y_row, y_row, stream);
        streamed = streamed || stream;
        continue;
      }
      const size_t stride = groups * 4;
      if (moved.size() < w * stride) moved.resize(kChunk * kGroups * 4);
      Transpose2DStrided(4, static_cast<int64_t>(groups), static_cast<int64_t>(w), dw, static_cast<int64_t>(w),
                         moved.data(), static_cast<int64_t>(groups));
      for (size_t col = 0; col < w; ++col) std::memcpy(y0 + (c0 + col) * y_row, moved.data() + col * stride, piece);
    }
  }
  if (streamed) StoreFence();
  if (nonfinite) *nonfinite = bad;
}

// Sub-byte values of `per` consecutive tile rows packed into one row of
// bytes (element j of a group in bits [j bits, (j + 1) bits)): the order
// they have along a y row once the bytes are transposed.
template <int kBits>
void PackRowGroups(const uint8_t* tile, size_t groups, size_t cols, uint8_t* out) {
  constexpr size_t kPer = 8 / kBits;
  constexpr unsigned kMask = (1u << kBits) - 1u;
  // Eight columns per step in a 64-bit word (each byte's field masked
  // before the shift, so no bits cross into the next byte): the byte loop
  // stays scalar at -O2, and was a fifth of an LLM's int4 weight
  // quantization.
  constexpr uint64_t kLanes = 0x0101010101010101ull * kMask;
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* rows = tile + g * kPer * cols;
    uint8_t* dst = out + g * cols;
    size_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      uint64_t word = 0;
      for (size_t j = 0; j < kPer; ++j) {
        uint64_t v;
        std::memcpy(&v, rows + j * cols + c, 8);
        word |= (v & kLanes) << (kBits * j);
      }
      std::memcpy(dst + c, &word, 8);
    }
    for (; c < cols; ++c) {
      unsigned byte = 0;
      for (size_t j = 0; j < kPer; ++j) byte |= (rows[j * cols + c] & kMask) << (kBits * j);
      dst[c] = static_cast<uint8_t>(byte);
    }
  }
}

}  // namespace

void QuantizeTransposed(const float* x, size_t rows, size_t cols, size_t ld, const QuantArgs& a, size_t scale_ld,
                        size_t row_block, QStorage out, void* y, size_t y_ld, const ExecOptions& o,
                        size_t* nonfinite) {
  const KernelConfig& c = ConfigFor(o);
  const int bits = StorageBits(out);
  if (const QuantColsFn cols_fn = a.offsets == nullptr ? c.QuantCols(bits) : nullptr) {
    // Each dword's rows must share their scales: whole groups in a block.
    const size_t per = 32 / static_cast<size_t>(bits);
    if (row_block >= rows || row_block % per == 0)
      return QuantizeTransposedPacked(c, cols_fn, x, rows, cols, ld, a, scale_ld, row_block, bits,
                                      static_cast<uint8_t*>(y), y_ld, nonfinite);
  }
  // Sub-byte values are quantized into int8 (their clamp range fits), then
  // the rows of each group that shares y's bytes are packed, and the packed
  // bytes are transposed.
  const size_t elem = bits <= 8 ? 1 : static_cast<size_t>(bits) / 8;
  const size_t per = bits < 8 ? static_cast<size_t>(8 / bits) : 1;
  const QuantFn fn = c.Quant(InType::kF32, bits < 8 ? QStorage::kQ8 : out);
  auto* yb = static_cast<uint8_t*>(y);
  // Tiles of kRows window rows, quantized into `tile`, transposed into
  // `moved` (contiguous: y's rows lie a whole tensor row apart, and a
  // transpose straight into them would land its 16 or 32 rows in one cache
  // set), then copied out, one cache line of int8 per y row and tile.
  thread_local std::vector<uint8_t> tile, packed, moved;  // kept: fresh pages per call would cost more than the work
  if (tile.size() < kRows * cols * elem) tile.resize(kRows * cols * elem);
  if (moved.size() < kRows * cols * elem) moved.resize(kRows * cols * elem);
  if (per > 1 && packed.size() < kRows / per * cols) packed.resize(kRows / per * cols);
  // Raw pointers: each use of a thread_local in a shared library may call
  // __tls_get_addr (2% of an LLM's int4 weight quantization).
  uint8_t* const tile_p = tile.data();
  uint8_t* const moved_p = moved.data();
  uint8_t* const packed_p = packed.data();
  size_t bad = 0;
  for (size_t r0 = 0; r0 < rows; r0 += kRows) {
    const size_t tr = std::min(kRows, rows - r0);
    for (size_t r = r0; r < r0 + tr; ++r) {
      const float* row = x + r * ld;
      if (nonfinite) bad += c.nonfinite(cols, row);
      QuantParams qp;
      const size_t base = (r / row_block) * scale_ld;
      qp.scales = a.scales + base;
      qp.offsets = a.offsets ? a.offsets + base : nullptr;
      qp.block = 1;
      qp.qmin = a.qmin;
      qp.qmax = a.qmax;
      // The window's rows are short pieces of long rows: the hardware
      // prefetchers stop at each, so every vector prefetches its place in
      // the next row (past the window's end it is only a hint).
      qp.prefetch = ld;
      fn(cols, row, tile_p + (r - r0) * cols * elem, &qp);
    }
    const uint8_t* from = tile_p;
    const size_t trows = tr / per;  // rows of bytes to transpose
    if (bits == 4) {
      PackRowGroups<4>(tile_p, trows, cols, packed_p);
      from = packed_p;
    } else if (bits == 2) {
      PackRowGroups<2>(tile_p, trows, cols, packed_p);
      from = packed_p;
    }
    Transpose2DStrided(elem, static_cast<int64_t>(trows), static_cast<int64_t>(cols), from,
                       static_cast<int64_t>(cols), moved_p, static_cast<int64_t>(trows));
    const size_t piece = trows * elem;  // bytes of one y row from this tile
    uint8_t* const y0 = yb + r0 * static_cast<size_t>(bits) / 8;
    const size_t y_row = y_ld * static_cast<size_t>(bits) / 8;
    if (piece == 32) {  // a whole int4 tile, or 32 int8 rows: a fixed-size copy, inlined
      for (size_t col = 0; col < cols; ++col) std::memcpy(y0 + col * y_row, moved_p + col * 32, 32);
    } else {
      for (size_t col = 0; col < cols; ++col) std::memcpy(y0 + col * y_row, moved_p + col * piece, piece);
    }
  }
  if (nonfinite) *nonfinite = bad;
}


}  // namespace qairt::kernels
