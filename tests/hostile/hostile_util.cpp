#include "hostile/hostile_util.h"

#include <memory>

#include "qairt/qairt_calib.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_encodings.h"
#include "qairt/qairt_import.h"
#include "qairt/qairt_process.h"
#include "qairt/qairt_target.h"

namespace qairt::hostile {

namespace {

// Takes ownership of a status; true if it is an error (then filled in).
bool Failed(qairt_status_t* s, Outcome* out) {
  if (!s) return false;
  out->code = qairt_status_code(s);
  out->message = qairt_status_message(s);
  qairt_status_free(s);
  return true;
}

template <typename T, void (*Destroy)(T*)>
struct Owned {
  T* p = nullptr;
  ~Owned() { Destroy(p); }
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Outcome Convert(const Job& job) {
  Outcome out;
  Owned<qairt_graph_t, qairt_graph_destroy> graph;
  Owned<qairt_import_report_t, qairt_import_report_destroy> report;
  auto import = EndsWith(job.model, ".tflite") ? qairt_import_tflite_file : qairt_import_onnx_file;
  if (Failed(import(job.model.c_str(), nullptr, &graph.p, &report.p), &out)) return out;

  if (!job.encodings.empty()) {
    qairt_encodings_load_options lo;
    qairt_encodings_load_options_init(&lo);
    lo.flags = QAIRT_ENCODINGS_LOAD_STRICT;
    Owned<qairt_encodings_t, qairt_encodings_destroy> enc;
    if (Failed(qairt_encodings_load_file(job.encodings.c_str(), &lo, nullptr, &enc.p), &out)) return out;
    Owned<qairt_encodings_diagnostics_t, qairt_encodings_diagnostics_destroy> diags;
    REQUIRE(qairt_encodings_diagnostics_create(&diags.p) == nullptr);
    if (Failed(qairt_encodings_apply(enc.p, graph.p, nullptr, diags.p), &out)) {
      // The status sums up; the diagnostics name tensor and field.
      size_t len = 0;
      REQUIRE(qairt_encodings_diagnostics_render(diags.p, QAIRT_REPORT_TEXT, nullptr, 0, &len) == nullptr);
      std::string text(len + 1, '\0');
      REQUIRE(qairt_encodings_diagnostics_render(diags.p, QAIRT_REPORT_TEXT, text.data(), text.size(), &len) == nullptr);
      text.resize(len);
      out.message += "\n" + text;
      return out;
    }
  }

  if (!job.input_list.empty()) {
    qairt_calibration_options co;
    qairt_calibration_options_init(&co);
    co.num_threads = job.num_threads;
    if (Failed(qairt_calibrate_input_list(graph.p, job.input_list.c_str(), &co, nullptr), &out)) return out;
  }

  Owned<qairt_target_t, qairt_target_destroy> target;
  if (Failed(qairt_target_load(job.target.c_str(), &target.p), &out)) return out;
  qairt_process_options po;
  qairt_process_options_init(&po);
  po.target = target.p;
  Owned<qairt_process_result_t, qairt_process_result_destroy> result;
  if (Failed(qairt_process(graph.p, &po, &result.p), &out)) return out;
  if (qairt_process_result_error_count(result.p) != 0) {
    out.code = QAIRT_VALIDATION_FAILED;
    for (size_t i = 0; i < qairt_process_result_error_count(result.p); ++i)
      out.message += std::string(qairt_process_result_error(result.p, i)) + "\n";
    return out;
  }

  if (!job.out_container.empty()) {
    qairt_container_write_options wo;
    qairt_container_write_options_init(&wo);
    wo.target_name = job.target.c_str();
    size_t n = 0;
    wo.options = qairt_process_result_options(result.p, &n);
    wo.num_options = n;
    if (Failed(qairt_container_write_file(graph.p, job.out_container.c_str(), &wo), &out)) return out;
  }
  if (!job.out_encodings.empty()) {
    if (Failed(qairt_encodings_write_file(nullptr, graph.p, job.out_encodings.c_str(), nullptr, nullptr), &out))
      return out;
  }
  return out;
}

void ExpectRejected(const Sandbox& sb, const Job& job, qairt_code_t code, const std::vector<std::string>& needles,
                    const std::vector<std::string>& out_files) {
  const Outcome o = Convert(job);
  INFO("message: " << o.message);
  CHECK(o.code == code);
  for (const std::string& n : needles) CHECK(o.message.find(n) != std::string::npos);
  // Messages are bounded: a hostile name does not make a megabyte of text.
  CHECK(o.message.size() < 64 * 1024);
  CHECK(sb.OutFiles() == out_files);
}

}  // namespace qairt::hostile
