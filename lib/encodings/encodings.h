// Quantization encodings files: QAIRT 2.0.0, AIMET 1.0.0 and the AIMET legacy
// family (0.4.0 / 0.5.0 / 0.6.1, also the classic `--quantization_overrides`
// format). Reading (reader*.cpp, simdjson on-demand), applying to a graph
// (apply.cpp) and writing
// (encodings_writer.h).
//
// Conventions of the formats, converted on read to the IR's (QNN) convention
// real = (q + offset) * scale, offset = -zero_point:
//  * 2.0.0: `y_zero_point` is the zero point on the grid of `output_dtype`
//    (offset = -y_zero_point). Blockwise arrays are nested with the full
//    scale-grid shape; `axis` is the block axis.
//  * 0.6.1 and 1.0.0: `offset` is always expressed on the UNSIGNED grid of
//    `bitwidth` bits, whatever the symmetry: a symmetric int8 tensor has
//    offset -128 (-127 if strict), an unsigned-symmetric one 0. The axis of a
//    per-channel/blockwise encoding is not stored: it is inferred from the
//    tensor's consumer when the file is applied to a graph.
//
// Nothing in a file can crash the reader: every value is type-checked, every
// size bounded, and every problem becomes a Diag naming file:line:col, the
// tensor and the JSON field.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/encoding.h"
#include "ir/graph.h"
#include "support/status.h"

namespace qairt::encodings {

// Values equal enum qairt_encodings_version.
enum class Version : uint32_t {
  kAuto = 0,
  kV0_6_1 = 1,  // AIMET legacy family: 0.4.0, 0.5.0, 0.6.1 (read); 0.6.1 (written)
  kV1_0_0 = 2,
  kV2_0_0 = 3,
};
std::string_view VersionName(Version v);                   // "0.6.1", "1.0.0", "2.0.0", "auto"
std::optional<Version> VersionFromName(std::string_view s);  // "0.6.1", "1.0.0", "2.0.0" (also "0.4.0", "0.5.0")

// Where a legacy/1.0.0 file listed an entry.
enum class Section : uint8_t { kUnspecified = 0, kActivation = 1, kParam = 2 };

// Problems are qairt::Diag records (support/diagnostic.h); `file` is the name
// the caller gave, `field` the JSON path inside the entry ("y_scale[3]").
using qairt::CountErrors;
using qairt::Diag;
using qairt::Diags;
using qairt::RenderDiagnostics;
using qairt::ReportFormat;

// The bytes of an encodings file (with the padding simdjson reads past the
// end), kept so diagnostics found at apply time can still be located.
class SourceText {
 public:
  static constexpr size_t kPadding = 64;  // >= SIMDJSON_PADDING
  // A buffer of size + kPadding bytes (padding zeroed), filled by the caller.
  explicit SourceText(size_t size);
  // The `size` bytes of the open file `fd` through a read-only mapping, or
  // null when it cannot be mapped. Such a text has no padding (padded() is
  // false): it is read window by window into padded buffers, never parsed in
  // place. A large file is mapped rather than read because a read copies it
  // into fresh anonymous memory, which a virtual machine backs page by page
  // (a 100 MB file: 22-200 ms of page clearing against ~5 ms to map the page
  // cache); like the mapped weights of a model, a mapped file truncated by
  // another process while it is read faults the process (SIGBUS).
  static std::shared_ptr<SourceText> MapFile(int fd, size_t size);
  ~SourceText();
  SourceText(const SourceText&) = delete;
  SourceText& operator=(const SourceText&) = delete;
  char* mutable_data() { return data_; }  // padded texts only
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // Whether kPadding zero bytes follow the text (what simdjson reads past the end).
  bool padded() const { return !mapped_; }
  // 1-based line and column (in code points); {0, 0} if offset is out of range.
  // Builds the line index on first use (thread-safe).
  std::pair<uint32_t, uint32_t> Locate(uint64_t offset) const;

