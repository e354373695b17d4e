#include "quant/quantize.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/diagnostic.h"
#include "ir/shape.h"
#include "support/thread_scratch.h"

namespace qairt::quant {

namespace k = kernels;

namespace {

Status Invalid(std::string_view name, const std::string& what) {
  return InvalidArgument("tensor '{}': {}", name, what);
}

Result<size_t> CountOf(std::string_view name, const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (auto d : dims) {
    if (d < 0) return Invalid(name, "shape has an unknown dim; quantization needs a static shape");
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
      return Invalid(name, "element count overflows");
    n *= static_cast<uint64_t>(d);
  }
  return static_cast<size_t>(n);
}

k::ExecOptions Exec(const QuantizeOptions& o) {
  k::ExecOptions e;
  e.pool = o.pool;
  return e;
}

bool IsNonFiniteBits(uint32_t exp_bits, uint32_t mask) { return (exp_bits & mask) == mask; }

// Counts NaN/Inf of a float buffer and remembers the first one.
struct NonFiniteScan {
  size_t count = 0;
  size_t first = 0;
  bool first_is_nan = false;
};

NonFiniteScan Scan(DType t, const void* data, size_t n, const k::ExecOptions& e) {
  NonFiniteScan s;
  const bool f32 = t == DType::kFloat32;
  if (f32 && (s.count = k::CountNonFinite(static_cast<const float*>(data), n, e)) == 0) return s;
  // Slow path only when something is wrong (float32) or for 16-bit inputs.
  const uint32_t mask = f32 ? 0x7f800000u : t == DType::kFloat16 ? 0x7c00u : 0x7f80u;
  const uint32_t mant = f32 ? 0x7fffffu : t == DType::kFloat16 ? 0x3ffu : 0x7fu;
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t u = 0;
    std::memcpy(&u, static_cast<const uint8_t*>(data) + (f32 ? 4 : 2) * i, f32 ? 4 : 2);
    if (!IsNonFiniteBits(u, mask)) continue;
    if (count++ == 0) {
      s.first = i;
      s.first_is_nan = (u & mant) != 0;
      if (f32) return s;  // count already known
    }
  }
  s.count = count;
  return s;
}

Status ApplyPolicy(std::string_view name, const NonFiniteScan& s, size_t n, const QuantizeOptions& o) {
  if (s.count == 0) return Status::Ok();
  const std::string msg = fmt::format("tensor '{}': {} of {} values are not finite (first: {} at index {})", name,
                                      s.count, n, s.first_is_nan ? "NaN" : "Inf", s.first);
  if (o.nonfinite == NonFinitePolicy::kError)
    return Status(StatusCode::kInvalidArgument,
                  msg + "; pass NonFinitePolicy::kWarnNanAsZero to quantize NaN as 0 instead");
  if (o.warnings) o.warnings->push_back(msg + "; NaN quantized as 0, Inf saturated");
  return Status::Ok();
}

Result<k::InType> InTypeOf(std::string_view name, DType t) {
  switch (t) {
    case DType::kFloat32: return k::InType::kF32;
    case DType::kFloat16: return k::InType::kF16;
    case DType::kBFloat16: return k::InType::kBF16;
    default: return Invalid(name, fmt::format("source dtype {} is not float32, float16 or bfloat16", DTypeName(t)));
  }
}

// Everything the ops need for one fixed-point encoding.
struct Plan {
  k::Grid grid;
  std::vector<float> scales;     // effective scale per grid cell
  std::vector<int32_t> offsets;  // empty: all 0
  int32_t qmin = 0, qmax = 0;
  int bits = 0;
  bool is_signed = false;
};

// LPBQ: the channel of each block (grid index order) is its grid index with
// the block axis dropped. Walked as an odometer: no division per block. The
// table is the calling thread's, reused from tensor to tensor (an LLM's
// tables are 8 bytes a block: fresh pages for every weight otherwise).
thread_local std::vector<size_t> block_channel_table;
const std::vector<size_t>& BlockChannels(const std::vector<int64_t>& scale_dims, size_t axis, size_t* nchannels) {
  std::vector<size_t>& channel = block_channel_table;
  const size_t r = scale_dims.size();
  std::vector<size_t> ch_stride(r, 0);
  size_t nch = 1;
  for (size_t d = r; d-- > 0;) {
    if (d == axis) continue;
    ch_stride[d] = nch;
    nch *= static_cast<size_t>(scale_dims[d]);
  }
  if (nchannels) *nchannels = nch;
  size_t nb = 1;
  for (int64_t v : scale_dims) nb *= static_cast<size_t>(v);
  channel.resize(nb);
  if (r == 0 || nb == 0) return channel;
  // Innermost dim in runs; the odometer advances the outer dims.
  const auto inner = static_cast<size_t>(scale_dims[r - 1]);
  std::vector<int64_t> idx(r, 0);
  size_t ch = 0;
  for (size_t b = 0; b < nb; b += inner) {
    for (size_t i = 0; i < inner; ++i) channel[b + i] = ch + i * ch_stride[r - 1];
    for (size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < scale_dims[d]) {
        ch += ch_stride[d];
        break;
      }
      ch -= static_cast<size_t>(scale_dims[d] - 1) * ch_stride[d];
      idx[d] = 0;
    }
  }
  return channel;
}

