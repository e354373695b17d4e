// Writing encodings files: QAIRT 2.0.0, AIMET 1.0.0 and AIMET 0.6.1.
//
// Output is deterministic: entries in the order given, keys in a fixed order,
// floats in the shortest form that reads back to the same float32 (doubles
// for 0.6.1's min/max), no dependence on the process locale. Where a format
// cannot hold an encoding (Array-Of or float offsets in 0.6.1, Array-Of in
// 1.0.0, bfloat16 in 2.0.0, ...) the write fails naming tensor and reason, and
// nothing is written.
#pragma once

#include <string>
#include <vector>

#include "encodings/encodings.h"

namespace qairt::encodings {

// One entry per tensor of `graph` that has an encoding, in tensor order, with
// the section (param for static tensors), block-grid shape and channel axis
// filled in from the tensor.
std::vector<Entry> CollectEntries(const Graph& graph);

// The file's entries after ApplyEncodings on `graph`: entries in file order,
// their encodings and shapes taken from the graph (so axes are inferred and
// blockwise arrays are in the IR's order). Entries whose tensor is missing or
// has no encoding are kept as read.
std::vector<Entry> EntriesAfterApply(const File& file, const Graph& graph);

struct WriteOptions {
  Version version = Version::kV2_0_0;
  std::string output_name;  // used in diagnostics
};

// Serializes `entries`. Format limits are errors (Status and diags); lossy
// but representable cases (strict symmetry in 2.0.0, an unknown per-channel
// axis) are warnings.
Result<std::string> WriteEncodings(const std::vector<Entry>& entries, const WriteOptions& options, Diags* diags);

// Shortest decimal form that reads back to the same value (locale-free).
std::string FormatFloat(float v);
std::string FormatDouble(double v);

}  // namespace qairt::encodings
