// Scalar specification of sub-byte packing: element i lives in bits
// [bits * (i % per_byte), +bits) of byte i / per_byte (low bits first).
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

void Pack(int bits, size_t n, const int8_t* q, uint8_t* y) {
  const size_t per = 8 / static_cast<size_t>(bits);
  const unsigned mask = (1u << bits) - 1u;
  for (size_t k = 0; k < (n + per - 1) / per; ++k) y[k] = 0;
  for (size_t i = 0; i < n; ++i)
    y[i / per] = static_cast<uint8_t>(y[i / per] | ((static_cast<unsigned>(q[i]) & mask) << (bits * (i % per))));
}

void Unpack(int bits, bool is_signed, size_t n, const uint8_t* p, int8_t* q) {
  const size_t per = 8 / static_cast<size_t>(bits);
  const int mask = (1 << bits) - 1;
  for (size_t i = 0; i < n; ++i) {
    const int u = (p[i / per] >> (bits * (i % per))) & mask;
    q[i] = static_cast<int8_t>(is_signed && u >= (1 << (bits - 1)) ? u - (1 << bits) : u);
  }
}

}  // namespace qairt::kernels::ref
