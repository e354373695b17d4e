// f32-quant-cols kernels, sse41 level (compiled with: -msse4.1; see CMakeLists.txt).
// The quantize bodies are impl.h's on the sse41 vector traits.
#include "kernels/isa/sse41.h"
//
#include "kernels/f32-quant-cols/impl.h"

namespace qairt::kernels {
#define QAIRT_KERNEL QAIRT_COLS_KERNEL_DEF
#include "kernels/f32-quant-cols/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
