// Pins the ABI of include/qairt/qairt_target.h: enum values shared with the
// core and the layout of its public structs on LP64. A failing assert means a
// change broke binary compatibility: revert it or bump QAIRT_ABI_MAJOR.
#include <cstddef>

#include "capi/capi_internal.h"
#include "qairt/qairt_target.h"
#include "target/target_descriptor.h"

namespace {

namespace tg = qairt::target;

#define QAIRT_SAME(c_value, cpp_value) \
  static_assert(static_cast<uint64_t>(c_value) == static_cast<uint64_t>(cpp_value), #c_value)

QAIRT_SAME(QAIRT_BACKEND_UNKNOWN, tg::Backend::kUnknown);
QAIRT_SAME(QAIRT_BACKEND_HTP, tg::Backend::kHtp);
QAIRT_SAME(QAIRT_BACKEND_LPAI, tg::Backend::kLpai);
QAIRT_SAME(QAIRT_BACKEND_CPU, tg::Backend::kCpu);
QAIRT_SAME(QAIRT_BACKEND_AIC, tg::Backend::kAic);
QAIRT_SAME(QAIRT_BACKEND_CUSTOM, tg::Backend::kCustom);
QAIRT_SAME(QAIRT_SLOT_ACTIVATION, tg::SlotRole::kActivation);
QAIRT_SAME(QAIRT_SLOT_WEIGHT, tg::SlotRole::kWeight);
QAIRT_SAME(QAIRT_SLOT_BIAS, tg::SlotRole::kBias);
QAIRT_SAME(QAIRT_SLOT_INDEX, tg::SlotRole::kIndex);
QAIRT_SAME(QAIRT_SCALE_RULE_NONE, tg::ScaleRule::kNone);
QAIRT_SAME(QAIRT_SCALE_RULE_PRODUCT_OF_INPUTS, tg::ScaleRule::kProductOfInputs);
QAIRT_SAME(QAIRT_SCALE_RULE_SAME_AS_INPUT, tg::ScaleRule::kSameAsInput);
QAIRT_SAME(QAIRT_CONVERT_OP_CONVERT, tg::ConvertOp::kConvert);
QAIRT_SAME(QAIRT_CONVERT_OP_CAST, tg::ConvertOp::kCast);
QAIRT_SAME(QAIRT_CONVERT_OP_QUANTIZE, tg::ConvertOp::kQuantize);
QAIRT_SAME(QAIRT_CONVERT_OP_DEQUANTIZE, tg::ConvertOp::kDequantize);
QAIRT_SAME(QAIRT_TARGET_CAP_FP16_COMPUTE, tg::kCapFp16Compute);
QAIRT_SAME(QAIRT_TARGET_CAP_FP32_COMPUTE, tg::kCapFp32Compute);
QAIRT_SAME(QAIRT_TARGET_CAP_INT16_ACTIVATIONS, tg::kCapInt16Activations);
QAIRT_SAME(QAIRT_TARGET_CAP_A16W16, tg::kCapA16W16);
QAIRT_SAME(QAIRT_TARGET_CAP_INT4_WEIGHTS, tg::kCapInt4Weights);
QAIRT_SAME(QAIRT_TARGET_CAP_PER_CHANNEL_WEIGHTS, tg::kCapPerChannelWeights);
QAIRT_SAME(QAIRT_TARGET_CAP_BLOCK_WEIGHTS, tg::kCapBlockWeights);
QAIRT_SAME(QAIRT_TARGET_CAP_LPBQ_WEIGHTS, tg::kCapLpbqWeights);

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
#define QAIRT_LAYOUT(type, size) static_assert(sizeof(type) == (size), #type " size")
#define QAIRT_OFFSET(type, field, off) static_assert(offsetof(type, field) == (off), #type "." #field)

QAIRT_LAYOUT(qairt_target_info, 96);
QAIRT_OFFSET(qairt_target_info, struct_size, 0);
QAIRT_OFFSET(qairt_target_info, backend, 4);
QAIRT_OFFSET(qairt_target_info, name, 8);
QAIRT_OFFSET(qairt_target_info, description, 16);
QAIRT_OFFSET(qairt_target_info, origin, 24);
QAIRT_OFFSET(qairt_target_info, arch_version, 32);
QAIRT_OFFSET(qairt_target_info, schema_version, 36);
QAIRT_OFFSET(qairt_target_info, min_reader_version, 40);
QAIRT_OFFSET(qairt_target_info, default_float_dtype, 44);
QAIRT_OFFSET(qairt_target_info, capabilities, 48);
QAIRT_OFFSET(qairt_target_info, num_ops, 56);
QAIRT_OFFSET(qairt_target_info, num_socs, 64);
QAIRT_OFFSET(qairt_target_info, num_data_movement_ops, 72);
QAIRT_OFFSET(qairt_target_info, num_super_groups, 80);
QAIRT_OFFSET(qairt_target_info, num_sources, 88);

QAIRT_LAYOUT(qairt_target_soc, 24);
QAIRT_OFFSET(qairt_target_soc, soc_model, 4);
QAIRT_OFFSET(qairt_target_soc, name, 8);
QAIRT_OFFSET(qairt_target_soc, vtcm_mb, 16);
QAIRT_OFFSET(qairt_target_soc, reserved, 20);

QAIRT_LAYOUT(qairt_super_group, 32);
QAIRT_OFFSET(qairt_super_group, reserved, 4);
QAIRT_OFFSET(qairt_super_group, num_ops, 8);
QAIRT_OFFSET(qairt_super_group, ops, 16);
QAIRT_OFFSET(qairt_super_group, note, 24);

QAIRT_LAYOUT(qairt_kernel_info, 48);
QAIRT_OFFSET(qairt_kernel_info, accuracy_preserving, 4);
QAIRT_OFFSET(qairt_kernel_info, name, 8);
QAIRT_OFFSET(qairt_kernel_info, num_inputs, 16);
QAIRT_OFFSET(qairt_kernel_info, num_outputs, 24);
QAIRT_OFFSET(qairt_kernel_info, variadic_inputs, 32);
QAIRT_OFFSET(qairt_kernel_info, reserved, 36);
QAIRT_OFFSET(qairt_kernel_info, note, 40);

QAIRT_LAYOUT(qairt_kernel_slot, 88);
QAIRT_OFFSET(qairt_kernel_slot, role, 4);
QAIRT_OFFSET(qairt_kernel_slot, optional, 8);
QAIRT_OFFSET(qairt_kernel_slot, symmetry_mask, 12);
QAIRT_OFFSET(qairt_kernel_slot, granularity_mask, 16);
QAIRT_OFFSET(qairt_kernel_slot, channel_axis, 20);
QAIRT_OFFSET(qairt_kernel_slot, num_dtypes, 24);
QAIRT_OFFSET(qairt_kernel_slot, dtypes, 32);
QAIRT_OFFSET(qairt_kernel_slot, block_size_min, 40);
QAIRT_OFFSET(qairt_kernel_slot, block_size_multiple, 44);
QAIRT_OFFSET(qairt_kernel_slot, scale_rule, 48);
QAIRT_OFFSET(qairt_kernel_slot, has_value_range, 52);
QAIRT_OFFSET(qairt_kernel_slot, range_min, 56);
QAIRT_OFFSET(qairt_kernel_slot, range_max, 64);
QAIRT_OFFSET(qairt_kernel_slot, num_fixed_encodings, 72);
QAIRT_OFFSET(qairt_kernel_slot, note, 80);

QAIRT_LAYOUT(qairt_fixed_encoding, 24);
QAIRT_OFFSET(qairt_fixed_encoding, dtype, 4);
QAIRT_OFFSET(qairt_fixed_encoding, offset, 8);
QAIRT_OFFSET(qairt_fixed_encoding, reserved, 12);
QAIRT_OFFSET(qairt_fixed_encoding, scale, 16);
#endif

}  // namespace
