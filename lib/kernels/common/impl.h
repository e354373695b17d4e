// Generic kernel bodies, written once against the vector traits `V` of one
// ISA (kernels/isa/<isa>.h, included first, defines QAIRT_ISA_NS and V) and
// compiled once per ISA namespace with that file's flags (simdjson-style).
// Only the tile is per ISA; outer loops, run tracking and tails are here.
// Tails go through a zero-padded stack tile so they run the same vector
// instructions as the body (bit-exact with no scalar fallback to keep in sync).
#ifndef QAIRT_ISA_NS
#error "include kernels/isa/<isa>.h first"
#endif

#include <cstddef>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/common/scalar.h"

namespace qairt::kernels::QAIRT_ISA_NS {

using F = V::F;
using I = V::I;
constexpr size_t kW = V::kW;

// Which run (scale / offset) the elements of a call belong to.
struct Runs {
  const float* scales;
  const int32_t* offsets;
  size_t block;
  size_t first;
  size_t r;    // current run
  size_t end;  // index (relative to the call) one past the current run

  explicit Runs(const QuantParams& p) : scales(p.scales), offsets(p.offsets), block(p.block), first(p.first) {
    r = first / block;
    end = (r + 1) * block - first;
  }
  // Moves to the run holding element i (i never decreases).
  void Seek(size_t i) {
    if (i < end) return;
    const size_t adv = (i - end < block) ? 1 : (i - end) / block + 1;
    r += adv;
    end += adv * block;
  }
  float scale() const { return scales[r]; }
  int32_t offset() const { return offsets ? offsets[r] : 0; }
  float zp() const { return 0.0f - static_cast<float>(offset()); }
};

// Per-lane scale/zero point for a tile that straddles runs (or a tail).
static inline void FillLanes(Runs& rt, size_t i, size_t cnt, float* s, float* z, int32_t* o) {
  for (size_t j = 0; j < kW; ++j) {
    if (j < cnt) {
      rt.Seek(i + j);
      s[j] = rt.scale();
      z[j] = rt.zp();
      o[j] = rt.offset();
    } else {
      s[j] = 1.0f;
      z[j] = 0.0f;
      o[j] = 0;
    }
  }
}

// kZp == false: every zero point is 0 (symmetric grids), so the add is left
// out (it could only turn a -0 into +0, which converts to the same integer).
template <int kBits, bool kZp = true>
static inline I QuantVec(F x, F s, F z, F lo, F hi) {
  I q;
  F v;
  if constexpr (kZp) {
    v = V::Add(V::RoundEven(V::DivNanToZero(x, s)), z);
    v = V::Min(V::Max(v, lo), hi);
    q = V::CvtF2I(v);
  } else {
    // Clamping to integer bounds commutes with rounding, so the rounding can
    // be the conversion's own (one instruction on AVX-512).
    v = V::Min(V::Max(V::DivNanToZero(x, s), lo), hi);
    q = V::CvtRoundEven(v);
  }
  if constexpr (kBits == 32) q = V::FixI32Max(v, q);
  return q;
}

// Copies the first `bits` bits of a staged tile out, clearing unused high bits.
static inline void CopyBits(uint8_t* dst, uint8_t* src, size_t bits) {
  const size_t nbytes = (bits + 7) / 8;
  if (bits % 8) src[nbytes - 1] = static_cast<uint8_t>(src[nbytes - 1] & ((1u << (bits % 8)) - 1u));
  __builtin_memcpy(dst, src, nbytes);
}

// Bytes of quantized output one vector produces.
template <int kBits>
constexpr size_t kOutBytes = kW * kBits / 8;

// Whether this ISA level can write one vector's output with non-temporal
// stores (x86: 4, 8 or a multiple of 16 bytes).
template <int kBits>
constexpr bool kCanStream =
#if defined(__SSE2__) && defined(__x86_64__)
    kOutBytes<kBits> == 4 || kOutBytes<kBits> == 8 || kOutBytes<kBits> % 16 == 0;
#else
    false;
#endif

// Writes one vector's output around the caches (p aligned to its size). For
// outputs much larger than the caches: no read-for-ownership of each line,
// so a f32 -> q8 quantize moves 5 bytes per element instead of 6.
template <int kBits>
static inline void StreamQ(uint8_t* p, I q) {
#if defined(__SSE2__) && defined(__x86_64__)
  alignas(64) uint8_t b[kOutBytes<kBits> < 16 ? 16 : kOutBytes<kBits>];
  V::template StoreQ<kBits>(b, q);
  if constexpr (kOutBytes<kBits> == 4) {
    int32_t v;
    __builtin_memcpy(&v, b, 4);
    _mm_stream_si32(reinterpret_cast<int*>(p), v);
  } else if constexpr (kOutBytes<kBits> == 8) {
    long long v;
    __builtin_memcpy(&v, b, 8);
    _mm_stream_si64(reinterpret_cast<long long*>(p), v);
  } else {
    for (size_t k = 0; k < kOutBytes<kBits>; k += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(p + k), _mm_load_si128(reinterpret_cast<const __m128i*>(b + k)));
  }
#else
  V::template StoreQ<kBits>(p, q);
#endif
}

// First vector index (a multiple of kW) from which the output can be
// streamed: its address is 64-byte aligned. n when it cannot be.
template <int kBits>
static inline size_t StreamStart(const QuantParams* p, size_t n, const uint8_t* y) {
  if constexpr (!kCanStream<kBits>) {
    return n;
  } else {
    if (!p->stream) return n;
    const auto addr = reinterpret_cast<uintptr_t>(y);
    if (addr % kOutBytes<kBits> != 0) return n;
    size_t i = 0;
    while (i < n && (addr + i * kBits / 8) % 64 != 0) i += kW;
    return i;
  }
}

template <int kBits>
static inline void Put(uint8_t* p, I q, bool stream) {
  if constexpr (kCanStream<kBits>) {
    if (stream) return StreamQ<kBits>(p, q);
  }
  V::template StoreQ<kBits>(p, q);
}

// QuantParams::prefetch: one prefetch per 64-byte line of input (every
// vector when a vector spans a line or more). The address may lie past the
// input, so it is computed as an integer (a pointer there would be UB).
template <class In>
static inline void PrefetchAhead(const In* x, size_t i, size_t ahead) {
  if constexpr (kW * sizeof(In) < 64) {
    if ((i * sizeof(In)) % 64 != 0) return;
  }
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(x + i) + ahead * sizeof(In)), 0, 3);
}

