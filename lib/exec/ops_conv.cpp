// Convolution kernels: convolutions (im2col + GEMM; depthwise direct) and
// transposed convolutions.
// The kernels' loops are written to auto-vectorise (the module is built
// with -O3: CMakeLists.txt, qairt_exec).
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/isa_dispatch.h"
#include "exec/kernel.h"
#include "exec/spatial.h"

namespace qairt::exec {

void Im2Col(const float* x, int64_t channels, const Geo& g, float* col) {
  const int64_t osz = g.out_size();
  for (int64_t ch = 0; ch < channels; ++ch) {
    const float* xc = x + ch * g.in_size();
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          float* row = col;
          col += osz;
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              float* r = row + (od * g.out[1] + oh) * g.out[2];
              const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
              if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
                std::fill(r, r + g.out[2], 0.0f);
                continue;
              }
              const float* xr = xc + (id * g.in[1] + ih) * g.in[2];
              const int64_t off = kw * g.d[2] - g.pb[2];
              // valid ow: 0 <= ow*s + off < in
              int64_t lo = off >= 0 ? 0 : (-off + g.s[2] - 1) / g.s[2];
              int64_t hi = g.in[2] - off <= 0 ? 0 : (g.in[2] - off + g.s[2] - 1) / g.s[2];
              lo = std::min(lo, g.out[2]);
              hi = std::max(std::min(hi, g.out[2]), lo);
              std::fill(r, r + lo, 0.0f);
              if (g.s[2] == 1) {
                std::copy(xr + lo + off, xr + hi + off, r + lo);
              } else {
                for (int64_t ow = lo; ow < hi; ++ow) r[ow] = xr[ow * g.s[2] + off];
              }
              std::fill(r + hi, r + g.out[2], 0.0f);
            }
          }
        }
  }
}

