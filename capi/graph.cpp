// Graph construction, validation and introspection of the C API.
#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "capi/capi_internal.h"
#include "ir/op_registry.h"

using namespace qairt;  // NOLINT: implementation file of the C boundary
using capi::InvalidArg;

namespace {

// Sizes of the 1.0 layouts: the minimum struct_size accepted.
constexpr size_t kGraphOptionsV1 = QAIRT_STRUCT_V1_SIZE(qairt_graph_options, name);
constexpr size_t kTensorDescV1 = QAIRT_STRUCT_V1_SIZE(qairt_tensor_desc, reserved);
constexpr size_t kOpDescV1 = QAIRT_STRUCT_V1_SIZE(qairt_op_desc, source_op_type);
constexpr size_t kTensorInfoV1 = QAIRT_STRUCT_V1_SIZE(qairt_tensor_info, static_data_size);
constexpr size_t kOpInfoV1 = QAIRT_STRUCT_V1_SIZE(qairt_op_info, num_attrs);

// Hostile-input guard: no real tensor has more dims than this.
constexpr size_t kMaxRank = 64;

qairt_status_t* ToShape(const qairt_tensor_desc& d, const char* what, Shape* out) {
  const char* name = d.name ? d.name : "";
  if (!d.rank_known) {
    *out = Shape();
    return nullptr;
  }
  if (d.rank > kMaxRank) return InvalidArg("failed to add {} '{}' with rank={}: rank must be <= {}", what, name, d.rank, kMaxRank);
  if (d.rank > 0 && !d.dims) return InvalidArg("failed to add {} '{}': dims is NULL but rank is {}", what, name, d.rank);
  std::vector<Dim> dims(d.rank);
  for (size_t i = 0; i < d.rank; ++i) {
    dims[i].value = d.dims[i] < 0 ? -1 : d.dims[i];
    if (d.dim_symbols && d.dim_symbols[i] && d.dim_symbols[i][0] != '\0') {
      if (d.dims[i] >= 0)
        return InvalidArg("failed to add {} '{}': dim {} has both a size ({}) and a symbol ('{}')", what, name, i,
                          d.dims[i], d.dim_symbols[i]);
      dims[i].symbol = d.dim_symbols[i];
    }
  }
  *out = Shape(std::move(dims));
  return nullptr;
}

qairt_status_t* ReadTensorDesc(const qairt_tensor_desc* in, const char* what, qairt_tensor_desc* desc, Shape* shape) {
  if (auto* s = capi::ReadVersionedStruct(in, kTensorDescV1, "qairt_tensor_desc", desc)) return s;
  if (!desc->name || desc->name[0] == '\0') return InvalidArg("failed to add {}: desc.name must be a non-empty string", what);
  if (!IsValidDType(desc->dtype))
    return InvalidArg("failed to add {} '{}' with dtype={}: not a known qairt_dtype", what, desc->name, desc->dtype);
  if (desc->reserved != 0) return InvalidArg("failed to add {} '{}': desc.reserved must be 0", what, desc->name);
  return ToShape(*desc, what, shape);
}

qairt_status_t* ReadAttribute(const qairt_attr& a, const char* op_name, Attribute* out) {
  if (!a.name || a.name[0] == '\0') return InvalidArg("failed to add op '{}': an attribute has no name", op_name);
  if (a.reserved != 0) return InvalidArg("failed to add op '{}': attribute '{}' has reserved != 0", op_name, a.name);
  if (a.count > 0 && !a.data)
    return InvalidArg("failed to add op '{}': attribute '{}' has count={} but data is NULL", op_name, a.name, a.count);
  const bool scalar = a.type == QAIRT_ATTR_INT || a.type == QAIRT_ATTR_FLOAT || a.type == QAIRT_ATTR_STRING;
  if (scalar && a.count != 1)
    return InvalidArg("failed to add op '{}': scalar attribute '{}' must have count=1, got {}", op_name, a.name, a.count);
  switch (a.type) {
    case QAIRT_ATTR_INT: *out = *static_cast<const int64_t*>(a.data); return nullptr;
    case QAIRT_ATTR_FLOAT: *out = *static_cast<const double*>(a.data); return nullptr;
    case QAIRT_ATTR_STRING: *out = std::string(static_cast<const char*>(a.data)); return nullptr;
    case QAIRT_ATTR_INTS: {
      const auto* p = static_cast<const int64_t*>(a.data);
      *out = std::vector<int64_t>(p, p + a.count);
      return nullptr;
    }
    case QAIRT_ATTR_FLOATS: {
      const auto* p = static_cast<const double*>(a.data);
      *out = std::vector<double>(p, p + a.count);
      return nullptr;
    }
    case QAIRT_ATTR_STRINGS: {
      const auto* p = static_cast<const char* const*>(a.data);
      std::vector<std::string> v;
      v.reserve(a.count);
      for (size_t i = 0; i < a.count; ++i) {
        if (!p[i]) return InvalidArg("failed to add op '{}': attribute '{}' string {} is NULL", op_name, a.name, i);
        v.emplace_back(p[i]);
      }
      *out = std::move(v);
      return nullptr;
    }
    default:
      return InvalidArg("failed to add op '{}': attribute '{}' has unknown type {}", op_name, a.name, a.type);
  }
}

// Fills a qairt_attr that borrows from the graph's attribute storage.
void FillAttr(const qairt_graph_t* g, OpId op, const std::string& name, const Attribute& value, qairt_attr* out) {
  qairt_attr a{};
  a.name = name.c_str();
  a.type = static_cast<qairt_attr_type_t>(value.index() + 1);
  struct Visitor {
    const qairt_graph_t* g;
    OpId op;
    const std::string& name;
    qairt_attr& a;
    void operator()(const int64_t& v) const { a.count = 1, a.data = &v; }
    void operator()(const double& v) const { a.count = 1, a.data = &v; }
    void operator()(const std::string& v) const { a.count = 1, a.data = v.c_str(); }
    void operator()(const std::vector<int64_t>& v) const { a.count = v.size(), a.data = v.data(); }
    void operator()(const std::vector<double>& v) const { a.count = v.size(), a.data = v.data(); }
    void operator()(const std::vector<std::string>& v) const {
      std::lock_guard<std::mutex> lock(g->cache_mutex);
      auto& ptrs = g->string_list_cache[{op, name}];
      ptrs.clear();
      for (const auto& s : v) ptrs.push_back(s.c_str());
      a.count = v.size();
      a.data = ptrs.data();
    }
  };
  std::visit(Visitor{g, op, name, a}, value);
  *out = a;
}

qairt_status_t* CheckGraph(const qairt_graph_t* g, const char* fn) {
  return g ? nullptr : InvalidArg("{}: graph must not be NULL", fn);
}

qairt_status_t* CheckTensor(const qairt_graph_t* g, qairt_tensor_id t, const char* fn) {
  if (!g) return InvalidArg("{}: graph must not be NULL", fn);
  if (!g->graph.valid_tensor(t))
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("{}: tensor id {} is not in graph '{}' ({} tensors)", fn, t,
                                                         g->graph.name(), g->graph.tensor_count()));
  return nullptr;
}

