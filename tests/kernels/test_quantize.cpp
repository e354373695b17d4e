// Tensor-level operators (kernels/ops.h) against a per-element reference over
// every axis and block layout, determinism across thread counts, dispatch,
// encoding math, and the IR entry point (quant/quantize.h) with its
// bad-value policy.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>

#include "ir/encoding.h"
#include "kernel_test_util.h"
#include "kernels/common/scalar.h"
#include "kernels/ops.h"
#include "quant/quantize.h"

namespace qairt::kernels::test {
namespace {

// Scale index of a flat element, straight from the Grid definition.
size_t ScaleIndex(const Grid& g, size_t flat) {
  const size_t r = g.dims.size();
  const std::vector<int64_t> sd = g.ScaleDims();
  size_t idx = 0, stride = 1;
  for (size_t d = r; d-- > 0;) {
    const size_t i = flat % static_cast<size_t>(g.dims[d]);
    flat /= static_cast<size_t>(g.dims[d]);
    const size_t b = static_cast<size_t>(std::min<int64_t>(std::max<int64_t>(g.blocks[d], 1), g.dims[d]));
    idx += (i / b) * stride;
    stride *= static_cast<size_t>(sd[d]);
  }
  return idx;
}

// Per-element reference: one ref::Quant call per element.
std::vector<uint8_t> RefQuantGrid(const std::vector<float>& x, const Grid& g, const QuantArgs& a, int bits) {
  const size_t n = x.size();
  std::vector<uint8_t> out((n * static_cast<size_t>(bits) + 7) / 8, 0);
  std::vector<int8_t> q8(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t s = ScaleIndex(g, i);
    QuantParams p;
    p.scales = a.scales + s;
    p.offsets = a.offsets ? a.offsets + s : nullptr;
    p.block = 1;
    p.qmin = a.qmin;
    p.qmax = a.qmax;
    if (bits >= 8) {
      ref::Quant(0, bits, 1, &x[i], out.data() + i * static_cast<size_t>(bits) / 8, &p);
    } else {
      ref::Quant(0, 8, 1, &x[i], &q8[i], &p);
    }
  }
  if (bits < 8) ref::Pack(bits, n, q8.data(), out.data());
  return out;
}

std::vector<int64_t> RandomDims(std::mt19937& rng, size_t rank) {
  std::vector<int64_t> d(rank);
  for (auto& v : d) v = 1 + static_cast<int64_t>(rng() % 9);
  return d;
}

QStorage StorageFor(int bits) {
  return bits == 2 ? QStorage::kQ2 : bits == 4 ? QStorage::kQ4 : bits == 8 ? QStorage::kQ8 : bits == 16 ? QStorage::kQ16 : QStorage::kQ32;
}

}  // namespace

TEST_CASE("QuantizeGrid matches a per-element reference on every axis and block layout", "[kernels][ops]") {
  std::mt19937 rng(29);
  ThreadPool pool(3);
  for (int iter = 0; iter < 300; ++iter) {
    const size_t rank = 1 + rng() % 4;
    std::vector<int64_t> dims = RandomDims(rng, rank);
    Grid g;
    const int kind = static_cast<int>(rng() % 3);
    const size_t axis = rng() % rank;
    if (kind == 0) {
      g = Grid::PerTensor(dims);
    } else if (kind == 1) {
      g = Grid::PerChannel(dims, axis);
    } else {
      // block sizes 16..256 on the block axis (dim made a multiple), 1 or full elsewhere
      const int64_t bs = int64_t{16} << (rng() % 5);
      dims[axis] = bs * (1 + static_cast<int64_t>(rng() % 3));
      std::vector<int64_t> blocks(rank);
      for (size_t d = 0; d < rank; ++d) blocks[d] = d == axis ? bs : (rng() % 2 ? 1 : dims[d]);
      g = Grid::PerBlock(dims, blocks);
    }
    const int bits = std::vector<int>{2, 4, 8, 16, 32}[rng() % 5];
    const bool is_signed = bits == 32 || rng() % 2;
    QuantArgs a;
    ClampRange(static_cast<uint32_t>(bits), is_signed, Schema::kAsymmetric, &a.qmin, &a.qmax);
    std::vector<float> scales(g.NumScales());
    std::vector<int32_t> offsets(g.NumScales());
    for (size_t i = 0; i < scales.size(); ++i) {
      scales[i] = std::uniform_real_distribution<float>(0.01f, 1.0f)(rng);
      offsets[i] = bits == 32 ? 0 : -static_cast<int32_t>(std::uniform_int_distribution<int64_t>(a.qmin, a.qmax)(rng));
    }
    a.scales = scales.data();
    a.offsets = rng() % 2 ? offsets.data() : nullptr;
    std::vector<float> x(g.NumElements());
    for (auto& v : x) v = RandNormal(rng, 5.0f);
    const std::vector<uint8_t> want = RefQuantGrid(x, g, a, bits);
    INFO("iter " << iter << " rank " << rank << " kind " << kind << " axis " << axis << " bits " << bits);
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      ExecOptions o;
      o.pool = p;
      o.chunk = 64;  // many tasks, rows split mid-way
      std::vector<uint8_t> got(want.size(), 0x5A);
      QuantizeGrid(InType::kF32, x.data(), g, a, StorageFor(bits), got.data(), o);
      REQUIRE(got == want);
      // Dequantize back: within half a step of the clamped value.
      std::vector<float> back(x.size());
      const QKind kinds[] = {is_signed ? QKind::kS2 : QKind::kU2, is_signed ? QKind::kS4 : QKind::kU4,
                             is_signed ? QKind::kS8 : QKind::kU8, is_signed ? QKind::kS16 : QKind::kU16, QKind::kS32};
      const int idx = bits == 2 ? 0 : bits == 4 ? 1 : bits == 8 ? 2 : bits == 16 ? 3 : 4;
      DequantizeGrid(kinds[idx], got.data(), g, a, back.data(), o);
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t s = ScaleIndex(g, i);
        const double off = a.offsets ? a.offsets[s] : 0;
        const double lo = (a.qmin + off) * scales[s], hi = (a.qmax + off) * scales[s];
        const double clamped = std::clamp<double>(x[i], lo, hi);
        REQUIRE(std::abs(back[i] - clamped) <= 0.5 * scales[s] * (1 + 1e-5) + 1e-3 * std::abs(clamped) * (bits == 32));
      }
    }
  }
}

