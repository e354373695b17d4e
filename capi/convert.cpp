// The convert pipeline (include/qairt/qairt_convert.h), composed from the
// other entry points of the C ABI so that each stage has exactly the
// behaviour its own function documents.
#include "qairt/qairt_convert.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "capi/capi_internal.h"
#include "capi/convert_pipeline.h"
#include "target/target_descriptor.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_export.h"
#include "qairt/qairt_report.h"
#include "support/atomic_file.h"

using qairt::capi::InvalidArg;
using qairt::capi::Consume;
using qairt::capi::QueryThenFill;
using qairt::capi::Render;

namespace {

// The ops of each type: how many, and the first one's name.
struct OpTypeUse {
  size_t count = 0;
  std::string first_op;
};

std::map<std::string, OpTypeUse> OpTypeUses(const qairt_graph_t* graph) {
  std::map<std::string, OpTypeUse> uses;
  for (size_t i = 0; i < qairt_graph_op_count(graph); ++i) {
    qairt_op_info op;
    std::memset(&op, 0, sizeof op);
    op.struct_size = sizeof op;
    if (qairt_status_t* e = qairt_graph_op_info(graph, static_cast<qairt_op_id>(i), &op)) {
      qairt_status_free(e);
      continue;
    }
    OpTypeUse& u = uses[op.type];
    if (u.count++ == 0) u.first_op = op.name ? op.name : "";
  }
  return uses;
}

std::string TargetName(const qairt_target_t* target) {
  qairt_target_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  qairt_status_free(qairt_target_get_info(target, &info));
  return info.name ? info.name : "?";
}

// A MatMul whose static weight is already quantized per channel (a Q-DQ
// model: ONNX Runtime's quantizer gives MatMul weights per-output-channel
// scales) runs on HTP only as FullyConnected, whose weights may be per
// channel: such a graph gets the per-row rewrite without being asked.
bool HasPerChannelMatMulWeights(const qairt::Graph& g) {
  for (qairt::OpId id = 0; id < g.op_count(); ++id) {
    const qairt::Op& op = g.op(id);
    if (op.type != "MatMul" || op.inputs.size() != 2 || op.inputs[1] == qairt::kInvalidId) continue;
    const qairt::Tensor& w = g.tensor(op.inputs[1]);
    if (w.kind == qairt::TensorKind::kStatic && w.encoding && w.encoding->kind == qairt::EncodingKind::kPerChannel)
      return true;
  }
  return false;
}

}  // namespace