// `tables`: the plan keeps its scales and offsets; without, they are only
// checked (in the thread's scratch: a check per deferred weight would
// otherwise allocate an LLM's scale tables again, fresh pages each time).
Result<Plan> MakePlan(std::string_view name, const std::vector<int64_t>& dims, const Encoding& enc,
                      bool tables = true) {
  Diagnostics diags;
  if (!ValidateEncoding(enc, std::string(name), Shape::FromExtents(dims), kInvalidId, &diags))
    return Status(StatusCode::kInvalidArgument, JoinMessages(diags));
  if (!enc.is_fixed_point() && !IsInteger(enc.dtype))
    return Invalid(name, fmt::format("encoding dtype {} is not fixed-point", DTypeName(enc.dtype)));
  Plan p;
  p.bits = static_cast<int>(DTypeBits(enc.dtype));
  p.is_signed = IsSigned(enc.dtype);
  if (p.bits != 2 && p.bits != 4 && p.bits != 8 && p.bits != 16 && p.bits != 32)
    return Status(StatusCode::kUnsupported,
                  fmt::format("tensor '{}': {}-bit storage is not supported", name, p.bits));
  if (p.bits == 32 && !p.is_signed)
    return Status(StatusCode::kUnsupported, fmt::format("tensor '{}': unsigned 32-bit storage is not supported", name));
  const QuantRange r = QuantRangeOf(enc.dtype, enc.effective_bitwidth());
  p.qmin = static_cast<int32_t>(r.qmin + (enc.symmetry == Symmetry::kStrictSymmetric ? 1 : 0));
  p.qmax = static_cast<int32_t>(r.qmax);
  switch (enc.kind) {
    case EncodingKind::kPerTensor: p.grid = k::Grid::PerTensor(dims); break;
    case EncodingKind::kPerChannel: p.grid = k::Grid::PerChannel(dims, static_cast<size_t>(enc.axis)); break;
    case EncodingKind::kPerBlock:
    case EncodingKind::kLpbq: p.grid = k::Grid::PerBlock(dims, enc.block_sizes); break;
    default:
      return Status(StatusCode::kUnsupported, fmt::format("tensor '{}': {} encodings cannot be applied by the kernels",
                                                          name, EncodingKindName(enc.kind)));
  }
  thread_local std::vector<float> checked_scales;
  thread_local std::vector<int32_t> checked_offsets;
  const ScratchRelease release(checked_scales, checked_offsets, block_channel_table);
  std::vector<float>& scales = tables ? p.scales : checked_scales;
  std::vector<int32_t>& offsets = tables ? p.offsets : checked_offsets;
  offsets.clear();
  if (enc.kind == EncodingKind::kLpbq && !tables) {
    // Only checked: the encoding is valid (integer scales in [1, max], one
    // per block; channel scales finite and > 0), so every product is > 0
    // and finite when each channel scale times the largest integer scale
    // is. Checked per channel, not per block (an LLM's weights have ~16M
    // blocks, and each deferred weight is checked twice).
    const auto max_int = static_cast<float>(int64_t{1} << (enc.decompressed_bitwidth - enc.effective_bitwidth()));
    bool products_finite = true;
    for (const float s : enc.scales) products_finite &= std::isfinite(s * max_int);
    if (products_finite) return p;
  }
  if (enc.kind == EncodingKind::kLpbq) {
    // Effective block scale = integer block scale x channel scale; the
    // channel of a block is its grid index without the block axis.
    const std::vector<size_t>& channel = BlockChannels(p.grid.ScaleDims(), static_cast<size_t>(enc.axis), nullptr);
    scales.resize(channel.size());
    for (size_t b = 0; b < channel.size(); ++b)
      scales[b] = static_cast<float>(enc.block_int_scales[b]) * enc.scales[channel[b]];
  } else {
    scales.assign(enc.scales.begin(), enc.scales.end());
    if (!enc.float_offsets.empty()) {
      offsets.resize(enc.float_offsets.size());
      for (size_t i = 0; i < offsets.size(); ++i) {
        const float f = enc.float_offsets[i];
        if (f != std::nearbyint(f))
          return Status(StatusCode::kUnsupported,
                        fmt::format("tensor '{}': float_offsets[{}] = {} is not an integer", name, i, f));
        offsets[i] = static_cast<int32_t>(f);
      }
    } else {
      offsets.assign(enc.offsets.begin(), enc.offsets.end());
    }
  }
  if (scales.size() != p.grid.NumScales())
    return Invalid(name, fmt::format("{} scales for a grid of {}", scales.size(), p.grid.NumScales()));
  if (!offsets.empty() && offsets.size() != scales.size())
    return Invalid(name, fmt::format("{} offsets for {} scales", offsets.size(), scales.size()));
  for (size_t i = 0; i < scales.size(); ++i)
    if (!(scales[i] > 0.0f) || !std::isfinite(scales[i]))
      return Invalid(name, fmt::format("scale {} is {}; scales must be finite and > 0", i, scales[i]));
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] > (1 << 24) || offsets[i] < -(1 << 24))
      return Invalid(name, fmt::format("offset {} is {}; |offset| must be <= 2^24", i, offsets[i]));
  return p;
}