template <class In, int kBits, bool kZp, bool kPrefetch>
static inline void QuantBody(size_t n, const void* xv, void* yv, const QuantParams* p) {
  const In* x = static_cast<const In*>(xv);
  uint8_t* y = static_cast<uint8_t*>(yv);
  const size_t stream_from = StreamStart<kBits>(p, n, y);
  const F lo = V::Set1(static_cast<float>(p->qmin));
  const F hi = V::Set1(static_cast<float>(p->qmax));
  alignas(64) float sb[kW];
  alignas(64) float zb[kW];
  alignas(64) int32_t ob[kW];
  Runs rt(*p);
  const size_t ahead = p->prefetch;
  size_t i = 0;
  if (p->block == 1) {
    const float* sc = p->scales + p->first;
    const int32_t* of = p->offsets ? p->offsets + p->first : nullptr;
    const F zero = V::Set1(0.0f);
    for (; i + kW <= n; i += kW) {
      if constexpr (kPrefetch) PrefetchAhead(x, i, ahead);
      const F z = of ? V::Sub(zero, V::CvtI2F(V::LoadI32(of + i))) : zero;
      Put<kBits>(y + i * kBits / 8, QuantVec<kBits>(V::Load(x + i), V::Load(sc + i), z, lo, hi), i >= stream_from);
    }
  } else {
    // Run by run: the vectors inside a run share one broadcast scale and need
    // no per-vector checks (LPBQ and block quantization live here).
    while (i + kW <= n) {
      rt.Seek(i);
      const size_t run_end = rt.end < n ? rt.end : n;
      if (i + kW > run_end) {  // a vector straddling runs: per-lane scales
        FillLanes(rt, i, kW, sb, zb, ob);
        Put<kBits>(y + i * kBits / 8, QuantVec<kBits>(V::Load(x + i), V::Load(sb), V::Load(zb), lo, hi),
                   i >= stream_from);
        i += kW;
        continue;
      }
      const F s = V::Set1(rt.scale());
      const F z = V::Set1(rt.zp());
      const size_t stop = i + (run_end - i) / kW * kW;
      const size_t split = stream_from < i ? i : stream_from < stop ? stream_from : stop;
      for (; i < split; i += kW) {
        if constexpr (kPrefetch) PrefetchAhead(x, i, ahead);
        Put<kBits>(y + i * kBits / 8, QuantVec<kBits, kZp>(V::Load(x + i), s, z, lo, hi), false);
      }
      for (; i < stop; i += kW) {
        if constexpr (kPrefetch) PrefetchAhead(x, i, ahead);
        Put<kBits>(y + i * kBits / 8, QuantVec<kBits, kZp>(V::Load(x + i), s, z, lo, hi), true);
      }
    }
  }

  if (i < n) {
    const size_t cnt = n - i;
    In xb[kW] = {};
    __builtin_memcpy(xb, x + i, cnt * sizeof(In));
    FillLanes(rt, i, cnt, sb, zb, ob);
    alignas(64) uint8_t yb[kW * 4];
    V::template StoreQ<kBits>(yb, QuantVec<kBits>(V::Load(xb), V::Load(sb), V::Load(zb), lo, hi));
    CopyBits(y + i * kBits / 8, yb, cnt * kBits);
  }
}