namespace {

void AddBias(float* y, int64_t channels, int64_t inner, const float* bias) {
  if (!bias) return;
  for (int64_t ch = 0; ch < channels; ++ch) {
    const float b = bias[ch];
    float* p = y + ch * inner;
    for (int64_t k = 0; k < inner; ++k) p[k] += b;
  }
}

// One tap's input values along an output row: xin[ow] = xr[ow * sw + off],
// 0 where that falls outside the row (or for the whole row when xr is null:
// the tap's input row is padding).
void GatherTapRow(const float* xr, int64_t iw_count, int64_t off, int64_t sw, int64_t ow_count, float* xin) {
  if (!xr) {
    std::fill(xin, xin + ow_count, 0.0f);
    return;
  }
  int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
  int64_t hi = iw_count - off <= 0 ? 0 : (iw_count - off + sw - 1) / sw;
  lo = std::min(lo, ow_count);
  hi = std::max(std::min(hi, ow_count), lo);
  std::fill(xin, xin + lo, 0.0f);
  if (sw == 1) std::copy(xr + lo + off, xr + hi + off, xin + lo);
  else
    for (int64_t ow = lo; ow < hi; ++ow) xin[ow] = xr[ow * sw + off];
  std::fill(xin + hi, xin + ow_count, 0.0f);
}

// Row arithmetic of the depthwise kernel, vectorised per ISA (the library is
// built with -ffp-contract=off, so the clones keep each multiply and add a
// separate rounding, as the order below requires).
QAIRT_EXEC_ISA_VARIANTS(void, RowProductsIsa,
                        (float* __restrict sum, const float* __restrict xin, float w, int64_t n, bool first), {
                          if (first)
                            for (int64_t i = 0; i < n; ++i) sum[i] = w * xin[i];
                          else
                            for (int64_t i = 0; i < n; ++i) sum[i] = sum[i] + w * xin[i];
                        })
inline void RowProducts(float* sum, const float* xin, float w, int64_t n, bool first) {
  QAIRT_EXEC_ISA_CALL(RowProductsIsa, sum, xin, w, n, first);
}
QAIRT_EXEC_ISA_VARIANTS(void, RowAccumulateIsa, (float* __restrict acc, const float* __restrict sum, int64_t n,
                                                 bool first), {
  if (first)
    for (int64_t i = 0; i < n; ++i) acc[i] = sum[i] + 0.0f;
  else
    for (int64_t i = 0; i < n; ++i) acc[i] = sum[i] + acc[i];
})
inline void RowAccumulate(float* acc, const float* sum, int64_t n, bool first) {
  QAIRT_EXEC_ISA_CALL(RowAccumulateIsa, acc, sum, n, first);
}

// One row of a KH x KW depthwise convolution, stride S, in MLAS's M=1
// order (see Depthwise below): products of taps t = kh * KW + kw summed in
// groups of four left to right, each group added to the running sum, then
// a pair, then a single tap; the bias last. Compile-time taps, so the column
// loop vectorises (one clone per ISA). rows[kh]: the input row of tap row
// kh at the first output column (zero-padded).
template <int KH, int KW, int S>
__attribute__((always_inline)) inline void DepthwiseRowInFours(float* __restrict out, const float* const* rows,
                                                               const float* __restrict w, int64_t count, float bias,
                                                               bool has_bias) {
  constexpr int kTaps = KH * KW;
  const float* r[KH];
  for (int i = 0; i < KH; ++i) r[i] = rows[i];
  float wt[kTaps];
  for (int i = 0; i < kTaps; ++i) wt[i] = w[i];
  for (int64_t ow = 0; ow < count; ++ow) {
    const int64_t i = S * ow;
    auto p = [&](int t) { return wt[t] * r[t / KW][i + t % KW]; };
    float acc = 0.0f;
#pragma GCC unroll 8
    for (int g = 0; g + 4 <= kTaps; g += 4) {
      float s = p(g);
      s = s + p(g + 1);
      s = s + p(g + 2);
      s = s + p(g + 3);
      acc = s + acc;
    }
    constexpr int kRest = kTaps / 4 * 4;
    if constexpr (kTaps - kRest >= 2) acc = (p(kRest) + p(kRest + 1)) + acc;
    if constexpr (kTaps % 2 == 1) acc = p(kTaps - 1) + acc;
    out[ow] = has_bias ? acc + bias : acc;
  }
}

QAIRT_EXEC_ISA_VARIANTS(bool, DepthwiseRowFastIsa,
                        (float* out, const float* const* rows, const float* w, int64_t count, float bias,
                         bool has_bias, int64_t kh, int64_t kw, int64_t stride), {
  if (kh == 3 && kw == 3 && stride == 1) DepthwiseRowInFours<3, 3, 1>(out, rows, w, count, bias, has_bias);
  else if (kh == 3 && kw == 3 && stride == 2) DepthwiseRowInFours<3, 3, 2>(out, rows, w, count, bias, has_bias);
  else if (kh == 5 && kw == 5 && stride == 1) DepthwiseRowInFours<5, 5, 1>(out, rows, w, count, bias, has_bias);
  else if (kh == 5 && kw == 5 && stride == 2) DepthwiseRowInFours<5, 5, 2>(out, rows, w, count, bias, has_bias);
  else return false;
  return true;
})
inline bool DepthwiseRowFast(float* out, const float* const* rows, const float* w, int64_t count, float bias,
                             bool has_bias, int64_t kh, int64_t kw, int64_t stride) {
  return QAIRT_EXEC_ISA_CALL(DepthwiseRowFastIsa, out, rows, w, count, bias, has_bias, kh, kw, stride);
}

// 2-D depthwise with multiplier 1, kernels 3x3 / 5x5, stride 1 or 2, no
// dilation, on a zero-padded copy of each plane (the zeros give the 0
// products MLAS's im2col gives the padding), every output row through
// DepthwiseRowFast. False if the geometry is not one of those.
bool DepthwiseFast(Ctx& c, const float* x, const float* w, const float* bias, float* y, int64_t batch, int64_t ch,
                   const Geo& g) {
  const int64_t IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2], KH = g.k[1], KW = g.k[2];
  const int64_t sh = g.s[1], sw = g.s[2], ph = g.pb[1], pw = g.pb[2];
  if (g.in[0] != 1 || g.out[0] != 1 || g.k[0] != 1 || g.d[1] != 1 || g.d[2] != 1 || KH != KW ||
      (KH != 3 && KH != 5) || (sw != 1 && sw != 2))
    return false;
  const int64_t PH = std::max(IH + ph, (OH - 1) * sh + KH), PW = std::max(IW + pw, (OW - 1) * sw + KW);
  ParallelOver(c, batch * ch, [&](int64_t task) {
    const int64_t oc = task % ch;
    const float* xc = x + task * IH * IW;
    float* yc = y + task * OH * OW;
    const float* wc = w + oc * KH * KW;
    thread_local std::vector<float> padded;
    if (padded.size() < static_cast<size_t>(PH * PW)) padded.resize(static_cast<size_t>(PH * PW));
    float* P = padded.data();
    // Zero only what the copy does not overwrite: the padding rows and each
    // copied row's margins.
    const int64_t rows = std::min(IH, PH - ph), cols = std::min(IW, PW - pw);
    std::fill(P, P + ph * PW, 0.0f);
    std::fill(P + (ph + rows) * PW, P + PH * PW, 0.0f);
    for (int64_t i = 0; i < rows; ++i) {
      float* dst = P + (i + ph) * PW;
      std::fill(dst, dst + pw, 0.0f);
      std::copy(xc + i * IW, xc + i * IW + cols, dst + pw);
      std::fill(dst + pw + cols, dst + PW, 0.0f);
    }
    const float* taps_rows[5];
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t t = 0; t < KH; ++t) taps_rows[t] = P + (oh * sh + t) * PW;
      DepthwiseRowFast(yc + oh * OW, taps_rows, wc, OW, bias ? bias[oc] : 0.0f, bias != nullptr, KH, KW, sw);
    }
  });
  return true;
}