k::QStorage StorageOf(int bits) {
  switch (bits) {
    case 2: return k::QStorage::kQ2;
    case 4: return k::QStorage::kQ4;
    case 8: return k::QStorage::kQ8;
    case 16: return k::QStorage::kQ16;
    default: return k::QStorage::kQ32;
  }
}

k::QKind KindOf(int bits, bool is_signed) {
  switch (bits) {
    case 2: return is_signed ? k::QKind::kS2 : k::QKind::kU2;
    case 4: return is_signed ? k::QKind::kS4 : k::QKind::kU4;
    case 8: return is_signed ? k::QKind::kS8 : k::QKind::kU8;
    case 16: return is_signed ? k::QKind::kS16 : k::QKind::kU16;
    default: return k::QKind::kS32;
  }
}

size_t Bytes(int bits, size_t n) { return (n * static_cast<size_t>(bits) + 7) / 8; }

}  // namespace

Status QuantizeTensor(std::string_view name, DType src_dtype, const void* src, const std::vector<int64_t>& dims,
                      const Encoding& enc, void* dst, size_t dst_bytes, const QuantizeOptions& options) {
  auto n = CountOf(name, dims);
  if (!n.ok()) return n.status();
  auto in = InTypeOf(name, src_dtype);
  if (!in.ok()) return in.status();
  if ((!src || !dst) && n.value() != 0) return Invalid(name, "null data pointer");
  const k::ExecOptions e = Exec(options);

  if (enc.kind == EncodingKind::kFloat) {
    if (enc.dtype != DType::kFloat16 || src_dtype != DType::kFloat32)
      return Status(StatusCode::kUnsupported, fmt::format("tensor '{}': only float32 -> float16 is converted", name));
    if (dst_bytes != 2 * n.value())
      return Invalid(name, fmt::format("destination has {} bytes, float16 needs {}", dst_bytes, 2 * n.value()));
    QAIRT_RETURN_IF_ERROR(ApplyPolicy(name, Scan(src_dtype, src, n.value(), e), n.value(), options));
    k::ConvertF32ToF16(static_cast<const float*>(src), n.value(), static_cast<k::Half*>(dst), e);
    return Status::Ok();
  }
  auto plan = MakePlan(name, dims, enc);
  if (!plan.ok()) return plan.status();
  const Plan& p = plan.value();
  if (dst_bytes != Bytes(p.bits, n.value()))
    return Invalid(name, fmt::format("destination has {} bytes, {} x {} needs {}", dst_bytes, n.value(),
                                     DTypeName(enc.dtype), Bytes(p.bits, n.value())));
  // float32 input: NaN/Inf are counted while each chunk is quantized (one
  // pass over memory); only when some are found is the input scanned again
  // for the report. 16-bit inputs are scanned first.
  const bool f32 = src_dtype == DType::kFloat32;
  if (!f32) QAIRT_RETURN_IF_ERROR(ApplyPolicy(name, Scan(src_dtype, src, n.value(), e), n.value(), options));
  k::QuantArgs a;
  a.scales = p.scales.data();
  a.offsets = p.offsets.empty() ? nullptr : p.offsets.data();
  a.qmin = p.qmin;
  a.qmax = p.qmax;
  size_t nonfinite = 0;
  k::QuantizeGrid(in.value(), src, p.grid, a, StorageOf(p.bits), dst, e, f32 ? &nonfinite : nullptr);
  if (nonfinite > 0) return ApplyPolicy(name, Scan(src_dtype, src, n.value(), e), n.value(), options);
  return Status::Ok();
}

