// Data-movement, indexing, casting, reduction and sorting kernels. Most are
// dtype-agnostic: they move elements of the storage size.
// The kernels' loops are written to auto-vectorise (the module is built
// with -O3: CMakeLists.txt, qairt_exec).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>

#include "exec/kernel.h"

namespace qairt::exec {
namespace {

using Ints = std::vector<int64_t>;

double GetD(const Buf& b, int64_t k) {
  return b.store == Store::kF32 ? b.f()[k] : b.store == Store::kI64 ? static_cast<double>(b.i()[k]) : b.b()[k];
}
void PutD(Buf& b, int64_t k, double v) {
  if (b.store == Store::kF32) b.f()[k] = static_cast<float>(v);
  else if (b.store == Store::kI64) b.i()[k] = SaturatingInt64(v);
  else b.b()[k] = v != 0.0;
}

// Copies x to y, converting between storages when they differ.
void CopyConvert(const Buf& x, Buf& y) {
  const int64_t n = std::min(x.count, y.count);
  if (x.store == y.store) {
    if (x.data != y.data) std::memmove(y.data, x.data, static_cast<size_t>(n) * StoreSize(x.store));
    return;
  }
  for (int64_t k = 0; k < n; ++k) PutD(y, k, GetD(x, k));
}

// Copies n elements from element `from` of x to element `to` of y,
// converting when their storages differ.
void CopyElements(const Buf& x, int64_t from, Buf& y, int64_t to, int64_t n) {
  if (x.store != y.store) {
    for (int64_t k = 0; k < n; ++k) PutD(y, to + k, GetD(x, from + k));
    return;
  }
  const size_t es = StoreSize(x.store);
  std::memcpy(static_cast<uint8_t*>(y.data) + to * es, static_cast<const uint8_t*>(x.data) + from * es,
              static_cast<size_t>(n) * es);
}

// Index i into an axis of n elements (negative: from the end), or a failure.
Result<int64_t> AxisIndex(const Ctx& c, int64_t i, int64_t n) {
  if (i < -n || i >= n) return c.Fail("index {} is out of range for axis of size {}", i, n);
  return i < 0 ? i + n : i;
}

// GatherNd / ScatterNd: the offset in x (strides xs) of the element or slice
// that index tuple `tuple` (q values) names in dims [first, first + q).
Result<int64_t> TupleOffset(const Ctx& c, const Buf& x, const Ints& xs, size_t first, const int64_t* tuple, int64_t q) {
  int64_t off = 0;
  for (int64_t j = 0; j < q; ++j) {
    const size_t d = first + static_cast<size_t>(j);
    const Result<int64_t> v = AxisIndex(c, tuple[j], x.dims[d]);
    if (!v.ok()) return v.status();
    off += v.value() * xs[d];
  }
  return off;
}

Status Copy(Ctx& c) {
  if (c.in(0).count != c.out(0).count)
    return c.Fail("input has {} elements but output {}", c.in(0).count, c.out(0).count);
  CopyConvert(c.in(0), c.out(0));
  return Status::Ok();
}

// Quantize to integer codes (a graph ending in QuantizeLinear): ONNX's
// saturate(round_half_even(x / scale) + zero_point), per tensor or along
// `axis`. To a fixed-point output the op is a copy: the tensor's encoding
// quantizes it.
Status Quantize(Ctx& c) {
  if (c.out(0).store != Store::kI64 || !c.Has("scale")) return Copy(c);
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const auto to = static_cast<DType>(c.Int("output_dtype", static_cast<int64_t>(DType::kUInt8)));
  const std::vector<double> scale = c.Floats("scale", {});
  const std::vector<int64_t> zp = c.Ints("zero_point", std::vector<int64_t>(scale.size(), 0));
  if (scale.empty() || zp.size() != scale.size()) return c.Fail("scale and zero_point must have the same length");
  int64_t inner = 1, channels = 1;
  if (scale.size() > 1) {
    int64_t axis = c.Int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(x.rank());
    if (axis < 0 || axis >= static_cast<int64_t>(x.rank()) || x.dims[static_cast<size_t>(axis)] != static_cast<int64_t>(scale.size()))
      return c.Fail("axis does not match the {} scales", scale.size());
    channels = x.dims[static_cast<size_t>(axis)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < x.rank(); ++d) inner *= x.dims[d];
  }
  const uint32_t bits = DTypeBits(to);
  const double lo = IsSigned(to) ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0.0;
  const double hi = IsSigned(to) ? std::ldexp(1.0, static_cast<int>(bits) - 1) - 1 : std::ldexp(1.0, static_cast<int>(bits)) - 1;
  const float* xf = c.F32(0);
  for (int64_t k = 0; k < x.count; ++k) {
    const size_t ch = scale.size() > 1 ? static_cast<size_t>((k / inner) % channels) : 0;
    const float q = xf[k] / static_cast<float>(scale[ch]);
    double v = std::isnan(q) ? 0.0 : std::nearbyint(static_cast<double>(q)) + static_cast<double>(zp[ch]);
    y.i()[k] = static_cast<int64_t>(std::clamp(v, lo, hi));
  }
  return Status::Ok();
}

int64_t WrapInt(int64_t v, DType d) {
  const uint32_t bits = DTypeBits(d);
  if (bits >= 64 || bits == 0) return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (IsSigned(d) && (u >> (bits - 1)) & 1u) u |= ~mask;
  return static_cast<int64_t>(u);
}

Status Cast(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const auto to = static_cast<DType>(c.Int("to", static_cast<int64_t>(DType::kFloat32)));
  for (int64_t k = 0; k < x.count; ++k) {
    if (y.store == Store::kI64) {
      int64_t v;
      if (x.store == Store::kF32) {
        const float f = x.f()[k];
        v = std::isfinite(f) ? (std::fabs(f) < 9.2e18f ? static_cast<int64_t>(f) : (f < 0 ? INT64_MIN : INT64_MAX)) : 0;
        // A negative float to a narrow unsigned type goes through int32, as
        // x86's conversion does; below int32's range that conversion gives
        // INT32_MIN (casting such a float in C++ would be undefined).
        if (!IsSigned(to) && f < 0 && DTypeBits(to) < 64)
          v = f > -2147483648.0f ? static_cast<int64_t>(static_cast<int32_t>(f)) : int64_t{INT32_MIN};
      } else {
        v = x.store == Store::kI64 ? x.i()[k] : x.b()[k];
      }
      y.i()[k] = WrapInt(v, to);
    } else if (y.store == Store::kF32) {
      float v = static_cast<float>(GetD(x, k));
      if (to == DType::kFloat16) v = HalfRound(v);
      else if (to == DType::kBFloat16) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        if (!std::isnan(v)) bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
        std::memcpy(&v, &bits, 4);
      }
      y.f()[k] = v;
    } else {
      y.b()[k] = GetD(x, k) != 0.0;
    }
  }
  return Status::Ok();
}

Status ShapeOp(Ctx& c) {
  const Ints& d = c.in(0).dims;
  const auto r = static_cast<int64_t>(d.size());
  int64_t start = c.Int("start", 0), end = c.Int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  Buf& y = c.out(0);
  for (int64_t k = start, j = 0; k < end && j < y.count; ++k, ++j) PutD(y, j, static_cast<double>(d[static_cast<size_t>(k)]));
  return Status::Ok();
}

Status Transpose(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const size_t r = x.rank();
  Ints perm = c.Ints("perm", {});
  if (perm.empty()) for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
  if (perm.size() != r) return c.Fail("perm has {} entries for rank {}", perm.size(), r);
  if (y.count == 0) return Status::Ok();
  const Ints xs = Strides(x.dims);
  Ints ps(r);
  for (size_t i = 0; i < r; ++i) {
    auto a = NormalizeAxis(perm[i], r);
    if (!a) return c.Fail("perm value {} out of range", perm[i]);
    ps[i] = xs[*a];
  }
  const size_t es = StoreSize(x.store);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(y.data);
  if (r == 0) {
    std::memcpy(dst, src, es);
    return Status::Ok();
  }
  const int64_t inner = y.dims[r - 1], istep = ps[r - 1];
  Ints idx(r, 0);
  for (int64_t o = 0; o < y.count; o += inner) {
    int64_t off = 0;
    for (size_t d = 0; d + 1 < r; ++d) off += idx[d] * ps[d];
    if (es == 4) {
      const auto* s = reinterpret_cast<const float*>(src) + off;
      auto* t = reinterpret_cast<float*>(dst) + o;
      for (int64_t k = 0; k < inner; ++k) t[k] = s[k * istep];
    } else {
      for (int64_t k = 0; k < inner; ++k) std::memcpy(dst + (o + k) * es, src + (off + k * istep) * es, es);
    }
    for (size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < y.dims[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

// Concat (kConcat) and Split: the parts (Concat's inputs, Split's outputs)
// are consecutive slices along `axis` of the whole tensor (Concat's output,
// Split's input). In each of the whole's `outer` rows (the dims before the
// axis), part k is one run of elements, so it moves as `outer` blocks.
template <bool kConcat>
Status ConcatOrSplit(Ctx& c) {
  const Buf& whole = kConcat ? c.out(0) : c.in(0);
  auto axis = NormalizeAxis(c.Int("axis", 0), whole.rank());
  if (!axis) return c.Fail("axis out of range");
  const int64_t outer = SplitAt(whole.dims, *axis).outer;
  const int64_t row = outer ? whole.count / outer : 0;
  int64_t pos = 0;  // where the current part starts in each row of the whole
  for (size_t k = 0; k < (kConcat ? c.num_in() : c.num_out()); ++k) {
    if (kConcat ? !c.has_in(k) : !c.has_out(k)) continue;
    const Buf& from = c.in(kConcat ? k : 0);
    Buf& to = c.out(kConcat ? 0 : k);
    const int64_t len = outer ? (kConcat ? from.count : to.count) / outer : 0;  // the part's elements per row
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t in_whole = o * row + pos, in_part = o * len;
      CopyElements(from, kConcat ? in_part : in_whole, to, kConcat ? in_whole : in_part, len);
    }
    pos += len;
  }
  return Status::Ok();
}

// y[o] = x[source(index of o)] for each element o of y, its multi-index
// visited in row-major order; `source` gives an element offset into x, or
// nullopt for an element that gets `fill` instead (Pad's border).
template <typename Source>
void GatherEach(const Buf& x, Buf& y, Source&& source, double fill = 0.0) {
  Ints idx(y.rank(), 0);
  for (int64_t o = 0; o < y.count; ++o) {
    const std::optional<int64_t> off = source(idx);
    if (off) CopyElements(x, *off, y, o, 1);
    else PutD(y, o, fill);
    NextIndex(&idx, y.dims);
  }
}

// Generic gather of y from x: y[o] = x[map(o)] where the map is per-axis affine.
Status StridedSlice(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const size_t r = x.rank();
  const Ints starts = c.Ints("starts", {}), ends = c.Ints("ends", {});
  Ints axes = c.Ints("axes", {}), steps = c.Ints("steps", {});
  if (axes.empty()) for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return c.Fail("starts/ends/axes/steps lengths differ");
  Ints begin(r, 0), step(r, 1);
  for (size_t k = 0; k < starts.size(); ++k) {
    auto a = NormalizeAxis(axes[k], r);
    if (!a) return c.Fail("axis {} out of range", axes[k]);
    const int64_t d = x.dims[*a], s = steps[k];
    if (s == 0) return c.Fail("step 0");
    int64_t st = starts[k];
    if (st < 0) st += d;
    st = s > 0 ? std::clamp<int64_t>(st, 0, d) : std::clamp<int64_t>(st, 0, d - 1);
    begin[*a] = st;
    step[*a] = s;
  }
  const Ints xs = Strides(x.dims);
  GatherEach(x, y, [&](const Ints& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) off += (begin[d] + idx[d] * step[d]) * xs[d];
    return off;
  });
  return Status::Ok();
}

Status Pad(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const size_t r = x.rank();
  const Ints pads = c.Ints("pads", Ints(2 * r, 0));
  if (pads.size() != 2 * r) return c.Fail("pads has {} values for rank {}", pads.size(), r);
  const std::string mode = c.Str("mode", "constant");
  const double value = c.Float("constant_value", 0.0);
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return c.Fail("mode '{}' is not supported", mode);
  const Ints xs = Strides(x.dims);
  GatherEach(
      x, y,
      [&](const Ints& idx) -> std::optional<int64_t> {
        int64_t off = 0;
        for (size_t d = 0; d < r; ++d) {
          int64_t i = idx[d] - pads[d];
          const int64_t n = x.dims[d];
          if (i < 0 || i >= n) {
            if (mode == "constant" || n == 0) return std::nullopt;
            if (mode == "edge") i = std::clamp<int64_t>(i, 0, n - 1);
            else if (mode == "wrap") i = ((i % n) + n) % n;
            else {  // reflect
              if (n == 1) i = 0;
              else {
                const int64_t period = 2 * (n - 1);
                i = ((i % period) + period) % period;
                if (i >= n) i = period - i;
              }
            }
          }
          off += i * xs[d];
        }
        return off;
      },
      value);
  return Status::Ok();
}

Status Tile(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const Ints xs = Strides(x.dims);
  GatherEach(x, y, [&](const Ints& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < x.rank(); ++d) off += (idx[d] % x.dims[d]) * xs[d];
    return off;
  });
  return Status::Ok();
}

Status Gather(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  auto axis = NormalizeAxis(c.Int("axis", 0), x.rank());
  if (!axis) return c.Fail("axis out of range");
  const int64_t* idx = c.I64(1);
  const int64_t ni = c.in(1).count;
  const auto [outer, n, inner] = SplitAt(x.dims, *axis);
  for (int64_t j = 0; j < ni; ++j)
    if (idx[j] < -n || idx[j] >= n) return c.Fail("index {} is out of range for axis of size {}", idx[j], n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < ni; ++j) {
      const int64_t i = idx[j] < 0 ? idx[j] + n : idx[j];
      CopyElements(x, (o * n + i) * inner, y, (o * ni + j) * inner, inner);
    }
  return Status::Ok();
}

// GatherElements and ScatterElements: for each element o of the indices
// (input 1), in order, calls visit(o, off) with `off` the offset in x of the
// index's own position with dim `axis` replaced by its value. Fails at the
// first index out of range.
template <typename Visit>
Status ForEachElementIndex(Ctx& c, const Buf& x, Visit&& visit) {
  auto axis = NormalizeAxis(c.Int("axis", 0), x.rank());
  if (!axis) return c.Fail("axis out of range");
  const Buf& ib = c.in(1);
  const int64_t* idx = c.I64(1);
  const Ints xs = Strides(x.dims);
  Ints pos(x.rank(), 0);
  for (int64_t o = 0; o < ib.count; ++o) {
    const Result<int64_t> i = AxisIndex(c, idx[o], x.dims[*axis]);
    if (!i.ok()) return i.status();
    int64_t off = 0;
    for (size_t d = 0; d < x.rank(); ++d) off += (d == *axis ? i.value() : pos[d]) * xs[d];
    visit(o, off);
    NextIndex(&pos, ib.dims);
  }
  return Status::Ok();
}

Status GatherElements(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  return ForEachElementIndex(c, x, [&](int64_t o, int64_t off) { CopyElements(x, off, y, o, 1); });
}

Status GatherNd(Ctx& c) {
  const Buf& x = c.in(0);
  const Buf& ib = c.in(1);
  Buf& y = c.out(0);
  const int64_t b = c.Int("batch_dims", 0);
  if (ib.rank() < 1) return c.Fail("indices must have rank >= 1");
  const int64_t q = ib.dims.back();
  if (b < 0 || b + q > static_cast<int64_t>(x.rank())) return c.Fail("index depth {} too large", q);
  const int64_t* idx = c.I64(1);
  int64_t batch = 1;
  for (int64_t i = 0; i < b; ++i) batch *= x.dims[static_cast<size_t>(i)];
  const int64_t per_batch_tuples = batch ? ib.count / q / batch : 0;
  int64_t slice = 1;
  for (size_t i = static_cast<size_t>(b + q); i < x.rank(); ++i) slice *= x.dims[i];
  int64_t xblock = 1;
  for (size_t i = static_cast<size_t>(b); i < x.rank(); ++i) xblock *= x.dims[i];
  const Ints xs = Strides(x.dims);
  int64_t out = 0;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t t = 0; t < per_batch_tuples; ++t) {
      const Result<int64_t> off =
          TupleOffset(c, x, xs, static_cast<size_t>(b), idx + (bi * per_batch_tuples + t) * q, q);
      if (!off.ok()) return off.status();
      CopyElements(x, bi * xblock + off.value(), y, out, slice);
      out += slice;
    }
  return Status::Ok();
}

void Reduce(Buf& y, int64_t k, double v, const std::string& red) {
  if (red == "none") return PutD(y, k, v);
  const double cur = GetD(y, k);
  if (red == "add") PutD(y, k, cur + v);
  else if (red == "mul") PutD(y, k, cur * v);
  else if (red == "max") PutD(y, k, std::max(cur, v));
  else if (red == "min") PutD(y, k, std::min(cur, v));
}

Status ScatterNd(Ctx& c) {
  const Buf& x = c.in(0);
  const Buf& ib = c.in(1);
  const Buf& u = c.in(2);
  Buf& y = c.out(0);
  CopyConvert(x, y);
  const std::string red = c.Str("reduction", "none");
  const int64_t q = ib.dims.back();
  if (q > static_cast<int64_t>(x.rank())) return c.Fail("index depth {} too large", q);
  const int64_t* idx = c.I64(1);
  int64_t slice = 1;
  for (size_t i = static_cast<size_t>(q); i < x.rank(); ++i) slice *= x.dims[i];
  const Ints xs = Strides(x.dims);
  const int64_t tuples = q ? ib.count / q : 0;
  for (int64_t t = 0; t < tuples; ++t) {
    const Result<int64_t> off = TupleOffset(c, x, xs, 0, idx + t * q, q);
    if (!off.ok()) return off.status();
    for (int64_t k = 0; k < slice; ++k) Reduce(y, off.value() + k, GetD(u, t * slice + k), red);
  }
  return Status::Ok();
}

Status ScatterElements(Ctx& c) {
  const Buf& x = c.in(0);
  const Buf& u = c.in(2);
  Buf& y = c.out(0);
  CopyConvert(x, y);
  const std::string red = c.Str("reduction", "none");
  return ForEachElementIndex(c, x, [&](int64_t o, int64_t off) { Reduce(y, off, GetD(u, o), red); });
}

// Reductions over a set of axes (absent: all).
Status ReduceOp(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  const size_t r = x.rank();
  std::vector<bool> red(r, false);
  Ints axes = c.Ints("axes", {});
  if (axes.empty()) red.assign(r, true);
  for (int64_t a : axes) {
    auto n = NormalizeAxis(a, r);
    if (!n) return c.Fail("axis {} out of range for rank {}", a, r);
    red[*n] = true;
  }
  const std::string& t = c.op().type;
  Ints od;
  for (size_t i = 0; i < r; ++i) od.push_back(red[i] ? 1 : x.dims[i]);
  const Ints os = Strides(od);
  int64_t group = 1;
  for (size_t i = 0; i < r; ++i) if (red[i]) group *= x.dims[i];
  const int64_t n_out = Count(od);
  if (n_out != y.count) return c.Fail("output has {} elements, expected {}", y.count, n_out);
  double init = 0;
  if (t == "ReduceProd") init = 1;
  else if (t == "ReduceMax") init = -std::numeric_limits<double>::infinity();
  else if (t == "ReduceMin") init = std::numeric_limits<double>::infinity();
  std::vector<double> acc(static_cast<size_t>(n_out), init);
  Ints idx(r, 0);
  Ints ostr(r);
  for (size_t i = 0; i < r; ++i) ostr[i] = red[i] ? 0 : os[i];
  const bool is_f = x.store == Store::kF32;
  for (int64_t k = 0; k < x.count; ++k) {
    int64_t o = 0;
    for (size_t d = 0; d < r; ++d) o += idx[d] * ostr[d];
    const double v = is_f ? x.f()[k] : GetD(x, k);
    double& a = acc[static_cast<size_t>(o)];
    if (t == "ReduceSum" || t == "ReduceMean") a += v;
    else if (t == "ReduceSumSquare") a += v * v;
    else if (t == "ReduceProd") a *= v;
    else if (t == "ReduceMax") a = (v > a || std::isnan(v)) ? v : a;
    else a = (v < a || std::isnan(v)) ? v : a;
    NextIndex(&idx, x.dims);
  }
  for (int64_t k = 0; k < n_out; ++k) {
    double v = acc[static_cast<size_t>(k)];
    if (t == "ReduceMean") v = group ? v / static_cast<double>(group) : std::numeric_limits<double>::quiet_NaN();
    if (y.store == Store::kI64 && std::isinf(v)) v = v > 0 ? 9.2e18 : -9.2e18;
    PutD(y, k, v);
  }
  return Status::Ok();
}

Status ArgOp(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  auto axis = NormalizeAxis(c.Int("axis", 0), x.rank());
  if (!axis) return c.Fail("axis out of range");
  const bool is_max = c.op().type == "Argmax";
  const bool last = c.Int("select_last_index", 0) != 0;
  const auto [outer, n, inner] = SplitAt(x.dims, *axis);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double bv = GetD(x, o * n * inner + i);
      for (int64_t k = 1; k < n; ++k) {
        const double v = GetD(x, (o * n + k) * inner + i);
        const bool better = is_max ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
        if (better) {
          bv = v;
          best = k;
        }
      }
      PutD(y, o * inner + i, static_cast<double>(best));
    }
  return Status::Ok();
}