// Depthwise (one input channel per group) in the order ONNX Runtime's CPU
// convolution sums it, so that a Q-DQ export runs bit-identically there
// (see gemm.cpp): MLAS runs each group as a GEMM over the im2col taps
// (K = kernel taps in (kd, kh, kw) order, padding contributing 0 products)
// with M = the channel multiplier. Multiplier 1 takes MLAS's M=1 kernel:
// products of four consecutive taps summed left to right, each group added
// to the output (then a pair, then a single tap); larger multipliers its
// GEMM kernel: sequential FMAs from zero per K block. The bias comes last.
void Depthwise(Ctx& c, const float* x, const float* w, const float* bias, float* y, int64_t batch, int64_t in_ch,
               int64_t mult, const Geo& g) {
  if (mult == 1 && DepthwiseFast(c, x, w, bias, y, batch, in_ch, g)) return;
  const int64_t out_ch = in_ch * mult;
  const int64_t taps = g.k_size(), OW = g.out[2];
  const int64_t kblock = MlasGemmKBlock(g.out_size(), taps, false);
  ParallelOver(c, batch * out_ch, [&](int64_t task) {
    const int64_t n = task / out_ch, oc = task % out_ch, ic = oc / mult;
    const float* xc = x + (n * in_ch + ic) * g.in_size();
    float* yc = y + (n * out_ch + oc) * g.out_size();
    const float* wc = w + oc * taps;
    thread_local std::vector<float> rows;
    if (rows.size() < static_cast<size_t>(2 * OW)) rows.resize(static_cast<size_t>(2 * OW));
    float* xin = rows.data();
    float* sum = xin + OW;
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        float* acc = yc + (od * g.out[1] + oh) * OW;
        auto gather = [&](int64_t t) {
          const int64_t kd = t / (g.k[1] * g.k[2]), kh = t / g.k[2] % g.k[1], kw = t % g.k[2];
          const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
          const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
          const bool inside = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
          GatherTapRow(inside ? xc + (id * g.in[1] + ih) * g.in[2] : nullptr, g.in[2], kw * g.d[2] - g.pb[2], g.s[2],
                       OW, xin);
        };
        if (mult == 1) {
          int64_t t = 0;
          auto group = [&](int64_t count) {
            for (int64_t j = 0; j < count; ++j) {
              gather(t + j);
              RowProducts(sum, xin, wc[t + j], OW, j == 0);
            }
            RowAccumulate(acc, sum, OW, t == 0);
            t += count;
          };
          while (taps - t >= 4) group(4);
          if (taps - t >= 2) group(2);
          if (taps - t == 1) group(1);
        } else {
          for (int64_t k0 = 0; k0 < taps; k0 += kblock) {
            std::fill(sum, sum + OW, 0.0f);
            for (int64_t t = k0; t < std::min(taps, k0 + kblock); ++t) {
              gather(t);
              for (int64_t ow = 0; ow < OW; ++ow) sum[ow] = std::fma(wc[t], xin[ow], sum[ow]);
            }
            if (k0 == 0) std::copy(sum, sum + OW, acc);
            else
              for (int64_t ow = 0; ow < OW; ++ow) acc[ow] = sum[ow] + acc[ow];
          }
        }
        if (bias)
          for (int64_t ow = 0; ow < OW; ++ow) acc[ow] = acc[ow] + bias[oc];
      }
  });
}

// Conv's state: its weights packed per group, and which buffer they came from.
struct ConvWeights : OpState {
  const float* source = nullptr;
  std::vector<std::shared_ptr<const PackedGemmA>> groups;
};

