// Scalar specification of fp32 <-> fp16 conversion (IEEE, ties to even).
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

void F32ToF16(size_t n, const float* x, Half* y) {
  for (size_t i = 0; i < n; ++i) y[i].bits = F32ToF16Bits(x[i]);
}

void F16ToF32(size_t n, const Half* x, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = F16BitsToF32(x[i].bits);
}

}  // namespace qairt::kernels::ref
