// C boundary of rewrites, sensitivity analysis and mixed precision
// (include/qairt/qairt_analyze.h).
#include "qairt/qairt_analyze.h"

#include <cstddef>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "analyze/auto_quant.h"
#include "analyze/analysis_common.h"
#include "analyze/sensitivity.h"
#include "calib/calibrate.h"
#include "calib/input_list.h"
#include "calib/sample_eval.h"
#include "capi/capi_internal.h"
#include "passes/pass_manager.h"
#include "passes/rewrite/rewrite.h"
#include "target/target_descriptor.h"

struct qairt_analysis_report_t {
  qairt_analysis_kind_t kind = 0;
  qairt::rewrite::Report rewrites;
  qairt::analyze::SensitivityReport sensitivity;
  qairt::analyze::MixedReport mixed;
  std::shared_ptr<const qairt::analyze::MixedGains> gains;  // QAIRT_ANALYSIS_MIXED_GAINS
  qairt::analyze::AutoQuantReport auto_quant;                // QAIRT_ANALYSIS_AUTO_QUANT
  std::vector<std::string> warnings;
};

using qairt::capi::InvalidArg;
using qairt::capi::RealizeFor;
namespace calib = qairt::calib;
namespace analyze = qairt::analyze;

namespace {

// The struct as ABI 1.5 defined it (ending at num_enabled); later fields read
// as their defaults for callers compiled against it.
constexpr size_t kRewriteOptionsV1Size = offsetof(qairt_rewrite_options, num_enabled) + sizeof(size_t);
// Frozen at the 1.5 layout (ends at mixed_value): a later field must not
// reject callers compiled against it.
constexpr size_t kAnalysisOptionsV1Size = offsetof(qairt_analysis_options, mixed_value) + sizeof(double);
// qairt_calibration_options' first layout (ABI 1.3, ending at float_inputs).
constexpr size_t kCalibrationOptionsMinSize =
    offsetof(qairt_calibration_options, float_inputs) + sizeof(const char* const*);

qairt::Result<calib::SampleSource> SamplesOf(const qairt::Graph& g, const char* input_list,
                                             std::shared_ptr<calib::InputList>* keep) {
  auto specs = calib::GraphInputSpecs(g);
  if (!specs.ok()) return specs.status();
  auto list = calib::ReadInputList(input_list, specs.value());
  if (!list.ok()) return list.status();
  *keep = std::make_shared<calib::InputList>(std::move(list).value());
  calib::SampleSource s = calib::SampleSource::FromInputList(**keep);
  if (s.count == 0) return qairt::InvalidArgument("input_list '{}' has no samples", input_list);
  return s;
}

// The quantized SQNR of a float graph on `samples`: calibrated with
// `calibration`, processed by `realize` when set, simulated, against the
// float graph rewriting started from (`reference`, computed on first use),
// measured on the tensors that rank configurations (logits under a softmax
// head: a saturated probability is exact at any bit width).
struct QuantizedJudge {
  calib::Options calibration;
  std::function<qairt::Result<qairt::Graph>(const qairt::Graph&)> realize;
  calib::SampleSource samples;
  qairt::Graph original;
  std::vector<std::string> ranked;  // tensor names, one per graph output
  std::optional<calib::SampleOutputs> reference;
  // The judgement's runs follow each other: one arena for all of them.
  std::shared_ptr<qairt::exec::Workspace> workspace = std::make_shared<qairt::exec::Workspace>();

  // `g`'s values of the ranked tensors over the samples.
  qairt::Result<calib::SampleOutputs> RankedOutputs(const qairt::Graph& g, bool simulate) const {
    qairt::Graph marked = g;
    for (const std::string& name : ranked) {
      auto id = marked.FindTensor(name);
      if (!id) return qairt::InvalidArgument("tensor '{}' is missing from the rewritten graph", name);
      if (!marked.tensor(*id).is_output)
        if (auto st = marked.MarkOutput(*id); !st.ok()) return st;
    }
    auto all = calib::RunSamples(marked, samples, simulate, calibration.num_threads, workspace);
    if (!all.ok()) return all.status();
    calib::SampleOutputs picked;
    for (const std::string& name : ranked)
      for (size_t k = 0; k < marked.outputs().size(); ++k)
        if (marked.tensor(marked.outputs()[k]).name == name) {
          picked.push_back(std::move(all.value()[k]));
          break;
        }
    return picked;
  }

