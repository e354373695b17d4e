// Dispatch: one table of kernel pointers per ISA level, filled from the kernel
// lists by the best -> worst ladder (each slot gets the fastest kernel the
// host can run at or below the level). Built once, then read-only.
#pragma once

#include "kernels/hardware.h"
#include "kernels/kernels.h"

namespace qairt::kernels {

enum class InType : uint32_t { kF32 = 0, kF16 = 1, kBF16 = 2 };
// Quantize output storage (signedness is in qmin/qmax).
enum class QStorage : uint32_t { kQ8 = 0, kQ16 = 1, kQ32 = 2, kQ4 = 3, kQ2 = 4 };
// Dequantize input kinds.
enum class QKind : uint32_t { kU8 = 0, kS8, kU16, kS16, kS32, kU4, kS4, kU2, kS2 };

inline constexpr int StorageBits(QStorage s) {
  constexpr int kBits[] = {8, 16, 32, 4, 2};
  return kBits[static_cast<uint32_t>(s)];
}
inline constexpr int KindBits(QKind k) {
  constexpr int kBits[] = {8, 8, 16, 16, 32, 4, 4, 2, 2};
  return kBits[static_cast<uint32_t>(k)];
}
inline constexpr bool KindSigned(QKind k) {
  constexpr bool kSigned[] = {false, true, false, true, true, false, true, false, true};
  return kSigned[static_cast<uint32_t>(k)];
}

struct KernelConfig {
  Isa level = Isa::kScalar;
  QuantFn quant[3][5] = {};  // [InType][QStorage]
  DequantFn dequant[9] = {};  // [QKind]
  BiasQuantFn bias = nullptr;
  MinMaxFn minmax = nullptr;
  VMinMaxFn vminmax = nullptr;
  HistFn hist = nullptr;
  QdqErrFn qdqerr = nullptr;
  SqErrFn sqerr = nullptr;
  NonFiniteFn nonfinite = nullptr;
  F32ToF16Fn f32_to_f16 = nullptr;
  F16ToF32Fn f16_to_f32 = nullptr;
  PackFn pack4 = nullptr;
  PackFn pack2 = nullptr;
  UnpackFn unpack[4] = {};  // s4, u4, s2, u2
  LpbqScalesFn lpbq_scales = nullptr;
  QuantColsFn quant_cols[4] = {};  // 2, 4, 8, 16 bits
  ColsStoreFn cols_store16 = nullptr;
  // The ISA of the kernel chosen for quant[kF32][kQ8] (for logs and tests).
  Isa quant_isa = Isa::kScalar;

  QuantFn Quant(InType in, QStorage s) const { return quant[static_cast<uint32_t>(in)][static_cast<uint32_t>(s)]; }
  DequantFn Dequant(QKind k) const { return dequant[static_cast<uint32_t>(k)]; }
  // The column-packed quantize kernel for 2, 4, 8 or 16 bits, else null.
  QuantColsFn QuantCols(int bits) const {
    switch (bits) {
      case 2: return quant_cols[0];
      case 4: return quant_cols[1];
      case 8: return quant_cols[2];
      case 16: return quant_cols[3];
      default: return nullptr;
    }
  }
};

// Kernels for ActiveIsa().
const KernelConfig& GetKernelConfig();
// Kernels for a given level (lowered to what the host supports).
const KernelConfig& GetKernelConfig(Isa level);

}  // namespace qairt::kernels
