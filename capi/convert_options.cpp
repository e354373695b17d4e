// Reading and checking qairt_convert_options (capi/convert.cpp's entry
// point): the versioned struct, then every combination the pipeline refuses,
// each named by its field.
#include <cmath>
#include <cstddef>
#include <cstring>

#include "capi/capi_internal.h"
#include "qairt/qairt_convert.h"

namespace qairt::capi {

qairt_status_t* ReadConvertOptions(const qairt_convert_options* options, qairt_convert_options* o) {
  if (auto* s = qairt::capi::ReadVersionedStruct(
          options, QAIRT_STRUCT_V1_SIZE(qairt_convert_options, progress_user_data), "qairt_convert_options", o))
    return s;
  constexpr uint32_t kKnownFlags = QAIRT_CONVERT_NO_REWRITES | QAIRT_CONVERT_VERIFY_REWRITES |
                                   QAIRT_CONVERT_QUANTIZED_IO | QAIRT_CONVERT_CHECK_ONLY |
                                   QAIRT_CONVERT_NO_BIAS_AWARE_WEIGHT_SCALES | QAIRT_CONVERT_QDQ_EXTERNAL_DATA |
                                   QAIRT_CONVERT_PARAMS_FROM_VALUES | QAIRT_CONVERT_KEEP_REWRITES |
                                   QAIRT_CONVERT_AUTO_QUANT | QAIRT_CONVERT_MIXED_PROMOTIONS_ONLY;
  if (o->flags & QAIRT_CONVERT_CHECK_ONLY) {
    if (o->output_path || o->qdq_onnx_path || o->encodings_path || o->quantizer_log_path || o->report_path)
      return InvalidArg("qairt_convert_options: CHECK_ONLY writes nothing; output, Q-DQ, encodings, log and report paths "
                        "must be NULL");
    if (o->flags & ~kKnownFlags)
      return InvalidArg("qairt_convert_options.flags: unknown bits {:#x}", o->flags & ~kKnownFlags);
    return nullptr;
  }
  if (!o->target) return InvalidArg("qairt_convert_options.target must not be NULL");
  if (o->flags & ~kKnownFlags) return InvalidArg("qairt_convert_options.flags: unknown bits {:#x}", o->flags & ~kKnownFlags);
  if (o->reserved || o->reserved2) return InvalidArg("qairt_convert_options.reserved fields must be 0");
  if ((o->flags & QAIRT_CONVERT_AUTO_QUANT) && (!o->input_list || o->calibration_stats || o->stats_output))
    return InvalidArg("qairt_convert_options.flags: AUTO_QUANT needs input_list (the samples it measures on) and "
                      "neither calibration_stats nor stats_output");
  if (o->stats_output) {
    if (!o->input_list) return InvalidArg("qairt_convert_options.stats_output needs input_list (the samples to observe)");
    if (o->output_path || o->qdq_onnx_path || o->encodings_path || o->quantizer_log_path || o->report_path ||
        o->calibration_stats || o->stop_after || o->mixed_mode != QAIRT_MIXED_OFF)
      return InvalidArg("qairt_convert_options.stats_output writes only the statistics: output, Q-DQ, encodings, log, "
                        "report, calibration_stats, stop_after and mixed precision must be unset");
    const uint32_t count = o->shard_count ? o->shard_count : 1;
    if (o->shard_index >= count)
      return InvalidArg("qairt_convert_options.shard_index {} must be below shard_count {}", o->shard_index, count);
  } else {
    if (o->stats_ranges) return InvalidArg("qairt_convert_options.stats_ranges needs stats_output");
    if (o->shard_index || o->shard_count > 1)
      return InvalidArg("qairt_convert_options.shard_index/shard_count need stats_output");
    if (!o->output_path && !o->stop_after)
      return InvalidArg("qairt_convert_options.output_path is required (or stop_after for a partial run)");
  }
  if (o->calibration_stats && (o->input_list || o->mixed_mode != QAIRT_MIXED_OFF))
    return InvalidArg("qairt_convert_options.calibration_stats replaces input_list's samples: give one of them "
                      "(eval_input_list still measures accuracy), and no mixed precision");
  if (o->log_level > QAIRT_QUANTIZER_LOG_TRACE)
    return InvalidArg("qairt_convert_options.log_level: {} is not a qairt_quantizer_log_level", o->log_level);
  if (o->log_level != QAIRT_QUANTIZER_LOG_NONE && !o->quantizer_log_path)
    return InvalidArg("qairt_convert_options.log_level needs quantizer_log_path");
  if (o->quantizer_log_path && o->log_level == QAIRT_QUANTIZER_LOG_NONE)
    return InvalidArg("qairt_convert_options.quantizer_log_path needs log_level INFO or TRACE");
  if (o->mixed_mode > QAIRT_MIXED_PERCENT)
    return InvalidArg("qairt_convert_options.mixed_mode: {} is not a qairt_mixed_mode", o->mixed_mode);
  if (o->mixed_mode != QAIRT_MIXED_OFF && !o->input_list)
    return InvalidArg("qairt_convert_options.mixed_mode needs input_list (the samples it measures on)");
  if (o->mixed_mode != QAIRT_MIXED_OFF && !std::isfinite(o->mixed_value))
    return InvalidArg("qairt_convert_options.mixed_value must be finite");
  if (o->qdq_opset != 0 && o->qdq_opset != 13 && o->qdq_opset != 21)
    return InvalidArg("qairt_convert_options.qdq_opset: {} (must be 0, 13 or 21)", o->qdq_opset);
  if (o->num_disabled_rewrites && !o->disabled_rewrites)
    return InvalidArg("qairt_convert_options.disabled_rewrites must not be NULL when num_disabled_rewrites > 0");
  for (size_t i = 0; i < o->num_disabled_rewrites; ++i) {
    const char* name = o->disabled_rewrites[i];
    bool known = false;
    for (size_t k = 0; name && k < qairt_rewrite_count(); ++k) known = known || std::strcmp(qairt_rewrite_name(k), name) == 0;
    if (!known) return InvalidArg("qairt_convert_options.disabled_rewrites[{}]: unknown rewrite '{}'", i, name ? name : "(null)");
  }
  if (o->calibration && o->calibration->struct_size < offsetof(qairt_calibration_options, progress))
    return InvalidArg("qairt_convert_options.calibration: struct_size {} is too small (call qairt_calibration_options_init)",
                      o->calibration->struct_size);
  return nullptr;
}

}  // namespace qairt::capi
