// f32-quant-cols kernels, avx2 level (compiled with: -mavx2 -mfma -mf16c; see CMakeLists.txt).
// The quantize bodies are impl.h's on the avx2 vector traits.
#include "kernels/isa/avx2.h"
//
#include "kernels/f32-quant-cols/impl.h"

namespace qairt::kernels {
#define QAIRT_COLS_DEF_q2(name) QAIRT_COLS_QUANT_DEF(name, 2)
#define QAIRT_COLS_DEF_q4(name) QAIRT_COLS_QUANT_DEF(name, 4)
#define QAIRT_COLS_DEF_q8(name) QAIRT_COLS_QUANT_DEF(name, 8)
#define QAIRT_COLS_DEF_q16(name) QAIRT_COLS_QUANT_DEF(name, 16)
#define QAIRT_KERNEL(isa, name, op) QAIRT_IF_##isa(QAIRT_COLS_DEF_##op(name))
#include "kernels/f32-quant-cols/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