Result<TransposedQuantizer> TransposedQuantizer::Make(std::string_view name, int64_t n, int64_t k,
                                                      const Encoding& enc) {
  const bool blocks = enc.kind == EncodingKind::kPerBlock || enc.kind == EncodingKind::kLpbq;
  const bool row_local = enc.kind == EncodingKind::kPerTensor || (enc.kind == EncodingKind::kPerChannel && enc.axis == 0) ||
                         (blocks && enc.block_sizes.size() == 2 && enc.block_sizes[0] == 1 && enc.block_sizes[1] >= 1 &&
                          k % enc.block_sizes[1] == 0);
  if (!row_local || n < 1 || k < 1)
    return Status(StatusCode::kUnsupported,
                  fmt::format("tensor '{}': its encoding's scales are not per row of [{}, {}]", name, n, k));
  // The plan checks everything QuantizeTensor checks (its tables are
  // dropped: windows lay out their own part).
  auto plan = MakePlan(name, {n, k}, enc, /*tables=*/false);
  if (!plan.ok()) return plan.status();
  TransposedQuantizer q;
  q.n_ = n;
  q.k_ = k;
  q.bits_ = plan.value().bits;
  q.qmin_ = plan.value().qmin;
  q.qmax_ = plan.value().qmax;
  q.cells_ = blocks ? k / enc.block_sizes[1] : 1;
  q.block_ = k / q.cells_;
  q.enc_ = enc;
  return q;
}

