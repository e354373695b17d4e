// The column-packed quantize kernels, written once against the vector traits
// `V` of the including file's ISA (kernels/isa/<isa>.h, included first).
// Each lane is a column: its rows' values are quantized as the quantize
// kernels do (common/impl.h's QuantVec, zero offsets) and packed into the
// lane's dword, so that a transposed tensor's row comes out as whole bytes
// without an int8 tile, a packing pass and a byte transpose in between.
#ifndef QAIRT_ISA_NS
#error "include kernels/isa/<isa>.h first"
#endif

#include "kernels/common/impl.h"

namespace qairt::kernels::QAIRT_ISA_NS {

template <int kBits>
static inline void QuantCols(size_t n, size_t rows, size_t ld, const float* x, const QuantParams* p, uint32_t* y) {
  static_assert(kBits == 2 || kBits == 4 || kBits == 8 || kBits == 16);
  constexpr int32_t kMask = (1 << kBits) - 1;
  const F lo = V::Set1(static_cast<float>(p->qmin));
  const F hi = V::Set1(static_cast<float>(p->qmax));
  const F zero = V::Set1(0.0f);
  const float* sc = p->scales;
  const size_t ahead = p->prefetch;
  size_t i = 0;
  for (; i + kW <= n; i += kW) {
    const F s = V::Load(sc + i);
    I acc = V::Set1I(0);
    for (size_t j = 0; j < rows; ++j) {
      const float* xr = x + j * ld;
      if (ahead != 0) PrefetchAhead(xr, i, ahead);
      acc = V::OrField(acc, QuantVec<kBits, false>(V::Load(xr + i), s, zero, lo, hi), kMask,
                       static_cast<int>(kBits * j));
    }
    V::StoreI32(reinterpret_cast<int32_t*>(y + i), acc);
  }
  if (i < n) {
    // The last columns through full vectors of staged lanes (scale 1 past
    // the end: finite, > 0, and its lanes are dropped).
    const size_t cnt = n - i;
    alignas(64) float sb[kW];
    alignas(64) float xb[kW];
    alignas(64) int32_t yb[kW];
    for (size_t l = 0; l < kW; ++l) sb[l] = l < cnt ? sc[i + l] : 1.0f;
    const F s = V::Load(sb);
    I acc = V::Set1I(0);
    for (size_t j = 0; j < rows; ++j) {
      for (size_t l = 0; l < kW; ++l) xb[l] = l < cnt ? x[j * ld + i + l] : 0.0f;
      acc = V::OrField(acc, QuantVec<kBits, false>(V::Load(xb), s, zero, lo, hi), kMask, static_cast<int>(kBits * j));
    }
    V::StoreI32(yb, acc);
    __builtin_memcpy(y + i, yb, cnt * sizeof(uint32_t));
  }
}

}  // namespace qairt::kernels::QAIRT_ISA_NS

// The definitions of one ISA's kernels from the list (the <isa>.cc files;
// a file with a store16 kernel defines QAIRT_COLS_DEF_store16 first: as
// QAIRT_COLS_STORE16_DEF when its Store16 is in the file).
#define QAIRT_COLS_STORE16_DEF(name)                                                            \
  void name(size_t n, const uint32_t* dw, size_t ld, uint8_t* y, size_t y_stride, bool stream) { \
    Store16(n, dw, ld, y, y_stride, stream);                                                     \
  }
#define QAIRT_COLS_QUANT_DEF(name, bits)                                                        \
  void name(size_t n, size_t rows, size_t ld, const float* x, const QuantParams* p, uint32_t* y) { \
    QAIRT_ISA_NS::QuantCols<bits>(n, rows, ld, x, p, y);                                        \
  }
#define QAIRT_COLS_DEF_q2(name) QAIRT_COLS_QUANT_DEF(name, 2)
#define QAIRT_COLS_DEF_q4(name) QAIRT_COLS_QUANT_DEF(name, 4)
#define QAIRT_COLS_DEF_q8(name) QAIRT_COLS_QUANT_DEF(name, 8)
#define QAIRT_COLS_DEF_q16(name) QAIRT_COLS_QUANT_DEF(name, 16)
#define QAIRT_COLS_KERNEL_DEF(isa, name, op) QAIRT_IF_##isa(QAIRT_COLS_DEF_##op(name))
