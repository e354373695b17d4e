#include "ir/diagnostic.h"

namespace qairt {

std::string JoinMessages(const Diagnostics& d) {
  std::string s;
  for (const Diagnostic& x : d) {
    if (!s.empty()) s += '\n';
    if (x.severity == Severity::kWarning) s += "warning: ";
    if (x.severity == Severity::kNote) s += "note: ";
    s += x.message;
  }
  return s;
}

}  // namespace qairt
