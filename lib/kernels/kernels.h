// Prototypes of every micro-kernel: one declaration per line of each family's
// kernels.inc (no kernel exists outside those lists), their parameter structs
// and the scalar reference functions the tests compare against.
//
// Kernels are pure (style.md §7.7): no allocation, no globals, no OS calls,
// reentrant. They work on one contiguous range; layouts, threads and the
// bad-value policy live above them (kernels/ops.h, quant/quantize.h).
//
// Numeric spec shared by every quantize kernel (reference.cc is the
// executable form; SIMD kernels match it bit for bit):
//   x' = isnan(x) ? 0 : x                 (f16/bf16 inputs are widened first)
//   v  = roundeven(x' / s)                (IEEE float division, ties to even)
//   v  = v + zp                           zp = -offset (QNN: real = (q + offset) * s)
//   v  = v > qmin ? v : qmin ; v = v < qmax ? v : qmax   (x86 MAXPS/MINPS order)
//   q  = (int32)v                         (32-bit: v >= 2^31 gives INT32_MAX)
// Dequantize: y = float(int64(q) + offset) * s.
// Sub-byte outputs are packed in element order, low bits first (element 0 in
// the low nibble of byte 0), as ONNX and QNN store INT4/INT2; a partial last
// byte has its unused high bits cleared.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qairt::kernels {

// Storage element types that are not plain C++ types.
struct Half {  // IEEE binary16 bits
  uint16_t bits;
};
struct BFloat16 {  // bfloat16 bits (upper half of a float32)
  uint16_t bits;
};

// Scale / offset runs. Element i of a call belongs to run (first + i) / block
// and uses scales[run] and offsets[run] (offsets == nullptr: all 0). Per-tensor
// is one run (block >= n), a channel or block is one run, and block == 1 gives
// a scale per element (per-channel along the innermost axis).
struct QuantParams {
  const float* scales = nullptr;
  const int32_t* offsets = nullptr;
  size_t block = 1;
  size_t first = 0;
  int32_t qmin = 0;  // clamp range of the quantized grid (quantize only)
  int32_t qmax = 0;
  // Quantize: write the output with non-temporal stores where aligned (set by
  // the callers for outputs far larger than the caches). Results identical.
  // The caller issues one store fence (StoreFence) after its last streamed
  // call, before anyone reads the output: a fence per call costs hundreds of
  // cycles and LPBQ makes a call per row.
  bool stream = false;
  // Quantize: with each vector, prefetch the input this many elements ahead
  // (0: none). Set by callers streaming large inputs from memory: one
  // prefetch per line, interleaved with the compute, keeps reads in flight
  // where a burst of prefetches per piece stalled the core until the memory
  // answered. A hint: addresses past the input are allowed (no fault).
  size_t prefetch = 0;
};

// Preconditions (checked by the callers in ops.cpp): block >= 1, scales
// finite and > 0 (denormals allowed), |offset| <= 2^24.
using QuantFn = void (*)(size_t n, const void* x, void* y, const QuantParams* p);
using DequantFn = void (*)(size_t n, const void* q, float* y, const QuantParams* p);

// int32 bias: q = sat32(roundeven(b / (input_scale * weight_scales[i or 0]))),
// the scale product taken in float (as numpy does in ONNX Runtime's quantizer).
struct BiasParams {
  float input_scale = 1.0f;
  const float* weight_scales = nullptr;
  bool per_channel = false;  // weight_scales has n entries (else 1)
};
using BiasQuantFn = void (*)(size_t n, const float* b, int32_t* y, const BiasParams* p);

