// Decomposed normalizations -> LayerNorm / RmsNorm. Exporters (older opsets,
// hand-written modules) spell LayerNorm as
//   m = ReduceMean(x); d = x - m; v = ReduceMean(d^2 | d*d); y = d / sqrt(v + eps)
//   [* gamma] [+ beta]      (or d * rsqrt(v + eps), or d * (1 / sqrt(v + eps)))
// and RmsNorm the same without the mean. Quantized op by op this is nine
// requantizations, the worst of them d^2 whose range is the square of the
// activation's; the fused op is one kernel with one output encoding.
#include <fmt/format.h>

#include <cstring>

#include "passes/rewrite/graph_edit.h"
#include "passes/rewrite/rewrites.h"

namespace qairt::rewrite {
namespace {

// The reduced axes of a ReduceMean with keepdims, normalized, when they are
// the trailing axes of its input.
std::optional<std::vector<int64_t>> TrailingMeanAxes(const Graph& g, const Op& op) {
  if (op.type != "ReduceMean" || op.inputs.empty() || op.outputs.size() != 1) return std::nullopt;
  auto kd = op.attrs.find("keepdims");
  if (kd != op.attrs.end() && std::get_if<int64_t>(&kd->second) && std::get<int64_t>(kd->second) == 0)
    return std::nullopt;
  const Shape& xs = g.tensor(op.inputs[0]).shape;
  if (!xs.fully_known()) return std::nullopt;
  const auto rank = static_cast<int64_t>(xs.rank());
  std::vector<int64_t> axes;
  if (auto it = op.attrs.find("axes"); it != op.attrs.end()) {
    if (auto v = std::get_if<std::vector<int64_t>>(&it->second)) axes = *v;
  } else if (op.inputs.size() > 1 && op.inputs[1] != kInvalidId) {
    const Tensor& t = g.tensor(op.inputs[1]);
    if (t.kind != TensorKind::kStatic || !t.data || t.dtype != DType::kInt64) return std::nullopt;
    axes.resize(t.data->size() / 8);
    if (!axes.empty()) std::memcpy(axes.data(), t.data->data(), axes.size() * 8);
  }
  if (axes.empty()) return std::nullopt;  // all axes: not a per-row norm
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t k = 0; k < axes.size(); ++k)
    if (axes[k] != rank - static_cast<int64_t>(axes.size() - k)) return std::nullopt;
  return axes;
}

bool SameAxes(const Graph& g, const Op& a, const Op& b) {
  auto x = TrailingMeanAxes(g, a), y = TrailingMeanAxes(g, b);
  return x && y && *x == *y;
}

// `sq` computes t*t (Mul(t, t) or Pow(t, 2)).
bool IsSquareOf(const Graph& g, const Op& sq, TensorId t) {
  if (sq.inputs.size() != 2) return false;
  if (sq.type == "ElementWiseMultiply") return sq.inputs[0] == t && sq.inputs[1] == t;
  if (sq.type == "ElementWisePower" && sq.inputs[0] == t) {
    auto e = ScalarConstant(g, sq.inputs[1], 8);
    return e && *e == 2.0f;
  }
  return false;
}

struct NormMatch {
  TensorId x = kInvalidId;
  std::vector<OpId> ops;  // all pattern ops; the last produces `out`
  std::vector<int64_t> axes;
  float eps = 0;
  TensorId out = kInvalidId;
  TensorId gamma = kInvalidId, beta = kInvalidId;
};

// y = num / sqrt(v + eps) or num * rsqrt(v + eps) or num * (1 / sqrt(v + eps)):
// returns (num, the ReduceMean producing v, eps, the ops after the mean).
struct ScaledByRsqrt {
  TensorId num;
  OpId mean;
  float eps;
  std::vector<OpId> ops;  // Add, Sqrt/Rsqrt, [Div 1/], final op
};
std::optional<ScaledByRsqrt> MatchRsqrtScale(const Graph& g, OpId id) {
  const Op& op = g.op(id);
  if (op.inputs.size() != 2 || op.outputs.size() != 1) return std::nullopt;
  // Walks back from the denominator-ish input to Add(ReduceMean, eps).
  auto from_add = [&](TensorId t) -> std::optional<std::pair<OpId, float>> {
    auto add = ProducerOf(g, t);
    if (!add || g.op(*add).type != "ElementWiseAdd") return std::nullopt;
    const Op& a = g.op(*add);
    for (size_t k = 0; k < 2; ++k) {
      auto mean = ProducerOf(g, a.inputs[k]);
      auto eps = ScalarConstant(g, a.inputs[1 - k], g.tensor(a.inputs[k]).shape.rank());
      if (mean && eps && *eps >= 0 && g.op(*mean).type == "ReduceMean") return std::make_pair(*mean, *eps);
    }
    return std::nullopt;
  };
  auto pack = [&](TensorId num, TensorId t, std::vector<OpId> middle) -> std::optional<ScaledByRsqrt> {
    auto pre = ProducerOf(g, t);
    if (!pre) return std::nullopt;
    const Op& p = g.op(*pre);
    if (p.inputs.empty()) return std::nullopt;
    auto r = from_add(p.inputs[0]);
    if (!r) return std::nullopt;
    ScaledByRsqrt s{num, r->first, r->second, {}};
    s.ops.push_back(*ProducerOf(g, p.inputs[0]));  // the Add
    s.ops.push_back(*pre);
    for (OpId o : middle) s.ops.push_back(o);
    s.ops.push_back(id);
    return s;
  };
  if (op.type == "ElementWiseDivide") {  // num / sqrt(...)
    auto sq = ProducerOf(g, op.inputs[1]);
    if (sq && g.op(*sq).type == "ElementWiseSquareRoot") return pack(op.inputs[0], op.inputs[1], {});
    return std::nullopt;
  }
  if (op.type != "ElementWiseMultiply") return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    auto p = ProducerOf(g, op.inputs[k]);
    if (!p) continue;
    const Op& q = g.op(*p);
    if (q.type == "ElementWiseRsqrt") return pack(op.inputs[1 - k], op.inputs[k], {});
    if (q.type == "ElementWiseDivide" && q.inputs.size() == 2) {  // 1 / sqrt(...)
      auto one = ScalarConstant(g, q.inputs[0], 8);
      auto sq = ProducerOf(g, q.inputs[1]);
      if (one && *one == 1.0f && sq && g.op(*sq).type == "ElementWiseSquareRoot") {
        auto s = pack(op.inputs[1 - k], q.inputs[1], {});
        if (!s) continue;
        s->ops.insert(s->ops.end() - 1, *p);
        return s;
      }
    }
  }
  return std::nullopt;
}

