// Target descriptors: what one backend can execute (kernels per op with their
// per-slot dtype sets and constraints, data-movement ops, super groups,
// conversions, capabilities), loaded from a FlatBuffer (targets/schema/
// target.fbs) or its JSON form, verified and semantically checked, and then
// held as an immutable plain C++ object that threads may share.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "support/status.h"

namespace qairt::target {

// Newest descriptor layout this reader understands. A descriptor whose
// min_reader_version is larger is refused.
inline constexpr uint32_t kReaderVersion = 1;
inline constexpr uint32_t kSchemaVersion = 1;

// Hostile-input limits, checked before anything else is trusted.
inline constexpr size_t kMaxBinaryBytes = 16u << 20;   // compiled descriptor
inline constexpr size_t kMaxJsonBytes = 32u << 20;     // JSON source
inline constexpr uint32_t kMaxVerifierDepth = 16;      // schema depth is 5
inline constexpr uint32_t kMaxVerifierTables = 1u << 20;
inline constexpr size_t kMaxOps = 4096;
inline constexpr size_t kMaxKernelsPerOp = 64;
inline constexpr size_t kMaxSlots = 64;
inline constexpr size_t kMaxListEntries = 256;          // dtypes, fixed encodings, super-group length, ...
inline constexpr size_t kMaxStringBytes = 4096;

// Values equal the schema's and the C API's enums.
enum class Backend : uint32_t { kUnknown = 0, kHtp = 1, kLpai = 2, kCpu = 3, kAic = 4, kCustom = 5 };
enum class SlotRole : uint32_t { kActivation = 0, kWeight = 1, kBias = 2, kIndex = 3 };
enum class ScaleRule : uint32_t { kNone = 0, kProductOfInputs = 1, kSameAsInput = 2 };
enum class ConvertOp : uint32_t { kConvert = 0, kCast = 1, kQuantize = 2, kDequantize = 3 };

// Capability bits (positions frozen; equal QAIRT_TARGET_CAP_*).
enum Capability : uint64_t {
  kCapFp16Compute = 1u << 0,
  kCapFp32Compute = 1u << 1,
  kCapInt16Activations = 1u << 2,
  kCapA16W16 = 1u << 3,
  kCapInt4Weights = 1u << 4,
  kCapPerChannelWeights = 1u << 5,
  kCapBlockWeights = 1u << 6,
  kCapLpbqWeights = 1u << 7,
};
struct CapabilityName {
  uint64_t bit;
  std::string_view name;  // schema field name, e.g. "fp16_compute"
};
std::span<const CapabilityName> CapabilityNames();

std::string_view BackendName(Backend b);  // "HTP", ...
std::string_view SlotRoleName(SlotRole r);
std::string_view ScaleRuleName(ScaleRule r);
std::string_view ConvertOpName(ConvertOp c);
std::string_view SymmetryName(uint32_t symmetry);        // IR Symmetry value
std::string_view GranularityName(uint32_t granularity);  // IR EncodingKind value

struct FixedEncoding {
  DType dtype;
  int32_t offset;
  double scale;
};

struct Slot {
  SlotRole role = SlotRole::kActivation;
  bool optional = false;
  std::vector<DType> dtypes;
  uint32_t symmetry_mask = 0;     // bit (1 << Symmetry); 0 = any
  uint32_t granularity_mask = 0;  // bit (1 << EncodingKind); 0 = any
  int32_t channel_axis = -1;
  uint32_t block_size_min = 0;
  uint32_t block_size_multiple = 0;
  ScaleRule scale_rule = ScaleRule::kNone;
  bool has_range = false;
  double range_min = 0, range_max = 0;
  std::vector<FixedEncoding> fixed_encodings;
  std::string note;

  bool Allows(DType d) const;
};

struct Kernel {
  std::string name;
  std::vector<Slot> inputs;
  std::vector<Slot> outputs;
  bool variadic_inputs = false;
  bool accuracy_preserving = true;
  std::string note;

  // Spec of input `i`, following variadic_inputs; nullptr if not described.
  const Slot* input(size_t i) const;
};

struct OpKernels {
  std::string op;
  std::vector<Kernel> kernels;
};

struct SuperGroup {
  std::vector<std::string> ops;
  std::string note;
};

struct Conversion {
  std::vector<DType> from, to;
  ConvertOp via;
};

struct Soc {
  std::string name;
  uint32_t soc_model = 0;
  uint32_t vtcm_mb = 0;
};

struct QuantDefaults {
  bool activations_symmetric = false, params_symmetric = false, strict_symmetric = false,
       unsigned_symmetric = false, per_channel = false, bias_quantized = false;
};

struct Target {
  uint32_t schema_version = 0;
  uint32_t min_reader_version = 0;
  std::string name;
  std::string description;
  std::string origin;  // "built-in", a file path or "<bytes>"
  Backend backend = Backend::kUnknown;
  uint32_t arch_version = 0;
  std::vector<Soc> socs;
  uint64_t capabilities = 0;
  DType default_float_dtype = DType::kFloat16;  // kUndefined = no float fallback
  QuantDefaults quant_defaults;
  std::vector<OpKernels> ops;  // sorted by op name, unique
  std::vector<std::string> data_movement_ops;
  std::vector<SuperGroup> super_groups;
  std::vector<Conversion> conversions;
  std::vector<std::string> sources;

  const OpKernels* FindOp(std::string_view op) const;
  bool IsDataMovement(std::string_view op) const;
  // Bit (1 << ConvertOp) for every op that converts from -> to; 0 if none.
  uint32_t ConversionOps(DType from, DType to) const;
  // Index of the first kernel of `op` whose slot dtype sets contain the given
  // dtypes (inputs may be kUndefined for absent optional inputs); nullopt if none.
  std::optional<size_t> FindKernel(std::string_view op, std::span<const DType> inputs,
                                   std::span<const DType> outputs) const;
};

using TargetPtr = std::shared_ptr<const Target>;

// Compiled descriptor (FlatBuffer). `origin` names the source in messages.
Result<TargetPtr> LoadTargetFromBinary(std::span<const uint8_t> bytes, std::string_view origin);
// JSON source (the schema's JSON form).
Result<TargetPtr> LoadTargetFromJson(std::string_view text, std::string_view origin);
// Binary if it carries the "QATD" identifier, else JSON.
Result<TargetPtr> LoadTargetFromBytes(std::span<const uint8_t> bytes, std::string_view origin);
Result<TargetPtr> LoadTargetFromFile(const std::string& path);
Result<TargetPtr> LoadBuiltinTarget(std::string_view name);
// A built-in name, else a file path.
Result<TargetPtr> LoadTarget(std::string_view name_or_path);

// Sorted names of the built-in descriptors.
std::span<const std::string_view> BuiltinTargetNames();

// Built-in target name for a SoC ("SM8550", case-insensitive, or its
// QNN_SOC_MODEL number "43"). HTP targets are preferred over LPAI.
std::optional<std::string_view> TargetNameForSoc(std::string_view soc);

// JSON: the whole target, or only one op's kernels when `op` is non-empty
// (NotFound if the target has no such op).
Result<std::string> TargetToJson(const Target& t, std::string_view op);
// What changes from a to b, as text lines or as JSON.
std::string DiffTargets(const Target& a, const Target& b, bool json);

}  // namespace qairt::target