Status Conv(Ctx& c) {
  const Buf& x = c.in(0);
  const Buf& w = c.in(1);
  Buf& y = c.out(0);
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank()) return c.Fail("input rank {} is not supported", x.rank());
  const float* xf = c.F32(0);
  const float* wf = c.F32(1);
  const float* bias = c.has_in(2) ? c.F32(2) : nullptr;
  const Ints kernel(w.dims.begin() + 2, w.dims.end());
  const Result<Geo> geo = MakeGeo(c, x, y, kernel);
  if (!geo.ok()) return geo.status();
  const Geo& g = geo.value();
  const int64_t batch = x.dims[0], cin = x.dims[1], cout = y.dims[1];
  const bool dw = c.op().type == "DepthWiseConv2d";
  const int64_t group = dw ? cin : c.Int("group", 1);
  if (group < 1 || cin % group != 0 || cout % group != 0) return c.Fail("group {} does not divide channels", group);
  const int64_t cg = cin / group, og = cout / group;
  if (w.dims[1] != cg) return c.Fail("weight has {} input channels per group, expected {}", w.dims[1], cg);
  if (cg == 1 && group > 1) {
    Depthwise(c, xf, wf, bias, y.f(), batch, cin, cout / cin, g);
    return Status::Ok();
  }
  const int64_t ksz = g.k_size(), osz = g.out_size();
  const bool pointwise = ksz == 1 && g.s[0] == 1 && g.s[1] == 1 && g.s[2] == 1 && g.pb[0] == 0 && g.pb[1] == 0 &&
                         g.pb[2] == 0 && g.in_size() == osz;
  // Constant weights are packed for the GEMM kernel once per executor (the
  // packing otherwise runs over every weight on every inference).
  const ConvWeights* packed = nullptr;
  if (c.state() && c.in_static(1)) {
    auto* st = dynamic_cast<ConvWeights*>(c.state()->get());
    if (!st || st->source != wf) {
      auto fresh = std::make_unique<ConvWeights>();
      fresh->source = wf;
      for (int64_t gi = 0; gi < group; ++gi) {
        auto p = PackGemmAIfUseful(false, og, osz, cg * ksz, wf + gi * og * cg * ksz, cg * ksz);
        if (!p) {
          fresh->groups.clear();
          break;
        }
        fresh->groups.push_back(std::move(p));
      }
      st = fresh.get();
      *c.state() = std::move(fresh);
    }
    if (static_cast<int64_t>(st->groups.size()) == group) packed = st;
  }
  float* col = pointwise ? nullptr : c.Scratch(static_cast<size_t>(cg * ksz * osz));
  // ONNX Runtime's order (gemm.cpp): a pointwise convolution is one GEMM;
  // any other is im2col + one GEMM per K block of MlasGemmKBlock(osz, K),
  // which only changes the sums when a block ends in MLAS's N = 1 kernel
  // (its eight partial sums restart each block), so only then is it split.
  const int64_t kdim = cg * ksz;
  const int64_t kblock = MlasGemmKBlock(osz, kdim, false);
  const bool split_k = !pointwise && osz == 1 && og > 1 && kdim > kblock;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const float* xg = xf + (n * cin + gi * cg) * g.in_size();
      const float* src = xg;
      if (!pointwise) {
        Im2Col(xg, cg, g, col);
        src = col;
      }
      float* yg = y.f() + (n * cout + gi * og) * osz;
      const float* bg = bias ? bias + gi * og : nullptr;
      if (packed && GemmPackedA(*packed->groups[static_cast<size_t>(gi)], false, osz, kblock, 1.0f, src, osz, 0.0f, yg,
                                osz, bg))
        continue;  // bias added in the GEMM's output pass
      const float* wg = wf + gi * og * kdim;
      if (split_k) {
        for (int64_t k0 = 0; k0 < kdim; k0 += kblock)
          Gemm(false, false, og, osz, std::min(kblock, kdim - k0), 1.0f, wg + k0, kdim, src + k0 * osz, osz,
               k0 == 0 ? 0.0f : 1.0f, yg, osz);
      } else {
        Gemm(false, false, og, osz, kdim, 1.0f, wg, kdim, src, osz, 0.0f, yg, osz);
      }
      AddBias(yg, og, osz, bg);
    }
  }
  return Status::Ok();
}

