#include "ir/fused_activation.h"

#include <string_view>

namespace qairt {

namespace {

// `t` is produced by an op, read only by one op of `kinds` (at its data
// input), is no graph output, and carries exactly that op's output encoding.
template <size_t N>
bool FeedsActivationWithItsEncoding(const Graph& g, TensorId t, const std::string_view (&kinds)[N]) {
  const Tensor& tensor = g.tensor(t);
  if (!tensor.encoding || tensor.is_output || tensor.producer == kInvalidId || tensor.consumers.size() != 1)
    return false;
  const Use& use = tensor.consumers[0];
  if (use.slot != 0) return false;
  const Op& act = g.op(use.op);
  bool kind = false;
  for (std::string_view k : kinds) kind = kind || act.type == k;
  if (!kind || act.outputs.size() != 1) return false;
  const Tensor& out = g.tensor(act.outputs[0]);
  return out.encoding && *out.encoding == *tensor.encoding;
}

constexpr std::string_view kUnclamped[] = {"HardSwish", "Prelu", "Gelu", "Sigmoid", "Tanh", "Elu"};
constexpr std::string_view kClamping[] = {"Relu", "Relu1", "Relu6", "ReluMinMax"};

}  // namespace

bool IsFusedActivationInput(const Graph& g, TensorId t) { return FeedsActivationWithItsEncoding(g, t, kUnclamped); }

bool IsClampedActivationInput(const Graph& g, TensorId t) { return FeedsActivationWithItsEncoding(g, t, kClamping); }

}  // namespace qairt
