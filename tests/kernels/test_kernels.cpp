// Every kernel of every kernels.inc against its family's reference.cc,
// bit-exact (qdqerr: sums in a different order, relative tolerance). The
// kernel tables below are generated from the lists, so a new list entry is
// tested without touching this file.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernel_test_util.h"
#include "kernels/common/scalar.h"

namespace qairt::kernels::test {
namespace {

// ----- tables generated from the kernel lists ---------------------------------

struct QuantEntry {
  Isa isa;
  const char* name;
  QuantFn fn;
  int in;    // 0 f32, 1 f16, 2 bf16
  int bits;  // 8 16 32 4 2
};
const std::vector<QuantEntry>& QuantEntries() {
  constexpr int kIn_f32 = 0, kIn_f16 = 1, kIn_bf16 = 2;
  constexpr int kOut_q8 = 8, kOut_q16 = 16, kOut_q32 = 32, kOut_q4 = 4, kOut_q2 = 2;
  static const std::vector<QuantEntry> v = {
#define QAIRT_KERNEL(isa, name, in, out) {QAIRT_TEST_ISA_##isa, #name, name, kIn_##in, kOut_##out},
#include "kernels/f32-quant/kernels.inc"
#undef QAIRT_KERNEL
  };
  (void)kIn_f32, (void)kIn_f16, (void)kIn_bf16, (void)kOut_q8, (void)kOut_q16, (void)kOut_q32, (void)kOut_q4,
      (void)kOut_q2;
  return v;
}

struct DequantEntry {
  Isa isa;
  const char* name;
  DequantFn fn;
  int bits;
  bool is_signed;
};
const std::vector<DequantEntry>& DequantEntries() {
#define QAIRT_DQK_qu8 8, false
#define QAIRT_DQK_qs8 8, true
#define QAIRT_DQK_qu16 16, false
#define QAIRT_DQK_qs16 16, true
#define QAIRT_DQK_qs32 32, true
#define QAIRT_DQK_qu4 4, false
#define QAIRT_DQK_qs4 4, true
#define QAIRT_DQK_qu2 2, false
#define QAIRT_DQK_qs2 2, true
  static const std::vector<DequantEntry> v = {
#define QAIRT_KERNEL(isa, name, kind) {QAIRT_TEST_ISA_##isa, #name, name, QAIRT_DQK_##kind},
#include "kernels/f32-dequant/kernels.inc"
#undef QAIRT_KERNEL
  };
  return v;
}

struct BiasEntry {
  Isa isa;
  const char* name;
  BiasQuantFn fn;
};
const std::vector<BiasEntry>& BiasEntries() {
  static const std::vector<BiasEntry> v = {
#define QAIRT_KERNEL(isa, name) {QAIRT_TEST_ISA_##isa, #name, name},
#include "kernels/bias-quant/kernels.inc"
#undef QAIRT_KERNEL
  };
  return v;
}

struct StatsEntry {
  Isa isa;
  const char* name;
  std::string op;
  void* fn;
};
const std::vector<StatsEntry>& StatsEntries() {
  static const std::vector<StatsEntry> v = {
#define QAIRT_KERNEL(isa, name, op) {QAIRT_TEST_ISA_##isa, #name, #op, reinterpret_cast<void*>(&name)},
#include "kernels/stats/kernels.inc"
#undef QAIRT_KERNEL
  };
  return v;
}

struct CvtEntry {
  Isa isa;
  const char* name;
  std::string dir;
  void* fn;
};
const std::vector<CvtEntry>& CvtEntries() {
  static const std::vector<CvtEntry> v = {
#define QAIRT_KERNEL(isa, name, dir) {QAIRT_TEST_ISA_##isa, #name, #dir, reinterpret_cast<void*>(&name)},
#include "kernels/f16-convert/kernels.inc"
#undef QAIRT_KERNEL
  };
  return v;
}

struct PackEntry {
  Isa isa;
  const char* name;
  std::string op;
  void* fn;
};
const std::vector<PackEntry>& PackEntries() {
  static const std::vector<PackEntry> v = {
#define QAIRT_KERNEL(isa, name, op) {QAIRT_TEST_ISA_##isa, #name, #op, reinterpret_cast<void*>(&name)},
#include "kernels/pack/kernels.inc"
#undef QAIRT_KERNEL
  };
  return v;
}

struct LpbqEntry {
  Isa isa;
  const char* name;
  LpbqScalesFn fn;
};
const std::vector<LpbqEntry>& LpbqEntries() {
  static const std::vector<LpbqEntry> v = {
#define QAIRT_KERNEL(isa, name) {QAIRT_TEST_ISA_##isa, #name, name},
#include "kernels/lpbq-scales/kernels.inc"
#undef QAIRT_KERNEL
  };
  return v;
}

// ----- input generation -------------------------------------------------------------

struct RunSetup {
  size_t block;
  size_t first;
  std::vector<float> scales;
  std::vector<int32_t> offsets;  // empty -> nullptr
};

enum class ScaleKind { kRandom, kPow2, kDenormal };

// Grid ranges a kernel of `bits` storage is used with.
std::vector<std::pair<int32_t, int32_t>> RangesFor(int bits) {
  switch (bits) {
    case 2: return {{-2, 1}, {0, 3}, {-1, 1}};
    case 4: return {{-8, 7}, {0, 15}, {-7, 7}};
    case 8: return {{-128, 127}, {0, 255}, {-127, 127}, {0, 15}};
    case 16: return {{-32768, 32767}, {0, 65535}, {-2048, 2047}, {-32767, 32767}};
    default: return {{INT32_MIN, INT32_MAX}, {-32768, 32767}};
  }
}

RunSetup MakeRuns(std::mt19937& rng, size_t n, size_t block, ScaleKind sk, bool with_offsets, int32_t qmin,
                  int32_t qmax) {
  RunSetup r;
  r.block = block;
  r.first = block > 1 ? std::uniform_int_distribution<size_t>(0, block - 1)(rng) : 0;
  if (rng() % 3 == 0) r.first = 0;
  const size_t runs = (r.first + n) / block + 2;
  std::uniform_int_distribution<int> e2(-6, 6);
  std::uniform_real_distribution<float> u(0.001f, 2.0f);
  for (size_t i = 0; i < runs; ++i) {
    switch (sk) {
      case ScaleKind::kRandom: r.scales.push_back(u(rng)); break;
      case ScaleKind::kPow2: r.scales.push_back(std::ldexp(1.0f, e2(rng))); break;
      case ScaleKind::kDenormal: r.scales.push_back(FromBits(1 + rng() % 0x7fffff)); break;
    }
    if (with_offsets) {
      // zero point inside the grid (offset = -zero_point)
      const int64_t zp = std::uniform_int_distribution<int64_t>(std::max<int64_t>(qmin, -(1 << 24)),
                                                                std::min<int64_t>(qmax, 1 << 24))(rng);
      r.offsets.push_back(static_cast<int32_t>(-zp));
    }
  }
  return r;
}

// Values exercising every rule of the spec, relative to each element's run.
std::vector<float> MakeData(std::mt19937& rng, size_t n, const RunSetup& r, int32_t qmin, int32_t qmax) {
  std::vector<float> x(n);
  std::uniform_int_distribution<int> cat(0, 11);
  for (size_t i = 0; i < n; ++i) {
    const size_t run = (r.first + i) / r.block;
    const float s = r.scales[run];
    const float zp = r.offsets.empty() ? 0.0f : -static_cast<float>(r.offsets[run]);
    const double span = static_cast<double>(qmax) - qmin;
    const int64_t k = std::uniform_int_distribution<int64_t>(-4, 4)(rng);
    switch (cat(rng)) {
      case 0: x[i] = static_cast<float>((static_cast<double>(k) + 0.5) * s); break;  // half-way
      case 1: x[i] = -0.0f; break;
      case 2: x[i] = std::numeric_limits<float>::quiet_NaN(); break;
      case 3: x[i] = (rng() & 1) ? INFINITY : -INFINITY; break;
      case 4: x[i] = static_cast<float>((qmax - zp + 0.5 * static_cast<double>(k)) * s); break;  // top edge
      case 5: x[i] = static_cast<float>((qmin - zp + 0.5 * static_cast<double>(k)) * s); break;  // bottom edge
      case 6: x[i] = (rng() & 1 ? 1 : -1) * 3.0e38f; break;
      case 7: x[i] = FromBits(static_cast<uint32_t>(rng()) & 0x807fffffu); break;  // denormal input
      default: x[i] = static_cast<float>(RandNormal(rng, 1.0f) * span * 0.6 * s); break;
    }
  }
  return x;
}

QuantParams ParamsOf(const RunSetup& r, int32_t qmin, int32_t qmax) {
  QuantParams p;
  p.scales = r.scales.data();
  p.offsets = r.offsets.empty() ? nullptr : r.offsets.data();
  p.block = r.block;
  p.first = r.first;
  p.qmin = qmin;
  p.qmax = qmax;
  return p;
}

// Input of kind `in` from float values (f16 / bf16 rounded, f16 via the reference).
std::vector<uint8_t> Encode(int in, const std::vector<float>& x) {
  if (in == 0) return Bytes(x.data(), 4 * x.size());
  std::vector<uint8_t> out(2 * x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    uint16_t h = in == 1 ? F32ToF16Bits(x[i]) : static_cast<uint16_t>(Bits(x[i]) >> 16);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

const std::vector<size_t>& BlockChoices() {
  static const std::vector<size_t> b = {1, 2, 3, 5, 16, 17, 31, 32, 48, 64, 100, 128, 200, 256, size_t{1} << 40};
  return b;
}

}  // namespace

TEST_CASE("quantize kernels match the reference bit for bit", "[kernels][quant]") {
  std::mt19937 rng(7);
  size_t checked = 0;
  for (const QuantEntry& k : QuantEntries()) {
    if (!CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (auto [qmin, qmax] : RangesFor(k.bits)) {
      for (size_t n : TestSizes()) {
        for (size_t block : BlockChoices()) {
          if (block > 1 && block < 16 && n > 300) continue;  // small blocks: small sizes suffice
          const auto sk = static_cast<ScaleKind>(rng() % 3);
          const RunSetup r = MakeRuns(rng, n, block, sk, rng() % 2 == 0, qmin, qmax);
          const std::vector<float> xf = MakeData(rng, n, r, qmin, qmax);
          const std::vector<uint8_t> x = Encode(k.in, xf);
          const QuantParams p = ParamsOf(r, qmin, qmax);
          const size_t nbytes = (n * static_cast<size_t>(k.bits) + 7) / 8;
          std::vector<uint8_t> got(nbytes + 8, 0xAB), want(nbytes + 8, 0xAB);
          k.fn(n, x.data(), got.data(), &p);
          ref::Quant(k.in, k.bits, n, x.data(), want.data(), &p);
          INFO("n=" << n << " block=" << block << " first=" << r.first << " range=[" << qmin << "," << qmax
                    << "] scales=" << static_cast<int>(sk) << " offsets=" << !r.offsets.empty());
          REQUIRE(got == want);  // includes the guard bytes: nothing written past the end
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 0);
}

// Values within a few ulps of every half-way point must give the reference's
// codes (guards any faster formulation of the division, e.g. multiplying by
// 1/scale and checking the remainder, which was tried and measured slower).
TEST_CASE("quantize: near-ties around every half-way point match the reference", "[kernels][quant]") {
  std::mt19937 rng(11);
  size_t checked = 0;
  for (const QuantEntry& k : QuantEntries()) {
    if (!CanRun(k.isa, k.name) || k.in != 0 || k.bits > 8) continue;
    INFO(k.name);
    for (auto [qmin, qmax] : RangesFor(k.bits)) {
      for (int round = 0; round < 40; ++round) {
        const size_t block = round % 4 == 0 ? 4096 : 64;
        const size_t n = 4096;
        RunSetup r;
        r.block = block;
        r.first = 0;
        std::uniform_real_distribution<float> u(-20.0f, 3.0f);
        for (size_t i = 0; i < n / block; ++i) {
          r.scales.push_back(std::exp2(u(rng)) * (1.0f + static_cast<float>(rng() % 1000) / 1000.0f));
          if (round % 2) r.offsets.push_back(-static_cast<int32_t>(qmin + static_cast<int32_t>(rng() % static_cast<uint32_t>(qmax - qmin + 1))));
        }
        std::vector<float> x(n);
        for (size_t i = 0; i < n; ++i) {
          const float s = r.scales[i / block];
          const double half = (static_cast<double>(static_cast<int>(rng() % 40)) - 20.0 + 0.5) * s;
          float v = static_cast<float>(half);
          for (int step = static_cast<int>(rng() % 9) - 4; step != 0; step += step > 0 ? -1 : 1)
            v = std::nextafter(v, step > 0 ? INFINITY : -INFINITY);
          x[i] = v;
        }
        const QuantParams p = ParamsOf(r, qmin, qmax);
        const size_t nbytes = (n * static_cast<size_t>(k.bits) + 7) / 8;
        std::vector<uint8_t> got(nbytes, 0xAB), want(nbytes, 0xAB);
        k.fn(n, x.data(), got.data(), &p);
        ref::Quant(0, k.bits, n, x.data(), want.data(), &p);
        INFO("round " << round << " range=[" << qmin << "," << qmax << "]");
        REQUIRE(got == want);
        ++checked;
      }
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("quantize: half-way values round to even, -0 and NaN give the zero point", "[kernels][quant]") {
  // scale 1, zero point 10 on a u8 grid: 0.5 -> 0 -> 10, 1.5 -> 2 -> 12, 2.5 -> 2 -> 12, -0.5 -> -0 -> 10, -1.5 -> -2 -> 8
  const float x[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, -0.0f, NAN, 300.0f, -300.0f, INFINITY, -INFINITY, 245.4f, 245.5f, 246.5f, -10.5f};
  const uint8_t want[] = {10, 12, 12, 10, 8, 8, 10, 10, 255, 0, 255, 0, 255, 255, 255, 0};
  const float s = 1.0f;
  const int32_t off = -10;
  QuantParams p;
  p.scales = &s;
  p.offsets = &off;
  p.block = size_t{1} << 40;
  p.qmin = 0;
  p.qmax = 255;
  for (const QuantEntry& k : QuantEntries()) {
    if (k.in != 0 || k.bits != 8 || !CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    uint8_t got[16];
    k.fn(16, x, got, &p);
    CHECK(Bytes(got, 16) == Bytes(want, 16));
  }
  // 245.5 + 10 = 255.5 -> clamp 255; 245.4 -> 245 + 10 = 255: both saturate at the top.
}

TEST_CASE("quantize: packed int4/int2 layouts are low bits first", "[kernels][quant][pack]") {
  const float s = 1.0f;
  QuantParams p;
  p.scales = &s;
  p.block = size_t{1} << 40;
  SECTION("s4") {
    const float x[] = {1, -1, 7, -8, 3};
    const uint8_t want[] = {0xF1, 0x87, 0x03};
    p.qmin = -8;
    p.qmax = 7;
    for (const QuantEntry& k : QuantEntries()) {
      if (k.in != 0 || k.bits != 4 || !CanRun(k.isa, k.name)) continue;
      INFO(k.name);
      uint8_t got[3] = {0xAA, 0xAA, 0xAA};
      k.fn(5, x, got, &p);
      CHECK(Bytes(got, 3) == Bytes(want, 3));
    }
  }
  SECTION("u4") {
    const float x[] = {0, 15, 1, 2, 20, -3};
    const uint8_t want[] = {0xF0, 0x21, 0x0F};
    p.qmin = 0;
    p.qmax = 15;
    for (const QuantEntry& k : QuantEntries()) {
      if (k.in != 0 || k.bits != 4 || !CanRun(k.isa, k.name)) continue;
      INFO(k.name);
      uint8_t got[3] = {};
      k.fn(6, x, got, &p);
      CHECK(Bytes(got, 3) == Bytes(want, 3));
    }
  }
  SECTION("s2") {
    const float x[] = {1, -1, -2, 0, 1};
    const uint8_t want[] = {0x2D, 0x01};  // 01 | 11<<2 | 10<<4 | 00<<6, then 01
    p.qmin = -2;
    p.qmax = 1;
    for (const QuantEntry& k : QuantEntries()) {
      if (k.in != 0 || k.bits != 2 || !CanRun(k.isa, k.name)) continue;
      INFO(k.name);
      uint8_t got[2] = {0xFF, 0xFF};
      k.fn(5, x, got, &p);
      CHECK(Bytes(got, 2) == Bytes(want, 2));
    }
  }
}

TEST_CASE("dequantize kernels match the reference bit for bit", "[kernels][dequant]") {
  std::mt19937 rng(11);
  for (const DequantEntry& k : DequantEntries()) {
    if (!CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    const int32_t qmin = k.bits == 32 ? INT32_MIN : (k.is_signed ? -(1 << (k.bits - 1)) : 0);
    const int32_t qmax = k.bits == 32 ? INT32_MAX : (k.is_signed ? (1 << (k.bits - 1)) - 1 : (1 << k.bits) - 1);
    for (size_t n : TestSizes()) {
      for (size_t block : BlockChoices()) {
        if (block > 1 && block < 16 && n > 300) continue;
        const RunSetup r = MakeRuns(rng, n, block, static_cast<ScaleKind>(rng() % 3), rng() % 2 == 0, qmin, qmax);
        const size_t nbytes = (n * static_cast<size_t>(k.bits) + 7) / 8;
        std::vector<uint8_t> q(nbytes);
        for (auto& b : q) b = static_cast<uint8_t>(rng());
        const QuantParams p = ParamsOf(r, 0, 0);
        std::vector<float> got(n + 4, 7.0f), want(n + 4, 7.0f);
        k.fn(n, q.data(), got.data(), &p);
        ref::Dequant(k.bits, k.is_signed, n, q.data(), want.data(), &p);
        INFO("n=" << n << " block=" << block << " first=" << r.first);
        REQUIRE(Bytes(got.data(), 4 * got.size()) == Bytes(want.data(), 4 * want.size()));
      }
    }
  }
}

TEST_CASE("bias kernels match the reference bit for bit", "[kernels][bias]") {
  std::mt19937 rng(13);
  for (const BiasEntry& k : BiasEntries()) {
    if (!CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : TestSizes()) {
      for (bool per_channel : {false, true}) {
        std::vector<float> b(n), ws(std::max<size_t>(n, 1));
        for (auto& v : ws) v = FromBits(0x30000000u + static_cast<uint32_t>(rng() % 0x10000000u));
        for (size_t i = 0; i < n; ++i) {
          switch (rng() % 6) {
            case 0: b[i] = 1e30f; break;  // saturates to INT32_MAX
            case 1: b[i] = -1e30f; break;
            case 2: b[i] = NAN; break;
            default: b[i] = RandNormal(rng, 1.0f);
          }
        }
        BiasParams p;
        p.input_scale = std::uniform_real_distribution<float>(1e-4f, 1.0f)(rng);
        p.weight_scales = ws.data();
        p.per_channel = per_channel;
        std::vector<int32_t> got(n + 1, 5), want(n + 1, 5);
        k.fn(n, b.data(), got.data(), &p);
        ref::BiasQuant(n, b.data(), want.data(), &p);
        INFO("n=" << n << " per_channel=" << per_channel);
        REQUIRE(got == want);
      }
    }
  }
  // Saturation at exactly the int32 ends.
  const float b[] = {3e9f, -3e9f, 2147483520.0f, -2147483648.0f};
  const float one = 1.0f;
  BiasParams p;
  p.weight_scales = &one;
  int32_t y[4];
  ref::BiasQuant(4, b, y, &p);
  CHECK(y[0] == INT32_MAX);
  CHECK(y[1] == INT32_MIN);
  CHECK(y[2] == 2147483520);
  CHECK(y[3] == INT32_MIN);
}

// N(0, 3), or one in `one_in` values a NaN, a signed zero or an infinity
// (one of the three, equally often).
static float NormalOrSpecial(std::mt19937& rng, uint32_t one_in) {
  switch (rng() % one_in) {
    case 0: return NAN;
    case 1: return (rng() & 1) ? 0.0f : -0.0f;
    case 2: return (rng() & 1) ? INFINITY : -INFINITY;
    default: return RandNormal(rng, 3.0f);
  }
}

// Block statistics over many whole runs that start on a run boundary (the
// shape LPBQ and block quantization use): the AVX-512 kernel reduces 16 runs
// at a time in one transposed tree. The outputs start from arbitrary values
// (signed zeros, NaN, infinities), which the update must treat as the
// reference does.
TEST_CASE("min/max over whole runs matches the reference", "[kernels][stats]") {
  std::mt19937 rng(23);
  const float starts[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 1.5f, -2.5f};
  for (const StatsEntry& k : StatsEntries()) {
    if (k.op != "minmax" || !CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t block : {16, 32, 48, 64, 128, 256}) {
      for (size_t first_runs : {0, 1, 3}) {
        for (size_t n : {16 * block, 33 * block + 5, 48 * block - 1}) {
          std::vector<float> x(n);
          for (auto& v : x) v = NormalOrSpecial(rng, 16);
          // Whole runs of NaN, of zeros of both signs, and of one value.
          for (size_t i = 0; i < block && 3 * block + i < n; ++i) {
            x[i] = NAN;
            x[block + i] = (i & 1) ? -0.0f : 0.0f;
            x[2 * block + i] = -0.0f;
          }
          const size_t first = first_runs * block;
          const size_t runs = (first + n) / block + 1;
          std::vector<float> gmin(runs), gmax(runs);
          for (size_t r = 0; r < runs; ++r) {
            gmin[r] = starts[rng() % 7];
            gmax[r] = starts[rng() % 7];
          }
          std::vector<float> wmin = gmin, wmax = gmax;
          reinterpret_cast<MinMaxFn>(k.fn)(n, x.data(), first, block, gmin.data(), gmax.data());
          ref::MinMax(n, x.data(), first, block, wmin.data(), wmax.data());
          INFO("block=" << block << " first=" << first << " n=" << n);
          REQUIRE(Bytes(gmin.data(), 4 * runs) == Bytes(wmin.data(), 4 * runs));
          REQUIRE(Bytes(gmax.data(), 4 * runs) == Bytes(wmax.data(), 4 * runs));
        }
      }
    }
    // One run of 2^60 elements (16 of them would wrap size_t): a single run.
    std::vector<float> x(100);
    for (auto& v : x) v = NormalOrSpecial(rng, 16);
    float gmin = INFINITY, gmax = -INFINITY, wmin = gmin, wmax = gmax;
    reinterpret_cast<MinMaxFn>(k.fn)(x.size(), x.data(), 0, size_t{1} << 60, &gmin, &gmax);
    ref::MinMax(x.size(), x.data(), 0, size_t{1} << 60, &wmin, &wmax);
    CHECK(Bytes(&gmin, 4) == Bytes(&wmin, 4));
    CHECK(Bytes(&gmax, 4) == Bytes(&wmax, 4));
  }
}

TEST_CASE("statistics kernels match the reference", "[kernels][stats]") {
  std::mt19937 rng(17);
  for (const StatsEntry& k : StatsEntries()) {
    if (!CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : TestSizes()) {
      std::vector<float> x(n);
      for (auto& v : x) v = NormalOrSpecial(rng, 10);
      INFO("n=" << n);
      if (k.op == "minmax") {
        for (size_t block : BlockChoices()) {
          const size_t first = block > 1 ? rng() % std::min<size_t>(block, 1000) : 0;
          const size_t runs = (first + n) / block + 1;
          std::vector<float> gmin(runs, INFINITY), gmax(runs, -INFINITY), wmin = gmin, wmax = gmax;
          reinterpret_cast<MinMaxFn>(k.fn)(n, x.data(), first, block, gmin.data(), gmax.data());
          ref::MinMax(n, x.data(), first, block, wmin.data(), wmax.data());
          INFO("block=" << block << " first=" << first);
          REQUIRE(Bytes(gmin.data(), 4 * runs) == Bytes(wmin.data(), 4 * runs));
          REQUIRE(Bytes(gmax.data(), 4 * runs) == Bytes(wmax.data(), 4 * runs));
        }
      } else if (k.op == "vminmax") {
        // tests/kernels/test_vminmax.cpp: rows, gaps and the NaN/Inf check.
      } else if (k.op == "hist") {
        for (uint32_t bins : {1u, 7u, 128u, 2048u, 2049u, 4096u}) {  // split sub-histograms up to 2048
          HistParams hp;
          hp.lo = -4.0f;
          hp.hi = 5.0f;
          hp.bins = bins;
          hp.scale = static_cast<float>(bins) / (hp.hi - hp.lo);
          if (n > 2) {
            x[0] = hp.lo;
            x[1] = hp.hi;
            x[2] = std::nextafter(hp.hi, 0.0f);
          }
          std::vector<uint64_t> got(bins, 3), want(bins, 3);
          reinterpret_cast<HistFn>(k.fn)(n, x.data(), &hp, got.data());
          ref::Hist(n, x.data(), &hp, want.data());
          REQUIRE(got == want);
        }
      } else if (k.op == "qdqerr") {
        std::vector<float> xf = x;
        for (auto& v : xf)
          if (std::isinf(v)) v = 100.0f;
        for (auto [qmin, qmax] : RangesFor(8)) {
          QdqErrParams qp;
          qp.scale = 0.05f;
          qp.offset = qmin < 0 ? 0 : -128;
          qp.qmin = qmin;
          qp.qmax = qmax;
          double got[2] = {1.0, 2.0}, want[2] = {1.0, 2.0};
          reinterpret_cast<QdqErrFn>(k.fn)(n, xf.data(), &qp, got);
          ref::QdqErr(n, xf.data(), &qp, want);
          CHECK(got[0] == Approx(want[0]).epsilon(1e-12));
          CHECK(got[1] == Approx(want[1]).epsilon(1e-12));
        }
      } else if (k.op == "sqerr") {
        std::vector<float> xf = x, yf(n);
        for (auto& v : xf)
          if (!std::isfinite(v)) v = 100.0f;
        for (size_t i = 0; i < n; ++i) yf[i] = xf[i] + RandNormal(rng, 0.01f);
        double got[2] = {1.0, 2.0}, want[2] = {1.0, 2.0};
        reinterpret_cast<SqErrFn>(k.fn)(n, xf.data(), yf.data(), got);
        ref::SqErr(n, xf.data(), yf.data(), want);
        CHECK(got[0] == Approx(want[0]).epsilon(1e-12));
        CHECK(got[1] == Approx(want[1]).epsilon(1e-12));
        if (n > 0) {  // a NaN anywhere, tail included, reaches the error sum
          yf[n - 1] = std::numeric_limits<float>::quiet_NaN();
          double nan_sum[2] = {0, 0};
          reinterpret_cast<SqErrFn>(k.fn)(n, xf.data(), yf.data(), nan_sum);
          CHECK(std::isnan(nan_sum[0]));
          CHECK(std::isfinite(nan_sum[1]));
        }
      } else if (k.op == "nonfinite") {
        REQUIRE(reinterpret_cast<NonFiniteFn>(k.fn)(n, x.data()) == ref::NonFinite(n, x.data()));
      } else {
        FAIL("unknown stats op " << k.op);
      }
    }
  }
}

TEST_CASE("histogram kernels: several flushes of the sub-histograms, with prefetch", "[kernels][stats]") {
  // More than three rounds of the 32-bit sub-histograms (flushed every 64K
  // elements), a tail, values at and past the range ends, NaN and Inf.
  std::mt19937 rng(23);
  const size_t n = 3 * 65536 + 4099;
  std::vector<float> x(n);
  for (auto& v : x) v = NormalOrSpecial(rng, 3);
  for (const StatsEntry& k : StatsEntries()) {
    if (!CanRun(k.isa, k.name) || k.op != "hist") continue;
    for (uint32_t bins : {2u, 2048u, 3000u}) {
      INFO(k.name << " bins " << bins);
      HistParams hp;
      hp.lo = -2.5f;
      hp.hi = 3.0f;
      hp.bins = bins;
      hp.scale = static_cast<float>(bins) / (hp.hi - hp.lo);
      hp.prefetch = 512;
      x[10] = hp.lo;
      x[n - 3] = hp.hi;
      std::vector<uint64_t> got(bins, 5), want(bins, 5);
      reinterpret_cast<HistFn>(k.fn)(n, x.data(), &hp, got.data());
      ref::Hist(n, x.data(), &hp, want.data());
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("fp16 conversion kernels match the reference (all fp16 values, random and special fp32)",
          "[kernels][f16]") {
  std::mt19937 rng(19);
  std::vector<float> f(70000);
  for (auto& v : f) v = FromBits(static_cast<uint32_t>(rng()));
  const float specials[] = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, -65520.0f, 5.9604645e-8f,
                            2.9802322e-8f, 2.9802326e-8f, 8.940697e-8f, 6.097555e-5f, 6.1035156e-5f, INFINITY,
                            -INFINITY, NAN, FromBits(0x7f800001u), FromBits(0xffc00123u), 1.00048828125f,
                            1.00146484375f, 3.0e-45f};
  std::copy(std::begin(specials), std::end(specials), f.begin());
  std::vector<Half> h(65536);
  for (uint32_t i = 0; i < 65536; ++i) h[i].bits = static_cast<uint16_t>(i);
  for (const CvtEntry& k : CvtEntries()) {
    if (!CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{17}, size_t{65536}}) {
      INFO("n=" << n);
      if (k.dir == "f32_f16") {
        const size_t m = n == 65536 ? f.size() : n;
        std::vector<Half> got(m + 1, Half{0x1234}), want(m + 1, Half{0x1234});
        reinterpret_cast<F32ToF16Fn>(k.fn)(m, f.data(), got.data());
        ref::F32ToF16(m, f.data(), want.data());
        REQUIRE(Bytes(got.data(), 2 * got.size()) == Bytes(want.data(), 2 * want.size()));
      } else {
        std::vector<float> got(n + 1, 1.0f), want(n + 1, 1.0f);
        reinterpret_cast<F16ToF32Fn>(k.fn)(n, h.data(), got.data());
        ref::F16ToF32(n, h.data(), want.data());
        REQUIRE(Bytes(got.data(), 4 * got.size()) == Bytes(want.data(), 4 * want.size()));
      }
    }
  }
  // Spot values of the reference itself.
  CHECK(F32ToF16Bits(1.0f) == 0x3c00);
  CHECK(F32ToF16Bits(65520.0f) == 0x7c00);
  CHECK(F32ToF16Bits(65519.99f) == 0x7bff);
  CHECK(F32ToF16Bits(5.9604645e-8f) == 0x0001);
  CHECK(F32ToF16Bits(2.9802322e-8f) == 0x0000);  // exactly half of the smallest subnormal: ties to even (0)
  CHECK(F32ToF16Bits(8.940697e-8f) == 0x0002);   // 1.5 ulp: ties to even (2)
  CHECK(F32ToF16Bits(1.00048828125f) == 0x3c00); // 1 + 2^-11: tie -> even
  CHECK(F32ToF16Bits(1.00146484375f) == 0x3c02); // 1 + 3 * 2^-11: tie -> even (up)
  CHECK(F16BitsToF32(0x0001) == 5.9604645e-8f);
}

TEST_CASE("pack kernels match the reference and hand-computed bytes", "[kernels][pack]") {
  std::mt19937 rng(23);
  for (const PackEntry& k : PackEntries()) {
    if (!CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    const int bits = (k.op == "pack4" || k.op == "unpacks4" || k.op == "unpacku4") ? 4 : 2;
    for (size_t n : TestSizes()) {
      INFO("n=" << n);
      const size_t nbytes = (n * static_cast<size_t>(bits) + 7) / 8;
      if (k.op.rfind("pack", 0) == 0) {
        std::vector<int8_t> q(n);
        for (auto& v : q) v = static_cast<int8_t>(rng());
        std::vector<uint8_t> got(nbytes + 2, 0xCD), want(nbytes + 2, 0xCD);
        reinterpret_cast<PackFn>(k.fn)(n, q.data(), got.data());
        ref::Pack(bits, n, q.data(), want.data());
        REQUIRE(got == want);
      } else {
        const bool is_signed = k.op[6] == 's';
        std::vector<uint8_t> p(nbytes);
        for (auto& v : p) v = static_cast<uint8_t>(rng());
        std::vector<int8_t> got(n + 2, 99), want(n + 2, 99);
        reinterpret_cast<UnpackFn>(k.fn)(n, p.data(), got.data());
        ref::Unpack(bits, is_signed, n, p.data(), want.data());
        REQUIRE(got == want);
      }
    }
  }
  const int8_t q[] = {1, -1, 7, -8, 3};
  uint8_t y[3];
  ref::Pack(4, 5, q, y);
  CHECK(Bytes(y, 3) == std::vector<uint8_t>{0xF1, 0x87, 0x03});
  ref::Pack(2, 5, q, y);  // 01 11 11 00 | 11 -> 0x3D, 0x03
  CHECK(Bytes(y, 2) == std::vector<uint8_t>{0x3D, 0x03});
  int8_t back[5];
  const uint8_t packed[] = {0xF1, 0x87, 0x03};
  ref::Unpack(4, true, 5, packed, back);
  CHECK(std::vector<int8_t>(back, back + 5) == std::vector<int8_t>{1, -1, 7, -8, 3});
}

TEST_CASE("every list entry is a distinct kernel and the lists cover all slots", "[kernels][dispatch]") {
  // Each ISA level has a full table of kernels (no null slot) on this host.
  for (uint32_t l = 0; l < kIsaCount; ++l) {
    const KernelConfig& c = GetKernelConfig(static_cast<Isa>(l));
    for (auto& row : c.quant)
      for (auto fn : row) CHECK(fn != nullptr);
    for (auto fn : c.dequant) CHECK(fn != nullptr);
    for (auto fn : c.unpack) CHECK(fn != nullptr);
    CHECK(c.bias);
    CHECK(c.minmax);
    CHECK(c.vminmax);
    CHECK(c.hist);
    CHECK(c.qdqerr);
    CHECK(c.sqerr);
    CHECK(c.nonfinite);
    CHECK(c.f32_to_f16);
    CHECK(c.f16_to_f32);
    CHECK(c.pack4);
    CHECK(c.pack2);
    CHECK(c.lpbq_scales);
  }
}

TEST_CASE("lpbq-scales kernels equal the reference bit for bit", "[kernels][lpbq]") {
  std::mt19937 rng(43);
  auto bits = [](const std::vector<float>& v) {
    std::vector<uint32_t> u(v.size());
    std::memcpy(u.data(), v.data(), v.size() * 4);
    return u;
  };
  const std::pair<uint32_t, uint32_t> widths[] = {{4, 8}, {4, 16}, {8, 16}, {2, 8}, {3, 8}};
  const float ranges[] = {1e-4f, 0.0f, 1e-2f};
  size_t checked = 0;
  for (int round = 0; round < 400; ++round) {
    const size_t nb = round < 70 ? static_cast<size_t>(round) + 1 : 1 + rng() % 300;
    std::vector<float> bmin(nb), bmax(nb);
    const int style = round % 6;
    for (size_t b = 0; b < nb; ++b) {
      const float mag = std::ldexp(1.0f, static_cast<int>(rng() % 40) - 30);
      bmin[b] = -std::fabs(RandNormal(rng, mag));
      bmax[b] = std::fabs(RandNormal(rng, mag));
      if (style == 1 && rng() % 3 == 0) bmin[b] = bmax[b] = 0.0f;         // zero blocks: min_range widens
      if (style == 2 && rng() % 3 == 0) bmax[b] = bmin[b] + 1e-6f * mag;  // below min_range
      if (style == 3 && rng() % 2 == 0) bmin[b] = -0.0f;                  // negative zero
      if (style == 4) bmin[b] = bmax[b] = (rng() % 2) ? 0.0f : -0.0f;     // all zero (min_range 0: no scale)
      if (style == 5 && rng() % 4 == 0) bmax[b] = -std::fabs(bmax[b]);    // negative maxima
    }
    const auto [bw, dbw] = widths[round % 5];
    LpbqParams p;
    const double steps = std::ldexp(1.0, static_cast<int>(bw)) - 1;
    p.pos = std::floor(steps / 2) + (steps == 3 ? 1 : 0);
    p.neg = steps - std::floor(steps / 2);
    p.min_range = ranges[round % 3];
    p.levels = std::ldexp(1.0f, static_cast<int>(dbw - bw));
    float ref_cs = -1;
    std::vector<int32_t> ref_k(nb);
    std::vector<float> ref_eff(nb);
    ref::LpbqScales(nb, bmin.data(), bmax.data(), &p, &ref_cs, ref_k.data(), ref_eff.data());
    for (const LpbqEntry& e : LpbqEntries()) {
      if (!CanRun(e.isa, e.name)) continue;
      INFO(e.name << ", round " << round << ", " << nb << " blocks");
      float cs = -1;
      std::vector<int32_t> k(nb, -1);
      std::vector<float> eff(nb, -1);
      e.fn(nb, bmin.data(), bmax.data(), &p, &cs, k.data(), eff.data());
      CHECK(bits({cs}) == bits({ref_cs}));
      CHECK(k == ref_k);
      CHECK(bits(eff) == bits(ref_eff));
      ++checked;
    }
  }
  CHECK(checked >= 400);  // the scalar kernel runs everywhere
}

TEST_CASE("lpbq-scales reference: worked example", "[kernels][lpbq]") {
  // Block scales 0.1, 0.5, 1.6 (4-bit: max / 7 vs -min / 8) -> channel scale
  // 1.6 / 16 = 0.1; integer scales round(bs / 0.1) clamped to [1, 16].
  const float bmin[] = {-0.8f, -4.0f, -12.8f, 0.0f};
  const float bmax[] = {0.1f, 0.5f, 1.0f, 0.0f};
  LpbqParams p;  // 4 -> 8 bit, min range 1e-4
  float cs;
  int32_t k[4];
  float eff[4];
  ref::LpbqScales(4, bmin, bmax, &p, &cs, k, eff);
  CHECK(cs == Approx(0.1f));
  CHECK(k[0] == 1);
  CHECK(k[1] == 5);
  CHECK(k[2] == 16);
  CHECK(k[3] == 1);  // a zero block: range 1e-4, scale 1.25e-5, rounds to 0, clamped to 1
  CHECK(eff[2] == Approx(1.6f));
  // A channel of zero blocks without a minimum range has no scale: 0 / 0
  // integer scales are 1 (not an undefined conversion of NaN).
  p.min_range = 0.0f;
  const float zeros[] = {0.0f, -0.0f, 0.0f};
  ref::LpbqScales(3, zeros, zeros, &p, &cs, k, eff);
  CHECK(cs == 0.0f);
  CHECK(k[0] == 1);
  CHECK(k[1] == 1);
  CHECK(k[2] == 1);
}

}  // namespace qairt::kernels::test
