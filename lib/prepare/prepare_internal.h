// Internal to lib/prepare: what the steps of a prepare run share. Preparer
// holds the state of one run; each step is a member defined in the file named
// next to its declaration, and prepare.cpp runs the steps in order.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "exec/executor.h"
#include "ir/graph.h"
#include "prepare/onnx_model.h"
#include "prepare/prepare.h"
#include "support/status.h"

namespace qairt::prepare::internal {

inline std::string Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

inline std::string BaseName(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// ---------------------------------------------------------------------------
// Samples and runs (runs.cpp, samples.cpp)
// ---------------------------------------------------------------------------

using Sample = std::vector<std::vector<uint8_t>>;  // one buffer per graph input

struct RunOutputs {
  std::vector<std::vector<float>> outputs;  // float outputs, per graph output
};

// One executor run of `g` per sample. `round_inputs` rounds float inputs to
// fp16 first; `observe` (may be empty) sees every tensor of every run.
Result<std::vector<RunOutputs>> RunAll(const Graph& g, const std::vector<Sample>& samples, bool round_inputs,
                                      const std::function<Status(size_t sample, const exec::ObservedTensor&)>& observe);

// Output error of `b` against reference `a`: max |d| / max |ref| per output
// (range-relative, so an output near zero does not dominate), the worst over
// outputs and samples. A non-finite value where the reference is finite
// counts as infinite error.
double OutputError(const std::vector<RunOutputs>& a, const std::vector<RunOutputs>& b, double* max_abs = nullptr);

struct TensorStats {
  double absmax = 0.0;
  uint64_t n = 0, over = 0, nonfinite = 0, nonzero = 0, under = 0;
};

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

class Preparer {
 public:
  Preparer(const Options& o, Report* r) : o_(o), r_(*r) {}
  Status Run();  // prepare.cpp

 private:
  template <typename... Args>
  void Add(Severity s, std::string code, std::string subject, fmt::format_string<Args...> f, Args&&... args) {
    r_.findings.push_back(Finding{s, std::move(code), std::move(subject), fmt::format(f, std::forward<Args>(args)...)});
  }
  bool Failed() const { return r_.HasErrors(); }

  Status CheckOptions();  // prepare.cpp
  void Shapes();  // shapes.cpp
  Status ReadSpecializations(std::vector<Specialization>* out);  // shapes.cpp
  void Bf16AndSize();  // bf16_and_size.cpp
  void Constants();  // constant_audit.cpp
  bool FeedsWhere(const std::string& value) const;  // constant_audit.cpp
  std::string AdditiveMaskSoftmax(const std::string& value, std::string* via_add) const;  // constant_audit.cpp
  void ImportGraphs();  // import_graphs.cpp
  void OpSupport();  // op_support.cpp
  void Samples();  // samples.cpp
  void FixedCheck();  // fixed_check.cpp
  void Activations();  // activation_audit.cpp
  void Islands();  // fp32_islands.cpp
  Result<Graph> Fp16Graph(const std::vector<bool>& node_fp32) const;  // fp16_simulation.cpp
  double Simulate(const std::vector<bool>& node_fp32, const std::vector<Sample>& samples,
                  std::string* first_tensor);  // fp16_simulation.cpp
  void CompileCommand();  // outputs.cpp
  Status Write();  // outputs.cpp

  const Options& o_;
  Report& r_;
  LoadedModel model_;
  onnx::ModelProto original_;  // as loaded (external data inlined), before edits
  GraphIndex ix_;
  std::vector<std::map<std::string, int64_t, std::less<>>> spec_symbols_;  // merged, per specialization
  std::vector<Graph> graphs_;  // original model, per specialization
  size_t audit_spec_ = 0;      // the specialization the samples fit
  std::vector<Sample> samples_;
  bool samples_generated_ = true;
  std::vector<RunOutputs> ref_;  // fp32 outputs of the original on samples_
  std::map<std::string, TensorStats> stats_;
  std::map<std::string, std::vector<float>> first_sample_;  // fp32 activations of sample 0
  std::vector<int> node_of_op_;  // IR op -> ONNX node (audit graph), -1 if none
  std::vector<std::string> yaml_names_;
  std::string specs_json_;
  std::string yaml_;
};

}  // namespace qairt::prepare::internal
