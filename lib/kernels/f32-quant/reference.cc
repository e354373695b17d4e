// Scalar specification of the quantize kernels (see kernels.h). Used by the
// tests, never dispatched: written for clarity, one element at a time.
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

namespace {
float LoadIn(int in, const void* x, size_t i) {
  switch (in) {
    case 0: return static_cast<const float*>(x)[i];
    case 1: return F16BitsToF32(static_cast<const Half*>(x)[i].bits);
    default: return BF16BitsToF32(static_cast<const BFloat16*>(x)[i].bits);
  }
}
}  // namespace

void Quant(int in, int bits, size_t n, const void* x, void* y, const QuantParams* p) {
  uint8_t* out = static_cast<uint8_t*>(y);
  if (bits < 8) {
    const size_t nbytes = (n * static_cast<size_t>(bits) + 7) / 8;
    for (size_t k = 0; k < nbytes; ++k) out[k] = 0;
  }
  const float lo = static_cast<float>(p->qmin);
  const float hi = static_cast<float>(p->qmax);
  for (size_t i = 0; i < n; ++i) {
    const size_t r = (p->first + i) / p->block;
    const float s = p->scales[r];
    const float zp = 0.0f - static_cast<float>(p->offsets ? p->offsets[r] : 0);
    const int32_t q = QuantScalar(LoadIn(in, x, i), s, zp, lo, hi);
    switch (bits) {
      case 8: out[i] = static_cast<uint8_t>(q); break;
      case 16: {
        const uint16_t u = static_cast<uint16_t>(q);
        __builtin_memcpy(out + 2 * i, &u, 2);
        break;
      }
      case 32: __builtin_memcpy(out + 4 * i, &q, 4); break;
      case 4: out[i / 2] = static_cast<uint8_t>(out[i / 2] | ((q & 0xf) << (4 * (i % 2)))); break;
      case 2: out[i / 4] = static_cast<uint8_t>(out[i / 4] | ((q & 3) << (2 * (i % 4)))); break;
      default: break;
    }
  }
}

}  // namespace qairt::kernels::ref
