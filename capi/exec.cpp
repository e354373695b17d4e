// C ABI of the reference executor (include/qairt/qairt_exec.h).
#include "qairt/qairt_exec.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "exec/executor.h"

struct qairt_executor_t {
  std::unique_ptr<qairt::exec::Executor> ex;
  qairt_exec_observer_fn observer = nullptr;
  void* observer_user = nullptr;
  std::vector<qairt::exec::HostTensor> outputs;  // last successful run
  bool has_run = false;
};

using qairt::capi::InvalidArg;

namespace {

// The 1.x layouts, frozen by their last field (later fields must not reject
// callers compiled against them).
constexpr size_t kOptionsV1 = offsetof(qairt_executor_options, reserved) + sizeof(uint32_t);
constexpr size_t kInfoV1 = offsetof(qairt_exec_tensor_info, byte_size) + sizeof(uint64_t);
constexpr size_t kStatsV1 = offsetof(qairt_exec_stats, static_borrowed_bytes) + sizeof(uint64_t);

qairt_status_t* Info(const qairt_executor_t* e, size_t index, bool input, qairt_exec_tensor_info* out) {
  if (!e) return InvalidArg("executor must not be NULL");
  const auto& g = e->ex->graph();
  const size_t n = input ? g.inputs().size() : g.outputs().size();
  if (index >= n) return InvalidArg("{} index {} is out of range (the graph has {})", input ? "input" : "output", index, n);
  const qairt::TensorId id = input ? g.inputs()[index] : g.outputs()[index];
  const auto& dims = input ? e->ex->InputDims(index) : e->ex->OutputDims(index);
  const qairt::DType dt = input ? e->ex->InputDType(index) : e->ex->OutputDType(index);
  qairt_exec_tensor_info info{};
  info.struct_size = sizeof(info);
  info.rank = static_cast<uint32_t>(dims.size());
  info.name = g.tensor(id).name.c_str();
  info.dtype = static_cast<qairt_dtype_t>(dt);
  info.dims = dims.data();
  uint64_t count = 1;
  for (int64_t d : dims) count *= static_cast<uint64_t>(d);
  info.byte_size = qairt::StorageBytes(dt, count).value_or(0);
  return qairt::capi::WriteVersionedStruct(info, kInfoV1, "qairt_exec_tensor_info", out);
}

}  // namespace

