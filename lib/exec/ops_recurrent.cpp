// LSTM and GRU in ONNX's formulation (gate orders i,o,f,c and z,r,h; layouts
// 0 and 1; sequence_lens; peepholes; linear_before_reset).
// The kernels' loops are written to auto-vectorise (the module is built
// with -O3: CMakeLists.txt, qairt_exec).
#include <algorithm>
#include <cmath>

#include "exec/kernel.h"

namespace qairt::exec {
namespace {

inline float Sig(float x) { return x >= 0 ? 1.0f / (1.0f + std::exp(-x)) : std::exp(x) / (1.0f + std::exp(x)); }

Status Recurrent(Ctx& c) {
  const bool lstm = c.op().type == "Lstm";
  const int64_t G = lstm ? 4 : 3;
  const Buf& x = c.in(0);
  const Buf& w = c.in(1);
  const Buf& rr = c.in(2);
  if (x.rank() != 3 || w.rank() != 3 || rr.rank() != 3) return c.Fail("X, W and R must be 3-D");
  const bool bf = c.Int("layout", 0) == 1;
  const std::string direction = c.Str("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t H = rr.dims[2];
  const int64_t seq = bf ? x.dims[1] : x.dims[0], batch = bf ? x.dims[0] : x.dims[1], I = x.dims[2];
  if (w.dims[0] != dirs || w.dims[1] != G * H || w.dims[2] != I || rr.dims[0] != dirs || rr.dims[1] != G * H)
    return c.Fail("W/R shapes do not match direction={}, hidden size {} and input size {}", direction, H, I);
  const bool lbr = !lstm && c.Int("linear_before_reset", 0) != 0;
  const float* xf = c.F32(0);
  const float* wf = c.F32(1);
  const float* rf = c.F32(2);
  const float* bias = c.has_in(3) ? c.F32(3) : nullptr;
  const int64_t* lens = c.has_in(4) ? c.I64(4) : nullptr;
  const float* h0 = c.has_in(5) ? c.F32(5) : nullptr;
  const float* c0 = lstm && c.has_in(6) ? c.F32(6) : nullptr;
  const float* peep = lstm && c.has_in(7) ? c.F32(7) : nullptr;
  // X as [seq, batch, I].
  std::vector<float> xt;
  const float* xs = xf;
  if (bf) {
    xt.resize(static_cast<size_t>(seq * batch * I));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < seq; ++t)
        std::copy(xf + (b * seq + t) * I, xf + (b * seq + t + 1) * I, xt.data() + (t * batch + b) * I);
    xs = xt.data();
  }
  Buf* Y = c.has_out(0) ? &c.out(0) : nullptr;
  Buf* Yh = c.has_out(1) ? &c.out(1) : nullptr;
  Buf* Yc = lstm && c.has_out(2) ? &c.out(2) : nullptr;
  if (Y) std::fill(Y->f(), Y->f() + Y->count, 0.0f);
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return bf ? ((b * seq + t) * dirs + d) * H : ((t * dirs + d) * batch + b) * H;
  };
  auto s_at = [&](int64_t d, int64_t b) { return bf ? (b * dirs + d) * H : (d * batch + b) * H; };
  const int64_t GH = G * H;
  std::vector<float> xw(static_cast<size_t>(seq * batch * GH)), hr(static_cast<size_t>(batch * GH));
  std::vector<float> h(static_cast<size_t>(batch * H)), cell(static_cast<size_t>(batch * H)), rh(static_cast<size_t>(batch * H)),
      hn(static_cast<size_t>(batch * H));
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const float* wd = wf + d * GH * I;
    const float* rd = rf + d * GH * H;
    const float* wb = bias ? bias + d * 2 * GH : nullptr;
    const float* rb = bias ? wb + GH : nullptr;
    Gemm(false, true, seq * batch, GH, I, 1.0f, xs, I, wd, I, 0.0f, xw.data(), GH);
    if (bias)
      for (int64_t row = 0; row < seq * batch; ++row)
        for (int64_t j = 0; j < GH; ++j) {
          const bool inner_rb = lbr && j >= 2 * H;  // GRU linear_before_reset: Rbh stays inside r * (...)
          xw[static_cast<size_t>(row * GH + j)] += wb[j] + (inner_rb ? 0.0f : rb[j]);
        }
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k = 0; k < H; ++k) {
        h[static_cast<size_t>(b * H + k)] = h0 ? h0[s_at(d, b) + k] : 0.0f;
        cell[static_cast<size_t>(b * H + k)] = c0 ? c0[s_at(d, b) + k] : 0.0f;
      }
    const float* pi = peep ? peep + d * 3 * H : nullptr;
    for (int64_t step = 0; step < seq; ++step) {
      // H_{t-1} R^T for all gates (GRU without linear_before_reset: z, r only matter).
      Gemm(false, true, batch, GH, H, 1.0f, h.data(), H, rd, H, 0.0f, hr.data(), GH);
      if (!lstm && !lbr) {
        // r gates first, then (r * H) Rh^T.
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t len = lens ? lens[b] : seq;
          const int64_t t = reverse ? len - 1 - step : step;
          for (int64_t k = 0; k < H; ++k) {
            float rg = 0;
            if (t >= 0 && t < len) rg = Sig(xw[static_cast<size_t>((t * batch + b) * GH + H + k)] + hr[static_cast<size_t>(b * GH + H + k)]);
            rh[static_cast<size_t>(b * H + k)] = rg * h[static_cast<size_t>(b * H + k)];
          }
        }
        Gemm(false, true, batch, H, H, 1.0f, rh.data(), H, rd + 2 * H * H, H, 0.0f, hn.data(), H);
      }
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = lens ? std::min<int64_t>(lens[b], seq) : seq;
        const int64_t t = reverse ? len - 1 - step : step;
        if (t < 0 || t >= len) continue;
        const float* g = xw.data() + (t * batch + b) * GH;
        const float* q = hr.data() + b * GH;
        float* hb = h.data() + b * H;
        float* cb = cell.data() + b * H;
        for (int64_t k = 0; k < H; ++k) {
          if (lstm) {
            const float cp = cb[k];
            const float ig = Sig(g[k] + q[k] + (pi ? pi[k] * cp : 0.0f));
            const float fg = Sig(g[2 * H + k] + q[2 * H + k] + (pi ? pi[2 * H + k] * cp : 0.0f));
            const float cg = std::tanh(g[3 * H + k] + q[3 * H + k]);
            const float cn = fg * cp + ig * cg;
            const float og = Sig(g[H + k] + q[H + k] + (pi ? pi[H + k] * cn : 0.0f));
            cb[k] = cn;
            hb[k] = og * std::tanh(cn);
          } else {
            const float z = Sig(g[k] + q[k]);
            float hc;
            if (lbr) {
              const float r = Sig(g[H + k] + q[H + k]);
              hc = std::tanh(g[2 * H + k] + r * (q[2 * H + k] + (rb ? rb[2 * H + k] : 0.0f)));
            } else {
              hc = std::tanh(g[2 * H + k] + hn[static_cast<size_t>(b * H + k)]);
            }
            hb[k] = (1.0f - z) * hc + z * hb[k];
          }
        }
        if (Y) std::copy(hb, hb + H, Y->f() + y_at(t, d, b));
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (Yh) std::copy(h.data() + b * H, h.data() + (b + 1) * H, Yh->f() + s_at(d, b));
      if (Yc) std::copy(cell.data() + b * H, cell.data() + (b + 1) * H, Yc->f() + s_at(d, b));
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterRecurrent(KernelTable* t) {
  (*t)["Lstm"] = Recurrent;
  (*t)["Gru"] = Recurrent;
}

}  // namespace qairt::exec
