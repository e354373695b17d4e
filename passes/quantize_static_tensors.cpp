// Quantize static tensors (spec): weights and biases are stored in the
// precision kernel selection chose, so no convert runs on the device.
// Sub-8-bit values are packed (two int4 per byte, low nibble first). Float
// data goes through the SIMD kernels (lib/quant -> lib/kernels); data that
// is already quantized (Q-DQ weights) is dequantized first when its encoding
// changes (sign flip, promotion). int64 index constants feeding int32 slots
// are narrowed, with a range check.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "passes/adapt.h"
#include "passes/quant_log.h"
#include "passes/passes.h"
#include "quant/quantize.h"

namespace qairt::pass {

namespace {

Status NarrowInt64(Session& s, TensorId id) {
  Graph& g = s.graph();
  const Tensor& t = g.tensor(id);
  const size_t n = t.data->size() / sizeof(int64_t);
  std::vector<uint8_t> out(n * sizeof(int32_t));
  for (size_t i = 0; i < n; ++i) {
    int64_t v;
    std::memcpy(&v, t.data->data() + i * sizeof(v), sizeof(v));
    if (v < INT32_MIN || v > INT32_MAX) {
      s.Error("static-range",
              fmt::format("static tensor '{}': value {} at index {} does not fit the int32 the kernel needs", t.name,
                          v, i),
              {}, t.name);
      return Status::Ok();
    }
    const int32_t w = static_cast<int32_t>(v);
    std::memcpy(out.data() + i * sizeof(w), &w, sizeof(w));
  }
  return g.SetStaticData(id, DType::kInt32, StaticData::Adopt(std::move(out)));
}

// A 32-bit bias's scale is input scale x weight scale (spec): with 16-bit
// activations and 16-bit weights that product can be so small that the bias
// values leave the int32 grid and saturate, which wrecks the layer (HTP adds
// the saturated value). Said loudly: it is invisible in the encodings.
void WarnSaturation(Session& s, const Tensor& t, const void* src, uint64_t count, const Encoding& e) {
  if (e.scales.empty() || (e.scales.size() > 1 && e.scales.size() != count)) return;
  const QuantRange r = QuantRangeOf(e.dtype, e.effective_bitwidth());
  uint64_t saturated = 0;
  double worst = 0;
  for (uint64_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, static_cast<const uint8_t*>(src) + i * sizeof(float), sizeof v);
    const double scale = e.scales.size() == 1 ? e.scales[0] : e.scales[i];
    const int32_t offset = e.offsets.empty() ? 0 : (e.offsets.size() == 1 ? e.offsets[0] : e.offsets[i]);
    if (!(scale > 0)) continue;
    const double q = std::nearbyint(static_cast<double>(v) / scale) - offset;
    if (q > static_cast<double>(r.qmax) || q < static_cast<double>(r.qmin)) {
      ++saturated;
      worst = std::max(worst, std::fabs(q) / static_cast<double>(r.qmax));
    }
  }
  if (!saturated) return;
  s.Warn("bias-saturation", fmt::format("bias '{}': {} of {} values saturate the int32 grid (scale = input scale x weight scale; the "
                     "largest needs {:.3g}x the range). Keep this layer's weights or activations at 8 bits, or its "
                     "output will be wrong",
                     t.name, saturated, count, worst),
         {}, t.name);
}

// Outputs from this size on may be deferred: below it, holding the bytes
// costs less than deferring them.
constexpr size_t kDeferFromBytes = size_t{64} << 10;

}  // namespace

// Has +-Inf but no NaN.
static bool InfiniteWithoutNan(const float* x, uint64_t n) {
  bool inf = false;
  for (uint64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return false;
    inf = inf || std::isinf(x[i]);
  }
  return inf;
}

