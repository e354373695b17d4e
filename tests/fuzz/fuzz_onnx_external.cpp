// libFuzzer target: ONNX import with external data. The input is
//   [u32 little-endian model length][model bytes][bytes of weights.bin]
// The model is written to model.onnx in a scratch folder next to weights.bin
// (and a copy sub/w.bin) and imported from the file, so external-data
// locations, offsets and lengths, path containment and mmapping are all
// exercised against real files. Seeds: tests/fuzz/corpus/onnx_external.
#include <string>

#include "fuzz_util.h"
#include "qairt/qairt_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t model_len = 0;
  std::memcpy(&model_len, data, 4);
  data += 4;
  size -= 4;
  if (model_len > size) model_len = static_cast<uint32_t>(size);
  static const std::string dir = qairt_fuzz::ScratchDir();
  static const bool made = ::mkdir((dir + "/sub").c_str(), 0755) == 0;
  (void)made;
  qairt_fuzz::WriteFile(dir + "/model.onnx", data, model_len);
  qairt_fuzz::WriteFile(dir + "/weights.bin", data + model_len, size - model_len);
  qairt_fuzz::WriteFile(dir + "/sub/w.bin", data + model_len, size - model_len);

  qairt_graph_t* graph = nullptr;
  const std::string path = dir + "/model.onnx";
  if (qairt_fuzz::Check(qairt_import_onnx_file(path.c_str(), nullptr, &graph, nullptr))) {
    qairt_diagnostics_t* diags = nullptr;
    if (!qairt_fuzz::Check(qairt_graph_validate(graph, &diags))) std::abort();
    if (qairt_diagnostics_count(diags) != 0) std::abort();
    qairt_diagnostics_destroy(diags);
    // Touch every static byte (mapped from the files above).
    for (size_t t = 0; t < qairt_graph_tensor_count(graph); ++t) {
      const void* bytes = nullptr;
      size_t n = 0;
      if (qairt_fuzz::Check(qairt_graph_tensor_data(graph, static_cast<qairt_tensor_id>(t), &bytes, &n))) {
        volatile uint8_t sum = 0;
        for (size_t i = 0; i < n; ++i) sum = sum + static_cast<const uint8_t*>(bytes)[i];
      }
    }
  }
  qairt_graph_destroy(graph);
  return 0;
}