  qairt::Result<double> operator()(const qairt::Graph& g) {
    if (!reference) {
      for (qairt::TensorId t : analyze::detail::RankingTensors(original)) ranked.push_back(original.tensor(t).name);
      auto ref = RankedOutputs(original, false);
      if (!ref.ok()) return ref.status();
      reference = std::move(ref).value();
    }
    qairt::Graph q = g;
    calib::Report rep;
    if (auto st = calib::Calibrate(&q, samples, calibration, &rep); !st.ok()) return st;
    if (realize) {
      auto r = realize(q);
      if (!r.ok()) return r.status();
      q = std::move(r).value();
    }
    auto got = RankedOutputs(q, true);
    if (!got.ok()) return got.status();
    return calib::Worst(*reference, got.value()).sqnr_db;
  }
};

qairt_status_t* ToAnalysisOptions(const qairt_analysis_options* in, analyze::Options* o, analyze::MixedMode* mode,
                                  double* value, std::shared_ptr<const analyze::MixedGains>* gains = nullptr,
                                  uint32_t* mixed_flags = nullptr) {
  qairt_analysis_options a;
  qairt_analysis_options_init(&a);
  if (in)
    if (auto* s = qairt::capi::ReadVersionedStruct(in, kAnalysisOptionsV1Size, "qairt_analysis_options", &a))
      return s;
  if (auto* s = qairt::capi::ToCalibrationOptions(a.calibration, &o->calibration)) return s;
  if ((a.high_act_bitwidth != 8 && a.high_act_bitwidth != 16) ||
      (a.high_weights_bitwidth != 8 && a.high_weights_bitwidth != 16))
    return InvalidArg("qairt_analysis_options: high_act_bitwidth and high_weights_bitwidth must be 8 or 16 (got {}, {})",
                      a.high_act_bitwidth, a.high_weights_bitwidth);
  if (a.mixed_mode > QAIRT_MIXED_PERCENT) return InvalidArg("qairt_analysis_options.mixed_mode {} is unknown", a.mixed_mode);
  if (a.mixed_mode == QAIRT_MIXED_PERCENT && !(a.mixed_value >= 0 && a.mixed_value <= 100))
    return InvalidArg("qairt_analysis_options.mixed_value must be a percentage in [0, 100], got {}", a.mixed_value);
  if (a.mixed_mode == QAIRT_MIXED_BUDGET && !std::isfinite(a.mixed_value))
    return InvalidArg("qairt_analysis_options.mixed_value must be a finite budget in dB");
  o->high_act_bitwidth = a.high_act_bitwidth;
  o->high_weights_bitwidth = a.high_weights_bitwidth;
  if (a.target) {
    // Only precisions the target has kernels for.
    auto t = qairt::capi::TargetOf(a.target);
    if (t) {
      if (!(t->capabilities & qairt::target::kCapInt16Activations)) o->high_act_bitwidth = 8;
      if (o->high_act_bitwidth == 16 && !(t->capabilities & qairt::target::kCapA16W16)) o->high_weights_bitwidth = 8;
      // Whether any kernel takes 16-bit weights per channel; if none does,
      // promoted weights are calibrated per tensor so kernels exist for them.
      bool w16_per_channel = false;
      for (const auto& op : t->ops)
        for (const auto& k : op.kernels)
          for (const auto& slot : k.inputs)
            if (slot.role == qairt::target::SlotRole::kWeight &&
                (slot.Allows(qairt::DType::kSFixed16) || slot.Allows(qairt::DType::kUFixed16)) &&
                (slot.granularity_mask == 0 ||
                 (slot.granularity_mask & (1u << static_cast<uint32_t>(qairt::EncodingKind::kPerChannel)))))
              w16_per_channel = true;
      o->high_weights_per_tensor = !w16_per_channel;
      // Candidates are scored as the target will run them.
      o->realize = RealizeFor(t);
    }
  }
  o->high_act_bitwidth = std::max(o->high_act_bitwidth, o->calibration.act_bitwidth);
  o->high_weights_bitwidth = std::max(o->high_weights_bitwidth, o->calibration.weights_bitwidth);
  o->num_threads = a.num_threads;  // 0: every core (results do not depend on it)
  o->calibration.num_threads = o->num_threads;
  if (a.mixed_gains && a.mixed_gains->kind != QAIRT_ANALYSIS_MIXED_GAINS)
    return InvalidArg("qairt_analysis_options.mixed_gains is not a QAIRT_ANALYSIS_MIXED_GAINS report");
  if (gains && a.mixed_gains) *gains = a.mixed_gains->gains;
  if (a.shard_count > 1 && a.shard_index >= a.shard_count)
    return InvalidArg("qairt_analysis_options: shard_index {} must be below shard_count {}", a.shard_index,
                      a.shard_count);
  o->shard_index = a.shard_count > 1 ? a.shard_index : 0;
  o->shard_count = a.shard_count > 1 ? a.shard_count : 1;
  if (a.mixed_flags & ~QAIRT_MIXED_PROMOTIONS_ONLY)
    return InvalidArg("qairt_analysis_options.mixed_flags {:#x} has unknown bits (known: QAIRT_MIXED_PROMOTIONS_ONLY)",
                      a.mixed_flags);
  if (a.reserved2 != 0) return InvalidArg("qairt_analysis_options.reserved2 must be 0");
  if (mixed_flags) *mixed_flags = a.mixed_flags;
  *mode = static_cast<analyze::MixedMode>(a.mixed_mode);
  *value = a.mixed_value;
  return nullptr;
}

}  // namespace

