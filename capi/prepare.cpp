// C ABI of the Cloud AI 100 preparation (include/qairt/qairt_prepare.h).
#include "qairt/qairt_prepare.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "prepare/prepare.h"
#include "target/target_descriptor.h"

struct qairt_prepare_report_t {
  qairt::prepare::Report report;
  std::string text, json;  // rendered once: the getters hand out copies
};

using qairt::capi::InvalidArg;

namespace {

// The 1.5 layout is the first: every field is known to every caller.
// The 1.5 layout, frozen by its last field.
constexpr size_t kOptionsV1 = offsetof(qairt_prepare_options, reserved) + sizeof(uint32_t);
constexpr size_t kFindingV1 = QAIRT_STRUCT_V1_SIZE(qairt_prepare_finding, message);
constexpr uint32_t kKnownFlags = QAIRT_PREPARE_CLIP_FP16_CONSTANTS | QAIRT_PREPARE_FIX_ADDITIVE_MASKS |
                                 QAIRT_PREPARE_FORCE | QAIRT_PREPARE_NAMED_SPECIALIZATIONS |
                                 QAIRT_PREPARE_NO_DESCRIPTOR_CHECK;

std::string Str(const char* s) { return s ? std::string(s) : std::string(); }

}  // namespace

extern "C" {

void qairt_prepare_options_init(qairt_prepare_options* options) {
  if (!options) return;
  *options = qairt_prepare_options{};
  options->struct_size = sizeof(qairt_prepare_options);
  options->mask_value = -10000.0;
  options->tolerance = 1e-4;
  options->fp16_budget = 1e-2;
  options->external_data_threshold = uint64_t{2} << 30;
  options->max_samples = 16;
}

qairt_status_t* qairt_prepare_run(const qairt_prepare_options* options, qairt_prepare_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  qairt_prepare_options o;
  if (auto* s = qairt::capi::ReadVersionedStruct(options, kOptionsV1, "qairt_prepare_options", &o)) return s;
  if (o.flags & ~kKnownFlags) return InvalidArg("qairt_prepare_options.flags has unknown bits 0x{:x}", o.flags & ~kKnownFlags);
  if (o.reserved != 0) return InvalidArg("qairt_prepare_options.reserved must be 0");
  if (!o.model_path || !*o.model_path) return InvalidArg("qairt_prepare_options.model_path must be set");
  if (o.num_define_symbols && (!o.define_symbol_names || !o.define_symbol_values))
    return InvalidArg("qairt_prepare_options: define_symbol_names/values must not be NULL when num_define_symbols > 0");
  if (o.num_input_dims && (!o.input_dim_names || !o.input_dim_ranks || !o.input_dims))
    return InvalidArg("qairt_prepare_options: input_dim_names/ranks/dims must not be NULL when num_input_dims > 0");
  if (!std::isfinite(o.mask_value) || !std::isfinite(o.tolerance) || !std::isfinite(o.fp16_budget) ||
      !std::isfinite(o.fp16_min_abs))
    return InvalidArg("qairt_prepare_options: mask_value, tolerance, fp16_budget and fp16_min_abs must be finite");

  qairt::prepare::Options po;
  po.model_path = o.model_path;
  po.output_dir = Str(o.output_dir);
  po.target_name = o.target ? o.target : "aic100";
  for (size_t i = 0; i < o.num_define_symbols; ++i) {
    if (!o.define_symbol_names[i]) return InvalidArg("define_symbol_names[{}] must not be NULL", i);
    if (o.define_symbol_values[i] <= 0)
      return InvalidArg("define symbol '{}': value {} must be positive", o.define_symbol_names[i], o.define_symbol_values[i]);
    if (!po.define_symbols.emplace(o.define_symbol_names[i], o.define_symbol_values[i]).second)
      return InvalidArg("define symbol '{}' is given twice", o.define_symbol_names[i]);
  }
  size_t at = 0;
  for (size_t i = 0; i < o.num_input_dims; ++i) {
    if (!o.input_dim_names[i]) return InvalidArg("input_dim_names[{}] must not be NULL", i);
    if (o.input_dim_ranks[i] > 64) return InvalidArg("input dim '{}': rank {} is too large", o.input_dim_names[i], o.input_dim_ranks[i]);
    std::vector<int64_t> d(o.input_dims + at, o.input_dims + at + o.input_dim_ranks[i]);
    at += o.input_dim_ranks[i];
    for (int64_t x : d)
      if (x <= 0) return InvalidArg("input dim '{}': dims must be positive", o.input_dim_names[i]);
    if (!po.input_dims.emplace(o.input_dim_names[i], std::move(d)).second)
      return InvalidArg("input dim '{}' is given twice", o.input_dim_names[i]);
  }
  po.batch_size = o.batch_size;
  po.specializations_path = Str(o.specializations_path);
  po.named_specializations = (o.flags & QAIRT_PREPARE_NAMED_SPECIALIZATIONS) != 0;
  po.input_list_path = Str(o.input_list_path);
  if (o.max_samples) po.max_samples = o.max_samples;
  po.clip_fp16_constants = (o.flags & QAIRT_PREPARE_CLIP_FP16_CONSTANTS) != 0;
  po.fix_additive_masks = (o.flags & QAIRT_PREPARE_FIX_ADDITIVE_MASKS) != 0;
  po.force = (o.flags & QAIRT_PREPARE_FORCE) != 0;
  po.fp16_min_abs = o.fp16_min_abs;
  po.mask_value = o.mask_value;
  po.tolerance = o.tolerance;
  po.fp16_budget = o.fp16_budget;
  if (o.external_data_threshold) po.external_data_threshold = o.external_data_threshold;
  po.fp32_nodes = Str(o.fp32_nodes);
  po.supported_ops_path = Str(o.supported_ops_path);
  if ((o.flags & QAIRT_PREPARE_NO_DESCRIPTOR_CHECK) == 0 && po.target_name == "aic100") {
    // Ops with a kernel that has an fp16 slot: what -convert-to-fp16 runs.
    // Any slot, not the first: a select's first input is its bool condition
    // (ElementWiseSelect's fp16 kernel has f16 only in slots 1 and 2).
    auto t = qairt::target::LoadBuiltinTarget("aic100");
    if (!t.ok()) return qairt::capi::FromStatus(t.status());
    auto fp16 = [](const std::vector<qairt::target::Slot>& slots) {
      return std::any_of(slots.begin(), slots.end(), [](const auto& s) { return s.Allows(qairt::DType::kFloat16); });
    };
    for (const auto& op : t.value()->ops)
      for (const auto& k : op.kernels)
        if (fp16(k.inputs) || fp16(k.outputs)) {
          po.target_fp16_ops.insert(op.op);
          break;
        }
  }
  auto handle = std::make_unique<qairt_prepare_report_t>();
  qairt::Status s = qairt::prepare::Prepare(po, &handle->report);
  handle->text = handle->report.Text();
  handle->json = handle->report.Json();
  if (out_report) *out_report = handle.release();
  return qairt::capi::FromStatus(s);
  QAIRT_CAPI_END
}

void qairt_prepare_report_destroy(qairt_prepare_report_t* report) { delete report; }

qairt_status_t* qairt_prepare_report_text(const qairt_prepare_report_t* report, char* buf, size_t capacity,
                                          size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!report) return InvalidArg("report must not be NULL");
  return qairt::capi::FillString(report->text, buf, capacity, out_length, "report text");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_prepare_report_json(const qairt_prepare_report_t* report, char* buf, size_t capacity,
                                          size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!report) return InvalidArg("report must not be NULL");
  return qairt::capi::FillString(report->json, buf, capacity, out_length, "report json");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_prepare_report_render(const qairt_prepare_report_t* report, qairt_report_format_t format,
                                            char* buf, size_t capacity, size_t* out_length) {
  if (format == QAIRT_REPORT_TEXT) return qairt_prepare_report_text(report, buf, capacity, out_length);
  if (format == QAIRT_REPORT_JSON) return qairt_prepare_report_json(report, buf, capacity, out_length);
  return qairt::capi::MakeStatus(QAIRT_UNSUPPORTED,
                                 fmt::format("qairt_prepare_report_render: format {} (TEXT or JSON only)", format));
}

size_t qairt_prepare_report_finding_count(const qairt_prepare_report_t* report) {
  return report ? report->report.findings.size() : 0;
}

qairt_status_t* qairt_prepare_report_finding(const qairt_prepare_report_t* report, size_t index,
                                             qairt_prepare_finding* out_finding) {
  QAIRT_CAPI_BEGIN
  if (!report) return InvalidArg("report must not be NULL");
  if (!out_finding) return InvalidArg("out_finding must not be NULL");
  if (out_finding->struct_size < kFindingV1)
    return InvalidArg("qairt_prepare_finding.struct_size is {} but must be at least {} (set it to sizeof)",
                      out_finding->struct_size, kFindingV1);
  const auto& f = report->report.findings;
  if (index >= f.size()) return InvalidArg("finding index {} is out of range (the report has {})", index, f.size());
  out_finding->severity = static_cast<uint32_t>(f[index].severity);
  out_finding->code = f[index].code.c_str();
  out_finding->subject = f[index].subject.c_str();
  out_finding->message = f[index].message.c_str();
  return nullptr;
  QAIRT_CAPI_END
}

}  // extern "C"
