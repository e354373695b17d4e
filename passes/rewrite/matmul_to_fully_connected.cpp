// MatMul(x, W) with a static 2-D float W -> FullyConnected(x, W^T): the
// same product (x[..., K] times W[K, N]), but FullyConnected's weights are
// [N, K] with the output channel on axis 0, which targets quantize per
// channel (HTP's MatMul kernels take per-tensor weights only). A model whose
// exporter left projections as MatMul (transformers) then gets per-row
// weight scales, and a following bias Add folds into the FullyConnected
// (fold-affine-into-conv runs after this rewrite).
#include <fmt/format.h>

#include "passes/rewrite/graph_edit.h"
#include "passes/rewrite/rewrites.h"

namespace qairt::rewrite {

Result<size_t> MatMulToFullyConnected(Graph* graph, std::vector<std::string>* notes) {
  const Graph& g = *graph;
  GraphEdit edit(g);
  size_t n = 0;
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    if (op.type != "MatMul" || op.inputs.size() != 2 || op.outputs.size() != 1) continue;
    auto int_attr = [&](const char* k) {
      auto it = op.attrs.find(k);
      return it != op.attrs.end() && std::get_if<int64_t>(&it->second) ? std::get<int64_t>(it->second) : 0;
    };
    if (int_attr("transpose_in0")) continue;
    const bool transposed = int_attr("transpose_in1") != 0;
    const TensorId x = op.inputs[0], w = op.inputs[1];
    const Shape& ws = g.tensor(w).shape;
    const Shape& xs = g.tensor(x).shape;
    if (!ws.fully_known() || ws.rank() != 2 || !xs.rank_known() || xs.rank() < 2) continue;
    if (g.tensor(x).kind == TensorKind::kStatic) continue;
    auto values = FloatConstant(g, w);
    if (!values) continue;
    const int64_t rows = ws[0].value, cols = ws[1].value;  // [K, N], or [N, K] when transposed
    const int64_t k_dim = transposed ? cols : rows, n_dim = transposed ? rows : cols;
    if (xs[xs.rank() - 1].value != k_dim) continue;
    std::vector<float> wt(values->size());
    if (transposed) {
      wt = *values;
    } else {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          wt[static_cast<size_t>(c * rows + r)] = (*values)[static_cast<size_t>(r * cols + c)];
    }
    const TensorId wt_id =
        edit.NewConstantF32(edit.UniqueName(g.tensor(w).name + "_nk"), Shape{n_dim, k_dim}, wt);
    edit.Drop(id);
    edit.InsertAt(id, NewOp{"FullyConnected", op.name, {x, wt_id}, {op.outputs[0]}, {}, op.source_name,
                            op.source_op_type});
    notes->push_back(fmt::format("'{}' (MatMul by static '{}' [{}, {}]) -> FullyConnected", op.name,
                                 g.tensor(w).name, rows, cols));
    ++n;
  }
  if (Status st = edit.ApplyTo(graph); !st.ok()) return st;
  return n;
}

}  // namespace qairt::rewrite
