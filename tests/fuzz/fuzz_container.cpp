// libFuzzer target: the .qairt container reader (size/identifier checks,
// FlatBuffers verifier, semantic checks, graph reconstruction). A container
// that loads is read through every accessor, its graph validated and
// serialized again, and the new bytes must load too; its HTML report (with
// the container's names, kernels and reasons on the page) is rendered.
// Seeds: tests/fuzz/corpus/container (written from small graphs).
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_report.h"

namespace {

void ReadAll(const qairt_container_t* c, bool reserialize) {
  qairt_container_info info{};
  info.struct_size = sizeof info;
  if (!qairt_fuzz::Check(qairt_container_get_info(c, &info))) std::abort();
  for (size_t i = 0; i < info.num_options; ++i) {
    qairt_container_option o{};
    if (!qairt_fuzz::Check(qairt_container_option_at(c, i, &o))) std::abort();
    qairt_container_option found{};
    qairt_fuzz::Check(qairt_container_find_option(c, o.key, &found));
  }
  for (size_t i = 0; i < info.num_op_annotations; ++i) {
    qairt_container_op_annotation a{};
    if (!qairt_fuzz::Check(qairt_container_op_annotation_at(c, i, &a))) std::abort();
  }
  for (size_t i = 0; i < info.num_tensor_notes; ++i) {
    qairt_container_tensor_note n{};
    if (!qairt_fuzz::Check(qairt_container_tensor_note_at(c, i, &n))) std::abort();
  }
  qairt_graph_t* g = nullptr;
  if (!qairt_fuzz::Check(qairt_container_get_graph(c, &g))) return;
  qairt_diagnostics_t* diags = nullptr;
  // On QAIRT_VALIDATION_FAILED the diagnostics are filled too: free them either way.
  const bool valid = qairt_fuzz::Check(qairt_graph_validate(g, &diags)) && qairt_diagnostics_count(diags) == 0;
  qairt_diagnostics_destroy(diags);
  qairt_html_report_options ro;
  qairt_html_report_options_init(&ro);
  ro.container = c;
  size_t length = 0;
  if (qairt_fuzz::Check(qairt_html_report_render(g, &ro, nullptr, 0, &length))) {
    std::string html(length + 1, '\0');
    // Rendering is deterministic: the size just reported must do.
    if (!qairt_fuzz::Check(qairt_html_report_render(g, &ro, html.data(), html.size(), &length))) std::abort();
  }
  if (valid && reserialize) {
    size_t n = 0;
    if (qairt_fuzz::Check(qairt_container_write_bytes(g, nullptr, nullptr, 0, &n))) {
      std::vector<uint8_t> bytes(n);
      if (!qairt_fuzz::Check(qairt_container_write_bytes(g, nullptr, bytes.data(), n, &n))) std::abort();
      qairt_container_t* again = nullptr;
      // What the writer produces the reader must take.
      if (!qairt_fuzz::Check(qairt_container_load_bytes(bytes.data(), n, &again))) std::abort();
      ReadAll(again, false);
      qairt_container_destroy(again);
    }
  }
  qairt_graph_destroy(g);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qairt_container_t* c = nullptr;
  if (qairt_fuzz::Check(qairt_container_load_bytes(data, size, &c))) ReadAll(c, true);
  qairt_container_destroy(c);
  return 0;
}
