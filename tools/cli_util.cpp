#include "cli_util.h"

#include <cerrno>
#include <cstdlib>

namespace qairt_cli {

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

bool ParseDims(const std::string& s, std::vector<int64_t>* out) {
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    int64_t v;
    if (!ParseInt(s.substr(start, comma - start), &v)) return false;
    out->push_back(v);
    start = comma + 1;
  }
  return !out->empty();
}

}  // namespace qairt_cli
