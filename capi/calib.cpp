// C boundary of calibration and comparison (include/qairt/qairt_calib.h).
#include "qairt/qairt_calib.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>

#include "calib/calibrate.h"
#include "calib/compare.h"
#include "calib/stats.h"
#include "support/atomic_file.h"
#include "support/static_data.h"
#include "capi/capi_internal.h"

struct qairt_calibration_report_t {
  qairt::calib::Report report;
  std::vector<std::string> tensors;
};

struct qairt_compare_report_t {
  qairt::calib::CompareReport report;
};

struct qairt_calibration_stats_t {
  qairt::calib::Stats stats;
};

using qairt::capi::InvalidArg;
namespace calib = qairt::calib;

namespace {

// The 1.3 layout ends after float_inputs.
constexpr size_t kCalibrationOptionsV1Size =
    offsetof(qairt_calibration_options, float_inputs) + sizeof(const char* const*);

using Progress = std::function<void(size_t, size_t, const char*)>;

Progress ToProgress(qairt_progress_fn fn, void* user) {
  if (!fn) return {};
  return [fn, user](size_t done, size_t total, const char* phase) { fn(user, phase, done, total); };
}

qairt_status_t* ToOptions(const qairt_calibration_options* in, calib::Options* o, Progress* progress) {
  qairt_calibration_options c;
  qairt_calibration_options_init(&c);
  if (in) {
    if (auto* s = qairt::capi::ReadVersionedStruct(in, kCalibrationOptionsV1Size, "qairt_calibration_options", &c))
      return s;
  }
  *progress = ToProgress(c.progress, c.progress_user_data);
  if (c.flags & ~(QAIRT_CALIBRATION_PER_CHANNEL | QAIRT_CALIBRATION_PER_ROW | QAIRT_CALIBRATION_LPBQ |
                  QAIRT_CALIBRATION_ADAPTIVE_ROUNDING | QAIRT_CALIBRATION_WIDE_NORM_SCALES |
                  QAIRT_CALIBRATION_BIAS_CORRECTION | QAIRT_CALIBRATION_WIDE_FIXED_RANGES))
    return InvalidArg("qairt_calibration_options.flags: unknown bits {:#x}", c.flags);
  if (c.act_method > QAIRT_CALIBRATION_SEQMSE || c.param_method > QAIRT_CALIBRATION_SEQMSE)
    return InvalidArg("qairt_calibration_options: unknown calibration method");
  if (c.act_schema > 3 || c.param_schema > 3) return InvalidArg("qairt_calibration_options: unknown schema");
  if (c.num_float_inputs && !c.float_inputs)
    return InvalidArg("qairt_calibration_options.float_inputs is NULL but num_float_inputs is {}", c.num_float_inputs);
  o->act_method = static_cast<calib::Method>(c.act_method);
  o->param_method = static_cast<calib::Method>(c.param_method);
  o->act_schema = static_cast<qairt::Symmetry>(c.act_schema);
  o->param_schema = static_cast<qairt::Symmetry>(c.param_schema);
  o->act_bitwidth = c.act_bitwidth;
  o->weights_bitwidth = c.weights_bitwidth;
  o->per_channel = c.flags & QAIRT_CALIBRATION_PER_CHANNEL;
  o->per_row = c.flags & QAIRT_CALIBRATION_PER_ROW;
  o->lpbq = c.flags & QAIRT_CALIBRATION_LPBQ;
  o->adaptive_rounding = c.flags & QAIRT_CALIBRATION_ADAPTIVE_ROUNDING;
  o->wide_norm_scales = c.flags & QAIRT_CALIBRATION_WIDE_NORM_SCALES;
  o->bias_correction = c.flags & QAIRT_CALIBRATION_BIAS_CORRECTION;
  if (c.target) {
    auto t = qairt::capi::TargetOf(c.target);
    if (!t) return InvalidArg("qairt_calibration_options.target is not a valid target handle");
    if (c.flags & QAIRT_CALIBRATION_WIDE_FIXED_RANGES) o->wide_fixed_ranges = qairt::capi::FixedOutputRangesOf(*t);
    o->realize = qairt::capi::RealizeFor(std::move(t));
  } else if (c.flags & QAIRT_CALIBRATION_WIDE_FIXED_RANGES) {
    return InvalidArg("qairt_calibration_options.flags: QAIRT_CALIBRATION_WIDE_FIXED_RANGES needs "
                      "qairt_calibration_options.target (its kernels say which outputs have a fixed range)");
  }
  o->block_size = c.block_size;
  o->histogram_bins = c.histogram_bins;
  o->num_threads = c.num_threads;
  o->percentile = c.percentile;
  for (size_t i = 0; i < c.num_float_inputs; ++i) {
    if (!c.float_inputs[i]) return InvalidArg("qairt_calibration_options.float_inputs[{}] is NULL", i);
    o->float_inputs.emplace_back(c.float_inputs[i]);
  }
  return nullptr;
}

// The input_list read against the graph's inputs.
qairt_status_t* ReadList(const qairt_graph_t& graph, const char* input_list, calib::InputList* out) {
  auto specs = calib::GraphInputSpecs(graph.graph);
  if (!specs.ok()) return qairt::capi::FromStatus(specs.status());
  auto list = calib::ReadInputList(input_list, specs.value());
  if (!list.ok()) return qairt::capi::FromStatus(list.status());
  *out = std::move(list).value();
  return nullptr;
}

qairt_status_t* Finish(qairt::Status st, calib::Report report, qairt_calibration_report_t** out_report) {
  if (!st.ok()) return qairt::capi::FromStatus(st);
  if (out_report) {
    auto r = std::make_unique<qairt_calibration_report_t>();
    r->report = std::move(report);
    for (const auto& n : r->report.activations) r->tensors.push_back(n);
    for (const auto& n : r->report.params) r->tensors.push_back(n);
    *out_report = r.release();
  }
  return nullptr;
}

qairt_status_t* FillAccuracy(const calib::Accuracy& a, qairt_accuracy* out) {
  qairt_accuracy full{};
  full.struct_size = sizeof full;
  full.name = a.name.c_str();
  full.sqnr_db = a.sqnr_db;
  full.cosine = a.cosine;
  full.max_abs = a.max_abs;
  full.argmax_agree = a.argmax_agree;
  full.argmax_positions = a.positions;
  full.argmax_positions_agree = a.positions_agree;
  return qairt::capi::WriteVersionedStruct(full, QAIRT_STRUCT_V1_SIZE(qairt_accuracy, argmax_agree), "qairt_accuracy", out);
}

}  // namespace

