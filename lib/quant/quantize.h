// Tensor-level quantization on IR encodings: what target processing (static
// weights), the executor (Q/DQ) and calibration (statistics -> encodings)
// call. Built on the IR-independent kernels/ops.h; this layer owns the
// checks and the bad-value policy, and names the tensor in every error.
//
// Bad values:
//  * NaN or +-Inf in the data is an error "tensor 'w': 3 of 4096 values are
//    not finite (first: NaN at index 17)". With
//    NonFinitePolicy::kWarnNanAsZero the call succeeds, appends that text to
//    `warnings`, quantizes NaN as 0.0 (the zero point) and saturates +-Inf to
//    the grid ends; computing an encoding from data with +-Inf stays an
//    error (there is no finite range to give it).
//  * A range with max - min < min_range (min == max: a constant tensor) is
//    widened to max = min + min_range after the range is made to contain 0;
//    min_range defaults to 1e-4 (ONNX Runtime's MinimumRealRange for QNN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "ir/encoding.h"
#include "kernels/ops.h"
#include "support/static_data.h"
#include "support/status.h"

namespace qairt::quant {

enum class NonFinitePolicy : uint32_t { kError = 0, kWarnNanAsZero = 1 };

struct QuantizeOptions {
  NonFinitePolicy nonfinite = NonFinitePolicy::kError;
  float min_range = kernels::kDefaultMinRange;
  kernels::ThreadPool* pool = nullptr;           // null: calling thread only
  std::vector<std::string>* warnings = nullptr;  // receives kWarnNanAsZero messages
};

// Quantizes `dims`-shaped data of float type `src_dtype` (float32, float16 or
// bfloat16) with a per-tensor / per-channel / per-block / LPBQ encoding (or
// a float16 Float encoding: conversion) into `dst` (exactly the encoding
// dtype's StorageBytes, sub-byte types packed low bits first). When the
// bad-value policy rejects the data (NaN/Inf under kError) the status names
// the tensor and `dst`'s contents are unspecified: float32 data is checked
// while it is quantized, not in a pass of its own.
Status QuantizeTensor(std::string_view name, DType src_dtype, const void* src, const std::vector<int64_t>& dims,
                      const Encoding& enc, void* dst, size_t dst_bytes, const QuantizeOptions& options = {});
Result<std::vector<uint8_t>> QuantizeTensor(std::string_view name, DType src_dtype, const void* src,
                                            const std::vector<int64_t>& dims, const Encoding& enc,
                                            const QuantizeOptions& options = {});

// The inverse: `src` holds StorageBytes(enc.dtype, count) bytes.
Status DequantizeTensor(std::string_view name, const void* src, size_t src_bytes, const std::vector<int64_t>& dims,
                        const Encoding& enc, float* dst, const QuantizeOptions& options = {});

// Quantizes float32 `data` with `enc` and dequantizes it back in place: the
// values a tensor holds when it runs at that encoding. `scratch` holds the
// quantized bytes (reused between calls).
Status FakeQuantize(std::string_view name, float* data, const std::vector<int64_t>& dims, const Encoding& enc,
                    std::vector<uint8_t>* scratch, const QuantizeOptions& options = {});

// What encoding to compute from data.
struct EncodingRequest {
  EncodingKind kind = EncodingKind::kPerTensor;  // per-tensor, per-channel, per-block or LPBQ
  DType dtype = DType::kUFixed8;                 // fixed-point storage type
  uint32_t bitwidth = 0;                         // 0: the dtype's
  Symmetry symmetry = Symmetry::kAsymmetric;
  int32_t axis = -1;                             // channel axis, or block axis
  std::vector<int64_t> block_sizes;              // per-block / LPBQ
  uint32_t decompressed_bitwidth = 0;            // LPBQ
};

// Min/max encoding of float32 data (AIMET's formulas, formats.md §1.5).
Result<Encoding> ComputeEncoding(std::string_view name, const float* data, const std::vector<int64_t>& dims,
                                 const EncodingRequest& req, const QuantizeOptions& options = {});

// The encoding ComputeEncoding gives for data whose cells (the request's
// grid over `dims`, row-major) have the finite ranges [mins[i], maxs[i]]: for
// readers that reduce the values their own way (a transposed weight read
// from its source in bands).
Result<Encoding> EncodingFromRanges(std::string_view name, const std::vector<int64_t>& dims, const float* mins,
                                    const float* maxs, const EncodingRequest& req, const QuantizeOptions& options = {});

// The same two on a static tensor's data (float32 `dims`). A transposed view
// (StaticData::TransposeOf) is read from its source in bands of rows when the
// encoding is row-local (per tensor, per channel on axis 0, blocks within
// rows), so its transpose is never materialized; anything else reads
// data(). Results are identical to the calls on data().
Result<Encoding> ComputeEncoding(std::string_view name, const StaticData& data, const std::vector<int64_t>& dims,
                                 const EncodingRequest& req, const QuantizeOptions& options = {});
Result<std::vector<uint8_t>> QuantizeTensor(std::string_view name, const StaticData& data,
                                            const std::vector<int64_t>& dims, const Encoding& enc,
                                            const QuantizeOptions& options = {});
Status QuantizeTensor(std::string_view name, const StaticData& data, const std::vector<int64_t>& dims,
                      const Encoding& enc, void* dst, size_t dst_bytes, const QuantizeOptions& options = {});

// MinMaxGrid's per-tensor range of the first `count` float32 values of
// `data` (NaN ignored, zeros canonical) and their count of NaN and Inf, read
// in chunks through a StaticDataReader (a mapped file with pread): the same
// results as the kernel on data().
void RangeOf(const StaticData& data, size_t count, kernels::ThreadPool* pool, float* lo, float* hi,
             size_t* nonfinite);

// The checks QuantizeTensor makes before reading any value (shape, source
// type, encoding tables, destination size): when they pass, quantizing
// finite values of that layout cannot fail.
Status CheckQuantizable(std::string_view name, DType src_dtype, const std::vector<int64_t>& dims, const Encoding& enc,
                        size_t dst_bytes);

// Quantization of a tensor [n, k] stored as its transpose, a float32 source
// [k, n] (a MatMul weight seen as a FullyConnected's), window by window:
// each window of source rows is quantized in the source's layout, a scale
// per source column, and its quantized bytes are transposed into place, so
// the floats are read once and never copied. Bits identical to
// QuantizeTensor on the transposed floats. Made once per tensor (the
// encoding checked); each window's scales are laid out in the source's
// layout as it is quantized, so a deferred quantization holds the encoding's
// shared tables, not a copy of them.
class TransposedQuantizer {
 public:
  // For a fixed-point encoding whose scales are per tensor, per row of
  // [n, k] (per channel, axis 0) or per blocks within rows; otherwise the
  // error QuantizeTensor would give, or kUnsupported for other layouts and
  // float encodings.
  static Result<TransposedQuantizer> Make(std::string_view name, int64_t n, int64_t k, const Encoding& enc);
  int bits() const { return bits_; }
  int64_t block() const { return block_; }  // source rows per scale (k when a whole row has one)
  // Rows [r0, r1) of [n, k], columns [k0, k1) (k0 and k1 - k0 multiples of
  // block() and of 8, or k1 == k), read from `src` (the source, rows n
  // floats apart) into `out`: row r at out + (r - r0) x k x bits / 8 bytes,
  // its columns from k0 at bit k0 x bits. False when a value is NaN or Inf
  // (some bytes then written); not looked for when `known_finite`.
  bool Run(const float* src, int64_t r0, int64_t r1, int64_t k0, int64_t k1, uint8_t* out,
           bool known_finite = false) const {
    return RunBand(src + k0 * n_ + r0, n_, r0, r1, k0, k1, out, known_finite);
  }
  // The same from a copy of that window of the source: `band` holds source
  // rows [k0, k1), columns [r0, r1), rows `ld` floats apart.
  bool RunBand(const float* band, int64_t ld, int64_t r0, int64_t r1, int64_t k0, int64_t k1, uint8_t* out,
               bool known_finite = false) const;

 private:
  Encoding enc_;      // its tables shared with the graph's (CowVector)
  int64_t cells_ = 1;  // scales per row of [n, k]: cell j covers source rows [j block, (j + 1) block)
  int64_t n_ = 0, k_ = 0, block_ = 1;
  int32_t qmin_ = 0, qmax_ = 0;
  int bits_ = 8;
};

// `data` quantized to `enc` (dst_bytes bytes) as StaticData::Deferred: the
// bytes are made when a writer asks for them. Only when holding on to the
// source costs nothing and quantizing cannot fail: the float32 source is
// mapped from a file, known finite (StaticData::known_finite) and passes
// CheckQuantizable. Null otherwise: quantize now.
std::shared_ptr<const StaticData> DeferQuantization(std::string_view name, std::shared_ptr<const StaticData> data,
                                                    const std::vector<int64_t>& dims, const Encoding& enc,
                                                    size_t dst_bytes);

// int32 bias with scale input_scale x weight scale (per tensor or per channel
// of `weight_enc`, which must have one scale or `n` scales), offset 0.
Status QuantizeBias(std::string_view name, const float* bias, size_t n, float input_scale, const Encoding& weight_enc,
                    int32_t* dst, const QuantizeOptions& options = {});

}  // namespace qairt::quant
