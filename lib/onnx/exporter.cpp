#include "onnx/exporter.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "kernels/common/scalar.h"
#include "onnx/onnx_tensor.h"
#include "ir/op_registry.h"
#include "support/atomic_file.h"

namespace qairt::onnx_export {

using onnx_import::OnnxFromDType;

// ---------------------------------------------------------------------------
// Attribute setters
// ---------------------------------------------------------------------------

namespace {
onnx::AttributeProto* NewAttr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  for (auto& a : *n->mutable_attribute())
    if (a.name() == name) {
      a.Clear();
      a.set_name(name);
      a.set_type(t);
      return &a;
    }
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}
}  // namespace

void SetAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  NewAttr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
void SetAttr(onnx::NodeProto* n, const std::string& name, double v) {
  NewAttr(n, name, onnx::AttributeProto::FLOAT)->set_f(static_cast<float>(v));
}
void SetAttr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  NewAttr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
void SetAttr(onnx::NodeProto* n, const std::string& name, const char* v) { SetAttr(n, name, std::string(v)); }
void SetAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void SetAttr(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}

bool FillType(DType dtype, const Shape& shape, onnx::TypeProto* type) {
  const int32_t elem = OnnxFromDType(dtype);
  if (elem == 0) return false;
  auto* tt = type->mutable_tensor_type();
  tt->set_elem_type(elem);
  if (!shape.rank_known()) return true;
  auto* s = tt->mutable_shape();
  for (size_t i = 0; i < shape.rank(); ++i) {
    auto* d = s->add_dim();
    if (shape[i].known()) d->set_dim_value(shape[i].value);
    else if (!shape[i].symbol.empty()) d->set_dim_param(shape[i].symbol);
  }
  return true;
}

// ---------------------------------------------------------------------------
// OpContext
// ---------------------------------------------------------------------------

int64_t OpContext::opset() const { return ex_.opset(); }

const Tensor& OpContext::in_tensor(size_t i) const { return ex_.graph().tensor(op_.inputs[i]); }
const Tensor& OpContext::out_tensor(size_t i) const { return ex_.graph().tensor(op_.outputs[i]); }

DType OpContext::in_dtype(size_t i) const { return ex_.ValueDType(op_.inputs[i]); }
DType OpContext::out_dtype(size_t i) const { return ex_.ValueDType(op_.outputs[i]); }

void OpContext::Alias(size_t i, const std::string& name) {
  const Tensor& t = out_tensor(i);
  if (t.is_output) Node("Identity", {name}, {out(i)}, fmt::format("identity{}", i));
  else ex_.SetValueName(op_.outputs[i], name);
}

std::string OpContext::in(size_t i) const { return has_in(i) ? ex_.ValueName(op_.inputs[i]) : std::string(); }
std::string OpContext::out(size_t i) const { return ex_.ValueName(op_.outputs[i]); }

std::optional<size_t> OpContext::in_rank(size_t i) const {
  if (!has_in(i) || !in_tensor(i).shape.rank_known()) return std::nullopt;
  return in_tensor(i).shape.rank();
}

std::optional<std::vector<int64_t>> OpContext::in_static_ints(size_t i) const {
  if (!has_in(i)) return std::nullopt;
  const Tensor& t = in_tensor(i);
  if (t.kind != TensorKind::kStatic || !t.data) return std::nullopt;
  const auto n = t.shape.element_count();
  if (!n) return std::nullopt;
  const uint8_t* p = t.data->data();
  std::vector<int64_t> out(*n);
  auto need = StorageBytes(t.dtype, *n);
  if (!need || *need > t.data->size()) return std::nullopt;
  for (size_t k = 0; k < *n; ++k) {
    switch (t.dtype) {
      case DType::kInt64: { int64_t v; std::memcpy(&v, p + 8 * k, 8); out[k] = v; break; }
      case DType::kInt32: { int32_t v; std::memcpy(&v, p + 4 * k, 4); out[k] = v; break; }
      case DType::kUInt32: { uint32_t v; std::memcpy(&v, p + 4 * k, 4); out[k] = v; break; }
      case DType::kInt16: { int16_t v; std::memcpy(&v, p + 2 * k, 2); out[k] = v; break; }
      case DType::kUInt16: { uint16_t v; std::memcpy(&v, p + 2 * k, 2); out[k] = v; break; }
      case DType::kInt8: out[k] = static_cast<int8_t>(p[k]); break;
      case DType::kUInt8: out[k] = p[k]; break;
      default: return std::nullopt;
    }
  }
  return out;
}

