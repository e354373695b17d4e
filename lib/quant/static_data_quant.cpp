// Encodings and quantization of a static tensor's StaticData. Plain data
// goes straight to ComputeEncoding / QuantizeTensor. A transposed view
// (StaticData::TransposeOf: a MatMul weight the rewrite turned into a
// FullyConnected [N, K]) is read from its [K, N] source in panels of
// logical rows, each transposed through a small buffer, whenever the
// encoding is row-local; the float transpose is never materialized. That is
// the difference between one pass over an LLM's weights and a second copy
// of the model in fresh memory.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "kernels/threadpool.h"
#include "quant/quantize.h"

namespace qairt::quant {
namespace {

// ~256 KiB of float rows per panel (fits L2 beside the source lines), a
// multiple of 8 rows so every panel starts on a byte of 2- and 4-bit output.
int64_t PanelRows(int64_t cols) {
  const int64_t rows = std::max<int64_t>(8, (int64_t{256} << 10) / std::max<int64_t>(1, cols * 4));
  return rows / 8 * 8;
}

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

// Runs fn(panel, r0, r1, worker) over the view's logical rows [r0, r1) (its
// source's columns), the panel holding them as [r1 - r0, view cols] floats.
// False when some fn returned false.
template <class Fn>
bool ForEachPanel(const StaticTransposition& t, kernels::ThreadPool* pool, Fn fn) {
  const int64_t rows = t.cols, cols = t.rows;  // the view's
  const int64_t step = PanelRows(cols);
  const size_t panels = static_cast<size_t>((rows + step - 1) / step);
  const size_t workers = pool ? pool->size() : 1;
  std::vector<std::vector<float>> buffers(workers);
  std::vector<char> ok(panels, 1);
  const auto* src = reinterpret_cast<const float*>(t.source->data());
  kernels::ParallelFor(pool, panels, [&](size_t p, size_t w) {
    const int64_t r0 = static_cast<int64_t>(p) * step, r1 = std::min(rows, r0 + step);
    std::vector<float>& buf = buffers[w];
    buf.resize(static_cast<size_t>(step * cols));
    // Source [cols, rows]: its columns r0..r1 are the panel's rows.
    kernels::Transpose2DStrided(sizeof(float), cols, r1 - r0, src + r0, rows, buf.data(), cols);
    ok[p] = fn(buf.data(), r0, r1, w) ? 1 : 0;
  });
  return std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
}

// Rows [r0, r1) of a row-local encoding of `rows` rows: every per-row table
// (scales, offsets, block scales) cut to those rows.
Encoding SliceRows(const Encoding& e, int64_t rows, int64_t r0, int64_t r1) {
  Encoding s = e;
  auto cut = [&](auto& v) {
    if (e.kind == EncodingKind::kPerTensor || v.size() <= 1 || v.size() % static_cast<size_t>(rows) != 0) return;
    const size_t per_row = v.size() / static_cast<size_t>(rows);
    v.assign(v.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r0) * per_row),
             v.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r1) * per_row));
  };
  cut(s.scales);
  cut(s.offsets);
  cut(s.float_offsets);
  cut(s.block_int_scales);
  return s;
}

void AppendRows(Encoding* acc, const Encoding& part) {
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(acc->scales, part.scales);
  append(acc->offsets, part.offsets);
  append(acc->float_offsets, part.float_offsets);
  append(acc->block_int_scales, part.block_int_scales);
}

size_t StorageBytesOf(const Encoding& enc, int64_t count) {
  const size_t bits = enc.kind == EncodingKind::kFloat ? 16 : DTypeBits(enc.dtype);
  return (static_cast<size_t>(count) * bits + 7) / 8;
}

}  // namespace

Result<Encoding> ComputeEncoding(std::string_view name, const StaticData& data, const std::vector<int64_t>& dims,
                                 const EncodingRequest& req, const QuantizeOptions& options) {
  const StaticTransposition* t = FloatView(data, dims);
  if (t && req.kind == EncodingKind::kPerTensor) {
    // Min and max do not depend on the layout: the source as it is.
    const int64_t count = t->rows * t->cols;
    return ComputeEncoding(name, reinterpret_cast<const float*>(t->source->data()), {count}, req, options);
  }
  if (!t || !RowLocal(req.kind, req.axis, req.block_sizes))
    return ComputeEncoding(name, reinterpret_cast<const float*>(data.data()), dims, req, options);
  const int64_t rows = dims[0], cols = dims[1];
  const size_t panels = static_cast<size_t>((rows + PanelRows(cols) - 1) / PanelRows(cols));
  std::vector<Result<Encoding>> parts(panels, Status::Ok());
  QuantizeOptions quiet = options;
  quiet.pool = nullptr;
  quiet.nonfinite = NonFinitePolicy::kError;
  quiet.warnings = nullptr;
  const int64_t step = PanelRows(cols);
  const bool all_ok = ForEachPanel(*t, options.pool, [&](const float* panel, int64_t r0, int64_t r1, size_t) {
    parts[static_cast<size_t>(r0 / step)] = ComputeEncoding(name, panel, {r1 - r0, cols}, req, quiet);
    return parts[static_cast<size_t>(r0 / step)].ok();
  });
  // A panel's error would give indices within the panel: the whole tensor
  // again, for the message the plain path gives.
  if (!all_ok) return ComputeEncoding(name, reinterpret_cast<const float*>(data.data()), dims, req, options);
  Encoding enc = std::move(parts[0]).value();
  for (size_t p = 1; p < panels; ++p) AppendRows(&enc, parts[p].value());
  return enc;
}

Status QuantizeTensor(std::string_view name, const StaticData& data, const std::vector<int64_t>& dims,
                      const Encoding& enc, void* dst, size_t dst_bytes, const QuantizeOptions& options) {
  const StaticTransposition* t = FloatView(data, dims);
  if (!t || !RowLocal(enc.kind, enc.axis, enc.block_sizes))
    return QuantizeTensor(name, DType::kFloat32, data.data(), dims, enc, dst, dst_bytes, options);
  const int64_t rows = dims[0], cols = dims[1];
  if (dst_bytes != StorageBytesOf(enc, rows * cols))
    return QuantizeTensor(name, DType::kFloat32, data.data(), dims, enc, dst, dst_bytes, options);  // its message
  auto* out = static_cast<uint8_t*>(dst);
  QuantizeOptions quiet = options;
  quiet.pool = nullptr;
  quiet.nonfinite = NonFinitePolicy::kError;
  quiet.warnings = nullptr;
  const bool all_ok = ForEachPanel(*t, options.pool, [&](const float* panel, int64_t r0, int64_t r1, size_t) {
    const size_t begin = StorageBytesOf(enc, r0 * cols), end = StorageBytesOf(enc, r1 * cols);
    return QuantizeTensor(name, DType::kFloat32, panel, {r1 - r0, cols}, SliceRows(enc, rows, r0, r1), out + begin,
                          end - begin, quiet)
        .ok();
  });
  // Non-finite values (refused, or saturated with a warning) and bad
  // encodings: the plain path over the whole tensor says so exactly.
  if (!all_ok) return QuantizeTensor(name, DType::kFloat32, data.data(), dims, enc, dst, dst_bytes, options);
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