template <class In, int kBits>
void Quant(size_t n, const void* xv, void* yv, const QuantParams* p) {
  // Four bodies, so that neither the zero point nor the prefetch costs a
  // per-vector test where it is not used.
  if (p->prefetch != 0) {
    if (p->offsets == nullptr) return QuantBody<In, kBits, false, true>(n, xv, yv, p);
    return QuantBody<In, kBits, true, true>(n, xv, yv, p);
  }
  if (p->offsets == nullptr) return QuantBody<In, kBits, false, false>(n, xv, yv, p);
  QuantBody<In, kBits, true, false>(n, xv, yv, p);
}

template <int kBits, bool kSigned>
static inline F DequantVec(const uint8_t* q, I off, F s) {
  const I v = V::template LoadQ<kBits, kSigned>(q);
  if constexpr (kBits == 32) {
    return V::DequantS32(v, off, s);
  } else {
    return V::Mul(V::CvtI2F(V::AddI(v, off)), s);
  }
}

template <int kBits, bool kSigned>
void Dequant(size_t n, const void* qv, float* y, const QuantParams* p) {
  const uint8_t* q = static_cast<const uint8_t*>(qv);
  alignas(64) float sb[kW];
  alignas(64) float zb[kW];
  alignas(64) int32_t ob[kW];
  Runs rt(*p);
  size_t i = 0;
  if (p->block == 1) {
    const float* sc = p->scales + p->first;
    const int32_t* of = p->offsets ? p->offsets + p->first : nullptr;
    for (; i + kW <= n; i += kW) {
      const I o = of ? V::LoadI32(of + i) : V::Set1I(0);
      V::Store(y + i, DequantVec<kBits, kSigned>(q + i * kBits / 8, o, V::Load(sc + i)));
    }
  } else {
    F s = V::Set1(rt.scale());
    I o = V::Set1I(rt.offset());
    for (; i + kW <= n; i += kW) {
      if (i >= rt.end) {
        rt.Seek(i);
        s = V::Set1(rt.scale());
        o = V::Set1I(rt.offset());
      }
      if (i + kW <= rt.end) {
        V::Store(y + i, DequantVec<kBits, kSigned>(q + i * kBits / 8, o, s));
      } else {
        FillLanes(rt, i, kW, sb, zb, ob);
        V::Store(y + i, DequantVec<kBits, kSigned>(q + i * kBits / 8, V::LoadI32(ob), V::Load(sb)));
        s = V::Set1(rt.scale());
        o = V::Set1I(rt.offset());
      }
    }
  }
  if (i < n) {
    const size_t cnt = n - i;
    alignas(64) uint8_t qb[kW * 4] = {};
    __builtin_memcpy(qb, q + i * kBits / 8, (cnt * kBits + 7) / 8);
    FillLanes(rt, i, cnt, sb, zb, ob);
    alignas(64) float yb[kW];
    V::Store(yb, DequantVec<kBits, kSigned>(qb, V::LoadI32(ob), V::Load(sb)));
    __builtin_memcpy(y + i, yb, cnt * sizeof(float));
  }
}

