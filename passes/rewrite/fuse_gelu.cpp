// Erf-based Gelu -> Gelu: 0.5 * x * (1 + erf(x / sqrt(2))), as exporters
// spell it (Div by 1.4142 or Mul by 0.7071; the 0.5 applied to x, to the
// (1 + erf) factor, or to the product). Five requantizations, two of them
// of erf's saturating output, become the target's Gelu kernel.
#include <fmt/format.h>

#include <cmath>

#include "passes/rewrite/graph_edit.h"
#include "passes/rewrite/rewrites.h"

namespace qairt::rewrite {
namespace {

bool IsErf(const Op& op) {
  if (op.type != "ElementWiseUnary") return false;
  auto it = op.attrs.find("operation");
  return it != op.attrs.end() && std::get_if<std::string>(&it->second) && std::get<std::string>(it->second) == "erf";
}

// `op` multiplies `t` by `c` (Mul c, Div 1/c): true.
bool Scales(const Graph& g, const Op& op, TensorId t, double c) {
  const TensorId other = OtherInput(op, t);
  if (other == kInvalidId) return false;
  auto v = ScalarConstant(g, other, g.tensor(t).shape.rank());
  if (!v) return false;
  if (op.type == "ElementWiseMultiply") return Near(*v, c);
  if (op.type == "ElementWiseDivide") return op.inputs[0] == t && Near(*v, 1.0 / c);
  return false;
}

// 1 + erf(x / sqrt 2): returns x and the ops.
std::optional<std::pair<TensorId, std::vector<OpId>>> OnePlusErf(const Graph& g, TensorId t) {
  auto add = ProducerOf(g, t);
  if (!add || g.op(*add).type != "ElementWiseAdd") return std::nullopt;
  const Op& a = g.op(*add);
  for (size_t k = 0; k < 2 && a.inputs.size() == 2; ++k) {
    auto one = ScalarConstant(g, a.inputs[1 - k], 8);
    auto erf = ProducerOf(g, a.inputs[k]);
    if (!one || *one != 1.0f || !erf || !IsErf(g.op(*erf))) continue;
    auto div = ProducerOf(g, g.op(*erf).inputs[0]);
    if (!div) continue;
    const Op& d = g.op(*div);
    for (size_t j = 0; j < 2 && d.inputs.size() == 2; ++j)
      if (Scales(g, d, d.inputs[j], 1.0 / std::sqrt(2.0)))
        return std::make_pair(d.inputs[j], std::vector<OpId>{*div, *erf, *add});
  }
  return std::nullopt;
}

struct Match {
  TensorId x;
  std::vector<OpId> ops;
};

std::optional<Match> MatchAt(const Graph& g, OpId id) {
  const Op& op = g.op(id);
  if (op.type != "ElementWiseMultiply" || op.inputs.size() != 2 || op.outputs.size() != 1) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const TensorId a = op.inputs[k], b = op.inputs[1 - k];
    // (x * (1 + erf)) * 0.5
    if (auto s = ScalarConstant(g, b, 8); s && Near(*s, 0.5)) {
      auto m = ProducerOf(g, a);
      if (!m || g.op(*m).type != "ElementWiseMultiply") continue;
      const Op& mo = g.op(*m);
      for (size_t j = 0; j < 2; ++j) {
        auto f = OnePlusErf(g, mo.inputs[j]);
        if (f && f->first == mo.inputs[1 - j]) {
          f->second.push_back(*m);
          f->second.push_back(id);
          return Match{f->first, f->second};
        }
      }
      continue;
    }
    // x * ((1 + erf) * 0.5)  |  (x * 0.5) * (1 + erf)
    auto pa = ProducerOf(g, a);
    if (!pa) continue;
    const Op& qa = g.op(*pa);
    if (auto f = OnePlusErf(g, b)) {  // a = x * 0.5
      if (qa.inputs.size() == 2 && Scales(g, qa, f->first, 0.5) && qa.type == "ElementWiseMultiply") {
        f->second.push_back(*pa);
        f->second.push_back(id);
        return Match{f->first, f->second};
      }
    }
    for (size_t j = 0; j < 2 && qa.inputs.size() == 2 && qa.type == "ElementWiseMultiply"; ++j) {
      auto f = OnePlusErf(g, qa.inputs[j]);
      if (f && f->first == b && Scales(g, qa, qa.inputs[j], 0.5)) {  // a = (1 + erf) * 0.5
        f->second.push_back(*pa);
        f->second.push_back(id);
        return Match{f->first, f->second};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Result<size_t> FuseGelu(Graph* graph, std::vector<std::string>* notes) {
  const Graph& g = *graph;
  GraphEdit edit(g);
  size_t n = 0;
  for (OpId id = 0; id < g.op_count(); ++id) {
    if (edit.dropped(id)) continue;
    auto m = MatchAt(g, id);
    if (!m) continue;
    const TensorId out = g.op(id).outputs[0];
    bool ok = g.tensor(m->x).shape == g.tensor(out).shape;
    for (OpId o : m->ops) ok = ok && !edit.dropped(o) && (o == id || OnlyReadBy(g, g.op(o).outputs[0], m->ops));
    if (!ok) continue;
    const std::string what =
        edit.Replace(m->ops, NewOp{"Gelu", g.op(id).name, {m->x}, {out}, {{"approximate", std::string("none")}},
                                   g.op(id).source_name, g.op(id).source_op_type});
    notes->push_back(fmt::format("{} -> Gelu of '{}'", what, g.tensor(m->x).name));
    ++n;
  }
  if (Status st = edit.ApplyTo(graph); !st.ok()) return st;
  return n;
}

}  // namespace qairt::rewrite
