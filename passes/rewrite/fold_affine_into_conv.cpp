// Folds a constant per-channel affine op that follows a convolution or a
// FullyConnected into its weights and bias:
//   conv(x) * a  -> conv'(x)  with W' = W a, b' = b a   (Divide: a = 1/c)
//   conv(x) + c  -> conv'(x)  with b' = b + c           (Subtract: c = -c)
//   c - conv(x)  -> conv'(x)  with W' = -W, b' = c - b
//   Batchnorm(conv(x), s, t) -> W' = W s, b' = b s + t
// Exporters leave these behind (HardSigmoid's alpha*x + beta after an SE
// conv, BatchNorm that could not be folded at import, input scaling); each
// one is a requantization of the whole activation once quantized. Exact up
// to float rounding: the conv's output channel is the only thing the
// constant varies along. Runs to a fixed point (Mul then Add both fold).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ir/batchnorm_fold.h"
#include "passes/rewrite/graph_edit.h"
#include "passes/rewrite/rewrites.h"

namespace qairt::rewrite {
namespace {

// The affine map `op` applies to `t` (its input from the conv), if it is one.
std::optional<ChannelAffine> AffineOf(const Graph& g, const Op& op, TensorId t, size_t rank, size_t axis,
                                      int64_t channels) {
  const size_t n = static_cast<size_t>(channels);
  if (op.type == "Batchnorm") {
    if (op.inputs.empty() || op.inputs[0] != t || axis != 1) return std::nullopt;
    auto s = PerChannelConstant(g, op.inputs.size() > 1 ? op.inputs[1] : kInvalidId, 1, 0, channels);
    if (!s) return std::nullopt;
    std::vector<float> b(n, 0.0f);
    if (op.inputs.size() > 2 && op.inputs[2] != kInvalidId) {
      auto bb = PerChannelConstant(g, op.inputs[2], 1, 0, channels);
      if (!bb) return std::nullopt;
      b = *bb;
    }
    return ChannelAffine{*s, b};
  }
  const TensorId other = OtherInput(op, t);
  if (other == kInvalidId || op.inputs[0] == op.inputs[1]) return std::nullopt;
  auto c = PerChannelConstant(g, other, rank, axis, channels);
  if (!c) return std::nullopt;
  const bool t_first = op.inputs[0] == t;
  if (op.type == "ElementWiseMultiply") return ChannelAffine{*c, std::vector<float>(n, 0.0f)};
  if (op.type == "ElementWiseAdd") return ChannelAffine{std::vector<float>(n, 1.0f), *c};
  if (op.type == "ElementWiseDivide" && t_first) {
    ChannelAffine a{std::vector<float>(n), std::vector<float>(n, 0.0f)};
    for (size_t k = 0; k < n; ++k) {
      if ((*c)[k] == 0.0f) return std::nullopt;
      a.scale[k] = 1.0f / (*c)[k];
    }
    return a;
  }
  if (op.type == "ElementWiseSubtract") {
    if (t_first) {
      ChannelAffine a{std::vector<float>(n, 1.0f), *c};
      for (float& v : a.shift) v = -v;
      return a;
    }
    return ChannelAffine{std::vector<float>(n, -1.0f), *c};
  }
  return std::nullopt;
}

// One fold; returns whether it changed the graph.
Result<bool> FoldOnce(Graph* graph, std::vector<std::string>* notes) {
  const Graph& g = *graph;
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& conv = g.op(id);
    const bool fc = conv.type == "FullyConnected";
    if (!fc && conv.type != "Conv2d" && conv.type != "DepthWiseConv2d" && conv.type != "Conv1d" &&
        conv.type != "Conv3d")
      continue;
    if (conv.inputs.size() < 2 || conv.outputs.size() != 1) continue;
    // Checked without reading the weights: they are copied only for a fold
    // that scales them (a projection's weight can be most of a gigabyte).
    const Tensor& wt = g.tensor(conv.inputs[1]);
    if (wt.kind != TensorKind::kStatic || wt.dtype != DType::kFloat32 || wt.encoding || !wt.data) continue;
    const TensorId out = conv.outputs[0];
    const Shape& os = g.tensor(out).shape;
    if (!os.fully_known() || os.rank() < 2) continue;
    const size_t axis = fc ? os.rank() - 1 : 1;
    const int64_t channels = os[axis].value;
    const Shape& ws = g.tensor(conv.inputs[1]).shape;
    if (!ws.rank_known() || ws.rank() < 2 || ws[0].value != channels) continue;  // [O, ...] weights
    std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kInvalidId;
    if (has_bias) {
      auto b = FloatConstant(g, conv.inputs[2]);
      if (!b || static_cast<int64_t>(b->size()) != channels) continue;
      bias = *b;
    }
    auto next = SoleConsumer(g, out);
    if (!next) continue;
    const Op& aff_op = g.op(*next);
    if (aff_op.outputs.size() != 1) continue;
    auto aff = AffineOf(g, aff_op, out, os.rank(), axis, channels);
    if (!aff) continue;
    // The affine op must not broadcast the conv's output to a larger shape.
    if (g.tensor(aff_op.outputs[0]).shape != os) continue;

    // A shift alone (a bias Add) leaves the weights as they are: shared.
    const bool scales = std::any_of(aff->scale.begin(), aff->scale.end(), [](float v) { return v != 1.0f; });
    std::optional<std::vector<float>> w;
    if (scales) {
      w = FloatConstant(g, conv.inputs[1]);
      if (!w || !FoldChannelAffineIntoConv(*aff, ConvWeightLayout{}, &*w, &bias)) continue;
    } else {
      // bias * 1 + shift, as the fold computes it, with the weights untouched.
      if (aff->shift.size() != bias.size()) continue;
      for (size_t c = 0; c < bias.size(); ++c) bias[c] = bias[c] + aff->shift[c];
    }
    GraphEdit edit(g);
    NewOp folded{conv.type, conv.name, {conv.inputs[0]}, {aff_op.outputs[0]}, conv.attrs, conv.source_name,
                 conv.source_op_type};
    folded.inputs.push_back(scales ? edit.NewConstantF32(edit.UniqueName(wt.name + "_folded"), ws, *w)
                                   : conv.inputs[1]);
    folded.inputs.push_back(edit.NewConstantF32(
        edit.UniqueName(has_bias ? g.tensor(conv.inputs[2]).name + "_folded" : conv.name + "_bias"),
        Shape{channels}, bias));
    notes->push_back(fmt::format("'{}' ({}) absorbed '{}' ({})", conv.name, conv.type, aff_op.name, aff_op.type));
    edit.Drop(id);
    edit.Drop(*next);
    edit.InsertAt(*next, std::move(folded));
    auto rebuilt = edit.Apply();
    if (!rebuilt.ok()) return rebuilt.status();
    *graph = std::move(rebuilt).value();
    return true;
  }
  return false;
}

}  // namespace

Result<size_t> FoldAffineIntoConv(Graph* graph, std::vector<std::string>* notes) {
  size_t n = 0;
  for (;;) {
    auto changed = FoldOnce(graph, notes);
    if (!changed.ok()) return changed.status();
    if (!changed.value()) return n;
    ++n;
  }
}

}  // namespace qairt::rewrite
