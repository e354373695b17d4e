// Scalar specification of int32 bias quantization.
#include "kernels/common/scalar.h"

namespace qairt::kernels::ref {

void BiasQuant(size_t n, const float* b, int32_t* y, const BiasParams* p) {
  for (size_t i = 0; i < n; ++i) {
    const float s = p->input_scale * p->weight_scales[p->per_channel ? i : 0];
    y[i] = QuantScalar(b[i], s, 0.0f, -2147483648.0f, 2147483648.0f);
  }
}

}  // namespace qairt::kernels::ref
