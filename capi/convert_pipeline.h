// The convert pipeline's pieces shared by its files (capi/convert.cpp, the
// stages; capi/convert_overrides.cpp, the quantization overrides): the
// result object behind qairt_convert_result_t and the Pipeline class.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capi/capi_internal.h"
#include "encodings/encodings.h"
#include "qairt/qairt_analyze.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_convert.h"
#include "qairt/qairt_encodings.h"
#include "qairt/qairt_process.h"

struct qairt_convert_result_t {
  std::string summary;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  std::string log;
  qairt_diagnostics_t diagnostics;  // the errors and warnings as records, in order
  qairt_process_result_t* process = nullptr;
  qairt_compare_report_t* accuracy = nullptr;
  std::vector<std::pair<std::string, double>> phases;  // stage, wall seconds, in the order they ran
  ~qairt_convert_result_t() {
    qairt_process_result_destroy(process);
    qairt_compare_report_destroy(accuracy);
  }

  // An error or warning of a stage that has no finer rule ids: the stage is
  // the record's code ("quantization overrides" -> "quantization-overrides").
  void AddError(std::string_view stage, const std::string& message, bool record = true) {
    errors.push_back(std::string(stage) + ": " + message);
    if (record) AddRecord(qairt::Severity::kError, stage, message);
  }
  void AddWarning(std::string_view stage, const std::string& message) {
    warnings.push_back(message);
    AddRecord(qairt::Severity::kWarning, stage, message);
  }
  void AddPhase(const char* phase, double seconds) {
    if (!phases.empty() && phases.back().first == phase) {
      phases.back().second += seconds;
    } else {
      phases.emplace_back(phase, seconds);
    }
  }
  void AddRecords(const qairt::Diags& records) {
    diagnostics.diags.insert(diagnostics.diags.end(), records.begin(), records.end());
  }

 private:
  void AddRecord(qairt::Severity severity, std::string_view stage, const std::string& message) {
    qairt::Diag d;
    d.severity = severity;
    d.code = stage;
    for (char& c : d.code)
      if (c == ' ') c = '-';
    d.message = message;
    diagnostics.diags.push_back(std::move(d));
  }
};

namespace qairt::capi {

// Takes the message of `s` (and frees it); "" for success.
inline std::string Consume(qairt_status_t* s) {
  if (!s) return {};
  std::string m = qairt_status_message(s);
  qairt_status_free(s);
  return m;
}

template <typename Fill>
std::string QueryThenFill(Fill fill) {
  size_t len = 0;
  if (qairt_status_t* s = fill(nullptr, 0, &len)) {
    qairt_status_free(s);
    return {};
  }
  std::string text(len + 1, '\0');
  qairt_status_free(fill(text.data(), text.size(), &len));
  text.resize(len);
  return text;
}

inline std::string Render(const qairt_analysis_report_t* r, qairt_analysis_format_t format) {
  return QueryThenFill([&](char* b, size_t c, size_t* l) { return qairt_analysis_report_render(r, format, b, c, l); });
}

class Pipeline {
 public:
  Pipeline(qairt_graph_t* graph, const qairt_convert_options& o, qairt_convert_result_t* r)
      : graph_(graph), o_(o), r_(r) {}
  ~Pipeline() { qairt_graph_destroy(float_graph_); }

  void Run();

 private:
  // Runs one stage and adds its wall time to the result's phases (to the
  // last entry when the same phase ran just before).
  template <class F>
  bool Timed(const char* phase, F&& stage) {
    const auto start = std::chrono::steady_clock::now();
    const bool ok = stage();
    r_->AddPhase(phase, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return ok;
  }
  bool check_only() const { return o_.flags & QAIRT_CONVERT_CHECK_ONLY; }
  bool Fail(const char* stage, const std::string& message) {
    r_->AddError(stage, message);
    return false;
  }
  bool Legalize();
  bool ApplyOverrides();
  bool CheckKernels();
  bool Rewrite();
  bool ApplyDeferredOverrides();
  bool DerivedByProcessing(const std::string& name) const;
  void CheckDeferredOverrides();
  bool CheckOverridesAfterProcessing();
  bool ReportLateOverrides(qairt_encodings_diagnostics_t* diags, std::string_view which);
  bool Calibrate();
  bool CollectStats(const qairt_calibration_options& c);
  bool CalibrateFromStats();
  bool CalibrateParams();
  bool Process();
  std::vector<std::pair<std::string, std::string>> RecordedOptions() const;
  bool WriteOutputs();
  void Evaluate();
  bool WriteReport();
  qairt_calibration_options CalibrationOptions() const;
  // QAIRT_CONVERT_AUTO_QUANT: the techniques measured best, before calibrating.
  bool ChooseCalibration();

  // Progress of one stage: the caller's callback sees "<stage>: <phase>".
  struct StageProgress {
    const Pipeline* pipeline;
    const char* stage;
    static void Callback(void* self, const char* phase, size_t done, size_t total) {
      const auto* p = static_cast<const StageProgress*>(self);
      const std::string named = std::string(p->stage) + ": " + (phase ? phase : "");
      p->pipeline->o_.progress(p->pipeline->o_.progress_user_data, named.c_str(), done, total);
    }
  };
  mutable StageProgress calibration_progress_{this, "calibration"};
  StageProgress accuracy_progress_{this, "accuracy"};

  qairt_graph_t* graph_;
  const qairt_convert_options& o_;
  qairt_convert_result_t* r_;
  qairt_graph_t* float_graph_ = nullptr;  // the accuracy reference
  std::optional<qairt_calibration_options> chosen_calibration_;  // set by ChooseCalibration
  std::string mixed_base_techniques_;  // mixed precision searched from a raised base: its techniques
  std::string detail_log_;                // rewrites / mixed precision, for the TRACE log
  qairt::encodings::File deferred_overrides_;  // overrides naming tensors the rewrites make
  std::vector<const char*> written_;      // outputs written so far: all or none
  std::string qdq_data_path_;             // the Q-DQ model's external data file (when written)
  std::string stats_input_list_;          // --calibration_stats: the list the statistics came from
  std::vector<const char*> float_inputs_;
};

}  // namespace qairt::capi