// Optional trailing `* gamma` and `+ beta` with constants broadcasting over
// the normalized dims only.
void MatchAffineTail(const Graph& g, NormMatch* m) {
  const Shape& xs = g.tensor(m->x).shape;
  int64_t inner = 1;
  for (int64_t a : m->axes) inner *= xs[static_cast<size_t>(a)].value;
  auto fits = [&](TensorId c) {
    auto v = FloatConstant(g, c);
    if (!v) return false;
    if (v->size() == 1) return g.tensor(c).shape.rank() <= xs.rank();
    if (static_cast<int64_t>(v->size()) != inner) return false;
    // Right-aligned dims equal to x's trailing dims (leading ones allowed).
    const Shape& cs = g.tensor(c).shape;
    if (cs.rank() > xs.rank()) return false;
    const size_t lead = xs.rank() - cs.rank();
    for (size_t i = 0; i < cs.rank(); ++i) {
      const auto axis = static_cast<int64_t>(lead + i);
      const bool normalized = axis >= m->axes.front();
      if (normalized ? cs[i].value != xs[lead + i].value : cs[i].value != 1) return false;
    }
    return true;
  };
  auto step = [&](const char* type, TensorId* slot) {
    auto next = SoleConsumer(g, m->out);
    if (!next) return;
    const Op& op = g.op(*next);
    if (op.type != type || op.outputs.size() != 1) return;
    const TensorId c = OtherInput(op, m->out);
    if (c == kInvalidId || !fits(c) || g.tensor(op.outputs[0]).shape != g.tensor(m->out).shape) return;
    *slot = c;
    m->ops.push_back(*next);
    m->out = op.outputs[0];
  };
  step("ElementWiseMultiply", &m->gamma);
  step("ElementWiseAdd", &m->beta);
}

bool Internal(const Graph& g, const NormMatch& m) {
  for (OpId o : m.ops)
    if (g.op(o).outputs[0] != m.out && !OnlyReadBy(g, g.op(o).outputs[0], m.ops)) return false;
  return g.tensor(m.x).shape == g.tensor(m.out).shape;
}

