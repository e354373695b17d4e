// The fixed-model check: the edited model is imported and run next to the
// original; max |d| must stay within --tolerance.
#include <algorithm>

#include "onnx/onnx_import.h"
#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

namespace {

constexpr size_t kMaxFixedCheckSamples = 4;

}  // namespace

void Preparer::FixedCheck() {
  if (graphs_.empty() || samples_.empty()) return;
  std::vector<Sample> samples(samples_.begin(), samples_.begin() + std::min(samples_.size(), kMaxFixedCheckSamples));
  auto ref = RunAll(graphs_[audit_spec_], samples, false, nullptr);
  if (!ref.ok()) {
    Add(Severity::kError, "executor", BaseName(o_.model_path), "the executor cannot run the model: {}",
        ref.status().message());
    return;
  }
  if (r_.changes.empty()) return;
  std::string bytes;
  if (r_.model_bytes >= (uint64_t{2} << 30) - (uint64_t{1} << 20)) {
    Add(Severity::kWarning, "fixed-check-skipped", BaseName(o_.model_path), "the model is too large to check the edited "
        "copy in memory; the constant changes were not verified with the executor");
    return;
  }
  if (!model_.proto.SerializeToString(&bytes)) {
    Add(Severity::kError, "internal", BaseName(o_.model_path), "failed to serialize the edited model");
    return;
  }
  ImportOptions io;
  io.define_symbols = spec_symbols_[audit_spec_];
  io.input_dims = o_.input_dims;
  ImportReport rep;
  auto fixed = ImportOnnxBytes(bytes.data(), bytes.size(), "", io, &rep);
  if (!fixed.ok()) {
    Add(Severity::kError, "fixed-check", BaseName(o_.model_path), "the edited model does not import: {}",
        fixed.status().message());
    return;
  }
  auto out = RunAll(fixed.value(), samples, false, nullptr);
  if (!out.ok()) {
    Add(Severity::kError, "fixed-check", BaseName(o_.model_path), "the edited model does not run: {}", out.status().message());
    return;
  }
  double max_abs = 0.0;
  OutputError(ref.value(), out.value(), &max_abs);
  r_.fixed_max_abs_diff = max_abs;
  r_.fixed_check_samples = samples.size();
  const std::string where = fmt::format("on {} {}sample{}", samples.size(), samples_generated_ ? "generated " : "",
                                        samples.size() == 1 ? "" : "s");
  if (!(max_abs <= o_.tolerance))
    Add(o_.force ? Severity::kWarning : Severity::kError, "fixed-check", BaseName(o_.model_path),
        "the edited model differs from the original by max |d| = {} {} (tolerance {}){}", Num(max_abs), where,
        Num(o_.tolerance), o_.force ? "; kept because of --force" : "; use --tolerance or --force to accept");
  else
    Add(Severity::kInfo, "fixed-check", BaseName(o_.model_path),
        "the edited model matches the original within {}: max |d| = {} {}", Num(o_.tolerance), Num(max_abs), where);
}

}  // namespace qairt::prepare::internal
