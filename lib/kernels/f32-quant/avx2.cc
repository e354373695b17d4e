// f32-quant kernels, avx2 level (compiled with: -mavx2 -mfma -mf16c; see CMakeLists.txt).
// The bodies are the generic tiles of common/impl.h on the avx2 vector traits.
#include "kernels/isa/avx2.h"
//
#include "kernels/common/impl.h"
#include "kernels/common/instantiate.h"

namespace qairt::kernels {
#define QAIRT_KERNEL QAIRT_QUANT_KERNEL_DEF
#include "kernels/f32-quant/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
