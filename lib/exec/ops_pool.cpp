// Pooling kernels: average, max and L2 pooling over one to three spatial
// dims (global pooling included).
// The kernels' loops are written to auto-vectorise (the module is built
// with -O3: CMakeLists.txt, qairt_exec).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "exec/spatial.h"

namespace qairt::exec {
namespace {

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
  const Result<Geo> geo = MakeGeo(c, x, y, kernel);
  if (!geo.ok()) return geo.status();
  const Geo& g = geo.value();
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

}  // namespace

void RegisterPool(KernelTable* t) {
  auto& m = *t;
  for (const char* op : {"PoolAvg2d", "PoolMax2d", "PoolAvg3d", "PoolMax3d", "L2Pool2d"}) m[op] = Pool;
}

}  // namespace qairt::exec