namespace qairt::capi {

bool Pipeline::Legalize() {
  const std::map<std::string, OpTypeUse> before = OpTypeUses(graph_);
  size_t changed = 0;
  if (std::string e = Consume(qairt_graph_legalize(graph_, o_.target, &changed)); !e.empty())
    return Fail("legalize", e);
  if (!changed) return true;
  const std::map<std::string, OpTypeUse> after = OpTypeUses(graph_);
  std::string gone;
  for (const auto& [type, use] : before)
    if (!after.count(type)) gone += (gone.empty() ? "" : ", ") + type;
  r_->summary += fmt::format(
      "legalized: {} ops the target has no kernel for ({}) rewritten into equivalent ones "
      "(Conv1d -> ExpandDims + Conv2d + Squeeze)\n",
      changed, gone);
  return true;
}

// Every op type must have at least one kernel on the target: a model that
// cannot run there fails here, before calibration spends time on it. Each
// type without one is a "no-kernel" record (field: the op type).
bool Pipeline::CheckKernels() {
  const std::string name = TargetName(o_.target);
  std::string missing, lines;
  size_t ops = 0, types = 0;
  for (const auto& [type, use] : OpTypeUses(graph_)) {
    ops += use.count;
    size_t count = 0;
    qairt_status_free(qairt_target_kernel_count(o_.target, type.c_str(), &count));
    if (count) continue;
    ++types;
    missing += fmt::format("{}{} ({} ops)", missing.empty() ? "" : ", ", type, use.count);
    lines += fmt::format("  error: {} ({} ops) has no kernel on {}\n", type, use.count, name);
    qairt::Diag d;
    d.code = "no-kernel";
    d.op = use.first_op;
    d.field = type;
    d.message = fmt::format("{} ({} ops) has no kernel on {}", type, use.count, name);
    r_->AddRecords({d});
  }
  if (check_only()) {
    r_->summary += missing.empty() ? fmt::format("target: {}: every op type has a kernel ({} ops)\n", name, ops)
                                   : fmt::format("target: {}: {} op types have no kernel:\n{}", name, types, lines);
  }
  if (missing.empty()) return true;
  r_->AddError("target", fmt::format("{} has no kernel for {}", name, missing), /*record=*/false);
  return false;
}

bool Pipeline::Rewrite() {
  if (o_.flags & QAIRT_CONVERT_NO_REWRITES) return true;
  qairt_rewrite_options ro;
  qairt_rewrite_options_init(&ro);
  ro.target = o_.target;
  ro.input_list = o_.input_list;
  ro.disabled = o_.disabled_rewrites;
  ro.num_disabled = o_.num_disabled_rewrites;
  // Per-row weights need FullyConnected on HTP (its MatMul takes per-tensor
  // weights only): projections by static weights become FullyConnected.
  static const char* const kPerRowRewrites[] = {"matmul-to-fully-connected"};
  if ((o_.calibration && (o_.calibration->flags & QAIRT_CALIBRATION_PER_ROW)) ||
      HasPerChannelMatMulWeights(graph_->graph)) {
    ro.enabled = kPerRowRewrites;
    ro.num_enabled = 1;
  }
  ro.num_threads = o_.num_threads;
  // The rewrites are exact by construction: running the model to check them
  // is work the user asks for, not a hidden cost of every conversion.
  if (!(o_.flags & QAIRT_CONVERT_VERIFY_REWRITES)) ro.flags |= QAIRT_REWRITE_NO_VERIFY;
  // Calibrating from samples: each rewrite is also judged on the quantized
  // model (kept only where it scores no worse), with the calibration's
  // options but min-max weights (the judgement compares graphs; a weight
  // search per candidate would multiply its cost).
  qairt_calibration_options judge = CalibrationOptions();
  judge.progress = nullptr;
  if (judge.param_method == QAIRT_CALIBRATION_SEQMSE) judge.param_method = QAIRT_CALIBRATION_MIN_MAX;
  judge.flags &= ~(QAIRT_CALIBRATION_ADAPTIVE_ROUNDING | QAIRT_CALIBRATION_BIAS_CORRECTION);
  // A dry run checks, it does not calibrate: no judgement there.
  if (o_.input_list && !o_.calibration_stats && !o_.stats_output && !(o_.flags & QAIRT_CONVERT_KEEP_REWRITES) &&
      !check_only())
    ro.quantized_judge = &judge;
  qairt_analysis_report_t* rr = nullptr;
  if (std::string e = Consume(qairt_rewrite_graph(graph_, &ro, &rr)); !e.empty()) return Fail("rewrites", e);
  r_->summary += Render(rr, QAIRT_ANALYSIS_TEXT);
  for (size_t i = 0; i < qairt_analysis_report_warning_count(rr); ++i)
    r_->AddWarning("rewrites", qairt_analysis_report_warning(rr, i));
  detail_log_ += "======== REWRITES ========\n" + Render(rr, QAIRT_ANALYSIS_TEXT_DETAILED);
  qairt_analysis_report_destroy(rr);
  return true;
}

qairt_calibration_options Pipeline::CalibrationOptions() const {
  qairt_calibration_options c;
  qairt_calibration_options_init(&c);
  if (chosen_calibration_) {
    c = *chosen_calibration_;
  } else if (o_.calibration) {
    // Copied field by field up to the caller's struct_size (validated by the caller of Run).
    std::memcpy(&c, o_.calibration, std::min<size_t>(o_.calibration->struct_size, sizeof c));
    c.struct_size = sizeof c;
  }
  c.num_threads = o_.num_threads;
  c.progress = o_.progress ? StageProgress::Callback : nullptr;
  c.progress_user_data = &calibration_progress_;
  // 16-bit normalization scales where the target runs a16w16 norms: a few
  // hundred values that would otherwise bound a 16-bit model's accuracy.
  if (o_.target)
    if (auto t = qairt::capi::TargetOf(o_.target); t && (t->capabilities & qairt::target::kCapA16W16))
      c.flags |= QAIRT_CALIBRATION_WIDE_NORM_SCALES;
  // Bias correction measures the model as this target will run it; the
  // target's kernels say which outputs have a fixed range.
  if ((c.flags & (QAIRT_CALIBRATION_BIAS_CORRECTION | QAIRT_CALIBRATION_WIDE_FIXED_RANGES)) && !c.target)
    c.target = o_.target;
  return c;
}

bool Pipeline::ChooseCalibration() {
  qairt_calibration_options given = CalibrationOptions();
  qairt_analysis_options a;
  qairt_analysis_options_init(&a);
  a.calibration = &given;
  a.target = o_.target;
  a.num_threads = o_.num_threads;
  qairt_calibration_options chosen;
  qairt_calibration_options_init(&chosen);
  qairt_analysis_report_t* ar = nullptr;
  if (std::string e = Consume(qairt_choose_calibration(graph_, o_.input_list, &a, &chosen, &ar)); !e.empty())
    return Fail("calibration", e);
  r_->summary += Render(ar, QAIRT_ANALYSIS_TEXT);
  detail_log_ += "======== AUTO QUANT ========\n" + Render(ar, QAIRT_ANALYSIS_TEXT);
  qairt_analysis_report_destroy(ar);
  chosen_calibration_ = chosen;
  return true;
}

bool Pipeline::Calibrate() {
  if (o_.calibration_stats) return CalibrateFromStats();
  if (!o_.input_list) return (o_.flags & QAIRT_CONVERT_PARAMS_FROM_VALUES) ? CalibrateParams() : true;
  // (ReadConvertOptions refuses AUTO_QUANT with stats_output.)
  if ((o_.flags & QAIRT_CONVERT_AUTO_QUANT) && !ChooseCalibration()) return false;
  qairt_calibration_options c = CalibrationOptions();
  if (o_.stats_output) return CollectStats(c);
  if (o_.mixed_mode != QAIRT_MIXED_OFF) {
    qairt_analysis_options a;
    qairt_analysis_options_init(&a);
    a.calibration = &c;
    a.target = o_.target;
    a.mixed_mode = o_.mixed_mode;
    a.mixed_value = o_.mixed_value;
    a.num_threads = o_.num_threads;
    // With AUTO_QUANT the base is the measured best already.
    if (o_.flags & (QAIRT_CONVERT_MIXED_PROMOTIONS_ONLY | QAIRT_CONVERT_AUTO_QUANT))
      a.mixed_flags |= QAIRT_MIXED_PROMOTIONS_ONLY;
    qairt_analysis_report_t* mr = nullptr;
    if (std::string e = Consume(qairt_mixed_precision(graph_, o_.input_list, &a, &mr)); !e.empty())
      return Fail("calibration", e);
    {
      // The techniques a raised base calibrated with, for the artifacts'
      // record (the report's JSON names them; labels hold no quotes).
      const std::string json = Render(mr, QAIRT_ANALYSIS_JSON);
      const std::string key = "\"base_techniques\":\"";
      if (const size_t at = json.find(key); at != std::string::npos) {
        const size_t from = at + key.size();
        mixed_base_techniques_ = json.substr(from, json.find('"', from) - from);
      }
    }
    r_->summary += Render(mr, QAIRT_ANALYSIS_TEXT);
    for (size_t i = 0; i < qairt_analysis_report_warning_count(mr); ++i)
      r_->AddWarning("mixed precision", qairt_analysis_report_warning(mr, i));
    detail_log_ += "======== MIXED PRECISION ========\n" + Render(mr, QAIRT_ANALYSIS_TEXT);
    qairt_analysis_report_destroy(mr);
    return true;
  }
  qairt_calibration_report_t* cr = nullptr;
  const auto start = std::chrono::steady_clock::now();
  if (std::string e = Consume(qairt_calibrate_input_list(graph_, o_.input_list, &c, &cr)); !e.empty())
    return Fail("calibration", e);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t samples = qairt_calibration_report_samples(cr);
  r_->summary += fmt::format("calibration: {} samples, {} activation and {} parameter encodings computed\n", samples,
                             qairt_calibration_report_activation_count(cr), qairt_calibration_report_param_count(cr));
  // What a sample costs is what decides how many a user can afford.
  r_->summary += fmt::format("calibration time: {:.2f} s, {:.3f} s per sample (parameter encodings included)\n",
                             seconds, samples ? seconds / static_cast<double>(samples) : 0.0);
  for (size_t i = 0; i < qairt_calibration_report_note_count(cr); ++i)
    r_->summary += fmt::format("{}\n", qairt_calibration_report_note(cr, i));
  for (size_t i = 0; i < qairt_calibration_report_warning_count(cr); ++i)
    r_->AddWarning("calibration", qairt_calibration_report_warning(cr, i));
  qairt_calibration_report_destroy(cr);
  return true;
}

// No samples: the weights without an encoding get one from their values
// (--float_fallback); activations keep what the model and the overrides gave.
bool Pipeline::CalibrateParams() {
  const qairt_calibration_options c = CalibrationOptions();
  qairt_calibration_report_t* cr = nullptr;
  if (std::string e = Consume(qairt_calibrate_params(graph_, &c, &cr)); !e.empty()) return Fail("calibration", e);
  r_->summary += fmt::format("parameters: {} encodings computed from the weights' values (no samples)\n",
                             qairt_calibration_report_param_count(cr));
  for (size_t i = 0; i < qairt_calibration_report_warning_count(cr); ++i)
    r_->AddWarning("calibration", qairt_calibration_report_warning(cr, i));
  qairt_calibration_report_destroy(cr);
  return true;
}

// qairt calibrate: this shard's statistics of the graph calibration sees.
bool Pipeline::CollectStats(const qairt_calibration_options& c) {
  qairt_calibration_stats_t* ranges = nullptr;
  if (o_.stats_ranges) {
    if (std::string e = Consume(qairt_calibration_stats_load_file(o_.stats_ranges, &ranges)); !e.empty())
      return Fail("calibration", e);
  }
  qairt_calibration_stats_t* stats = nullptr;
  std::string e = Consume(qairt_calibration_stats_collect(graph_, o_.input_list, &c, o_.shard_index,
                                                          o_.shard_count ? o_.shard_count : 1, ranges, &stats));
  qairt_calibration_stats_destroy(ranges);
  if (e.empty()) e = Consume(qairt_calibration_stats_write_file(stats, o_.stats_output));
  if (e.empty())
    r_->summary += fmt::format("calibration statistics: round {}, shard {} of {}, {} samples -> {}\n",
                               qairt_calibration_stats_round(stats), o_.shard_index,
                               o_.shard_count ? o_.shard_count : 1, qairt_calibration_stats_samples(stats),
                               o_.stats_output);
  qairt_calibration_stats_destroy(stats);
  return e.empty() ? true : Fail("calibration", e);
}

bool Pipeline::CalibrateFromStats() {
  qairt_calibration_stats_t* stats = nullptr;
  if (std::string e = Consume(qairt_calibration_stats_load_file(o_.calibration_stats, &stats)); !e.empty())
    return Fail("calibration", e);
  qairt_calibration_options c = CalibrationOptions();
  qairt_calibration_report_t* cr = nullptr;
  std::string e = Consume(qairt_calibrate_from_stats(graph_, stats, &c, &cr));
  stats_input_list_ = qairt_calibration_stats_input_list(stats);
  qairt_calibration_stats_destroy(stats);
  if (!e.empty()) return Fail("calibration", std::string(o_.calibration_stats) + ": " + e);
  r_->summary += fmt::format("calibration: {} samples (from {}), {} activation and {} parameter encodings computed\n",
                             qairt_calibration_report_samples(cr), o_.calibration_stats,
                             qairt_calibration_report_activation_count(cr), qairt_calibration_report_param_count(cr));
  for (size_t i = 0; i < qairt_calibration_report_warning_count(cr); ++i)
    r_->AddWarning("calibration", qairt_calibration_report_warning(cr, i));
  qairt_calibration_report_destroy(cr);
  return true;
}

bool Pipeline::Process() {
  qairt_process_options po;
  qairt_process_options_init(&po);
  po.target = o_.target;
  po.float_bitwidth = o_.float_bitwidth;
  po.act_bitwidth = o_.act_bitwidth;
  po.weights_bitwidth = o_.weights_bitwidth;
  po.bias_bitwidth = o_.bias_bitwidth;
  po.log_level = o_.log_level;
  po.stop_after = o_.stop_after;
  if (o_.flags & QAIRT_CONVERT_QUANTIZED_IO) po.flags |= QAIRT_PROCESS_QUANTIZED_IO;
  if (o_.flags & QAIRT_CONVERT_NO_BIAS_AWARE_WEIGHT_SCALES) po.flags |= QAIRT_PROCESS_NO_BIAS_AWARE_WEIGHT_SCALES;
  if (std::string e = Consume(qairt_process(graph_, &po, &r_->process)); !e.empty()) return Fail("processing", e);
  const qairt_process_result_t* pr = r_->process;
  r_->log = qairt_process_result_log(pr);
  if (o_.log_level == QAIRT_QUANTIZER_LOG_TRACE) r_->log += detail_log_;
  if (o_.log_level != QAIRT_QUANTIZER_LOG_TRACE) r_->summary += qairt_process_result_stats(pr);
  for (size_t i = 0; i < qairt_process_result_warning_count(pr); ++i)
    r_->warnings.push_back(qairt_process_result_warning(pr, i));
  for (size_t i = 0; i < qairt_process_result_error_count(pr); ++i)
    r_->errors.push_back(std::string("processing: ") + qairt_process_result_error(pr, i));
  // The records carry processing's own rule ids and the op/tensor of each.
  r_->AddRecords(qairt_process_result_diagnostics(pr)->diags);
  return qairt_process_result_error_count(pr) == 0;
}

// Every artifact records the options after processing's resolved ones: the
// calibration settings when there are samples, and whether rewrites ran.
std::vector<std::pair<std::string, std::string>> Pipeline::RecordedOptions() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (o_.input_list || o_.calibration_stats) {
    // Calibrated from statistics: the list they were collected from, so a
    // sharded calibration records what the unsharded one does.
    const qairt_calibration_options c = CalibrationOptions();
    static const char* const kMethods[] = {"min-max", "sqnr", "mse", "percentile", "seqmse"};
    static const char* const kSchemas[] = {"asymmetric", "symmetric", "strictsymmetric", "unsignedsymmetric"};
    auto pick = [](const char* const* names, size_t n, uint32_t v) { return v < n ? names[v] : "?"; };
    auto flag = [&](uint32_t f) { return (c.flags & f) ? "true" : "false"; };
    out = {
        {"input_list", o_.input_list ? o_.input_list : stats_input_list_.c_str()},
        {"act_quantizer_calibration", pick(kMethods, 5, c.act_method)},
        {"param_quantizer_calibration", pick(kMethods, 5, c.param_method)},
        {"act_quantizer_schema", pick(kSchemas, 4, c.act_schema)},
        {"param_quantizer_schema", pick(kSchemas, 4, c.param_schema)},
        {"use_per_channel_quantization", flag(QAIRT_CALIBRATION_PER_CHANNEL)},
        {"use_per_row_quantization", flag(QAIRT_CALIBRATION_PER_ROW)},
        {"weights_block_size", std::to_string(c.block_size)},
        {"use_lpbq", flag(QAIRT_CALIBRATION_LPBQ)},
        {"adaptive_rounding", flag(QAIRT_CALIBRATION_ADAPTIVE_ROUNDING)},
    };
    if (c.flags & QAIRT_CALIBRATION_BIAS_CORRECTION) out.emplace_back("bias_correction", "true");
    if (c.flags & QAIRT_CALIBRATION_WIDE_FIXED_RANGES) out.emplace_back("wide_fixed_ranges", "true");
    if (c.act_method == QAIRT_CALIBRATION_PERCENTILE || c.param_method == QAIRT_CALIBRATION_PERCENTILE)
      out.emplace_back("percentile_calibration_value", std::to_string(c.percentile));
    for (size_t i = 0; i < c.num_float_inputs; ++i)
      out.emplace_back(std::string("input_encoding.") + c.float_inputs[i], "other");
    if (o_.mixed_mode == QAIRT_MIXED_BUDGET) out.emplace_back("mixed_precision", fmt::format("budget={}", o_.mixed_value));
    if (o_.mixed_mode == QAIRT_MIXED_PERCENT) out.emplace_back("mixed_precision", fmt::format("percent={}", o_.mixed_value));
    if (o_.flags & QAIRT_CONVERT_AUTO_QUANT) out.emplace_back("auto_quant", "true");
    if (o_.flags & QAIRT_CONVERT_MIXED_PROMOTIONS_ONLY) out.emplace_back("mixed_precision_promotions_only", "true");
    if (!mixed_base_techniques_.empty()) out.emplace_back("mixed_precision_base_techniques", mixed_base_techniques_);
  }
  std::string rewrites = (o_.flags & QAIRT_CONVERT_NO_REWRITES) ? "off" : "on";
  for (size_t i = 0; i < o_.num_disabled_rewrites; ++i)
    rewrites += std::string(i == 0 ? ", disabled: " : ", ") + o_.disabled_rewrites[i];
  if (!(o_.flags & QAIRT_CONVERT_NO_REWRITES) && o_.input_list && !(o_.flags & QAIRT_CONVERT_KEEP_REWRITES))
    rewrites += ", judged on the quantized model";
  out.emplace_back("rewrites", rewrites);
  return out;
}

