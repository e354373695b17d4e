// f32-quant-cols kernels, avx2 level (compiled with: -mavx2 -mfma -mf16c; see CMakeLists.txt).
// The quantize bodies are impl.h's on the avx2 vector traits.
#include "kernels/isa/avx2.h"
//
#include "kernels/f32-quant-cols/impl.h"

namespace qairt::kernels {
#define QAIRT_KERNEL QAIRT_COLS_KERNEL_DEF
#include "kernels/f32-quant-cols/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
