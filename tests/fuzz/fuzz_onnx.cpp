// libFuzzer target: ONNX import from bytes (protobuf parse, initializer
// decoding, lowering, Q-DQ folding, constant folding, validation).
// A graph that imports must validate cleanly; a failure must be a status
// with a message. Models referencing external data are rejected (no folder).
#include "fuzz_util.h"
#include "qairt/qairt_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qairt_graph_t* graph = nullptr;
  qairt_import_report_t* report = nullptr;
  const bool ok = qairt_fuzz::Check(qairt_import_onnx_bytes(data, size, nullptr, &graph, &report));
  if (ok) {
    qairt_diagnostics_t* diags = nullptr;
    if (!qairt_fuzz::Check(qairt_graph_validate(graph, &diags))) std::abort();
    if (qairt_diagnostics_count(diags) != 0) std::abort();
    qairt_diagnostics_destroy(diags);
    size_t len = 0;
    qairt_fuzz::Check(qairt_graph_summary_json(graph, nullptr, 0, &len));
  }
  if (report) {
    size_t len = 0;
    qairt_fuzz::Check(qairt_import_report_json(report, nullptr, 0, &len));
  }
  qairt_import_report_destroy(report);
  qairt_graph_destroy(graph);
  return 0;
}
