// The column-packed quantize family (f32-quant-cols) against its reference,
// bit for bit, and QuantizeTransposed's column-packed path at every ISA
// level: whole 64-byte tiles streamed into aligned rows, short tiles,
// chunks of columns, blocks changing inside a tile.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <string>

#include "kernel_test_util.h"
#include "kernels/ops.h"

namespace qairt::kernels::test {
namespace {

struct ColsEntry {
  Isa isa;
  const char* name;
  void* fn;
  std::string op;  // q2 q4 q8 q16 store16
};
const std::vector<ColsEntry>& ColsEntries() {
  static const std::vector<ColsEntry> v = {
#define QAIRT_KERNEL(isa, name, op) {QAIRT_TEST_ISA_##isa, #name, reinterpret_cast<void*>(&name), #op},
#include "kernels/f32-quant-cols/kernels.inc"
#undef QAIRT_KERNEL
  };
  return v;
}

// A 64-byte aligned buffer of n bytes filled with `fill`.
struct Aligned {
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> p;
  explicit Aligned(size_t n, uint8_t fill)
      : p(new (std::align_val_t{64}) uint8_t[n > 0 ? n : 1],
          [](uint8_t* b) { ::operator delete[](b, std::align_val_t{64}); }) {
    std::memset(p.get(), fill, n);
  }
  uint8_t* get() const { return p.get(); }
};

TEST_CASE("column-packed quantize kernels match the reference bit for bit", "[kernels][cols]") {
  std::mt19937 rng(59);
  size_t checked = 0;
  for (const ColsEntry& k : ColsEntries()) {
    if (k.op == "store16" || !CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    const int bits = std::stoi(k.op.substr(1));
    const size_t per = 32 / static_cast<size_t>(bits);
    for (size_t n : TestSizes()) {
      for (size_t rows : {size_t{1}, per / 2 + 1, per}) {
        const size_t ld = n + rng() % 7;
        std::vector<float> x(rows * ld + 1);
        for (auto& v : x) v = RandNormal(rng, 4.0f);
        // Specials on the grid's edges and the ties.
        if (!x.empty()) x[0] = std::numeric_limits<float>::quiet_NaN();
        if (x.size() > 2) x[2] = std::numeric_limits<float>::infinity();
        if (x.size() > 3) x[3] = -0.0f;
        std::vector<float> scales(n);
        for (auto& s : scales) s = std::uniform_real_distribution<float>(0.05f, 2.0f)(rng);
        if (n > 1) x[1] = 2.5f * scales[1];  // a half-way value: even
        QuantParams p;
        p.scales = scales.data();
        const bool is_signed = rng() % 2;
        p.qmin = is_signed ? -(1 << (bits - 1)) : 0;
        p.qmax = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
        p.prefetch = rng() % 2 ? ld : 0;
        std::vector<uint32_t> got(n + 2, 0xCDCDCDCD), want(n + 2, 0xCDCDCDCD);
        reinterpret_cast<QuantColsFn>(k.fn)(n, rows, ld, x.data(), &p, got.data());
        ref::QuantCols(bits, n, rows, ld, x.data(), &p, want.data());
        INFO("n=" << n << " rows=" << rows);
        REQUIRE(got == want);
        ++checked;
      }
    }
  }
  CHECK(checked > 0);
  // The layout, by hand: int4, two rows, one column: 3 and -2 -> 0xE3.
  const float x[] = {3.0f, -2.0f};
  const float s = 1.0f;
  QuantParams p;
  p.scales = &s;
  p.qmin = -8;
  p.qmax = 7;
  uint32_t y = 0;
  ref::QuantCols(4, 1, 2, 1, x, &p, &y);
  CHECK(y == 0xE3u);
}

TEST_CASE("cols-store16 kernels write the transpose, streamed or not", "[kernels][cols]") {
  std::mt19937 rng(61);
  size_t checked = 0;
  for (const ColsEntry& k : ColsEntries()) {
    if (k.op != "store16" || !CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : TestSizes()) {
      for (const size_t stride : {size_t{64}, size_t{96}, size_t{2048}}) {
        const size_t ld = n + rng() % 5;
        std::vector<uint32_t> dw(16 * ld + 1);
        for (auto& v : dw) v = static_cast<uint32_t>(rng());
        for (const size_t at : {size_t{0}, size_t{8}}) {  // aligned rows or not
          const size_t bytes = n * stride + at + 64;
          Aligned got(bytes, 0xA5), want(bytes, 0xA5);
          for (const bool stream : {false, true}) {
            reinterpret_cast<ColsStoreFn>(k.fn)(n, dw.data(), ld, got.get() + at, stride, stream);
            StoreFence();
            ref::ColsStore16(n, dw.data(), ld, want.get() + at, stride);
            INFO("n=" << n << " stride=" << stride << " at=" << at << " stream=" << stream);
            REQUIRE(Bytes(got.get(), bytes) == Bytes(want.get(), bytes));
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("QuantizeTransposed's column-packed path at every ISA level", "[kernels][cols][transpose]") {
  // A [rows, cols] window of a source matrix quantized as its transpose
  // [cols, rows] (zero offsets: the column-packed path), into y rows of
  // y_ld elements at a 64-byte aligned offset: whole tiles stream their
  // lines. Compared with the reference quantizing the transposed floats.
  std::mt19937 rng(67);
  for (uint32_t level = 0; level < kIsaCount; ++level) {
    if (!HostSupports(static_cast<Isa>(level))) continue;
    ExecOptions o;
    o.config = &GetKernelConfig(static_cast<Isa>(level));
    for (int iter = 0; iter < 40; ++iter) {
      const int bits = std::vector<int>{2, 4, 8, 16}[static_cast<size_t>(iter) % 4];
      const size_t tile = 16 * 32 / static_cast<size_t>(bits);  // rows filling a line of each y row
      const size_t row_block = std::vector<size_t>{16, 32, 64, SIZE_MAX}[rng() % 4];
      const size_t unit = row_block == SIZE_MAX ? 16 : row_block;
      // One or two whole tiles, sometimes with a shorter one after them.
      size_t rows = tile * (1 + rng() % 2) + (rng() % 2) * unit;
      rows = (rows + unit - 1) / unit * unit;  // whole blocks
      const size_t cols = 1 + rng() % 300;  // across the 256-column chunks
      const size_t ld = cols + rng() % 3;
      // y rows a multiple of 64 bytes (streamed) or not.
      const size_t y_ld = rows + tile * (rng() % 2) + (rng() % 3 == 0 ? 16 : 0);
      const size_t row_bytes = y_ld * static_cast<size_t>(bits) / 8;
      const size_t cells = row_block == SIZE_MAX ? 1 : rows / row_block;
      std::vector<float> x(rows * ld);
      for (auto& v : x) v = RandNormal(rng, 3.0f);
      std::vector<float> scales(cells * cols);  // [cells][cols]: the window's layout
      for (auto& s : scales) s = std::uniform_real_distribution<float>(0.05f, 1.5f)(rng);
      QuantArgs a;
      a.scales = scales.data();
      a.qmin = -(1 << (bits - 1));
      a.qmax = (1 << (bits - 1)) - 1;
      Aligned y(cols * row_bytes, 0x5A);
      size_t nonfinite = 9;
      QuantizeTransposed(x.data(), rows, cols, ld, a, cols, row_block, bits == 2   ? QStorage::kQ2
                                                                       : bits == 4 ? QStorage::kQ4
                                                                       : bits == 8 ? QStorage::kQ8
                                                                                   : QStorage::kQ16,
                         y.get(), y_ld, o, &nonfinite);
      INFO("level " << level << " iter " << iter << " bits " << bits << " rows " << rows << " cols " << cols
                    << " y_ld " << y_ld << " row_block " << row_block);
      CHECK(nonfinite == 0);
      for (size_t c = 0; c < cols; ++c) {
        std::vector<float> t(rows), s(rows);
        for (size_t r = 0; r < rows; ++r) {
          t[r] = x[r * ld + c];
          s[r] = scales[(row_block == SIZE_MAX ? 0 : r / row_block) * cols + c];
        }
        QuantParams p;
        p.scales = s.data();
        p.qmin = a.qmin;
        p.qmax = a.qmax;
        std::vector<uint8_t> want(rows * static_cast<size_t>(bits) / 8);
        ref::Quant(0, bits, rows, t.data(), want.data(), &p);
        const uint8_t* got = y.get() + c * row_bytes;
        REQUIRE(Bytes(got, want.size()) == want);
        for (size_t b = want.size(); b < row_bytes; ++b) REQUIRE(got[b] == 0x5A);  // the rest untouched
      }
    }
  }
}

TEST_CASE("every ISA level has the column-packed kernels", "[kernels][cols][dispatch]") {
  for (uint32_t l = 0; l < kIsaCount; ++l) {
    const KernelConfig& c = GetKernelConfig(static_cast<Isa>(l));
    for (int bits : {2, 4, 8, 16}) CHECK(c.QuantCols(bits) != nullptr);
    CHECK(c.QuantCols(32) == nullptr);
    CHECK(c.cols_store16 != nullptr);
  }
}

}  // namespace
}  // namespace qairt::kernels::test
