// Legalization for a target: ops the target has no kernel for, rewritten into
// equivalent ops it has, as the vendor converter does before quantization.
//  * QNN's HTP has no 1-D convolution: a Conv1d over [N, C, L] runs as a
//    Conv2d over [N, C, 1, L] between an ExpandDims and a Squeeze, its weight
//    viewed as [O, I, 1, K] (same bytes, same name, same encoding: per-channel
//    axis 0 and block axes are unchanged by the inserted unit axis).
//  * ReduceSumSquare (ONNX ReduceL2/ReduceSumSquare, F.normalize) runs as an
//    ElementWiseMultiply of x by itself and a ReduceSum.
#include "passes/legalize.h"

#include <fmt/format.h>

#include "passes/rewrite/graph_edit.h"

namespace qairt::pass {
namespace {

using Ints = std::vector<int64_t>;

std::vector<int64_t> AttrInts(const Op& op, const char* name) {
  auto it = op.attrs.find(name);
  if (it == op.attrs.end()) return {};
  if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  if (const auto* v = std::get_if<int64_t>(&it->second)) return {*v};
  return {};
}

// The 2-D attributes of a 1-D window op: a leading unit axis everywhere.
AttributeMap Attrs2d(const Op& op) {
  AttributeMap a = op.attrs;
  auto lead = [&](const char* name, int64_t unit) {
    Ints v = AttrInts(op, name);
    if (v.size() == 1) a[name] = Ints{unit, v[0]};
  };
  lead("strides", 1);
  lead("dilations", 1);
  lead("kernel_shape", 1);
  lead("output_padding", 0);
  lead("output_shape", 1);
  if (Ints pads = AttrInts(op, "pads"); pads.size() == 2) a["pads"] = Ints{0, pads[0], 0, pads[1]};
  return a;
}

bool Has(const target::Target& t, std::string_view op) {
  const auto* k = t.FindOp(op);
  return k && !k->kernels.empty();
}

}  // namespace

// ReduceSumSquare(x) = ReduceSum(x * x), same axes and keepdims. The square
// is a new activation (calibration sees it when it runs after this).
bool SumOfSquares(rewrite::GraphEdit& edit, const Graph& g, OpId id, const target::Target& target,
                  LegalizeReport* report) {
  const Op& op = g.op(id);
  if (op.type != "ReduceSumSquare" || Has(target, op.type) || !Has(target, "ReduceSum") ||
      !Has(target, "ElementWiseMultiply") || op.inputs.empty() || op.outputs.size() != 1)
    return false;
  const Tensor& x = g.tensor(op.inputs[0]);
  const TensorId sq = edit.NewActivation(edit.UniqueName(x.name + "_squared"));
  rewrite::NewOp mul{"ElementWiseMultiply", edit.UniqueName(op.name + "_square"), {op.inputs[0], op.inputs[0]}, {sq},
                     {}, op.source_name, op.source_op_type};
  std::vector<TensorId> inputs = op.inputs;
  inputs[0] = sq;
  rewrite::NewOp sum{"ReduceSum", op.name, inputs, op.outputs, op.attrs, op.source_name, op.source_op_type};
  edit.Drop(id);
  edit.InsertAt(id, std::move(mul));
  edit.InsertAt(id, std::move(sum));
  ++report->changed;
  ++report->by_type["ReduceSumSquare -> ElementWiseMultiply + ReduceSum"];
  report->notes.push_back(fmt::format("'{}' (ReduceSumSquare) runs as ElementWiseMultiply + ReduceSum: {} has no "
                                      "ReduceSumSquare kernel", op.name, target.name));
  return true;
}

Status LegalizeForTarget(Graph* graph, const target::Target& target, LegalizeReport* report) {
  *report = LegalizeReport{};
  rewrite::GraphEdit edit(*graph);
  const Graph& g = *graph;
  for (OpId id = 0; id < g.op_count(); ++id) {
    if (SumOfSquares(edit, g, id, target, report)) continue;
    const Op& op = g.op(id);
    const bool conv = op.type == "Conv1d", tconv = op.type == "TransposeConv1d";
    if ((!conv && !tconv) || Has(target, op.type) || op.inputs.size() < 2 || op.outputs.size() != 1) continue;
    const Tensor& x = g.tensor(op.inputs[0]);
    const Tensor& w = g.tensor(op.inputs[1]);
    const int64_t group = [&] {
      auto it = op.attrs.find("group");
      const auto* v = it == op.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
      return v ? *v : int64_t{1};
    }();
    const bool depthwise = conv && group > 1 && x.shape.rank() == 3 && x.shape[1].known() && x.shape[1].value == group &&
                           w.shape.rank() == 3 && w.shape[1].known() && w.shape[1].value == 1;
    const std::string type2d = tconv ? "TransposeConv2d" : depthwise ? "DepthWiseConv2d" : "Conv2d";
    if (!Has(target, type2d) || !w.shape.fully_known() || w.shape.rank() != 3) continue;

    rewrite::NewOp expand{"ExpandDims", edit.UniqueName(op.name + "_to_2d"), {op.inputs[0]}, {}, {{"axes", Ints{2}}},
                          op.source_name, op.source_op_type};
    const TensorId x4 = edit.NewActivation(edit.UniqueName(x.name + "_2d"));
    if (x.encoding) edit.SetEncoding(x4, *x.encoding);
    expand.outputs = {x4};

    // The weight as [O, I, 1, K]: a view of the same bytes. It keeps its name
    // (encodings files and exports refer to it) unless other ops read it.
    const Ints wd = w.shape.extents();
    const Shape w4_shape = Shape::FromExtents({wd[0], wd[1], 1, wd[2]});
    TensorId w4 = kInvalidId;
    std::vector<rewrite::NewOp> before;
    if (w.kind == TensorKind::kStatic) {
      const bool sole = rewrite::OnlyReadBy(g, op.inputs[1], {id}) || (w.consumers.size() == 1 && !w.is_output);
      w4 = edit.NewConstant(sole ? w.name : edit.UniqueName(w.name + "_2d"), w.dtype, w4_shape, w.data);
      if (w.encoding) edit.SetEncoding(w4, *w.encoding);
    } else {
      w4 = edit.NewActivation(edit.UniqueName(w.name + "_2d"));
      if (w.encoding) edit.SetEncoding(w4, *w.encoding);
      before.push_back({"ExpandDims", edit.UniqueName(op.name + "_weight_to_2d"), {op.inputs[1]}, {w4},
                        {{"axes", Ints{2}}}, op.source_name, op.source_op_type});
    }

    const Tensor& y = g.tensor(op.outputs[0]);
    const TensorId y4 = edit.NewActivation(edit.UniqueName(y.name + "_2d"));
    if (y.encoding) edit.SetEncoding(y4, *y.encoding);
    std::vector<TensorId> inputs = {x4, w4};
    for (size_t k = 2; k < op.inputs.size(); ++k) inputs.push_back(op.inputs[k]);
    AttributeMap attrs = Attrs2d(op);
    if (depthwise) attrs.erase("group");
    rewrite::NewOp conv2d{type2d, op.name, inputs, {y4}, std::move(attrs), op.source_name, op.source_op_type};
    rewrite::NewOp squeeze{"Squeeze", edit.UniqueName(op.name + "_from_2d"), {y4}, {op.outputs[0]},
                           {{"axes", Ints{2}}}, op.source_name, op.source_op_type};

    edit.Drop(id);
    edit.InsertAt(id, std::move(expand));
    for (auto& b : before) edit.InsertAt(id, std::move(b));
    edit.InsertAt(id, std::move(conv2d));
    edit.InsertAt(id, std::move(squeeze));
    ++report->changed;
    ++report->by_type[op.type + " -> " + type2d];
    report->notes.push_back(fmt::format("'{}' ({}) runs as {} over [N, C, 1, L]: {} has no {} kernel", op.name,
                                        op.type, type2d, target.name, op.type));
  }
  return edit.ApplyTo(graph);
}

std::string LegalizeSummary(const LegalizeReport& r, std::string_view target_name) {
  if (r.changed == 0) return {};
  std::string s;
  for (const auto& [what, n] : r.by_type)
    s += fmt::format("{}{} {} op{}", s.empty() ? "" : ", ", n, what, n == 1 ? "" : "s");
  return fmt::format("legalized for {}: {} (ops without a kernel there, rewritten into equivalent ones)", target_name, s);
}

}  // namespace qairt::pass