bool TransposedQuantizer::RunBand(const float* band, int64_t ld, int64_t r0, int64_t r1, int64_t k0, int64_t k1,
                                  uint8_t* out, bool known_finite) const {
  // The window's scales and offsets, [cells it covers][r1 - r0], each as
  // MakePlan computes it for the tensor (the LPBQ product in float).
  const auto w = static_cast<size_t>(r1 - r0);
  const int64_t j0 = k0 / block_, j1 = (k1 - 1) / block_ + 1;
  const auto cells = static_cast<size_t>(j1 - j0);
  thread_local std::vector<float> scales;
  thread_local std::vector<int32_t> offsets;
  const ScratchRelease release(scales, offsets);
  scales.resize(cells * w);
  const bool lpbq = enc_.kind == EncodingKind::kLpbq;
  const bool has_offsets = !lpbq && (!enc_.offsets.empty() || !enc_.float_offsets.empty());
  if (has_offsets) offsets.resize(cells * w);
  const auto per_row = static_cast<size_t>(cells_);
  // Raw pointers, so that neither the tables behind CowVector nor the
  // thread_local buffers are looked up again for every entry (this loop was
  // a twentieth of an LLM's int4 weight quantization).
  float* const sc = scales.data();
  int32_t* const of = has_offsets ? offsets.data() : nullptr;
  const float* const es = enc_.scales.data();
  const size_t first = static_cast<size_t>(r0), cell0 = static_cast<size_t>(j0);
  if (lpbq) {
    const int32_t* const bis = enc_.block_int_scales.data();
    for (size_t j = 0; j < cells; ++j) {
      const int32_t* b = bis + first * per_row + cell0 + j;
      for (size_t i = 0; i < w; ++i) sc[j * w + i] = static_cast<float>(b[i * per_row]) * es[first + i];
    }
  } else {
    const int32_t* const eo = enc_.offsets.data();
    const float* const efo = enc_.float_offsets.empty() ? nullptr : enc_.float_offsets.data();
    const bool one = enc_.scales.size() == 1;
    for (size_t j = 0; j < cells; ++j)
      for (size_t i = 0; i < w; ++i) {
        // Per tensor: one entry; per channel: one per row; blocks: [n][cells].
        const size_t r = first + i;
        const size_t at = one ? 0 : per_row == 1 ? r : r * per_row + cell0 + j;
        sc[j * w + i] = es[at];
        if (of) of[j * w + i] = efo ? static_cast<int32_t>(efo[at]) : eo[at];
      }
  }
  k::QuantArgs a;
  a.scales = scales.data();
  a.offsets = has_offsets ? offsets.data() : nullptr;
  a.qmin = qmin_;
  a.qmax = qmax_;
  size_t nonfinite = 0;
  k::QuantizeTransposed(band, static_cast<size_t>(k1 - k0), w, static_cast<size_t>(ld), a, w,
                        static_cast<size_t>(block_), StorageOf(bits_),
                        out + static_cast<size_t>(k0) * static_cast<size_t>(bits_) / 8, static_cast<size_t>(k_), {},
                        known_finite ? nullptr : &nonfinite);
  return nonfinite == 0;
}

Status CheckQuantizable(std::string_view name, DType src_dtype, const std::vector<int64_t>& dims, const Encoding& enc,
                        size_t dst_bytes) {
  auto n = CountOf(name, dims);
  if (!n.ok()) return n.status();
  auto in = InTypeOf(name, src_dtype);
  if (!in.ok()) return in.status();
  if (enc.kind == EncodingKind::kFloat) {
    if (enc.dtype != DType::kFloat16 || src_dtype != DType::kFloat32)
      return Status(StatusCode::kUnsupported, fmt::format("tensor '{}': only float32 -> float16 is converted", name));
    if (dst_bytes != 2 * n.value())
      return Invalid(name, fmt::format("destination has {} bytes, float16 needs {}", dst_bytes, 2 * n.value()));
    return Status::Ok();
  }
  auto plan = MakePlan(name, dims, enc, /*tables=*/false);
  if (!plan.ok()) return plan.status();
  if (dst_bytes != Bytes(plan.value().bits, n.value()))
    return Invalid(name, fmt::format("destination has {} bytes, {} x {} needs {}", dst_bytes, n.value(),
                                     DTypeName(enc.dtype), Bytes(plan.value().bits, n.value())));
  return Status::Ok();
}