qairt_status_t* CheckOp(const qairt_graph_t* g, qairt_op_id op, const char* fn) {
  if (!g) return InvalidArg("{}: graph must not be NULL", fn);
  if (!g->graph.valid_op(op))
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("{}: op id {} is not in graph '{}' ({} ops)", fn, op,
                                                         g->graph.name(), g->graph.op_count()));
  return nullptr;
}

}  // namespace

extern "C" {

void qairt_graph_options_init(qairt_graph_options* options) {
  if (!options) return;
  *options = qairt_graph_options{};
  options->struct_size = sizeof(qairt_graph_options);
}

void qairt_tensor_desc_init(qairt_tensor_desc* desc) {
  if (!desc) return;
  *desc = qairt_tensor_desc{};
  desc->struct_size = sizeof(qairt_tensor_desc);
  desc->rank_known = 1;
}

void qairt_op_desc_init(qairt_op_desc* desc) {
  if (!desc) return;
  *desc = qairt_op_desc{};
  desc->struct_size = sizeof(qairt_op_desc);
}

qairt_status_t* qairt_graph_create(const qairt_graph_options* options, qairt_graph_t** out_graph) {
  QAIRT_CAPI_BEGIN
  if (!out_graph) return InvalidArg("qairt_graph_create: out_graph must not be NULL");
  qairt_graph_options opts;
  qairt_graph_options_init(&opts);
  if (options) {
    if (auto* s = capi::ReadVersionedStruct(options, kGraphOptionsV1, "qairt_graph_options", &opts)) return s;
    if (opts.flags != 0) return InvalidArg("qairt_graph_create: options.flags must be 0, got {}", opts.flags);
  }
  std::string name = opts.name && opts.name[0] ? opts.name : "graph";
  *out_graph = new qairt_graph_t(std::move(name));
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_clone(const qairt_graph_t* graph, qairt_graph_t** out_graph) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_clone")) return s;
  if (!out_graph) return InvalidArg("qairt_graph_clone: out_graph must not be NULL");
  auto* copy = new qairt_graph_t(graph->graph.name());
  copy->graph = graph->graph;
  *out_graph = copy;
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_graph_destroy(qairt_graph_t* graph) {
  if (!graph) return;
  // A graph holding hundreds of megabytes of weights (mapped files, their
  // quantized forms) lets them go on two threads: unmapping clears a
  // page-table entry per 4 KiB page, 60 ms for an LLM's 3.4 GB, and the
  // mappings drop their pages in parallel (StaticData's mapping releases
  // them under the address space's read lock before unmapping).
  constexpr size_t kParallelFrom = size_t{256} << 20;
  std::vector<std::shared_ptr<const qairt::StaticData>> data;
  size_t bytes = 0;
  for (qairt::TensorId id = 0; id < graph->graph.tensor_count(); ++id)
    if (const auto& d = graph->graph.tensor(id).data) bytes += d->size();
  if (bytes >= kParallelFrom) {
    try {
      for (qairt::TensorId id = 0; id < graph->graph.tensor_count(); ++id)
        if (const auto& d = graph->graph.tensor(id).data) data.push_back(d);
    } catch (...) {
      data.clear();  // no memory for the list: released in place below
    }
  }
  delete graph;
  if (data.empty()) return;
  // Largest first, dealt alternately, so both threads get about half.
  std::sort(data.begin(), data.end(), [](const auto& a, const auto& b) { return a->size() > b->size(); });
  auto release = [&data](size_t first) {
    for (size_t i = first; i < data.size(); i += 2) data[i].reset();
  };
  try {
    std::thread helper(release, size_t{1});
    release(0);
    helper.join();
  } catch (...) {  // no thread: the rest in place
    data.clear();
  }
}

qairt_status_t* qairt_graph_add_input(qairt_graph_t* graph, const qairt_tensor_desc* desc, qairt_tensor_id* out_id) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_add_input")) return s;
  if (!out_id) return InvalidArg("qairt_graph_add_input: out_id must not be NULL");
  qairt_tensor_desc d;
  Shape shape;
  if (auto* s = ReadTensorDesc(desc, "input", &d, &shape)) return s;
  auto id = graph->graph.AddInput(d.name, static_cast<DType>(d.dtype), std::move(shape));
  if (!id.ok()) return capi::FromStatus(id.status());
  *out_id = id.value();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_add_constant(qairt_graph_t* graph, const qairt_tensor_desc* desc, const void* data,
                                         size_t data_size, uint32_t flags, qairt_tensor_id* out_id) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_add_constant")) return s;
  if (!out_id) return InvalidArg("qairt_graph_add_constant: out_id must not be NULL");
  qairt_tensor_desc d;
  Shape shape;
  if (auto* s = ReadTensorDesc(desc, "constant", &d, &shape)) return s;
  if ((flags & ~QAIRT_CONSTANT_BORROW) != 0)
    return InvalidArg("failed to add constant '{}': unknown flags 0x{:x}", d.name, flags);
  if (!data && data_size != 0) return InvalidArg("failed to add constant '{}': data is NULL", d.name);
  auto bytes = (flags & QAIRT_CONSTANT_BORROW) ? StaticData::Borrow(data, data_size) : StaticData::Copy(data, data_size);
  auto id = graph->graph.AddConstant(d.name, static_cast<DType>(d.dtype), std::move(shape), std::move(bytes));
  if (!id.ok()) return capi::FromStatus(id.status());
  *out_id = id.value();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_add_constant_mapped(qairt_graph_t* graph, const qairt_tensor_desc* desc, const char* path,
                                                uint64_t offset, uint64_t length, qairt_tensor_id* out_id) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_add_constant_mapped")) return s;
  if (!out_id || !path) return InvalidArg("qairt_graph_add_constant_mapped: path and out_id must not be NULL");
  qairt_tensor_desc d;
  Shape shape;
  if (auto* s = ReadTensorDesc(desc, "constant", &d, &shape)) return s;
  auto bytes = StaticData::MapFile(path, offset, length);
  if (!bytes.ok())
    return capi::MakeStatus(static_cast<qairt_code_t>(bytes.status().code()),
                            fmt::format("failed to add constant '{}': {}", d.name, bytes.status().message()));
  auto id = graph->graph.AddConstant(d.name, static_cast<DType>(d.dtype), std::move(shape), std::move(bytes.value()));
  if (!id.ok()) return capi::FromStatus(id.status());
  *out_id = id.value();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_add_tensor(qairt_graph_t* graph, const qairt_tensor_desc* desc, qairt_tensor_id* out_id) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_add_tensor")) return s;
  if (!out_id) return InvalidArg("qairt_graph_add_tensor: out_id must not be NULL");
  qairt_tensor_desc d;
  Shape shape;
  if (auto* s = ReadTensorDesc(desc, "tensor", &d, &shape)) return s;
  auto id = graph->graph.AddTensor(d.name, static_cast<DType>(d.dtype), std::move(shape));
  if (!id.ok()) return capi::FromStatus(id.status());
  *out_id = id.value();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_mark_output(qairt_graph_t* graph, qairt_tensor_id tensor) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTensor(graph, tensor, "qairt_graph_mark_output")) return s;
  return capi::FromStatus(graph->graph.MarkOutput(tensor));
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_add_op(qairt_graph_t* graph, const qairt_op_desc* desc, qairt_op_id* out_id) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_add_op")) return s;
  if (!out_id) return InvalidArg("qairt_graph_add_op: out_id must not be NULL");
  qairt_op_desc d;
  if (auto* s = capi::ReadVersionedStruct(desc, kOpDescV1, "qairt_op_desc", &d)) return s;
  if (!d.type || !d.type[0]) return InvalidArg("failed to add op: desc.type must be a non-empty string");
  if (!d.name || !d.name[0]) return InvalidArg("failed to add op of type {}: desc.name must be non-empty", d.type);
  if (d.flags != 0) return InvalidArg("failed to add op '{}': desc.flags must be 0", d.name);
  if (d.num_inputs && !d.inputs) return InvalidArg("failed to add op '{}': inputs is NULL", d.name);
  if (d.num_outputs && !d.outputs) return InvalidArg("failed to add op '{}': outputs is NULL", d.name);
  if (d.num_attrs && !d.attrs) return InvalidArg("failed to add op '{}': attrs is NULL", d.name);
  OpSpec spec;
  spec.type = d.type;
  spec.name = d.name;
  spec.inputs.assign(d.inputs, d.inputs + d.num_inputs);
  spec.outputs.assign(d.outputs, d.outputs + d.num_outputs);
  for (size_t i = 0; i < d.num_attrs; ++i) {
    Attribute value;
    if (auto* s = ReadAttribute(d.attrs[i], d.name, &value)) return s;
    if (!spec.attrs.emplace(d.attrs[i].name, std::move(value)).second)
      return InvalidArg("failed to add op '{}': attribute '{}' given twice", d.name, d.attrs[i].name);
  }
  if (d.source_name) spec.source_name = d.source_name;
  if (d.source_op_type) spec.source_op_type = d.source_op_type;
  auto id = graph->graph.AddOp(std::move(spec));
  if (!id.ok()) return capi::FromStatus(id.status());
  *out_id = id.value();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_set_op_input(qairt_graph_t* graph, qairt_op_id op, size_t slot, qairt_tensor_id tensor) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckOp(graph, op, "qairt_graph_set_op_input")) return s;
  return capi::FromStatus(graph->graph.SetOpInput(op, slot, tensor));
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_infer_shapes(qairt_graph_t* graph) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_infer_shapes")) return s;
  graph->graph.InferShapes();
  return nullptr;
  QAIRT_CAPI_END
}