Status TopK(Ctx& c) {
  const Buf& x = c.in(0);
  auto axis = NormalizeAxis(c.Int("axis", -1), x.rank());
  if (!axis) return c.Fail("axis out of range");
  const bool largest = c.Int("largest", 1) != 0;
  const auto [outer, n, inner] = SplitAt(x.dims, *axis);
  int64_t k = c.has_in(1) ? c.I64(1)[0] : c.Int("k", 1);
  if (k < 0 || k > n) return c.Fail("k={} is out of range for an axis of {}", k, n);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<double> vals(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) vals[static_cast<size_t>(j)] = GetD(x, (o * n + j) * inner + i);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const double va = vals[static_cast<size_t>(a)], vb = vals[static_cast<size_t>(b)];
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t src = order[static_cast<size_t>(j)];
        if (c.has_out(0)) PutD(c.out(0), (o * k + j) * inner + i, vals[static_cast<size_t>(src)]);
        if (c.has_out(1)) PutD(c.out(1), (o * k + j) * inner + i, static_cast<double>(src));
      }
    }
  return Status::Ok();
}

Status CumSum(Ctx& c) {
  const Buf& x = c.in(0);
  Buf& y = c.out(0);
  auto axis = NormalizeAxis(c.Int("axis", 0), x.rank());
  if (!axis) return c.Fail("axis out of range");
  const bool excl = c.Int("exclusive", 0) != 0, rev = c.Int("reverse", 0) != 0;
  const auto [outer, n, inner] = SplitAt(x.dims, *axis);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = 0;
      for (int64_t j0 = 0; j0 < n; ++j0) {
        const int64_t j = rev ? n - 1 - j0 : j0;
        const int64_t at = (o * n + j) * inner + i;
        const double v = GetD(x, at);
        if (excl) {
          PutD(y, at, acc);
          acc += v;
        } else {
          acc += v;
          PutD(y, at, acc);
        }
      }
    }
  return Status::Ok();
}