Result<std::vector<uint8_t>> QuantizeTensor(std::string_view name, DType src_dtype, const void* src,
                                            const std::vector<int64_t>& dims, const Encoding& enc,
                                            const QuantizeOptions& options) {
  auto n = CountOf(name, dims);
  if (!n.ok()) return n.status();
  const size_t bits = enc.kind == EncodingKind::kFloat ? 16 : DTypeBits(enc.dtype);
  std::vector<uint8_t> out(Bytes(static_cast<int>(bits), n.value()));
  QAIRT_RETURN_IF_ERROR(QuantizeTensor(name, src_dtype, src, dims, enc, out.data(), out.size(), options));
  return out;
}

Status FakeQuantize(std::string_view name, float* data, const std::vector<int64_t>& dims, const Encoding& enc,
                    std::vector<uint8_t>* scratch, const QuantizeOptions& options) {
  uint64_t count = 1;
  for (int64_t d : dims) count *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  const auto bytes = StorageBytes(enc.dtype, count);
  if (!bytes) return InvalidArgument("tensor '{}': cannot size its {} encoding", name, DTypeName(enc.dtype));
  scratch->resize(*bytes + 8);
  QAIRT_RETURN_IF_ERROR(QuantizeTensor(name, DType::kFloat32, data, dims, enc, scratch->data(), *bytes, options));
  return DequantizeTensor(name, scratch->data(), *bytes, dims, enc, data, options);
}

Status DequantizeTensor(std::string_view name, const void* src, size_t src_bytes, const std::vector<int64_t>& dims,
                        const Encoding& enc, float* dst, const QuantizeOptions& options) {
  auto n = CountOf(name, dims);
  if (!n.ok()) return n.status();
  if ((!src || !dst) && n.value() != 0) return Invalid(name, "null data pointer");
  const k::ExecOptions e = Exec(options);
  if (enc.kind == EncodingKind::kFloat) {
    if (enc.dtype != DType::kFloat16)
      return Status(StatusCode::kUnsupported, fmt::format("tensor '{}': only float16 -> float32 is converted", name));
    if (src_bytes != 2 * n.value()) return Invalid(name, "source size does not match float16 data");
    k::ConvertF16ToF32(static_cast<const k::Half*>(src), n.value(), dst, e);
    return Status::Ok();
  }
  auto plan = MakePlan(name, dims, enc);
  if (!plan.ok()) return plan.status();
  const Plan& p = plan.value();
  if (src_bytes != Bytes(p.bits, n.value()))
    return Invalid(name, fmt::format("source has {} bytes, {} x {} needs {}", src_bytes, n.value(),
                                     DTypeName(enc.dtype), Bytes(p.bits, n.value())));
  k::QuantArgs a;
  a.scales = p.scales.data();
  a.offsets = p.offsets.empty() ? nullptr : p.offsets.data();
  k::DequantizeGrid(KindOf(p.bits, p.is_signed), src, p.grid, a, dst, e);
  return Status::Ok();
}

