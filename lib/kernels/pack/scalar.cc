// pack kernels, scalar level (compiled with: baseline x86-64 / any; see CMakeLists.txt).
// The bodies are the generic tiles of common/impl.h on the scalar vector traits.
#include "kernels/isa/scalar.h"
//
#include "kernels/common/impl.h"
#include "kernels/common/instantiate.h"

namespace qairt::kernels {
#define QAIRT_KERNEL QAIRT_PACK_KERNEL_DEF
#include "kernels/pack/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
