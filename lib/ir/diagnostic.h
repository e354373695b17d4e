// A problem found in a graph or an encoding, reported with enough structure
// for an IDE (kind, op/tensor id, field) and a sentence for humans.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/diagnostic.h"

namespace qairt {

inline constexpr uint32_t kInvalidId = 0xFFFFFFFFu;

// Values equal enum qairt_diag_kind.
enum class DiagKind : uint32_t {
  kCycle = 1,
  kDuplicateTensorName = 2,
  kDuplicateOpName = 3,
  kDanglingTensor = 4,
  kMissingProducer = 5,
  kMultipleProducers = 6,
  kDTypeMismatch = 7,
  kShapeMismatch = 8,
  kArity = 9,
  kAttribute = 10,
  kUnknownOpType = 11,
  kInvalidEncoding = 12,
  kNoOutputs = 13,
  kStaticData = 14,
};

struct Diagnostic {
  Severity severity = Severity::kError;
  DiagKind kind = DiagKind::kAttribute;
  uint32_t op = kInvalidId;
  uint32_t tensor = kInvalidId;
  std::string field;
  std::string message;
};

using Diagnostics = std::vector<Diagnostic>;

inline bool HasErrors(const Diagnostics& d) {
  for (const Diagnostic& x : d)
    if (x.severity == Severity::kError) return true;
  return false;
}

// All messages, one per line (used as the text of a validation Status).
std::string JoinMessages(const Diagnostics& d);

}  // namespace qairt
