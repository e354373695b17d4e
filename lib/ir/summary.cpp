// Graph::SummaryJson: the machine-readable picture of a graph that the C API,
// the Python binding and `qairt` print. Deterministic: same graph, same bytes.
#include <map>

#include "ir/graph.h"
#include "ir/shape_json.h"
#include "support/json_writer.h"

namespace qairt {

void WriteShapeJson(JsonWriter& w, const Shape& shape) {
  if (!shape.rank_known()) {
    w.Null();
    return;
  }
  w.BeginArray();
  for (const Dim& d : shape.dims()) {
    if (d.known())
      w.Int(d.value);
    else if (!d.symbol.empty())
      w.String(d.symbol);
    else
      w.Null();
  }
  w.EndArray();
}

namespace {

template <typename V>  // std::vector or CowVector
void WriteNumbers(JsonWriter& w, const char* key, const V& v) {
  if (v.empty()) return;
  w.Key(key).BeginArray();
  for (const typename V::value_type& x : v) {
    if constexpr (std::is_floating_point_v<typename V::value_type>)
      w.Double(x);
    else
      w.Int(static_cast<int64_t>(x));
  }
  w.EndArray();
}

void WriteEncoding(JsonWriter& w, const Encoding& e) {
  w.BeginObject();
  w.Key("kind").String(EncodingKindName(e.kind));
  w.Key("dtype").String(DTypeName(e.dtype));
  w.Key("bitwidth").UInt(e.effective_bitwidth());
  if (e.kind != EncodingKind::kFloat) w.Key("symmetry").String(SymmetryName(e.symmetry));
  w.Key("overridden").Bool(e.overridden);
  if (e.axis >= 0) w.Key("axis").Int(e.axis);
  WriteNumbers(w, "block_sizes", e.block_sizes);
  WriteNumbers(w, "scales", e.scales);
  WriteNumbers(w, "offsets", e.offsets);
  WriteNumbers(w, "float_offsets", e.float_offsets);
  WriteNumbers(w, "block_int_scales", e.block_int_scales);
  if (e.decompressed_bitwidth) w.Key("decompressed_bitwidth").UInt(e.decompressed_bitwidth);
  if (!e.index_tensor.empty()) w.Key("index_tensor").String(e.index_tensor);
  if (!e.sub_encodings.empty()) {
    w.Key("sub_encodings").BeginArray();
    for (const Encoding& sub : e.sub_encodings) WriteEncoding(w, sub);
    w.EndArray();
  }
  w.EndObject();
}

void WriteAttribute(JsonWriter& w, const Attribute& a) {
  struct Visitor {
    JsonWriter& w;
    void operator()(int64_t v) const { w.Int(v); }
    void operator()(double v) const { w.Double(v); }
    void operator()(const std::string& v) const { w.String(v); }
    void operator()(const std::vector<int64_t>& v) const {
      w.BeginArray();
      for (int64_t x : v) w.Int(x);
      w.EndArray();
    }
    void operator()(const std::vector<double>& v) const {
      w.BeginArray();
      for (double x : v) w.Double(x);
      w.EndArray();
    }
    void operator()(const std::vector<std::string>& v) const {
      w.BeginArray();
      for (const auto& x : v) w.String(x);
      w.EndArray();
    }
  };
  std::visit(Visitor{w}, a);
}

void WriteTensorRef(JsonWriter& w, const Graph& g, TensorId id) {
  w.BeginObject();
  w.Key("name").String(g.tensor(id).name);
  w.Key("dtype").String(DTypeName(g.tensor(id).dtype));
  w.Key("shape");
  WriteShapeJson(w, g.tensor(id).shape);
  w.EndObject();
}

// A tensor's producer or one of its consumers: the op and its slot.
void WriteOpSlot(JsonWriter& w, std::string_view op, uint32_t slot) {
  w.BeginObject();
  w.Key("op").String(op);
  w.Key("slot").UInt(slot);
  w.EndObject();
}

}  // namespace

std::string Graph::SummaryJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("name").String(name_);

  size_t static_count = 0, encoded = 0;
  uint64_t static_bytes = 0;
  std::map<std::string_view, size_t> histogram;
  for (const Tensor& t : tensors_) {
    if (t.kind == TensorKind::kStatic) {
      ++static_count;
      static_bytes += t.data ? t.data->size() : 0;
    }
    if (t.encoding) ++encoded;
  }
  for (const Op& op : ops_) ++histogram[op.type];

  w.Key("counts").BeginObject();
  w.Key("tensors").UInt(tensors_.size());
  w.Key("ops").UInt(ops_.size());
  w.Key("inputs").UInt(inputs_.size());
  w.Key("outputs").UInt(outputs_.size());
  w.Key("static_tensors").UInt(static_count);
  w.Key("static_bytes").UInt(static_bytes);
  w.Key("encoded_tensors").UInt(encoded);
  w.EndObject();

  w.Key("op_types").BeginObject();
  for (const auto& [type, n] : histogram) w.Key(type).UInt(n);
  w.EndObject();

  w.Key("inputs").BeginArray();
  for (TensorId id : inputs_) WriteTensorRef(w, *this, id);
  w.EndArray();
  w.Key("outputs").BeginArray();
  for (TensorId id : outputs_) WriteTensorRef(w, *this, id);
  w.EndArray();

  w.Key("tensors").BeginArray();
  for (TensorId id = 0; id < tensors_.size(); ++id) {
    const Tensor& t = tensors_[id];
    w.BeginObject();
    w.Key("id").UInt(id);
    w.Key("name").String(t.name);
    w.Key("dtype").String(DTypeName(t.dtype));
    w.Key("short_dtype").String(DTypeShortName(t.dtype));
    w.Key("role").String(TensorRoleName(t.role()));
    w.Key("shape");
    WriteShapeJson(w, t.shape);
    w.Key("producer");
    if (t.producer == kInvalidId)
      w.Null();
    else
      WriteOpSlot(w, ops_[t.producer].name, t.producer_slot);
    w.Key("consumers").BeginArray();
    for (const Use& u : t.consumers) WriteOpSlot(w, ops_[u.op].name, u.slot);
    w.EndArray();
    if (t.data) w.Key("static_bytes").UInt(t.data->size());
    w.Key("encoding");
    if (t.encoding)
      WriteEncoding(w, *t.encoding);
    else
      w.Null();
    w.EndObject();
  }
  w.EndArray();

  w.Key("ops").BeginArray();
  for (OpId id = 0; id < ops_.size(); ++id) {
    const Op& op = ops_[id];
    w.BeginObject();
    w.Key("id").UInt(id);
    w.Key("name").String(op.name);
    w.Key("type").String(op.type);
    if (!op.source_name.empty()) w.Key("source_name").String(op.source_name);
    if (!op.source_op_type.empty()) w.Key("source_op_type").String(op.source_op_type);
    w.Key("inputs").BeginArray();
    for (TensorId t : op.inputs) {
      if (t == kInvalidId)
        w.Null();
      else
        w.String(tensors_[t].name);
    }
    w.EndArray();
    w.Key("outputs").BeginArray();
    for (TensorId t : op.outputs) w.String(tensors_[t].name);
    w.EndArray();
    w.Key("attrs").BeginObject();
    for (const auto& [name, value] : op.attrs) {
      w.Key(name);
      WriteAttribute(w, value);
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace qairt