bool Pipeline::WriteOutputs() {
  const qairt_process_result_t* pr = r_->process;
  size_t num_resolved = 0;
  const qairt_container_option* resolved = qairt_process_result_options(pr, &num_resolved);
  std::vector<qairt_container_option> options(resolved, resolved + num_resolved);
  const auto recorded = RecordedOptions();
  const bool rewrites_default = !(o_.flags & QAIRT_CONVERT_NO_REWRITES) && o_.num_disabled_rewrites == 0;
  for (const auto& [key, value] : recorded)
    options.push_back({key.c_str(), value.c_str(),
                       key == "rewrites" && rewrites_default ? QAIRT_OPTION_SOURCE_DEFAULT : QAIRT_OPTION_SOURCE_USER,
                       0});
  std::vector<const char*>& written = written_;
  auto undo = [&](const char* stage, const std::string& error) {
    for (const char* path : written) std::remove(path);
    written.clear();
    return Fail(stage, error);
  };
  if (o_.output_path) {
    const std::string name = TargetName(o_.target);
    qairt_container_write_options w;
    qairt_container_write_options_init(&w);
    w.target_name = name.c_str();
    w.options = options.data();
    w.num_options = options.size();
    w.op_annotations = qairt_process_result_op_annotations(pr, &w.num_op_annotations);
    w.tensor_notes = qairt_process_result_tensor_notes(pr, &w.num_tensor_notes);
    w.stats_summary = qairt_process_result_stats(pr);
    if (std::string e = Consume(qairt_container_write_file(graph_, o_.output_path, &w)); !e.empty())
      return undo("output", e);
    written.push_back(o_.output_path);
  }
  if (o_.qdq_onnx_path) {
    // The Q-DQ model carries the options (with the target) as metadata.
    std::vector<std::string> keys;
    keys.reserve(options.size());
    std::vector<qairt_onnx_metadata_prop> props;
    for (const qairt_container_option& opt : options) {
      keys.push_back(std::string("qairt.") + opt.key);
      props.push_back({nullptr, opt.value});
    }
    for (size_t k = 0; k < options.size(); ++k) props[k].key = keys[k].c_str();
    qairt_onnx_export_options e;
    qairt_onnx_export_options_init(&e);
    e.opset = o_.qdq_opset;
    if (o_.qdq_opset == 13) e.flags |= QAIRT_EXPORT_QDQ_MS_DOMAIN;
    e.num_metadata_props = props.size();
    e.metadata_props = props.data();
    if (o_.flags & QAIRT_CONVERT_QDQ_EXTERNAL_DATA) e.flags |= QAIRT_EXPORT_EXTERNAL_DATA;
    qdq_data_path_ = std::string(o_.qdq_onnx_path) + ".data";
    struct stat before {};
    const bool had_data = ::stat(qdq_data_path_.c_str(), &before) == 0;
    if (std::string err = Consume(qairt_export_onnx_file(graph_, o_.qdq_onnx_path, &e)); !err.empty())
      return undo("output", std::string(o_.qdq_onnx_path) + ": " + err);
    written.push_back(o_.qdq_onnx_path);
    // The exporter also writes external data above 1 GiB of weights: a data
    // file that is new (another inode) belongs to this output.
    struct stat after {};
    if (::stat(qdq_data_path_.c_str(), &after) == 0 && (!had_data || after.st_ino != before.st_ino))
      written.push_back(qdq_data_path_.c_str());
  }
  if (o_.encodings_path) {
    qairt_encodings_write_options w;
    qairt_encodings_write_options_init(&w);
    if (o_.encodings_version) w.version = o_.encodings_version;
    if (std::string e = Consume(qairt_encodings_write_file(nullptr, graph_, o_.encodings_path, &w, nullptr));
        !e.empty())
      return undo("output", std::string(o_.encodings_path) + ": " + e);
    written.push_back(o_.encodings_path);
  }
  return true;
}

