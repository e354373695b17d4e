// The same three models built through the C++ API and through the C API must
// give identical graphs (names, dtypes, shapes, roles, ops, attributes,
// encodings and static bytes).
#include <catch2/catch.hpp>

#include <qairt/qairt.h>

#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "common/model_builders.h"

namespace qairt::testing {
namespace {

void Check(qairt_status_t* s) {
  const std::string message = qairt_status_message(s);
  const qairt_code_t code = qairt_status_code(s);
  qairt_status_free(s);
  INFO(message);
  REQUIRE(code == QAIRT_OK);
}

// Builder over the C API only.
class CModelBuilder : public ModelBuilder {
 public:
  explicit CModelBuilder(qairt_graph_t* g) : g_(g) {}

  TensorId Input(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                 const std::vector<std::string>& symbols) override {
    std::vector<const char*> syms(dims.size(), nullptr);
    for (size_t i = 0; i < symbols.size(); ++i) syms[i] = symbols[i].empty() ? nullptr : symbols[i].c_str();
    qairt_tensor_desc d;
    qairt_tensor_desc_init(&d);
    d.name = name.c_str();
    d.dtype = static_cast<qairt_dtype_t>(dtype);
    d.rank = dims.size();
    d.dims = dims.data();
    d.dim_symbols = syms.data();
    qairt_tensor_id id = QAIRT_INVALID_ID;
    Check(qairt_graph_add_input(g_, &d, &id));
    return id;
  }

  TensorId Constant(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                    const std::vector<uint8_t>& bytes) override {
    qairt_tensor_desc d;
    qairt_tensor_desc_init(&d);
    d.name = name.c_str();
    d.dtype = static_cast<qairt_dtype_t>(dtype);
    d.rank = dims.size();
    d.dims = dims.data();
    qairt_tensor_id id = QAIRT_INVALID_ID;
    Check(qairt_graph_add_constant(g_, &d, bytes.data(), bytes.size(), 0, &id));
    return id;
  }

  std::vector<TensorId> Op(const std::string& type, const std::string& name, const std::vector<TensorId>& inputs,
                           const std::vector<std::string>& outputs, const AttributeMap& attrs,
                           const std::string& source_name, const std::string& source_op_type) override {
    std::vector<qairt_tensor_id> out_ids;
    for (const auto& out : outputs) {
      qairt_tensor_desc d;
      qairt_tensor_desc_init(&d);
      d.name = out.c_str();
      d.rank_known = 0;
      qairt_tensor_id id = QAIRT_INVALID_ID;
      Check(qairt_graph_add_tensor(g_, &d, &id));
      out_ids.push_back(id);
    }
    std::vector<qairt_attr> c_attrs;
    std::vector<std::vector<const char*>> string_lists;  // keeps STRINGS pointers alive
    for (const auto& [attr_name, value] : attrs) {
      qairt_attr a{};
      a.name = attr_name.c_str();
      a.type = static_cast<qairt_attr_type_t>(value.index() + 1);
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
              a.count = 1;
              a.data = &v;
            } else if constexpr (std::is_same_v<T, std::string>) {
              a.count = 1;
              a.data = v.c_str();
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
              auto& ptrs = string_lists.emplace_back();
              for (const auto& str : v) ptrs.push_back(str.c_str());
              a.count = ptrs.size();
              a.data = ptrs.data();
            } else {
              a.count = v.size();
              a.data = v.data();
            }
          },
          value);
      c_attrs.push_back(a);
    }
    qairt_op_desc d;
    qairt_op_desc_init(&d);
    d.type = type.c_str();
    d.name = name.c_str();
    d.num_inputs = inputs.size();
    d.inputs = inputs.data();
    d.num_outputs = out_ids.size();
    d.outputs = out_ids.data();
    d.num_attrs = c_attrs.size();
    d.attrs = c_attrs.data();
    d.source_name = source_name.empty() ? nullptr : source_name.c_str();
    d.source_op_type = source_op_type.empty() ? nullptr : source_op_type.c_str();
    qairt_op_id op = QAIRT_INVALID_ID;
    Check(qairt_graph_add_op(g_, &d, &op));
    return out_ids;
  }

  void Output(TensorId t) override { Check(qairt_graph_mark_output(g_, t)); }

  void SetEncoding(TensorId t, const Encoding& e) override {
    qairt_encoding_t* h = ToHandle(e);
    Check(qairt_graph_set_encoding(g_, t, h));
    qairt_encoding_destroy(h);
  }

  static qairt_encoding_t* ToHandle(const Encoding& e) {
    qairt_encoding_t* h = nullptr;
    Check(qairt_encoding_create(static_cast<qairt_encoding_kind_t>(e.kind), static_cast<qairt_dtype_t>(e.dtype), &h));
    Check(qairt_encoding_set_bitwidth(h, e.bitwidth));
    Check(qairt_encoding_set_symmetry(h, static_cast<qairt_symmetry_t>(e.symmetry)));
    Check(qairt_encoding_set_overridden(h, e.overridden));
    Check(qairt_encoding_set_axis(h, e.axis));
    Check(qairt_encoding_set_scales(h, e.scales.data(), e.scales.size()));
    Check(qairt_encoding_set_offsets(h, e.offsets.data(), e.offsets.size()));
    Check(qairt_encoding_set_float_offsets(h, e.float_offsets.data(), e.float_offsets.size()));
    Check(qairt_encoding_set_block_sizes(h, e.block_sizes.data(), e.block_sizes.size()));
    Check(qairt_encoding_set_lpbq(h, e.block_int_scales.data(), e.block_int_scales.size(), e.decompressed_bitwidth));
    if (!e.index_tensor.empty()) Check(qairt_encoding_set_index_tensor(h, e.index_tensor.c_str()));
    for (const Encoding& sub : e.sub_encodings) {
      qairt_encoding_t* s = ToHandle(sub);
      Check(qairt_encoding_add_sub_encoding(h, s));
      qairt_encoding_destroy(s);
    }
    return h;
  }

 private:
  qairt_graph_t* g_;
};