namespace {

// The encoding's fields from the request and the grid its ranges are taken
// on (the checks both ComputeEncoding and EncodingFromRanges make).
Status SetUpEncoding(std::string_view name, const std::vector<int64_t>& dims, const EncodingRequest& req,
                     Encoding* enc, k::Grid* grid) {
  if (!IsFixedPoint(req.dtype))
    return Invalid(name, fmt::format("{} is not a fixed-point dtype", DTypeName(req.dtype)));
  enc->kind = req.kind;
  enc->dtype = req.dtype;
  enc->bitwidth = req.bitwidth;
  enc->symmetry = req.symmetry;
  switch (req.kind) {
    case EncodingKind::kPerTensor: *grid = k::Grid::PerTensor(dims); break;
    case EncodingKind::kPerChannel:
      if (req.axis < 0 || static_cast<size_t>(req.axis) >= dims.size())
        return Invalid(name, fmt::format("channel axis {} out of range for rank {}", req.axis, dims.size()));
      *grid = k::Grid::PerChannel(dims, static_cast<size_t>(req.axis));
      enc->axis = req.axis;
      break;
    case EncodingKind::kPerBlock:
    case EncodingKind::kLpbq:
      if (req.block_sizes.size() != dims.size())
        return Invalid(name, fmt::format("{} block sizes for rank {}", req.block_sizes.size(), dims.size()));
      for (size_t d = 0; d < dims.size(); ++d)
        if (req.block_sizes[d] < 1 || dims[d] % req.block_sizes[d] != 0)
          return Invalid(name, fmt::format("block size {} does not divide dim {} ({})", req.block_sizes[d], d, dims[d]));
      if (req.axis < 0 || static_cast<size_t>(req.axis) >= dims.size())
        return Invalid(name, fmt::format("block axis {} out of range for rank {}", req.axis, dims.size()));
      *grid = k::Grid::PerBlock(dims, req.block_sizes);
      enc->axis = req.axis;
      enc->block_sizes = req.block_sizes;
      break;
    default:
      return Status(StatusCode::kUnsupported,
                    fmt::format("tensor '{}': cannot compute a {} encoding", name, EncodingKindName(req.kind)));
  }
  return Status::Ok();
}

// The scales (and offsets, or LPBQ's integer block scales) of `enc` from
// finite ranges of each cell of `grid`.
Status FillFromRanges(std::string_view name, const k::Grid& grid, const float* mins, const float* maxs,
                      const EncodingRequest& req, const QuantizeOptions& options, Encoding* enc) {
  const size_t ns = grid.NumScales();
  const uint32_t bw = enc->effective_bitwidth();
  const bool is_signed = IsSigned(req.dtype);
  if (req.kind == EncodingKind::kLpbq) {
    if (!is_signed || req.symmetry == Symmetry::kAsymmetric)
      return Invalid(name, "LPBQ encodings are signed and symmetric");
    if (req.decompressed_bitwidth <= bw || req.decompressed_bitwidth > 16)
      return Invalid(name, fmt::format("decompressed bitwidth {} must be in ({}, 16]", req.decompressed_bitwidth, bw));
    size_t nch = 1;
    const std::vector<size_t>& block_channel = BlockChannels(grid.ScaleDims(), static_cast<size_t>(req.axis), &nch);
    enc->scales.resize(nch);
    enc->block_int_scales.resize(ns);
    thread_local std::vector<float> eff;  // the thread's, as BlockChannels'
    const ScratchRelease release(eff, block_channel_table);
    if (eff.size() < ns) eff.resize(ns);
    k::ComputeLpbq(ns, mins, maxs, block_channel.data(), nch, bw, req.decompressed_bitwidth, options.min_range,
                   enc->scales.mut().data(), enc->block_int_scales.mut().data(), eff.data(), Exec(options));
    enc->decompressed_bitwidth = req.decompressed_bitwidth;
    enc->offsets.assign(nch, 0);
    return Status::Ok();
  }
  const auto schema = static_cast<k::Schema>(static_cast<uint32_t>(req.symmetry));
  std::vector<float> scales(ns);
  std::vector<int32_t> offsets(ns);
  for (size_t i = 0; i < ns; ++i) {
    const k::GridParams g = k::ComputeGrid(mins[i], maxs[i], bw, is_signed, schema, options.min_range);
    scales[i] = g.scale;
    offsets[i] = g.offset;
  }
  enc->scales = std::move(scales);
  enc->offsets = std::move(offsets);
  return Status::Ok();
}

}  // namespace

