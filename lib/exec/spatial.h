// Internal: what the convolution and pooling kernels (ops_conv.cpp,
// ops_pool.cpp) share. Include it after the file's optimisation pragma: its
// functions are compiled with the kernels that call them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "ir/ops/shape_helpers.h"
#include "kernels/threadpool.h"

namespace qairt::exec {

using Ints = std::vector<int64_t>;

// Spatial geometry normalised to 3-D (D, H, W); 1-D and 2-D get leading 1s.
struct Geo {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pb[3] = {0, 0, 0},
          pe[3] = {0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

// A convolution's or pooling's geometry, its pads resolved from auto_pad as
// shape inference sized y (ops::WindowPads).
inline Result<Geo> MakeGeo(Ctx& c, const Buf& x, const Buf& y, const Ints& kernel) {
  Geo g;
  const size_t n = x.rank() - 2;
  const Ints strides = c.Ints("strides", Ints(n, 1)), dil = c.Ints("dilations", Ints(n, 1));
  const Ints pads = c.Ints("pads", Ints(2 * n, 0));
  const std::string auto_pad_name = c.Str("auto_pad", "NOTSET");
  const std::optional<ops::AutoPad> auto_pad = ops::ParseAutoPad(auto_pad_name);
  if (!auto_pad) return c.Fail("unknown auto_pad '{}'", auto_pad_name);
  for (size_t i = 0; i < n; ++i) {
    const size_t j = 3 - n + i;
    g.in[j] = x.dims[2 + i];
    g.out[j] = y.dims[2 + i];
    g.k[j] = kernel[i];
    g.s[j] = i < strides.size() ? strides[i] : 1;
    g.d[j] = i < dil.size() ? dil[i] : 1;
    const ops::DimPads given = pads.size() == 2 * n ? ops::DimPads{pads[i], pads[n + i]} : ops::DimPads{};
    const std::optional<ops::DimPads> p = ops::WindowPads(*auto_pad, g.in[j], g.k[j], g.s[j], g.d[j], given);
    if (!p) return c.Fail("auto_pad {} cannot pad spatial dim {}", auto_pad_name, i);
    g.pb[j] = p->begin;
    g.pe[j] = p->end;
  }
  return g;
}

// col[(c, kd, kh, kw), (od, oh, ow)] for `channels` channels of x: the
// patches a convolution multiplies its weight rows with (ops_conv.cpp).
void Im2Col(const float* x, int64_t channels, const Geo& g, float* col);

template <typename F>
inline void ParallelOver(Ctx& c, int64_t n, F&& f) {
  if (c.pool() && n > 1) {
    c.pool()->ParallelFor(static_cast<size_t>(n), [&](size_t task, size_t) { f(static_cast<int64_t>(task)); });
  } else {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
}

}  // namespace qairt::exec
