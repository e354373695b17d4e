// Legalization for a target (legalize.cpp): ops the target has no kernel for,
// rewritten into equivalent ops it has. Runs before target-specific
// processing (pass::Process calls it; the CLI calls it first to report it).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"
#include "target/target_descriptor.h"

namespace qairt::pass {

struct LegalizeReport {
  size_t changed = 0;                       // ops rewritten
  std::map<std::string, size_t> by_type;    // "Conv1d -> Conv2d" -> count
  std::vector<std::string> notes;           // one line per op
};

// Rewrites, in place, the ops of `graph` that `target` cannot run but can run
// in an equivalent form (Conv1d / TransposeConv1d as their 2-D ops,
// ReduceSumSquare as a square and a ReduceSum).
// Ops with no such form are left for kernel selection to report.
Status LegalizeForTarget(Graph* graph, const target::Target& target, LegalizeReport* report);
// "legalized for htp_v73: 2 Conv1d -> Conv2d ops (...)", or "" when nothing changed.
std::string LegalizeSummary(const LegalizeReport& report, std::string_view target_name);

}  // namespace qairt::pass