TEST_CASE("QuantizeTransposed equals QuantizeGrid of the transposed window", "[kernels][ops][transpose]") {
  // A window of a [R, C] matrix whose columns are the channels of the
  // transposed tensor [cols, rows] (per channel: one scale per column; per
  // block: a scale per column and block of `row_block` rows), written into
  // rows of a wider output at an offset. The reference transposes the floats
  // and quantizes with the grid of the transposed tensor.
  std::mt19937 rng(31);
  for (int iter = 0; iter < 120; ++iter) {
    const int bits = std::vector<int>{2, 4, 8, 16, 32}[static_cast<size_t>(iter) % 5];
    const bool blocks = rng() % 2;
    const size_t row_block = blocks ? size_t{8} << (rng() % 3) : SIZE_MAX;
    // rows: whole blocks and whole bytes; across several 64-row tiles sometimes
    const size_t unit = blocks ? row_block : 8;
    const size_t rows = unit * (1 + rng() % (iter % 7 == 0 ? 20 : 6));
    const size_t cols = 1 + rng() % 90, ld = cols + rng() % 5, c0 = ld - cols;
    const size_t y_at = 8 * (rng() % 2), y_ld = rows + y_at + 8 * (rng() % 3);
    const bool is_signed = bits == 32 || rng() % 2;
    QuantArgs a;
    ClampRange(static_cast<uint32_t>(bits), is_signed, Schema::kAsymmetric, &a.qmin, &a.qmax);
    const size_t cells = blocks ? rows / row_block : 1;
    // Scales of the transposed tensor's grid: [cols][cells].
    std::vector<float> scales(cols * cells);
    std::vector<int32_t> offsets(cols * cells);
    for (size_t i = 0; i < scales.size(); ++i) {
      scales[i] = std::uniform_real_distribution<float>(0.01f, 1.0f)(rng);
      offsets[i] = bits == 32 ? 0 : -static_cast<int32_t>(std::uniform_int_distribution<int64_t>(a.qmin, a.qmax)(rng));
    }
    const bool with_offsets = rng() % 2;
    std::vector<float> src((rows + 2) * ld);
    for (auto& v : src) v = RandNormal(rng, 5.0f);
    const float* window = src.data() + ld + c0;  // from row 1, column c0
    std::vector<float> t(cols * rows);
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < cols; ++c) t[c * rows + r] = window[r * ld + c];
    const Grid g = blocks ? Grid::PerBlock({static_cast<int64_t>(cols), static_cast<int64_t>(rows)},
                                           {1, static_cast<int64_t>(row_block)})
                          : Grid::PerChannel({static_cast<int64_t>(cols), static_cast<int64_t>(rows)}, 0);
    QuantArgs ta = a;
    ta.scales = scales.data();
    ta.offsets = with_offsets ? offsets.data() : nullptr;
    const std::vector<uint8_t> want = RefQuantGrid(t, g, ta, bits);
    // The window's layout of the same tables: [cells][cols].
    std::vector<float> wscales(cells * cols);
    std::vector<int32_t> woffsets(cells * cols);
    for (size_t c = 0; c < cols; ++c)
      for (size_t j = 0; j < cells; ++j) {
        wscales[j * cols + c] = scales[c * cells + j];
        woffsets[j * cols + c] = offsets[c * cells + j];
      }
    QuantArgs wa = a;
    wa.scales = wscales.data();
    wa.offsets = with_offsets ? woffsets.data() : nullptr;
    const size_t row_bytes = y_ld * static_cast<size_t>(bits) / 8;
    std::vector<uint8_t> y(cols * row_bytes, 0xA5);
    size_t nonfinite = 7;
    QuantizeTransposed(window, rows, cols, ld, wa, cols, row_block, StorageFor(bits),
                       y.data() + y_at * static_cast<size_t>(bits) / 8, y_ld, {}, &nonfinite);
    INFO("iter " << iter << " bits " << bits << " rows " << rows << " cols " << cols << " row_block " << row_block);
    CHECK(nonfinite == 0);
    const size_t want_row = rows * static_cast<size_t>(bits) / 8;
    for (size_t c = 0; c < cols; ++c) {
      const uint8_t* got_row = y.data() + c * row_bytes;
      const size_t at = y_at * static_cast<size_t>(bits) / 8;
      REQUIRE(std::equal(got_row + at, got_row + at + want_row, want.begin() + static_cast<std::ptrdiff_t>(c * want_row)));
      // bytes outside the window's place untouched
      for (size_t b = 0; b < row_bytes; ++b)
        if (b < at || b >= at + want_row) REQUIRE(got_row[b] == 0xA5);
    }
  }
  // Non-finite values are counted (the caller's policy reports them).
  std::vector<float> x(16 * 8, 1.0f);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  x[77] = std::numeric_limits<float>::infinity();
  std::vector<float> s(8, 0.1f);
  QuantArgs a;
  a.scales = s.data();
  a.qmin = -128;
  a.qmax = 127;
  std::vector<uint8_t> y(8 * 16);
  size_t nonfinite = 0;
  QuantizeTransposed(x.data(), 16, 8, 8, a, 8, SIZE_MAX, QStorage::kQ8, y.data(), 16, {}, &nonfinite);
  CHECK(nonfinite == 2);
}

