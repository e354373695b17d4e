// Legalization for a target: ops the target has no kernel for, rewritten into
// equivalent ops it has, as the vendor converter does before quantization.
//  * QNN's HTP has no 1-D convolution: a Conv1d over [N, C, L] runs as a
//    Conv2d over [N, C, 1, L] between an ExpandDims and a Squeeze, its weight
//    viewed as [O, I, 1, K] (same bytes, same name, same encoding: per-channel
//    axis 0 and block axes are unchanged by the inserted unit axis).
//  * ReduceSumSquare (ONNX ReduceL2/ReduceSumSquare, F.normalize) runs as an
//    ElementWiseMultiply of x by itself and a ReduceSum.
//  * Lstm and Gru are unrolled over their time steps into FullyConnected,
//    Sigmoid, Tanh and element-wise ops (the vendor converter's
//    unroll_lstm_time_steps / unroll_gru_time_steps defaults).
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

std::shared_ptr<const StaticData> FloatsData(const std::vector<float>& v) {
  return StaticData::Copy(v.data(), v.size() * sizeof(float));
}

// Lstm / Gru (ONNX semantics, layout 0: X[seq, batch, I]) unrolled. Per
// direction d and step t: gates = FC(x_t, W_d, Wb_d + Rb_d) + FC(h, R_d),
// split in ONNX's gate order (LSTM i, o, f, c; GRU z, r, h). Needs static
// W, R, B, static shapes, no sequence_lens and no peepholes.
bool UnrollRecurrent(rewrite::GraphEdit& edit, const Graph& g, OpId id, const target::Target& target,
                     LegalizeReport* report) {
  const Op& op = g.op(id);
  const bool lstm = op.type == "Lstm";
  // The vendor converter unrolls recurrent ops for HTP and LPAI whatever
  // their descriptors list (unroll_*_time_steps defaults to true).
  const bool unrolls = target.backend == target::Backend::kHtp || target.backend == target::Backend::kLpai;
  if ((!lstm && op.type != "Gru") || (Has(target, op.type) && !unrolls)) return false;
  for (const char* need : {"FullyConnected", "Sigmoid", "Tanh", "ElementWiseMultiply", "ElementWiseAdd", "Split",
                           "Concat", "Reshape", "ExpandDims"})
    if (!Has(target, need)) return false;
  auto in = [&](size_t k) { return k < op.inputs.size() ? op.inputs[k] : kInvalidId; };
  auto out = [&](size_t k) { return k < op.outputs.size() ? op.outputs[k] : kInvalidId; };
  auto attr_int = [&](const char* name, int64_t dflt) {
    auto it = op.attrs.find(name);
    const auto* v = it == op.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
    return v ? *v : dflt;
  };
  auto attr_str = [&](const char* name, std::string dflt) {
    auto it = op.attrs.find(name);
    const auto* v = it == op.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
    return v ? *v : dflt;
  };
  if (attr_int("layout", 0) != 0 || in(4) != kInvalidId || (lstm && in(7) != kInvalidId)) return false;
  const Tensor& x = g.tensor(in(0));
  const Tensor& w = g.tensor(in(1));
  const Tensor& r = g.tensor(in(2));
  auto static_f32 = [&](const Tensor& t) {
    return t.kind == TensorKind::kStatic && t.dtype == DType::kFloat32 && t.data && !t.encoding && t.shape.fully_known();
  };
  if (!x.shape.fully_known() || x.shape.rank() != 3 || !static_f32(w) || !static_f32(r)) return false;
  if (in(3) != kInvalidId && !static_f32(g.tensor(in(3)))) return false;
  const std::string direction = attr_str("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t G = lstm ? 4 : 3, seq = x.shape[0].value, batch = x.shape[1].value, I = x.shape[2].value;
  const int64_t H = r.shape[2].value, GH = G * H;
  const bool lbr = !lstm && attr_int("linear_before_reset", 0) != 0;
  const float* wf = reinterpret_cast<const float*>(w.data->data());
  const float* rf = reinterpret_cast<const float*>(r.data->data());
  const float* bf = in(3) != kInvalidId ? reinterpret_cast<const float*>(g.tensor(in(3)).data->data()) : nullptr;
  const std::string base = op.name;
  auto name = [&](const std::string& s) { return edit.UniqueName(base + "/" + s); };
  auto emit = [&](const std::string& type, std::vector<TensorId> ins, AttributeMap attrs, const std::string& tag,
                  size_t n_out = 1, std::vector<TensorId> outs = {}) {
    if (outs.empty())
      for (size_t k = 0; k < n_out; ++k) outs.push_back(edit.NewActivation(name(tag + (n_out > 1 ? std::to_string(k) : ""))));
    edit.InsertAt(id, rewrite::NewOp{type, name(tag), std::move(ins), outs, std::move(attrs), op.source_name,
                                     op.source_op_type});
    return outs;
  };
  using Ints = std::vector<int64_t>;
  // x_t as [batch, I], once for all directions.
  std::vector<TensorId> xs;
  if (seq == 1) {
    xs = emit("Reshape", {in(0)}, {{"shape", Ints{batch, I}}}, "x_0");
  } else {
    auto parts = emit("Split", {in(0)}, {{"axis", int64_t{0}}, {"split", Ints(static_cast<size_t>(seq), 1)}}, "x_steps",
                      static_cast<size_t>(seq));
    for (int64_t t = 0; t < seq; ++t)
      xs.push_back(emit("Reshape", {parts[static_cast<size_t>(t)]}, {{"shape", Ints{batch, I}}}, "x_" + std::to_string(t))[0]);
  }
  std::vector<std::vector<TensorId>> ys(static_cast<size_t>(dirs));  // per direction, per time index: h_t [batch, H]
  std::vector<TensorId> h_last, c_last;
  for (int64_t d = 0; d < dirs; ++d) {
    const std::string dn = "d" + std::to_string(d);
    const bool reverse = direction == "reverse" || d == 1;
    std::vector<float> wd(wf + d * GH * I, wf + (d + 1) * GH * I), rd(rf + d * GH * H, rf + (d + 1) * GH * H);
    std::vector<float> bias(static_cast<size_t>(GH), 0.0f), rbh(static_cast<size_t>(H), 0.0f);
    for (int64_t j = 0; bf && j < GH; ++j) {
      const float wb = bf[d * 2 * GH + j], rb = bf[d * 2 * GH + GH + j];
      const bool inner = lbr && j >= 2 * H;  // GRU linear_before_reset: Rbh stays inside r * (...)
      bias[static_cast<size_t>(j)] = wb + (inner ? 0.0f : rb);
      if (inner) rbh[static_cast<size_t>(j - 2 * H)] = rb;
    }
    const TensorId wt = edit.NewConstant(name(dn + "_W"), DType::kFloat32, Shape{GH, I}, FloatsData(wd));
    const TensorId bt = edit.NewConstant(name(dn + "_B"), DType::kFloat32, Shape{GH}, FloatsData(bias));
    // LSTM and GRU without linear_before_reset: one recurrent product for all gates.
    const TensorId rt = edit.NewConstant(name(dn + "_R"), DType::kFloat32, Shape{GH, H}, FloatsData(rd));
    // Initial state: initial_h/initial_c[d] or zeros.
    auto state0 = [&](TensorId init, const std::string& tag) -> TensorId {
      if (init == kInvalidId)
        return edit.NewConstant(name(dn + "_" + tag + "0"), DType::kFloat32, Shape{batch, H},
                                FloatsData(std::vector<float>(static_cast<size_t>(batch * H), 0.0f)));
      auto part = dirs == 1 ? std::vector<TensorId>{init}
                            : emit("Split", {init}, {{"axis", int64_t{0}}, {"split", Ints{1, 1}}}, dn + "_" + tag + "0s", 2);
      return emit("Reshape", {part[static_cast<size_t>(dirs == 1 ? 0 : d)]}, {{"shape", Ints{batch, H}}},
                  dn + "_" + tag + "0")[0];
    };
    TensorId h = state0(in(5), "h");
    TensorId c = lstm ? state0(in(6), "c") : kInvalidId;
    ys[static_cast<size_t>(d)].assign(static_cast<size_t>(seq), kInvalidId);
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = reverse ? seq - 1 - s : s;
      const std::string tn = dn + "_t" + std::to_string(t);
      const TensorId xw = emit("FullyConnected", {xs[static_cast<size_t>(t)], wt, bt}, {}, tn + "_xw")[0];
      const Ints split_g(static_cast<size_t>(G), H);
      if (lstm) {
        const TensorId hr = emit("FullyConnected", {h, rt}, {}, tn + "_hr")[0];
        const TensorId pre = emit("ElementWiseAdd", {xw, hr}, {}, tn + "_gates")[0];
        auto gs = emit("Split", {pre}, {{"axis", int64_t{1}}, {"split", split_g}}, tn + "_iofc", 4);
        const TensorId ig = emit("Sigmoid", {gs[0]}, {}, tn + "_i")[0];
        const TensorId og = emit("Sigmoid", {gs[1]}, {}, tn + "_o")[0];
        const TensorId fg = emit("Sigmoid", {gs[2]}, {}, tn + "_f")[0];
        const TensorId cg = emit("Tanh", {gs[3]}, {}, tn + "_g")[0];
        const TensorId fc = emit("ElementWiseMultiply", {fg, c}, {}, tn + "_fc")[0];
        const TensorId icg = emit("ElementWiseMultiply", {ig, cg}, {}, tn + "_ig")[0];
        c = emit("ElementWiseAdd", {fc, icg}, {}, tn + "_c")[0];
        const TensorId tc = emit("Tanh", {c}, {}, tn + "_tanh_c")[0];
        h = emit("ElementWiseMultiply", {og, tc}, {}, tn + "_h")[0];
      } else {
        // z, r from the sum; the candidate keeps x and h parts apart.
        auto xg = emit("Split", {xw}, {{"axis", int64_t{1}}, {"split", split_g}}, tn + "_xzrh", 3);
        const TensorId hr = emit("FullyConnected", {h, rt}, {}, tn + "_hr")[0];
        auto hg = emit("Split", {hr}, {{"axis", int64_t{1}}, {"split", split_g}}, tn + "_hzrh", 3);
        const TensorId z = emit("Sigmoid", {emit("ElementWiseAdd", {xg[0], hg[0]}, {}, tn + "_zsum")[0]}, {}, tn + "_z")[0];
        const TensorId rg = emit("Sigmoid", {emit("ElementWiseAdd", {xg[1], hg[1]}, {}, tn + "_rsum")[0]}, {}, tn + "_r")[0];
        TensorId cand_h;
        if (lbr) {
          const TensorId rb = edit.NewConstant(name(dn + "_Rbh"), DType::kFloat32, Shape{H}, FloatsData(rbh));
          const TensorId hb = emit("ElementWiseAdd", {hg[2], rb}, {}, tn + "_hb")[0];
          cand_h = emit("ElementWiseMultiply", {rg, hb}, {}, tn + "_rh")[0];
        } else {
          // (r * h) R_h: the candidate's recurrent product runs on the reset state.
          std::vector<float> rh_w(rd.begin() + 2 * H * H, rd.end());
          const TensorId rhw = edit.NewConstant(name(dn + "_Rh"), DType::kFloat32, Shape{H, H}, FloatsData(rh_w));
          const TensorId rs = emit("ElementWiseMultiply", {rg, h}, {}, tn + "_rstate")[0];
          cand_h = emit("FullyConnected", {rs, rhw}, {}, tn + "_rh")[0];
        }
        const TensorId cand = emit("Tanh", {emit("ElementWiseAdd", {xg[2], cand_h}, {}, tn + "_nsum")[0]}, {}, tn + "_n")[0];
        // h = n + z * (h - n)
        const TensorId diff = emit("ElementWiseSubtract", {h, cand}, {}, tn + "_hn")[0];
        const TensorId zd = emit("ElementWiseMultiply", {z, diff}, {}, tn + "_zhn")[0];
        h = emit("ElementWiseAdd", {cand, zd}, {}, tn + "_h")[0];
      }
      ys[static_cast<size_t>(d)][static_cast<size_t>(t)] = h;
    }
    h_last.push_back(h);
    c_last.push_back(c);
  }
  // Y [seq, dirs, batch, H], Y_h / Y_c [dirs, batch, H].
  auto stack = [&](const std::vector<TensorId>& parts, int64_t axis, const std::string& tag, TensorId dst) {
    std::vector<TensorId> expanded;
    for (size_t k = 0; k < parts.size(); ++k)
      expanded.push_back(emit("ExpandDims", {parts[k]}, {{"axes", Ints{axis}}}, tag + "_e" + std::to_string(k))[0]);
    if (expanded.size() == 1) {
      emit("Reshape", {expanded[0]}, {{"shape", g.tensor(dst).shape.extents()}}, tag, 1, {dst});
      return;
    }
    emit("Concat", expanded, {{"axis", axis}}, tag, 1, {dst});
  };
  if (out(0) != kInvalidId) {
    std::vector<TensorId> per_dir;
    for (int64_t d = 0; d < dirs; ++d) {
      std::vector<TensorId> steps;
      for (int64_t t = 0; t < seq; ++t) steps.push_back(emit("ExpandDims", {ys[static_cast<size_t>(d)][static_cast<size_t>(t)]},
                                                             {{"axes", Ints{0}}}, "y_d" + std::to_string(d) + "_" + std::to_string(t))[0]);
      const TensorId seq_d = steps.size() == 1 ? steps[0]
                                               : emit("Concat", steps, {{"axis", int64_t{0}}}, "y_d" + std::to_string(d))[0];
      per_dir.push_back(seq_d);
    }
    stack(per_dir, 1, "y", out(0));
  }
  if (out(1) != kInvalidId) stack(h_last, 0, "y_h", out(1));
  if (lstm && out(2) != kInvalidId) stack(c_last, 0, "y_c", out(2));
  edit.Drop(id);
  ++report->changed;
  ++report->by_type[op.type + " -> unrolled over " + std::to_string(seq) + " steps"];
  report->notes.push_back(fmt::format("'{}' ({}) unrolled over its {} time steps{} for {}, as the vendor converter "
                                      "does", op.name, op.type, seq, dirs == 2 ? " in both directions" : "",
                                      target.name));
  return true;
}

Status LegalizeForTarget(Graph* graph, const target::Target& target, LegalizeReport* report) {
  *report = LegalizeReport{};
  rewrite::GraphEdit edit(*graph);
  const Graph& g = *graph;
  for (OpId id = 0; id < g.op_count(); ++id) {
    if (SumOfSquares(edit, g, id, target, report) || UnrollRecurrent(edit, g, id, target, report)) continue;
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
