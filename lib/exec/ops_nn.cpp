// Neural-network kernels: convolutions (im2col + GEMM; depthwise direct),
// transposed convolutions, fully connected, matmul, pooling, softmax,
// normalisations, resize, depth/space.
// The kernels' loops are written to auto-vectorise; the project builds with
// -O2, which (GCC 12) vectorises almost none of them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "exec/kernel.h"
#include "kernels/threadpool.h"

namespace qairt::exec {
namespace {

using Ints = std::vector<int64_t>;

// Spatial geometry normalised to 3-D (D, H, W); 1-D and 2-D get leading 1s.
struct Geo {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pb[3] = {0, 0, 0},
          pe[3] = {0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

Geo MakeGeo(Ctx& c, const Buf& x, const Buf& y, const Ints& kernel) {
  Geo g;
  const size_t n = x.rank() - 2;
  const Ints strides = c.Ints("strides", Ints(n, 1)), dil = c.Ints("dilations", Ints(n, 1));
  const Ints pads = c.Ints("pads", Ints(2 * n, 0));
  for (size_t i = 0; i < n; ++i) {
    const size_t j = 3 - n + i;
    g.in[j] = x.dims[2 + i];
    g.out[j] = y.dims[2 + i];
    g.k[j] = kernel[i];
    g.s[j] = i < strides.size() ? strides[i] : 1;
    g.d[j] = i < dil.size() ? dil[i] : 1;
    g.pb[j] = pads.size() == 2 * n ? pads[i] : 0;
    g.pe[j] = pads.size() == 2 * n ? pads[n + i] : 0;
  }
  return g;
}

// col[(c, kd, kh, kw), (od, oh, ow)] for `channels` channels of x.
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

void AddBias(float* y, int64_t channels, int64_t inner, const float* bias) {
  if (!bias) return;
  for (int64_t ch = 0; ch < channels; ++ch) {
    const float b = bias[ch];
    float* p = y + ch * inner;
    for (int64_t k = 0; k < inner; ++k) p[k] += b;
  }
}

template <typename F>
void ParallelOver(Ctx& c, int64_t n, F&& f) {
  if (c.pool() && n > 1) {
    c.pool()->ParallelFor(static_cast<size_t>(n), [&](size_t task, size_t) { f(static_cast<int64_t>(task)); });
  } else {
    for (int64_t i = 0; i < n; ++i) f(i);
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
__attribute__((target_clones("avx512f", "avx2", "default"))) void RowProducts(float* __restrict sum,
                                                                               const float* __restrict xin, float w,
                                                                               int64_t n, bool first) {
  if (first)
    for (int64_t i = 0; i < n; ++i) sum[i] = w * xin[i];
  else
    for (int64_t i = 0; i < n; ++i) sum[i] = sum[i] + w * xin[i];
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void RowAccumulate(float* __restrict acc,
                                                                                 const float* __restrict sum,
                                                                                 int64_t n, bool first) {
  if (first)
    for (int64_t i = 0; i < n; ++i) acc[i] = sum[i] + 0.0f;
  else
    for (int64_t i = 0; i < n; ++i) acc[i] = sum[i] + acc[i];
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

__attribute__((target_clones("avx512f", "avx2", "default"))) bool DepthwiseRowFast(
    float* out, const float* const* rows, const float* w, int64_t count, float bias, bool has_bias, int64_t kh,
    int64_t kw, int64_t stride) {
  if (kh == 3 && kw == 3 && stride == 1) DepthwiseRowInFours<3, 3, 1>(out, rows, w, count, bias, has_bias);
  else if (kh == 3 && kw == 3 && stride == 2) DepthwiseRowInFours<3, 3, 2>(out, rows, w, count, bias, has_bias);
  else if (kh == 5 && kw == 5 && stride == 1) DepthwiseRowInFours<5, 5, 1>(out, rows, w, count, bias, has_bias);
  else if (kh == 5 && kw == 5 && stride == 2) DepthwiseRowInFours<5, 5, 2>(out, rows, w, count, bias, has_bias);
  else return false;
  return true;
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
  const Geo g = MakeGeo(c, x, y, kernel);
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
    if (c.Has("output_shape")) {
      const Ints op = c.Ints("output_padding", Ints(n, 0));
      for (size_t i = 0; i < n; ++i) {
        const int64_t total = strides[i] * (x.dims[2 + i] - 1) + (i < op.size() ? op[i] : 0) +
                              ((kernel[i] - 1) * dil[i] + 1) - y.dims[2 + i];
        const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor division, as ONNX specifies
        pads[i] = total - half;
        pads[n + i] = half;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      const size_t j = 3 - n + i;
      g.in[j] = y.dims[2 + i];
      g.out[j] = x.dims[2 + i];
      g.k[j] = kernel[i];
      g.s[j] = strides[i];
      g.d[j] = dil[i];
      g.pb[j] = pads[i];
      g.pe[j] = pads[n + i];
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

Status FullyConnected(Ctx& c) {
  const Buf& w = c.in(1);
  Buf& y = c.out(0);
  if (w.rank() != 2) return c.Fail("weight must be 2-D, got rank {}", w.rank());
  const int64_t n = w.dims[0], k = w.dims[1];
  if (k == 0 || c.in(0).count % k != 0) return c.Fail("input of {} elements is not a multiple of K={}", c.in(0).count, k);
  const int64_t m = c.in(0).count / k;
  if (m * n != y.count) return c.Fail("output has {} elements, expected {}", y.count, m * n);
  // Summed as ONNX Runtime sums the exported op (gemm.cpp): Gemm(transB=1)
  // starts from the bias; MatMul with the weight transposed, then Add.
  const float* b = c.has_in(2) ? c.F32(2) : nullptr;
  if (FullyConnectedExportsAsGemm(c.op(), c.in(0).rank())) {
    if (b)
      for (int64_t i = 0; i < m; ++i) std::copy(b, b + n, y.f() + i * n);
    Gemm(false, true, m, n, k, 1.0f, c.F32(0), k, c.F32(1), k, b ? 1.0f : 0.0f, y.f(), n, GemmView{false, true});
    return Status::Ok();
  }
  Gemm(false, true, m, n, k, 1.0f, c.F32(0), k, c.F32(1), k, 0.0f, y.f(), n, GemmView{false, false});
  if (b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) y.f()[i * n + j] += b[j];
  return Status::Ok();
}

Status MatMul(Ctx& c) {
  const Buf& a = c.in(0);
  const Buf& b = c.in(1);
  Buf& y = c.out(0);
  const bool ta = c.Int("transpose_in0", 0) != 0, tb = c.Int("transpose_in1", 0) != 0;
  Ints ad = a.dims, bd = b.dims;
  if (ad.empty() || bd.empty()) return c.Fail("scalar operands are not supported");
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ta ? ad[ad.size() - 1] : ad[ad.size() - 2];
  const int64_t k = ta ? ad[ad.size() - 2] : ad[ad.size() - 1];
  const int64_t kb = tb ? bd[bd.size() - 1] : bd[bd.size() - 2];
  const int64_t n = tb ? bd[bd.size() - 2] : bd[bd.size() - 1];
  if (k != kb) return c.Fail("inner dimensions differ: {} vs {}", k, kb);
  const float* pa = c.F32(0);
  const float* pb = c.F32(1);
  const Ints abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
  const size_t r = std::max(abatch.size(), bbatch.size());
  Ints obatch(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t av = i + abatch.size() >= r ? abatch[i + abatch.size() - r] : 1;
    const int64_t bv = i + bbatch.size() >= r ? bbatch[i + bbatch.size() - r] : 1;
    if (av != bv && av != 1 && bv != 1) return c.Fail("batch dims do not broadcast");
    obatch[i] = std::max(av, bv);
  }
  const int64_t nb = Count(obatch);
  if (nb * m * n != y.count) return c.Fail("output has {} elements, expected {}", y.count, nb * m * n);
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  // The export writes transposes as Transpose nodes: ONNX Runtime sees an
  // untransposed MatMul, and with a 2-D B one GEMM over all rows of A. The
  // summation order follows that (gemm.cpp), so a transposed A with a 2-D B
  // is transposed here first.
  const GemmView plain{false, false};
  if (Count(bbatch) == 1) {
    const float* rows = pa;
    if (ta) {
      float* t = c.Scratch(static_cast<size_t>(nb * m * k));
      for (int64_t bi = 0; bi < nb; ++bi)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p) t[(bi * m + i) * k + p] = pa[bi * k * m + p * m + i];
      rows = t;
    }
    Gemm(false, tb, nb * m, n, k, 1.0f, rows, k, pb, ldb, 0.0f, y.f(), n, plain);
    return Status::Ok();
  }
  const Ints sa = BroadcastStrides(abatch, obatch), sb = BroadcastStrides(bbatch, obatch);
  Ints idx(r, 0);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < r; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    Gemm(ta, tb, m, n, k, 1.0f, pa + oa * m * k, lda, pb + ob * k * n, ldb, 0.0f, y.f() + bi * m * n, n, plain);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < obatch[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

// Sum of a plane in ONNX Runtime's orders (so Q-DQ exports agree with it bit
// for bit): AveragePool sums left to right; GlobalAveragePool (MLAS's
// global kernel) in four interleaved partial sums, element k into lane k % 4,
// reduced as (l0 + l2) + (l1 + l3), then the tail left to right.
float PlaneSum(const float* x, int64_t n) {
  float acc = 0.0f;
  for (int64_t k = 0; k < n; ++k) acc += x[k];
  return acc;
}
float PlaneSumFourLanes(const float* x, int64_t n) {
  float l[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  int64_t k = 0;
  for (; k + 4 <= n; k += 4)
    for (int j = 0; j < 4; ++j) l[j] = l[j] + x[k + j];
  float acc = (l[0] + l[2]) + (l[1] + l[3]);
  for (; k < n; ++k) acc += x[k];
  return acc;
}
// Max: NaN wins, like the generic pooling loop.
float PlaneMax(const float* x, int64_t n) {
  float acc = -std::numeric_limits<float>::infinity();
  for (int64_t k = 0; k < n; ++k) acc = (x[k] > acc || std::isnan(x[k])) ? x[k] : acc;
  return acc;
}

Status Pool(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  if (x.rank() < 3 || x.rank() > 5) return c.Fail("input rank {} is not supported", x.rank());
  const std::string& type = c.op().type;
  const bool is_max = type.rfind("PoolMax", 0) == 0, is_l2 = type == "L2Pool2d";
  const size_t ns = x.rank() - 2;
  const Ints kernel = c.Ints("kernel_shape", Ints(ns, 1));
  if (kernel.size() != ns) return c.Fail("kernel_shape has {} values for {} spatial dims", kernel.size(), ns);
  const Geo g = MakeGeo(c, x, y, kernel);
  const bool include_pad = c.Int("count_include_pad", 0) != 0;
  const float* xf = c.F32(0);
  const int64_t planes = x.dims[0] * x.dims[1];
  std::vector<float> ytmp;
  float* yf = y.f();
  if (y.store != Store::kF32) {  // integer pooling: computed in float (exact for max), stored back
    ytmp.resize(static_cast<size_t>(y.count));
    yf = ytmp.data();
  }
  // Global pooling (one output per plane, the window is the whole plane):
  // a contiguous reduction (squeeze-and-excitation blocks run one per block).
  const bool global = g.out_size() == 1 && g.k[0] == g.in[0] && g.k[1] == g.in[1] && g.k[2] == g.in[2] &&
                      g.pb[0] == 0 && g.pb[1] == 0 && g.pb[2] == 0 && g.d[0] == 1 && g.d[1] == 1 && g.d[2] == 1;
  if (global && !is_l2) {
    const int64_t n = g.in_size();
    const bool four_lanes = AveragePoolExportsAsGlobal(c.op());
    const float count = static_cast<float>(std::max<int64_t>(n, 1));
    ParallelOver(c, planes, [&](int64_t p) {
      const float* xc = xf + p * n;
      if (is_max) yf[p] = PlaneMax(xc, n);
      else yf[p] = (four_lanes ? PlaneSumFourLanes(xc, n) : PlaneSum(xc, n)) / count;
    });
  } else if (!is_l2 && g.in[0] == 1 && g.k[0] == 1 && g.out[0] == 1 && g.pb[1] == 0 && g.pb[2] == 0 &&
             g.d[1] == 1 && g.d[2] == 1 && (g.out[1] - 1) * g.s[1] + g.k[1] <= g.in[1] &&
             (g.out[2] - 1) * g.s[2] + g.k[2] <= g.in[2]) {
    // 2-D windows that never leave the input (no padding, no dilation, the
    // usual MaxPool 2x2/3x3): no bounds checks, same arithmetic order.
    const int64_t IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2], KH = g.k[1], KW = g.k[2];
    const int64_t sh = g.s[1], sw = g.s[2];
    const float count = static_cast<float>(KH * KW);
    ParallelOver(c, planes, [&](int64_t p) {
      const float* xc = xf + p * IH * IW;
      float* yc = yf + p * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const float* win = xc + oh * sh * IW + ow * sw;
          float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              const float v = win[kh * IW + kw];
              if (is_max) acc = (v > acc || std::isnan(v)) ? v : acc;
              else acc += v;
            }
          yc[oh * OW + ow] = is_max ? acc : acc / count;
        }
    });
  } else
  ParallelOver(c, planes, [&](int64_t p) {
    const float* xc = xf + p * g.in_size();
    float* yc = yf + p * g.out_size();
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          const int64_t o[3] = {od, oh, ow};
          int64_t padded = 1;
          for (int j = 0; j < 3; ++j) {
            const int64_t start = o[j] * g.s[j] - g.pb[j];
            const int64_t end = std::min(start + (g.k[j] - 1) * g.d[j] + 1, g.in[j] + g.pe[j]);
            padded *= (end - start + g.d[j] - 1) / g.d[j];
          }
          float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
          int64_t cnt = 0;
          for (int64_t kd = 0; kd < g.k[0]; ++kd) {
            const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
            if (id < 0 || id >= g.in[0]) continue;
            for (int64_t kh = 0; kh < g.k[1]; ++kh) {
              const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
              if (ih < 0 || ih >= g.in[1]) continue;
              for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                const int64_t iw = ow * g.s[2] - g.pb[2] + kw * g.d[2];
                if (iw < 0 || iw >= g.in[2]) continue;
                const float v = xc[(id * g.in[1] + ih) * g.in[2] + iw];
                if (is_max) acc = (v > acc || std::isnan(v)) ? v : acc;
                else acc += is_l2 ? v * v : v;
                ++cnt;
              }
            }
          }
          float r;
          if (is_max) r = acc;
          else if (is_l2) r = std::sqrt(acc);
          else r = acc / static_cast<float>(include_pad ? padded : std::max<int64_t>(cnt, 1));
          yc[(od * g.out[1] + oh) * g.out[2] + ow] = r;
        }
  });
  if (y.store == Store::kI64)
    for (int64_t k = 0; k < y.count; ++k) y.i()[k] = static_cast<int64_t>(std::nearbyint(yf[k]));
  else if (y.store == Store::kBool)
    for (int64_t k = 0; k < y.count; ++k) y.b()[k] = yf[k] != 0.0f;
  return Status::Ok();
}

struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit SplitAt(const Ints& dims, size_t axis) {
  AxisSplit s;
  for (size_t i = 0; i < dims.size(); ++i) (i < axis ? s.outer : i == axis ? s.n : s.inner) *= dims[i];
  return s;
}

std::optional<size_t> Axis(Ctx& c, const char* name, int64_t def, size_t rank) {
  return NormalizeAxis(c.Int(name, def), rank);
}

Status Softmax(Ctx& c) {
  const Buf& x = c.in(0);
  auto axis = Axis(c, "axis", -1, x.rank());
  if (!axis) return c.Fail("axis {} out of range for rank {}", c.Int("axis", -1), x.rank());
  const bool log = c.op().type == "LogSoftmax";
  const float beta = static_cast<float>(c.Float("beta", 1.0));
  const AxisSplit s = SplitAt(x.dims, *axis);
  const float* xf = c.F32(0);
  float* y = c.out(0).f();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const float* xp = xf + o * s.n * s.inner + i;
      float* yp = y + o * s.n * s.inner + i;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < s.n; ++k) mx = std::max(mx, beta * xp[k * s.inner]);
      float sum = 0;
      for (int64_t k = 0; k < s.n; ++k) {
        const float e = std::exp(beta * xp[k * s.inner] - mx);
        if (!log) yp[k * s.inner] = e;
        sum += e;
      }
      if (log) {
        const float ls = std::log(sum);
        for (int64_t k = 0; k < s.n; ++k) yp[k * s.inner] = beta * xp[k * s.inner] - mx - ls;
      } else {
        const float inv = 1.0f / sum;
        for (int64_t k = 0; k < s.n; ++k) yp[k * s.inner] *= inv;
      }
    }
  return Status::Ok();
}

// LayerNorm / RmsNorm over x[axis:].
Status LayerNorm(Ctx& c) {
  const Buf& x = c.in(0);
  size_t axis;
  if (c.Has("axes")) {
    Ints axes = c.Ints("axes", {});
    if (axes.empty()) return c.Fail("axes is empty");
    auto a = NormalizeAxis(*std::min_element(axes.begin(), axes.end()), x.rank());
    if (!a) return c.Fail("axes out of range");
    axis = *a;
  } else {
    auto a = Axis(c, "axis", -1, x.rank());
    if (!a) return c.Fail("axis {} out of range for rank {}", c.Int("axis", -1), x.rank());
    axis = *a;
  }
  const bool rms = c.op().type == "RmsNorm";
  const float eps = static_cast<float>(c.Float("epsilon", 1e-5));
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < x.rank(); ++i) (i < axis ? outer : inner) *= x.dims[i];
  const float* gamma = c.has_in(1) ? c.F32(1) : nullptr;
  const float* beta = c.has_in(2) ? c.F32(2) : nullptr;
  const int64_t gn = gamma ? c.in(1).count : 1, bn = beta ? c.in(2).count : 1;
  const float* xf = c.F32(0);
  float* y = c.out(0).f();
  for (int64_t o = 0; o < outer; ++o) {
    const float* xp = xf + o * inner;
    float* yp = y + o * inner;
    double mean = 0;
    if (!rms) {
      for (int64_t k = 0; k < inner; ++k) mean += xp[k];
      mean /= static_cast<double>(inner);
    }
    double var = 0;
    for (int64_t k = 0; k < inner; ++k) {
      const double d = xp[k] - mean;
      var += d * d;
    }
    var /= static_cast<double>(inner);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (int64_t k = 0; k < inner; ++k) {
      float v = (xp[k] - m) * inv;
      if (gamma) v *= gamma[k % gn];
      if (beta) v += beta[k % bn];
      yp[k] = v;
    }
  }
  return Status::Ok();
}

// GroupNorm (num_groups) and InstanceNorm (groups = channels).
Status GroupNorm(Ctx& c) {
  const Buf& x = c.in(0);
  if (x.rank() < 2) return c.Fail("input must have rank >= 2");
  const int64_t ch = x.dims[1];
  const int64_t groups = c.op().type == "InstanceNorm" ? ch : c.Int("num_groups", 1);
  if (groups < 1 || ch % groups != 0) return c.Fail("num_groups {} does not divide {} channels", groups, ch);
  const float eps = static_cast<float>(c.Float("epsilon", 1e-5));
  int64_t spatial = 1;
  for (size_t i = 2; i < x.rank(); ++i) spatial *= x.dims[i];
  const int64_t cpg = ch / groups, gsz = cpg * spatial;
  const float* gamma = c.has_in(1) ? c.F32(1) : nullptr;
  const float* beta = c.has_in(2) ? c.F32(2) : nullptr;
  const float* xf = c.F32(0);
  float* y = c.out(0).f();
  for (int64_t n = 0; n < x.dims[0]; ++n)
    for (int64_t gi = 0; gi < groups; ++gi) {
      const float* xp = xf + (n * groups + gi) * gsz;
      float* yp = y + (n * groups + gi) * gsz;
      double mean = 0, var = 0;
      for (int64_t k = 0; k < gsz; ++k) mean += xp[k];
      mean /= static_cast<double>(gsz);
      for (int64_t k = 0; k < gsz; ++k) var += (xp[k] - mean) * (xp[k] - mean);
      var /= static_cast<double>(gsz);
      const float inv = static_cast<float>(1.0 / std::sqrt(var + eps)), m = static_cast<float>(mean);
      for (int64_t cc = 0; cc < cpg; ++cc) {
        const int64_t chn = gi * cpg + cc;
        const float gv = gamma ? gamma[chn] : 1.0f, bv = beta ? beta[chn] : 0.0f;
        for (int64_t k = 0; k < spatial; ++k) yp[cc * spatial + k] = (xp[cc * spatial + k] - m) * inv * gv + bv;
      }
    }
  return Status::Ok();
}

Status Batchnorm(Ctx& c) {
  const Buf& x = c.in(0);
  const int64_t ch = x.rank() > 1 ? x.dims[1] : 1;
  int64_t spatial = 1;
  for (size_t i = 2; i < x.rank(); ++i) spatial *= x.dims[i];
  const float* sc = c.F32(1);
  const float* bi = c.has_in(2) ? c.F32(2) : nullptr;
  const float* xf = c.F32(0);
  float* y = c.out(0).f();
  for (int64_t n = 0; n < x.dims[0]; ++n)
    for (int64_t cc = 0; cc < ch; ++cc) {
      const float s = sc[cc], b = bi ? bi[cc] : 0.0f;
      const float* xp = xf + (n * ch + cc) * spatial;
      float* yp = y + (n * ch + cc) * spatial;
      for (int64_t k = 0; k < spatial; ++k) yp[k] = xp[k] * s + b;
    }
  return Status::Ok();
}

Status Lrn(Ctx& c) {
  const Buf& x = c.in(0);
  const int64_t size = c.Int("size", 1);
  const float alpha = static_cast<float>(c.Float("alpha", 1e-4)), beta = static_cast<float>(c.Float("beta", 0.75)),
              bias = static_cast<float>(c.Float("bias", 1.0));
  const int64_t ch = x.dims[1];
  int64_t spatial = 1;
  for (size_t i = 2; i < x.rank(); ++i) spatial *= x.dims[i];
  const float* xf = c.F32(0);
  float* y = c.out(0).f();
  const int64_t lo = (size - 1) / 2, hi = (size - 1) - lo;
  for (int64_t n = 0; n < x.dims[0]; ++n)
    for (int64_t cc = 0; cc < ch; ++cc)
      for (int64_t k = 0; k < spatial; ++k) {
        float sum = 0;
        for (int64_t j = std::max<int64_t>(0, cc - lo); j <= std::min(ch - 1, cc + hi); ++j) {
          const float v = xf[(n * ch + j) * spatial + k];
          sum += v * v;
        }
        const int64_t idx = (n * ch + cc) * spatial + k;
        y[idx] = xf[idx] / std::pow(bias + alpha / static_cast<float>(size) * sum, beta);
      }
  return Status::Ok();
}

Status L2Norm(Ctx& c) {
  const Buf& x = c.in(0);
  auto axis = Axis(c, "axis", -1, x.rank());
  if (!axis) return c.Fail("axis out of range");
  const float eps = static_cast<float>(c.Float("epsilon", 1e-12));
  const AxisSplit s = SplitAt(x.dims, *axis);
  const float* xf = c.F32(0);
  float* y = c.out(0).f();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      double sum = 0;
      for (int64_t k = 0; k < s.n; ++k) sum += double(xf[(o * s.n + k) * s.inner + i]) * xf[(o * s.n + k) * s.inner + i];
      const float inv = static_cast<float>(1.0 / std::sqrt(std::max<double>(sum, eps)));
      for (int64_t k = 0; k < s.n; ++k) y[(o * s.n + k) * s.inner + i] = xf[(o * s.n + k) * s.inner + i] * inv;
    }
  return Status::Ok();
}

// ---- Resize: one axis at a time (tensor-product interpolation is separable) ----

struct ResizeMode {
  std::string mode, ctm, nearest;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool scales_given = false;
};

double SourceCoord(const ResizeMode& m, int64_t o, int64_t in, int64_t out, double scale) {
  const double x = static_cast<double>(o);
  if (m.ctm == "align_corners") {
    // ONNX: length_resized = in * scale (not rounded) when scales are given.
    const double len = m.scales_given ? static_cast<double>(in) * scale : static_cast<double>(out);
    return len <= 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (len - 1.0);
  }
  if (m.ctm == "asymmetric") return x / scale;
  if (m.ctm == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m.ctm == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m.ctm == "half_pixel_symmetric") {
    const double adj = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double center = static_cast<double>(in) / 2.0;
    const double offset = center * (1.0 - adj);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

int64_t NearestIndex(const std::string& nm, double x, int64_t in) {
  double r;
  if (nm == "floor") r = std::floor(x);
  else if (nm == "ceil") r = std::ceil(x);
  else if (nm == "round_prefer_ceil") r = std::floor(x + 0.5);
  else r = (x == std::floor(x) + 0.5) ? std::floor(x) : std::round(x);  // round_prefer_floor
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
}

void ResizeAxis(const float* src, const Ints& dims, size_t axis, int64_t out_len, double scale, const ResizeMode& m,
                float* dst) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i < axis) outer *= dims[i];
    if (i > axis) inner *= dims[i];
  }
  const int64_t in_len = dims[axis];
  // Per output position: up to 4 taps.
  std::vector<std::array<int64_t, 4>> idx(static_cast<size_t>(out_len));
  std::vector<std::array<float, 4>> wts(static_cast<size_t>(out_len));
  int taps = 1;
  for (int64_t o = 0; o < out_len; ++o) {
    auto& I = idx[static_cast<size_t>(o)];
    auto& W = wts[static_cast<size_t>(o)];
    I.fill(0);
    W.fill(0.0f);
    const double x = SourceCoord(m, o, in_len, out_len, scale);
    if (m.mode == "nearest") {
      I[0] = NearestIndex(m.nearest, x, in_len);
      W[0] = 1.0f;
      taps = 1;
    } else if (m.mode == "linear") {
      const double xc = std::clamp(x, 0.0, static_cast<double>(in_len - 1));
      const auto i0 = static_cast<int64_t>(std::floor(xc));
      const int64_t i1 = std::min(i0 + 1, in_len - 1);
      const double t = xc - static_cast<double>(i0);
      I[0] = i0;
      I[1] = i1;
      W[0] = static_cast<float>(1.0 - t);
      W[1] = static_cast<float>(t);
      taps = 2;
    } else {  // cubic
      const double A = m.cubic_a;
      const auto i0 = static_cast<int64_t>(std::floor(x));
      const double t = x - static_cast<double>(i0);
      double cf[4];
      const double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
      cf[0] = ((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A;
      cf[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
      cf[2] = ((A + 2) * t2 - (A + 3)) * t2 * t2 + 1;
      cf[3] = ((A * t3 - 5 * A) * t3 + 8 * A) * t3 - 4 * A;
      double sum = 0;
      for (int j = 0; j < 4; ++j) {
        const int64_t ii = i0 - 1 + j;
        if (m.exclude_outside && (ii < 0 || ii >= in_len)) cf[j] = 0;
        sum += cf[j];
        I[static_cast<size_t>(j)] = std::clamp<int64_t>(ii, 0, in_len - 1);
      }
      for (int j = 0; j < 4; ++j)
        W[static_cast<size_t>(j)] = static_cast<float>(m.exclude_outside && sum != 0 ? cf[j] / sum : cf[j]);
      taps = 4;
    }
  }
  for (int64_t o = 0; o < outer; ++o) {
    const float* s = src + o * in_len * inner;
    float* d = dst + o * out_len * inner;
    for (int64_t p = 0; p < out_len; ++p) {
      const auto& I = idx[static_cast<size_t>(p)];
      const auto& W = wts[static_cast<size_t>(p)];
      float* dr = d + p * inner;
      if (taps == 1) {
        std::copy(s + I[0] * inner, s + I[0] * inner + inner, dr);
        continue;
      }
      std::fill(dr, dr + inner, 0.0f);
      for (int j = 0; j < taps; ++j) {
        const float w = W[static_cast<size_t>(j)];
        const float* sr = s + I[static_cast<size_t>(j)] * inner;
        for (int64_t k = 0; k < inner; ++k) dr[k] += w * sr[k];
      }
    }
  }
}

Status Resize(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  ResizeMode m;
  m.mode = c.Str("mode", "nearest");
  if (c.op().type == "ResizeBilinear") m.mode = "linear";
  if (c.op().type == "ResizeNearestNeighbor") m.mode = "nearest";
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic") return c.Fail("mode '{}' is not supported", m.mode);
  m.ctm = c.Str("coordinate_transformation_mode", "half_pixel");
  if (c.op().type != "Resize") {
    m.ctm = c.Int("align_corners", 0) ? "align_corners" : c.Int("half_pixel_centers", 0) ? "half_pixel" : "asymmetric";
    if (m.mode == "nearest") m.nearest = c.Int("align_corners", 0) ? "round_prefer_ceil" : "floor";
  }
  if (m.ctm == "tf_crop_and_resize") return c.Fail("tf_crop_and_resize is not supported");
  if (m.nearest.empty()) m.nearest = c.Str("nearest_mode", "round_prefer_floor");
  m.cubic_a = c.Float("cubic_coeff_a", -0.75);
  m.exclude_outside = c.Int("exclude_outside", 0) != 0;
  std::vector<double> scales = c.Floats("scales", {});
  m.scales_given = !scales.empty() && !c.Has("sizes");
  const size_t r = x.rank();
  if (!scales.empty() && scales.size() != r) {  // spatial only
    std::vector<double> full(r, 1.0);
    for (size_t i = 0; i < scales.size() && i + (r - scales.size()) < r; ++i) full[r - scales.size() + i] = scales[i];
    scales = full;
  }
  if (x.store != Store::kF32 || y.store != Store::kF32) return c.Fail("only float tensors are supported");
  std::vector<float> a(x.f(), x.f() + x.count), b;
  Ints dims = x.dims;
  for (size_t ax = 0; ax < r; ++ax) {
    const int64_t out_len = y.dims[ax];
    const double scale = scales.empty() ? static_cast<double>(out_len) / static_cast<double>(dims[ax]) : scales[ax];
    if (out_len == dims[ax] && scale == 1.0 && m.ctm != "tf_half_pixel_for_nn") continue;
    if (dims[ax] == 0) return c.Fail("cannot resize an empty axis");
    Ints nd = dims;
    nd[ax] = out_len;
    b.assign(static_cast<size_t>(Count(nd)), 0.0f);
    ResizeAxis(a.data(), dims, ax, out_len, scale, m, b.data());
    a.swap(b);
    dims = nd;
  }
  if (dims != y.dims) return c.Fail("internal: resized dims disagree with the output shape");
  std::copy(a.begin(), a.end(), y.f());
  return Status::Ok();
}

Status DepthToSpace(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const int64_t bs = c.Int("block_size", 1);
  const bool crd = c.Str("mode", "DCR") == "CRD";
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3], oc = C / (bs * bs);
  const size_t es = StoreSize(x.store);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(y.data);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c2 = 0; c2 < oc; ++c2)
      for (int64_t h = 0; h < H * bs; ++h)
        for (int64_t w = 0; w < W * bs; ++w) {
          const int64_t bh = h % bs, bw = w % bs;
          const int64_t ic = crd ? c2 * bs * bs + bh * bs + bw : (bh * bs + bw) * oc + c2;
          const int64_t si = ((n * C + ic) * H + h / bs) * W + w / bs;
          const int64_t di = ((n * oc + c2) * H * bs + h) * W * bs + w;
          std::memcpy(dst + di * es, src + si * es, es);
        }
  return Status::Ok();
}

Status SpaceToDepth(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const int64_t bs = c.Int("block_size", 1);
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  const size_t es = StoreSize(x.store);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(y.data);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t cc = 0; cc < C; ++cc)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          const int64_t oc = ((h % bs) * bs + (w % bs)) * C + cc;
          const int64_t di = ((n * C * bs * bs + oc) * (H / bs) + h / bs) * (W / bs) + w / bs;
          std::memcpy(dst + di * es, src + (((n * C + cc) * H + h) * W + w) * es, es);
        }
  return Status::Ok();
}

}  // namespace

void RegisterNn(KernelTable* t) {
  auto& m = *t;
  for (const char* op : {"Conv1d", "Conv2d", "Conv3d", "DepthWiseConv2d"}) m[op] = Conv;
  for (const char* op : {"TransposeConv1d", "TransposeConv2d", "TransposeConv3d"}) m[op] = TransposeConv;
  m["FullyConnected"] = FullyConnected;
  m["MatMul"] = MatMul;
  for (const char* op : {"PoolAvg2d", "PoolMax2d", "PoolAvg3d", "PoolMax3d", "L2Pool2d"}) m[op] = Pool;
  m["Softmax"] = Softmax;
  m["LogSoftmax"] = Softmax;
  m["LayerNorm"] = LayerNorm;
  m["RmsNorm"] = LayerNorm;
  m["GroupNorm"] = GroupNorm;
  m["InstanceNorm"] = GroupNorm;
  m["Batchnorm"] = Batchnorm;
  m["Lrn"] = Lrn;
  m["L2Norm"] = L2Norm;
  m["Resize"] = Resize;
  m["ResizeBilinear"] = Resize;
  m["ResizeNearestNeighbor"] = Resize;
  m["DepthToSpace"] = DepthToSpace;
  m["SpaceToDepth"] = SpaceToDepth;
}

}  // namespace qairt::exec
