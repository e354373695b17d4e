// One run of target-specific processing: the graph being processed, the
// resolved options, and everything the passes record for the logs (per-tensor
// reasons for the INFO CSV, TRACE lines, stats counters, accumulated errors).
// Passes read options only from here: there are no globals, so two sessions
// may run on two threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ir/encoding.h"
#include "ir/graph.h"
#include "support/diagnostic.h"
#include "support/status.h"
#include "target/target_descriptor.h"

namespace qairt::pass {

// Values equal enum qairt_quantizer_log_level.
enum class LogLevel : uint32_t { kNone = 0, kInfo = 1, kTrace = 2 };

// Where an option's final value came from ("did my settings take effect?").
enum class OptionSource : uint32_t { kDefault = 0, kUser = 1, kTarget = 2 };
std::string_view OptionSourceName(OptionSource s);

struct ResolvedOption {
  std::string key;
  std::string value;
  OptionSource source;
};

struct Options {
  target::TargetPtr target;
  // Float type for tensors without encodings: kUndefined = the target's default
  // (fp16 where it has one), else kFloat16 / kFloat32 (--float_bitwidth).
  DType float_dtype = DType::kUndefined;
  // Bit widths requested for activations / weights / biases without encodings;
  // 0 = not requested (tensors keep what they have or fall back to float).
  uint32_t act_bitwidth = 0;
  uint32_t weights_bitwidth = 0;
  uint32_t bias_bitwidth = 32;
  bool bias_bitwidth_set = false;
  // Graph inputs/outputs keep the model's datatype; a Quantize/Dequantize is
  // placed next to them when their encoding is fixed-point.
  bool preserve_io_datatype = true;
  // Raise a weight's channel scales where input scale x weight scale cannot
  // hold its 32-bit bias (raise-weight-scales-for-bias).
  bool bias_aware_weight_scales = true;
  LogLevel log_level = LogLevel::kNone;
  // Stop after the pass with this name (empty = run all).
  std::string stop_after;
};

// Reason tokens of the INFO CSV (spec "Log level INFO").
inline constexpr std::string_view kReasonDataMovement = "DATA_MOVEMENT_PROPAGATION";
inline constexpr std::string_view kReasonFloatFallback = "FLOAT_FALLBACK";
inline constexpr std::string_view kReasonSuperGroup = "SUPERGROUP_PROPAGATION";
inline constexpr std::string_view kReasonDuplicatedBias = "DUPLICATED_BIAS";
inline constexpr std::string_view kReasonOpAdaptation = "OP_ADAPTATION";
inline constexpr std::string_view kReasonPruned = "PRUNED";
inline constexpr std::string_view kReasonComputed = "COMPUTED_ENCODING";
// qairt's own: a weight scale raised so its bias fits the bias grid.
inline constexpr std::string_view kReasonBiasAwareScale = "BIAS_AWARE_SCALE";

// One weight whose channel scales were raised for its bias.
struct RaisedWeightScale {
  std::string weight;
  size_t channels = 0;  // raised
  size_t of = 0;        // channel scales of the encoding
  double largest = 1;   // largest factor applied
};

// What processing did to one tensor (indexed by TensorId; tensors added by
// passes get entries as they appear).
struct TensorRecord {
  bool existed_at_start = false;
  DType original_dtype = DType::kUndefined;  // datatype before processing
  std::optional<Encoding> original;          // encoding before processing
  std::vector<std::string> reasons;          // CSV tokens, in order, unique
  std::string origin;                        // injected: tensor it was derived from
  bool injected = false;
  bool bias = false;                         // consumed at a kernel's bias slot
  bool bias_fxp = false;                     // bias without encoding: fixed point
  bool computed = false;                     // encoding computed by the quantizer
  bool float_fallback = false;
  DType requested = DType::kUndefined;       // dtype requested by its encoding
  std::optional<Encoding> requested_encoding; // encoding when kernels were requested
};

// What kernel selection decided for one op.
struct OpRecord {
  std::vector<DType> requested_in, requested_out;
  std::vector<DType> selected_in, selected_out;
  // Encoding each input slot needs (the tensor's adapted to the selected dtype).
  std::vector<std::optional<Encoding>> needed_in;
  std::string kernel;   // selected kernel name ("" = none)
  double distance = 0;  // total
  bool adapted = false;
  bool failed = false;
  int32_t super_group = -1;  // index into Session::super_groups
  bool injected = false;     // a Convert/Cast added by processing
};

struct SuperGroupRecord {
  std::string pattern;        // "Conv2d + Relu"
  std::vector<OpId> ops;
};

// One Convert/Cast that processing wants between `source` and some consumers.
struct ConvertSite {
  TensorId source = kInvalidId;
  Encoding to;                 // encoding of the converted tensor
  // Two-step rule (spec "Insert converts"): the model's datatype is first
  // converted to the user-specified encoding, then to the selected one.
  std::optional<Encoding> via;
  std::vector<Use> consumers;  // op inputs to rewire; empty + graph_output = output boundary
  bool graph_output = false;   // the converted tensor replaces `source` as graph output
  std::string why;             // TRACE text
  std::string_view reason = kReasonOpAdaptation;  // CSV reason of the converted tensor
};

struct ConvertStat {
  DType from, to;
};

class Session {
 public:
  Session(Graph* graph, Options options);

  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }
  const Options& options() const { return options_; }
  const target::Target& target() const { return *options_.target; }
  // The float type tensors without encodings receive.
  DType float_dtype() const { return float_dtype_; }