// Statistics. MinMax updates mins[r]/maxs[r] for every run r touched (same
// run numbering as QuantParams: first, block); NaN values are ignored; a zero
// result is always +0.0 so results do not depend on evaluation order.
using MinMaxFn = void (*)(size_t n, const float* x, size_t first, size_t block, float* mins, float* maxs);
// Element-wise over `rows` rows of n values, `ld` apart: mins[i] =
// min(mins[i], x[r * ld + i]) for r = 0, 1, ... in order (NaN ignored), same
// for maxs. Several rows per call (a block of weight rows sharing their
// scales) load and store mins and maxs once for all of them. Returns 1 when
// any of the values is NaN or infinite, else 0 (a check on the values as
// they pass, for callers that count them only when there are some).
using VMinMaxFn = size_t (*)(size_t n, size_t rows, size_t ld, const float* x, float* mins, float* maxs);
// Histogram over [lo, hi] with `bins` equal bins: t = (x - lo) * scale, where
// scale = bins / (hi - lo) in float; bin = min((int)t, bins - 1); values
// outside [lo, hi] and NaN are not counted (numpy.histogram's rule).
struct HistParams {
  float lo = 0;
  float hi = 0;
  float scale = 0;
  uint32_t bins = 0;
  size_t prefetch = 0;  // as QuantParams::prefetch
};
using HistFn = void (*)(size_t n, const float* x, const HistParams* p, uint64_t* counts);
// Quantize-dequantize error of a per-tensor grid, for MSE / SQNR searches:
// acc[0] += sum (x' - dq(q(x)))^2 and acc[1] += sum x'^2, squares and sums in
// double (x' as in the quantize spec). Not bit-exact across ISAs (summation order).
struct QdqErrParams {
  float scale = 1.0f;
  int32_t offset = 0;
  int32_t qmin = 0;
  int32_t qmax = 0;
};
using QdqErrFn = void (*)(size_t n, const float* x, const QdqErrParams* p, double* acc);
// Squared error of y against x, for noise and SQNR measurements: acc[0] +=
// sum (x - y)^2 (difference in float, square and sum in double), acc[1] +=
// sum x^2. NaN or Inf propagate into the sums. Not bit-exact across ISAs
// (summation order).
using SqErrFn = void (*)(size_t n, const float* x, const float* y, double* acc);
// Number of NaN / +-Inf values.
using NonFiniteFn = size_t (*)(size_t n, const float* x);

// fp32 <-> fp16, round to nearest even, NaN kept quiet (F16C semantics).
using F32ToF16Fn = void (*)(size_t n, const float* x, Half* y);
using F16ToF32Fn = void (*)(size_t n, const Half* x, float* y);

// LPBQ scales of one channel split into nblocks blocks (the formulas of
// ComputeLpbq in ops.h): block scale bs = float(max(mx / pos, -mn / neg)) in
// double, with mn = min(block min, 0), mx = max(block max, 0) widened to
// mn + min_range when narrower; channel scale cs = (max bs) / levels; integer
// scale k = clamp(roundeven(bs / cs), 1, levels); effective scale k * cs.
struct LpbqParams {
  double pos = 7;  // steps of the signed symmetric grid above / below zero
  double neg = 8;
  float min_range = 1e-4f;
  float levels = 16;  // 2^(decompressed bitwidth - bitwidth)
};
using LpbqScalesFn = void (*)(size_t nblocks, const float* bmins, const float* bmaxs, const LpbqParams* p,
                              float* channel_scale, int32_t* int_scales, float* effective_scales);

// int8 values -> packed 4/2-bit (low bits first; the value's low bits are
// kept), and packed -> int8 (sign- or zero-extended).
using PackFn = void (*)(size_t n, const int8_t* q, uint8_t* y);
using UnpackFn = void (*)(size_t n, const uint8_t* p, int8_t* q);

// Column-packed quantize: `rows` rows of n values, `ld` apart, each value
// quantized with its column's scale (p->scales[i]; p->offsets must be null:
// zero offsets) and clamp range (p->qmin/qmax) as the quantize spec says;
// y[i] = the rows' values of column i packed low bits first (row j in bits
// [bits * j, bits * (j + 1))), rows <= 32 / bits, unused high bits 0.
// p->prefetch as for the quantize kernels, per row. A transposed tensor's
// rows are the columns: transposing the dwords gives its packed bytes.
using QuantColsFn = void (*)(size_t n, size_t rows, size_t ld, const float* x, const QuantParams* p, uint32_t* y);
// Rows 0..15 of n dwords (`ld` apart) stored transposed: y row i (at y + i *
// y_stride) gets the 64 bytes of column i, dword g from row g. `stream`:
// rows at 64-byte aligned addresses are written with non-temporal stores
// (the caller fences after its last call, before anyone reads y): whole
// cache lines, no read for ownership, no eviction of what the caches hold.
using ColsStoreFn = void (*)(size_t n, const uint32_t* dw, size_t ld, uint8_t* y, size_t y_stride, bool stream);

}  // namespace qairt::kernels