namespace {
const Attribute* FindAttr(const Op& op, std::string_view name) {
  auto it = op.attrs.find(name);
  return it == op.attrs.end() ? nullptr : &it->second;
}
}  // namespace

int64_t OpContext::Int(std::string_view name, int64_t dflt) const {
  const Attribute* a = FindAttr(op_, name);
  if (!a) return dflt;
  if (auto* i = std::get_if<int64_t>(a)) return *i;
  if (auto* d = std::get_if<double>(a)) return static_cast<int64_t>(*d);
  return dflt;
}

double OpContext::Float(std::string_view name, double dflt) const {
  const Attribute* a = FindAttr(op_, name);
  if (!a) return dflt;
  if (auto* d = std::get_if<double>(a)) return *d;
  if (auto* i = std::get_if<int64_t>(a)) return static_cast<double>(*i);
  return dflt;
}

std::string OpContext::String(std::string_view name, std::string dflt) const {
  const Attribute* a = FindAttr(op_, name);
  if (auto* s = a ? std::get_if<std::string>(a) : nullptr) return *s;
  return dflt;
}

std::optional<std::vector<int64_t>> OpContext::Ints(std::string_view name) const {
  const Attribute* a = FindAttr(op_, name);
  if (!a) return std::nullopt;
  if (auto* v = std::get_if<std::vector<int64_t>>(a)) return *v;
  if (auto* i = std::get_if<int64_t>(a)) return std::vector<int64_t>{*i};
  return std::nullopt;
}

std::optional<std::vector<double>> OpContext::Floats(std::string_view name) const {
  const Attribute* a = FindAttr(op_, name);
  if (!a) return std::nullopt;
  if (auto* v = std::get_if<std::vector<double>>(a)) return *v;
  if (auto* d = std::get_if<double>(a)) return std::vector<double>{*d};
  if (auto* v = std::get_if<std::vector<int64_t>>(a)) return std::vector<double>(v->begin(), v->end());
  return std::nullopt;
}

std::optional<std::vector<int64_t>> OpContext::IntsOrInput(std::string_view name, size_t input) const {
  if (has(name)) return Ints(name);
  return in_static_ints(input);
}

onnx::NodeProto* OpContext::Node(const std::string& type, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, const std::string& suffix) {
  auto* n = ex_.proto().add_node();
  n->set_op_type(type);
  const bool first = !named_ && suffix.empty();
  named_ = named_ || first;
  n->set_name(ex_.FreshNodeName(first ? op_.name : op_.name + "/" + (suffix.empty() ? type : suffix), first));
  // Trailing absent optional inputs are dropped; inner ones stay "".
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  for (auto& i : inputs) n->add_input(std::move(i));
  for (auto& o : outputs) n->add_output(std::move(o));
  if (!op_.source_op_type.empty() || !op_.source_name.empty())
    n->set_doc_string(fmt::format("qairt {} from {} '{}'", op_.type, op_.source_op_type, op_.source_name));
  return n;
}

std::string OpContext::Temp(const std::string& suffix) { return ex_.FreshName(op_.name + "/" + suffix); }

std::string OpContext::Int64s(const std::string& suffix, const std::vector<int64_t>& values, bool scalar) {
  std::vector<int64_t> dims;
  if (!scalar) dims.push_back(static_cast<int64_t>(values.size()));
  return ex_.AddInitializer(op_.name + "/" + suffix, onnx::TensorProto::INT64, dims, values.data(),
                            values.size() * sizeof(int64_t));
}