std::optional<NormMatch> MatchLayerNorm(const Graph& g, OpId id) {
  auto s = MatchRsqrtScale(g, id);
  if (!s) return std::nullopt;
  // num = x - mean(x); the variance mean reads (x - mean)^2.
  auto sub = ProducerOf(g, s->num);
  if (!sub || g.op(*sub).type != "ElementWiseSubtract") return std::nullopt;
  const Op& d = g.op(*sub);
  auto mean = ProducerOf(g, d.inputs[1]);
  if (!mean || g.op(*mean).inputs[0] != d.inputs[0]) return std::nullopt;
  const Op& var = g.op(s->mean);
  auto sq = ProducerOf(g, var.inputs[0]);
  if (!sq || !IsSquareOf(g, g.op(*sq), s->num) || !SameAxes(g, g.op(*mean), var)) return std::nullopt;
  NormMatch m;
  m.x = d.inputs[0];
  m.axes = *TrailingMeanAxes(g, var);
  m.eps = s->eps;
  m.ops = {*mean, *sub, *sq, s->mean};
  for (OpId o : s->ops) m.ops.push_back(o);
  m.out = g.op(id).outputs[0];
  MatchAffineTail(g, &m);
  if (!Internal(g, m)) return std::nullopt;
  return m;
}

std::optional<NormMatch> MatchRmsNorm(const Graph& g, OpId id) {
  auto s = MatchRsqrtScale(g, id);
  if (!s) return std::nullopt;
  const Op& var = g.op(s->mean);
  auto sq = ProducerOf(g, var.inputs[0]);
  if (!sq || !IsSquareOf(g, g.op(*sq), s->num) || !TrailingMeanAxes(g, var)) return std::nullopt;
  NormMatch m;
  m.x = s->num;
  m.axes = *TrailingMeanAxes(g, var);
  m.eps = s->eps;
  m.ops = {*sq, s->mean};
  for (OpId o : s->ops) m.ops.push_back(o);
  m.out = g.op(id).outputs[0];
  // A trailing Add stays an Add: RMSNorm modules have no bias.
  MatchAffineTail(g, &m);
  if (m.beta != kInvalidId) {  // keep the Add outside: drop it from the match
    m.ops.pop_back();
    m.out = g.op(m.ops.back()).outputs[0];
    m.beta = kInvalidId;
  }
  if (!Internal(g, m)) return std::nullopt;
  return m;
}

Result<size_t> Fuse(Graph* graph, std::vector<std::string>* notes, const char* type,
                    std::optional<NormMatch> (*match)(const Graph&, OpId)) {
  const Graph& g = *graph;
  GraphEdit edit(g);
  size_t n = 0;
  for (OpId id = 0; id < g.op_count(); ++id) {
    if (edit.dropped(id)) continue;
    auto m = match(g, id);
    if (!m) continue;
    bool fresh = true;
    for (OpId o : m->ops) fresh = fresh && !edit.dropped(o);
    if (!fresh) continue;
    const OpId last = m->ops.back();
    std::vector<TensorId> inputs = {m->x};
    const Shape& xs = g.tensor(m->x).shape;
    if (m->gamma != kInvalidId || m->beta != kInvalidId) {
      if (m->gamma != kInvalidId) {
        inputs.push_back(m->gamma);
      } else {
        int64_t inner = 1;
        for (int64_t a : m->axes) inner *= xs[static_cast<size_t>(a)].value;
        inputs.push_back(edit.NewConstantF32(edit.UniqueName(g.op(last).name + "_gamma"), Shape{inner},
                                             std::vector<float>(static_cast<size_t>(inner), 1.0f)));
      }
      if (m->beta != kInvalidId) inputs.push_back(m->beta);
    }
    AttributeMap attrs = {{"axes", m->axes}, {"epsilon", static_cast<double>(m->eps)}};
    const std::string what = edit.Replace(
        m->ops, NewOp{type, g.op(last).name, inputs, {m->out}, attrs, g.op(last).source_name, g.op(last).source_op_type});
    notes->push_back(fmt::format("{} ops ({}) -> {} of '{}'", m->ops.size(), what, type, g.tensor(m->x).name));
    ++n;
  }
  if (Status st = edit.ApplyTo(graph); !st.ok()) return st;
  return n;
}

}  // namespace

Result<size_t> FuseLayerNorm(Graph* graph, std::vector<std::string>* notes) {
  return Fuse(graph, notes, "LayerNorm", MatchLayerNorm);
}

Result<size_t> FuseRmsNorm(Graph* graph, std::vector<std::string>* notes) {
  return Fuse(graph, notes, "RmsNorm", MatchRmsNorm);
}

}  // namespace qairt::rewrite
