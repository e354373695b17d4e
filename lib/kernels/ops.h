// Tensor-level operators over the kernels, independent of the IR: a dense
// row-major tensor, a scale grid (block size per dim), the kernel table and an
// optional thread pool. They split the work into fixed chunks (the split never
// depends on the thread count) so every result is identical for any number
// of threads. Preconditions are the caller's (quant/quantize.cpp checks them
// and reports errors with the tensor's name).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/config.h"
#include "kernels/threadpool.h"

namespace qairt::kernels {

// Which scale each element uses: element (i_0..i_{r-1}) uses scale index
// sum_d (i_d / blocks[d]) * stride_d over the scale grid of extents
// ceil(dims[d] / blocks[d]) (row-major). A block >= its dim means one scale
// along that dim: per-tensor = all blocks full, per-channel = block 1 on the
// channel axis, per-block = the block sizes.
struct Grid {
  std::vector<int64_t> dims;
  std::vector<int64_t> blocks;

  static Grid PerTensor(std::vector<int64_t> dims);
  static Grid PerChannel(std::vector<int64_t> dims, size_t axis);
  static Grid PerBlock(std::vector<int64_t> dims, std::vector<int64_t> blocks);

  size_t NumElements() const;
  size_t NumScales() const;
  std::vector<int64_t> ScaleDims() const;
};

struct QuantArgs {
  const float* scales = nullptr;    // Grid::NumScales() entries, finite, > 0
  const int32_t* offsets = nullptr;  // same count, or nullptr for all 0; |offset| <= 2^24
  int32_t qmin = 0;                  // clamp range (quantize only)
  int32_t qmax = 0;
};

struct ExecOptions {
  ThreadPool* pool = nullptr;              // null: the calling thread only
  const KernelConfig* config = nullptr;    // null: GetKernelConfig()
  size_t chunk = size_t{1} << 16;          // elements per task (multiple of 64)
};
// The kernel table `o` asks for.
inline const KernelConfig& ConfigFor(const ExecOptions& o) { return o.config ? *o.config : GetKernelConfig(); }

// x: NumElements() values of `in`; y: StorageBytes of the output (sub-byte
// packed in element order, low bits first).
// nonfinite (optional; float32 input only, left unchanged otherwise): set to
// the number of NaN/Inf inputs, counted chunk by chunk while the chunk is in
// cache, so a caller's bad-value policy costs no extra pass over memory.
void QuantizeGrid(InType in, const void* x, const Grid& g, const QuantArgs& a, QStorage out, void* y,
                  const ExecOptions& o = {}, size_t* nonfinite = nullptr);
void DequantizeGrid(QKind kind, const void* q, const Grid& g, const QuantArgs& a, float* y,
                    const ExecOptions& o = {});
// A [rows, cols] window of a float32 matrix (rows `ld` elements apart)
// quantized and written transposed: row c of y is column c of the window,
// y's rows `y_ld` elements of `out` apart (sub-byte storage packed along
// them: rows and y_ld multiples of 8 / bits). Window row r, column c uses
// scale and offset [(r / row_block) * scale_ld + c] of `a`: a scale per
// column (per channel of the transposed tensor), changing every row_block
// rows (its blocks along the window's rows). Each element is quantized
// exactly as QuantizeGrid quantizes it in the transposed tensor; the
// transpose moves the quantized bytes, a quarter of the floats' (int8).
// Runs on the calling thread (callers split their matrix into windows).
// nonfinite: as for QuantizeGrid.
void QuantizeTransposed(const float* x, size_t rows, size_t cols, size_t ld, const QuantArgs& a, size_t scale_ld,
                        size_t row_block, QStorage out, void* y, size_t y_ld, const ExecOptions& o = {},
                        size_t* nonfinite = nullptr);

// Per-scale min and max (NumScales() each); NaN ignored; +inf/-inf when a
// scale saw no value; zeros are +0.
// nonfinite (optional): as for QuantizeGrid.
void MinMaxGrid(const float* x, const Grid& g, float* mins, float* maxs, const ExecOptions& o = {},
                size_t* nonfinite = nullptr);

// counts[bins] = histogram over [lo, hi] (see HistParams); counts are set, not added.
void Histogram(const float* x, size_t n, float lo, float hi, uint32_t bins, uint64_t* counts,
               const ExecOptions& o = {});
size_t CountNonFinite(const float* x, size_t n, const ExecOptions& o = {});
// Per-tensor quantize-dequantize error: out[0] = sum of squared errors,
// out[1] = sum of squares of the input (SQNR = out[1] / out[0]).
void QdqError(const float* x, size_t n, const QdqErrParams& p, double out[2], const ExecOptions& o = {});
// out[0] = sum (x - y)^2, out[1] = sum x^2 (see SqErrFn); the same sums for
// any thread count.
void SquaredError(const float* x, const float* y, size_t n, double out[2], const ExecOptions& o = {});
void QuantizeBias(const float* b, size_t n, const BiasParams& p, int32_t* y, const ExecOptions& o = {});
void ConvertF32ToF16(const float* x, size_t n, Half* y, const ExecOptions& o = {});
// out [cols, rows] = in [rows, cols] transposed, elements of `elem` bytes
// (row-major; in and out must not overlap). Tiled (transpose.cc).
void Transpose2D(size_t elem, int64_t rows, int64_t cols, const void* in, void* out, const ExecOptions& o = {});
// The same for a [rows, cols] window of a matrix with rows `in_ld` elements
// apart, into rows `out_ld` elements apart (a panel of a larger transpose).
void Transpose2DStrided(size_t elem, int64_t rows, int64_t cols, const void* in, int64_t in_ld, void* out,
                        int64_t out_ld, const ExecOptions& o = {});
void ConvertF16ToF32(const Half* x, size_t n, float* y, const ExecOptions& o = {});

// ----- encoding math (AIMET's getComputedEncodings, formats.md §1.5) --------

enum class Schema : uint32_t { kAsymmetric = 0, kSymmetric = 1, kStrictSymmetric = 2, kUnsignedSymmetric = 3 };

// One grid in QNN convention for storage of `bitwidth` bits and the given
// signedness: real = (q + offset) * scale, q clamped to [qmin, qmax].
struct GridParams {
  float scale = 1.0f;
  int32_t offset = 0;
  int32_t qmin = 0;
  int32_t qmax = 0;
  float min = 0;  // represented range: (qmin + offset) * scale .. (qmax + offset) * scale
  float max = 0;
};

// The clamp range of a grid: full signed / unsigned range, strict symmetric
// drops the lowest code so the grid is symmetric around the zero point.
void ClampRange(uint32_t bitwidth, bool is_signed, Schema schema, int32_t* qmin, int32_t* qmax);

// From an observed [min, max] (finite). The range is first widened to contain
// 0, then to at least `min_range` (max = min + min_range), the minimum range
// for min == max (ONNX Runtime's MinimumRealRange, 1e-4 for QNN).
GridParams ComputeGrid(float min, float max, uint32_t bitwidth, bool is_signed, Schema schema, float min_range);

inline constexpr float kDefaultMinRange = 1e-4f;

// LPBQ: per-block symmetric scales at `bitwidth` from block min/max, then per
// channel float scale = max block scale / 2^(decompressed - bitwidth) and per
// block integer scale = clamp(roundeven(block scale / channel scale), 1,
// 2^(decompressed - bitwidth)); the effective block scale is int x channel.
// block_channel[b] names the channel of block b. When every channel owns
// the same number of consecutive blocks, the lpbq-scales kernel does the work.
void ComputeLpbq(size_t nblocks, const float* bmins, const float* bmaxs, const size_t* block_channel,
                 size_t nchannels, uint32_t bitwidth, uint32_t decompressed_bitwidth, float min_range,
                 float* channel_scales, int32_t* int_scales, float* effective_scales, const ExecOptions& o = {});

// Fused LPBQ for the common layout where every channel is one contiguous row
// of `row` elements split into blocks of `block` (weights [C, K] blocked
// along K, or [O, I, kh, kw] blocked along I): per row block min/max, scales,
// quantize and pack, while the row is still in cache. Signed `bitwidth`
// storage (4 -> packed s4). Writes channel_scales[rows], int_scales[rows *
// ceil(row / block)]. Each row must start on a whole output byte (row x
// storage bits a multiple of 8: an even row for s4); the caller checks.
void QuantizeLpbqRows(const float* x, size_t rows, size_t row, size_t block, uint32_t bitwidth,
                      uint32_t decompressed_bitwidth, float min_range, float* channel_scales, int32_t* int_scales,
                      void* y, const ExecOptions& o = {});

}  // namespace qairt::kernels