std::string OpContext::Floats1d(const std::string& suffix, const std::vector<float>& values, std::vector<int64_t> dims) {
  if (dims.empty()) dims.push_back(static_cast<int64_t>(values.size()));
  return ex_.AddInitializer(op_.name + "/" + suffix, onnx::TensorProto::FLOAT, dims, values.data(),
                            values.size() * sizeof(float));
}

Result<std::string> OpContext::Scalar(const std::string& suffix, DType dtype, double v) {
  std::vector<uint8_t> bytes;
  auto put = [&](auto x) {
    bytes.resize(sizeof(x));
    std::memcpy(bytes.data(), &x, sizeof(x));
  };
  switch (dtype) {
    case DType::kFloat32: put(static_cast<float>(v)); break;
    case DType::kFloat64: put(v); break;
    case DType::kFloat16: put(kernels::F32ToF16Bits(static_cast<float>(v))); break;
    case DType::kInt64: put(static_cast<int64_t>(v)); break;
    case DType::kInt32: put(static_cast<int32_t>(v)); break;
    case DType::kInt16: put(static_cast<int16_t>(v)); break;
    case DType::kInt8: put(static_cast<int8_t>(v)); break;
    case DType::kUInt8: put(static_cast<uint8_t>(v)); break;
    case DType::kUInt16: put(static_cast<uint16_t>(v)); break;
    case DType::kUInt32: put(static_cast<uint32_t>(v)); break;
    case DType::kUInt64: put(static_cast<uint64_t>(v)); break;
    default: return Fail("a {} scalar is not supported", DTypeName(dtype));
  }
  return ex_.AddInitializer(op_.name + "/" + suffix, OnnxFromDType(dtype), {}, bytes.data(), bytes.size());
}

// ---------------------------------------------------------------------------
// Exporter
// ---------------------------------------------------------------------------

Exporter::Exporter(const Graph& graph, const OnnxExportOptions& options, ExternalDataSink* sink)
    : graph_(graph), options_(options), sink_(sink) {
  RegisterNnExports(&table_);
  RegisterElementwiseExports(&table_);
  RegisterShapeExports(&table_);
  value_names_.resize(graph_.tensor_count());
  for (TensorId id = 0; id < graph_.tensor_count(); ++id) {
    value_names_[id] = graph_.tensor(id).name;
    used_.insert(graph_.tensor(id).name);
  }
  for (OpId id = 0; id < graph_.op_count(); ++id) used_nodes_.insert(graph_.op(id).name);
}

const std::string& Exporter::ValueName(TensorId id) const { return value_names_[id]; }

DType Exporter::ValueDType(TensorId id) const {
  const DType d = graph_.tensor(id).dtype;
  return IsFixedPoint(d) ? DType::kFloat32 : d;
}

std::string Exporter::FreshName(const std::string& base) {
  if (used_.insert(base).second) return base;
  for (size_t n = 1;; ++n) {
    std::string candidate = fmt::format("{}__{}", base, n);
    if (used_.insert(candidate).second) return candidate;
  }
}

std::string Exporter::FreshNodeName(const std::string& base, bool own) {
  // An IR op's name is reserved for that op's first node.
  if ((own || !used_nodes_.count(base)) && node_names_.insert(base).second) return base;
  for (size_t n = 1;; ++n) {
    std::string candidate = fmt::format("{}__{}", base, n);
    if (!used_nodes_.count(candidate) && node_names_.insert(candidate).second) return candidate;
  }
}

std::string Exporter::AddInitializer(const std::string& base, int32_t elem_type, const std::vector<int64_t>& dims,
                                     const void* bytes, size_t size) {
  const std::string name = FreshName(base);
  auto* t = proto_->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (int64_t d : dims) t->add_dims(d);
  SetData(t, bytes, size);
  return name;
}

