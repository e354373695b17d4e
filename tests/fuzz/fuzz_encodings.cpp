// libFuzzer target: encodings JSON (QAIRT 2.0.0, AIMET 1.0.0, 0.4-0.6.1):
// read (lenient and strict), apply onto a small imported graph (default and
// ALLOW_UNMATCHED|KEEP_GOING), write the result back (2.0.0) and render the
// diagnostics. The input is also read and applied in one pass
// (ReadAndApplyEncodingsFile, with windows small enough that any list of
// entries streams) and must give what reading, then applying gives: the same
// status, diagnostics and encodings (a difference aborts, as a finding).
// Seeds: tests/fuzz/corpus/encodings (tests/data/encodings and files naming
// the graph's tensors).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "encodings/encodings.h"
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

// Status, diagnostics and every tensor's encoding, as text.
std::string Outcome(const qairt::Result<qairt::encodings::ApplyStats>& r, const qairt::encodings::Diags& diags,
                    const qairt::Graph& g) {
  std::string out = r.ok() ? fmt::format("ok applied={} unmatched={} failed={}\n", r.value().applied,
                                         r.value().unmatched, r.value().failed)
                           : r.status().message() + "\n";
  for (const qairt::Diag& d : diags) out += d.Format() + "|" + d.suggestion + "\n";
  for (qairt::TensorId t = 0; t < g.tensor_count(); ++t)
    if (g.tensor(t).encoding) out += g.tensor(t).name + ": " + g.tensor(t).encoding->ToString() + "\n";
  return out;
}

void CheckOnePass(const uint8_t* data, size_t size) {
  namespace enc = qairt::encodings;
  static const std::string path = "/tmp/fuzz_encodings_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  for (uint32_t flags : {0u, 1u, 2u}) {
    enc::ReadOptions ro;
    ro.window_bytes = 16;
    ro.threads = 2;
    enc::ApplyOptions ao;
    ao.allow_unmatched = flags == 1;
    ao.keep_going = flags == 2;
    qairt::Graph usual = BaseGraph()->graph, one_pass = BaseGraph()->graph;
    enc::Diags usual_diags, one_pass_diags;
    auto file = enc::ReadEncodingsFile(path, ro, &usual_diags);
    const auto usual_result = file.ok() ? enc::ApplyEncodings(std::move(file.value()), &usual, ao, &usual_diags)
                                        : qairt::Result<enc::ApplyStats>(file.status());
    const auto one_pass_result = enc::ReadAndApplyEncodingsFile(path, ro, &one_pass, ao, &one_pass_diags);
    const std::string a = Outcome(usual_result, usual_diags, usual), b = Outcome(one_pass_result, one_pass_diags, one_pass);
    if (a != b) {
      std::fprintf(stderr, "read then apply:\n%s\nread and apply in one pass:\n%s\n", a.c_str(), b.c_str());
      std::abort();
    }
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
  CheckOnePass(data, size);
  return 0;
}