extern "C" {

void qairt_rewrite_options_init(qairt_rewrite_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->min_cosine = 0.999999;
  o->num_threads = 1;
}

size_t qairt_rewrite_count(void) { return qairt::rewrite::Rewrites().size(); }
const char* qairt_rewrite_name(size_t i) {
  return i < qairt::rewrite::Rewrites().size() ? qairt::rewrite::Rewrites()[i].name : nullptr;
}
const char* qairt_rewrite_description(size_t i) {
  return i < qairt::rewrite::Rewrites().size() ? qairt::rewrite::Rewrites()[i].description : nullptr;
}
int qairt_rewrite_on_by_default(size_t i) {
  return i < qairt::rewrite::Rewrites().size() && qairt::rewrite::Rewrites()[i].on_by_default ? 1 : 0;
}

qairt_status_t* qairt_rewrite_graph(qairt_graph_t* graph, const qairt_rewrite_options* options,
                                    qairt_analysis_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!graph) return InvalidArg("graph must not be NULL");
  qairt_rewrite_options r;
  qairt_rewrite_options_init(&r);
  if (options)
    if (auto* s = qairt::capi::ReadVersionedStruct(options, kRewriteOptionsV1Size, "qairt_rewrite_options", &r))
      return s;
  if (r.num_disabled && !r.disabled) return InvalidArg("qairt_rewrite_options.disabled is NULL but num_disabled is {}", r.num_disabled);
  if (!(r.min_cosine > 0 && r.min_cosine <= 1))
    return InvalidArg("qairt_rewrite_options.min_cosine must be in (0, 1], got {}", r.min_cosine);
  if (r.flags & ~QAIRT_REWRITE_NO_VERIFY)
    return InvalidArg("qairt_rewrite_options.flags has unknown bits 0x{:x}", r.flags);
  qairt::rewrite::Options o;
  o.min_cosine = r.min_cosine;
  o.verify = !(r.flags & QAIRT_REWRITE_NO_VERIFY);
  if (r.target) {
    auto t = qairt::capi::TargetOf(r.target);
    if (t)
      o.target_has_op = [t](const std::string& type) {
        for (const auto& op : t->ops)
          if (op.op == type) return !op.kernels.empty();
        return false;
      };
  }
  o.num_threads = r.num_threads;  // 0: every core (results do not depend on it)
  for (size_t i = 0; i < r.num_disabled; ++i) {
    if (!r.disabled[i]) return InvalidArg("qairt_rewrite_options.disabled[{}] is NULL", i);
    o.disabled.emplace_back(r.disabled[i]);
  }
  if (r.num_enabled && !r.enabled) return InvalidArg("qairt_rewrite_options.enabled is NULL but num_enabled is {}", r.num_enabled);
  for (size_t i = 0; i < r.num_enabled; ++i) {
    if (!r.enabled[i]) return InvalidArg("qairt_rewrite_options.enabled[{}] is NULL", i);
    o.enabled.emplace_back(r.enabled[i]);
  }
  std::shared_ptr<calib::InputList> keep;
  if (r.input_list) {
    auto s = SamplesOf(graph->graph, r.input_list, &keep);
    if (!s.ok()) return qairt::capi::FromStatus(s.status());
    o.samples = std::move(s).value();
  }
  if (r.quantized_judge) {
    if (!r.input_list)
      return InvalidArg("qairt_rewrite_options.quantized_judge needs input_list (the samples the quantized model is "
                        "scored on)");
    auto judge = std::make_shared<QuantizedJudge>();
    if (auto* s = qairt::capi::ToCalibrationOptions(r.quantized_judge, &judge->calibration)) return s;
    judge->calibration.num_threads = o.num_threads;
    if (r.target)
      if (auto t = qairt::capi::TargetOf(r.target)) judge->realize = RealizeFor(t);
    judge->samples = o.samples.count > 4 ? calib::Slice(o.samples, 0, 4) : o.samples;
    judge->original = graph->graph;
    o.quantized_score = [judge](const qairt::Graph& g) { return (*judge)(g); };
  }
  auto report = std::make_unique<qairt_analysis_report_t>();
  report->kind = QAIRT_ANALYSIS_REWRITES;
  if (auto st = qairt::rewrite::RunRewrites(&graph->graph, o, &report->rewrites); !st.ok())
    return qairt::capi::FromStatus(st);
  report->warnings = report->rewrites.warnings;
  if (out_report) *out_report = report.release();
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_analysis_options_init(qairt_analysis_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->high_act_bitwidth = 16;
  o->high_weights_bitwidth = 16;
  o->num_threads = 1;
}

qairt_status_t* qairt_analyze_sensitivity(const qairt_graph_t* float_graph, const char* input_list,
                                          const qairt_analysis_options* options, qairt_analysis_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!float_graph) return InvalidArg("float_graph must not be NULL");
  if (!input_list) return InvalidArg("input_list must not be NULL");
  analyze::Options o;
  analyze::MixedMode mode;
  double value;
  if (auto* s = ToAnalysisOptions(options, &o, &mode, &value)) return s;
  std::shared_ptr<calib::InputList> keep;
  auto samples = SamplesOf(float_graph->graph, input_list, &keep);
  if (!samples.ok()) return qairt::capi::FromStatus(samples.status());
  auto report = std::make_unique<qairt_analysis_report_t>();
  report->kind = QAIRT_ANALYSIS_SENSITIVITY;
  if (auto st = analyze::AnalyzeSensitivity(float_graph->graph, samples.value(), o, &report->sensitivity); !st.ok())
    return qairt::capi::FromStatus(st);
  if (out_report) *out_report = report.release();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_mixed_precision(qairt_graph_t* graph, const char* input_list,
                                      const qairt_analysis_options* options, qairt_analysis_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!graph) return InvalidArg("graph must not be NULL");
  if (!input_list) return InvalidArg("input_list must not be NULL");
  analyze::MixedOptions m;
  uint32_t mixed_flags = 0;
  if (auto* s = ToAnalysisOptions(options, &m.analysis, &m.mode, &m.value, &m.gains, &mixed_flags)) return s;
  m.raise_base = !(mixed_flags & QAIRT_MIXED_PROMOTIONS_ONLY);
  if (auto t = qairt::capi::TargetOf(options ? options->target : nullptr))
    m.fixed_ranges = qairt::capi::FixedOutputRangesOf(*t);
  if (options && options->calibration) {  // its progress callback follows the search's phases
    calib::Options unused;
    if (auto* s = qairt::capi::ToCalibrationOptions(options->calibration, &unused, &m.progress)) return s;
  }
  std::shared_ptr<calib::InputList> keep;
  auto samples = SamplesOf(graph->graph, input_list, &keep);
  if (!samples.ok()) return qairt::capi::FromStatus(samples.status());
  auto report = std::make_unique<qairt_analysis_report_t>();
  if (m.analysis.shard_count > 1) {
    // A shard of the gains: the graph stays as it is.
    auto gains = std::make_shared<analyze::MixedGains>();
    report->kind = QAIRT_ANALYSIS_MIXED_GAINS;
    if (auto st = analyze::MixedPrecisionGains(graph->graph, samples.value(), m, gains.get()); !st.ok())
      return qairt::capi::FromStatus(st);
    report->gains = std::move(gains);
    if (out_report) *out_report = report.release();
    return nullptr;
  }
  report->kind = QAIRT_ANALYSIS_MIXED;
  if (auto st = analyze::ChooseMixedPrecision(&graph->graph, samples.value(), m, &report->mixed); !st.ok())
    return qairt::capi::FromStatus(st);
  if (!report->mixed.met) {
    // What can still meet it: a better base to promote from (when the
    // calibration does not correct biases or round adaptively yet), more
    // promotions than the budget's cap, or a lower budget.
    const uint32_t flags = options && options->calibration ? options->calibration->flags : 0u;
    const bool base_searches = report->mixed.techniques_measured || ((flags & QAIRT_CALIBRATION_BIAS_CORRECTION) &&
                                                                     (flags & QAIRT_CALIBRATION_ADAPTIVE_ROUNDING));
    report->warnings.push_back(analyze::MixedBudgetWarning(report->mixed, m.value, m.max_layers_percent, base_searches));
  }
  if (out_report) *out_report = report.release();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_choose_calibration(const qairt_graph_t* float_graph, const char* input_list,
                                         const qairt_analysis_options* options, qairt_calibration_options* chosen,
                                         qairt_analysis_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!float_graph) return InvalidArg("float_graph must not be NULL");
  if (!input_list) return InvalidArg("input_list must not be NULL");
  if (chosen && chosen->struct_size < kCalibrationOptionsMinSize)
    return InvalidArg("chosen->struct_size {} is below qairt_calibration_options' first layout ({})",
                      chosen->struct_size, kCalibrationOptionsMinSize);
  analyze::AutoQuantOptions a;
  analyze::MixedMode mode;
  double value;
  if (auto* s = ToAnalysisOptions(options, &a.analysis, &mode, &value)) return s;
  qairt_calibration_options given;
  qairt_calibration_options_init(&given);
  if (options && options->calibration) {  // its progress callback follows the configurations
    std::memcpy(&given, options->calibration, std::min<size_t>(options->calibration->struct_size, sizeof given));
    given.struct_size = sizeof given;
    calib::Options unused;
    if (auto* s = qairt::capi::ToCalibrationOptions(options->calibration, &unused, &a.progress)) return s;
  }
  const qairt_target_t* target = options ? options->target : nullptr;
  if (auto t = qairt::capi::TargetOf(target)) a.fixed_ranges = qairt::capi::FixedOutputRangesOf(*t);
  std::shared_ptr<calib::InputList> keep;
  auto samples = SamplesOf(float_graph->graph, input_list, &keep);
  if (!samples.ok()) return qairt::capi::FromStatus(samples.status());
  auto report = std::make_unique<qairt_analysis_report_t>();
  report->kind = QAIRT_ANALYSIS_AUTO_QUANT;
  calib::Options best;
  if (auto st = analyze::ChooseCalibration(float_graph->graph, samples.value(), a, &best, &report->auto_quant);
      !st.ok())
    return qairt::capi::FromStatus(st);
  if (chosen) {
    qairt_calibration_options c = given;
    c.act_method = static_cast<qairt_calibration_method_t>(best.act_method);
    c.param_method = static_cast<qairt_calibration_method_t>(best.param_method);
    auto set = [&](uint32_t flag, bool on) { c.flags = on ? (c.flags | flag) : (c.flags & ~flag); };
    set(QAIRT_CALIBRATION_BIAS_CORRECTION, best.bias_correction);
    set(QAIRT_CALIBRATION_ADAPTIVE_ROUNDING, best.adaptive_rounding);
    set(QAIRT_CALIBRATION_WIDE_FIXED_RANGES, !best.wide_fixed_ranges.empty());
    if ((best.bias_correction || !best.wide_fixed_ranges.empty()) && !c.target) c.target = target;
    const uint32_t size = chosen->struct_size;
    std::memcpy(chosen, &c, std::min<size_t>(size, sizeof c));
    chosen->struct_size = size;
  }
  if (out_report) *out_report = report.release();
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_analysis_report_destroy(qairt_analysis_report_t* report) { delete report; }

qairt_status_t* qairt_analysis_report_summary(const qairt_analysis_report_t* r, qairt_analysis_summary* out) {
  QAIRT_CAPI_BEGIN
  if (!r) return InvalidArg("report must not be NULL");
  qairt_analysis_summary s{};
  s.struct_size = sizeof s;
  s.kind = r->kind;
  if (r->kind == QAIRT_ANALYSIS_REWRITES) {
    s.samples = r->rewrites.samples;
    s.synthetic = r->rewrites.synthetic;
    s.ops_before = r->rewrites.ops_before;
    s.ops_after = r->rewrites.ops_after;
  } else if (r->kind == QAIRT_ANALYSIS_SENSITIVITY) {
    s.samples = r->sensitivity.samples;
    s.sqnr_base_db = r->sensitivity.sqnr_base;
    s.sqnr_high_db = r->sensitivity.sqnr_high;
    s.units = r->sensitivity.units.size();
  } else if (r->kind == QAIRT_ANALYSIS_MIXED_GAINS) {
    s.samples = r->gains->samples;
    s.units = r->gains->units.size();
  } else if (r->kind == QAIRT_ANALYSIS_AUTO_QUANT) {
    const auto& a = r->auto_quant;
    s.samples = a.samples;
    s.units = a.trials.size();
    s.sqnr_base_db = a.trials.empty() ? NAN : a.trials.front().sqnr_db;
    s.sqnr_chosen_db = a.trials.empty() ? NAN : a.trials[a.chosen].sqnr_db;
  } else {
    s.sqnr_base_db = r->mixed.sqnr_base;
    s.sqnr_high_db = r->mixed.sqnr_high;
    s.sqnr_chosen_db = r->mixed.sqnr_chosen;
    s.budget_met = r->mixed.met;
    s.units = r->mixed.units;
    s.boundaries = r->mixed.boundaries;
  }
  return qairt::capi::WriteVersionedStruct(s, QAIRT_STRUCT_V1_SIZE(qairt_analysis_summary, boundaries), "qairt_analysis_summary", out);
  QAIRT_CAPI_END
}

size_t qairt_analysis_report_item_count(const qairt_analysis_report_t* r) {
  if (!r) return 0;
  if (r->kind == QAIRT_ANALYSIS_REWRITES) return r->rewrites.rewrites.size();
  if (r->kind == QAIRT_ANALYSIS_SENSITIVITY) return r->sensitivity.units.size();
  if (r->kind == QAIRT_ANALYSIS_MIXED_GAINS) return r->gains->units.size();
  if (r->kind == QAIRT_ANALYSIS_AUTO_QUANT) return r->auto_quant.trials.size();
  return r->mixed.promoted.size();
}

qairt_status_t* qairt_analysis_report_item(const qairt_analysis_report_t* r, size_t i, qairt_analysis_item* out) {
  QAIRT_CAPI_BEGIN
  if (!r) return InvalidArg("report must not be NULL");
  if (i >= qairt_analysis_report_item_count(r))
    return InvalidArg("item index {} out of range ({} items)", i, qairt_analysis_report_item_count(r));
  qairt_analysis_item it{};
  it.struct_size = sizeof it;
  it.quantized_without_db = it.quantized_with_db = std::numeric_limits<double>::quiet_NaN();
  if (r->kind == QAIRT_ANALYSIS_REWRITES) {
    const auto& o = r->rewrites.rewrites[i];
    it.name = o.name.c_str();
    it.count = o.fired;
    it.rolled_back = o.rolled_back;
    it.value = o.cosine;
    it.quantized_without_db = o.quantized_without;
    it.quantized_with_db = o.quantized_with;
    it.kept_off = o.refused;
  } else if (r->kind == QAIRT_ANALYSIS_SENSITIVITY) {
    const auto& u = r->sensitivity.units[i];
    it.name = u.name.c_str();
    it.op_type = u.op_type.c_str();
    it.count = u.depth;
    it.value = u.sqnr_only_quantized;
    it.value_high = u.sqnr_only_high;
  } else if (r->kind == QAIRT_ANALYSIS_MIXED_GAINS) {
    it.name = r->gains->units[i].c_str();
    it.value = r->gains->gains[i];
  } else if (r->kind == QAIRT_ANALYSIS_AUTO_QUANT) {
    const auto& t = r->auto_quant.trials[i];
    it.name = t.label.c_str();
    it.value = t.sqnr_db <= analyze::detail::kInfeasible ? NAN : t.sqnr_db;
    it.value_high = t.seconds;
    it.kept_off = i != r->auto_quant.chosen;
  } else {
    it.name = r->mixed.promoted[i].c_str();
  }
  return qairt::capi::WriteVersionedStruct(it, QAIRT_STRUCT_V1_SIZE(qairt_analysis_item, value_high), "qairt_analysis_item", out);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_analysis_report_read_json(const char* json, size_t size, qairt_analysis_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!json && size) return InvalidArg("json must not be NULL");
  if (!out_report) return InvalidArg("out_report must not be NULL");
  auto report = std::make_unique<qairt_analysis_report_t>();
  const std::string_view text(json ? json : "", size);
  if (analyze::IsMixedGainsJson(text)) {
    auto gains = std::make_shared<analyze::MixedGains>();
    report->kind = QAIRT_ANALYSIS_MIXED_GAINS;
    if (auto st = analyze::ReadMixedGainsJson(text, "(JSON text)", gains.get()); !st.ok())
      return qairt::capi::FromStatus(st);
    report->gains = std::move(gains);
  } else {
    report->kind = QAIRT_ANALYSIS_SENSITIVITY;
    if (auto st = analyze::ReadSensitivityJson(text, "(JSON text)", &report->sensitivity); !st.ok())
      return qairt::capi::FromStatus(st);
  }
  *out_report = report.release();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_analysis_report_merge(const qairt_analysis_report_t* const* parts, size_t count,
                                            qairt_analysis_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!parts && count) return InvalidArg("parts must not be NULL");
  if (!out_report) return InvalidArg("out_report must not be NULL");
  for (size_t i = 0; i < count; ++i) {
    if (!parts[i]) return InvalidArg("parts[{}] must not be NULL", i);
    if (parts[i]->kind != QAIRT_ANALYSIS_SENSITIVITY && parts[i]->kind != QAIRT_ANALYSIS_MIXED_GAINS)
      return InvalidArg("parts[{}] is neither a sensitivity nor a mixed-gains report (only those are merged)", i);
    if (parts[i]->kind != parts[0]->kind)
      return InvalidArg("parts[{}] is of another kind than parts[0] ({} vs {})", i, parts[i]->kind, parts[0]->kind);
  }
  auto report = std::make_unique<qairt_analysis_report_t>();
  report->kind = count ? parts[0]->kind : qairt_analysis_kind_t{QAIRT_ANALYSIS_SENSITIVITY};
  if (report->kind == QAIRT_ANALYSIS_MIXED_GAINS) {
    std::vector<analyze::MixedGains> in;
    for (size_t i = 0; i < count; ++i) in.push_back(*parts[i]->gains);
    auto gains = std::make_shared<analyze::MixedGains>();
    if (auto st = analyze::MergeMixedGains(in, gains.get()); !st.ok()) return qairt::capi::FromStatus(st);
    report->gains = std::move(gains);
  } else {
    std::vector<analyze::SensitivityReport> in;
    for (size_t i = 0; i < count; ++i) in.push_back(parts[i]->sensitivity);
    if (auto st = analyze::MergeSensitivity(in, &report->sensitivity); !st.ok()) return qairt::capi::FromStatus(st);
  }
  *out_report = report.release();
  return nullptr;
  QAIRT_CAPI_END
}

size_t qairt_analysis_report_warning_count(const qairt_analysis_report_t* r) { return r ? r->warnings.size() : 0; }
const char* qairt_analysis_report_warning(const qairt_analysis_report_t* r, size_t i) {
  return r && i < r->warnings.size() ? r->warnings[i].c_str() : nullptr;
}

qairt_status_t* qairt_analysis_report_render(const qairt_analysis_report_t* r, qairt_analysis_format_t format,
                                             char* buf, size_t capacity, size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!r) return InvalidArg("report must not be NULL");
  std::string text;
  const bool known = format >= QAIRT_ANALYSIS_TEXT && format <= QAIRT_ANALYSIS_TEXT_DETAILED;
  if (!known) return InvalidArg("format {} is not a qairt_analysis_format", format);
  if (r->kind == QAIRT_ANALYSIS_REWRITES) {
    if (format == QAIRT_ANALYSIS_SVG) return InvalidArg("an SVG plot is rendered for sensitivity reports only");
    text = format == QAIRT_ANALYSIS_JSON ? qairt::rewrite::ReportJson(r->rewrites)
                                         : qairt::rewrite::ReportText(r->rewrites, format == QAIRT_ANALYSIS_TEXT_DETAILED);
  } else if (r->kind == QAIRT_ANALYSIS_SENSITIVITY) {
    text = format == QAIRT_ANALYSIS_JSON  ? analyze::SensitivityJson(r->sensitivity)
           : format == QAIRT_ANALYSIS_SVG ? analyze::SensitivitySvg(r->sensitivity)
                                          : analyze::SensitivityText(r->sensitivity,
                                                                     format == QAIRT_ANALYSIS_TEXT_DETAILED ? SIZE_MAX : 40);
  } else if (r->kind == QAIRT_ANALYSIS_MIXED_GAINS) {
    if (format == QAIRT_ANALYSIS_SVG) return InvalidArg("an SVG plot is rendered for sensitivity reports only");
    text = format == QAIRT_ANALYSIS_JSON ? analyze::MixedGainsJson(*r->gains) : analyze::MixedGainsText(*r->gains);
  } else if (r->kind == QAIRT_ANALYSIS_AUTO_QUANT) {
    if (format == QAIRT_ANALYSIS_SVG) return InvalidArg("an SVG plot is rendered for sensitivity reports only");
    text = format == QAIRT_ANALYSIS_JSON ? analyze::AutoQuantJson(r->auto_quant) : analyze::AutoQuantText(r->auto_quant);
  } else {
    if (format == QAIRT_ANALYSIS_SVG) return InvalidArg("an SVG plot is rendered for sensitivity reports only");
    text = format == QAIRT_ANALYSIS_JSON ? analyze::MixedJson(r->mixed) : analyze::MixedText(r->mixed);
  }
  return qairt::capi::FillString(text, buf, capacity, out_length, "analysis report");
  QAIRT_CAPI_END
}

}  // extern "C"