void Exporter::SetData(onnx::TensorProto* t, const void* bytes, size_t size) {
  if (!sink_ || size < sink_->threshold || size == 0 || !sink_->error.ok()) {
    t->set_raw_data(std::string(static_cast<const char*>(bytes), size));
    return;
  }
  // 64-byte aligned offsets: a runtime that maps the file reads aligned rows.
  const uint64_t offset = (sink_->end + 63) & ~uint64_t{63};
  const char* p = static_cast<const char*>(bytes);
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::pwrite(sink_->fd, p + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      sink_->error = Error(StatusCode::kIoError, "external data '{}', tensor '{}': {}", sink_->location, t->name(),
                           std::strerror(n == 0 ? EIO : errno));
      return;
    }
    done += static_cast<size_t>(n);
  }
  sink_->end = offset + size;
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto entry = [t](const char* key, const std::string& value) {
    auto* e = t->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  entry("location", sink_->location);
  entry("offset", std::to_string(offset));
  entry("length", std::to_string(size));
}

Status Exporter::WriteInputs() {
  for (TensorId id : graph_.inputs()) {
    const Tensor& t = graph_.tensor(id);
    auto* vi = proto_->add_input();
    vi->set_name(t.name);
    if (!FillType(t.dtype, t.shape, vi->mutable_type()))
      return Error(StatusCode::kUnsupported, "graph input '{}': dtype {} has no ONNX element type", t.name,
                   DTypeName(t.dtype));
    if (IsFixedPoint(t.dtype)) {
      QAIRT_RETURN_IF_ERROR(WriteDequantized(id));
    } else if (SimOf(id) != Sim::kNone) {
      const std::string result = SimulatedName(id);
      QAIRT_RETURN_IF_ERROR(WriteSimulation(id, t.name, result));
      value_names_[id] = result;
    }
  }
  return Status::Ok();
}

Status Exporter::WriteStatic(TensorId id) {
  const Tensor& t = graph_.tensor(id);
  if (IsFixedPoint(t.dtype)) return WriteDequantized(id);
  const int32_t elem = OnnxFromDType(t.dtype);
  if (elem == 0)
    return Error(StatusCode::kUnsupported, "static tensor '{}': dtype {} has no ONNX element type", t.name,
                 DTypeName(t.dtype));
  if (!t.shape.fully_known())
    return Error(StatusCode::kInvalidArgument, "static tensor '{}' has a non-static shape {}", t.name,
                 t.shape.ToString());
  const auto count = t.shape.element_count();
  const auto bytes = count ? StorageBytes(t.dtype, *count) : std::nullopt;
  if (!t.data || !bytes || t.data->size() != *bytes)
    return Error(StatusCode::kInvalidArgument, "static tensor '{}': {} bytes of data for {} {} ({} expected)", t.name,
                 t.data ? t.data->size() : 0, DTypeName(t.dtype), t.shape.ToString(), bytes.value_or(0));
  auto* init = proto_->add_initializer();
  init->set_name(t.name);
  init->set_data_type(elem);
  for (int64_t d : t.shape.extents()) init->add_dims(d);
  SetData(init, t.data->data(), t.data->size());
  if (SimOf(id) != Sim::kNone) {  // a float constant carrying an encoding
    const std::string result = SimulatedName(id);
    QAIRT_RETURN_IF_ERROR(WriteSimulation(id, t.name, result));
    value_names_[id] = result;
  }
  return Status::Ok();
}

Status Exporter::WriteStatics() {
  for (TensorId id = 0; id < graph_.tensor_count(); ++id) {
    const Tensor& t = graph_.tensor(id);
    if (t.kind != TensorKind::kStatic || (t.consumers.empty() && !t.is_output)) continue;
    QAIRT_RETURN_IF_ERROR(WriteStatic(id));
  }
  return Status::Ok();
}

Status Exporter::WriteOutputs() {
  for (TensorId id : graph_.outputs()) {
    const Tensor& t = graph_.tensor(id);
    auto* vi = proto_->add_output();
    vi->set_name(ValueName(id));
    if (!FillType(ValueDType(id), t.shape, vi->mutable_type()))
      return Error(StatusCode::kUnsupported, "graph output '{}': dtype {} has no ONNX element type", t.name,
                   DTypeName(t.dtype));
  }
  return Status::Ok();
}

Status Exporter::WriteValueInfo() {
  for (TensorId id = 0; id < graph_.tensor_count(); ++id) {
    const Tensor& t = graph_.tensor(id);
    if (t.kind != TensorKind::kActivation || t.is_output || t.producer == kInvalidId) continue;
    if (t.dtype == DType::kUndefined) continue;
    onnx::ValueInfoProto vi;
    vi.set_name(ValueName(id));
    if (FillType(ValueDType(id), t.shape, vi.mutable_type())) *proto_->add_value_info() = std::move(vi);
  }
  return Status::Ok();
}

