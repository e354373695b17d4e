// The op vocabulary: one OpSchema per QNN op type, with its arity and its
// shape function. Shape functions are needed after lowering and rewrites,
// where ONNX's own inference no longer applies.
//
// To add an op: write its shape function in the lib/ir/ops/ file of its
// family and add one line to that family's Register*Ops() table.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "ir/graph.h"

namespace qairt {

class InferContext {
 public:
  InferContext(const Op& op, OpId op_id, std::vector<const TensorType*> inputs, std::vector<TensorType>* outputs,
               Diagnostics* diags)
      : op_(op), op_id_(op_id), inputs_(std::move(inputs)), outputs_(outputs), diags_(diags) {}

  const Op& op() const { return op_; }
  size_t num_inputs() const { return inputs_.size(); }
  // False for an absent optional input (or an index past the end).
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const TensorType& input(size_t i) const { return *inputs_[i]; }
  size_t num_outputs() const { return outputs_->size(); }
  TensorType& output(size_t i) { return (*outputs_)[i]; }

  bool has_attr(std::string_view name) const { return op_.attrs.find(name) != op_.attrs.end(); }
  // Typed attribute readers. A present attribute of the wrong type is
  // reported (kAttribute) and the default returned.
  int64_t Int(std::string_view name, int64_t default_value);
  double Float(std::string_view name, double default_value);
  std::string String(std::string_view name, std::string default_value);
  std::vector<int64_t> Ints(std::string_view name, std::vector<int64_t> default_value);
  std::vector<double> Floats(std::string_view name, std::vector<double> default_value);
  // Reports kAttribute if missing.
  std::optional<int64_t> RequiredInt(std::string_view name);
  std::optional<std::vector<int64_t>> RequiredInts(std::string_view name);

  // Records an error about this op; the message is prefixed with "op '<name>' (<type>): ".
  template <typename... Args>
  void Error(DiagKind kind, std::string field, fmt::format_string<Args...> format, Args&&... args) {
    Report(kind, std::move(field), fmt::format(format, std::forward<Args>(args)...));
  }
  bool failed() const { return failed_; }

 private:
  void Report(DiagKind kind, std::string field, std::string message);
  const Attribute* Find(std::string_view name) const;
  void WrongType(std::string_view name, std::string_view expected);

  const Op& op_;
  OpId op_id_;
  std::vector<const TensorType*> inputs_;
  std::vector<TensorType>* outputs_;
  Diagnostics* diags_;
  bool failed_ = false;
};

using ShapeFn = void (*)(InferContext&);

inline constexpr uint32_t kVariadic = 0xFFFFFFFFu;

struct OpSchema {
  std::string_view type;   // QNN name, e.g. "Conv2d"
  uint32_t min_inputs;     // inputs below this index are required
  uint32_t max_inputs;     // kVariadic = unbounded
  uint32_t min_outputs;
  uint32_t max_outputs;
  ShapeFn infer;
  std::string_view summary;  // one line: inputs, attributes
};

// All registered schemas, sorted by type name.
std::span<const OpSchema> AllOpSchemas();
const OpSchema* FindOpSchema(std::string_view type);

}  // namespace qairt
