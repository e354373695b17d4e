// f32-quant-cols kernels, scalar level (compiled with: baseline x86-64 / any; see CMakeLists.txt).
// The quantize bodies are impl.h's on the scalar vector traits.
#include "kernels/isa/scalar.h"
//
#include "kernels/f32-quant-cols/impl.h"

namespace qairt::kernels {
#define QAIRT_COLS_DEF_store16(name) \
  void name(size_t n, const uint32_t* dw, size_t ld, uint8_t* y, size_t y_stride, bool) { ref::ColsStore16(n, dw, ld, y, y_stride); }
#define QAIRT_KERNEL QAIRT_COLS_KERNEL_DEF
#include "kernels/f32-quant-cols/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
