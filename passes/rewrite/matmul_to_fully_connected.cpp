// MatMul(x, W) with a static 2-D float W -> FullyConnected(x, W^T): the
// same product (x[..., K] times W[K, N]), but FullyConnected's weights are
// [N, K] with the output channel on axis 0, which targets quantize per
// channel (HTP's MatMul kernels take per-tensor weights only). A model whose
// exporter left projections as MatMul (transformers) then gets per-row
// weight scales, and a following bias Add folds into the FullyConnected
// (fold-affine-into-conv runs after this rewrite). A weight that is already
// quantized (a Q-DQ model) moves with its encoding.
#include <fmt/format.h>

#include <cstring>

#include "kernels/ops.h"

#include "passes/rewrite/graph_edit.h"
#include "passes/rewrite/rewrites.h"

namespace qairt::rewrite {

namespace {

// A quantized static weight (from a Q-DQ model: integers with a per-tensor or
// per-channel encoding) as FullyConnected's [N, K]: the values transposed
// element by element and the per-channel axis moved with them, so the
// rewrite stays exact and ONNX Runtime's per-output-channel MatMul weights
// (axis 1 of [K, N]) become per-row FullyConnected weights (axis 0), which
// the target quantizes per channel. kInvalidId when the weight is not such
// a tensor (sub-byte packed or blockwise weights are left as MatMul).
TensorId QuantizedWeightNK(GraphEdit* edit, const Graph& g, TensorId w, bool already_nk) {
  const Tensor& t = g.tensor(w);
  if (t.kind != TensorKind::kStatic || !t.data || !t.encoding) return kInvalidId;
  const Encoding& e = *t.encoding;
  if (e.kind != EncodingKind::kPerTensor && e.kind != EncodingKind::kPerChannel) return kInvalidId;
  if (already_nk) return w;  // already [N, K] with its own encoding
  const uint32_t bits = DTypeBits(t.dtype);
  if (bits == 0 || bits % 8 != 0) return kInvalidId;
  const size_t elem = bits / 8;
  const int64_t rows = t.shape[0].value, cols = t.shape[1].value;
  if (t.data->size() != static_cast<size_t>(rows * cols) * elem) return kInvalidId;
  std::vector<uint8_t> out(t.data->size());
  const uint8_t* in = t.data->data();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&out[static_cast<size_t>(c * rows + r) * elem], &in[static_cast<size_t>(r * cols + c) * elem], elem);
  const TensorId id = edit->NewConstant(edit->UniqueName(t.name + "_nk"), t.dtype, Shape{cols, rows},
                                        StaticData::Adopt(std::move(out)));
  Encoding moved = e;
  if (moved.kind == EncodingKind::kPerChannel) moved.axis = moved.axis == 1 ? 0 : 1;
  edit->SetEncoding(id, std::move(moved));
  return id;
}

// A static float32 weight of `elements` values: unquantized, or carrying an
// encoding given for the float values (overrides).
bool IsFloatWeight(const Tensor& t, int64_t elements) {
  if (t.kind != TensorKind::kStatic || t.dtype != DType::kFloat32 || !t.data) return false;
  if (t.data->size() != static_cast<size_t>(elements) * sizeof(float)) return false;
  // A quantized weight of a Q-DQ model is stored as integers, never float32;
  // a float32 one with an encoding is an override of the float values.
  return true;
}

}  // namespace

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
    const int64_t rows = ws[0].value, cols = ws[1].value;  // [K, N], or [N, K] when transposed
    const int64_t k_dim = transposed ? cols : rows, n_dim = transposed ? rows : cols;
    if (xs[xs.rank() - 1].value != k_dim) continue;
    TensorId wt_id = kInvalidId;
    if (const Tensor& wten = g.tensor(w); IsFloatWeight(wten, rows * cols)) {
      // An encoding given for the float weight (overrides) moves with it.
      const auto& given = wten.encoding;
      if (given && given->kind != EncodingKind::kPerTensor && given->kind != EncodingKind::kPerChannel &&
          given->kind != EncodingKind::kFloat)
        continue;
      // Already [N, K]: the same bytes (a mapped weight stays mapped).
      // Otherwise a transposed view of the source bytes: quantization reads
      // it in bands of source rows and the executor multiplies by the source as it is,
      // so the float transpose is made only if something needs its bytes.
      std::shared_ptr<const StaticData> data = wten.data;
      if (!transposed)
        data = StaticData::TransposeOf(wten.data, sizeof(float), rows, cols, [rows, cols](const uint8_t* in, uint8_t* out) {
          kernels::Transpose2D(sizeof(float), rows, cols, in, out);
        });
      wt_id = edit.NewConstant(edit.UniqueName(wten.name + "_nk"), DType::kFloat32, Shape{n_dim, k_dim},
                               std::move(data));
      if (given) {
        Encoding moved = *given;
        if (moved.kind == EncodingKind::kPerChannel && !transposed) moved.axis = moved.axis == 1 ? 0 : 1;
        edit.SetEncoding(wt_id, std::move(moved));
      }
    } else {
      wt_id = QuantizedWeightNK(&edit, g, w, transposed);
      if (wt_id == kInvalidId) continue;
    }
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