// The op's nodes, then each simulated output's Q-DQ pair (or fp16 Cast pair):
// the op writes a float value, consumers read the pair's result. A graph
// output keeps its name on the pair's last node.
Status Exporter::WriteOp(OpId id) {
  const Op& op = graph_.op(id);
  auto it = table_.find(op.type);
  if (it == table_.end())
    return Error(StatusCode::kUnsupported, "op '{}' ({}): no ONNX export for this op type", op.name, op.type);
  for (TensorId out : op.outputs)
    if (SimOf(out) != Sim::kNone && graph_.tensor(out).is_output)
      value_names_[out] = FreshName(graph_.tensor(out).name + "_unquantized");
  OpContext ctx(*this, op);
  QAIRT_RETURN_IF_ERROR(it->second(ctx));
  for (TensorId out : op.outputs) {
    if (SimOf(out) == Sim::kNone) continue;
    const Tensor& t = graph_.tensor(out);
    const std::string result = t.is_output ? t.name : SimulatedName(out);
    Status s = WriteSimulation(out, value_names_[out], result);
    if (!s.ok()) return Status(s.code(), fmt::format("op '{}' ({}): {}", op.name, op.type, s.message()));
    value_names_[out] = result;
  }
  return Status::Ok();
}

namespace {
int64_t IrVersionFor(int64_t opset) {
  if (opset <= 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  return 10;
}
}  // namespace

Status Exporter::Run(onnx::ModelProto* model) {
  if (options_.opset != 0 && (options_.opset < kOnnxExportMinOpset || options_.opset > kOnnxExportMaxOpset))
    return InvalidArgument("ONNX export: opset {} is not supported ({} to {})", options_.opset, kOnnxExportMinOpset,
                           kOnnxExportMaxOpset);
  // Only a graph that validates can be written as a runnable model.
  const Diagnostics diags = graph_.Validate();
  std::string errors;
  size_t count = 0;
  for (const Diagnostic& d : diags) {
    if (d.severity != Severity::kError) continue;
    if (++count <= 20) errors += "\n  " + d.message;
  }
  if (count)
    return Error(StatusCode::kValidationFailed, "ONNX export of graph '{}': the graph does not validate ({} errors):{}",
                 graph_.name(), count, errors);
  auto order = graph_.TopologicalOrder();
  if (!order.ok()) return order.status();
  QAIRT_RETURN_IF_ERROR(ResolveOpset());

  model->set_ir_version(IrVersionFor(opset_));
  model->set_producer_name(options_.producer_name);
  model->set_producer_version(options_.producer_version);
  auto* opset = model->add_opset_import();
  opset->set_domain("");
  opset->set_version(opset_);
  if (options_.qdq_ms_domain) {
    auto* ms = model->add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
  }
  for (const auto& [key, value] : options_.metadata) {
    auto* p = model->add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  proto_ = model->mutable_graph();
  proto_->set_name(options_.graph_name.empty() ? graph_.name() : options_.graph_name);

  QAIRT_RETURN_IF_ERROR(WriteInputs());
  QAIRT_RETURN_IF_ERROR(WriteStatics());
  for (OpId id : order.value()) QAIRT_RETURN_IF_ERROR(WriteOp(id));
  QAIRT_RETURN_IF_ERROR(WriteOutputs());
  if (options_.value_info) QAIRT_RETURN_IF_ERROR(WriteValueInfo());
  if (sink_ && !sink_->error.ok()) return sink_->error;
  return Status::Ok();
}

}  // namespace qairt::onnx_export

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

namespace qairt {

namespace {

Status BuildModel(const Graph& graph, const OnnxExportOptions& options, onnx::ModelProto* model,
                  onnx_export::ExternalDataSink* sink = nullptr) {
  onnx_export::Exporter exporter(graph, options, sink);
  QAIRT_RETURN_IF_ERROR(exporter.Run(model));
  const size_t size = model->ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX))
    return Error(StatusCode::kUnsupported,
                 "ONNX export of graph '{}': the model is {} bytes, over protobuf's 2 GiB limit; write it to a file "
                 "with external data (ExportOnnxFile, options.external_data)", graph.name(), size);
  return Status::Ok();
}

uint64_t StaticBytes(const Graph& graph) {
  uint64_t total = 0;
  for (size_t i = 0; i < graph.tensor_count(); ++i) {
    const Tensor& t = graph.tensor(static_cast<TensorId>(i));
    if (t.data) total += t.data->size();
  }
  return total;
}

}  // namespace

