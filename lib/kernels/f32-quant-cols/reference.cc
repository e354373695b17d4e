// Scalar specification of the column-packed quantize kernels (see
// kernels.h): one value at a time, as the quantize reference.
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

void QuantCols(int bits, size_t n, size_t rows, size_t ld, const float* x, const QuantParams* p, uint32_t* y) {
  const float lo = static_cast<float>(p->qmin);
  const float hi = static_cast<float>(p->qmax);
  const uint32_t mask = (1u << bits) - 1u;
  for (size_t i = 0; i < n; ++i) {
    uint32_t packed = 0;
    for (size_t j = 0; j < rows; ++j) {
      const int32_t q = QuantScalar(x[j * ld + i], p->scales[i], 0.0f, lo, hi);
      packed |= (static_cast<uint32_t>(q) & mask) << (static_cast<unsigned>(bits) * j);
    }
    y[i] = packed;
  }
}

}  // namespace qairt::kernels::ref

namespace qairt::kernels::ref {

void ColsStore16(size_t n, const uint32_t* dw, size_t ld, uint8_t* y, size_t y_stride) {
  for (size_t i = 0; i < n; ++i)
    for (size_t g = 0; g < 16; ++g) __builtin_memcpy(y + i * y_stride + 4 * g, dw + g * ld + i, 4);
}

}  // namespace qairt::kernels::ref
