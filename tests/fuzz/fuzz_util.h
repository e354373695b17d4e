// Shared helpers of the libFuzzer targets in tests/fuzz (see docs/TESTING.md).
// Every target feeds untrusted bytes to one parser and requires a result or
// an error status with a message: a crash, a sanitizer report, a hang, an
// abort or an error without a message is a finding.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "qairt/qairt.h"
#include "qairt/qairt_import.h"

namespace qairt_fuzz {

// A scratch folder per fuzzing process (removed by the OS's tmp cleaning;
// files are overwritten on every input).
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/qairt_fuzz_XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (!d) std::abort();
    return std::string(d);
  }();
  return dir;
}

inline void WriteFile(const std::string& path, const void* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

// A failing call must carry a code and a message; frees the status.
// Returns true if the call succeeded.
inline bool Check(qairt_status_t* s) {
  if (!s) return true;
  const char* msg = qairt_status_message(s);
  if (qairt_status_code(s) == QAIRT_OK || !msg || !*msg) std::abort();
  // A bug in qairt reported as such is a finding too.
  if (qairt_status_code(s) == QAIRT_INTERNAL) std::abort();
  qairt_status_free(s);
  return false;
}

// `onnx_bytes` imported through the C API (the base graph a target clones
// for each input); aborts if that fails, which would be a bug of the target.
inline qairt_graph_t* ImportBaseGraph(const std::string& onnx_bytes) {
  qairt_graph_t* g = nullptr;
  if (!Check(qairt_import_onnx_bytes(onnx_bytes.data(), onnx_bytes.size(), nullptr, &g, nullptr))) std::abort();
  return g;
}

}  // namespace qairt_fuzz