// Accuracy on the evaluation samples, from the processed graph against the
// float graph as imported. Only when asked: on an LLM it is two more forward
// passes per sample, on top of calibration's one.
void Pipeline::Evaluate() {
  const char* eval = o_.eval_input_list;
  if (!eval && o_.input_list && !o_.stats_output)
    r_->summary += "accuracy: not measured (--eval_input_list LIST measures it; the calibration list itself is "
                   "allowed)\n";
  if (!float_graph_ || !eval) return;
  qairt_compare_report_t* cmp = nullptr;
  // The report shows each op's accuracy: compare every layer for it.
  const uint32_t flags = o_.report_path ? QAIRT_COMPARE_PER_LAYER : 0;
  if (std::string e = Consume(qairt_compare_input_list_progress(
          float_graph_, graph_, eval, flags, o_.progress ? StageProgress::Callback : nullptr, &accuracy_progress_, &cmp));
      !e.empty()) {
    r_->AddWarning("accuracy", "accuracy: " + e);
    return;
  }
  r_->accuracy = cmp;
  r_->summary += QueryThenFill([&](char* b, size_t c, size_t* l) {
    return qairt_compare_report_render(cmp, QAIRT_COMPARE_SUMMARY, b, c, l);
  }) + "\n";
  // A poor output: say where to look next.
  double worst = INFINITY;
  for (size_t i = 0; i < qairt_compare_report_output_count(cmp); ++i) {
    qairt_accuracy a;
    std::memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    if (qairt_status_t* s = qairt_compare_report_output(cmp, i, &a)) {
      qairt_status_free(s);
      continue;
    }
    worst = std::min(worst, a.sqnr_db);
  }
  if (worst < 20.0)
    r_->summary += "  (below 20 dB: `qairt compare --float MODEL --quantized OUT.qairt --input_list LIST --per_layer` "
                   "names the ops where it is lost)\n";
}