namespace qairt::capi {
qairt_status_t* ToCalibrationOptions(const qairt_calibration_options* in, calib::Options* out) {
  Progress progress;
  return ToOptions(in, out, &progress);
}
qairt_status_t* ToCalibrationOptions(const qairt_calibration_options* in, calib::Options* out, Progress* progress) {
  return ToOptions(in, out, progress);
}
}  // namespace qairt::capi

extern "C" {

void qairt_calibration_options_init(qairt_calibration_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->act_method = QAIRT_CALIBRATION_MIN_MAX;
  o->param_method = QAIRT_CALIBRATION_MIN_MAX;
  o->act_schema = 0;    // asymmetric
  o->param_schema = 1;  // symmetric
  o->act_bitwidth = 8;
  o->weights_bitwidth = 8;
  o->histogram_bins = 2048;
  o->num_threads = 1;
  o->percentile = 99.99;
}

qairt_status_t* qairt_calibrate_input_list(qairt_graph_t* graph, const char* input_list,
                                           const qairt_calibration_options* options,
                                           qairt_calibration_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!graph) return InvalidArg("graph must not be NULL");
  if (!input_list) return InvalidArg("input_list must not be NULL");
  calib::Options o;
  Progress progress;
  if (auto* s = ToOptions(options, &o, &progress)) return s;
  calib::InputList list;
  if (auto* s = ReadList(*graph, input_list, &list)) return s;
  calib::Report report;
  auto st = calib::Calibrate(&graph->graph, calib::SampleSource::FromInputList(list), o, &report,
                             progress);
  return Finish(st, std::move(report), out_report);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_calibrate_buffers(qairt_graph_t* graph, size_t num_samples, const void* const* buffers,
                                        const size_t* sizes, const qairt_calibration_options* options,
                                        qairt_calibration_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!graph) return InvalidArg("graph must not be NULL");
  if (num_samples && (!buffers || !sizes)) return InvalidArg("buffers and sizes must not be NULL");
  calib::Options o;
  Progress progress;
  if (auto* s = ToOptions(options, &o, &progress)) return s;
  auto specs = calib::GraphInputSpecs(graph->graph);
  if (!specs.ok()) return qairt::capi::FromStatus(specs.status());
  const size_t n_in = specs.value().size();
  for (size_t s = 0; s < num_samples; ++s)
    for (size_t i = 0; i < n_in; ++i) {
      const size_t k = s * n_in + i;
      if (!buffers[k]) return InvalidArg("sample {}: buffer for input '{}' is NULL", s, specs.value()[i].name);
      if (sizes[k] != specs.value()[i].bytes)
        return InvalidArg("sample {}: input '{}' has {} bytes, needs {}", s, specs.value()[i].name, sizes[k],
                          specs.value()[i].bytes);
    }
  calib::SampleSource src;
  src.count = num_samples;
  src.load = [&](size_t s) -> qairt::Result<std::vector<std::vector<uint8_t>>> {
    std::vector<std::vector<uint8_t>> out(n_in);
    for (size_t i = 0; i < n_in; ++i) {
      const auto* p = static_cast<const uint8_t*>(buffers[s * n_in + i]);
      out[i].assign(p, p + sizes[s * n_in + i]);
    }
    return out;
  };
  calib::Report report;
  auto st = calib::Calibrate(&graph->graph, src, o, &report, progress);
  return Finish(st, std::move(report), out_report);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_calibrate_params(qairt_graph_t* graph, const qairt_calibration_options* options,
                                       qairt_calibration_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!graph) return InvalidArg("graph must not be NULL");
  calib::Options o;
  Progress progress;
  if (auto* s = ToOptions(options, &o, &progress)) return s;
  calib::Report report;
  auto st = calib::CalibrateParams(&graph->graph, o, &report);
  return Finish(st, std::move(report), out_report);
  QAIRT_CAPI_END
}