TEST_CASE("MinMaxGrid, histogram, sums: identical results for 1, 2 and 3 threads", "[kernels][ops][threads]") {
  std::mt19937 rng(31);
  const std::vector<int64_t> dims = {37, 29, 33};
  std::vector<float> x(37 * 29 * 33);
  for (auto& v : x) v = RandNormal(rng, 2.0f);
  x[5] = NAN;
  x[77] = -0.0f;
  ThreadPool p2(2), p3(3);
  for (size_t axis = 0; axis < 3; ++axis) {
    const Grid g = Grid::PerChannel(dims, axis);
    std::vector<float> mn1(g.NumScales()), mx1(g.NumScales()), mn2 = mn1, mx2 = mx1, mn3 = mn1, mx3 = mx1;
    ExecOptions o;
    o.chunk = 128;
    MinMaxGrid(x.data(), g, mn1.data(), mx1.data(), o);
    o.pool = &p2;
    MinMaxGrid(x.data(), g, mn2.data(), mx2.data(), o);
    o.pool = &p3;
    MinMaxGrid(x.data(), g, mn3.data(), mx3.data(), o);
    CHECK(Bytes(mn1.data(), 4 * mn1.size()) == Bytes(mn2.data(), 4 * mn2.size()));
    CHECK(Bytes(mn1.data(), 4 * mn1.size()) == Bytes(mn3.data(), 4 * mn3.size()));
    CHECK(Bytes(mx1.data(), 4 * mx1.size()) == Bytes(mx3.data(), 4 * mx3.size()));
    // Against a direct computation.
    std::vector<float> wmn(g.NumScales(), INFINITY), wmx(g.NumScales(), -INFINITY);
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) continue;
      const size_t s = ScaleIndex(g, i);
      wmn[s] = std::min(wmn[s], x[i]);
      wmx[s] = std::max(wmx[s], x[i]);
    }
    for (size_t s = 0; s < wmn.size(); ++s) {
      CHECK(mn1[s] == wmn[s]);
      CHECK(mx1[s] == wmx[s]);
    }
  }
  ExecOptions o;
  o.chunk = 256;
  std::vector<uint64_t> h1(2048), h3(2048);
  Histogram(x.data(), x.size(), -3.0f, 3.0f, 2048, h1.data(), o);
  double s1[2], s3[2];
  QdqErrParams qp;
  qp.scale = 0.02f;
  qp.qmin = -128;
  qp.qmax = 127;
  QdqError(x.data(), x.size(), qp, s1, o);
  std::vector<float> y(x.size()), finite(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    finite[i] = std::isfinite(x[i]) ? x[i] : 0.0f;
    y[i] = finite[i] * 0.99f;
  }
  double e1[2], e3[2], bad[2];
  SquaredError(y.data(), finite.data(), x.size(), e1, o);
  SquaredError(y.data(), x.data(), x.size(), bad, o);
  o.pool = &p3;
  SquaredError(y.data(), finite.data(), x.size(), e3, o);
  CHECK(std::memcmp(e1, e3, sizeof e1) == 0);  // same bits: fixed chunk order
  CHECK(e1[0] > 0);
  CHECK(e1[0] < 1e-3 * e1[1]);
  CHECK(std::isnan(bad[0]));  // a NaN in the values measured shows in the error
  CHECK(bad[1] == e1[1]);
  Histogram(x.data(), x.size(), -3.0f, 3.0f, 2048, h3.data(), o);
  QdqError(x.data(), x.size(), qp, s3, o);
  CHECK(h1 == h3);
  CHECK(std::memcmp(s1, s3, sizeof s1) == 0);  // same bits: fixed chunk order
  uint64_t in_range = 0;
  for (float v : x) in_range += v >= -3.0f && v <= 3.0f;
  CHECK(std::accumulate(h1.begin(), h1.end(), uint64_t{0}) == in_range);
  CHECK(CountNonFinite(x.data(), x.size(), o) == 1);
}

TEST_CASE("dispatch: ladder, override and names", "[kernels][dispatch]") {
  CHECK(IsaFromName("avx2") == Isa::kAvx2);
  CHECK(!IsaFromName("neon"));
  CHECK(HostSupports(Isa::kScalar));
  for (uint32_t l = 0; l < kIsaCount; ++l) {
    const auto isa = static_cast<Isa>(l);
    SetIsaOverride(isa);
    const KernelConfig& c = GetKernelConfig();
    if (HostSupports(isa)) {
      CHECK(c.level == isa);
      CHECK(c.quant_isa == isa);
    } else {
      WARN("host lacks " << IsaName(isa) << ": override lowered to " << IsaName(c.level));
      CHECK(c.level < isa);
    }
  }
  SetIsaOverride(std::nullopt);
  CHECK(ActiveIsa() <= HostBestIsa());
  // Every level quantizes identically.
  std::mt19937 rng(37);
  std::vector<float> x(1001);
  for (auto& v : x) v = RandNormal(rng, 1.0f);
  const float s = 0.01f;
  QuantArgs a;
  a.scales = &s;
  a.qmin = -8;
  a.qmax = 7;
  const Grid g = Grid::PerTensor({1001});
  std::vector<uint8_t> first;
  for (uint32_t l = 0; l < kIsaCount; ++l) {
    ExecOptions o;
    o.config = &GetKernelConfig(static_cast<Isa>(l));
    std::vector<uint8_t> y(501);
    QuantizeGrid(InType::kF32, x.data(), g, a, QStorage::kQ4, y.data(), o);
    if (first.empty()) first = y;
    CHECK(y == first);
  }
}