void Pipeline::Run() {
  if (check_only()) {
    // Every check runs and reports, as `qairt convert --dry_run` shows them.
    if (o_.target && Timed("legalization", [&] { return Legalize(); })) Timed("kernels", [&] { return CheckKernels(); });
    Timed("overrides", [&] {
      if (ApplyOverrides()) CheckDeferredOverrides();
      return true;
    });
    return;
  }
  if (!Timed("legalization", [&] { return Legalize(); }) || !Timed("overrides", [&] { return ApplyOverrides(); }) ||
      !Timed("kernels", [&] { return CheckKernels(); }))
    return;
  // The float graph as imported is the accuracy reference (rewrites and
  // calibration change the graph).
  if (o_.eval_input_list && !o_.stats_output) {
    if (std::string e = Consume(qairt_graph_clone(graph_, &float_graph_)); !e.empty()) {
      Fail("accuracy", e);
      return;
    }
  }
  if (!Timed("rewrites", [&] { return Rewrite(); }) || !Timed("late overrides", [&] { return ApplyDeferredOverrides(); }) ||
      !Timed("calibration", [&] { return Calibrate(); }))
    return;
  if (o_.stats_output) return;  // qairt calibrate: the statistics are the output
  const bool processed = Timed("processing", [&] { return Process() && CheckOverridesAfterProcessing(); });
  // The log is written even when processing failed: it is how to find out why.
  if (o_.quantizer_log_path && r_->process) {
    if (auto st = qairt::WriteFileAtomically(o_.quantizer_log_path, r_->log, "quantizer log"); !st.ok())
      Fail("output", st.message());
  }
  if (processed && r_->errors.empty() && Timed("outputs", [&] { return WriteOutputs(); }))
    Timed("evaluation", [&] {
      Evaluate();
      return true;
    });
  if (o_.report_path && r_->process) Timed("report", [&] { return WriteReport(); });
}

