// Shared by the container's writer (container_writer.cpp) and reader
// (container.cpp).
#pragma once

#include <string>

#include "container/container.h"

namespace qairt::container::internal {

// The metadata's own checks: every op / tensor it names exists, option keys
// are unique and non-empty. `prefix` starts each message.
Status CheckMeta(const Graph& g, const ContainerMeta& m, const std::string& prefix);
// Error diagnostics, one per line (for a message).
std::string ErrorLines(const Diagnostics& diags);

}  // namespace qairt::container::internal
