// The quantizer's logs in the spec's formats ("Debugging"): the TRACE graph
// snapshot, the INFO CSV and the stats summary.
#pragma once

#include <string>
#include <string_view>

#include "passes/session.h"

namespace qairt::pass {

// "======== GRAPH: <when> ========" + every tensor with [consumers],
// [producer], [notes], datatype and encoding (or UNDEFINED ENCODING).
std::string GraphSnapshot(const Session& s, std::string_view when);

// One line per encoding for TRACE: "{ bw: 8, scale: [..], offset: [..], is_sym: F, is_fxp: T, dtype: u8, overridden: T }".
std::string EncodingTraceText(const std::optional<Encoding>& e);

// One row per modified or injected tensor.
std::string InfoCsv(const Session& s);

// [MISSING ENC.], [BIAS FXP], [DUP. BIASES], [ADAPTED OPS], [COMP. ENC.],
// [CONVERTS], [PRUNED CONVERTS].
std::string StatsSummary(const Session& s);

}  // namespace qairt::pass
