// Argument parsing shared by the CLI commands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qairt_cli {

// A non-negative decimal integer (the whole string).
bool ParseInt(const std::string& s, int64_t* out);
// "1,3,224,224" -> {1, 3, 224, 224}; false on an empty list or a bad entry.
bool ParseDims(const std::string& s, std::vector<int64_t>* out);

}  // namespace qairt_cli
