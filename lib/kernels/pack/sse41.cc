// pack kernels, sse41 level (compiled with: -msse4.1; see CMakeLists.txt).
// The bodies are the generic tiles of common/impl.h on the sse41 vector traits.
#include "kernels/isa/sse41.h"
//
#include "kernels/common/impl.h"
#include "kernels/common/instantiate.h"

namespace qairt::kernels {
#define QAIRT_KERNEL QAIRT_PACK_KERNEL_DEF
#include "kernels/pack/kernels.inc"
#undef QAIRT_KERNEL
}  // namespace qairt::kernels