TEST_CASE("encoding math follows AIMET's formulas", "[kernels][encoding]") {
  // asymmetric u8 over [-6.608, 6.0616]: delta = range / 255, offset = round(min / delta)
  GridParams g = ComputeGrid(-6.608f, 6.0616f, 8, false, Schema::kAsymmetric, kDefaultMinRange);
  CHECK(g.scale == Approx((6.0616 + 6.608) / 255).epsilon(1e-6));
  CHECK(g.offset == -133);
  CHECK(g.qmin == 0);
  CHECK(g.qmax == 255);
  // symmetric s8: delta = max(max / 127, -min / 128), offset 0
  g = ComputeGrid(-1.0f, 2.54f, 8, true, Schema::kSymmetric, kDefaultMinRange);
  CHECK(g.scale == Approx(0.02f));
  CHECK(g.offset == 0);
  CHECK(g.qmin == -128);
  // symmetric u8: offset -128 (unsigned grid)
  g = ComputeGrid(-1.28f, 1.0f, 8, false, Schema::kSymmetric, kDefaultMinRange);
  CHECK(g.scale == Approx(0.01f));
  CHECK(g.offset == -128);
  // strict symmetric s8: +-127 steps, lowest code dropped
  g = ComputeGrid(-1.27f, 0.5f, 8, true, Schema::kStrictSymmetric, kDefaultMinRange);
  CHECK(g.scale == Approx(0.01f));
  CHECK(g.offset == 0);
  CHECK(g.qmin == -127);
  CHECK(g.qmax == 127);
  // unsigned symmetric with min >= 0: offset 0, delta = max / 255
  g = ComputeGrid(0.5f, 2.55f, 8, false, Schema::kUnsignedSymmetric, kDefaultMinRange);
  CHECK(g.scale == Approx(0.01f));
  CHECK(g.offset == 0);
  // min == max: the documented minimum range
  g = ComputeGrid(0.0f, 0.0f, 8, false, Schema::kAsymmetric, kDefaultMinRange);
  CHECK(g.scale == Approx(1e-4 / 255));
  CHECK(g.offset == 0);
  g = ComputeGrid(3.0f, 3.0f, 16, false, Schema::kAsymmetric, kDefaultMinRange);
  CHECK(g.scale == Approx(3.0 / 65535));  // range widened to contain 0 first
  // 4-bit symmetric: offset -8 on the unsigned grid, 0 signed
  g = ComputeGrid(-4.32f, 3.78f, 4, true, Schema::kSymmetric, kDefaultMinRange);
  CHECK(g.scale == Approx(0.54f));
  CHECK(g.offset == 0);
  // LPBQ: block scales 0.1, 0.5, 1.6 -> channel scale 1.6 / 16, int scales round(s / 0.1)
  const float bmin[] = {-0.8f, -4.0f, -12.8f};
  const float bmax[] = {0.1f, 0.5f, 1.0f};
  const size_t ch[] = {0, 0, 0};
  float cs;
  int32_t is[3];
  float eff[3];
  ComputeLpbq(3, bmin, bmax, ch, 1, 4, 8, kDefaultMinRange, &cs, is, eff);
  CHECK(cs == Approx(0.1f));
  CHECK(is[0] == 1);
  CHECK(is[1] == 5);
  CHECK(is[2] == 16);
  CHECK(eff[2] == Approx(1.6f));
}

// ComputeLpbq hands channel-major layouts (each channel's blocks consecutive)
// to the lpbq-scales kernel and computes any other layout itself: the same
// blocks in both layouts give the same scales, at every ISA.
TEST_CASE("ComputeLpbq: channel-major and interleaved layouts agree", "[kernels][lpbq]") {
  std::mt19937 rng(57);
  const size_t nch = 37, per = 21, nb = nch * per;
  std::vector<float> mins(nb), maxs(nb);
  for (size_t b = 0; b < nb; ++b) {
    const float a = RandNormal(rng, 1.0f) * static_cast<float>(1 + rng() % 50);
    const float c = RandNormal(rng, 1.0f) * static_cast<float>(1 + rng() % 50);
    mins[b] = std::min({a, c, 0.0f});
    maxs[b] = std::max({a, c, 0.0f});
    if (rng() % 9 == 0) mins[b] = maxs[b] = 0.0f;  // an all-zero block
  }
  for (size_t b = 0; b < per; ++b) mins[5 * per + b] = maxs[5 * per + b] = 0.0f;  // an all-zero channel
  for (uint32_t bits : {2u, 4u}) {
    for (Isa isa : {Isa::kScalar, Isa::kSse41, Isa::kAvx2, Isa::kAvx512}) {
      INFO("bits " << bits << " isa " << static_cast<int>(isa));
      ExecOptions o;
      o.config = &GetKernelConfig(isa);
      std::vector<size_t> major(nb), inter(nb);
      std::vector<float> imins(nb), imaxs(nb);
      for (size_t b = 0; b < nb; ++b) {
        major[b] = b / per;
        // block k of channel ch sits at k * nch + ch in the interleaved layout
        const size_t ch = b / per, k = b % per;
        inter[k * nch + ch] = ch;
        imins[k * nch + ch] = mins[b];
        imaxs[k * nch + ch] = maxs[b];
      }
      std::vector<float> cs1(nch), cs2(nch), eff1(nb), eff2(nb);
      std::vector<int32_t> is1(nb), is2(nb);
      ComputeLpbq(nb, mins.data(), maxs.data(), major.data(), nch, bits, 8, kDefaultMinRange, cs1.data(), is1.data(),
                  eff1.data(), o);
      ComputeLpbq(nb, imins.data(), imaxs.data(), inter.data(), nch, bits, 8, kDefaultMinRange, cs2.data(),
                  is2.data(), eff2.data(), o);
      CHECK(cs1 == cs2);
      for (size_t b = 0; b < nb; ++b) {
        const size_t i = (b % per) * nch + b / per;
        REQUIRE(is1[b] == is2[i]);
        REQUIRE(Bits(eff1[b]) == Bits(eff2[i]));
      }
    }
  }
}

