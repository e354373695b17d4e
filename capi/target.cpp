// Target descriptors through the C API (include/qairt/qairt_target.h). The
// handle holds a shared, immutable qairt::target::Target plus C-shaped copies
// (dtype arrays, string-pointer arrays) made once at load, so every getter is
// read-only and the handle is safe to share between threads.
#include <cstring>

#include "capi/capi_internal.h"
#include "ir/op_registry.h"
#include "qairt/qairt_target.h"
#include "target/target_descriptor.h"

using namespace qairt;  // NOLINT: implementation file of the C boundary
using capi::InvalidArg;
namespace tg = qairt::target;

struct qairt_target_t {
  explicit qairt_target_t(tg::TargetPtr t) : target(std::move(t)) {
    for (const auto& op : target->ops) {
      auto& kernels = dtypes.emplace_back();
      for (const auto& k : op.kernels) {
        auto& dirs = kernels.emplace_back();
        for (const auto* slots : {&k.inputs, &k.outputs}) {
          auto& per_slot = dirs.emplace_back();
          for (const auto& s : *slots) {
            auto& list = per_slot.emplace_back();
            for (DType d : s.dtypes) list.push_back(static_cast<qairt_dtype_t>(d));  // same values
          }
        }
      }
    }
    for (const auto& g : target->super_groups) {
      auto& ptrs = group_ops.emplace_back();
      for (const auto& op : g.ops) ptrs.push_back(op.c_str());
    }
  }
  tg::TargetPtr target;
  // [op][kernel][direction][slot] -> dtypes
  std::vector<std::vector<std::vector<std::vector<std::vector<qairt_dtype_t>>>>> dtypes;
  std::vector<std::vector<const char*>> group_ops;
};

namespace qairt::capi {
target::TargetPtr TargetOf(const qairt_target_t* t) { return t ? t->target : nullptr; }
}  // namespace qairt::capi

namespace {

constexpr size_t kTargetInfoV1 = QAIRT_STRUCT_V1_SIZE(qairt_target_info, num_sources);
constexpr size_t kSocV1 = QAIRT_STRUCT_V1_SIZE(qairt_target_soc, reserved);
constexpr size_t kSuperGroupV1 = QAIRT_STRUCT_V1_SIZE(qairt_super_group, note);
constexpr size_t kKernelInfoV1 = QAIRT_STRUCT_V1_SIZE(qairt_kernel_info, note);
constexpr size_t kKernelSlotV1 = QAIRT_STRUCT_V1_SIZE(qairt_kernel_slot, note);
constexpr size_t kFixedEncodingV1 = QAIRT_STRUCT_V1_SIZE(qairt_fixed_encoding, scale);

qairt_status_t* Emit(Result<tg::TargetPtr> r, qairt_target_t** out) {
  if (!r.ok()) return capi::FromStatus(r.status());
  *out = new qairt_target_t(std::move(r).value());
  return nullptr;
}

qairt_status_t* CheckTarget(const qairt_target_t* t, const char* fn) {
  return t ? nullptr : InvalidArg("{}: target must not be NULL", fn);
}

qairt_status_t* FillString(const std::string& s, char* buf, size_t capacity, size_t* out_length, const char* fn) {
  if (!out_length) return InvalidArg("{}: out_length must not be NULL", fn);
  if (buf) {
    if (capacity < s.size() + 1)
      return capi::MakeStatus(QAIRT_BUFFER_TOO_SMALL,
                              fmt::format("{}: buffer of {} bytes is too small, need {}", fn, capacity, s.size() + 1));
    std::memcpy(buf, s.data(), s.size());
    buf[s.size()] = '\0';
  }
  *out_length = s.size();
  return nullptr;
}

// Resolves op_type on the target: *op_index = index into target->ops, or
// SIZE_MAX when the op is registered but the target has no kernels for it.
qairt_status_t* FindOp(const qairt_target_t* t, const char* op_type, const char* fn, size_t* op_index) {
  if (auto* s = CheckTarget(t, fn)) return s;
  if (!op_type) return InvalidArg("{}: op_type must not be NULL", fn);
  if (!FindOpSchema(op_type))
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("{}: '{}' is not a registered op type", fn, op_type));
  const tg::OpKernels* o = t->target->FindOp(op_type);
  *op_index = o ? static_cast<size_t>(o - t->target->ops.data()) : SIZE_MAX;
  return nullptr;
}

qairt_status_t* FindKernel(const qairt_target_t* t, const char* op_type, size_t kernel_index, const char* fn,
                           size_t* op_index) {
  if (auto* s = FindOp(t, op_type, fn, op_index)) return s;
  const size_t count = *op_index == SIZE_MAX ? 0 : t->target->ops[*op_index].kernels.size();
  if (kernel_index >= count)
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("{}: kernel {} of op '{}' does not exist on target '{}' ({} kernels)",
                                                         fn, kernel_index, op_type, t->target->name, count));
  return nullptr;
}