// ---------------------------------------------------------------------------
// Declarations generated from the kernel lists.
// ---------------------------------------------------------------------------
namespace qairt::kernels {
#define QAIRT_KERNEL(isa, name, in, out) void name(size_t n, const void* x, void* y, const QuantParams* p);
#include "kernels/f32-quant/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name, kind) void name(size_t n, const void* q, float* y, const QuantParams* p);
#include "kernels/f32-dequant/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name) void name(size_t n, const float* b, int32_t* y, const BiasParams* p);
#include "kernels/bias-quant/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name, op) QAIRT_STATS_DECL_##op(name)
#define QAIRT_STATS_DECL_minmax(name) \
  void name(size_t n, const float* x, size_t first, size_t block, float* mins, float* maxs);
#define QAIRT_STATS_DECL_vminmax(name) \
  size_t name(size_t n, size_t rows, size_t ld, const float* x, float* mins, float* maxs);
#define QAIRT_STATS_DECL_hist(name) void name(size_t n, const float* x, const HistParams* p, uint64_t* counts);
#define QAIRT_STATS_DECL_qdqerr(name) void name(size_t n, const float* x, const QdqErrParams* p, double* acc);
#define QAIRT_STATS_DECL_sqerr(name) void name(size_t n, const float* x, const float* y, double* acc);
#define QAIRT_STATS_DECL_nonfinite(name) size_t name(size_t n, const float* x);
#include "kernels/stats/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name, dir) QAIRT_CVT_DECL_##dir(name)
#define QAIRT_CVT_DECL_f32_f16(name) void name(size_t n, const float* x, Half* y);
#define QAIRT_CVT_DECL_f16_f32(name) void name(size_t n, const Half* x, float* y);
#include "kernels/f16-convert/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name, op) QAIRT_PACK_DECL_##op(name)
#define QAIRT_PACK_DECL_pack4(name) void name(size_t n, const int8_t* q, uint8_t* y);
#define QAIRT_PACK_DECL_pack2(name) void name(size_t n, const int8_t* q, uint8_t* y);
#define QAIRT_PACK_DECL_unpacks4(name) void name(size_t n, const uint8_t* p, int8_t* q);
#define QAIRT_PACK_DECL_unpacku4(name) void name(size_t n, const uint8_t* p, int8_t* q);
#define QAIRT_PACK_DECL_unpacks2(name) void name(size_t n, const uint8_t* p, int8_t* q);
#define QAIRT_PACK_DECL_unpacku2(name) void name(size_t n, const uint8_t* p, int8_t* q);
#include "kernels/pack/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name)                                                                               \
  void name(size_t nblocks, const float* bmins, const float* bmaxs, const LpbqParams* p, float* channel_scale, \
            int32_t* int_scales, float* effective_scales);
#include "kernels/lpbq-scales/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name, op) QAIRT_COLS_DECL_##op(name)
#define QAIRT_COLS_DECL_QUANT(name) \
  void name(size_t n, size_t rows, size_t ld, const float* x, const QuantParams* p, uint32_t* y);
#define QAIRT_COLS_DECL_q2(name) QAIRT_COLS_DECL_QUANT(name)
#define QAIRT_COLS_DECL_q4(name) QAIRT_COLS_DECL_QUANT(name)
#define QAIRT_COLS_DECL_q8(name) QAIRT_COLS_DECL_QUANT(name)
#define QAIRT_COLS_DECL_q16(name) QAIRT_COLS_DECL_QUANT(name)
#define QAIRT_COLS_DECL_store16(name) \
  void name(size_t n, const uint32_t* dw, size_t ld, uint8_t* y, size_t y_stride, bool stream);
#include "kernels/f32-quant-cols/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels

// ---------------------------------------------------------------------------
// Scalar references (reference.cc of each family): the executable spec the
// tests compare against. Never dispatched.
// ---------------------------------------------------------------------------
namespace qairt::kernels::ref {
// in: 0 f32, 1 f16, 2 bf16. bits: 2, 4, 8, 16 or 32.
void Quant(int in, int bits, size_t n, const void* x, void* y, const QuantParams* p);
// bits 2/4/8/16/32, is_signed (32 is always signed).
void Dequant(int bits, bool is_signed, size_t n, const void* q, float* y, const QuantParams* p);
void BiasQuant(size_t n, const float* b, int32_t* y, const BiasParams* p);
void MinMax(size_t n, const float* x, size_t first, size_t block, float* mins, float* maxs);
size_t VMinMax(size_t n, size_t rows, size_t ld, const float* x, float* mins, float* maxs);
void Hist(size_t n, const float* x, const HistParams* p, uint64_t* counts);
void QdqErr(size_t n, const float* x, const QdqErrParams* p, double* acc);
void SqErr(size_t n, const float* x, const float* y, double* acc);
size_t NonFinite(size_t n, const float* x);
void F32ToF16(size_t n, const float* x, Half* y);
void F16ToF32(size_t n, const Half* x, float* y);
void Pack(int bits, size_t n, const int8_t* q, uint8_t* y);
void Unpack(int bits, bool is_signed, size_t n, const uint8_t* p, int8_t* q);
void LpbqScales(size_t nblocks, const float* bmins, const float* bmaxs, const LpbqParams* p, float* channel_scale,
                int32_t* int_scales, float* effective_scales);
// bits 2, 4, 8 or 16.
void QuantCols(int bits, size_t n, size_t rows, size_t ld, const float* x, const QuantParams* p, uint32_t* y);
void ColsStore16(size_t n, const uint32_t* dw, size_t ld, uint8_t* y, size_t y_stride);
}  // namespace qairt::kernels::ref