// ---- validation ---------------------------------------------------------------

qairt_status_t* qairt_graph_validate(const qairt_graph_t* graph, qairt_diagnostics_t** out_diagnostics) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_validate")) return s;
  Diagnostics diags = graph->graph.Validate();
  const bool failed = HasErrors(diags);
  std::string text = failed ? fmt::format("graph '{}' is invalid:\n{}", graph->graph.name(), JoinMessages(diags)) : "";
  if (out_diagnostics) {
    auto list = std::make_unique<qairt_diagnostics_t>();
    capi::AppendGraphDiagnostics(graph->graph, diags, list.get());
    *out_diagnostics = list.release();
  }
  return failed ? capi::MakeStatus(QAIRT_VALIDATION_FAILED, std::move(text)) : nullptr;
  QAIRT_CAPI_END
}

// ---- introspection ----------------------------------------------------------

const char* qairt_graph_name(const qairt_graph_t* graph) { return graph ? graph->graph.name().c_str() : ""; }
size_t qairt_graph_tensor_count(const qairt_graph_t* graph) { return graph ? graph->graph.tensor_count() : 0; }
size_t qairt_graph_op_count(const qairt_graph_t* graph) { return graph ? graph->graph.op_count() : 0; }
size_t qairt_graph_input_count(const qairt_graph_t* graph) { return graph ? graph->graph.inputs().size() : 0; }
size_t qairt_graph_output_count(const qairt_graph_t* graph) { return graph ? graph->graph.outputs().size() : 0; }

