#include "onnx/importer.h"

#include <google/protobuf/io/coded_stream.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <new>
#include <deque>

#include "exec/kernel.h"
#include "ir/op_registry.h"
#include "kernels/common/scalar.h"

namespace qairt::onnx_import {

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

std::shared_ptr<const StaticData> BytesOf(const void* p, size_t n) { return StaticData::Copy(p, n); }

namespace {

template <typename T>
T Load(const uint8_t* p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

std::vector<float> ReadAsFloats(const Value& v) {
  std::vector<float> out;
  if (!v.data) return out;
  const auto count = v.shape.element_count().value_or(0);
  const uint8_t* p = v.data->data();
  out.resize(count);
  if (v.dtype == DType::kFloat32) {  // the common case: one copy
    if (count) std::memcpy(out.data(), p, count * sizeof(float));
    return out;
  }
  for (size_t i = 0; i < count; ++i) {
    switch (v.dtype) {
      case DType::kFloat32: out[i] = Load<float>(p, i); break;
      case DType::kFloat64: out[i] = static_cast<float>(Load<double>(p, i)); break;
      case DType::kFloat16: out[i] = exec::HalfBitsToFloat(Load<uint16_t>(p, i)); break;
      case DType::kBFloat16: out[i] = kernels::BF16BitsToF32(Load<uint16_t>(p, i)); break;
      case DType::kInt64: out[i] = static_cast<float>(Load<int64_t>(p, i)); break;
      case DType::kInt32: case DType::kSFixed32: out[i] = static_cast<float>(Load<int32_t>(p, i)); break;
      case DType::kUInt32: case DType::kUFixed32: out[i] = static_cast<float>(Load<uint32_t>(p, i)); break;
      case DType::kInt16: case DType::kSFixed16: out[i] = Load<int16_t>(p, i); break;
      case DType::kUInt16: case DType::kUFixed16: out[i] = Load<uint16_t>(p, i); break;
      case DType::kInt8: case DType::kSFixed8: out[i] = Load<int8_t>(p, i); break;
      case DType::kUInt8: case DType::kUFixed8: case DType::kBool: out[i] = Load<uint8_t>(p, i); break;
      case DType::kInt4: case DType::kSFixed4: {
        const int nib = (p[i / 2] >> ((i % 2) * 4)) & 0xF;
        out[i] = static_cast<float>(nib >= 8 ? nib - 16 : nib);
        break;
      }
      case DType::kUInt4: case DType::kUFixed4: out[i] = static_cast<float>((p[i / 2] >> ((i % 2) * 4)) & 0xF); break;
      default: return {};
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// NodeContext
// ---------------------------------------------------------------------------

int64_t NodeContext::opset() const { return imp_.opset(); }

const Value& NodeContext::in(size_t i) const {
  // An input the node does not have (a Conv with only X: fuzz_onnx found the
  // lowering reading inputs[1] past the end) reads as an unknown value, so
  // the lowering's own checks report it naming the input.
  static const Value kAbsent{};
  if (!has_input(i)) return kAbsent;
  const Value* v = imp_.Find(node_.input(static_cast<int>(i)));
  return v ? *v : kAbsent;
}

const std::string& NodeContext::output_name(size_t i) const {
  static const std::string kNone;
  return i < num_outputs() ? node_.output(static_cast<int>(i)) : kNone;
}

Status NodeContext::RequireInputs(size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!has_input(i))
      return Fail(fmt::format("inputs[{}]", i), "input {} is required but {}", i,
                  i < num_inputs() ? "its name is empty" : fmt::format("the node has only {} inputs", num_inputs()));
  return Status::Ok();
}

TensorId NodeContext::in_tensor(size_t i) {
  if (!has_input(i)) return kInvalidId;
  return imp_.Materialize(node_.input(static_cast<int>(i)));
}

std::optional<std::vector<int64_t>> NodeContext::in_ints(size_t i) const {
  if (!in_is_const(i)) return std::nullopt;
  const Value& v = in(i);
  const auto n = v.shape.element_count();
  if (!n || *n > (uint64_t{1} << 24)) return std::nullopt;
  std::vector<int64_t> out(*n);
  const uint8_t* p = v.data->data();
  for (size_t k = 0; k < *n; ++k) {
    switch (v.dtype) {
      case DType::kInt64: out[k] = Load<int64_t>(p, k); break;
      case DType::kInt32: out[k] = Load<int32_t>(p, k); break;
      case DType::kInt16: out[k] = Load<int16_t>(p, k); break;
      case DType::kInt8: out[k] = Load<int8_t>(p, k); break;
      case DType::kUInt8: case DType::kBool: out[k] = Load<uint8_t>(p, k); break;
      case DType::kUInt16: out[k] = Load<uint16_t>(p, k); break;
      case DType::kUInt32: out[k] = Load<uint32_t>(p, k); break;
      case DType::kUInt64: out[k] = static_cast<int64_t>(Load<uint64_t>(p, k)); break;
      default: return std::nullopt;
    }
  }
  return out;
}

std::optional<std::vector<double>> NodeContext::in_floats(size_t i) const {
  if (!in_is_const(i)) return std::nullopt;
  const auto n = in(i).shape.element_count();
  if (!n || *n > (uint64_t{1} << 26)) return std::nullopt;
  if (IsInteger(in(i).dtype) && in(i).dtype != DType::kInt4 && in(i).dtype != DType::kUInt4) {
    auto ints = in_ints(i);
    if (!ints) return std::nullopt;
    return std::vector<double>(ints->begin(), ints->end());
  }
  auto f = ReadAsFloats(in(i));
  if (f.size() != *n) return std::nullopt;
  return std::vector<double>(f.begin(), f.end());
}

const onnx::AttributeProto* NodeContext::attr(std::string_view name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t NodeContext::Int(std::string_view name, int64_t dflt) const {
  const auto* a = attr(name);
  return a && a->type() == onnx::AttributeProto::INT ? a->i() : dflt;
}

double NodeContext::Float(std::string_view name, double dflt) const {
  const auto* a = attr(name);
  if (!a) return dflt;
  if (a->type() == onnx::AttributeProto::FLOAT) return a->f();
  if (a->type() == onnx::AttributeProto::INT) return static_cast<double>(a->i());
  return dflt;
}

std::string NodeContext::String(std::string_view name, std::string dflt) const {
  const auto* a = attr(name);
  return a && a->type() == onnx::AttributeProto::STRING ? a->s() : dflt;
}

std::vector<int64_t> NodeContext::Ints(std::string_view name, std::vector<int64_t> dflt) const {
  const auto* a = attr(name);
  if (!a) return dflt;
  if (a->type() == onnx::AttributeProto::INTS) return {a->ints().begin(), a->ints().end()};
  if (a->type() == onnx::AttributeProto::INT) return {a->i()};
  return dflt;
}

std::vector<double> NodeContext::Floats(std::string_view name, std::vector<double> dflt) const {
  const auto* a = attr(name);
  if (!a) return dflt;
  if (a->type() == onnx::AttributeProto::FLOATS) return {a->floats().begin(), a->floats().end()};
  if (a->type() == onnx::AttributeProto::FLOAT) return {a->f()};
  return dflt;
}

Result<std::vector<TensorId>> NodeContext::Emit(const std::string& qnn_type, std::vector<TensorId> inputs,
                                                AttributeMap attrs, std::optional<std::vector<size_t>> outputs) {
  std::vector<size_t> outs;
  if (outputs) {
    outs = *outputs;
  } else {
    for (size_t i = 0; i < num_outputs(); ++i) outs.push_back(i);
  }
  OpSpec spec;
  spec.type = qnn_type;
  spec.name = imp_.UniqueName(name_);
  spec.inputs = std::move(inputs);
  spec.attrs = std::move(attrs);
  spec.source_name = node_.name();
  spec.source_op_type = node_.op_type();
  std::vector<std::string> out_names;
  for (size_t i : outs) {
    // Absent optional outputs still need a slot: give them a private name.
    const std::string n = has_output(i) ? output_name(i) : fmt::format("{}__unused{}", name_, i);
    auto t = imp_.graph().AddTensor(imp_.UniqueName(n));
    if (!t.ok()) return t.status();
    spec.outputs.push_back(t.value());
    out_names.push_back(n);
  }
  auto op = imp_.graph().AddOp(std::move(spec));
  if (!op.ok()) return op.status();
  std::vector<TensorId> result = imp_.graph().op(op.value()).outputs;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!has_output(outs[k])) continue;
    Value v;
    v.tensor = result[k];
    v.dtype = imp_.graph().tensor(result[k]).dtype;
    v.shape = imp_.graph().tensor(result[k]).shape;
    imp_.Bind(output_name(outs[k]), std::move(v));
  }
  return result;
}

Result<TensorId> NodeContext::EmitTemp(const std::string& qnn_type, const std::string& suffix,
                                       std::vector<TensorId> inputs, AttributeMap attrs) {
  OpSpec spec;
  spec.type = qnn_type;
  spec.name = imp_.UniqueName(name_ + "/" + suffix);
  spec.inputs = std::move(inputs);
  spec.attrs = std::move(attrs);
  spec.source_name = node_.name();
  spec.source_op_type = node_.op_type();
  auto t = imp_.graph().AddTensor(imp_.UniqueName(name_ + "/" + suffix + "_out"));
  if (!t.ok()) return t.status();
  spec.outputs.push_back(t.value());
  auto op = imp_.graph().AddOp(std::move(spec));
  if (!op.ok()) return op.status();
  return t.value();
}

Result<TensorId> NodeContext::Constant(const std::string& suffix, DType dtype, Shape shape,
                                       std::shared_ptr<const StaticData> data) {
  return imp_.graph().AddConstant(imp_.UniqueName(name_ + "/" + suffix), dtype, std::move(shape), std::move(data));
}

TensorId NodeContext::ScalarFloat(const std::string& suffix, float v) {
  auto t = Constant(suffix, DType::kFloat32, Shape(std::vector<Dim>{}), BytesOf(&v, sizeof v));
  return t.ok() ? t.value() : kInvalidId;
}

void NodeContext::SetConst(size_t i, DType dtype, Shape shape, std::shared_ptr<const StaticData> data) {
  if (!has_output(i)) return;
  Value v;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.data = std::move(data);
  v.ir_name = output_name(i);
  imp_.Bind(output_name(i), std::move(v));
}

void NodeContext::Alias(size_t i, const Value& v) {
  if (has_output(i)) imp_.Bind(output_name(i), v);
}

Status NodeContext::Report(std::string field, std::string message) {
  std::string text = fmt::format("node '{}' ({}): {}", name_, node_.op_type(), message);
  imp_.AddDiagnostic(Severity::kError, DiagKind::kAttribute, field.empty() ? name_ : name_ + "." + field, text);
  return Status(StatusCode::kInvalidArgument, std::move(text));
}

void NodeContext::WarnText(std::string message) {
  imp_.AddDiagnostic(Severity::kWarning, DiagKind::kAttribute, name_,
                     fmt::format("node '{}' ({}): {}", name_, node_.op_type(), message));
}

// ---------------------------------------------------------------------------
// Importer
// ---------------------------------------------------------------------------

Importer::Importer(std::shared_ptr<const onnx::ModelProto> model, std::string model_dir,
                   const ImportOptions& options, ImportReport* report)
    : model_(std::move(model)),
      model_dir_(std::move(model_dir)),
      options_(options),
      report_(report),
      graph_(model_->graph().name().empty() ? "model" : model_->graph().name()) {
  RegisterNnLowerings(&lowerings_);
  RegisterElementwiseLowerings(&lowerings_);
  RegisterShapeLowerings(&lowerings_);
  RegisterQdqLowerings(&lowerings_);
}

void Importer::AddDiagnostic(Severity severity, DiagKind kind, std::string field, std::string message) {
  report_->diagnostics.push_back(
      {.severity = severity, .kind = kind, .field = std::move(field), .message = std::move(message)});
}

Value* Importer::Find(const std::string& name) {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

void Importer::Bind(const std::string& name, Value v) { values_[name] = std::move(v); }

std::string Importer::UniqueName(const std::string& base) {
  // The first use keeps the ONNX name; later ones get a suffix.
  auto& n = name_counter_[base];
  name_log_.emplace_back(base, n);
  if (n++ == 0 && !graph_.FindTensor(base) && !graph_.FindOp(base)) return base;
  for (;;) {
    std::string candidate = fmt::format("{}__{}", base, n++);
    if (!graph_.FindTensor(candidate) && !graph_.FindOp(candidate)) return candidate;
  }
}

void Importer::UndoNames() {
  for (size_t k = name_log_.size(); k-- > 0;) {
    const auto& [base, before] = name_log_[k];
    if (before == 0)
      name_counter_.erase(base);
    else
      name_counter_[base] = before;
  }
  name_log_.clear();
}

TensorId Importer::Materialize(const std::string& name) {
  Value* v = Find(name);
  if (!v) return kInvalidId;
  if (v->tensor != kInvalidId) return v->tensor;
  if (!v->is_const()) return kInvalidId;
  DType dtype = v->dtype;
  std::shared_ptr<const StaticData> data = v->data;
  if (dtype == DType::kInt64 && options_.int64_to_int32 && v->shape.fully_known()) {
    // The Value keeps its int64 bytes (shape arithmetic reads them); the IR
    // tensor is int32, saturated (an end index of INT64_MAX still means "to
    // the end").
    const size_t n = data->size() / 8;
    std::vector<int32_t> narrow(n);
    for (size_t k = 0; k < n; ++k) {
      int64_t x;
      std::memcpy(&x, data->data() + 8 * k, 8);
      narrow[k] = static_cast<int32_t>(std::clamp<int64_t>(x, INT32_MIN, INT32_MAX));
    }
    dtype = DType::kInt32;
    data = VectorData(narrow);
  }
  auto t = graph_.AddConstant(UniqueName(v->ir_name.empty() ? name : v->ir_name), dtype, v->shape, data);
  if (!t.ok()) {
    AddDiagnostic(Severity::kError, DiagKind::kStaticData, name, t.status().message());
    return kInvalidId;
  }
  v->tensor = t.value();
  if (v->encoding) {
    Status s = graph_.SetEncoding(v->tensor, *v->encoding);
    if (!s.ok()) AddDiagnostic(Severity::kError, DiagKind::kInvalidEncoding, name, s.message());
  }
  return v->tensor;
}

bool Importer::IsGraphOutput(const std::string& name) const {
  for (const auto& o : model_->graph().output())
    if (o.name() == name) return true;
  return false;
}

size_t Importer::ConsumerCount(const std::string& name) const {
  auto it = consumers_.find(name);
  return it == consumers_.end() ? 0 : it->second;
}

const onnx::NodeProto* Importer::SingleConsumer(const std::string& name) const {
  if (ConsumerCount(name) != 1) return nullptr;
  auto it = single_consumer_.find(name);
  return it == single_consumer_.end() ? nullptr : it->second;
}

Status Importer::LoadInitializers() {
  std::set<std::string> seen;
  auto keepalive = std::static_pointer_cast<const void>(model_);
  for (const auto& init : model_->graph().initializer()) {
    if (init.name().empty()) {
      AddDiagnostic(Severity::kError, DiagKind::kStaticData, "initializer", "an initializer has no name");
      continue;
    }
    if (!seen.insert(init.name()).second) {
      AddDiagnostic(Severity::kError, DiagKind::kDuplicateTensorName, init.name(),
                    fmt::format("initializer '{}' is defined more than once", init.name()));
      continue;
    }
    auto decoded = DecodeTensor(init, keepalive, model_dir_, init.name());
    if (!decoded.ok()) {
      AddDiagnostic(Severity::kError, DiagKind::kStaticData, init.name(), decoded.status().message());
      continue;
    }
    Value v;
    v.dtype = decoded->dtype;
    v.shape = decoded->shape;
    v.data = decoded->data;
    v.ir_name = init.name();
    Bind(init.name(), std::move(v));
  }
  if (model_->graph().sparse_initializer_size() > 0)
    AddDiagnostic(Severity::kError, DiagKind::kStaticData, "sparse_initializer",
                  "sparse initializers are not supported");
  return Status::Ok();
}

Status Importer::LoadInputs() {
  std::set<std::string> matched_dims;
  std::set<std::string> input_symbols;  // symbolic dims of the graph inputs
  for (const auto& input : model_->graph().input()) {
    if (Find(input.name())) continue;  // IR < 4: initializers are also listed as inputs
    const std::string& name = input.name();
    if (!input.type().has_tensor_type()) {
      AddDiagnostic(Severity::kError, DiagKind::kUnknownOpType, name,
                    fmt::format("graph input '{}' is not a tensor (sequences/maps are not supported)", name));
      continue;
    }
    const auto& tt = input.type().tensor_type();
    auto dtype = DTypeFromOnnx(tt.elem_type());
    if (!dtype) {
      AddDiagnostic(Severity::kError, DiagKind::kDTypeMismatch, name,
                    fmt::format("graph input '{}' has unsupported element type {}", name, OnnxTypeName(tt.elem_type())));
      continue;
    }
    Shape shape;
    if (tt.has_shape()) {
      std::vector<Dim> dims;
      for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() >= 0) {
          dims.emplace_back(d.dim_value());
        } else if (d.has_dim_param() && !d.dim_param().empty()) {
          input_symbols.insert(d.dim_param());
          auto it = options_.define_symbols.find(d.dim_param());
          dims.push_back(it != options_.define_symbols.end() ? Dim(it->second) : Dim::Symbolic(d.dim_param()));
        } else {
          dims.emplace_back();
        }
      }
      shape = Shape(std::move(dims));
    }
    if (auto it = options_.input_dims.find(name); it != options_.input_dims.end()) {
      matched_dims.insert(name);
      if (shape.rank_known() && shape.rank() != it->second.size()) {
        AddDiagnostic(Severity::kError, DiagKind::kShapeMismatch, name,
                      fmt::format("--input_dim {}: {} dims given but the input has rank {} {}", name,
                                  it->second.size(), shape.rank(), shape.ToString()));
      } else {
        Shape given = Shape::FromExtents(it->second);
        for (size_t i = 0; shape.rank_known() && i < shape.rank(); ++i)
          if (shape[i].known() && given[i].known() && shape[i].value != given[i].value)
            AddDiagnostic(Severity::kWarning, DiagKind::kShapeMismatch, name,
                          fmt::format("--input_dim {}: dim {} overridden from {} to {}", name, i, shape[i].value,
                                      given[i].value));
        shape = std::move(given);
      }
    }
    if (*dtype == DType::kInt64 && options_.int64_to_int32) dtype = DType::kInt32;
    auto id = graph_.AddInput(name, *dtype, shape);
    if (!id.ok()) {
      AddDiagnostic(Severity::kError, DiagKind::kAttribute, name, id.status().message());
      continue;
    }
    Value v;
    v.tensor = id.value();
    v.dtype = *dtype;
    v.shape = shape;
    Bind(name, std::move(v));
  }
  // A symbol the inputs do not have changes nothing: say so rather than
  // ignore it (a misspelt symbol would otherwise leave its dim dynamic).
  for (const auto& [symbol, value] : options_.define_symbols) {
    if (input_symbols.count(symbol)) continue;
    std::string known;
    for (const std::string& s : input_symbols) known += (known.empty() ? "" : ", ") + s;
    AddDiagnostic(Severity::kWarning, DiagKind::kAttribute, symbol,
                  fmt::format("--define_symbol {} {}: no graph input has the symbolic dim '{}' ({})", symbol, value,
                              symbol, known.empty() ? "the inputs have none" : "theirs: " + known));
  }
  for (const auto& [name, dims] : options_.input_dims)
    if (!matched_dims.count(name))
      AddDiagnostic(Severity::kError, DiagKind::kAttribute, name,
                    fmt::format("--input_dim names '{}', which is not a graph input", name));
  return Status::Ok();
}

Result<std::vector<const onnx::NodeProto*>> Importer::OrderNodes() {
  const auto& nodes = model_->graph().node();
  std::unordered_map<std::string, int> producer;
  bool ok = true;
  for (int i = 0; i < nodes.size(); ++i) {
    for (const auto& out : nodes[i].output()) {
      if (out.empty()) continue;
      if (Find(out) || !producer.emplace(out, i).second) {
        AddDiagnostic(Severity::kError, DiagKind::kDuplicateTensorName, out,
                      fmt::format("tensor name '{}' is defined more than once (again as output of node '{}')", out,
                                  nodes[i].name()));
        ok = false;
      }
    }
  }
  std::vector<int> indegree(static_cast<size_t>(nodes.size()), 0);
  std::vector<std::vector<int>> users(static_cast<size_t>(nodes.size()));
  for (int i = 0; i < nodes.size(); ++i) {
    for (int k = 0; k < nodes[i].input_size(); ++k) {
      const std::string& in = nodes[i].input(k);
      if (in.empty()) continue;
      ++consumers_[in];
      single_consumer_[in] = &nodes[i];
      auto it = producer.find(in);
      if (it != producer.end()) {
        ++indegree[static_cast<size_t>(i)];
        users[static_cast<size_t>(it->second)].push_back(i);
      } else if (!Find(in)) {
        // Subgraph-capturing ops (If) may read outer names; they are checked when lowered.
        AddDiagnostic(Severity::kError, DiagKind::kDanglingTensor, nodes[i].name(),
                      fmt::format("node '{}' ({}) input {} '{}' is not produced by any node, initializer or graph "
                                  "input", nodes[i].name(), nodes[i].op_type(), k, in));
        ok = false;
      }
    }
  }
  for (const auto& out : model_->graph().output()) ++consumers_[out.name()];  // outputs count as uses
  std::deque<int> ready;
  for (int i = 0; i < nodes.size(); ++i)
    if (indegree[static_cast<size_t>(i)] == 0) ready.push_back(i);
  std::vector<const onnx::NodeProto*> order;
  while (!ready.empty()) {
    const int i = ready.front();
    ready.pop_front();
    order.push_back(&nodes[i]);
    for (int u : users[static_cast<size_t>(i)])
      if (--indegree[static_cast<size_t>(u)] == 0) ready.push_back(u);
  }
  if (order.size() != static_cast<size_t>(nodes.size())) {
    std::string names;
    int listed = 0;
    for (int i = 0; i < nodes.size() && listed < 5; ++i)
      if (indegree[static_cast<size_t>(i)] > 0) names += (listed++ ? ", '" : "'") + nodes[i].name() + "'";
    AddDiagnostic(Severity::kError, DiagKind::kCycle, "graph",
                  fmt::format("the graph has a cycle: {} nodes cannot be ordered, including {}",
                              nodes.size() - static_cast<int>(order.size()), names));
    ok = false;
  }
  if (!ok) return Status(StatusCode::kValidationFailed, "graph structure is invalid");
  return order;
}

// A node whose constants or folded values do not fit in memory (a huge
// ConstantOfShape, an Expand of a constant) is reported by name; the
// allocation failure never reaches the caller as a bare "out of memory".
void Importer::LowerNode(const onnx::NodeProto& node, size_t index) {
  const std::string name = node.name().empty() ? fmt::format("{}_{}", node.op_type(), index) : node.name();
  try {
    LowerNodeUnguarded(node, index, name);
  } catch (const std::bad_alloc&) {
    AddDiagnostic(Severity::kError, DiagKind::kAttribute, name,
                  fmt::format("node '{}' ({}): out of memory while importing it (its constant or folded value needs "
                              "more memory than this process may use; fix the input dimensions with -d/--input_dim "
                              "or --define_symbol)", name, node.op_type()));
  }
}

void Importer::LowerNodeUnguarded(const onnx::NodeProto& node, size_t /*index*/, const std::string& name) {
  const std::string& domain = node.domain();
  ++report_->source_ops[domain.empty() || domain == "ai.onnx" ? node.op_type() : domain + "::" + node.op_type()];
  if (skip_.count(&node)) return;  // consumed by a fusion of an earlier node

  // Inputs produced by a node that failed are missing: skip quietly, the
  // first failure was reported.
  for (const auto& in : node.input())
    if (!in.empty() && !Find(in)) return;

  const bool standard = domain.empty() || domain == "ai.onnx";
  const bool ms_qdq = domain == "com.microsoft" && (node.op_type() == "QuantizeLinear" ||
                                                    node.op_type() == "DequantizeLinear");
  if (!standard && !ms_qdq) {
    report_->unsupported.push_back(fmt::format("node '{}' ({}::{})", name, domain, node.op_type()));
    AddDiagnostic(Severity::kError, DiagKind::kUnknownOpType, name,
                  fmt::format("node '{}': op {} of domain '{}' is not supported (domains: ai.onnx, and com.microsoft "
                              "for QuantizeLinear/DequantizeLinear)", name, node.op_type(), domain));
    return;
  }
  // Every ONNX operator has at least one output; a node without any (a
  // damaged or hand-edited file) computes nothing a lowering could bind.
  if (std::none_of(node.output().begin(), node.output().end(), [](const std::string& o) { return !o.empty(); })) {
    AddDiagnostic(Severity::kError, DiagKind::kAttribute, name,
                  fmt::format("node '{}' ({}): the node has no outputs (every ONNX operator has at least one; "
                              "remove the node or name its output)", name, node.op_type()));
    return;
  }
  NodeContext ctx(*this, node, name);
  if (TryFoldWithoutExecutor(ctx)) {
    ++report_->constants_folded;
    return;
  }
  auto it = lowerings_.find(node.op_type());
  if (it == lowerings_.end()) {
    report_->unsupported.push_back(fmt::format("node '{}' ({})", name, node.op_type()));
    AddDiagnostic(Severity::kError, DiagKind::kUnknownOpType, name,
                  fmt::format("node '{}': op {} is not supported", name, node.op_type()));
    return;
  }
  const bool fold = ShouldFoldByExecution(ctx);
  const Graph::Checkpoint mark = graph_.Mark();
  const size_t consumed = skip_.size();
  name_log_.clear();
  Status s = it->second(ctx);
  // A lowering that also took a later node (a Conv absorbing its
  // BatchNormalization) bound that node's output to an emitted tensor: such
  // a node is not folded, or the binding would outlive the ops taken back.
  if (s.ok() && fold && skip_.size() == consumed && FoldEmitted(ctx, mark)) ++report_->constants_folded;
  name_log_.clear();
  if (!s.ok() && (report_->diagnostics.empty() || report_->diagnostics.back().message != s.message()))
    AddDiagnostic(Severity::kError, DiagKind::kAttribute, name, s.message());
}

Status Importer::MarkOutputs() {
  for (const auto& out : model_->graph().output()) {
    Value* v = Find(out.name());
    if (!v) {
      if (!out.name().empty() && !HasErrors(report_->diagnostics))  // else a consequence of an earlier error
        AddDiagnostic(Severity::kError, DiagKind::kMissingProducer, out.name(),
                      fmt::format("graph output '{}' is not produced by any node", out.name()));
      continue;
    }
    if (v->tensor == kInvalidId && v->is_const()) {
      AddDiagnostic(Severity::kError, DiagKind::kStaticData, out.name(),
                    fmt::format("graph output '{}' is a constant; constant outputs are not supported", out.name()));
      continue;
    }
    if (graph_.tensor(v->tensor).is_output) continue;  // listed twice or aliased
    // An output reached through Identity/Dropout/Q-DQ keeps its ONNX name.
    const Tensor& t = graph_.tensor(v->tensor);
    if (t.name != out.name() && t.kind == TensorKind::kActivation && !graph_.FindTensor(out.name()))
      (void)graph_.RenameTensor(v->tensor, out.name());
    Status s = graph_.MarkOutput(v->tensor);
    if (!s.ok()) AddDiagnostic(Severity::kError, DiagKind::kAttribute, out.name(), s.message());
  }
  return Status::Ok();
}

void Importer::CollectDynamicDims() {
  for (TensorId id = 0; id < graph_.tensor_count(); ++id) {
    const Tensor& t = graph_.tensor(id);
    if (!t.shape.rank_known()) {
      report_->dynamic_dims.push_back(fmt::format("tensor '{}' has unknown rank", t.name));
      continue;
    }
    for (size_t i = 0; i < t.shape.rank(); ++i)
      if (!t.shape[i].known())
        report_->dynamic_dims.push_back(fmt::format("tensor '{}' dim {} ('{}')", t.name, i,
                                                    t.shape[i].symbol.empty() ? "?" : t.shape[i].symbol));
  }
}

Result<Graph> Importer::Run() {
  report_->ir_version = model_->ir_version();
  report_->producer = model_->producer_name() + (model_->producer_version().empty() ? "" : " " + model_->producer_version());
  for (const auto& o : model_->opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    report_->opsets[domain] = o.version();
    if (domain.empty()) opset_ = o.version();
  }
  if (opset_ == 0 && model_->opset_import_size() == 0) opset_ = 7;  // very old models omit it
  if (opset_ < 7)
    AddDiagnostic(Severity::kError, DiagKind::kAttribute, "opset_import",
                  fmt::format("ai.onnx opset {} is not supported (7 to 21)", opset_));
  else if (opset_ > 21)
    AddDiagnostic(Severity::kWarning, DiagKind::kAttribute, "opset_import",
                  fmt::format("ai.onnx opset {} is newer than the tested range (7 to 21)", opset_));

  (void)LoadInitializers();
  (void)LoadInputs();
  auto order = OrderNodes();
  if (order.ok()) {
    for (size_t i = 0; i < order->size(); ++i) LowerNode(*order.value()[i], i);
    (void)MarkOutputs();
  }
  graph_.InferShapes();
  CollectDynamicDims();
  if (order.ok() && !HasErrors(report_->diagnostics)) {
    for (Diagnostic& d : graph_.Validate()) report_->diagnostics.push_back(std::move(d));
  } else if (order.ok()) {
    // Lowering already failed, often downstream of the real cause (a Conv
    // with strides 0 leaves its output shape unknown, and the next op is
    // what complains): add the attribute and arity problems validation
    // finds, which name the op and the field at fault.
    for (Diagnostic& d : graph_.Validate())
      if (d.kind == DiagKind::kAttribute || d.kind == DiagKind::kArity) report_->diagnostics.push_back(std::move(d));
  }
  if (HasErrors(report_->diagnostics)) {
    std::string text;
    size_t errors = 0;
    for (const Diagnostic& d : report_->diagnostics) {
      if (d.severity != Severity::kError) continue;
      ++errors;
      if (errors > 50) continue;
      // Names come from the file: keep each line (and the status) bounded,
      // cut on a UTF-8 character boundary.
      size_t cut = d.message.size() <= 1024 ? d.message.size() : 1024;
      while (cut < d.message.size() && cut > 0 && (static_cast<unsigned char>(d.message[cut]) & 0xC0) == 0x80) --cut;
      text += "\n  " + d.message.substr(0, cut) + (cut < d.message.size() ? "..." : "");
    }
    if (errors > 50) text += fmt::format("\n  ... and {} more", errors - 50);
    return Error(StatusCode::kValidationFailed, "model cannot be imported ({} errors):{}", errors, text);
  }
  return std::move(graph_);
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

namespace {

Result<std::shared_ptr<onnx::ModelProto>> ParseModel(const void* data, size_t size, const std::string& what,
                                                     const ImportOptions& options) {
  if (size > options.max_model_bytes || size > static_cast<size_t>(INT32_MAX))
    return Error(StatusCode::kInvalidArgument, "{}: {} bytes is larger than a single ONNX protobuf may be ({} max); "
                 "keep large weights in external data", what, size, std::min<uint64_t>(options.max_model_bytes, INT32_MAX));
  auto model = std::make_shared<onnx::ModelProto>();
  google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t*>(data), static_cast<int>(size));
  stream.SetTotalBytesLimit(INT32_MAX);
  // Hostile nesting (subgraphs in attributes) fails cleanly: protobuf's own
  // default depth, about 30 nested If/Loop/Scan bodies (3 message levels each).
  constexpr int kMaxNesting = 100;
  stream.SetRecursionLimit(kMaxNesting);
  if (!model->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return Error(StatusCode::kParseError, "{}: not a valid ONNX model (protobuf parse failed: truncated, corrupt, or "
                 "nested deeper than {} message levels, about {} nested If/Loop/Scan subgraphs)", what, kMaxNesting,
                 kMaxNesting / 3);
  if (!model->has_graph())
    return Error(StatusCode::kParseError, "{}: the ModelProto has no graph", what);
  return model;
}

Result<Graph> RunImport(std::shared_ptr<onnx::ModelProto> model, std::string model_dir,
                        const ImportOptions& options, ImportReport* report) {
  ImportReport local;
  Importer importer(std::move(model), std::move(model_dir), options, report ? report : &local);
  return importer.Run();
}

}  // namespace

}  // namespace qairt::onnx_import

namespace qairt {

Result<Graph> ImportOnnxBytes(const void* data, size_t size, const std::string& model_dir,
                              const ImportOptions& options, ImportReport* report) {
  if (!data && size) return InvalidArgument("failed to import ONNX: data is NULL");
  auto model = onnx_import::ParseModel(data, size, "model bytes", options);
  if (!model.ok()) return model.status();
  return onnx_import::RunImport(std::move(model.value()), model_dir, options, report);
}

Result<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options, ImportReport* report) {
  // stat, not open: a FIFO or a directory must be refused, not block or be
  // "read" (MapFile checks the opened file again).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error(StatusCode::kIoError, "failed to open ONNX model '{}': {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Error(StatusCode::kIoError, "ONNX model '{}' is not a regular file", path);
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > options.max_model_bytes)
    return Error(StatusCode::kInvalidArgument, "'{}': {} bytes exceeds the {}-byte limit of one ONNX protobuf", path,
                 size, options.max_model_bytes);
  auto file = StaticData::MapFile(path, 0, size);
  if (!file.ok()) return file.status();
  auto model = onnx_import::ParseModel(file.value()->data(), file.value()->size(), "'" + path + "'", options);
  if (!model.ok()) return model.status();
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  return onnx_import::RunImport(std::move(model.value()), dir, options, report);
}

}  // namespace qairt