 private:
  SourceText() = default;
  char* data_ = nullptr;
  size_t capacity_ = 0;  // bytes allocated (a large buffer's mapping length)
  size_t size_ = 0;
  bool mapped_ = false;  // data_ maps the file (MapFile)
  mutable std::once_flag once_;
  mutable std::vector<uint64_t> line_starts_;
};

// JSON key -> byte offset of its value within one entry, for diagnostics at
// apply time. Only the formats' known keys are kept (each at most once per
// entry); stored inline, as a heap block per entry was measurable on files of
// 200k entries, in 32 bits (64 bytes an entry: a 100 MB file's 200k entries
// are fresh memory, which a virtual machine backs page by page). Offsets
// past 4 GiB (files that large exceed ReadOptions::max_bytes' default) are
// kept as unknown: diagnostics then point at the entry.
class FieldOffsets {
 public:
  static constexpr size_t kCapacity = 12;  // more known keys than any format's entry has
  // The key's index among the known keys, or -1.
  static int KeyIndex(std::string_view key);
  static std::string_view KeyName(int index);
  // Records a known key (others, and keys past kCapacity, are ignored: the
  // entry's own offset is used for them).
  void Add(std::string_view key, uint64_t offset);
  size_t size() const { return size_; }
  std::pair<std::string_view, uint64_t> operator[](size_t i) const {
    return {KeyName(keys_[i]), offsets_[i] == kNone ? UINT64_MAX : offsets_[i]};  // kNoOffset
  }
  struct Iterator {
    const FieldOffsets* o;
    size_t i;
    std::pair<std::string_view, uint64_t> operator*() const { return (*o)[i]; }
    Iterator& operator++() { return ++i, *this; }
    bool operator!=(const Iterator& b) const { return i != b.i; }
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size_}; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t offsets_[kCapacity] = {};  // kNone: not known
  uint8_t keys_[kCapacity] = {};      // key indices
  uint8_t size_ = 0;
};

// One tensor's entry, converted to the IR's encoding. Facts the format leaves
// out are settled against the tensor when applied (see ResolveEntry).
struct Entry {
  std::string name;
  Encoding encoding;  // block_sizes empty when the file does not determine them
  uint64_t offset = Diag::kNoOffset;  // byte offset of the entry's JSON value
  // Blockwise (per-block, LPBQ): shape of the scale grid when the file gives
  // it (2.0.0 nested arrays), row-major over the tensor's dims; empty when the
  // file stores flat arrays (1.0.0).
  std::vector<int64_t> grid_shape;
  int64_t block_size = 0;     // blockwise: block size along the block axis as written
  int32_t negative_axis = 0;  // a negative "axis" as written (-1 = last), normalised when applied
  int32_t channel_axis = -1;  // blockwise: channel axis when known (1.0.0 array order)
  Section section = Section::kUnspecified;
  // The file stores no axis (0.6.1/1.0.0 per-channel and blockwise; 2.0.0
  // 1-D y_scale without "axis"): it is inferred from the tensor's consumer.
  bool axis_inferred = false;
  FieldOffsets field_offsets;

  uint64_t FieldOffset(std::string_view ir_field) const;  // maps IR field names to JSON keys
  std::string JsonField(std::string_view ir_field) const;  // "block_int_scales[2]" -> "per_block_int_scale[2]"
};

struct File {
  std::string path;  // as given, used in messages
  Version version = Version::kAuto;
  std::string version_string;  // as written; "" if absent
  bool bare_list = false;      // 2.0.0 without the {"version","encodings"} wrapper
  std::vector<Entry> entries;
  std::shared_ptr<const SourceText> source;  // for locating diagnostics
  size_t windows = 0;  // windows its list was parsed in (ReadOptions::window_bytes); 0 = read whole

  // Fills d.line/d.column from d.offset.
  void Locate(Diag* d) const;