Status ExportOnnx(const Graph& graph, const OnnxExportOptions& options, std::string* out_bytes) {
  if (!out_bytes) return InvalidArgument("ONNX export: out_bytes is NULL");
  if (options.external_data)
    return InvalidArgument("ONNX export of graph '{}': external data needs a file (ExportOnnxFile)", graph.name());
  onnx::ModelProto model;
  QAIRT_RETURN_IF_ERROR(BuildModel(graph, options, &model));
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return Error(StatusCode::kInternal, "ONNX export of graph '{}': protobuf serialization failed", graph.name());
  *out_bytes = std::move(bytes);
  return Status::Ok();
}

Status ExportOnnxFile(const Graph& graph, const OnnxExportOptions& options, const std::string& path,
                      bool* wrote_external_data) {
  if (wrote_external_data) *wrote_external_data = false;
  if (path.empty()) return InvalidArgument("ONNX export: the output path is empty");
  auto serialize_into = [&](const onnx::ModelProto& model) {
    return [&model](int fd) {
      errno = 0;
      if (!model.SerializeToFileDescriptor(fd))
        return Error(StatusCode::kIoError, "serialization failed: {}", errno ? std::strerror(errno) : "protobuf error");
      return Status::Ok();
    };
  };
  const bool external = options.external_data || StaticBytes(graph) > kOnnxAutoExternalDataBytes;
  if (!external) {
    // Build the whole model before touching the file system; serialize
    // straight into the temporary file (no second copy of the weights).
    onnx::ModelProto model;
    Status s = BuildModel(graph, options, &model);
    if (!s.ok()) return Status(s.code(), fmt::format("cannot write '{}': {}", path, s.message()));
    return WriteFileAtomicallyWith(path, "ONNX model", serialize_into(model));
  }

  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string model_name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string data_name = options.external_data_name.empty() ? model_name + ".data" : options.external_data_name;
  if (data_name.empty() || data_name == "." || data_name == ".." || data_name.find('/') != std::string::npos ||
      data_name == model_name)
    return InvalidArgument("cannot write '{}': external data file name '{}' must be a plain file name other than the "
                           "model's", path, data_name);
  // Weights stream into the data file while the model is built; the model
  // then goes to its own temporary; both are renamed into place only when
  // both are complete, the data first (a reader of the new model finds its data).
  Result<AtomicFile> data = AtomicFile::Create(folder + data_name, "ONNX external data");
  if (!data.ok()) return data.status();
  onnx_export::ExternalDataSink sink;
  sink.fd = data.value().fd();
  sink.location = data_name;
  sink.threshold = options.external_data_threshold;
  onnx::ModelProto model;
  Status s = BuildModel(graph, options, &model, &sink);
  if (!s.ok()) return Status(s.code(), fmt::format("cannot write '{}': {}", path, s.message()));
  Result<AtomicFile> file = AtomicFile::Create(path, "ONNX model");
  if (!file.ok()) return file.status();
  if (Status w = serialize_into(model)(file.value().fd()); !w.ok())
    return Error(w.code(), "cannot write the ONNX model '{}': {}", path, w.message());
  if (sink.end == 0) return file.value().Commit();  // nothing reached the threshold: no data file
  QAIRT_RETURN_IF_ERROR(AtomicFile::CommitInOrder({&data.value(), &file.value()}));
  if (wrote_external_data) *wrote_external_data = true;
  return Status::Ok();
}

}  // namespace qairt
