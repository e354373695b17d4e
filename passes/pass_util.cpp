#include "passes/passes.h"

namespace qairt::pass {

namespace {

bool IsConvolutionLike(std::string_view type) {
  return type == "Conv2d" || type == "Conv3d" || type == "Conv1d" || type == "DepthWiseConv2d" ||
         type == "TransposeConv2d" || type == "TransposeConv3d" || type == "FullyConnected";
}

std::optional<target::SlotRole> DescribedRole(const target::Target& t, const Op& op, size_t slot) {
  const target::OpKernels* ok = t.FindOp(op.type);
  if (!ok) return std::nullopt;
  for (const target::Kernel& k : ok->kernels)
    if (const target::Slot* s = k.input(slot)) return s->role;
  return std::nullopt;
}

}  // namespace

bool IsBiasSlot(const target::Target& t, const Op& op, size_t slot) {
  if (auto r = DescribedRole(t, op, slot)) return *r == target::SlotRole::kBias;
  return slot == 2 && IsConvolutionLike(op.type);
}

bool IsWeightSlot(const target::Target& t, const Op& op, size_t slot) {
  if (auto r = DescribedRole(t, op, slot)) return *r == target::SlotRole::kWeight;
  return slot == 1 && IsConvolutionLike(op.type);
}

bool IsConvertOp(const Op& op) {
  return op.type == "Convert" || op.type == "Cast" || op.type == "Quantize" || op.type == "Dequantize";
}

}  // namespace qairt::pass