TEST_CASE("fused LPBQ rows equal compute-then-quantize, for any thread count", "[kernels][lpbq][threads]") {
  // Rows longer than 1024 are quantized in pieces with the next row
  // prefetched between them; block 9 gives odd pieces (one piece per row).
  struct Shape2 {
    size_t rows, row, block;
  };
  const Shape2 shape = GENERATE(Shape2{37, 256, 64}, Shape2{9, 2500, 50}, Shape2{7, 3024, 7}, Shape2{5, 2052, 9},
                                Shape2{3, 4096, 64});
  const size_t rows = shape.rows, row = shape.row, block = shape.block, nb = row / block;
  INFO("rows " << rows << " row " << row << " block " << block);
  std::mt19937 rng(41 + static_cast<unsigned>(row));
  std::vector<float> x(rows * row);
  for (auto& v : x) v = RandNormal(rng, 1.0f) * (1 + static_cast<float>(rng() % 8));
  std::vector<float> cs1(rows), cs2(rows);
  std::vector<int32_t> is1(rows * nb), is2(rows * nb);
  std::vector<uint8_t> y1(rows * row / 2), y2(rows * row / 2);
  ExecOptions o;
  o.chunk = 512;
  QuantizeLpbqRows(x.data(), rows, row, block, 4, 8, kDefaultMinRange, cs1.data(), is1.data(), y1.data(), o);
  ThreadPool pool(2);
  o.pool = &pool;
  QuantizeLpbqRows(x.data(), rows, row, block, 4, 8, kDefaultMinRange, cs2.data(), is2.data(), y2.data(), o);
  CHECK(cs1 == cs2);
  CHECK(is1 == is2);
  CHECK(y1 == y2);
  // Same as the IR path: ComputeEncoding(LPBQ) then QuantizeTensor.
  quant::EncodingRequest req;
  req.kind = EncodingKind::kLpbq;
  req.dtype = DType::kSFixed4;
  req.symmetry = Symmetry::kSymmetric;
  req.axis = 1;
  req.block_sizes = {1, static_cast<int64_t>(block)};
  req.decompressed_bitwidth = 8;
  auto enc = quant::ComputeEncoding("w", x.data(), {static_cast<int64_t>(rows), static_cast<int64_t>(row)}, req);
  REQUIRE(enc.ok());
  CHECK(enc->scales == cs1);
  CHECK(enc->block_int_scales == is1);
  Diagnostics d;
  CHECK(ValidateEncoding(enc.value(), "w", Shape::FromExtents({static_cast<int64_t>(rows), static_cast<int64_t>(row)}), 0, &d));
  INFO(JoinMessages(d));
  auto q = quant::QuantizeTensor("w", DType::kFloat32, x.data(),
                                 {static_cast<int64_t>(rows), static_cast<int64_t>(row)}, enc.value());
  REQUIRE(q.ok());
  CHECK(q.value() == y1);
}

TEST_CASE("QuantizeTensor: bad values are errors naming the tensor, or warnings on request", "[kernels][quant][policy]") {
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = DType::kUFixed8;
  e.scales = {0.1f};
  e.offsets = {-128};
  std::vector<float> x = {0.0f, 1.0f, NAN, -1.0f, INFINITY};
  auto r = quant::QuantizeTensor("conv1.weight", DType::kFloat32, x.data(), {5}, e);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(r.status().message(), Catch::Contains("conv1.weight") && Catch::Contains("2 of 5") &&
                                       Catch::Contains("NaN at index 2"));
  std::vector<std::string> warnings;
  quant::QuantizeOptions opt;
  opt.nonfinite = quant::NonFinitePolicy::kWarnNanAsZero;
  opt.warnings = &warnings;
  r = quant::QuantizeTensor("conv1.weight", DType::kFloat32, x.data(), {5}, e, opt);
  REQUIRE(r.ok());
  CHECK(r.value() == std::vector<uint8_t>{128, 138, 128, 118, 255});
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("conv1.weight"));
  // float16 input with an Inf is caught too
  const uint16_t h[] = {0x3c00, 0x7c00};
  auto r16 = quant::QuantizeTensor("act", DType::kFloat16, h, {2}, e);
  REQUIRE(!r16.ok());
  CHECK_THAT(r16.status().message(), Catch::Contains("Inf at index 1"));
  // ComputeEncoding: NaN is an error; with the option it is ignored (treated as 0)
  quant::EncodingRequest req;
  req.dtype = DType::kUFixed8;
  std::vector<float> c = {2.0f, 2.0f, NAN};
  CHECK(!quant::ComputeEncoding("t", c.data(), {3}, req).ok());
  auto enc = quant::ComputeEncoding("t", c.data(), {3}, req, opt);
  REQUIRE(enc.ok());
  CHECK(enc->scales[0] == Approx(2.0f / 255));
  // min == max == 0: the minimum range
  std::vector<float> zeros(10, 0.0f);
  enc = quant::ComputeEncoding("zeros", zeros.data(), {10}, req);
  REQUIRE(enc.ok());
  CHECK(enc->scales[0] == Approx(kDefaultMinRange / 255));
  // Inf has no range even with the option
  std::vector<float> inf = {1.0f, INFINITY};
  auto bad = quant::ComputeEncoding("t", inf.data(), {2}, req, opt);
  REQUIRE(!bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'t'"));
  // invalid encodings are reported with the tensor name
  Encoding z = e;
  z.scales = {0.0f};
  auto rz = quant::QuantizeTensor("w0", DType::kFloat32, x.data(), {5}, z);
  REQUIRE(!rz.ok());
  CHECK_THAT(rz.status().message(), Catch::Contains("w0"));
}

