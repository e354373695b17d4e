// Resize kernels: Resize (ResizeBilinear and ResizeNearestNeighbor too),
// and DepthToSpace / SpaceToDepth, which trade spatial size for channels.
// The kernels' loops are written to auto-vectorise (the module is built
// with -O3: CMakeLists.txt, qairt_exec).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "exec/kernel.h"

namespace qairt::exec {
namespace {

using Ints = std::vector<int64_t>;

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
  const auto [outer, in_len, inner] = SplitAt(dims, axis);
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

void RegisterResize(KernelTable* t) {
  auto& m = *t;
  for (const char* op : {"Resize", "ResizeBilinear", "ResizeNearestNeighbor"}) m[op] = Resize;
  m["DepthToSpace"] = DepthToSpace;
  m["SpaceToDepth"] = SpaceToDepth;
}

}  // namespace qairt::exec
