// `qairt prepare --target aic100`: makes an ONNX model ready for
// Qualcomm's `qaic-compile -convert-to-fp16` and explains what it found.
//
// The compiler runs all float math in fp16 and needs static shapes. What goes
// wrong in practice (docs/ARCHITECTURE.md, "Cloud AI 100 preparation"):
// constants outside the fp16 range (fp32-min attention masks), activations
// that overflow 65504, tiny weights that flush to zero, specializations the
// compiler rejects. Prepare audits all of that offline and writes the model
// with only the reported changes, the YAML/JSON files the compiler reads and
// the matching command line.
//
// The ONNX file is edited as a ModelProto (never re-exported from the IR), so
// the written model is the user's model: node names, opsets, metadata and
// integer tensors are untouched. The IR and the reference executor are used
// only to check: the fixed model against the original, the fp32 activation
// ranges and the fp16 simulation.
//
// Nothing is written unless the audit ends without an error finding; a failed
// write removes what this run wrote (each file is replaced atomically).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/status.h"

namespace qairt::prepare {

inline constexpr double kFp16Max = 65504.0;
inline constexpr double kFp16MinSubnormal = 5.9604644775390625e-08;  // 2^-24
inline constexpr double kFp16MinNormal = 6.103515625e-05;             // 2^-14

enum class Severity : uint32_t { kInfo = 0, kWarning = 1, kError = 2 };
const char* SeverityName(Severity s);

// One thing the audit found. `code` is stable (tests and tools key on it);
// `subject` names the tensor, node, symbol or file concerned.
struct Finding {
  Severity severity = Severity::kInfo;
  std::string code;
  std::string subject;
  std::string message;
};

// One edit applied to the written model.
struct Change {
  std::string tensor;
  std::string what;   // "clipped to +-65504", "-inf kept (feeds Where)", ...
  uint64_t count = 0;  // values changed (or kept)
};

struct Options {
  std::string model_path;
  std::string output_dir;  // empty: audit only, nothing written
  std::map<std::string, int64_t, std::less<>> define_symbols;
  std::map<std::string, std::vector<int64_t>, std::less<>> input_dims;
  int64_t batch_size = 0;  // > 0: -batchsize=N, and binds a symbolic leading input dim left undefined
  std::string specializations_path;
  bool named_specializations = false;  // write {"name","symbols"} entries instead of the flat format
  std::string input_list_path;
  size_t max_samples = 16;  // input_list samples used by the audits (the first N)

  bool clip_fp16_constants = false;
  double fp16_min_abs = 0.0;  // > 0: nonzero |x| below it raised to sign(x) * fp16_min_abs
  bool fix_additive_masks = false;
  double mask_value = -10000.0;  // what additive-mask values <= -65504 become
  double tolerance = 1e-4;       // max |fixed - original| allowed for the constant changes
  bool force = false;            // a fixed model beyond the tolerance is a warning, not an error

  std::string fp32_nodes;      // "", "auto" or a file (YAML FP32NodeInstanceNames or one name a line)
  double fp16_budget = 1e-2;   // fp16 vs fp32 output error (max |d| / max |ref|) to meet
  double headroom_margin = 8.0;        // warn when fp32 max |x| > 65504 / margin
  double underflow_fraction = 0.01;    // warn when this share of nonzero values flushes to 0

  // IR op types with an fp16 kernel in the target descriptor (filled by the
  // caller from targets/builtin/aic100.json); empty set: no descriptor check.
  std::set<std::string, std::less<>> target_fp16_ops;
  std::string target_name = "aic100";
  std::string supported_ops_path;  // the compiler's OnnxSupportedOperators.txt (optional)
  uint64_t external_data_threshold = uint64_t{2} << 30;  // models at least this big are written with external data
};

struct Specialization {
  std::string name;
  std::map<std::string, int64_t, std::less<>> symbols;
};

struct Report {
  std::string model_path;
  std::string target = "aic100";
  std::vector<Finding> findings;
  std::vector<Change> changes;
  std::map<std::string, int64_t, std::less<>> symbols;  // fixed for every specialization
  std::vector<Specialization> specializations;
  std::map<std::string, std::vector<std::vector<int64_t>>> input_shapes;  // per input, per specialization
  uint64_t model_bytes = 0;
  bool external_data = false;        // the written model keeps weights in a .data file
  double fixed_max_abs_diff = -1.0;  // fixed vs original in the executor; < 0: not run
  size_t fixed_check_samples = 0;
  double fp16_error = -1.0;          // fp16 simulation vs fp32, whole model; < 0: not run
  std::string first_diverging_tensor;
  std::string first_diverging_node;
  size_t audit_samples = 0;
  std::vector<std::string> fp32_nodes;  // first-output names (the YAML list)
  size_t fp32_island_nodes = 0;         // ONNX nodes in the island
  double fp16_island_error = -1.0;      // with the island; < 0: no island
  std::string compile_command;
  std::vector<std::string> files;  // written, relative to output_dir

  size_t Count(Severity s) const;
  bool HasErrors() const { return Count(Severity::kError) > 0; }
  std::string Text() const;
  std::string Json() const;
};

// Runs the audit (and writes the outputs when options.output_dir is set and
// no error was found). `report` is filled either way. Returns an error Status
// listing the error findings, or the problem that stopped the run (unreadable
// model, bad options).
Status Prepare(const Options& options, Report* report);

}  // namespace qairt::prepare