  // ---- diagnostics ----------------------------------------------------------
  // A problem under a stable rule id (the catalogue in support/diagnostic.cpp).
  // `message` is the whole sentence (it names its op and tensor for the log
  // and the CLI); `op` and `tensor` name them again for IDEs ("" if none).
  void Error(std::string_view code, std::string message, std::string_view op = {}, std::string_view tensor = {});
  void Warn(std::string_view code, std::string message, std::string_view op = {}, std::string_view tensor = {});
  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Errors and warnings in the order found.
  const Diags& diagnostics() const { return diagnostics_; }

  // ---- TRACE ----------------------------------------------------------------
  bool tracing() const { return options_.log_level == LogLevel::kTrace; }
  template <typename... Args>
  void Trace(fmt::format_string<Args...> f, Args&&... args) {
    if (!tracing()) return;
    trace_ += fmt::format(f, std::forward<Args>(args)...);
    trace_ += '\n';
  }
  void TraceRaw(std::string_view text) {
    if (tracing()) trace_ += text;
  }
  const std::string& trace() const { return trace_; }

  // ---- records --------------------------------------------------------------
  TensorRecord& tensor_record(TensorId id);
  OpRecord& op_record(OpId id);
  const TensorRecord* find_tensor_record(TensorId id) const {
    return id < tensors_.size() ? &tensors_[id] : nullptr;
  }
  const OpRecord* find_op_record(OpId id) const { return id < ops_.size() ? &ops_[id] : nullptr; }
  void AddReason(TensorId id, std::string_view reason);

  std::vector<SuperGroupRecord> super_groups;
  std::vector<ConvertSite> pending_converts;  // consumed by the Inject Convert Ops pass
  std::vector<ConvertStat> converts;          // injected and kept
  std::vector<std::pair<std::string, std::string>> pruned_converts;  // (source tensor, dtype pair)
  uint32_t tensors_at_start = 0;
  uint32_t ops_at_start = 0;
  std::vector<ResolvedOption> resolved_options;
  std::vector<RaisedWeightScale> raised_weight_scales;

  // Name not used by any tensor of the graph, derived from `base`.
  std::string UniqueTensorName(const std::string& base) const;
  std::string UniqueOpName(const std::string& base) const;

 private:
  Graph* graph_;
  Options options_;
  DType float_dtype_ = DType::kFloat16;
  std::vector<std::string> errors_, warnings_;
  Diags diagnostics_;
  std::string trace_;
  std::vector<TensorRecord> tensors_;
  std::vector<OpRecord> ops_;
};

// Resolves `options` against the target (float type, bias bit width, ...):
// an error names the option and why (e.g. --float_bitwidth 32 on a target
// without fp32 compute). Fills `resolved` with every option's final value.
Status ResolveOptions(Options* options, std::vector<ResolvedOption>* resolved);

}  // namespace qairt::pass
