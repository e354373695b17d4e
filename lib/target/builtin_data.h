// The descriptors compiled from targets/builtin/*.json at build time and the
// schema text, embedded by targets/cmake/embed.cmake (builtin_data.cpp).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace qairt::target {

struct BuiltinBlob {
  const char* name;           // file stem, e.g. "htp_v73"
  const unsigned char* data;  // FlatBuffer, 16-byte aligned
  size_t size;
};

// Sorted by name.
std::span<const BuiltinBlob> BuiltinBlobs();
std::string_view TargetSchemaText();

}  // namespace qairt::target
