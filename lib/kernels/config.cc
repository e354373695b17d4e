#include "kernels/config.h"

#include <array>

namespace qairt::kernels {

namespace {

#define QAIRT_ISA_scalar Isa::kScalar
#define QAIRT_ISA_sse41 Isa::kSse41
#define QAIRT_ISA_avx2 Isa::kAvx2
#define QAIRT_ISA_avx512 Isa::kAvx512

// Lists are ordered scalar -> avx512, so later admissible entries win.
bool Admit(Isa entry, Isa level) { return entry <= level && HostSupports(entry); }

KernelConfig Build(Isa level) {
  KernelConfig c;
  c.level = level;
  constexpr uint32_t kIn_f32 = 0, kIn_f16 = 1, kIn_bf16 = 2;
  constexpr uint32_t kOut_q8 = 0, kOut_q16 = 1, kOut_q32 = 2, kOut_q4 = 3, kOut_q2 = 4;
  (void)kIn_f32, (void)kIn_f16, (void)kIn_bf16, (void)kOut_q8, (void)kOut_q16, (void)kOut_q32, (void)kOut_q4,
      (void)kOut_q2;
#define QAIRT_KERNEL(isa, name, in, out)                  \
  if (Admit(QAIRT_ISA_##isa, level)) {                    \
    c.quant[kIn_##in][kOut_##out] = name;                 \
    if (kIn_##in == 0 && kOut_##out == 0) c.quant_isa = QAIRT_ISA_##isa; \
  }
#include "kernels/f32-quant/kernels.inc"
#undef QAIRT_KERNEL
  constexpr uint32_t kK_qu8 = 0, kK_qs8 = 1, kK_qu16 = 2, kK_qs16 = 3, kK_qs32 = 4, kK_qu4 = 5, kK_qs4 = 6,
                     kK_qu2 = 7, kK_qs2 = 8;
  (void)kK_qu8, (void)kK_qs8, (void)kK_qu16, (void)kK_qs16, (void)kK_qs32, (void)kK_qu4, (void)kK_qs4, (void)kK_qu2,
      (void)kK_qs2;
#define QAIRT_KERNEL(isa, name, kind) \
  if (Admit(QAIRT_ISA_##isa, level)) c.dequant[kK_##kind] = name;
#include "kernels/f32-dequant/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name) \
  if (Admit(QAIRT_ISA_##isa, level)) c.bias = name;
#include "kernels/bias-quant/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name, op) \
  if (Admit(QAIRT_ISA_##isa, level)) c.op = name;
#include "kernels/stats/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name, dir) \
  if (Admit(QAIRT_ISA_##isa, level)) c.dir = name;
#define f32_f16 f32_to_f16
#define f16_f32 f16_to_f32
#include "kernels/f16-convert/kernels.inc"
#undef f32_f16
#undef f16_f32
#undef QAIRT_KERNEL
#define QAIRT_PACK_SLOT_pack4 pack4
#define QAIRT_PACK_SLOT_pack2 pack2
#define QAIRT_PACK_SLOT_unpacks4 unpack[0]
#define QAIRT_PACK_SLOT_unpacku4 unpack[1]
#define QAIRT_PACK_SLOT_unpacks2 unpack[2]
#define QAIRT_PACK_SLOT_unpacku2 unpack[3]
#define QAIRT_KERNEL(isa, name, op) \
  if (Admit(QAIRT_ISA_##isa, level)) c.QAIRT_PACK_SLOT_##op = name;
#include "kernels/pack/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_KERNEL(isa, name) \
  if (Admit(QAIRT_ISA_##isa, level)) c.lpbq_scales = name;
#include "kernels/lpbq-scales/kernels.inc"
#undef QAIRT_KERNEL
#define QAIRT_COLS_SLOT_q2 quant_cols[0]
#define QAIRT_COLS_SLOT_q4 quant_cols[1]
#define QAIRT_COLS_SLOT_q8 quant_cols[2]
#define QAIRT_COLS_SLOT_q16 quant_cols[3]
#define QAIRT_COLS_SLOT_store16 cols_store16
#define QAIRT_KERNEL(isa, name, op) \
  if (Admit(QAIRT_ISA_##isa, level)) c.QAIRT_COLS_SLOT_##op = name;
#include "kernels/f32-quant-cols/kernels.inc"
#undef QAIRT_KERNEL
  return c;
}

const std::array<KernelConfig, kIsaCount>& Tables() {
  static const std::array<KernelConfig, kIsaCount> t = {Build(Isa::kScalar), Build(Isa::kSse41), Build(Isa::kAvx2),
                                                        Build(Isa::kAvx512)};
  return t;
}

}  // namespace

const KernelConfig& GetKernelConfig(Isa level) {
  // Lower to the host's best so `level` reports what actually runs.
  Isa l = level;
  while (l != Isa::kScalar && !HostSupports(l)) l = static_cast<Isa>(static_cast<uint32_t>(l) - 1);
  return Tables()[static_cast<uint32_t>(l)];
}

const KernelConfig& GetKernelConfig() { return GetKernelConfig(ActiveIsa()); }

}  // namespace qairt::kernels