qairt_status_t* FindSlot(const qairt_target_t* t, const char* op_type, size_t kernel_index, uint32_t direction,
                         size_t slot_index, const char* fn, const tg::Slot** slot, size_t* op_index) {
  if (auto* s = FindKernel(t, op_type, kernel_index, fn, op_index)) return s;
  if (direction > QAIRT_SLOT_OUTPUT) return InvalidArg("{}: direction must be QAIRT_SLOT_INPUT or QAIRT_SLOT_OUTPUT, got {}", fn, direction);
  const tg::Kernel& k = t->target->ops[*op_index].kernels[kernel_index];
  const auto& slots = direction == QAIRT_SLOT_INPUT ? k.inputs : k.outputs;
  if (slot_index >= slots.size())
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("{}: kernel '{}' of op '{}' describes {} {} slots, not {}", fn,
                                                         k.name, op_type, slots.size(),
                                                         direction == QAIRT_SLOT_INPUT ? "input" : "output", slot_index));
  *slot = &slots[slot_index];
  return nullptr;
}

}  // namespace

extern "C" {

size_t qairt_target_builtin_count(void) {
  QAIRT_CAPI_BEGIN
  return tg::BuiltinTargetNames().size();
  QAIRT_CAPI_END_VALUE(0)
}

const char* qairt_target_builtin_name(size_t index) {
  QAIRT_CAPI_BEGIN
  const auto names = tg::BuiltinTargetNames();
  return index < names.size() ? names[index].data() : nullptr;  // NUL-terminated literals
  QAIRT_CAPI_END_VALUE(nullptr)
}

qairt_status_t* qairt_target_load_builtin(const char* name, qairt_target_t** out_target) {
  QAIRT_CAPI_BEGIN
  if (!name) return InvalidArg("qairt_target_load_builtin: name must not be NULL");
  if (!out_target) return InvalidArg("qairt_target_load_builtin: out_target must not be NULL");
  return Emit(tg::LoadBuiltinTarget(name), out_target);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_load_file(const char* path, qairt_target_t** out_target) {
  QAIRT_CAPI_BEGIN
  if (!path || !path[0]) return InvalidArg("qairt_target_load_file: path must be a non-empty string");
  if (!out_target) return InvalidArg("qairt_target_load_file: out_target must not be NULL");
  return Emit(tg::LoadTargetFromFile(path), out_target);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_load_bytes(const void* data, size_t size, qairt_target_t** out_target) {
  QAIRT_CAPI_BEGIN
  if (!data && size) return InvalidArg("qairt_target_load_bytes: data is NULL but size is {}", size);
  if (!out_target) return InvalidArg("qairt_target_load_bytes: out_target must not be NULL");
  const auto* p = static_cast<const uint8_t*>(data);
  return Emit(tg::LoadTargetFromBytes(std::span<const uint8_t>(p, p ? size : 0), "<bytes>"), out_target);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_load(const char* name_or_path, qairt_target_t** out_target) {
  QAIRT_CAPI_BEGIN
  if (!name_or_path || !name_or_path[0]) return InvalidArg("qairt_target_load: name_or_path must be a non-empty string");
  if (!out_target) return InvalidArg("qairt_target_load: out_target must not be NULL");
  return Emit(tg::LoadTarget(name_or_path), out_target);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_for_soc(const char* soc, qairt_target_t** out_target) {
  QAIRT_CAPI_BEGIN
  if (!soc) return InvalidArg("qairt_target_for_soc: soc must not be NULL");
  if (!out_target) return InvalidArg("qairt_target_for_soc: out_target must not be NULL");
  const auto name = tg::TargetNameForSoc(soc);
  if (!name)
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("qairt_target_for_soc: no built-in target lists SoC '{}'", soc));
  return Emit(tg::LoadBuiltinTarget(*name), out_target);
  QAIRT_CAPI_END
}

void qairt_target_destroy(qairt_target_t* target) { delete target; }

qairt_status_t* qairt_target_get_info(const qairt_target_t* target, qairt_target_info* out_info) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTarget(target, "qairt_target_get_info")) return s;
  const tg::Target& t = *target->target;
  qairt_target_info info{};
  info.struct_size = sizeof(info);
  info.backend = static_cast<qairt_backend_t>(t.backend);
  info.name = t.name.c_str();
  info.description = t.description.c_str();
  info.origin = t.origin.c_str();
  info.arch_version = t.arch_version;
  info.schema_version = t.schema_version;
  info.min_reader_version = t.min_reader_version;
  info.default_float_dtype = static_cast<qairt_dtype_t>(t.default_float_dtype);
  info.capabilities = t.capabilities;
  info.num_ops = t.ops.size();
  info.num_socs = t.socs.size();
  info.num_data_movement_ops = t.data_movement_ops.size();
  info.num_super_groups = t.super_groups.size();
  info.num_sources = t.sources.size();
  return capi::WriteVersionedStruct(info, kTargetInfoV1, "qairt_target_info", out_info);
  QAIRT_CAPI_END
}

const char* qairt_target_op_name(const qairt_target_t* target, size_t index) {
  if (!target || index >= target->target->ops.size()) return nullptr;
  return target->target->ops[index].op.c_str();
}

const char* qairt_target_data_movement_op(const qairt_target_t* target, size_t index) {
  if (!target || index >= target->target->data_movement_ops.size()) return nullptr;
  return target->target->data_movement_ops[index].c_str();
}

const char* qairt_target_source(const qairt_target_t* target, size_t index) {
  if (!target || index >= target->target->sources.size()) return nullptr;
  return target->target->sources[index].c_str();
}

int32_t qairt_target_is_data_movement(const qairt_target_t* target, const char* op_type) {
  if (!target || !op_type) return 0;
  return target->target->IsDataMovement(op_type) ? 1 : 0;
}

uint32_t qairt_target_conversion_ops(const qairt_target_t* target, qairt_dtype_t from, qairt_dtype_t to) {
  if (!target || !IsValidDType(from) || !IsValidDType(to)) return 0;
  return target->target->ConversionOps(static_cast<DType>(from), static_cast<DType>(to));
}

qairt_status_t* qairt_target_get_soc(const qairt_target_t* target, size_t index, qairt_target_soc* out_soc) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTarget(target, "qairt_target_get_soc")) return s;
  const auto& socs = target->target->socs;
  if (index >= socs.size())
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("qairt_target_get_soc: index {} is out of range ({} SoCs)",
                                                         index, socs.size()));
  qairt_target_soc soc{};
  soc.struct_size = sizeof(soc);
  soc.soc_model = socs[index].soc_model;
  soc.name = socs[index].name.c_str();
  soc.vtcm_mb = socs[index].vtcm_mb;
  return capi::WriteVersionedStruct(soc, kSocV1, "qairt_target_soc", out_soc);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_get_super_group(const qairt_target_t* target, size_t index, qairt_super_group* out_group) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTarget(target, "qairt_target_get_super_group")) return s;
  const auto& groups = target->target->super_groups;
  if (index >= groups.size())
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("qairt_target_get_super_group: index {} is out of range "
                                                         "({} super groups)", index, groups.size()));
  qairt_super_group g{};
  g.struct_size = sizeof(g);
  g.num_ops = target->group_ops[index].size();
  g.ops = target->group_ops[index].data();
  g.note = groups[index].note.c_str();
  return capi::WriteVersionedStruct(g, kSuperGroupV1, "qairt_super_group", out_group);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_kernel_count(const qairt_target_t* target, const char* op_type, size_t* out_count) {
  QAIRT_CAPI_BEGIN
  size_t op = 0;
  if (auto* s = FindOp(target, op_type, "qairt_target_kernel_count", &op)) return s;
  if (!out_count) return InvalidArg("qairt_target_kernel_count: out_count must not be NULL");
  *out_count = op == SIZE_MAX ? 0 : target->target->ops[op].kernels.size();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_kernel_info(const qairt_target_t* target, const char* op_type, size_t kernel_index,
                                         qairt_kernel_info* out_info) {
  QAIRT_CAPI_BEGIN
  size_t op = 0;
  if (auto* s = FindKernel(target, op_type, kernel_index, "qairt_target_kernel_info", &op)) return s;
  const tg::Kernel& k = target->target->ops[op].kernels[kernel_index];
  qairt_kernel_info info{};
  info.struct_size = sizeof(info);
  info.accuracy_preserving = k.accuracy_preserving ? 1 : 0;
  info.name = k.name.c_str();
  info.num_inputs = k.inputs.size();
  info.num_outputs = k.outputs.size();
  info.variadic_inputs = k.variadic_inputs ? 1 : 0;
  info.note = k.note.c_str();
  return capi::WriteVersionedStruct(info, kKernelInfoV1, "qairt_kernel_info", out_info);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_kernel_slot(const qairt_target_t* target, const char* op_type, size_t kernel_index,
                                         uint32_t direction, size_t slot_index, qairt_kernel_slot* out_slot) {
  QAIRT_CAPI_BEGIN
  const tg::Slot* s = nullptr;
  size_t op = 0;
  if (auto* st = FindSlot(target, op_type, kernel_index, direction, slot_index, "qairt_target_kernel_slot", &s, &op))
    return st;
  const auto& dtypes = target->dtypes[op][kernel_index][direction][slot_index];
  qairt_kernel_slot slot{};
  slot.struct_size = sizeof(slot);
  slot.role = static_cast<qairt_slot_role_t>(s->role);
  slot.optional = s->optional ? 1 : 0;
  slot.symmetry_mask = s->symmetry_mask;
  slot.granularity_mask = s->granularity_mask;
  slot.channel_axis = s->channel_axis;
  slot.num_dtypes = dtypes.size();
  slot.dtypes = dtypes.data();
  slot.block_size_min = s->block_size_min;
  slot.block_size_multiple = s->block_size_multiple;
  slot.scale_rule = static_cast<qairt_scale_rule_t>(s->scale_rule);
  slot.has_value_range = s->has_range ? 1 : 0;
  slot.range_min = s->range_min;
  slot.range_max = s->range_max;
  slot.num_fixed_encodings = s->fixed_encodings.size();
  slot.note = s->note.c_str();
  return capi::WriteVersionedStruct(slot, kKernelSlotV1, "qairt_kernel_slot", out_slot);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_kernel_fixed_encoding(const qairt_target_t* target, const char* op_type,
                                                   size_t kernel_index, uint32_t direction, size_t slot_index,
                                                   size_t index, qairt_fixed_encoding* out_encoding) {
  QAIRT_CAPI_BEGIN
  const tg::Slot* s = nullptr;
  size_t op = 0;
  if (auto* st = FindSlot(target, op_type, kernel_index, direction, slot_index, "qairt_target_kernel_fixed_encoding",
                          &s, &op))
    return st;
  if (index >= s->fixed_encodings.size())
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("qairt_target_kernel_fixed_encoding: index {} is out of range "
                                                         "({} fixed encodings)", index, s->fixed_encodings.size()));
  const tg::FixedEncoding& e = s->fixed_encodings[index];
  qairt_fixed_encoding fe{};
  fe.struct_size = sizeof(fe);
  fe.dtype = static_cast<qairt_dtype_t>(e.dtype);
  fe.offset = e.offset;
  fe.scale = e.scale;
  return capi::WriteVersionedStruct(fe, kFixedEncodingV1, "qairt_fixed_encoding", out_encoding);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_find_kernel(const qairt_target_t* target, const char* op_type,
                                         const qairt_dtype_t* inputs, size_t num_inputs, const qairt_dtype_t* outputs,
                                         size_t num_outputs, int32_t* out_found, size_t* out_kernel_index) {
  QAIRT_CAPI_BEGIN
  const char* fn = "qairt_target_find_kernel";
  size_t op = 0;
  if (auto* s = FindOp(target, op_type, fn, &op)) return s;
  if (!out_found || !out_kernel_index) return InvalidArg("{}: out_found and out_kernel_index must not be NULL", fn);
  if ((num_inputs && !inputs) || (num_outputs && !outputs))
    return InvalidArg("{}: inputs/outputs is NULL but its count is not 0", fn);
  if (num_inputs > tg::kMaxSlots || num_outputs > tg::kMaxSlots)
    return InvalidArg("{}: at most {} inputs and outputs", fn, tg::kMaxSlots);
  std::vector<DType> in, out;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (!IsValidDType(inputs[i])) return InvalidArg("{}: inputs[{}]={} is not a qairt_dtype", fn, i, inputs[i]);
    in.push_back(static_cast<DType>(inputs[i]));
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (!IsValidDType(outputs[i])) return InvalidArg("{}: outputs[{}]={} is not a qairt_dtype", fn, i, outputs[i]);
    out.push_back(static_cast<DType>(outputs[i]));
  }
  const auto k = target->target->FindKernel(op_type, in, out);
  *out_found = k ? 1 : 0;
  *out_kernel_index = k ? *k : 0;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_to_json(const qairt_target_t* target, const char* op_type, char* buf, size_t capacity,
                                     size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTarget(target, "qairt_target_to_json")) return s;
  auto json = tg::TargetToJson(*target->target, op_type ? op_type : "");
  if (!json.ok()) return capi::FromStatus(json.status());
  return FillString(json.value(), buf, capacity, out_length, "qairt_target_to_json");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_target_diff(const qairt_target_t* a, const qairt_target_t* b, uint32_t format, char* buf,
                                  size_t capacity, size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (!a || !b) return InvalidArg("qairt_target_diff: both targets must be non-NULL");
  if (format > QAIRT_TARGET_DIFF_JSON)
    return InvalidArg("qairt_target_diff: format must be QAIRT_TARGET_DIFF_TEXT or QAIRT_TARGET_DIFF_JSON, got {}", format);
  const std::string diff = tg::DiffTargets(*a->target, *b->target, format == QAIRT_TARGET_DIFF_JSON);
  return FillString(diff, buf, capacity, out_length, "qairt_target_diff");
  QAIRT_CAPI_END
}

}  // extern "C"
