// Builds small ONNX models directly as protobufs, for import tests that need
// exact control over every field (Q-DQ parameters, hostile values).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstring>
#include <string>
#include <vector>

namespace qairt::testing {

class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int64_t opset = 17, int64_t ir_version = 8) {
    model_.set_ir_version(ir_version);
    model_.set_producer_name("qairt-tests");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }
  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  void AddOpset(const std::string& domain, int64_t version) {
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }

  // dims: -1 = dynamic (dim_param "d<i>").
  void Input(const std::string& name, int32_t elem, const std::vector<int64_t>& dims) {
    FillValueInfo(graph().add_input(), name, elem, dims);
  }
  void Output(const std::string& name, int32_t elem, const std::vector<int64_t>& dims) {
    FillValueInfo(graph().add_output(), name, elem, dims);
  }

  onnx::TensorProto* Initializer(const std::string& name, int32_t elem, const std::vector<int64_t>& dims,
                                 const void* raw, size_t bytes) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(elem);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(static_cast<const char*>(raw), bytes));
    return t;
  }
  template <typename T>
  onnx::TensorProto* Init(const std::string& name, int32_t elem, const std::vector<int64_t>& dims,
                          const std::vector<T>& values) {
    return Initializer(name, elem, dims, values.data(), values.size() * sizeof(T));
  }

  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph().node_size()) : name);
    if (!domain.empty()) n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }

  static void IntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void IntsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  static void FillValueInfo(onnx::ValueInfoProto* vi, const std::string& name, int32_t elem,
                            const std::vector<int64_t>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] < 0)
        d->set_dim_param("d" + std::to_string(i));
      else
        d->set_dim_value(dims[i]);
    }
  }
  onnx::ModelProto model_;
};

}  // namespace qairt::testing
