// libFuzzer target: target descriptors (compiled .qatd FlatBuffers or the
// JSON source form; qairt_target_load_bytes tells them apart). A descriptor
// that loads is walked through every query of the C API (info, SoCs, super
// groups, each op's kernels, slots and fixed encodings, JSON dump, diff
// against a built-in). Seeds: tests/fuzz/corpus/target (built-ins, compiled
// and JSON).
#include "fuzz_util.h"
#include "qairt/qairt_target.h"

namespace {

void Walk(const qairt_target_t* t) {
  qairt_target_info info{};
  info.struct_size = sizeof info;
  if (!qairt_fuzz::Check(qairt_target_get_info(t, &info))) std::abort();
  for (size_t i = 0; qairt_target_source(t, i); ++i) {
  }
  for (size_t i = 0; qairt_target_data_movement_op(t, i); ++i) {
  }
  for (size_t i = 0; i < info.num_socs; ++i) {
    qairt_target_soc soc{};
    soc.struct_size = sizeof soc;
    if (!qairt_fuzz::Check(qairt_target_get_soc(t, i, &soc))) std::abort();
  }
  for (size_t i = 0; i < info.num_super_groups; ++i) {
    qairt_super_group sg{};
    sg.struct_size = sizeof sg;
    if (!qairt_fuzz::Check(qairt_target_get_super_group(t, i, &sg))) std::abort();
  }
  for (size_t op = 0; const char* name = qairt_target_op_name(t, op); ++op) {
    size_t kernels = 0;
    if (!qairt_fuzz::Check(qairt_target_kernel_count(t, name, &kernels))) continue;
    for (size_t k = 0; k < kernels; ++k) {
      qairt_kernel_info ki{};
      ki.struct_size = sizeof ki;
      if (!qairt_fuzz::Check(qairt_target_kernel_info(t, name, k, &ki))) std::abort();
      for (uint32_t dir = QAIRT_SLOT_INPUT; dir <= QAIRT_SLOT_OUTPUT; ++dir) {
        const size_t slots = dir == QAIRT_SLOT_INPUT ? ki.num_inputs : ki.num_outputs;
        for (size_t s = 0; s < slots; ++s) {
          qairt_kernel_slot slot{};
          slot.struct_size = sizeof slot;
          if (!qairt_fuzz::Check(qairt_target_kernel_slot(t, name, k, dir, s, &slot))) std::abort();
          for (size_t e = 0; e < slot.num_fixed_encodings; ++e) {
            qairt_fixed_encoding fe{};
            fe.struct_size = sizeof fe;
            if (!qairt_fuzz::Check(qairt_target_kernel_fixed_encoding(t, name, k, dir, s, e, &fe))) std::abort();
          }
        }
      }
    }
    size_t len = 0;
    qairt_fuzz::Check(qairt_target_to_json(t, name, nullptr, 0, &len));
  }
  size_t len = 0;
  qairt_fuzz::Check(qairt_target_to_json(t, nullptr, nullptr, 0, &len));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static qairt_target_t* builtin = [] {
    qairt_target_t* t = nullptr;
    if (!qairt_fuzz::Check(qairt_target_load_builtin("htp_v73", &t))) std::abort();
    return t;
  }();
  qairt_target_t* t = nullptr;
  if (qairt_fuzz::Check(qairt_target_load_bytes(data, size, &t))) {
    Walk(t);
    size_t len = 0;
    qairt_fuzz::Check(qairt_target_diff(builtin, t, QAIRT_TARGET_DIFF_JSON, nullptr, 0, &len));
    qairt_fuzz::Check(qairt_target_diff(t, builtin, QAIRT_TARGET_DIFF_TEXT, nullptr, 0, &len));
  }
  qairt_target_destroy(t);
  return 0;
}
