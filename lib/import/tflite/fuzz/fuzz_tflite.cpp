// libFuzzer target for the TFLite parser (reliability suite):
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
//         -DQAIRT_FUZZ=ON -DQAIRT_SANITIZE=address,undefined
//   cmake --build build-fuzz --target fuzz_tflite
//   build-fuzz/lib/import/tflite/fuzz_tflite -max_len=65536 corpus/
// Any input must give a graph or an error Status: never a crash, a sanitizer
// report, a hang or an abort. A valid import must also validate cleanly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "import/tflite/tflite_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qairt::OnnxImportOptions options;
  qairt::OnnxImportReport report;
  auto graph = qairt::ImportTfliteBytes(data, size, options, &report);
  if (graph.ok() && !graph.value().Validate().empty()) std::abort();
  if (!graph.ok() && graph.status().message().empty()) std::abort();
  return 0;
}