static inline void BiasQuant(size_t n, const float* b, int32_t* y, const BiasParams* p) {
  const F lo = V::Set1(-2147483648.0f);
  const F hi = V::Set1(2147483648.0f);
  const F zero = V::Set1(0.0f);
  const F in = V::Set1(p->input_scale);
  const F s0 = V::Set1(p->input_scale * p->weight_scales[0]);
  uint8_t* out = reinterpret_cast<uint8_t*>(y);
  size_t i = 0;
  for (; i + kW <= n; i += kW) {
    const F s = p->per_channel ? V::Mul(in, V::Load(p->weight_scales + i)) : s0;
    V::template StoreQ<32>(out + 4 * i, QuantVec<32>(V::Load(b + i), s, zero, lo, hi));
  }
  if (i < n) {
    const size_t cnt = n - i;
    alignas(64) float xb[kW] = {};
    alignas(64) float wb[kW];
    for (size_t j = 0; j < kW; ++j) wb[j] = p->per_channel ? (j < cnt ? p->weight_scales[i + j] : 1.0f) : p->weight_scales[0];
    __builtin_memcpy(xb, b + i, cnt * sizeof(float));
    alignas(64) uint8_t yb[kW * 4];
    V::template StoreQ<32>(yb, QuantVec<32>(V::Load(xb), V::Mul(in, V::Load(wb)), zero, lo, hi));
    __builtin_memcpy(out + 4 * i, yb, cnt * 4);
  }
}

// ----- statistics -----------------------------------------------------------

