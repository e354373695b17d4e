// Scalar specification of the dequantize kernels: y = float(int64(q) + offset) * s.
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

void Dequant(int bits, bool is_signed, size_t n, const void* qv, float* y, const QuantParams* p) {
  const uint8_t* q = static_cast<const uint8_t*>(qv);
  for (size_t i = 0; i < n; ++i) {
    int64_t v = 0;
    switch (bits) {
      case 8: v = is_signed ? static_cast<int8_t>(q[i]) : q[i]; break;
      case 16: {
        uint16_t u;
        __builtin_memcpy(&u, q + 2 * i, 2);
        v = is_signed ? static_cast<int16_t>(u) : u;
        break;
      }
      case 32: {
        int32_t s;
        __builtin_memcpy(&s, q + 4 * i, 4);
        v = s;
        break;
      }
      case 4: {
        const int u = (q[i / 2] >> (4 * (i % 2))) & 0xf;
        v = is_signed && u >= 8 ? u - 16 : u;
        break;
      }
      case 2: {
        const int u = (q[i / 4] >> (2 * (i % 4))) & 3;
        v = is_signed && u >= 2 ? u - 4 : u;
        break;
      }
      default: break;
    }
    const size_t r = (p->first + i) / p->block;
    const int64_t off = p->offsets ? p->offsets[r] : 0;
    y[i] = static_cast<float>(v + off) * p->scales[r];
  }
}

}  // namespace qairt::kernels::ref