// The report shows the graph as processing left it with every diagnostic, so
// it is written also when processing failed. With the other outputs it is
// all or none: failing to write it removes them.
bool Pipeline::WriteReport() {
  if (!o_.report_path || !r_->process) return true;
  qairt_html_report_options ro;
  qairt_html_report_options_init(&ro);
  ro.process = r_->process;
  ro.accuracy = r_->accuracy;
  ro.diagnostics = &r_->diagnostics;
  const std::string name = TargetName(o_.target);
  ro.target_name = name.c_str();
  if (std::string e = Consume(qairt_html_report_write_file(graph_, &ro, o_.report_path)); !e.empty()) {
    for (const char* path : written_) std::remove(path);
    written_.clear();
    return Fail("output", e);
  }
  return true;
}

}  // namespace qairt::capi

extern "C" {

void qairt_convert_options_init(qairt_convert_options* options) {
  if (!options) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->num_threads = 1;
}

qairt_status_t* qairt_convert_graph(qairt_graph_t* graph, const qairt_convert_options* options,
                                    qairt_convert_result_t** out_result) {
  QAIRT_CAPI_BEGIN
  if (!out_result) return InvalidArg("out_result must not be NULL");
  if (!graph) return InvalidArg("graph must not be NULL");
  qairt_convert_options o;
  if (auto* s = qairt::capi::ReadConvertOptions(options, &o)) return s;
  auto result = std::make_unique<qairt_convert_result_t>();
  qairt::capi::Pipeline(graph, o, result.get()).Run();
  *out_result = result.release();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_convert_file(const char* model_path, const qairt_import_options* import_options,
                                   const qairt_convert_options* options, qairt_convert_result_t** out_result) {
  QAIRT_CAPI_BEGIN
  if (!out_result) return InvalidArg("out_result must not be NULL");
  if (!model_path) return InvalidArg("model_path must not be NULL");
  qairt_convert_options o;
  if (auto* s = qairt::capi::ReadConvertOptions(options, &o)) return s;
  qairt_import_options defaults;
  qairt_import_options_init(&defaults);
  defaults.flags |= QAIRT_IMPORT_REQUIRE_STATIC | QAIRT_IMPORT_INT64_TO_INT32;
  const std::string path = model_path;
  const bool tflite = path.size() >= 7 && path.compare(path.size() - 7, 7, ".tflite") == 0;
  qairt_graph_t* graph = nullptr;
  qairt_import_report_t* report = nullptr;
  const auto start = std::chrono::steady_clock::now();
  qairt_status_t* is = (tflite ? qairt_import_tflite_file : qairt_import_onnx_file)(
      model_path, import_options ? import_options : &defaults, &graph, &report);
  auto result = std::make_unique<qairt_convert_result_t>();
  result->AddPhase("import", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (is) {
    std::string text = report ? QueryThenFill([&](char* b, size_t c, size_t* l) {
      return qairt_import_report_text(report, b, c, l);
    }) : std::string();
    result->AddError("import", Consume(is) + (text.empty() ? "" : "\n" + text));
  } else {
    qairt::capi::Pipeline(graph, o, result.get()).Run();
  }
  qairt_import_report_destroy(report);
  qairt_graph_destroy(graph);
  *out_result = result.release();
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_convert_result_destroy(qairt_convert_result_t* result) { delete result; }

const char* qairt_convert_result_summary(const qairt_convert_result_t* result) {
  return result ? result->summary.c_str() : "";
}
size_t qairt_convert_result_error_count(const qairt_convert_result_t* result) {
  return result ? result->errors.size() : 0;
}
const char* qairt_convert_result_error(const qairt_convert_result_t* result, size_t index) {
  return result && index < result->errors.size() ? result->errors[index].c_str() : nullptr;
}
size_t qairt_convert_result_warning_count(const qairt_convert_result_t* result) {
  return result ? result->warnings.size() : 0;
}
const char* qairt_convert_result_warning(const qairt_convert_result_t* result, size_t index) {
  return result && index < result->warnings.size() ? result->warnings[index].c_str() : nullptr;
}
const qairt_diagnostics_t* qairt_convert_result_diagnostics(const qairt_convert_result_t* result) {
  return result ? &result->diagnostics : nullptr;
}
const char* qairt_convert_result_log(const qairt_convert_result_t* result) { return result ? result->log.c_str() : ""; }
const qairt_process_result_t* qairt_convert_result_process(const qairt_convert_result_t* result) {
  return result ? result->process : nullptr;
}
const qairt_compare_report_t* qairt_convert_result_accuracy(const qairt_convert_result_t* result) {
  return result ? result->accuracy : nullptr;
}
size_t qairt_convert_result_phase_count(const qairt_convert_result_t* result) {
  return result ? result->phases.size() : 0;
}
const char* qairt_convert_result_phase_name(const qairt_convert_result_t* result, size_t index) {
  return result && index < result->phases.size() ? result->phases[index].first.c_str() : nullptr;
}
double qairt_convert_result_phase_seconds(const qairt_convert_result_t* result, size_t index) {
  return result && index < result->phases.size() ? result->phases[index].second : 0.0;
}

}  // extern "C"