TEST_CASE("QuantizeGrid and MinMaxGrid count NaN/Inf in their own pass, for any split", "[kernels][quant][policy]") {
  // The count replaces a separate scan (QuantizeTensor / ComputeEncoding):
  // it must equal CountNonFinite whatever the chunking, thread count or
  // layout, including the odd-row sub-byte path, and leave outputs as they
  // are without counting.
  std::mt19937 rng(101);
  ThreadPool pool(2);
  for (const auto& dims : std::vector<std::vector<int64_t>>{{37, 129}, {64, 256}, {3, 5, 41}, {3, 7000}}) {
    const size_t n = static_cast<size_t>(std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>()));
    std::vector<float> x(n);
    for (auto& v : x) v = std::normal_distribution<float>(0.0f, 1.0f)(rng);
    const size_t bad = 1 + rng() % 9;
    for (size_t i = 0; i < bad; ++i) {
      const float special[] = {NAN, INFINITY, -INFINITY, -NAN};
      x[rng() % n] = special[rng() % 4];
    }
    const size_t expected = CountNonFinite(x.data(), n);
    REQUIRE(expected >= 1);
    std::vector<int64_t> blocks(dims.size(), 1);
    blocks.back() = dims.back() % 2 ? dims.back() : 16;
    const Grid grid = Grid::PerBlock(dims, blocks);
    std::vector<float> scales(grid.NumScales(), 0.05f);
    QuantArgs a;
    a.scales = scales.data();
    a.qmin = -8;
    a.qmax = 7;
    std::vector<uint8_t> plain((n + 1) / 2), counted((n + 1) / 2);
    QuantizeGrid(InType::kF32, x.data(), grid, a, QStorage::kQ4, plain.data());
    std::vector<float> mins0(grid.NumScales()), maxs0(grid.NumScales());
    MinMaxGrid(x.data(), grid, mins0.data(), maxs0.data());
    for (size_t chunk : {size_t{64}, size_t{256}, size_t{1} << 16}) {
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        ExecOptions o;
        o.chunk = chunk;
        o.pool = p;
        INFO("dims " << dims.size() << "-d, n " << n << ", chunk " << chunk << ", threads " << PoolSize(p));
        size_t q_count = 12345, m_count = 12345;
        std::fill(counted.begin(), counted.end(), 0xAA);
        QuantizeGrid(InType::kF32, x.data(), grid, a, QStorage::kQ4, counted.data(), o, &q_count);
        CHECK(q_count == expected);
        CHECK(counted == plain);
        std::vector<float> mins(grid.NumScales()), maxs(grid.NumScales());
        MinMaxGrid(x.data(), grid, mins.data(), maxs.data(), o, &m_count);
        CHECK(m_count == expected);
        CHECK(std::memcmp(mins.data(), mins0.data(), mins.size() * sizeof(float)) == 0);
        CHECK(std::memcmp(maxs.data(), maxs0.data(), maxs.size() * sizeof(float)) == 0);
      }
    }
    // Clean data counts zero.
    for (auto& v : x)
      if (!std::isfinite(v)) v = 0.5f;
    size_t zero = 7;
    QuantizeGrid(InType::kF32, x.data(), grid, a, QStorage::kQ4, counted.data(), {}, &zero);
    CHECK(zero == 0);
  }
}

TEST_CASE("LPBQ with the block axis anywhere: encodings and quantized values match a per-element reference",
          "[kernels][quant][lpbq]") {
  // A block's channel is its index without the block axis. The reference
  // below derives it per element with div/mod; the library walks it as an
  // odometer (quantize.cpp BlockChannels). The same data with the channels
  // first and the block axis last (the lpbq-scales kernel's contiguous path)
  // must give the same channel and integer scales.
  std::mt19937 rng(77);
  struct Case {
    std::vector<int64_t> dims;
    size_t axis;
    int64_t block;
  };
  const Case cases[] = {{{6, 40, 3, 2}, 1, 8}, {{24, 5}, 0, 8}, {{4, 3, 32}, 2, 16}, {{2, 3, 16, 5}, 2, 4}};
  for (const Case& c : cases) {
    const size_t r = c.dims.size();
    size_t n = 1;
    for (int64_t v : c.dims) n *= static_cast<size_t>(v);
    std::vector<float> x(n);
    for (auto& v : x) v = RandNormal(rng, 1.0f) * (1.0f + static_cast<float>(rng() % 50));
    quant::EncodingRequest req;
    req.kind = EncodingKind::kLpbq;
    req.dtype = DType::kSFixed4;
    req.symmetry = Symmetry::kSymmetric;
    req.axis = static_cast<int32_t>(c.axis);
    req.block_sizes.assign(r, 1);
    req.block_sizes[c.axis] = c.block;
    req.decompressed_bitwidth = 8;
    auto enc = quant::ComputeEncoding("w", x.data(), c.dims, req);
    REQUIRE(enc.ok());
    auto q = quant::QuantizeTensor("w", DType::kFloat32, x.data(), c.dims, enc.value());
    REQUIRE(q.ok());
    const int64_t k = c.dims[c.axis];
    const size_t nch = n / static_cast<size_t>(k);
    const size_t nblk = static_cast<size_t>(k / c.block);
    // The same values, channels first, block axis last.
    std::vector<float> xt(n);
    std::vector<size_t> chan_of(n), blk_of(n), grid_of(n);
    for (size_t f = 0; f < n; ++f) {
      std::vector<int64_t> idx(r);
      size_t rem = f;
      for (size_t d = r; d-- > 0;) {
        idx[d] = static_cast<int64_t>(rem % static_cast<size_t>(c.dims[d]));
        rem /= static_cast<size_t>(c.dims[d]);
      }
      size_t ch = 0, grid = 0;
      for (size_t d = 0; d < r; ++d) {
        const int64_t extent = d == c.axis ? c.dims[d] / c.block : c.dims[d];
        const int64_t i = d == c.axis ? idx[d] / c.block : idx[d];
        grid = grid * static_cast<size_t>(extent) + static_cast<size_t>(i);
        if (d != c.axis) ch = ch * static_cast<size_t>(c.dims[d]) + static_cast<size_t>(idx[d]);
      }
      chan_of[f] = ch;
      blk_of[f] = static_cast<size_t>(idx[c.axis] / c.block);
      grid_of[f] = grid;
      xt[ch * static_cast<size_t>(k) + static_cast<size_t>(idx[c.axis])] = x[f];
    }
    quant::EncodingRequest treq = req;
    treq.axis = 1;
    treq.block_sizes = {1, c.block};
    auto tenc = quant::ComputeEncoding("wt", xt.data(), {static_cast<int64_t>(nch), k}, treq);
    REQUIRE(tenc.ok());
    INFO("dims rank " << r << ", axis " << c.axis);
    REQUIRE(enc->scales.size() == nch);
    CHECK(enc->scales == tenc->scales);
    for (size_t f = 0; f < n; ++f) {
      const int32_t is = enc->block_int_scales[grid_of[f]];
      CHECK(is == tenc->block_int_scales[chan_of[f] * nblk + blk_of[f]]);
      const float eff = static_cast<float>(is) * enc->scales[chan_of[f]];
      const float want = std::min(7.0f, std::max(-8.0f, std::nearbyint(x[f] / eff)));
      const int nib = (q.value()[f / 2] >> (4 * (f % 2))) & 0xF;
      const int got = nib >= 8 ? nib - 16 : nib;
      if (got != static_cast<int>(want)) {
        INFO("element " << f << " channel " << chan_of[f] << " x " << x[f] << " eff " << eff);
        CHECK(got == static_cast<int>(want));
      }
    }
  }
}