Result<Encoding> ComputeEncoding(std::string_view name, const float* data, const std::vector<int64_t>& dims,
                                 const EncodingRequest& req, const QuantizeOptions& options) {
  auto n = CountOf(name, dims);
  if (!n.ok()) return n.status();
  if (!data && n.value() != 0) return Invalid(name, "null data pointer");
  Encoding enc;
  k::Grid grid;
  QAIRT_RETURN_IF_ERROR(SetUpEncoding(name, dims, req, &enc, &grid));
  const k::ExecOptions e = Exec(options);
  const size_t ns = grid.NumScales();
  std::vector<float> mins(ns), maxs(ns);
  // NaN/Inf are counted in the min/max pass (one pass over memory); the
  // report's scan runs only when some are found.
  size_t nonfinite = 0;
  k::MinMaxGrid(data, grid, mins.data(), maxs.data(), e, &nonfinite);
  if (nonfinite > 0)
    QAIRT_RETURN_IF_ERROR(ApplyPolicy(name, Scan(DType::kFloat32, data, n.value(), e), n.value(), options));
  for (size_t i = 0; i < ns; ++i) {
    if (std::isinf(mins[i]) || std::isinf(maxs[i])) {
      if (mins[i] == std::numeric_limits<float>::infinity()) {  // only NaN (treated as 0) in this cell
        mins[i] = maxs[i] = 0.0f;
        continue;
      }
      return Invalid(name, "data contains +-Inf, which has no finite quantization range");
    }
  }
  QAIRT_RETURN_IF_ERROR(FillFromRanges(name, grid, mins.data(), maxs.data(), req, options, &enc));
  return enc;
}

Result<Encoding> EncodingFromRanges(std::string_view name, const std::vector<int64_t>& dims, const float* mins,
                                    const float* maxs, const EncodingRequest& req, const QuantizeOptions& options) {
  auto n = CountOf(name, dims);
  if (!n.ok()) return n.status();
  Encoding enc;
  k::Grid grid;
  QAIRT_RETURN_IF_ERROR(SetUpEncoding(name, dims, req, &enc, &grid));
  const size_t ns = grid.NumScales();
  if (ns != 0 && (!mins || !maxs)) return Invalid(name, "null range pointer");
  for (size_t i = 0; i < ns; ++i)
    if (!std::isfinite(mins[i]) || !std::isfinite(maxs[i]) || mins[i] > maxs[i])
      return Invalid(name, fmt::format("cell {} has no finite range [{}, {}]", i, mins[i], maxs[i]));
  QAIRT_RETURN_IF_ERROR(FillFromRanges(name, grid, mins, maxs, req, options, &enc));
  return enc;
}

Status QuantizeBias(std::string_view name, const float* bias, size_t n, float input_scale, const Encoding& weight_enc,
                    int32_t* dst, const QuantizeOptions& options) {
  if ((!bias || !dst) && n != 0) return Invalid(name, "null data pointer");
  if (!(input_scale > 0.0f) || !std::isfinite(input_scale))
    return Invalid(name, fmt::format("input scale {} must be finite and > 0", input_scale));
  const auto& ws = weight_enc.scales;
  if (ws.size() != 1 && ws.size() != n)
    return Invalid(name, fmt::format("weight encoding has {} scales; the bias has {} channels", ws.size(), n));
  for (float s : ws)
    if (!(s > 0.0f) || !std::isfinite(s)) return Invalid(name, fmt::format("weight scale {} must be finite and > 0", s));
  const k::ExecOptions e = Exec(options);
  QAIRT_RETURN_IF_ERROR(ApplyPolicy(name, Scan(DType::kFloat32, bias, n, e), n, options));
  k::BiasParams bp;
  bp.input_scale = input_scale;
  bp.weight_scales = ws.data();
  bp.per_channel = ws.size() == n && n != 1;
  k::QuantizeBias(bias, n, bp, dst, e);
  return Status::Ok();
}

}  // namespace qairt::quant
