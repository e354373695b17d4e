// Three reference models (a small CNN, a transformer block, an LSTM cell)
// written once against an abstract builder, so the same description can be
// built through the C++ API and through the C API and the results compared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attribute.h"
#include "ir/encoding.h"
#include "ir/graph.h"

namespace qairt::testing {

class ModelBuilder {
 public:
  virtual ~ModelBuilder() = default;
  // dims: -1 = unknown; symbols: "" = none.
  virtual TensorId Input(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                         const std::vector<std::string>& symbols = {}) = 0;
  virtual TensorId Constant(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                            const std::vector<uint8_t>& bytes) = 0;
  // Creates one activation per output name; returns their ids.
  virtual std::vector<TensorId> Op(const std::string& type, const std::string& name, const std::vector<TensorId>& inputs,
                                   const std::vector<std::string>& outputs, const AttributeMap& attrs = {},
                                   const std::string& source_name = "", const std::string& source_op_type = "") = 0;
  virtual void Output(TensorId t) = 0;
  virtual void SetEncoding(TensorId t, const Encoding& e) = 0;

  // Float32 constant filled with a deterministic ramp.
  TensorId Weights(const std::string& name, const std::vector<int64_t>& dims);
};

void BuildSmallCnn(ModelBuilder& b);
void BuildTransformerBlock(ModelBuilder& b);
void BuildLstmCell(ModelBuilder& b);

// Builder over the C++ API.
class CppModelBuilder : public ModelBuilder {
 public:
  explicit CppModelBuilder(Graph* g) : g_(g) {}
  TensorId Input(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                 const std::vector<std::string>& symbols) override;
  TensorId Constant(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                    const std::vector<uint8_t>& bytes) override;
  std::vector<TensorId> Op(const std::string& type, const std::string& name, const std::vector<TensorId>& inputs,
                           const std::vector<std::string>& outputs, const AttributeMap& attrs,
                           const std::string& source_name, const std::string& source_op_type) override;
  void Output(TensorId t) override;
  void SetEncoding(TensorId t, const Encoding& e) override;

 private:
  Graph* g_;
};

}  // namespace qairt::testing