// A template only so the discarded `if constexpr` branch may name traits
// members the ISA lacks.
template <class W = V>
static inline void MinMax(size_t n, const float* x, size_t first, size_t block, float* mins, float* maxs) {
  const float inf = __builtin_inff();
  size_t i = 0;
  size_t r = first / block;
  size_t run_end = (r + 1) * block - first;  // relative end of run r
  if constexpr (W::kTransposedRuns) {
    // kW whole runs of whole vectors at a time (LPBQ and block statistics):
    // one transposed reduction and vector updates of mins/maxs for all.
    if (first % block == 0 && block % kW == 0) {
      for (; block <= (n - i) / kW; i += kW * block, r += kW, run_end += kW * block) {  // no overflow for any block
        F vmin[kW], vmax[kW];
        for (size_t k = 0; k < kW; ++k) {
          const float* p = x + i + k * block;
          F mn = V::Set1(inf), mx = V::Set1(-inf);
          for (size_t j = 0; j < block; j += kW) {
            const F a = V::Load(p + j);
            mn = V::Min(a, mn);  // a NaN lane of `a` keeps the accumulator
            mx = V::Max(a, mx);
          }
          vmin[k] = mn;
          vmax[k] = mx;
        }
        F mn, mx;
        W::TransposeRunsMinMax(vmin, vmax, &mn, &mx);
        W::Store(mins + r, W::CanonicalZero(W::Min(mn, W::Load(mins + r))));
        W::Store(maxs + r, W::CanonicalZero(W::Max(mx, W::Load(maxs + r))));
      }
    }
  }
  for (; i < n; ++r, run_end += block) {
    const size_t end = run_end < n ? run_end : n;
    F vmin0 = V::Set1(inf), vmax0 = V::Set1(-inf), vmin1 = vmin0, vmax1 = vmax0;
    for (; i + 2 * kW <= end; i += 2 * kW) {
      const F a = V::Load(x + i);
      const F b = V::Load(x + i + kW);
      vmin0 = V::Min(a, vmin0);
      vmax0 = V::Max(a, vmax0);
      vmin1 = V::Min(b, vmin1);
      vmax1 = V::Max(b, vmax1);
    }
    for (; i + kW <= end; i += kW) {
      const F a = V::Load(x + i);
      vmin0 = V::Min(a, vmin0);
      vmax0 = V::Max(a, vmax0);
    }
    float mn, mx;
    V::ReduceMinMax(V::Min(vmin1, vmin0), V::Max(vmax1, vmax0), &mn, &mx);
    for (; i < end; ++i) {
      mn = MinPs(x[i], mn);
      mx = MaxPs(x[i], mx);
    }
    mins[r] = CanonicalZero(MinPs(mn, mins[r]));
    maxs[r] = CanonicalZero(MaxPs(mx, maxs[r]));
  }
}

