// Graph::Diff: the first structural difference between two graphs, in words.
// Used to prove that graphs built through different front doors (C++ API, C
// API, Python, importers) are the same, and by tools that diff pass results.
#include <fmt/format.h>

#include <cstring>

#include "ir/graph.h"

namespace qairt {
namespace {

std::string DiffTensor(const Graph& a, const Graph& b, TensorId id) {
  const Tensor& x = a.tensor(id);
  const Tensor& y = b.tensor(id);
  auto where = [&] { return fmt::format("tensor #{} '{}'", id, x.name); };
  if (x.name != y.name) return fmt::format("tensor #{} is named '{}' vs '{}'", id, x.name, y.name);
  if (x.dtype != y.dtype) return fmt::format("{}: dtype {} vs {}", where(), DTypeName(x.dtype), DTypeName(y.dtype));
  if (x.shape != y.shape) return fmt::format("{}: shape {} vs {}", where(), x.shape.ToString(), y.shape.ToString());
  if (x.role() != y.role())
    return fmt::format("{}: role {} vs {}", where(), TensorRoleName(x.role()), TensorRoleName(y.role()));
  if (x.producer != y.producer || x.producer_slot != y.producer_slot) return fmt::format("{}: producer differs", where());
  if (x.consumers != y.consumers) return fmt::format("{}: consumers differ", where());
  if (x.encoding.has_value() != y.encoding.has_value())
    return fmt::format("{}: encoding present in only one graph", where());
  if (x.encoding && *x.encoding != *y.encoding)
    return fmt::format("{}: encoding {} vs {}", where(), x.encoding->ToString(), y.encoding->ToString());
  const size_t xs = x.data ? x.data->size() : 0, ys = y.data ? y.data->size() : 0;
  if (xs != ys) return fmt::format("{}: static data {} bytes vs {}", where(), xs, ys);
  if (xs && std::memcmp(x.data->data(), y.data->data(), xs) != 0)
    return fmt::format("{}: static data bytes differ", where());
  return {};
}

std::string DiffOp(const Graph& a, const Graph& b, OpId id) {
  const Op& x = a.op(id);
  const Op& y = b.op(id);
  auto where = [&] { return fmt::format("op #{} '{}'", id, x.name); };
  if (x.name != y.name) return fmt::format("op #{} is named '{}' vs '{}'", id, x.name, y.name);
  if (x.type != y.type) return fmt::format("{}: type {} vs {}", where(), x.type, y.type);
  if (x.inputs != y.inputs) return fmt::format("{}: inputs differ", where());
  if (x.outputs != y.outputs) return fmt::format("{}: outputs differ", where());
  if (x.source_name != y.source_name || x.source_op_type != y.source_op_type)
    return fmt::format("{}: source node differs", where());
  if (x.attrs.size() != y.attrs.size()) return fmt::format("{}: {} attributes vs {}", where(), x.attrs.size(), y.attrs.size());
  for (auto it = x.attrs.begin(), jt = y.attrs.begin(); it != x.attrs.end(); ++it, ++jt) {
    if (it->first != jt->first) return fmt::format("{}: attribute '{}' vs '{}'", where(), it->first, jt->first);
    if (it->second != jt->second)
      return fmt::format("{}: attribute '{}' = {} vs {}", where(), it->first, AttributeToString(it->second),
                         AttributeToString(jt->second));
  }
  return {};
}

}  // namespace

std::string Graph::Diff(const Graph& a, const Graph& b) {
  if (a.name() != b.name()) return fmt::format("graph name '{}' vs '{}'", a.name(), b.name());
  if (a.tensor_count() != b.tensor_count())
    return fmt::format("{} tensors vs {}", a.tensor_count(), b.tensor_count());
  if (a.op_count() != b.op_count()) return fmt::format("{} ops vs {}", a.op_count(), b.op_count());
  if (a.inputs() != b.inputs()) return "graph inputs differ";
  if (a.outputs() != b.outputs()) return "graph outputs differ";
  for (TensorId id = 0; id < a.tensor_count(); ++id)
    if (auto d = DiffTensor(a, b, id); !d.empty()) return d;
  for (OpId id = 0; id < a.op_count(); ++id)
    if (auto d = DiffOp(a, b, id); !d.empty()) return d;
  return {};
}

}  // namespace qairt