using BuildFn = void (*)(ModelBuilder&);

void ExpectSameGraph(const char* name, BuildFn build) {
  Graph cpp_graph(name);
  CppModelBuilder cpp(&cpp_graph);
  build(cpp);

  qairt_graph_options options;
  qairt_graph_options_init(&options);
  options.name = name;
  qairt_graph_t* c_graph = nullptr;
  Check(qairt_graph_create(&options, &c_graph));
  CModelBuilder c(c_graph);
  build(c);

  const std::string diff = Graph::Diff(cpp_graph, c_graph->graph);
  INFO(diff);
  CHECK(diff.empty());

  // Both are valid, and the public comparison agrees.
  Diagnostics d = cpp_graph.Validate();
  INFO(JoinMessages(d));
  CHECK(!HasErrors(d));
  qairt_graph_t* c_copy = nullptr;
  Check(qairt_graph_clone(c_graph, &c_copy));
  int32_t equal = 0;
  char buf[256];
  Check(qairt_graph_compare(c_graph, c_copy, &equal, buf, sizeof buf));
  CHECK(equal == 1);
  qairt_graph_destroy(c_copy);
  qairt_graph_destroy(c_graph);
}

TEST_CASE("C++ and C APIs build the same small CNN", "[builder][capi]") { ExpectSameGraph("cnn", BuildSmallCnn); }

TEST_CASE("C++ and C APIs build the same transformer block", "[builder][capi]") {
  ExpectSameGraph("transformer", BuildTransformerBlock);
}

TEST_CASE("C++ and C APIs build the same LSTM cell", "[builder][capi]") { ExpectSameGraph("lstm", BuildLstmCell); }

TEST_CASE("graph comparison reports a difference", "[builder][capi]") {
  qairt_graph_t* a = nullptr;
  Check(qairt_graph_create(nullptr, &a));
  CModelBuilder ba(a);
  BuildLstmCell(ba);
  qairt_graph_t* b = nullptr;
  Check(qairt_graph_clone(a, &b));
  // Rewire b: hidden_out now reads f instead of o.
  qairt_op_id op = QAIRT_INVALID_ID;
  Check(qairt_graph_find_op(b, "hidden_out", &op));
  qairt_tensor_id f = QAIRT_INVALID_ID;
  Check(qairt_graph_find_tensor(b, "f", &f));
  Check(qairt_graph_set_op_input(b, op, 0, f));
  int32_t equal = 1;
  char buf[256];
  Check(qairt_graph_compare(a, b, &equal, buf, sizeof buf));
  CHECK(equal == 0);
  CHECK(std::string(buf).find("consumers differ") != std::string::npos);
  qairt_graph_destroy(a);
  qairt_graph_destroy(b);
}

}  // namespace
}  // namespace qairt::testing
