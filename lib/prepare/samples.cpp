// The samples the audits run on: the first --max_samples of the input_list,
// or generated inputs (fixed-model check only) when there is none.
#include <algorithm>
#include <cstdint>

#include "calib/input_list.h"
#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

namespace {

// Deterministic inputs when no input_list is given (fixed-model check only):
// floats uniform in [-1, 1], integers 0, bools true.
Sample GeneratedSample(const std::vector<calib::InputSpec>& specs, uint32_t seed) {
  Sample s;
  uint64_t state = 0x9E3779B97F4A7C15ull ^ seed;
  for (const auto& in : specs) {
    std::vector<uint8_t> b(in.bytes, 0);
    if (in.dtype == DType::kFloat32) {
      float* f = reinterpret_cast<float*>(b.data());
      for (size_t k = 0; k < in.bytes / 4; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        f[k] = static_cast<float>(static_cast<double>(state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
      }
    } else if (in.dtype == DType::kBool) {
      std::fill(b.begin(), b.end(), uint8_t{1});
    }
    s.push_back(std::move(b));
  }
  return s;
}

}  // namespace

void Preparer::Samples() {
  if (graphs_.empty()) return;
  if (o_.input_list_path.empty()) {
    auto specs = calib::GraphInputSpecs(graphs_[0]);
    if (!specs.ok()) {
      Add(Severity::kError, "inputs", BaseName(o_.model_path), "{}", specs.status().message());
      return;
    }
    for (uint32_t s = 0; s < 2; ++s) samples_.push_back(GeneratedSample(specs.value(), s));
    return;
  }
  Status first;
  for (size_t i = 0; i < graphs_.size(); ++i) {
    auto specs = calib::GraphInputSpecs(graphs_[i]);
    if (!specs.ok()) continue;
    auto list = calib::ReadInputList(o_.input_list_path, specs.value());
    if (!list.ok()) {
      if (first.ok()) first = list.status();
      continue;
    }
    audit_spec_ = i;
    const size_t n = std::min(list.value().samples.size(), o_.max_samples);
    for (size_t k = 0; k < n; ++k) {
      auto s = calib::LoadSample(list.value(), k);
      if (!s.ok()) {
        Add(Severity::kError, "input-list", o_.input_list_path, "{}", s.status().message());
        return;
      }
      samples_.push_back(std::move(s).value());
    }
    samples_generated_ = false;
    if (samples_.empty()) Add(Severity::kError, "input-list", o_.input_list_path, "'{}' has no sample", o_.input_list_path);
    return;
  }
  Add(Severity::kError, "input-list", o_.input_list_path, "{}{}", first.message(),
      graphs_.size() > 1 ? " (no specialization fits the samples)" : "");
}

}  // namespace qairt::prepare::internal