  const Entry* Find(std::string_view name) const;
};

struct ReadOptions {
  Version version = Version::kAuto;    // force a version instead of detecting it
  uint64_t max_bytes = uint64_t{1} << 30;  // file size limit (1 GiB)
  uint32_t max_depth = 64;              // JSON nesting limit (the formats need <= 8)
  uint32_t max_rank = 8;                // nesting of one numeric array
  bool keep_going = true;               // keep the good entries when some are bad
  // A 2.0.0 file of at least 4 windows is parsed in windows of about this many
  // bytes of whole entries, on up to `threads` threads (0: up to 4, as the
  // machine has cores), instead of in one document; 0 reads every file whole.
  // The result and the diagnostics are the same either way.
  uint64_t window_bytes = uint64_t{64} << 10;
  uint32_t threads = 0;
};

// Reads an encodings file. Syntax errors, unreadable files and limits fail the
// call (Status) and are also appended to `diags` with their location. Problems
// in single entries are appended to `diags` and the entry is dropped; with
// keep_going = false any error fails the call.
Result<File> ReadEncodingsFile(const std::string& path, const ReadOptions& options, Diags* diags);
Result<File> ReadEncodingsBytes(const void* data, size_t size, const std::string& display_name,
                                const ReadOptions& options, Diags* diags);

// ---------------------------------------------------------------------------
// Applying to a graph
// ---------------------------------------------------------------------------

struct ApplyOptions {
  bool allow_unmatched = false;  // names absent from the graph are warnings, not errors
  bool keep_going = false;       // apply the good entries even if others fail
  bool report_missing = true;    // one note listing float tensors left without an encoding
  // When set, entries naming no tensor of the graph are copied here (with the
  // file's path, version and source, so a later apply locates its messages)
  // instead of reported: convert applies them again after its rewrites,
  // whose tensors (a folded weight) an exported encodings file names.
  File* unmatched_out = nullptr;
  // Entries are checked against their tensors on up to this many threads (0:
  // up to 4, as the machine has cores) when there are many; the result and
  // the order of the diagnostics do not depend on it.
  uint32_t threads = 0;
};

struct ApplyStats {
  size_t applied = 0;
  size_t replaced_model_encodings = 0;  // overrides that replaced a Q-DQ encoding
  size_t unmatched = 0;
  size_t failed = 0;
  size_t tensors_without_encoding = 0;
  // ReadAndApplyEncodingsFile: windows of the file applied as they were
  // read (0: the file was read, then applied).
  size_t streamed_windows = 0;
};

// The channel axis and block axis a weight has for its consumer (conv:
// output channels 0 / block 1; TransposeConv: 1 / 0; FullyConnected [N,K]:
// 0 / 1; MatMul [K,N]: 1 / 0). nullopt if the tensor feeds no such op.
struct WeightAxes {
  int32_t channel_axis;
  int32_t block_axis;
  std::string consumer;  // "Conv2d 'conv1'"
};
std::optional<WeightAxes> InferWeightAxes(const Graph& graph, TensorId tensor);

// The IR encoding for `entry` on `tensor`: infers missing axes, derives
// per-dim block sizes from the tensor shape, reorders 1.0.0 arrays, validates.
// Problems are appended to `diags` (located in `file`).
std::optional<Encoding> ResolveEntry(const File& file, const Entry& entry, const Graph& graph, TensorId tensor,
                                     Diags* diags);

// Applies every entry whose name is a tensor of `graph` (exact, byte-wise
// match): overrides take precedence over encodings from the model's Q-DQ
// nodes, and every applied encoding has overridden = true. Unmatched names
// are reported with "did you mean" suggestions. Without keep_going the graph
// is left unchanged when any entry fails. Fails (Status) when an error
// diagnostic was added.
Result<ApplyStats> ApplyEncodings(const File& file, Graph* graph, const ApplyOptions& options, Diags* diags);
// The same, moving each entry's encoding into the graph instead of copying
// it (an LLM file's block tables are tens of MB): for a caller that is done
// with `file` afterwards. Its names, offsets and source stay for messages;
// its entries' encodings are left empty.
Result<ApplyStats> ApplyEncodings(File&& file, Graph* graph, const ApplyOptions& options, Diags* diags);

// ReadEncodingsFile followed by ApplyEncodings(File&&) (what convert does
// with --quantization_overrides): the same graph, result and diagnostics.
// The entries of a large 2.0.0 file are applied as the reader's workers read
// them, window by window, and never all held at once (a 100 MB file: ~85 MB
// of entries and names a fresh process no longer allocates). A file for which
// that could give another outcome (an entry with an error, a name given
// twice, a name the graph lacks where that is an error) leaves the graph as
// it was and is read and applied the usual way.
Result<ApplyStats> ReadAndApplyEncodingsFile(const std::string& path, const ReadOptions& read_options, Graph* graph,
                                             const ApplyOptions& apply_options, Diags* diags);

// Closest names to `name` among `candidates` by edit distance (at most
// max(2, |name|/3) edits), best first.
std::vector<std::string> SuggestNames(std::string_view name, const std::vector<std::string_view>& candidates,
                                      size_t max_results = 1);

}  // namespace qairt::encodings