Status OneHot(Ctx& c) {
  const Buf& ib = c.in(0);
  Buf& y = c.out(0);
  int64_t depth = c.has_in(1) ? static_cast<int64_t>(GetD(c.in(1), 0)) : c.Int("depth", 0);
  double off = 0, on = 1;
  if (c.has_in(2)) {
    off = GetD(c.in(2), 0);
    on = GetD(c.in(2), 1);
  }
  auto axis = NormalizeAxis(c.Int("axis", -1), ib.rank() + 1);
  if (!axis) return c.Fail("axis out of range");
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < ib.rank(); ++i) (i < *axis ? outer : inner) *= ib.dims[i];
  for (int64_t k = 0; k < y.count; ++k) PutD(y, k, off);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t v = static_cast<int64_t>(GetD(ib, o * inner + i));
      if (v < 0) v += depth;
      if (v < 0 || v >= depth) continue;
      PutD(y, (o * depth + v) * inner + i, on);
    }
  return Status::Ok();
}

}  // namespace

void RegisterData(KernelTable* t) {
  auto& m = *t;
  for (const char* op : {"Reshape", "ExpandDims", "Squeeze", "Convert", "Dequantize"}) m[op] = Copy;
  m["Quantize"] = Quantize;
  m["Cast"] = Cast;
  m["Shape"] = ShapeOp;
  m["Transpose"] = Transpose;
  m["Concat"] = ConcatOrSplit<true>;
  m["Split"] = ConcatOrSplit<false>;
  m["StridedSlice"] = StridedSlice;
  m["Pad"] = Pad;
  m["Tile"] = Tile;
  m["Gather"] = Gather;
  m["GatherElements"] = GatherElements;
  m["GatherNd"] = GatherNd;
  m["ScatterNd"] = ScatterNd;
  m["ScatterElements"] = ScatterElements;
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceSum", "ReduceProd", "ReduceSumSquare"})
    m[op] = ReduceOp;
  for (const char* op : {"Argmax", "Argmin"}) m[op] = ArgOp;
  m["TopK"] = TopK;
  m["CumulativeSum"] = CumSum;
  m["OneHot"] = OneHot;
}

}  // namespace qairt::exec
