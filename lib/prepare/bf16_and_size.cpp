// bf16 tensors, values and Casts (AI 100 has none), and the model size that
// decides whether the written model keeps its weights in external data.
#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

void Preparer::Bf16AndSize() {
  auto& g = *model_.proto.mutable_graph();
  ForEachTensor(&g, [&](const TensorSite& s) {
    if (s.tensor->data_type() == onnx::TensorProto::BFLOAT16)
      Add(Severity::kError, "bf16", s.name, "tensor '{}' is bfloat16: Cloud AI 100 does not support bf16 (convert the "
          "model to float32 before preparing)", s.name);
  });
  auto vi = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
      Add(Severity::kError, "bf16", v.name(), "value '{}' is bfloat16: Cloud AI 100 does not support bf16", v.name());
  };
  for (const auto& v : g.input()) vi(v);
  for (const auto& v : g.output()) vi(v);
  for (const auto& n : g.node())
    if (n.op_type() == "Cast")
      for (const auto& a : n.attribute())
        if (a.name() == "to" && a.i() == onnx::TensorProto::BFLOAT16)
          Add(Severity::kError, "bf16", n.name(), "Cast '{}' converts to bfloat16: Cloud AI 100 does not support bf16",
              n.name());
  r_.model_bytes = model_.proto.ByteSizeLong();
  r_.external_data = model_.had_external || r_.model_bytes >= o_.external_data_threshold;
  if (r_.model_bytes >= o_.external_data_threshold)
    Add(Severity::kInfo, "external-data", BaseName(o_.model_path),
        "the model is {} bytes ({}2 GiB protobuf limit): written with its weights in external data", r_.model_bytes,
        r_.model_bytes >= (uint64_t{2} << 30) ? "beyond the " : "at the threshold, near the ");
  else if (model_.had_external)
    Add(Severity::kInfo, "external-data", BaseName(o_.model_path), "the model keeps its weights in external data; so "
        "does the prepared model");
}

}  // namespace qairt::prepare::internal