// The rows fold into registers, each lane in row order (as one row per
// call would): mins and maxs are loaded and stored once per vector, where a
// row at a time moved them through L1 once per row, twice the data's own
// traffic (an LLM weight's 64-row blocks ran at 60% of the speed). The
// check for NaN and Inf rides along: a - a is 0 for a finite value and NaN
// otherwise, and a NaN stays in the running sum (a separate counting pass
// over each piece cost a seventh of an LLM's range pass).
static inline size_t VMinMax(size_t n, size_t rows, size_t ld, const float* x, float* mins, float* maxs) {
  size_t i = 0;
  F check = V::Set1(0.0f);
  for (; i + kW <= n; i += kW) {
    F lo = V::Load(mins + i), hi = V::Load(maxs + i);
    for (size_t r = 0; r < rows; ++r) {
      const F a = V::Load(x + r * ld + i);
      lo = V::Min(a, lo);
      hi = V::Max(a, hi);
      check = V::Add(check, V::Sub(a, a));
    }
    V::Store(mins + i, lo);
    V::Store(maxs + i, hi);
  }
  alignas(64) float lanes[kW];
  V::Store(lanes, check);
  size_t nonfinite = 0;
  for (size_t j = 0; j < kW; ++j) nonfinite |= lanes[j] != 0.0f ? 1u : 0u;  // NaN != 0
  for (; i < n; ++i) {
    float lo = mins[i], hi = maxs[i];
    for (size_t r = 0; r < rows; ++r) {
      const float v = x[r * ld + i];
      lo = MinPs(v, lo);
      hi = MaxPs(v, hi);
      nonfinite |= (BitsOf(v) & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
    }
    mins[i] = lo;
    maxs[i] = hi;
  }
  return nonfinite;
}

// Up to this many bins, Hist counts into two stack sub-histograms of 32-bit
// counts (even and odd positions of each tile) with one extra slot for
// values outside [lo, hi], so the increments carry no branch and a run of
// equal bins (most values fall in a few central bins) is two dependency
// chains through memory instead of one. With the per-vector prefetch,
// BM_Hist2048 (64M elements, 2048 bins, 1 thread) went from 160-174 to
// 67-69 ms on the Intel host of benchmarks/README.md.
constexpr uint32_t kHistSplitMaxBins = 2048;
// Sub-histogram counts are flushed to the 64-bit ones every this many
// elements (far below 2^32; ops.cc calls with chunks of this size anyway).
constexpr size_t kHistFlushElems = size_t{1} << 16;

static inline void Hist(size_t n, const float* x, const HistParams* p, uint64_t* counts) {
  const F lo = V::Set1(p->lo), hi = V::Set1(p->hi), sc = V::Set1(p->scale);
  const int32_t maxbin = static_cast<int32_t>(p->bins) - 1;
  alignas(64) int32_t idx[2 * kW];
  size_t i = 0;
  if (p->bins <= kHistSplitMaxBins) {
    uint32_t sub[2][kHistSplitMaxBins + 1];
    const int32_t outside = static_cast<int32_t>(p->bins);
    while (i + 2 * kW <= n) {
      const size_t tiles = (n - i) / (2 * kW);
      const size_t end = i + 2 * kW * (tiles < kHistFlushElems / (2 * kW) ? tiles : kHistFlushElems / (2 * kW));
      for (uint32_t b = 0; b <= p->bins; ++b) sub[0][b] = sub[1][b] = 0;
      for (; i < end; i += 2 * kW) {
        if (p->prefetch) {
          PrefetchAhead(x, i, p->prefetch);
          PrefetchAhead(x, i + kW, p->prefetch);
        }
        V::HistIdx(V::Load(x + i), lo, hi, sc, maxbin, idx);
        V::HistIdx(V::Load(x + i + kW), lo, hi, sc, maxbin, idx + kW);
        for (size_t j = 0; j < 2 * kW; j += 2) {
          ++sub[0][idx[j] < 0 ? outside : idx[j]];
          ++sub[1][idx[j + 1] < 0 ? outside : idx[j + 1]];
        }
      }
      for (uint32_t b = 0; b < p->bins; ++b) counts[b] += static_cast<uint64_t>(sub[0][b]) + sub[1][b];
    }
  }
  for (; i + 2 * kW <= n; i += 2 * kW) {
    V::HistIdx(V::Load(x + i), lo, hi, sc, maxbin, idx);
    V::HistIdx(V::Load(x + i + kW), lo, hi, sc, maxbin, idx + kW);
    for (size_t j = 0; j < 2 * kW; ++j)
      if (idx[j] >= 0) ++counts[idx[j]];
  }
  for (; i < n; ++i) {
    const float v = x[i];
    if (!(v >= p->lo && v <= p->hi)) continue;
    const int32_t b = static_cast<int32_t>((v - p->lo) * p->scale);
    ++counts[b < maxbin ? b : maxbin];
  }
}

static inline void QdqErr(size_t n, const float* x, const QdqErrParams* p, double* acc) {
  const F lo = V::Set1(static_cast<float>(p->qmin)), hi = V::Set1(static_cast<float>(p->qmax));
  const F s = V::Set1(p->scale);
  const F z = V::Set1(0.0f - static_cast<float>(p->offset));
  typename V::D e2 = V::ZeroD(), x2 = V::ZeroD();
  size_t i = 0;
  for (; i + kW <= n; i += kW) {
    const F xv = V::NanToZero(V::Load(x + i));
    F v = V::RoundEven(V::Div(xv, s));
    v = V::Min(V::Max(V::Add(v, z), lo), hi);
    const F dq = V::Mul(V::Sub(v, z), s);
    e2 = V::AccSq(e2, V::Sub(xv, dq));
    x2 = V::AccSq(x2, xv);
  }
  double se = V::ReduceD(e2), sx = V::ReduceD(x2);
  const float zs = 0.0f - static_cast<float>(p->offset);
  for (; i < n; ++i) {
    const float xv = NanToZero(x[i]);
    float v = RoundEven(xv / p->scale) + zs;
    v = MinPs(MaxPs(v, static_cast<float>(p->qmin)), static_cast<float>(p->qmax));
    const float e = xv - (v - zs) * p->scale;
    se += static_cast<double>(e) * e;
    sx += static_cast<double>(xv) * xv;
  }
  acc[0] += se;
  acc[1] += sx;
}

static inline void SqErr(size_t n, const float* x, const float* y, double* acc) {
  typename V::D e2 = V::ZeroD(), x2 = V::ZeroD();
  size_t i = 0;
  for (; i + kW <= n; i += kW) {
    const F xv = V::Load(x + i);
    e2 = V::AccSq(e2, V::Sub(xv, V::Load(y + i)));
    x2 = V::AccSq(x2, xv);
  }
  double se = V::ReduceD(e2), sx = V::ReduceD(x2);
  for (; i < n; ++i) {
    const float e = x[i] - y[i];
    se += static_cast<double>(e) * e;
    sx += static_cast<double>(x[i]) * x[i];
  }
  acc[0] += se;
  acc[1] += sx;
}

static inline size_t NonFinite(size_t n, const float* x) {
  size_t c = 0, i = 0;
  for (; i + kW <= n; i += kW) c += V::CountNonFinite(V::Load(x + i));
  for (; i < n; ++i) c += (BitsOf(x[i]) & 0x7f800000u) == 0x7f800000u;
  return c;
}

// ----- fp16 conversion (instantiated only where V::StoreF16 exists) --------

template <class VV = V>
void F32ToF16(size_t n, const float* x, Half* y) {
  size_t i = 0;
  for (; i + kW <= n; i += kW) VV::StoreF16(y + i, VV::Load(x + i));
  if (i < n) {
    alignas(64) float xb[kW] = {};
    Half yb[kW];
    __builtin_memcpy(xb, x + i, (n - i) * sizeof(float));
    VV::StoreF16(yb, VV::Load(xb));
    __builtin_memcpy(y + i, yb, (n - i) * sizeof(Half));
  }
}

static inline void F16ToF32(size_t n, const Half* x, float* y) {
  size_t i = 0;
  for (; i + kW <= n; i += kW) V::Store(y + i, V::Load(x + i));
  if (i < n) {
    Half xb[kW] = {};
    alignas(64) float yb[kW];
    __builtin_memcpy(xb, x + i, (n - i) * sizeof(Half));
    V::Store(yb, V::Load(xb));
    __builtin_memcpy(y + i, yb, (n - i) * sizeof(float));
  }
}

// ----- packing --------------------------------------------------------------

template <int kBits>
void Pack(size_t n, const int8_t* q, uint8_t* y) {
  const uint8_t* src = reinterpret_cast<const uint8_t*>(q);
  size_t i = 0;
  for (; i + kW <= n; i += kW) V::template StoreQ<kBits>(y + i * kBits / 8, V::template LoadQ<8, true>(src + i));
  if (i < n) {
    alignas(64) uint8_t qb[kW * 4] = {};
    alignas(64) uint8_t yb[kW * 4];
    __builtin_memcpy(qb, src + i, n - i);
    V::template StoreQ<kBits>(yb, V::template LoadQ<8, true>(qb));
    CopyBits(y + i * kBits / 8, yb, (n - i) * kBits);
  }
}

template <int kBits, bool kSigned>
void Unpack(size_t n, const uint8_t* p, int8_t* q) {
  uint8_t* dst = reinterpret_cast<uint8_t*>(q);
  size_t i = 0;
  for (; i + kW <= n; i += kW) V::template StoreQ<8>(dst + i, V::template LoadQ<kBits, kSigned>(p + i * kBits / 8));
  if (i < n) {
    alignas(64) uint8_t pb[kW * 4] = {};
    alignas(64) uint8_t qb[kW * 4];
    __builtin_memcpy(pb, p + i * kBits / 8, ((n - i) * kBits + 7) / 8);
    V::template StoreQ<8>(qb, V::template LoadQ<kBits, kSigned>(pb));
    __builtin_memcpy(dst + i, qb, n - i);
  }
}

}  // namespace qairt::kernels::QAIRT_ISA_NS
