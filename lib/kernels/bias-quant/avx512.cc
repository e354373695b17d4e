// bias-quant kernels, avx512 level (compiled with: -mavx512f -mavx512bw -mavx512vl -mavx2 -mfma -mf16c; see CMakeLists.txt).
// The bodies are the generic tiles of common/impl.h on the avx512 vector traits.
#include "kernels/isa/avx512.h"
//
#include "kernels/common/impl.h"
#include "kernels/common/instantiate.h"

namespace qairt::kernels {
#define QAIRT_KERNEL QAIRT_BIAS_KERNEL_DEF
#include "kernels/bias-quant/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
