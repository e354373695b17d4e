// The "what is in this model and will it convert" report of `qairt inspect`
// and `qairt convert --dry_run`, as JSON (for tools and IDEs) and as text.
#pragma once

#include <string>

#include "ir/graph.h"
#include "ir/import.h"

namespace qairt {

struct ImportSummaryInput {
  std::string model;                  // path or "<bytes>"
  const ImportReport* report;     // required
  const Graph* graph;                 // null when the import failed
  bool require_static = false;        // dynamic dims count as errors (dry run)
};

// True when the import succeeded and (if required) every dim is static.
bool ImportSucceeded(const ImportSummaryInput& in);
std::string ImportReportJson(const ImportSummaryInput& in);
std::string ImportReportText(const ImportSummaryInput& in);

}  // namespace qairt
