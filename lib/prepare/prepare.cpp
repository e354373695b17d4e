// The driver: the option checks and the order of the steps (each step is a
// Preparer member in its own file, see prepare_internal.h).
#include "prepare/prepare.h"

#include <algorithm>
#include <new>

#include "prepare/prepare_internal.h"

namespace qairt::prepare {

namespace internal {

Status Preparer::CheckOptions() {
  if (o_.model_path.empty()) return InvalidArgument("no model given (-i MODEL)");
  if (!(o_.mask_value < 0.0 && o_.mask_value > -kFp16Max))
    return InvalidArgument("mask value {} must be negative and above -65504 (e.g. -10000)", Num(o_.mask_value));
  if (!(o_.tolerance >= 0.0)) return InvalidArgument("tolerance {} must be >= 0", Num(o_.tolerance));
  if (!(o_.fp16_budget > 0.0)) return InvalidArgument("fp16 budget {} must be > 0", Num(o_.fp16_budget));
  if (!(o_.fp16_min_abs >= 0.0 && o_.fp16_min_abs < 1.0))
    return InvalidArgument("fp16_min_abs {} must be in [0, 1)", Num(o_.fp16_min_abs));
  if (o_.fp16_min_abs > 0.0 && o_.fp16_min_abs < kFp16MinSubnormal)
    return InvalidArgument("fp16_min_abs {} is below the smallest fp16 value 2^-24 (5.96e-08): it would still flush "
                           "to zero",
                           Num(o_.fp16_min_abs));
  if (!(o_.headroom_margin >= 1.0)) return InvalidArgument("headroom margin {} must be >= 1", Num(o_.headroom_margin));
  if (o_.batch_size < 0) return InvalidArgument("batch size {} must be positive", o_.batch_size);
  if (o_.fp32_nodes == "auto" && o_.input_list_path.empty())
    return InvalidArgument("--fp32_nodes auto needs calibration data (--input_list)");
  if (o_.target_name != "aic100") return InvalidArgument("target '{}': prepare supports only aic100", o_.target_name);
  return Status::Ok();
}

Status Preparer::Run() {
  r_.model_path = o_.model_path;
  r_.target = o_.target_name;
  Status s = CheckOptions();
  if (!s.ok()) {
    Add(Severity::kError, "options", "", "{}", s.message());
    return s;
  }
  s = LoadModel(o_.model_path, &model_);
  if (!s.ok()) {
    Add(Severity::kError, "model", o_.model_path, "{}", s.message());
    return s;
  }
  ix_ = IndexGraph(model_.proto.graph());
  Shapes();
  Bf16AndSize();
  Constants();
  const auto mask_errors = static_cast<size_t>(std::count_if(r_.findings.begin(), r_.findings.end(), [](const Finding& f) {
    return f.severity == Severity::kError && f.code == "additive-mask";
  }));
  if (r_.Count(Severity::kError) == mask_errors) {
    // Shapes are fine: the graph-level checks can run (a mask error alone
    // does not stop the audit, so every finding is reported at once).
    ImportGraphs();
    OpSupport();
    Samples();
    FixedCheck();
    Activations();
    Islands();
  }
  CompileCommand();
  if (Failed()) {
    std::string msg;
    for (const auto& f : r_.findings)
      if (f.severity == Severity::kError) msg += (msg.empty() ? "" : "\n") + f.message;
    return Error(StatusCode::kValidationFailed, "prepare found {} error{}; nothing written:\n{}", r_.Count(Severity::kError),
                 r_.Count(Severity::kError) == 1 ? "" : "s", msg);
  }
  return Write();
}

}  // namespace internal

Status Prepare(const Options& options, Report* report) {
  *report = Report{};
  try {
    internal::Preparer p(options, report);
    return p.Run();
  } catch (const std::bad_alloc&) {
    return Error(StatusCode::kOutOfMemory, "prepare: out of memory");
  }
}

}  // namespace qairt::prepare
