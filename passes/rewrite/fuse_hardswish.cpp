// x * relu6(x + 3) / 6 -> HardSwish(x), in the spellings exporters produce:
//   Mul(x, Clip(x + 3, 0, 6)) then Div 6 or Mul 1/6
//   Mul(x, Clip(x + 3, 0, 6) / 6)            (the HardSigmoid factor first)
//   Mul(x, Clip(x * 1/6 + 1/2, 0, 1))        (ONNX HardSigmoid(alpha=1/6) * x)
// Four requantized tensors become one, and the target's HardSwish kernel is
// used instead of elementwise ops.
#include <fmt/format.h>

#include <cmath>

#include "passes/rewrite/graph_edit.h"
#include "passes/rewrite/rewrites.h"

namespace qairt::rewrite {
namespace {

// A clamp to [lo, hi] (ReluMinMax or Relu6).
bool IsClamp(const Op& op, double lo, double hi) {
  if (op.type == "Relu6") return lo == 0 && hi == 6;
  if (op.type != "ReluMinMax") return false;
  auto get = [&](const char* k, double def) {
    auto it = op.attrs.find(k);
    if (it == op.attrs.end()) return def;
    if (auto d = std::get_if<double>(&it->second)) return *d;
    if (auto i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
    return std::nan("");
  };
  return get("min_value", -INFINITY) == lo && get("max_value", INFINITY) == hi;
}

// `op` multiplies `t` by `c` (Mul by c, or Div by 1/c).
bool ScalesBy(const Graph& g, const Op& op, TensorId t, double c) {
  const TensorId other = OtherInput(op, t);
  if (other == kInvalidId) return false;
  auto v = ScalarConstant(g, other, g.tensor(t).shape.rank());
  if (!v) return false;
  if (op.type == "ElementWiseMultiply") return Near(*v, c);
  if (op.type == "ElementWiseDivide") return op.inputs[0] == t && Near(*v, 1.0 / c);
  return false;
}

struct Match {
  TensorId x;
  std::vector<OpId> ops;  // pattern ops, last one produces the result
};

// The HardSigmoid factor ending at the clamp `last`: clip(x/6 + 1/2, 0, 1),
// or relu6(x + 3) (the caller matches the /6 after it).
std::optional<Match> HardSigmoidFactor(const Graph& g, OpId last) {
  const Op& op = g.op(last);
  auto in_producer = [&](const Op& o, size_t k) -> std::optional<OpId> {
    return o.inputs.size() > k ? ProducerOf(g, o.inputs[k]) : std::nullopt;
  };
  // clip(x * 1/6 + 1/2, 0, 1)
  if (IsClamp(op, 0, 1)) {
    auto add = in_producer(op, 0);
    if (!add || g.op(*add).type != "ElementWiseAdd") return std::nullopt;
    const Op& a = g.op(*add);
    for (size_t k = 0; k < 2; ++k) {
      auto mul = ProducerOf(g, a.inputs[k]);
      auto half = ScalarConstant(g, a.inputs[1 - k], 8);
      if (!mul || !half || !Near(*half, 0.5)) continue;
      const Op& m = g.op(*mul);
      for (size_t j = 0; j < 2 && m.inputs.size() == 2; ++j)
        if (ScalesBy(g, m, m.inputs[j], 1.0 / 6.0) && m.type == "ElementWiseMultiply")
          return Match{m.inputs[j], {*mul, *add, last}};
    }
    return std::nullopt;
  }
  // relu6(x + 3), optionally followed by / 6 (the caller handles the /6).
  if (IsClamp(op, 0, 6)) {
    auto add = in_producer(op, 0);
    if (!add || g.op(*add).type != "ElementWiseAdd") return std::nullopt;
    const Op& a = g.op(*add);
    for (size_t k = 0; k < 2; ++k) {
      auto three = ScalarConstant(g, a.inputs[1 - k], 8);
      if (three && Near(*three, 3.0) && g.tensor(a.inputs[k]).kind != TensorKind::kStatic)
        return Match{a.inputs[k], {*add, last}};
    }
  }
  return std::nullopt;
}

// A full pattern ending at `id`.
std::optional<Match> MatchAt(const Graph& g, OpId id) {
  const Op& op = g.op(id);
  if (op.outputs.size() != 1 || op.inputs.size() != 2) return std::nullopt;
  auto producer = [&](size_t k) { return ProducerOf(g, op.inputs[k]); };
  if (op.type == "ElementWiseMultiply") {
    for (size_t k = 0; k < 2; ++k) {
      auto p = producer(k);
      if (!p) continue;
      const TensorId other = op.inputs[1 - k];
      // x * clip(x/6 + 1/2, 0, 1)
      if (auto f = HardSigmoidFactor(g, *p); f && f->x == other && IsClamp(g.op(*p), 0, 1)) {
        f->ops.push_back(id);
        return f;
      }
      // x * (relu6(x + 3) / 6)
      const Op& q = g.op(*p);
      if (q.inputs.size() == 2 && (q.type == "ElementWiseDivide" || q.type == "ElementWiseMultiply")) {
        for (size_t j = 0; j < 2; ++j) {
          auto clamp = ProducerOf(g, q.inputs[j]);
          if (!clamp || !IsClamp(g.op(*clamp), 0, 6) || !ScalesBy(g, q, q.inputs[j], 1.0 / 6.0)) continue;
          auto f = HardSigmoidFactor(g, *clamp);
          if (f && f->x == other) {
            f->ops.push_back(*p);
            f->ops.push_back(id);
            return f;
          }
        }
      }
    }
  }
  // (x * relu6(x + 3)) / 6 or * 1/6
  if (op.type == "ElementWiseDivide" || op.type == "ElementWiseMultiply") {
    for (size_t k = 0; k < 2; ++k) {
      auto p = producer(k);
      if (!p || !ScalesBy(g, op, op.inputs[k], 1.0 / 6.0)) continue;
      const Op& m = g.op(*p);
      if (m.type != "ElementWiseMultiply" || m.inputs.size() != 2) continue;
      for (size_t j = 0; j < 2; ++j) {
        auto clamp = ProducerOf(g, m.inputs[j]);
        if (!clamp || !IsClamp(g.op(*clamp), 0, 6)) continue;
        auto f = HardSigmoidFactor(g, *clamp);
        if (f && f->x == m.inputs[1 - j]) {
          f->ops.push_back(*p);
          f->ops.push_back(id);
          return f;
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Result<size_t> FuseHardSwish(Graph* graph, std::vector<std::string>* notes) {
  const Graph& g = *graph;
  GraphEdit edit(g);
  size_t n = 0;
  for (OpId id = 0; id < g.op_count(); ++id) {
    if (edit.dropped(id)) continue;
    auto m = MatchAt(g, id);
    if (!m) continue;
    // Every intermediate is read only inside the pattern; x must match the
    // result's shape (no broadcasting hidden in the pattern).
    bool ok = g.tensor(m->x).shape == g.tensor(g.op(id).outputs[0]).shape;
    for (size_t k = 0; ok && k + 1 < m->ops.size(); ++k)
      ok = !edit.dropped(m->ops[k]) && OnlyReadBy(g, g.op(m->ops[k]).outputs[0], m->ops);
    if (!ok) continue;
    const Op& last = g.op(id);
    const std::string what = edit.Replace(
        m->ops, NewOp{"HardSwish", last.name, {m->x}, {last.outputs[0]}, {}, last.source_name, last.source_op_type});
    notes->push_back(fmt::format("{} -> HardSwish of '{}'", what, g.tensor(m->x).name));
    ++n;
  }
  if (Status st = edit.ApplyTo(graph); !st.ok()) return st;
  return n;
}

}  // namespace qairt::rewrite
