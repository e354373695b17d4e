// Pins the layout (LP64) of the public structs of the module headers without
// shared enums: qairt_import.h, qairt_export.h, qairt_exec.h,
// qairt_container.h, qairt_process.h, qairt_calib.h, qairt_analyze.h,
// qairt_prepare.h and qairt_convert.h. A failing assert means a change broke
// binary compatibility: revert it or bump QAIRT_ABI_MAJOR. Fields are only
// ever appended; a new field gets its own line here.
#include <cstddef>
#include <cstdint>

#include "qairt/qairt_analyze.h"
#include "qairt/qairt_calib.h"
#include "qairt/qairt_container.h"
#include "qairt/qairt_convert.h"
#include "qairt/qairt_exec.h"
#include "qairt/qairt_export.h"
#include "qairt/qairt_import.h"
#include "qairt/qairt_prepare.h"
#include "qairt/qairt_report.h"
#include "qairt/qairt_process.h"

namespace {

#define QAIRT_LAYOUT(type, field, offset) static_assert(offsetof(type, field) == (offset), #type "." #field)

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu  // LP64 layouts
static_assert(sizeof(qairt_accuracy) == 64);
QAIRT_LAYOUT(qairt_accuracy, struct_size, 0);
QAIRT_LAYOUT(qairt_accuracy, reserved, 4);
QAIRT_LAYOUT(qairt_accuracy, name, 8);
QAIRT_LAYOUT(qairt_accuracy, sqnr_db, 16);
QAIRT_LAYOUT(qairt_accuracy, cosine, 24);
QAIRT_LAYOUT(qairt_accuracy, max_abs, 32);
QAIRT_LAYOUT(qairt_accuracy, argmax_agree, 40);
QAIRT_LAYOUT(qairt_accuracy, argmax_positions, 48);
QAIRT_LAYOUT(qairt_accuracy, argmax_positions_agree, 56);

static_assert(sizeof(qairt_analysis_item) == 72);
QAIRT_LAYOUT(qairt_analysis_item, struct_size, 0);
QAIRT_LAYOUT(qairt_analysis_item, rolled_back, 4);
QAIRT_LAYOUT(qairt_analysis_item, name, 8);
QAIRT_LAYOUT(qairt_analysis_item, op_type, 16);
QAIRT_LAYOUT(qairt_analysis_item, count, 24);
QAIRT_LAYOUT(qairt_analysis_item, value, 32);
QAIRT_LAYOUT(qairt_analysis_item, value_high, 40);
QAIRT_LAYOUT(qairt_analysis_item, quantized_without_db, 48);
QAIRT_LAYOUT(qairt_analysis_item, quantized_with_db, 56);
QAIRT_LAYOUT(qairt_analysis_item, kept_off, 64);

static_assert(sizeof(qairt_analysis_options) == 72);
QAIRT_LAYOUT(qairt_analysis_options, struct_size, 0);
QAIRT_LAYOUT(qairt_analysis_options, num_threads, 4);
QAIRT_LAYOUT(qairt_analysis_options, calibration, 8);
QAIRT_LAYOUT(qairt_analysis_options, high_act_bitwidth, 16);
QAIRT_LAYOUT(qairt_analysis_options, high_weights_bitwidth, 20);
QAIRT_LAYOUT(qairt_analysis_options, target, 24);
QAIRT_LAYOUT(qairt_analysis_options, mixed_mode, 32);
QAIRT_LAYOUT(qairt_analysis_options, reserved, 36);
QAIRT_LAYOUT(qairt_analysis_options, mixed_value, 40);
QAIRT_LAYOUT(qairt_analysis_options, shard_index, 48);
QAIRT_LAYOUT(qairt_analysis_options, shard_count, 52);
QAIRT_LAYOUT(qairt_analysis_options, mixed_gains, 56);
QAIRT_LAYOUT(qairt_analysis_options, mixed_flags, 64);
QAIRT_LAYOUT(qairt_analysis_options, reserved2, 68);

static_assert(sizeof(qairt_analysis_summary) == 88);
QAIRT_LAYOUT(qairt_analysis_summary, struct_size, 0);
QAIRT_LAYOUT(qairt_analysis_summary, kind, 4);
QAIRT_LAYOUT(qairt_analysis_summary, samples, 8);
QAIRT_LAYOUT(qairt_analysis_summary, synthetic, 16);
QAIRT_LAYOUT(qairt_analysis_summary, ops_before, 24);
QAIRT_LAYOUT(qairt_analysis_summary, ops_after, 32);
QAIRT_LAYOUT(qairt_analysis_summary, sqnr_base_db, 40);
QAIRT_LAYOUT(qairt_analysis_summary, sqnr_high_db, 48);
QAIRT_LAYOUT(qairt_analysis_summary, sqnr_chosen_db, 56);
QAIRT_LAYOUT(qairt_analysis_summary, budget_met, 64);
QAIRT_LAYOUT(qairt_analysis_summary, units, 72);
QAIRT_LAYOUT(qairt_analysis_summary, boundaries, 80);

static_assert(sizeof(qairt_calibration_options) == 96);
QAIRT_LAYOUT(qairt_calibration_options, struct_size, 0);
QAIRT_LAYOUT(qairt_calibration_options, flags, 4);
QAIRT_LAYOUT(qairt_calibration_options, act_method, 8);
QAIRT_LAYOUT(qairt_calibration_options, param_method, 12);
QAIRT_LAYOUT(qairt_calibration_options, act_schema, 16);
QAIRT_LAYOUT(qairt_calibration_options, param_schema, 20);
QAIRT_LAYOUT(qairt_calibration_options, act_bitwidth, 24);
QAIRT_LAYOUT(qairt_calibration_options, weights_bitwidth, 28);
QAIRT_LAYOUT(qairt_calibration_options, block_size, 32);
QAIRT_LAYOUT(qairt_calibration_options, histogram_bins, 36);
QAIRT_LAYOUT(qairt_calibration_options, num_threads, 40);
QAIRT_LAYOUT(qairt_calibration_options, reserved, 44);
QAIRT_LAYOUT(qairt_calibration_options, percentile, 48);
QAIRT_LAYOUT(qairt_calibration_options, num_float_inputs, 56);
QAIRT_LAYOUT(qairt_calibration_options, float_inputs, 64);
QAIRT_LAYOUT(qairt_calibration_options, progress, 72);
QAIRT_LAYOUT(qairt_calibration_options, progress_user_data, 80);
QAIRT_LAYOUT(qairt_calibration_options, target, 88);

static_assert(sizeof(qairt_container_info) == 64);
QAIRT_LAYOUT(qairt_container_info, struct_size, 0);
QAIRT_LAYOUT(qairt_container_info, schema_version, 4);
QAIRT_LAYOUT(qairt_container_info, min_reader_version, 8);
QAIRT_LAYOUT(qairt_container_info, reserved, 12);
QAIRT_LAYOUT(qairt_container_info, producer, 16);
QAIRT_LAYOUT(qairt_container_info, target_name, 24);
QAIRT_LAYOUT(qairt_container_info, num_options, 32);
QAIRT_LAYOUT(qairt_container_info, num_op_annotations, 40);
QAIRT_LAYOUT(qairt_container_info, num_tensor_notes, 48);
QAIRT_LAYOUT(qairt_container_info, stats_summary, 56);

static_assert(sizeof(qairt_container_op_annotation) == 24);
QAIRT_LAYOUT(qairt_container_op_annotation, op_name, 0);
QAIRT_LAYOUT(qairt_container_op_annotation, kernel, 8);
QAIRT_LAYOUT(qairt_container_op_annotation, super_group, 16);
QAIRT_LAYOUT(qairt_container_op_annotation, adapted, 20);

static_assert(sizeof(qairt_container_option) == 24);
QAIRT_LAYOUT(qairt_container_option, key, 0);
QAIRT_LAYOUT(qairt_container_option, value, 8);
QAIRT_LAYOUT(qairt_container_option, source, 16);
QAIRT_LAYOUT(qairt_container_option, reserved, 20);

static_assert(sizeof(qairt_container_tensor_note) == 16);
QAIRT_LAYOUT(qairt_container_tensor_note, tensor_name, 0);
QAIRT_LAYOUT(qairt_container_tensor_note, reasons, 8);

static_assert(sizeof(qairt_container_write_options) == 72);
QAIRT_LAYOUT(qairt_container_write_options, struct_size, 0);
QAIRT_LAYOUT(qairt_container_write_options, flags, 4);
QAIRT_LAYOUT(qairt_container_write_options, target_name, 8);
QAIRT_LAYOUT(qairt_container_write_options, num_options, 16);
QAIRT_LAYOUT(qairt_container_write_options, options, 24);
QAIRT_LAYOUT(qairt_container_write_options, num_op_annotations, 32);
QAIRT_LAYOUT(qairt_container_write_options, op_annotations, 40);
QAIRT_LAYOUT(qairt_container_write_options, num_tensor_notes, 48);
QAIRT_LAYOUT(qairt_container_write_options, tensor_notes, 56);
QAIRT_LAYOUT(qairt_container_write_options, stats_summary, 64);

static_assert(sizeof(qairt_convert_options) == 216);
QAIRT_LAYOUT(qairt_convert_options, struct_size, 0);
QAIRT_LAYOUT(qairt_convert_options, flags, 4);
QAIRT_LAYOUT(qairt_convert_options, target, 8);
QAIRT_LAYOUT(qairt_convert_options, float_bitwidth, 16);
QAIRT_LAYOUT(qairt_convert_options, act_bitwidth, 20);
QAIRT_LAYOUT(qairt_convert_options, weights_bitwidth, 24);
QAIRT_LAYOUT(qairt_convert_options, bias_bitwidth, 28);
QAIRT_LAYOUT(qairt_convert_options, log_level, 32);
QAIRT_LAYOUT(qairt_convert_options, num_threads, 36);
QAIRT_LAYOUT(qairt_convert_options, stop_after, 40);
QAIRT_LAYOUT(qairt_convert_options, quantization_overrides, 48);
QAIRT_LAYOUT(qairt_convert_options, input_list, 56);
QAIRT_LAYOUT(qairt_convert_options, eval_input_list, 64);
QAIRT_LAYOUT(qairt_convert_options, calibration, 72);
QAIRT_LAYOUT(qairt_convert_options, mixed_mode, 80);
QAIRT_LAYOUT(qairt_convert_options, reserved, 84);
QAIRT_LAYOUT(qairt_convert_options, mixed_value, 88);
QAIRT_LAYOUT(qairt_convert_options, disabled_rewrites, 96);
QAIRT_LAYOUT(qairt_convert_options, num_disabled_rewrites, 104);
QAIRT_LAYOUT(qairt_convert_options, output_path, 112);
QAIRT_LAYOUT(qairt_convert_options, qdq_onnx_path, 120);
QAIRT_LAYOUT(qairt_convert_options, qdq_opset, 128);
QAIRT_LAYOUT(qairt_convert_options, encodings_path, 136);
QAIRT_LAYOUT(qairt_convert_options, encodings_version, 144);
QAIRT_LAYOUT(qairt_convert_options, reserved2, 148);
QAIRT_LAYOUT(qairt_convert_options, quantizer_log_path, 152);
QAIRT_LAYOUT(qairt_convert_options, progress, 160);
QAIRT_LAYOUT(qairt_convert_options, progress_user_data, 168);
QAIRT_LAYOUT(qairt_convert_options, report_path, 176);
QAIRT_LAYOUT(qairt_convert_options, calibration_stats, 184);
QAIRT_LAYOUT(qairt_convert_options, stats_output, 192);
QAIRT_LAYOUT(qairt_convert_options, stats_ranges, 200);
QAIRT_LAYOUT(qairt_convert_options, shard_index, 208);
QAIRT_LAYOUT(qairt_convert_options, shard_count, 212);

static_assert(sizeof(qairt_exec_stats) == 48);
QAIRT_LAYOUT(qairt_exec_stats, struct_size, 0);
QAIRT_LAYOUT(qairt_exec_stats, reserved, 4);
QAIRT_LAYOUT(qairt_exec_stats, op_count, 8);
QAIRT_LAYOUT(qairt_exec_stats, arena_bytes, 16);
QAIRT_LAYOUT(qairt_exec_stats, unplanned_bytes, 24);
QAIRT_LAYOUT(qairt_exec_stats, static_copied_bytes, 32);
QAIRT_LAYOUT(qairt_exec_stats, static_borrowed_bytes, 40);

static_assert(sizeof(qairt_exec_tensor_info) == 40);
QAIRT_LAYOUT(qairt_exec_tensor_info, struct_size, 0);
QAIRT_LAYOUT(qairt_exec_tensor_info, rank, 4);
QAIRT_LAYOUT(qairt_exec_tensor_info, name, 8);
QAIRT_LAYOUT(qairt_exec_tensor_info, dtype, 16);
QAIRT_LAYOUT(qairt_exec_tensor_info, reserved, 20);
QAIRT_LAYOUT(qairt_exec_tensor_info, dims, 24);
QAIRT_LAYOUT(qairt_exec_tensor_info, byte_size, 32);

static_assert(sizeof(qairt_executor_options) == 16);
QAIRT_LAYOUT(qairt_executor_options, struct_size, 0);
QAIRT_LAYOUT(qairt_executor_options, flags, 4);
QAIRT_LAYOUT(qairt_executor_options, num_threads, 8);
QAIRT_LAYOUT(qairt_executor_options, reserved, 12);

static_assert(sizeof(qairt_import_options) == 64);
QAIRT_LAYOUT(qairt_import_options, struct_size, 0);
QAIRT_LAYOUT(qairt_import_options, flags, 4);
QAIRT_LAYOUT(qairt_import_options, num_define_symbols, 8);
QAIRT_LAYOUT(qairt_import_options, define_symbol_names, 16);
QAIRT_LAYOUT(qairt_import_options, define_symbol_values, 24);
QAIRT_LAYOUT(qairt_import_options, num_input_dims, 32);
QAIRT_LAYOUT(qairt_import_options, input_dim_names, 40);
QAIRT_LAYOUT(qairt_import_options, input_dim_ranks, 48);
QAIRT_LAYOUT(qairt_import_options, input_dims, 56);

static_assert(sizeof(qairt_onnx_export_options) == 64);
QAIRT_LAYOUT(qairt_onnx_export_options, struct_size, 0);
QAIRT_LAYOUT(qairt_onnx_export_options, flags, 4);
QAIRT_LAYOUT(qairt_onnx_export_options, opset, 8);
QAIRT_LAYOUT(qairt_onnx_export_options, producer_name, 16);
QAIRT_LAYOUT(qairt_onnx_export_options, graph_name, 24);
QAIRT_LAYOUT(qairt_onnx_export_options, num_metadata_props, 32);
QAIRT_LAYOUT(qairt_onnx_export_options, metadata_props, 40);
QAIRT_LAYOUT(qairt_onnx_export_options, external_data_threshold, 48);
QAIRT_LAYOUT(qairt_onnx_export_options, external_data_name, 56);

static_assert(sizeof(qairt_onnx_metadata_prop) == 16);
QAIRT_LAYOUT(qairt_onnx_metadata_prop, key, 0);
QAIRT_LAYOUT(qairt_onnx_metadata_prop, value, 8);

static_assert(sizeof(qairt_prepare_finding) == 32);
QAIRT_LAYOUT(qairt_prepare_finding, struct_size, 0);
QAIRT_LAYOUT(qairt_prepare_finding, severity, 4);
QAIRT_LAYOUT(qairt_prepare_finding, code, 8);
QAIRT_LAYOUT(qairt_prepare_finding, subject, 16);
QAIRT_LAYOUT(qairt_prepare_finding, message, 24);

static_assert(sizeof(qairt_prepare_options) == 176);
QAIRT_LAYOUT(qairt_prepare_options, struct_size, 0);
QAIRT_LAYOUT(qairt_prepare_options, flags, 4);
QAIRT_LAYOUT(qairt_prepare_options, model_path, 8);
QAIRT_LAYOUT(qairt_prepare_options, output_dir, 16);
QAIRT_LAYOUT(qairt_prepare_options, target, 24);
QAIRT_LAYOUT(qairt_prepare_options, num_define_symbols, 32);
QAIRT_LAYOUT(qairt_prepare_options, define_symbol_names, 40);
QAIRT_LAYOUT(qairt_prepare_options, define_symbol_values, 48);
QAIRT_LAYOUT(qairt_prepare_options, num_input_dims, 56);
QAIRT_LAYOUT(qairt_prepare_options, input_dim_names, 64);
QAIRT_LAYOUT(qairt_prepare_options, input_dim_ranks, 72);
QAIRT_LAYOUT(qairt_prepare_options, input_dims, 80);
QAIRT_LAYOUT(qairt_prepare_options, batch_size, 88);
QAIRT_LAYOUT(qairt_prepare_options, specializations_path, 96);
QAIRT_LAYOUT(qairt_prepare_options, input_list_path, 104);
QAIRT_LAYOUT(qairt_prepare_options, fp32_nodes, 112);
QAIRT_LAYOUT(qairt_prepare_options, supported_ops_path, 120);
QAIRT_LAYOUT(qairt_prepare_options, fp16_min_abs, 128);
QAIRT_LAYOUT(qairt_prepare_options, mask_value, 136);
QAIRT_LAYOUT(qairt_prepare_options, tolerance, 144);
QAIRT_LAYOUT(qairt_prepare_options, fp16_budget, 152);
QAIRT_LAYOUT(qairt_prepare_options, external_data_threshold, 160);
QAIRT_LAYOUT(qairt_prepare_options, max_samples, 168);
QAIRT_LAYOUT(qairt_prepare_options, reserved, 172);

static_assert(sizeof(qairt_process_options) == 48);
QAIRT_LAYOUT(qairt_process_options, struct_size, 0);
QAIRT_LAYOUT(qairt_process_options, flags, 4);
QAIRT_LAYOUT(qairt_process_options, target, 8);
QAIRT_LAYOUT(qairt_process_options, float_bitwidth, 16);
QAIRT_LAYOUT(qairt_process_options, act_bitwidth, 20);
QAIRT_LAYOUT(qairt_process_options, weights_bitwidth, 24);
QAIRT_LAYOUT(qairt_process_options, bias_bitwidth, 28);
QAIRT_LAYOUT(qairt_process_options, log_level, 32);
QAIRT_LAYOUT(qairt_process_options, stop_after, 40);

static_assert(sizeof(qairt_html_report_options) == 64);
QAIRT_LAYOUT(qairt_html_report_options, struct_size, 0);
QAIRT_LAYOUT(qairt_html_report_options, flags, 4);
QAIRT_LAYOUT(qairt_html_report_options, title, 8);
QAIRT_LAYOUT(qairt_html_report_options, container, 16);
QAIRT_LAYOUT(qairt_html_report_options, process, 24);
QAIRT_LAYOUT(qairt_html_report_options, accuracy, 32);
QAIRT_LAYOUT(qairt_html_report_options, sensitivity, 40);
QAIRT_LAYOUT(qairt_html_report_options, diagnostics, 48);
QAIRT_LAYOUT(qairt_html_report_options, target_name, 56);

static_assert(sizeof(qairt_rewrite_options) == 80);
QAIRT_LAYOUT(qairt_rewrite_options, struct_size, 0);
QAIRT_LAYOUT(qairt_rewrite_options, num_threads, 4);
QAIRT_LAYOUT(qairt_rewrite_options, input_list, 8);
QAIRT_LAYOUT(qairt_rewrite_options, disabled, 16);
QAIRT_LAYOUT(qairt_rewrite_options, num_disabled, 24);
QAIRT_LAYOUT(qairt_rewrite_options, min_cosine, 32);
QAIRT_LAYOUT(qairt_rewrite_options, target, 40);
QAIRT_LAYOUT(qairt_rewrite_options, enabled, 48);
QAIRT_LAYOUT(qairt_rewrite_options, num_enabled, 56);
QAIRT_LAYOUT(qairt_rewrite_options, flags, 64);
QAIRT_LAYOUT(qairt_rewrite_options, quantized_judge, 72);

#endif

}  // namespace
