// Softmax and normalisation kernels: Softmax / LogSoftmax, LayerNorm /
// RmsNorm, GroupNorm / InstanceNorm, Batchnorm, Lrn, L2Norm.
// The kernels' loops are written to auto-vectorise (the module is built
// with -O3: CMakeLists.txt, qairt_exec).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "exec/kernel.h"

namespace qairt::exec {
namespace {

using Ints = std::vector<int64_t>;

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
  if (s.inner == 1 && !log) {
    // The last axis (attention): the same operations, in the same order, on
    // contiguous rows, where the final scaling runs in vectors. A masked
    // score leaves exp() in the subnormal range (a -100 mask: e^-100), and
    // every scalar multiply of a subnormal takes a microcode assist; a
    // vector multiply takes one for all its lanes (the strided loop below
    // spent 0.15 s a sample of a 1B-parameter decoder here).
    for (int64_t o = 0; o < s.outer; ++o) {
      const float* xp = xf + o * s.n;
      float* yp = y + o * s.n;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < s.n; ++k) mx = std::max(mx, beta * xp[k]);
      float sum = 0;
      for (int64_t k = 0; k < s.n; ++k) {
        const float e = std::exp(beta * xp[k] - mx);
        yp[k] = e;
        sum += e;
      }
      const float inv = 1.0f / sum;
      for (int64_t k = 0; k < s.n; ++k) yp[k] *= inv;
    }
    return Status::Ok();
  }
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

}  // namespace

void RegisterNorm(KernelTable* t) {
  auto& m = *t;
  // One kernel for both types of each pair (it tells them apart by c.op().type).
  for (const char* op : {"Softmax", "LogSoftmax"}) m[op] = Softmax;
  for (const char* op : {"LayerNorm", "RmsNorm"}) m[op] = LayerNorm;
  for (const char* op : {"GroupNorm", "InstanceNorm"}) m[op] = GroupNorm;
  m["Batchnorm"] = Batchnorm;
  m["Lrn"] = Lrn;
  m["L2Norm"] = L2Norm;
}

}  // namespace qairt::exec
