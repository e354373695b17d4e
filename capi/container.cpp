// The .qairt container of the C API (include/qairt/qairt_container.h).
#include "qairt/qairt_container.h"

#include <cstddef>
#include <cstring>

#include "capi/capi_internal.h"
#include "container/container.h"

using namespace qairt;  // NOLINT: implementation file of the C boundary
using capi::InvalidArg;

struct qairt_container_t {
  container::LoadedContainer loaded;
};

static_assert(QAIRT_OPTION_SOURCE_DEFAULT == static_cast<int>(container::OptionSource::kDefault));
static_assert(QAIRT_OPTION_SOURCE_USER == static_cast<int>(container::OptionSource::kUser));
static_assert(QAIRT_OPTION_SOURCE_TARGET == static_cast<int>(container::OptionSource::kTarget));
// Fixed-layout structs used in arrays: their layout is ABI.
static_assert(sizeof(void*) != 8 || sizeof(qairt_container_option) == 24);
static_assert(sizeof(void*) != 8 || sizeof(qairt_container_op_annotation) == 24);
static_assert(sizeof(void*) != 8 || sizeof(qairt_container_tensor_note) == 16);
static_assert(sizeof(void*) != 8 || sizeof(qairt_container_info) == 64);
static_assert(sizeof(void*) != 8 || sizeof(qairt_container_write_options) == 72);

namespace {

// The 1.3 layouts end after tensor_notes / num_tensor_notes.
constexpr size_t kWriteOptionsV1Size =
    offsetof(qairt_container_write_options, tensor_notes) + sizeof(const qairt_container_tensor_note*);
constexpr size_t kInfoV1Size = offsetof(qairt_container_info, num_tensor_notes) + sizeof(size_t);

const char* Str(const char* s) { return s ? s : ""; }

qairt_status_t* ReadMeta(const qairt_container_write_options* in, container::ContainerMeta* out) {
  if (!in) return nullptr;
  qairt_container_write_options o;
  if (auto* s = capi::ReadVersionedStruct(in, kWriteOptionsV1Size, "qairt_container_write_options", &o)) return s;
  if (o.flags != 0) return InvalidArg("qairt_container_write_options.flags must be 0, got 0x{:x}", o.flags);
  if ((o.num_options && !o.options) || (o.num_op_annotations && !o.op_annotations) ||
      (o.num_tensor_notes && !o.tensor_notes))
    return InvalidArg("qairt_container_write_options: an array with a non-zero count is NULL");
  out->target = Str(o.target_name);
  out->stats_summary = Str(o.stats_summary);
  for (size_t i = 0; i < o.num_options; ++i) {
    const qairt_container_option& opt = o.options[i];
    if (!opt.key) return InvalidArg("qairt_container_write_options.options[{}].key is NULL", i);
    if (opt.reserved != 0) return InvalidArg("qairt_container_write_options.options[{}].reserved must be 0", i);
    if (opt.source > QAIRT_OPTION_SOURCE_TARGET)
      return InvalidArg("qairt_container_write_options.options[{}] '{}'.source {} is not a qairt_option_source", i,
                        opt.key, opt.source);
    out->options.push_back({opt.key, Str(opt.value), static_cast<container::OptionSource>(opt.source)});
  }
  for (size_t i = 0; i < o.num_op_annotations; ++i) {
    const qairt_container_op_annotation& a = o.op_annotations[i];
    if (!a.op_name) return InvalidArg("qairt_container_write_options.op_annotations[{}].op_name is NULL", i);
    out->op_annotations.push_back({a.op_name, Str(a.kernel), a.super_group, a.adapted != 0});
  }
  for (size_t i = 0; i < o.num_tensor_notes; ++i) {
    const qairt_container_tensor_note& n = o.tensor_notes[i];
    if (!n.tensor_name) return InvalidArg("qairt_container_write_options.tensor_notes[{}].tensor_name is NULL", i);
    out->tensor_notes.push_back({n.tensor_name, Str(n.reasons)});
  }
  return nullptr;
}

qairt_status_t* Wrap(Result<container::LoadedContainer> r, qairt_container_t** out) {
  if (!r.ok()) return capi::FromStatus(r.status());
  auto* c = new qairt_container_t{std::move(r).value()};
  *out = c;
  return nullptr;
}

void FillOption(const container::ContainerOption& o, qairt_container_option* out) {
  out->key = o.key.c_str();
  out->value = o.value.c_str();
  out->source = static_cast<qairt_option_source_t>(o.source);
  out->reserved = 0;
}

}  // namespace

