// The .qairt container: a processed graph plus what the converter decided
// (target, resolved options, kernel annotations, per-tensor notes), in a
// versioned FlatBuffers file (schema/container.fbs, identifier "QAIR").
//
// Writing is deterministic (same graph + meta -> same bytes: no timestamps,
// graph order, caller's order for the metadata) and atomic for files.
// Reading never trusts the bytes: size limit, identifier, the FlatBuffers
// verifier under explicit depth/table limits, then a semantic check of every
// field (indices, enum values, static data sizes, encodings, Graph::Validate)
// whose errors name the field, tensor or op.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt::container {

// Schema version this library writes, and the oldest reader its files need.
// 2 adds Container.stats_summary (optional: readers of 1 ignore it).
// 3 moves static bytes into the data section after the FlatBuffer
// (Tensor.section, the trailer): files with static data need reader 2.
// 4 adds Encoding.block_int_scales_u8 (LPBQ integer scales as bytes): files
// that use it need reader 3.
inline constexpr uint32_t kSchemaVersion = 4;
inline constexpr uint32_t kMinReaderVersion = 2;
// What a file with byte-sized LPBQ integer scales needs.
inline constexpr uint32_t kMinReaderVersionByteIntScales = 3;
// Newest min_reader_version this library can read.
inline constexpr uint32_t kReaderVersion = 3;

// FlatBuffers buffers are limited to 2 GiB (the verifier asserts above
// that): the FlatBuffer part of a file, and a whole schema-2 file. The data
// section after it may be larger.
inline constexpr uint64_t kMaxContainerBytes = (uint64_t{1} << 31) - 4096;
// The data section's trailer: this magic, then the section's file offset.
inline constexpr char kDataTrailerMagic[9] = "QAIRDATA";
inline constexpr size_t kDataTrailerBytes = 16;
inline constexpr size_t kDataSectionAlignment = 4096;  // of the section's start
inline constexpr size_t kSectionEntryAlignment = 64;   // of each tensor's bytes in it
inline constexpr uint32_t kMaxVerifierDepth = 16;          // schema depth is 6
inline constexpr uint32_t kMaxVerifierTables = 1u << 26;
inline constexpr size_t kMaxStringBytes = 1u << 20;        // names, option values, notes
inline constexpr size_t kStaticDataAlignment = 32;         // static bytes in the file (FlatBuffers' maximum)

// Where an option's final value came from. Values equal qairt_option_source.
enum class OptionSource : uint32_t { kDefault = 0, kUser = 1, kTarget = 2 };
std::string_view OptionSourceName(OptionSource s);  // "default" | "user" | "target"

// One entry of the resolved options namespace ("did my settings take effect?").
struct ContainerOption {
  std::string key;  // non-empty, unique within the container
  std::string value;
  OptionSource source = OptionSource::kDefault;
  bool operator==(const ContainerOption&) const = default;
};

// What kernel selection decided for one op.
struct OpAnnotation {
  std::string op_name;       // an op of the graph
  std::string kernel;        // selected kernel name ("" = none)
  int32_t super_group = -1;  // super group id, -1 = none
  bool adapted = false;      // requested dtypes were adapted
  bool operator==(const OpAnnotation&) const = default;
};

// Why the passes touched a tensor: the INFO log's reason tokens, '^'-joined.
struct TensorNote {
  std::string tensor_name;  // a tensor of the graph
  std::string reasons;
  bool operator==(const TensorNote&) const = default;
};

struct ContainerMeta {
  std::string producer;  // "" when writing: "qairt <version>" is filled in
  std::string target;    // target name ("" = none)
  std::vector<ContainerOption> options;
  std::vector<OpAnnotation> op_annotations;
  std::vector<TensorNote> tensor_notes;
  std::string stats_summary;  // the processing's stats summary ("" = none)
  bool operator==(const ContainerMeta&) const = default;
};

struct LoadedContainer {
  Graph graph;
  ContainerMeta meta;  // producer as stored
  uint32_t schema_version = 0;
  uint32_t min_reader_version = 0;
};

// The container bytes. Fails with kValidationFailed if the graph does not
// validate (every error listed) or the metadata names an unknown op/tensor,
// repeats an option key or has an empty one; kUnsupported if the graph's
// metadata would not fit the 2 GiB FlatBuffers limit.
Result<std::vector<uint8_t>> SerializeContainer(const Graph& graph, const ContainerMeta& meta);

// SerializeContainer's bytes written atomically: temporary file in the same
// folder, fsync, rename. Static bytes go from the graph's StaticData straight
// to the file (no copy of the weights in memory). On any error nothing is left at `path` (an existing
// file there is untouched) and no temporary remains.
Status WriteContainer(const Graph& graph, const ContainerMeta& meta, const std::string& path);

// Parses and checks a container; `origin` names it in messages. Static data
// is copied (the span may go away afterwards).
Result<LoadedContainer> ReadContainer(std::span<const uint8_t> bytes, std::string_view origin);

// Maps the file read-only; static tensors borrow their bytes from the mapping
// (StaticDataOrigin::kMapped), which lives as long as any graph using it.
Result<LoadedContainer> ReadContainerFile(const std::string& path);

// True when `bytes` start like a container (identifier "QAIR" at bytes 4..7).
bool LooksLikeContainer(std::span<const uint8_t> bytes);

}  // namespace qairt::container
