#include "ir/fused_activation.h"

#include <string_view>

namespace qairt {

bool IsFusedActivationInput(const Graph& g, TensorId t) {
  const Tensor& tensor = g.tensor(t);
  if (!tensor.encoding || tensor.is_output || tensor.producer == kInvalidId || tensor.consumers.size() != 1)
    return false;
  const Use& use = tensor.consumers[0];
  if (use.slot != 0) return false;
  const Op& act = g.op(use.op);
  static constexpr std::string_view kKinds[] = {"HardSwish", "Prelu", "Gelu", "Sigmoid", "Tanh", "Elu"};
  bool kind = false;
  for (std::string_view k : kKinds) kind = kind || act.type == k;
  if (!kind || act.outputs.size() != 1) return false;
  const Tensor& out = g.tensor(act.outputs[0]);
  return out.encoding && *out.encoding == *tensor.encoding;
}

}  // namespace qairt