extern "C" {

void qairt_executor_options_init(qairt_executor_options* options) {
  if (!options) return;
  *options = qairt_executor_options{};
  options->struct_size = sizeof(*options);
  options->num_threads = 1;
}

qairt_status_t* qairt_executor_create(const qairt_graph_t* graph, const qairt_executor_options* options,
                                      qairt_executor_t** out_executor) {
  QAIRT_CAPI_BEGIN
  if (!out_executor) return InvalidArg("out_executor must not be NULL");
  if (!graph) return InvalidArg("graph must not be NULL");
  qairt_executor_options opts;
  qairt_executor_options_init(&opts);
  if (options) {
    if (auto* s = qairt::capi::ReadVersionedStruct(options, kOptionsV1, "qairt_executor_options", &opts)) return s;
    if (opts.flags & ~uint32_t{QAIRT_EXEC_NO_QUANT_SIM})
      return InvalidArg("qairt_executor_options.flags has unknown bits 0x{:x}", opts.flags & ~uint32_t{QAIRT_EXEC_NO_QUANT_SIM});
    if (opts.reserved != 0) return InvalidArg("qairt_executor_options.reserved must be 0");
    if (opts.num_threads > 1024) return InvalidArg("qairt_executor_options.num_threads {} is too large", opts.num_threads);
  }
  qairt::exec::Options o;
  o.num_threads = opts.num_threads;
  o.simulate_quantization = (opts.flags & QAIRT_EXEC_NO_QUANT_SIM) == 0;
  auto ex = qairt::exec::Executor::Create(graph->graph, o);
  if (!ex.ok()) return qairt::capi::FromStatus(ex.status());
  auto handle = std::make_unique<qairt_executor_t>();
  handle->ex = std::move(ex).value();
  *out_executor = handle.release();
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_executor_destroy(qairt_executor_t* executor) { delete executor; }

size_t qairt_executor_input_count(const qairt_executor_t* executor) {
  return executor ? executor->ex->graph().inputs().size() : 0;
}
size_t qairt_executor_output_count(const qairt_executor_t* executor) {
  return executor ? executor->ex->graph().outputs().size() : 0;
}

qairt_status_t* qairt_executor_input_info(const qairt_executor_t* executor, size_t index,
                                          qairt_exec_tensor_info* out_info) {
  QAIRT_CAPI_BEGIN
  return Info(executor, index, true, out_info);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_executor_output_info(const qairt_executor_t* executor, size_t index,
                                           qairt_exec_tensor_info* out_info) {
  QAIRT_CAPI_BEGIN
  return Info(executor, index, false, out_info);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_executor_set_observer(qairt_executor_t* executor, qairt_exec_observer_fn fn, void* user_data) {
  if (!executor) return InvalidArg("executor must not be NULL");
  executor->observer = fn;
  executor->observer_user = user_data;
  return nullptr;
}

qairt_status_t* qairt_executor_run(qairt_executor_t* executor, const void* const* inputs, const size_t* input_sizes,
                                   size_t input_count) {
  QAIRT_CAPI_BEGIN
  if (!executor) return InvalidArg("executor must not be NULL");
  executor->outputs.clear();
  executor->has_run = false;
  const size_t n = executor->ex->graph().inputs().size();
  if (input_count != n) return InvalidArg("the graph has {} inputs but input_count is {}", n, input_count);
  if (n && (!inputs || !input_sizes)) return InvalidArg("inputs and input_sizes must not be NULL");
  std::vector<const void*> in(inputs, inputs + n);
  std::vector<size_t> sizes(input_sizes, input_sizes + n);
  qairt::exec::Observer obs;
  if (executor->observer) {
    obs = [executor](const qairt::exec::ObservedTensor& t) -> qairt::Status {
      const int32_t rc = executor->observer(executor->observer_user, t.name->c_str(),
                                            static_cast<qairt_dtype_t>(t.storage_dtype),
                                            static_cast<uint32_t>(t.dims->size()), t.dims->data(), t.data, t.bytes);
      if (rc != 0)
        return qairt::Status(qairt::StatusCode::kInternal,
                             fmt::format("the observer stopped the run at tensor '{}' (returned {})", *t.name, rc));
      return qairt::Status::Ok();
    };
  }
  auto r = executor->ex->Run(in, sizes, executor->observer ? &obs : nullptr);
  if (!r.ok()) return qairt::capi::FromStatus(r.status());
  executor->outputs = std::move(r).value();
  executor->has_run = true;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_executor_get_output(const qairt_executor_t* executor, size_t index, void* buf, size_t capacity,
                                          size_t* out_size) {
  QAIRT_CAPI_BEGIN
  if (!executor) return InvalidArg("executor must not be NULL");
  if (!executor->has_run) return InvalidArg("no successful run yet");
  if (index >= executor->outputs.size())
    return InvalidArg("output index {} is out of range (the graph has {})", index, executor->outputs.size());
  const auto& bytes = executor->outputs[index].bytes;
  if (out_size) *out_size = bytes.size();
  if (!buf) {
    if (!out_size) return InvalidArg("out_size must not be NULL when buf is NULL");
    return nullptr;
  }
  if (capacity < bytes.size())
    return qairt::capi::MakeStatus(QAIRT_BUFFER_TOO_SMALL,
                                   fmt::format("output '{}' needs {} bytes but the buffer holds {}",
                                               executor->outputs[index].name, bytes.size(), capacity));
  if (!bytes.empty()) std::memcpy(buf, bytes.data(), bytes.size());
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_executor_stats(const qairt_executor_t* executor, qairt_exec_stats* out_stats) {
  QAIRT_CAPI_BEGIN
  if (!executor) return InvalidArg("executor must not be NULL");
  const auto& s = executor->ex->stats();
  qairt_exec_stats st{};
  st.struct_size = sizeof(st);
  st.op_count = s.ops;
  st.arena_bytes = s.arena_bytes;
  st.unplanned_bytes = s.unplanned_bytes;
  st.static_copied_bytes = s.static_copied_bytes;
  st.static_borrowed_bytes = s.static_borrowed_bytes;
  return qairt::capi::WriteVersionedStruct(st, kStatsV1, "qairt_exec_stats", out_stats);
  QAIRT_CAPI_END
}

}  // extern "C"