extern "C" {

void qairt_container_write_options_init(qairt_container_write_options* options) {
  if (!options) return;
  *options = qairt_container_write_options{};
  options->struct_size = sizeof(qairt_container_write_options);
}

qairt_status_t* qairt_container_write_file(const qairt_graph_t* graph, const char* path,
                                           const qairt_container_write_options* options) {
  QAIRT_CAPI_BEGIN
  if (!graph || !path) return InvalidArg("qairt_container_write_file: graph and path must not be NULL");
  container::ContainerMeta meta;
  if (auto* s = ReadMeta(options, &meta)) return s;
  return capi::FromStatus(container::WriteContainer(graph->graph, meta, path));
  QAIRT_CAPI_END
}

qairt_status_t* qairt_container_write_bytes(const qairt_graph_t* graph, const qairt_container_write_options* options,
                                            void* buf, size_t capacity, size_t* out_size) {
  QAIRT_CAPI_BEGIN
  if (!graph || !out_size) return InvalidArg("qairt_container_write_bytes: graph and out_size must not be NULL");
  container::ContainerMeta meta;
  if (auto* s = ReadMeta(options, &meta)) return s;
  auto bytes = container::SerializeContainer(graph->graph, meta);
  if (!bytes.ok()) return capi::FromStatus(bytes.status());
  if (buf) {
    if (capacity < bytes->size())
      return capi::MakeStatus(QAIRT_BUFFER_TOO_SMALL,
                              fmt::format("qairt_container_write_bytes: buffer of {} bytes is too small, need {}",
                                          capacity, bytes->size()));
    std::memcpy(buf, bytes->data(), bytes->size());
  }
  *out_size = bytes->size();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_container_load_file(const char* path, qairt_container_t** out_container) {
  QAIRT_CAPI_BEGIN
  if (!path || !out_container) return InvalidArg("qairt_container_load_file: path and out_container must not be NULL");
  return Wrap(container::ReadContainerFile(path), out_container);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_container_load_bytes(const void* data, size_t size, qairt_container_t** out_container) {
  QAIRT_CAPI_BEGIN
  if (!out_container || (!data && size)) return InvalidArg("qairt_container_load_bytes: data and out_container must not be NULL");
  static const uint8_t kEmpty = 0;
  const auto* p = data ? static_cast<const uint8_t*>(data) : &kEmpty;
  return Wrap(container::ReadContainer(std::span<const uint8_t>(p, size), "<bytes>"), out_container);
  QAIRT_CAPI_END
}

void qairt_container_destroy(qairt_container_t* container) { delete container; }

qairt_status_t* qairt_container_get_info(const qairt_container_t* c, qairt_container_info* out_info) {
  QAIRT_CAPI_BEGIN
  if (!c) return InvalidArg("qairt_container_get_info: container must not be NULL");
  qairt_container_info info{};
  info.struct_size = sizeof info;
  info.schema_version = c->loaded.schema_version;
  info.min_reader_version = c->loaded.min_reader_version;
  info.producer = c->loaded.meta.producer.c_str();
  info.target_name = c->loaded.meta.target.c_str();
  info.num_options = c->loaded.meta.options.size();
  info.num_op_annotations = c->loaded.meta.op_annotations.size();
  info.num_tensor_notes = c->loaded.meta.tensor_notes.size();
  info.stats_summary = c->loaded.meta.stats_summary.c_str();
  return capi::WriteVersionedStruct(info, kInfoV1Size, "qairt_container_info", out_info);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_container_get_graph(const qairt_container_t* c, qairt_graph_t** out_graph) {
  QAIRT_CAPI_BEGIN
  if (!c || !out_graph) return InvalidArg("qairt_container_get_graph: container and out_graph must not be NULL");
  auto* g = new qairt_graph_t(c->loaded.graph.name());
  g->graph = c->loaded.graph;
  *out_graph = g;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_container_get_option(const qairt_container_t* c, size_t index, qairt_container_option* out) {
  return qairt_container_option_at(c, index, out);
}
qairt_status_t* qairt_container_get_op_annotation(const qairt_container_t* c, size_t index,
                                                  qairt_container_op_annotation* out) {
  return qairt_container_op_annotation_at(c, index, out);
}
qairt_status_t* qairt_container_get_tensor_note(const qairt_container_t* c, size_t index,
                                                qairt_container_tensor_note* out) {
  return qairt_container_tensor_note_at(c, index, out);
}

qairt_status_t* qairt_container_option_at(const qairt_container_t* c, size_t index, qairt_container_option* out) {
  QAIRT_CAPI_BEGIN
  if (!c || !out) return InvalidArg("qairt_container_option_at: container and out_option must not be NULL");
  const auto& v = c->loaded.meta.options;
  if (index >= v.size()) return InvalidArg("qairt_container_option_at: index {} >= {} options", index, v.size());
  FillOption(v[index], out);
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_container_find_option(const qairt_container_t* c, const char* key, qairt_container_option* out) {
  QAIRT_CAPI_BEGIN
  if (!c || !key || !out) return InvalidArg("qairt_container_find_option: container, key and out_option must not be NULL");
  for (const auto& o : c->loaded.meta.options)
    if (o.key == key) {
      FillOption(o, out);
      return nullptr;
    }
  return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("the container has no option '{}'", key));
  QAIRT_CAPI_END
}

qairt_status_t* qairt_container_op_annotation_at(const qairt_container_t* c, size_t index,
                                                 qairt_container_op_annotation* out) {
  QAIRT_CAPI_BEGIN
  if (!c || !out) return InvalidArg("qairt_container_op_annotation_at: container and out_annotation must not be NULL");
  const auto& v = c->loaded.meta.op_annotations;
  if (index >= v.size()) return InvalidArg("qairt_container_op_annotation_at: index {} >= {} annotations", index, v.size());
  out->op_name = v[index].op_name.c_str();
  out->kernel = v[index].kernel.c_str();
  out->super_group = v[index].super_group;
  out->adapted = v[index].adapted ? 1u : 0u;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_container_tensor_note_at(const qairt_container_t* c, size_t index,
                                               qairt_container_tensor_note* out) {
  QAIRT_CAPI_BEGIN
  if (!c || !out) return InvalidArg("qairt_container_tensor_note_at: container and out_note must not be NULL");
  const auto& v = c->loaded.meta.tensor_notes;
  if (index >= v.size()) return InvalidArg("qairt_container_tensor_note_at: index {} >= {} notes", index, v.size());
  out->tensor_name = v[index].tensor_name.c_str();
  out->reasons = v[index].reasons.c_str();
  return nullptr;
  QAIRT_CAPI_END
}

const char* qairt_option_source_name(qairt_option_source_t source) {
  if (source > QAIRT_OPTION_SOURCE_TARGET) return "invalid";
  return container::OptionSourceName(static_cast<container::OptionSource>(source)).data();
}

}  // extern "C"