qairt_tensor_id qairt_graph_input(const qairt_graph_t* graph, size_t index) {
  return graph && index < graph->graph.inputs().size() ? graph->graph.inputs()[index] : QAIRT_INVALID_ID;
}

qairt_tensor_id qairt_graph_output(const qairt_graph_t* graph, size_t index) {
  return graph && index < graph->graph.outputs().size() ? graph->graph.outputs()[index] : QAIRT_INVALID_ID;
}

qairt_status_t* qairt_graph_find_tensor(const qairt_graph_t* graph, const char* name, qairt_tensor_id* out_id) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_find_tensor")) return s;
  if (!name || !out_id) return InvalidArg("qairt_graph_find_tensor: name and out_id must not be NULL");
  auto id = graph->graph.FindTensor(name);
  if (!id) return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("graph '{}' has no tensor named '{}'", graph->graph.name(), name));
  *out_id = *id;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_find_op(const qairt_graph_t* graph, const char* name, qairt_op_id* out_id) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_find_op")) return s;
  if (!name || !out_id) return InvalidArg("qairt_graph_find_op: name and out_id must not be NULL");
  auto id = graph->graph.FindOp(name);
  if (!id) return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("graph '{}' has no op named '{}'", graph->graph.name(), name));
  *out_id = *id;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_tensor_info(const qairt_graph_t* graph, qairt_tensor_id tensor,
                                        qairt_tensor_info* out_info) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTensor(graph, tensor, "qairt_graph_tensor_info")) return s;
  const Tensor& t = graph->graph.tensor(tensor);
  qairt_tensor_info info{};
  info.struct_size = sizeof(qairt_tensor_info);
  info.dtype = static_cast<qairt_dtype_t>(t.dtype);
  info.name = t.name.c_str();
  info.role = static_cast<qairt_tensor_role_t>(t.role());
  info.rank_known = t.shape.rank_known() ? 1 : 0;
  info.rank = t.shape.rank();
  {
    std::lock_guard<std::mutex> lock(graph->cache_mutex);
    if (graph->dims_cache.size() < graph->graph.tensor_count()) graph->dims_cache.resize(graph->graph.tensor_count());
    auto& dims = graph->dims_cache[tensor];
    dims = t.shape.extents();  // same size => no reallocation, earlier pointers stay valid
    info.dims = dims.data();
  }
  info.producer = t.producer;
  info.producer_slot = t.producer_slot;
  info.num_consumers = t.consumers.size();
  info.has_encoding = t.encoding ? 1 : 0;
  info.static_data_borrowed = t.data && !t.data->owned() ? 1 : 0;
  info.static_data_size = t.data ? t.data->size() : 0;
  return capi::WriteVersionedStruct(info, kTensorInfoV1, "qairt_tensor_info", out_info);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_tensor_dim_symbol(const qairt_graph_t* graph, qairt_tensor_id tensor, size_t index,
                                              const char** out_symbol) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTensor(graph, tensor, "qairt_graph_tensor_dim_symbol")) return s;
  if (!out_symbol) return InvalidArg("qairt_graph_tensor_dim_symbol: out_symbol must not be NULL");
  const Tensor& t = graph->graph.tensor(tensor);
  if (index >= t.shape.rank())
    return InvalidArg("qairt_graph_tensor_dim_symbol: tensor '{}' has rank {}, no dim {}", t.name, t.shape.rank(), index);
  *out_symbol = t.shape[index].symbol.empty() ? nullptr : t.shape[index].symbol.c_str();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_tensor_consumer(const qairt_graph_t* graph, qairt_tensor_id tensor, size_t index,
                                            qairt_op_id* out_op, uint32_t* out_slot) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTensor(graph, tensor, "qairt_graph_tensor_consumer")) return s;
  if (!out_op || !out_slot) return InvalidArg("qairt_graph_tensor_consumer: out_op and out_slot must not be NULL");
  const Tensor& t = graph->graph.tensor(tensor);
  if (index >= t.consumers.size())
    return InvalidArg("qairt_graph_tensor_consumer: tensor '{}' has {} consumers, no index {}", t.name,
                      t.consumers.size(), index);
  *out_op = t.consumers[index].op;
  *out_slot = t.consumers[index].slot;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_tensor_data(const qairt_graph_t* graph, qairt_tensor_id tensor, const void** out_data,
                                        size_t* out_size) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckTensor(graph, tensor, "qairt_graph_tensor_data")) return s;
  if (!out_data || !out_size) return InvalidArg("qairt_graph_tensor_data: out_data and out_size must not be NULL");
  const Tensor& t = graph->graph.tensor(tensor);
  if (!t.data) return InvalidArg("qairt_graph_tensor_data: tensor '{}' is not static", t.name);
  *out_data = t.data->data();
  *out_size = t.data->size();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_op_info(const qairt_graph_t* graph, qairt_op_id op, qairt_op_info* out_info) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckOp(graph, op, "qairt_graph_op_info")) return s;
  const Op& o = graph->graph.op(op);
  qairt_op_info info{};
  info.struct_size = sizeof(qairt_op_info);
  info.type = o.type.c_str();
  info.name = o.name.c_str();
  info.source_name = o.source_name.c_str();
  info.source_op_type = o.source_op_type.c_str();
  info.num_inputs = o.inputs.size();
  info.inputs = o.inputs.data();
  info.num_outputs = o.outputs.size();
  info.outputs = o.outputs.data();
  info.num_attrs = o.attrs.size();
  return capi::WriteVersionedStruct(info, kOpInfoV1, "qairt_op_info", out_info);
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_op_attr(const qairt_graph_t* graph, qairt_op_id op, size_t index, qairt_attr* out_attr) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckOp(graph, op, "qairt_graph_op_attr")) return s;
  if (!out_attr) return InvalidArg("qairt_graph_op_attr: out_attr must not be NULL");
  const Op& o = graph->graph.op(op);
  if (index >= o.attrs.size())
    return InvalidArg("qairt_graph_op_attr: op '{}' has {} attributes, no index {}", o.name, o.attrs.size(), index);
  auto it = o.attrs.begin();
  std::advance(it, static_cast<long>(index));
  FillAttr(graph, op, it->first, it->second, out_attr);
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_op_find_attr(const qairt_graph_t* graph, qairt_op_id op, const char* name,
                                         qairt_attr* out_attr) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckOp(graph, op, "qairt_graph_op_find_attr")) return s;
  if (!name || !out_attr) return InvalidArg("qairt_graph_op_find_attr: name and out_attr must not be NULL");
  const Op& o = graph->graph.op(op);
  auto it = o.attrs.find(std::string_view(name));
  if (it == o.attrs.end())
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("op '{}' has no attribute '{}'", o.name, name));
  FillAttr(graph, op, it->first, it->second, out_attr);
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_topological_order(const qairt_graph_t* graph, qairt_op_id* ops, size_t capacity,
                                              size_t* out_count) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_topological_order")) return s;
  if (!out_count) return InvalidArg("qairt_graph_topological_order: out_count must not be NULL");
  auto order = graph->graph.TopologicalOrder();
  if (!order.ok()) return capi::FromStatus(order.status());
  if (ops) {
    if (capacity < order->size())
      return capi::MakeStatus(QAIRT_BUFFER_TOO_SMALL, fmt::format("qairt_graph_topological_order: capacity {} < {} ops",
                                                                  capacity, order->size()));
    std::copy(order->begin(), order->end(), ops);
  }
  *out_count = order->size();
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_summary_json(const qairt_graph_t* graph, char* buf, size_t capacity, size_t* out_length) {
  QAIRT_CAPI_BEGIN
  if (auto* s = CheckGraph(graph, "qairt_graph_summary_json")) return s;
  return capi::FillString(graph->graph.SummaryJson(), buf, capacity, out_length, "qairt_graph_summary_json");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_compare(const qairt_graph_t* a, const qairt_graph_t* b, int32_t* out_equal, char* diff_buf,
                                    size_t diff_capacity) {
  QAIRT_CAPI_BEGIN
  if (!a || !b || !out_equal) return InvalidArg("qairt_graph_compare: a, b and out_equal must not be NULL");
  const std::string diff = Graph::Diff(a->graph, b->graph);
  if (diff_buf && diff_capacity > 0) {
    const size_t n = std::min(diff.size(), diff_capacity - 1);
    std::memcpy(diff_buf, diff.data(), n);
    diff_buf[n] = '\0';
  }
  *out_equal = diff.empty() ? 1 : 0;
  return nullptr;
  QAIRT_CAPI_END
}

}  // extern "C"
