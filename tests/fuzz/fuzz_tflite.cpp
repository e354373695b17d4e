// libFuzzer target for the TFLite parser (verifier, semantic pass, lowering).
// Built with the other targets in tests/fuzz (-DQAIRT_FUZZ=ON, clang); see
// docs/TESTING.md. Seeds: tests/fuzz/corpus/tflite (earlier findings).
// Any input must give a graph or an error Status: never a crash, a sanitizer
// report, a hang or an abort. A valid import must also validate cleanly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "tflite/tflite_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qairt::ImportOptions options;
  qairt::ImportReport report;
  auto graph = qairt::ImportTfliteBytes(data, size, options, &report);
  if (graph.ok() && !graph.value().Validate().empty()) std::abort();
  if (!graph.ok() && graph.status().message().empty()) std::abort();
  return 0;
}