TEST_CASE("QuantizeTensor / DequantizeTensor / ComputeEncoding round trips", "[kernels][quant]") {
  std::mt19937 rng(43);
  const std::vector<int64_t> dims = {8, 6, 5};
  std::vector<float> x(8 * 6 * 5);
  for (auto& v : x) v = RandNormal(rng, 1.0f);
  struct Case {
    EncodingKind kind;
    DType dtype;
    Symmetry sym;
    int32_t axis;
    std::vector<int64_t> blocks;
  };
  const Case cases[] = {
      {EncodingKind::kPerTensor, DType::kUFixed8, Symmetry::kAsymmetric, -1, {}},
      {EncodingKind::kPerTensor, DType::kSFixed16, Symmetry::kSymmetric, -1, {}},
      {EncodingKind::kPerChannel, DType::kSFixed8, Symmetry::kSymmetric, 0, {}},
      {EncodingKind::kPerChannel, DType::kSFixed8, Symmetry::kStrictSymmetric, 1, {}},
      {EncodingKind::kPerChannel, DType::kUFixed4, Symmetry::kAsymmetric, 2, {}},  // odd rows of int4
      {EncodingKind::kPerBlock, DType::kSFixed4, Symmetry::kSymmetric, 1, {1, 2, 5}},
      {EncodingKind::kPerBlock, DType::kSFixed2, Symmetry::kSymmetric, 0, {4, 6, 5}},
  };
  for (const Case& c : cases) {
    quant::EncodingRequest req;
    req.kind = c.kind;
    req.dtype = c.dtype;
    req.symmetry = c.sym;
    req.axis = c.axis;
    req.block_sizes = c.blocks;
    auto enc = quant::ComputeEncoding("t", x.data(), dims, req);
    REQUIRE(enc.ok());
    Diagnostics d;
    INFO(enc->ToString());
    CHECK(ValidateEncoding(enc.value(), "t", Shape::FromExtents(dims), 0, &d));
    INFO(JoinMessages(d));
    auto q = quant::QuantizeTensor("t", DType::kFloat32, x.data(), dims, enc.value());
    REQUIRE(q.ok());
    std::vector<float> back(x.size());
    REQUIRE(quant::DequantizeTensor("t", q->data(), q->size(), dims, enc.value(), back.data()).ok());
    float max_scale = *std::max_element(enc->scales.begin(), enc->scales.end());
    for (size_t i = 0; i < x.size(); ++i) CHECK(std::abs(back[i] - x[i]) <= max_scale * 0.5f * 1.0001f);
  }
  // float16 "quantization" is conversion
  Encoding f16;
  f16.kind = EncodingKind::kFloat;
  f16.dtype = DType::kFloat16;
  auto h = quant::QuantizeTensor("t", DType::kFloat32, x.data(), dims, f16);
  REQUIRE(h.ok());
  CHECK(h->size() == 2 * x.size());
  // bias: input scale x per-channel weight scales, offset 0, saturating
  Encoding w;
  w.kind = EncodingKind::kPerChannel;
  w.dtype = DType::kSFixed8;
  w.symmetry = Symmetry::kSymmetric;
  w.axis = 0;
  w.scales = {0.5f, 0.25f, 1e-9f};
  const float b[] = {1.0f, -1.0f, 1e9f};
  int32_t qb[3];
  REQUIRE(quant::QuantizeBias("conv.bias", b, 3, 0.1f, w, qb).ok());
  CHECK(qb[0] == 20);
  CHECK(qb[1] == -40);
  CHECK(qb[2] == INT32_MAX);
  CHECK(!quant::QuantizeBias("conv.bias", b, 2, 0.1f, w, qb).ok());
}

}  // namespace qairt::kernels::test