void qairt_calibration_report_destroy(qairt_calibration_report_t* r) { delete r; }
size_t qairt_calibration_report_samples(const qairt_calibration_report_t* r) { return r ? r->report.samples : 0; }
size_t qairt_calibration_report_activation_count(const qairt_calibration_report_t* r) {
  return r ? r->report.activations.size() : 0;
}
size_t qairt_calibration_report_param_count(const qairt_calibration_report_t* r) {
  return r ? r->report.params.size() : 0;
}
const char* qairt_calibration_report_tensor(const qairt_calibration_report_t* r, size_t i) {
  return r && i < r->tensors.size() ? r->tensors[i].c_str() : nullptr;
}
size_t qairt_calibration_report_warning_count(const qairt_calibration_report_t* r) {
  return r ? r->report.warnings.size() : 0;
}
const char* qairt_calibration_report_warning(const qairt_calibration_report_t* r, size_t i) {
  return r && i < r->report.warnings.size() ? r->report.warnings[i].c_str() : nullptr;
}
size_t qairt_calibration_report_note_count(const qairt_calibration_report_t* r) { return r ? r->report.notes.size() : 0; }
const char* qairt_calibration_report_note(const qairt_calibration_report_t* r, size_t i) {
  return r && i < r->report.notes.size() ? r->report.notes[i].c_str() : nullptr;
}

qairt_status_t* qairt_compare_input_list(const qairt_graph_t* float_graph, const qairt_graph_t* quantized,
                                         const char* input_list, uint32_t flags, qairt_compare_report_t** out_report) {
  return qairt_compare_input_list_progress(float_graph, quantized, input_list, flags, nullptr, nullptr, out_report);
}