Status QuantizeStaticTensors(Session& s) {
  Graph& g = s.graph();
  // Float constants that share their bytes and need the same encoding share
  // the quantized bytes too: quantized once, stored once (an importer's
  // repeated constants, such as a transformer's Expand ones per layer).
  // Only sources someone else also holds are remembered, and they are held
  // here: a source freed during the pass could otherwise leave its address
  // to another, and an unshared one keeps no memory alive for nothing.
  struct Made {
    std::shared_ptr<const StaticData> source;
    DType src_dtype;
    Encoding need;
    std::shared_ptr<const StaticData> stored;
  };
  std::unordered_multimap<const StaticData*, Made> made;
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    if (t.kind != TensorKind::kStatic || !t.data || t.consumers.empty()) continue;
    // The encoding the (first) consumer's kernel needs.
    std::optional<Encoding> need = t.encoding;
    DType need_dtype = t.dtype;
    for (const Use& u : t.consumers) {
      const OpRecord* r = s.find_op_record(u.op);
      if (!r || r->failed || u.slot >= r->selected_in.size()) continue;
      if (u.slot < r->needed_in.size() && r->needed_in[u.slot]) need = r->needed_in[u.slot];
      need_dtype = r->selected_in[u.slot];
      break;
    }
    if (IsInteger(t.dtype)) {
      if (t.dtype == DType::kInt64 && need_dtype == DType::kInt32) QAIRT_RETURN_IF_ERROR(NarrowInt64(s, id));
      continue;
    }
    if (!need || need->kind == EncodingKind::kArrayOf) continue;
    const bool same_encoding = t.encoding && [&] {
      Encoding a = *t.encoding, b = *need;
      a.overridden = b.overridden = false;
      return a == b;
    }();
    if (t.dtype == need->dtype && same_encoding) continue;  // already stored as needed
    if (need->kind == EncodingKind::kFloat && need->dtype == DType::kFloat32 && t.dtype == DType::kFloat32) {
      if (!same_encoding) QAIRT_RETURN_IF_ERROR(g.SetEncoding(id, *need));
      continue;
    }
    const auto count = t.shape.element_count();
    if (!count) {
      s.Error("unknown-shape", fmt::format("static tensor '{}' has an unknown shape {}", t.name, t.shape.ToString()),
              {}, t.name);
      continue;
    }
    const std::vector<int64_t> dims = t.shape.extents();
    // Float source values.
    std::vector<float> dequantized;
    // Float32 data is read through its StaticData (a transposed view stays
    // unmaterialized); other sources through `src`.
    const void* src = nullptr;
    DType src_dtype = t.dtype;
    if (IsFixedPoint(t.dtype)) {
      if (!t.encoding) {
        s.Error("missing-encoding",
                fmt::format("static tensor '{}' holds {} data without an encoding", t.name, DTypeShortName(t.dtype)),
                {}, t.name);
        continue;
      }
      dequantized.resize(*count);
      Status st = quant::DequantizeTensor(t.name, t.data->data(), t.data->size(), dims, *t.encoding,
                                          dequantized.data());
      if (!st.ok()) {
        s.Error("static-quantize", st.message(), {}, t.name);
        continue;
      }
      src = dequantized.data();
      src_dtype = DType::kFloat32;
    } else if (t.dtype != DType::kFloat32 && t.dtype != DType::kFloat16 && t.dtype != DType::kBFloat16) {
      continue;
    } else if (t.dtype != DType::kFloat32 || need->effective_bitwidth() == 32) {
      src = t.data->data();
    }
    if (need->kind == EncodingKind::kFloat && need->dtype == DType::kFloat32) {
      // Back to float32 (promotion of quantized data to float).
      std::vector<uint8_t> bytes(*count * sizeof(float));
      std::memcpy(bytes.data(), src, bytes.size());
      QAIRT_RETURN_IF_ERROR(g.SetStaticData(id, DType::kFloat32, StaticData::Adopt(std::move(bytes))));
      QAIRT_RETURN_IF_ERROR(g.SetEncoding(id, *need));
      continue;
    }
    if (need->effective_bitwidth() == 32 && src_dtype == DType::kFloat32) WarnSaturation(s, t, src, *count, *need);
    quant::QuantizeOptions qo;
    std::vector<std::string> saturated;
    // Into fresh memory nobody clears first (the kernels write every byte).
    const auto out_bytes = StorageBytes(need->dtype, *count);
    if (!out_bytes) {
      s.Error("static-quantize", fmt::format("static tensor '{}': {} values do not fit in memory", t.name, *count),
              {}, t.name);
      continue;
    }
    // A large weight read from a mapped file is quantized when a writer
    // asks for its bytes, not now (see DeferQuantization).
    std::shared_ptr<const StaticData> stored =
        src || *out_bytes < kDeferFromBytes ? nullptr
                                            : quant::DeferQuantization(t.name, t.data, dims, *need, *out_bytes);
    const bool deferred = stored != nullptr;
    const bool shareable = !deferred && !IsFixedPoint(t.dtype);
    if (shareable) {
      const auto [first, last] = made.equal_range(t.data.get());
      for (auto it = first; it != last && !stored; ++it)
        if (it->second.src_dtype == t.dtype && it->second.need == *need) stored = it->second.stored;
      if (stored) {
        Encoding enc = *need;
        enc.overridden = t.encoding && t.encoding->overridden;
        QAIRT_RETURN_IF_ERROR(g.SetStaticData(id, need->dtype, stored));
        QAIRT_RETURN_IF_ERROR(g.SetEncoding(id, enc));
        if (!same_encoding) s.AddReason(id, kReasonOpAdaptation);
        s.Trace("[STATIC] {}: {} values stored as {}, the bytes of an identical constant", g.tensor(id).name, *count,
                DTypeShortName(need->dtype));
        continue;
      }
    }
    uint8_t* out = nullptr;
    if (!deferred) stored = StaticData::Uninitialized(*out_bytes, &out);
    auto quantize = [&] {
      return src ? quant::QuantizeTensor(t.name, src_dtype, src, dims, *need, out, *out_bytes, qo)
                 : quant::QuantizeTensor(t.name, *t.data, dims, *need, out, *out_bytes, qo);
    };
    Status q = deferred ? Status::Ok() : quantize();
    // An infinite constant without NaN (an attention mask's -inf fill)
    // saturates to its grid's end, as calibration's range for it intends;
    // NaN in static data stays an error. Checked only when the strict
    // quantization refused the tensor: a scan of every weight first would
    // be one more pass over the model's largest data.
    if (!q.ok() && src_dtype == DType::kFloat32 &&
        InfiniteWithoutNan(static_cast<const float*>(src ? src : t.data->data()), *count)) {
      qo.nonfinite = quant::NonFinitePolicy::kWarnNanAsZero;
      qo.warnings = &saturated;
      q = quantize();
    }
    if (!saturated.empty())
      s.Trace("[STATIC] {}: infinite values saturated to the ends of its grid", t.name);
    if (!q.ok()) {
      s.Error("static-quantize", q.message(), {}, t.name);
      continue;
    }
    if (shareable && saturated.empty() && t.data.use_count() > 1)
      made.emplace(t.data.get(), Made{t.data, t.dtype, *need, stored});
    const size_t bytes = *out_bytes;
    Encoding enc = *need;
    enc.overridden = t.encoding && t.encoding->overridden;
    QAIRT_RETURN_IF_ERROR(g.SetStaticData(id, need->dtype, std::move(stored)));
    QAIRT_RETURN_IF_ERROR(g.SetEncoding(id, enc));
    if (!same_encoding) s.AddReason(id, kReasonOpAdaptation);
    s.Trace("[STATIC] {}: {} values stored as {} in {} bytes{}{}", g.tensor(id).name, *count,
            DTypeShortName(need->dtype), bytes, DTypeBits(need->dtype) < 8 ? " (packed, low bits first)" : "",
            deferred ? " (quantized when written)" : "");
  }
  return Status::Ok();
}

}  // namespace qairt::pass