Status TransposeConv(Ctx& c) {
  const Buf& x = c.in(0);
  const Buf& w = c.in(1);
  Buf& y = c.out(0);
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank()) return c.Fail("input rank {} is not supported", x.rank());
  const size_t n = x.rank() - 2;
  const float* xf = c.F32(0);
  const float* wf = c.F32(1);
  const float* bias = c.has_in(2) ? c.F32(2) : nullptr;
  const Ints kernel(w.dims.begin() + 2, w.dims.end());
  Geo g;
  {
    // Roles swapped: "in" is the conv output grid (y), "out" the conv input grid (x).
    const Ints strides = c.Ints("strides", Ints(n, 1)), dil = c.Ints("dilations", Ints(n, 1));
    Ints pads = c.Ints("pads", Ints(2 * n, 0));
    if (pads.size() != 2 * n) pads.assign(2 * n, 0);
    const Ints op = c.Ints("output_padding", Ints(n, 0));
    const std::string auto_pad_name = c.Str("auto_pad", "NOTSET");
    const std::optional<ops::AutoPad> auto_pad = ops::ParseAutoPad(auto_pad_name);
    if (!auto_pad) return c.Fail("unknown auto_pad '{}'", auto_pad_name);
    for (size_t i = 0; i < n; ++i) {
      const std::optional<ops::DimPads> p =
          ops::TransposeWindowPads(*auto_pad, c.Has("output_shape"), x.dims[2 + i], y.dims[2 + i], kernel[i],
                                   strides[i], dil[i], i < op.size() ? op[i] : 0, {pads[i], pads[n + i]});
      if (!p) return c.Fail("auto_pad {} cannot pad spatial dim {}", auto_pad_name, i);
      const size_t j = 3 - n + i;
      g.in[j] = y.dims[2 + i];
      g.out[j] = x.dims[2 + i];
      g.k[j] = kernel[i];
      g.s[j] = strides[i];
      g.d[j] = dil[i];
      g.pb[j] = p->begin;
      g.pe[j] = p->end;
    }
  }
  const int64_t batch = x.dims[0], cin = x.dims[1], cout = y.dims[1];
  const int64_t group = c.Int("group", 1);
  if (group < 1 || cin % group != 0 || cout % group != 0) return c.Fail("group {} does not divide channels", group);
  const int64_t cig = cin / group, cog = cout / group, ksz = g.k_size();
  const int64_t isz = g.out_size(), osz = g.in_size();  // x spatial, y spatial
  float* col = c.Scratch(static_cast<size_t>(cog * ksz * isz));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const float* xg = xf + (b * cin + gi * cig) * isz;
      const float* wg = wf + gi * cig * cog * ksz;
      // col[cog*K, isz] = W_g^T [cog*K, cig] x X_g [cig, isz]
      Gemm(true, false, cog * ksz, isz, cig, 1.0f, wg, cog * ksz, xg, isz, 0.0f, col, isz);
      float* yg = y.f() + (b * cout + gi * cog) * osz;
      std::fill(yg, yg + cog * osz, 0.0f);
      const float* cp = col;
      for (int64_t oc = 0; oc < cog; ++oc) {
        float* yc = yg + oc * osz;
        for (int64_t kd = 0; kd < g.k[0]; ++kd)
          for (int64_t kh = 0; kh < g.k[1]; ++kh)
            for (int64_t kw = 0; kw < g.k[2]; ++kw, cp += isz) {
              for (int64_t id = 0; id < g.out[0]; ++id) {
                const int64_t od = id * g.s[0] - g.pb[0] + kd * g.d[0];
                if (od < 0 || od >= g.in[0]) continue;
                for (int64_t ih = 0; ih < g.out[1]; ++ih) {
                  const int64_t oh = ih * g.s[1] - g.pb[1] + kh * g.d[1];
                  if (oh < 0 || oh >= g.in[1]) continue;
                  const float* cr = cp + (id * g.out[1] + ih) * g.out[2];
                  float* yr = yc + (od * g.in[1] + oh) * g.in[2];
                  for (int64_t iw = 0; iw < g.out[2]; ++iw) {
                    const int64_t ow = iw * g.s[2] - g.pb[2] + kw * g.d[2];
                    if (ow >= 0 && ow < g.in[2]) yr[ow] += cr[iw];
                  }
                }
              }
            }
      }
      AddBias(yg, cog, osz, bias ? bias + gi * cog : nullptr);
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterConv(KernelTable* t) {
  auto& m = *t;
  for (const char* op : {"Conv1d", "Conv2d", "Conv3d", "DepthWiseConv2d"}) m[op] = Conv;
  for (const char* op : {"TransposeConv1d", "TransposeConv2d", "TransposeConv3d"}) m[op] = TransposeConv;
}

}  // namespace qairt::exec
