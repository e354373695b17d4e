// The one record of a problem found anywhere in the library — an encodings
// file, graph validation, target processing, a conversion stage — and its
// rendering as text, JSON or SARIF 2.1.0. Every producer fills the fields it
// knows; the C ABI hands all of them out through one list type
// (qairt_diagnostics_t), so an IDE plugin reads every diagnostic the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qairt {

// Values equal enum qairt_severity.
enum class Severity : uint32_t { kError = 1, kWarning = 2, kNote = 3 };

// Values equal enum qairt_report_format.
enum class ReportFormat : uint32_t { kText = 1, kJson = 2, kSarif = 3 };

// `message` is the bare sentence; Format() prefixes location and subject.
struct Diag {
  Severity severity = Severity::kError;
  std::string code;  // stable rule id, e.g. "json-duplicate-key", "no-kernel" (SARIF ruleId)
  std::string file;  // source file as given by the caller; "" if none
  uint64_t offset = kNoOffset;
  uint32_t line = 0;    // 1-based; 0 = no location
  uint32_t column = 0;  // 1-based, in Unicode code points
  std::string op;       // op name; "" if none
  std::string tensor;   // tensor name; "" if none
  std::string field;    // e.g. "y_scale[3]", "inputs[1]"; "" if none
  std::string message;
  std::string suggestion;  // "did you mean" candidate, "" if none

  static constexpr uint64_t kNoOffset = UINT64_MAX;
  // "file:line:col: error: op 'o': tensor 'x': field 'f': message (did you mean 'z'?)",
  // each part only when known.
  std::string Format() const;
};
using Diags = std::vector<Diag>;

size_t CountSeverity(const Diags& d, Severity severity);
inline size_t CountErrors(const Diags& d) { return CountSeverity(d, Severity::kError); }

// Text: one Format() line each plus "N errors, N warnings, N notes".
// JSON: {"errors":N,"warnings":N,"notes":N,"diagnostics":[...]}.
// SARIF 2.1.0: one run; one rule per code in first-use order, described from
// the catalogue below; a physical location when the file is known, a logical
// one for the op or tensor.
std::string RenderDiagnostics(const Diags& diags, ReportFormat format);

// The catalogue of rule ids: one sentence per code, shown by SARIF viewers.
// Unknown codes get a generic description.
std::string_view RuleDescription(std::string_view code);

}  // namespace qairt