qairt_status_t* qairt_compare_input_list_progress(const qairt_graph_t* float_graph, const qairt_graph_t* quantized,
                                                  const char* input_list, uint32_t flags, qairt_progress_fn progress,
                                                  void* progress_user_data, qairt_compare_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!out_report) return InvalidArg("out_report must not be NULL");
  if (!float_graph || !quantized || !input_list) return InvalidArg("graphs and input_list must not be NULL");
  if (flags & ~QAIRT_COMPARE_PER_LAYER) return InvalidArg("flags: unknown bits {:#x}", flags);
  auto specs = calib::GraphInputSpecs(float_graph->graph);
  if (!specs.ok()) return qairt::capi::FromStatus(specs.status());
  auto list = calib::ReadInputList(input_list, specs.value());
  if (!list.ok()) return qairt::capi::FromStatus(list.status());
  auto r = std::make_unique<qairt_compare_report_t>();
  auto st = calib::Compare(float_graph->graph, quantized->graph, calib::SampleSource::FromInputList(list.value()),
                           flags & QAIRT_COMPARE_PER_LAYER, &r->report, ToProgress(progress, progress_user_data));
  if (!st.ok()) return qairt::capi::FromStatus(st);
  *out_report = r.release();
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_compare_report_destroy(qairt_compare_report_t* r) { delete r; }
size_t qairt_compare_report_output_count(const qairt_compare_report_t* r) { return r ? r->report.outputs.size() : 0; }
size_t qairt_compare_report_layer_count(const qairt_compare_report_t* r) { return r ? r->report.layers.size() : 0; }
size_t qairt_compare_report_samples(const qairt_compare_report_t* r) { return r ? r->report.samples : 0; }
qairt_status_t* qairt_compare_report_output(const qairt_compare_report_t* r, size_t i, qairt_accuracy* out) {
  QAIRT_CAPI_BEGIN
  if (!r || i >= r->report.outputs.size()) return InvalidArg("output index {} out of range", i);
  return FillAccuracy(r->report.outputs[i], out);
  QAIRT_CAPI_END
}
qairt_status_t* qairt_compare_report_layer(const qairt_compare_report_t* r, size_t i, qairt_accuracy* out) {
  QAIRT_CAPI_BEGIN
  if (!r || i >= r->report.layers.size()) return InvalidArg("layer index {} out of range", i);
  return FillAccuracy(r->report.layers[i], out);
  QAIRT_CAPI_END
}
qairt_status_t* qairt_compare_report_render(const qairt_compare_report_t* r, qairt_compare_format_t format, char* buf,
                                            size_t capacity, size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!r) return InvalidArg("report must not be NULL");
  std::string text;
  switch (format) {
    case QAIRT_COMPARE_TEXT: text = calib::CompareText(r->report); break;
    case QAIRT_COMPARE_JSON: text = calib::CompareJson(r->report); break;
    case QAIRT_COMPARE_SUMMARY: text = calib::CompareSummaryLine(r->report); break;
    default: return InvalidArg("format {} is not a qairt_compare_format", format);
  }
  return qairt::capi::FillString(text, buf, capacity, out_length, "compare report");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_calibration_stats_collect(const qairt_graph_t* graph, const char* input_list,
                                                const qairt_calibration_options* options, uint32_t shard_index,
                                                uint32_t shard_count, const qairt_calibration_stats_t* ranges,
                                                qairt_calibration_stats_t** out_stats) {
  QAIRT_CAPI_BEGIN
  if (!graph || !input_list || !out_stats) return InvalidArg("graph, input_list and out_stats must not be NULL");
  calib::Options o;
  Progress progress;
  if (auto* s = ToOptions(options, &o, &progress)) return s;
  calib::InputList list;
  if (auto* s = ReadList(*graph, input_list, &list)) return s;
  auto out = std::make_unique<qairt_calibration_stats_t>();
  if (auto st = calib::CollectStats(graph->graph, calib::SampleSource::FromInputList(list), o, shard_index,
                                    shard_count ? shard_count : 1, ranges ? &ranges->stats : nullptr, &out->stats,
                                    progress);
      !st.ok())
    return qairt::capi::FromStatus(st);
  out->stats.input_list = input_list;
  *out_stats = out.release();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_calibration_stats_merge(const qairt_calibration_stats_t* const* parts, size_t count,
                                              qairt_calibration_stats_t** out_stats) {
  QAIRT_CAPI_BEGIN
  if (!parts || !out_stats) return InvalidArg("parts and out_stats must not be NULL");
  std::vector<const calib::Stats*> in;
  for (size_t i = 0; i < count; ++i) {
    if (!parts[i]) return InvalidArg("parts[{}] is NULL", i);
    in.push_back(&parts[i]->stats);
  }
  auto out = std::make_unique<qairt_calibration_stats_t>();
  if (auto st = calib::MergeStats(in, &out->stats); !st.ok()) return qairt::capi::FromStatus(st);
  *out_stats = out.release();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_calibration_stats_load_bytes(const void* data, size_t size, qairt_calibration_stats_t** out_stats) {
  QAIRT_CAPI_BEGIN
  if ((!data && size) || !out_stats) return InvalidArg("data and out_stats must not be NULL");
  auto out = std::make_unique<qairt_calibration_stats_t>();
  const std::string_view bytes(static_cast<const char*>(data), size);
  if (auto st = calib::ParseStats(bytes, "(bytes)", &out->stats); !st.ok()) return qairt::capi::FromStatus(st);
  *out_stats = out.release();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_calibration_stats_load_file(const char* path, qairt_calibration_stats_t** out_stats) {
  QAIRT_CAPI_BEGIN
  if (!path || !out_stats) return InvalidArg("path and out_stats must not be NULL");
  struct stat st {};
  if (::stat(path, &st) != 0)
    return qairt::capi::MakeStatus(QAIRT_IO_ERROR, fmt::format("calibration statistics '{}': {}", path,
                                                                std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return qairt::capi::MakeStatus(QAIRT_IO_ERROR,
                                   fmt::format("calibration statistics '{}': not a regular file", path));
  auto map = qairt::StaticData::MapFile(path, 0, static_cast<uint64_t>(st.st_size));
  if (!map.ok()) return qairt::capi::FromStatus(map.status());
  auto out = std::make_unique<qairt_calibration_stats_t>();
  const auto& d = map.value();
  if (auto s = calib::ParseStats(std::string_view(reinterpret_cast<const char*>(d->data()), d->size()), path,
                                 &out->stats);
      !s.ok())
    return qairt::capi::FromStatus(s);
  *out_stats = out.release();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_calibration_stats_write_file(const qairt_calibration_stats_t* stats, const char* path) {
  QAIRT_CAPI_BEGIN
  if (!stats || !path) return InvalidArg("stats and path must not be NULL");
  return qairt::capi::FromStatus(
      qairt::WriteFileAtomically(path, calib::SerializeStats(stats->stats), "calibration statistics"));
  QAIRT_CAPI_END
}

qairt_status_t* qairt_calibration_stats_write_bytes(const qairt_calibration_stats_t* stats, void* buf, size_t capacity,
                                                    size_t* out_size) {
  QAIRT_CAPI_BEGIN
  if (!stats || !out_size) return InvalidArg("stats and out_size must not be NULL");
  const std::string bytes = calib::SerializeStats(stats->stats);
  if (buf) {
    if (capacity < bytes.size())
      return qairt::capi::MakeStatus(QAIRT_BUFFER_TOO_SMALL,
                                     fmt::format("calibration statistics: buffer of {} bytes, need {}", capacity,
                                                 bytes.size()));
    std::memcpy(buf, bytes.data(), bytes.size());
  }
  *out_size = bytes.size();
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_calibration_stats_destroy(qairt_calibration_stats_t* stats) { delete stats; }

uint32_t qairt_calibration_stats_round(const qairt_calibration_stats_t* stats) { return stats ? stats->stats.round : 0; }

int qairt_calibration_stats_complete(const qairt_calibration_stats_t* stats) {
  return stats && stats->stats.complete() ? 1 : 0;
}

uint64_t qairt_calibration_stats_samples(const qairt_calibration_stats_t* stats) {
  return stats ? stats->stats.samples : 0;
}

const char* qairt_calibration_stats_input_list(const qairt_calibration_stats_t* stats) {
  return stats ? stats->stats.input_list.c_str() : nullptr;
}

qairt_status_t* qairt_calibrate_from_stats(qairt_graph_t* graph, const qairt_calibration_stats_t* stats,
                                           const qairt_calibration_options* options,
                                           qairt_calibration_report_t** out_report) {
  QAIRT_CAPI_BEGIN
  if (!graph || !stats) return InvalidArg("graph and stats must not be NULL");
  calib::Options o;
  Progress progress;
  if (auto* s = ToOptions(options, &o, &progress)) return s;
  calib::Report report;
  auto st = calib::CalibrateFromStats(&graph->graph, stats->stats, o, &report);
  return Finish(st, std::move(report), out_report);
  QAIRT_CAPI_END
}

}  // extern "C"