namespace qairt::kernels::test {

// Outputs of 4 MiB and more are written with non-temporal stores from the
// first 64-byte-aligned vector on: every ISA, every storage width, every
// destination misalignment gives the reference's bytes.
TEST_CASE("QuantizeGrid: large (streamed) outputs equal the reference at any alignment", "[kernels][ops][stream]") {
  std::mt19937 rng(41);
  for (const int bits : {2, 4, 8, 16, 32}) {
    // A few per-channel rows, output just above the 4 MiB streaming threshold.
    const int64_t rows = 3;
    const int64_t row = ((int64_t{4} << 20) * 8 / bits) / rows + 77;  // odd: tails in every row
    const Grid g = Grid::PerChannel({rows, row}, 0);
    QuantArgs a;
    ClampRange(static_cast<uint32_t>(bits), true, Schema::kAsymmetric, &a.qmin, &a.qmax);
    std::vector<float> scales = {0.05f, 0.3f, 1.7f};
    std::vector<int32_t> offsets = {0, bits == 32 ? 0 : 1, bits == 32 ? 0 : -1};
    a.scales = scales.data();
    a.offsets = offsets.data();
    std::vector<float> x(static_cast<size_t>(rows * row));
    for (auto& v : x) v = RandNormal(rng, 40.0f);
    const std::vector<uint8_t> want = RefQuantGrid(x, g, a, bits);
    REQUIRE(want.size() >= (size_t{4} << 20));
    std::vector<uint8_t> buffer(want.size() + 128);
    const size_t base = (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64;
    for (uint32_t l = 0; l < kIsaCount; ++l) {
      const auto isa = static_cast<Isa>(l);
      if (!HostSupports(isa) || isa == Isa::kScalar) continue;  // scalar: per element, minutes
      for (const size_t misalign : {size_t{0}, size_t{1}, size_t{4}, size_t{8}, size_t{16}, size_t{48}}) {
        INFO("bits " << bits << " isa " << IsaName(isa) << " destination offset " << misalign);
        ExecOptions o;
        o.config = &GetKernelConfig(isa);
        uint8_t* y = buffer.data() + base + misalign;
        std::fill(buffer.begin(), buffer.end(), uint8_t{0xA5});
        QuantizeGrid(InType::kF32, x.data(), g, a, StorageFor(bits), y, o);
        REQUIRE(std::equal(want.begin(), want.end(), y));
        REQUIRE(std::all_of(y + want.size(), buffer.data() + buffer.size(), [](uint8_t b) { return b == 0xA5; }));
      }
    }
  }
}

}  // namespace qairt::kernels::test

namespace qairt::kernels::test {

// QuantizeGrid calls the kernel in pieces of a few thousand elements (so it
// can prefetch the next piece): runs that cross a piece edge (blocks that do
// not divide it, per-element scales), rows longer than a piece with odd
// tails, sub-byte outputs, and tasks split across threads must all give the
// reference's bytes on every ISA.
TEST_CASE("QuantizeGrid in prefetched pieces: runs across piece edges", "[kernels][ops][pieces]") {
  std::mt19937 rng(43);
  ThreadPool pool(2);
  struct Case {
    std::vector<int64_t> dims;
    std::vector<int64_t> blocks;  // empty: per channel along the last axis
  };
  const std::vector<Case> cases = {
      {{3, 6000}, {1, 48}},     // block 48: runs straddle every 2048-element piece edge
      {{2, 9000}, {1, 3000}},   // runs longer than a piece, not dividing it
      {{5, 4099}, {1, 4099}},   // per channel, odd rows of just over two pieces
      {{2, 5000}, {}},          // a scale per element (runs of one)
      {{20000}, {100}},         // one long row, block 100
      {{4, 2, 2304}, {1, 2, 64}},
  };
  for (const Case& c : cases) {
    const Grid g = c.blocks.empty() ? Grid::PerChannel(c.dims, c.dims.size() - 1) : Grid::PerBlock(c.dims, c.blocks);
    for (const int bits : {2, 4, 8, 16}) {
      QuantArgs a;
      ClampRange(static_cast<uint32_t>(bits), true, Schema::kAsymmetric, &a.qmin, &a.qmax);
      std::vector<float> scales(g.NumScales());
      std::vector<int32_t> offsets(g.NumScales());
      for (size_t i = 0; i < scales.size(); ++i) {
        scales[i] = std::uniform_real_distribution<float>(0.01f, 1.0f)(rng);
        offsets[i] = static_cast<int32_t>(rng() % 3) - 1;
      }
      a.scales = scales.data();
      a.offsets = offsets.data();
      std::vector<float> x(g.NumElements());
      for (auto& v : x) v = RandNormal(rng, 3.0f);
      if (g.NumElements() * static_cast<size_t>(bits) % 8 != 0) continue;
      const std::vector<uint8_t> want = RefQuantGrid(x, g, a, bits);
      for (uint32_t l = 0; l < kIsaCount; ++l) {
        const auto isa = static_cast<Isa>(l);
        if (!HostSupports(isa)) continue;
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          for (const size_t chunk : {size_t{1} << 16, size_t{4096} + 64}) {
            INFO("dims[last] " << c.dims.back() << " bits " << bits << " isa " << IsaName(isa) << " threads "
                               << (p ? 2 : 1) << " chunk " << chunk);
            ExecOptions o;
            o.config = &GetKernelConfig(isa);
            o.pool = p;
            o.chunk = chunk;
            std::vector<uint8_t> got(want.size(), 0x5A);
            QuantizeGrid(InType::kF32, x.data(), g, a, StorageFor(bits), got.data(), o);
            REQUIRE(got == want);
            if (bits != 8) continue;
            // MinMaxGrid walks the same pieces (vminmax for runs of one).
            std::vector<float> mins(g.NumScales()), maxs(g.NumScales());
            MinMaxGrid(x.data(), g, mins.data(), maxs.data(), o);
            std::vector<float> want_min(g.NumScales(), INFINITY), want_max(g.NumScales(), -INFINITY);
            for (size_t i = 0; i < x.size(); ++i) {
              const size_t s = ScaleIndex(g, i);
              want_min[s] = std::min(want_min[s], x[i]);
              want_max[s] = std::max(want_max[s], x[i]);
            }
            REQUIRE(mins == want_min);
            REQUIRE(maxs == want_max);
          }
        }
      }
    }
  }
}

}  // namespace qairt::kernels::test
