// Scalar specification of the statistics kernels.
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

void MinMax(size_t n, const float* x, size_t first, size_t block, float* mins, float* maxs) {
  for (size_t i = 0; i < n; ++i) {
    const size_t r = (first + i) / block;
    mins[r] = MinPs(x[i], mins[r]);  // NaN x leaves the running value
    maxs[r] = MaxPs(x[i], maxs[r]);
  }
  if (n == 0) return;
  for (size_t r = first / block; r <= (first + n - 1) / block; ++r) {
    mins[r] = CanonicalZero(mins[r]);
    maxs[r] = CanonicalZero(maxs[r]);
  }
}

size_t VMinMax(size_t n, size_t rows, size_t ld, const float* x, float* mins, float* maxs) {
  size_t nonfinite = 0;
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < n; ++i) {
      mins[i] = MinPs(x[r * ld + i], mins[i]);
      maxs[i] = MaxPs(x[r * ld + i], maxs[i]);
      if ((BitsOf(x[r * ld + i]) & 0x7f800000u) == 0x7f800000u) nonfinite = 1;
    }
  return nonfinite;
}

void Hist(size_t n, const float* x, const HistParams* p, uint64_t* counts) {
  const int32_t maxbin = static_cast<int32_t>(p->bins) - 1;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (!(v >= p->lo && v <= p->hi)) continue;
    const float t = (v - p->lo) * p->scale;
    const int32_t b = static_cast<int32_t>(t);
    ++counts[b < maxbin ? b : maxbin];
  }
}

void QdqErr(size_t n, const float* x, const QdqErrParams* p, double* acc) {
  const float zp = 0.0f - static_cast<float>(p->offset);
  for (size_t i = 0; i < n; ++i) {
    const float xv = NanToZero(x[i]);
    const int32_t q = QuantScalar(xv, p->scale, zp, static_cast<float>(p->qmin), static_cast<float>(p->qmax));
    const float dq = static_cast<float>(int64_t{q} + p->offset) * p->scale;
    const double e = static_cast<double>(xv - dq);
    acc[0] += e * e;
    acc[1] += static_cast<double>(xv) * xv;
  }
}

void SqErr(size_t n, const float* x, const float* y, double* acc) {
  for (size_t i = 0; i < n; ++i) {
    const double e = static_cast<double>(x[i] - y[i]);
    acc[0] += e * e;
    acc[1] += static_cast<double>(x[i]) * x[i];
  }
}

size_t NonFinite(size_t n, const float* x) {
  size_t c = 0;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    c += !(v - v == 0.0f);  // inf - inf and NaN - NaN are NaN
  }
  return c;
}

}  // namespace qairt::kernels::ref
