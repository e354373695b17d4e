#include "passes/session.h"

#include <algorithm>

namespace qairt::pass {

std::string_view OptionSourceName(OptionSource s) {
  switch (s) {
    case OptionSource::kDefault: return "default";
    case OptionSource::kUser: return "user";
    case OptionSource::kTarget: return "target";
  }
  return "?";
}

Session::Session(Graph* graph, Options options) : graph_(graph), options_(std::move(options)) {
  float_dtype_ = options_.float_dtype != DType::kUndefined ? options_.float_dtype : DType::kFloat16;
  if (options_.float_dtype == DType::kUndefined && options_.target &&
      options_.target->default_float_dtype != DType::kUndefined)
    float_dtype_ = options_.target->default_float_dtype;
  tensors_at_start = static_cast<uint32_t>(graph_->tensor_count());
  ops_at_start = static_cast<uint32_t>(graph_->op_count());
  tensors_.resize(graph_->tensor_count());
  for (TensorId id = 0; id < graph_->tensor_count(); ++id) {
    const Tensor& t = graph_->tensor(id);
    tensors_[id].existed_at_start = true;
    tensors_[id].original_dtype = t.dtype;
    tensors_[id].original = t.encoding;
  }
  ops_.resize(graph_->op_count());
}

namespace {
Diag Record(Severity severity, std::string_view code, const std::string& message, std::string_view op,
            std::string_view tensor) {
  Diag d;
  d.severity = severity;
  d.code = code;
  d.op = op;
  d.tensor = tensor;
  d.message = message;
  return d;
}
}  // namespace

void Session::Error(std::string_view code, std::string message, std::string_view op, std::string_view tensor) {
  diagnostics_.push_back(Record(Severity::kError, code, message, op, tensor));
  errors_.push_back(std::move(message));
}

void Session::Warn(std::string_view code, std::string message, std::string_view op, std::string_view tensor) {
  diagnostics_.push_back(Record(Severity::kWarning, code, message, op, tensor));
  warnings_.push_back(std::move(message));
}

TensorRecord& Session::tensor_record(TensorId id) {
  if (id >= tensors_.size()) tensors_.resize(id + 1);
  return tensors_[id];
}

OpRecord& Session::op_record(OpId id) {
  if (id >= ops_.size()) ops_.resize(id + 1);
  return ops_[id];
}

void Session::AddReason(TensorId id, std::string_view reason) {
  auto& r = tensor_record(id).reasons;
  if (std::find(r.begin(), r.end(), reason) == r.end()) r.emplace_back(reason);
}

std::string Session::UniqueTensorName(const std::string& base) const {
  if (!graph_->FindTensor(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = fmt::format("{}_{}", base, i);
    if (!graph_->FindTensor(n)) return n;
  }
}

std::string Session::UniqueOpName(const std::string& base) const {
  if (!graph_->FindOp(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = fmt::format("{}_{}", base, i);
    if (!graph_->FindOp(n)) return n;
  }
}

Status ResolveOptions(Options* o, std::vector<ResolvedOption>* resolved) {
  if (!o->target) return InvalidArgument("target-specific processing needs a target");
  const target::Target& t = *o->target;
  resolved->clear();
  auto add = [&](std::string key, std::string value, OptionSource src) {
    resolved->push_back({std::move(key), std::move(value), src});
  };
  add("target", t.name, OptionSource::kUser);
  add("backend", std::string(target::BackendName(t.backend)), OptionSource::kTarget);

  if (o->float_dtype != DType::kUndefined && o->float_dtype != DType::kFloat16 && o->float_dtype != DType::kFloat32)
    return InvalidArgument("--float_bitwidth: must be 16 or 32");
  if (o->float_dtype == DType::kFloat32 && !(t.capabilities & target::kCapFp32Compute))
    return InvalidArgument("--float_bitwidth 32: target '{}' has no fp32 compute (float tensors run in fp16 there)", t.name);
  if (o->float_dtype != DType::kUndefined) {
    add("float_bitwidth", std::to_string(DTypeBits(o->float_dtype)), OptionSource::kUser);
  } else {
    const DType d = t.default_float_dtype != DType::kUndefined ? t.default_float_dtype : DType::kFloat16;
    add("float_bitwidth", std::to_string(DTypeBits(d)),
        t.default_float_dtype != DType::kUndefined ? OptionSource::kTarget : OptionSource::kDefault);
  }
  auto check_bw = [&](const char* name, uint32_t v, std::initializer_list<uint32_t> allowed) -> Status {
    if (v == 0) return Status::Ok();
    for (uint32_t a : allowed)
      if (a == v) return Status::Ok();
    std::string list;
    for (uint32_t a : allowed) list += (list.empty() ? "" : "|") + std::to_string(a);
    return InvalidArgument("{} {}: must be {}", name, v, list);
  };
  QAIRT_RETURN_IF_ERROR(check_bw("--act_bitwidth", o->act_bitwidth, {8, 16}));
  QAIRT_RETURN_IF_ERROR(check_bw("--weights_bitwidth", o->weights_bitwidth, {4, 8, 16}));
  QAIRT_RETURN_IF_ERROR(check_bw("--bias_bitwidth", o->bias_bitwidth, {8, 32}));
  if (o->act_bitwidth == 16 && !(t.capabilities & target::kCapInt16Activations))
    return InvalidArgument("--act_bitwidth 16: target '{}' has no 16-bit activation kernels", t.name);
  if (o->weights_bitwidth == 4 && !(t.capabilities & target::kCapInt4Weights))
    return InvalidArgument("--weights_bitwidth 4: target '{}' has no 4-bit weight kernels", t.name);
  add("act_bitwidth", o->act_bitwidth ? std::to_string(o->act_bitwidth) : "8",
      o->act_bitwidth ? OptionSource::kUser : OptionSource::kDefault);
  add("weights_bitwidth", o->weights_bitwidth ? std::to_string(o->weights_bitwidth) : "8",
      o->weights_bitwidth ? OptionSource::kUser : OptionSource::kDefault);
  if (o->bias_bitwidth == 0) o->bias_bitwidth = 32;
  add("bias_bitwidth", std::to_string(o->bias_bitwidth), o->bias_bitwidth_set ? OptionSource::kUser : OptionSource::kDefault);
  add("preserve_io_datatype", o->preserve_io_datatype ? "true" : "false", OptionSource::kDefault);
  add("bias_aware_weight_scales", o->bias_aware_weight_scales ? "true" : "false",
      o->bias_aware_weight_scales ? OptionSource::kDefault : OptionSource::kUser);
  add("quantizer_log_level", o->log_level == LogLevel::kTrace ? "TRACE" : o->log_level == LogLevel::kInfo ? "INFO" : "NONE",
      o->log_level == LogLevel::kNone ? OptionSource::kDefault : OptionSource::kUser);
  if (!o->stop_after.empty()) add("stop_after", o->stop_after, OptionSource::kUser);
  return Status::Ok();
}

}  // namespace qairt::pass
