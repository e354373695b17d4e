// C boundary of target-specific processing (include/qairt/qairt_process.h).
#include "qairt/qairt_process.h"

#include "capi/capi_internal.h"
#include "passes/pass_manager.h"
#include "passes/legalize.h"
#include "target/target_descriptor.h"

struct qairt_process_result_t {
  qairt::pass::ProcessResult result;
  std::vector<qairt_container_option> options;
  std::vector<qairt_container_op_annotation> annotations;
  std::vector<qairt_container_tensor_note> notes;
  qairt_diagnostics_t diagnostics;  // result.diagnostics, moved here
};

using qairt::capi::InvalidArg;

extern "C" {

qairt_status_t* qairt_graph_legalize(qairt_graph_t* graph, const qairt_target_t* target, size_t* out_changed) {
  QAIRT_CAPI_BEGIN
  if (!graph) return InvalidArg("graph must not be NULL");
  if (!target) return InvalidArg("target must not be NULL");
  qairt::Graph work = graph->graph;
  qairt::pass::LegalizeReport report;
  if (auto st = qairt::pass::LegalizeForTarget(&work, *qairt::capi::TargetOf(target), &report); !st.ok())
    return qairt::capi::FromStatus(st);
  if (report.changed) {
    graph->graph = std::move(work);
    std::lock_guard<std::mutex> lock(graph->cache_mutex);
    graph->dims_cache.clear();
    graph->string_list_cache.clear();
  }
  if (out_changed) *out_changed = report.changed;
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_process_options_init(qairt_process_options* options) {
  if (!options) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
}

qairt_status_t* qairt_process_pipeline(char* buf, size_t capacity, size_t* out_length) {
  QAIRT_CAPI_BEGIN
  return qairt::capi::FillString(qairt::pass::PrintPipeline(), buf, capacity, out_length, "pipeline");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_process(qairt_graph_t* graph, const qairt_process_options* options,
                              qairt_process_result_t** out_result) {
  QAIRT_CAPI_BEGIN
  if (!out_result) return InvalidArg("out_result must not be NULL");
  if (!graph) return InvalidArg("graph must not be NULL");
  qairt_process_options o;
  if (auto* s = qairt::capi::ReadVersionedStruct(options, QAIRT_STRUCT_V1_SIZE(qairt_process_options, stop_after),
                                                 "qairt_process_options", &o))
    return s;
  if (!o.target) return InvalidArg("qairt_process_options.target must not be NULL");
  if (o.flags & ~(QAIRT_PROCESS_QUANTIZED_IO | QAIRT_PROCESS_NO_BIAS_AWARE_WEIGHT_SCALES)) return InvalidArg("qairt_process_options.flags: unknown bits {:#x}", o.flags);
  if (o.log_level > QAIRT_QUANTIZER_LOG_TRACE)
    return InvalidArg("qairt_process_options.log_level: {} is not a qairt_quantizer_log_level", o.log_level);
  qairt::pass::Options po;
  po.target = qairt::capi::TargetOf(o.target);
  switch (o.float_bitwidth) {
    case 0: break;
    case 16: po.float_dtype = qairt::DType::kFloat16; break;
    case 32: po.float_dtype = qairt::DType::kFloat32; break;
    default: return InvalidArg("qairt_process_options.float_bitwidth: {} (must be 0, 16 or 32)", o.float_bitwidth);
  }
  po.act_bitwidth = o.act_bitwidth;
  po.weights_bitwidth = o.weights_bitwidth;
  po.bias_bitwidth = o.bias_bitwidth ? o.bias_bitwidth : 32;
  po.bias_bitwidth_set = o.bias_bitwidth != 0;
  po.preserve_io_datatype = !(o.flags & QAIRT_PROCESS_QUANTIZED_IO);
  po.bias_aware_weight_scales = !(o.flags & QAIRT_PROCESS_NO_BIAS_AWARE_WEIGHT_SCALES);
  po.log_level = static_cast<qairt::pass::LogLevel>(o.log_level);
  if (o.stop_after) po.stop_after = o.stop_after;

  // Processing works on a copy: a fatal error leaves the caller's graph as it was.
  qairt::Graph work = graph->graph;
  auto r = std::make_unique<qairt_process_result_t>();
  if (auto st = qairt::pass::Process(&work, std::move(po), &r->result); !st.ok()) return qairt::capi::FromStatus(st);
  graph->graph = std::move(work);
  {
    std::lock_guard<std::mutex> lock(graph->cache_mutex);
    graph->dims_cache.clear();
    graph->string_list_cache.clear();
  }
  for (const auto& opt : r->result.options)
    r->options.push_back({opt.key.c_str(), opt.value.c_str(), static_cast<qairt_option_source_t>(opt.source), 0});
  for (const auto& a : r->result.annotations)
    r->annotations.push_back({a.op.c_str(), a.kernel.c_str(), a.super_group, a.adapted ? 1u : 0u});
  for (const auto& n : r->result.notes) r->notes.push_back({n.tensor.c_str(), n.reasons.c_str()});
  r->diagnostics.diags = std::move(r->result.diagnostics);
  *out_result = r.release();
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_process_result_destroy(qairt_process_result_t* result) { delete result; }

size_t qairt_process_result_error_count(const qairt_process_result_t* r) { return r ? r->result.errors.size() : 0; }
const char* qairt_process_result_error(const qairt_process_result_t* r, size_t i) {
  return r && i < r->result.errors.size() ? r->result.errors[i].c_str() : nullptr;
}
size_t qairt_process_result_warning_count(const qairt_process_result_t* r) {
  return r ? r->result.warnings.size() : 0;
}
const char* qairt_process_result_warning(const qairt_process_result_t* r, size_t i) {
  return r && i < r->result.warnings.size() ? r->result.warnings[i].c_str() : nullptr;
}
const qairt_diagnostics_t* qairt_process_result_diagnostics(const qairt_process_result_t* r) {
  return r ? &r->diagnostics : nullptr;
}
const char* qairt_process_result_log(const qairt_process_result_t* r) { return r ? r->result.log.c_str() : ""; }
const char* qairt_process_result_stats(const qairt_process_result_t* r) { return r ? r->result.stats.c_str() : ""; }

const qairt_container_option* qairt_process_result_options(const qairt_process_result_t* r, size_t* out_count) {
  if (out_count) *out_count = r ? r->options.size() : 0;
  return r ? r->options.data() : nullptr;
}
const qairt_container_op_annotation* qairt_process_result_op_annotations(const qairt_process_result_t* r,
                                                                         size_t* out_count) {
  if (out_count) *out_count = r ? r->annotations.size() : 0;
  return r ? r->annotations.data() : nullptr;
}
const qairt_container_tensor_note* qairt_process_result_tensor_notes(const qairt_process_result_t* r,
                                                                     size_t* out_count) {
  if (out_count) *out_count = r ? r->notes.size() : 0;
  return r ? r->notes.data() : nullptr;
}

}  // extern "C"
