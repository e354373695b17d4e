// libFuzzer target: encodings JSON (QAIRT 2.0.0, AIMET 1.0.0, 0.4-0.6.1):
// read (lenient and strict), apply onto a small imported graph (default and
// ALLOW_UNMATCHED|KEEP_GOING), write the result back (2.0.0) and render the
// diagnostics. Seeds: tests/fuzz/corpus/encodings (tests/data/encodings and
// files naming the graph's tensors).
#include "fuzz_models.h"
#include "fuzz_util.h"
#include "qairt/qairt_encodings.h"
#include "qairt/qairt_import.h"

namespace {

qairt_graph_t* BaseGraph() {
  static qairt_graph_t* graph = [] {
    const std::string bytes = qairt_fuzz::SmallConvModel();
    qairt_graph_t* g = nullptr;
    if (!qairt_fuzz::Check(qairt_import_onnx_bytes(bytes.data(), bytes.size(), nullptr, &g, nullptr))) std::abort();
    return g;
  }();
  return graph;
}

void Render(const qairt_encodings_diagnostics_t* diags) {
  for (uint32_t format = QAIRT_REPORT_TEXT; format <= QAIRT_REPORT_SARIF; ++format) {
    size_t len = 0;
    qairt_fuzz::Check(qairt_encodings_diagnostics_render(diags, format, nullptr, 0, &len));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qairt_encodings_diagnostics_t* diags = nullptr;
  if (!qairt_fuzz::Check(qairt_encodings_diagnostics_create(&diags))) std::abort();
  for (uint32_t strict = 0; strict < 2; ++strict) {
    qairt_encodings_load_options lo;
    qairt_encodings_load_options_init(&lo);
    lo.flags = strict ? QAIRT_ENCODINGS_LOAD_STRICT : 0;
    qairt_encodings_t* enc = nullptr;
    if (qairt_fuzz::Check(qairt_encodings_load_bytes(data, size, "fuzz.json", &lo, diags, &enc))) {
      for (size_t i = 0; i < qairt_encodings_entry_count(enc); ++i) {
        qairt_encoding_t* e = nullptr;
        if (qairt_fuzz::Check(qairt_encodings_entry_encoding(enc, i, &e))) qairt_encoding_destroy(e);
      }
      for (uint32_t flags : {0u, QAIRT_ENCODINGS_APPLY_ALLOW_UNMATCHED | QAIRT_ENCODINGS_APPLY_KEEP_GOING}) {
        qairt_graph_t* g = nullptr;
        if (!qairt_fuzz::Check(qairt_graph_clone(BaseGraph(), &g))) std::abort();
        qairt_encodings_apply_options ao;
        qairt_encodings_apply_options_init(&ao);
        ao.flags = flags;
        if (qairt_fuzz::Check(qairt_encodings_apply(enc, g, &ao, diags))) {
          size_t len = 0;
          qairt_fuzz::Check(qairt_encodings_write_bytes(nullptr, g, nullptr, nullptr, nullptr, 0, &len));
        }
        qairt_graph_destroy(g);
      }
      size_t len = 0;
      qairt_fuzz::Check(qairt_encodings_write_bytes(enc, nullptr, nullptr, nullptr, nullptr, 0, &len));
      qairt_encodings_destroy(enc);
    }
    Render(diags);
    qairt_encodings_diagnostics_clear(diags);
  }
  qairt_encodings_diagnostics_destroy(diags);
  return 0;
}
