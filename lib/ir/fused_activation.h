// Super-group intermediates that a fused kernel never materializes.
//
// Target processing gives the tensor between a Conv2d and its activation in
// a super group the group's output encoding (spec, "Tag Tensors In
// SuperGroups"): that is what the converter writes, and for clamping
// activations (Relu, Relu6, ReluMinMax) quantizing before or after the clamp
// is the same. For a non-monotone or non-clamping activation (HardSwish,
// PReLU, Gelu, Sigmoid, Tanh, Elu) it is not: HardSwish's output range
// starts at -0.375, so rounding its input to that grid would cut every value
// below -0.375 that the fused kernel computes correctly. The executor and
// the Q-DQ export therefore leave such a tensor unquantized.
//
// Either way such a tensor exists on the target only inside the kernel.
#pragma once

#include "ir/graph.h"

namespace qairt {

// `t` is produced by an op, read only by one activation of the kinds above
// (at its data input), is no graph output, and carries exactly that
// activation's output encoding.
bool IsFusedActivationInput(const Graph& g, TensorId t);

// `t` is the inside of a fused clamping activation (Relu, Relu1, Relu6,
// ReluMinMax): as above, for those kinds. The simulation rounds it to the
// activation's grid, clamped (the same output: the activation clamps
// anyway), so it holds neither what the fused kernel computes inside nor a
// tensor the target materializes: per-layer comparisons leave it out and
// measure the activation's output.
bool IsClampedActivationInput(const Graph& g, TensorId t);

}  // namespace qairt
