// Recurrent ops in ONNX's input/output layout:
//   X [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1),
//   W [dirs, gates*H, input], R [dirs, gates*H, H], B [dirs, 2*gates*H],
//   sequence_lens [batch], initial_h/initial_c [dirs, batch, H], P [dirs, 3H];
//   Y [seq, dirs, batch, H], Y_h/Y_c [dirs, batch, H] (batch first for layout 1).
#include "ir/ops/families.h"
#include "ir/ops/shape_helpers.h"

namespace qairt::ops {
namespace {

Dim DimOr(const Shape& s, size_t i) { return s.rank_known() && i < s.rank() ? s[i] : Dim(); }

// Reports when optional input i is present and conflicts with `expected`.
void CheckInputShape(InferContext& ctx, size_t i, const Shape& expected, std::string_view role) {
  if (!ctx.has_input(i) || !ShapesConflict(ctx.input(i).shape, expected)) return;
  ctx.Error(DiagKind::kShapeMismatch, InputField(i), "{} has shape {}, expected {}", role,
            ctx.input(i).shape.ToString(), expected.ToString());
}

struct RecurrentSpec {
  int64_t gates;       // 4 for LSTM (i, o, f, c), 3 for GRU (z, r, h)
  bool has_cell;       // LSTM: initial_c input and Y_c output
};

void InferRecurrent(InferContext& ctx, const RecurrentSpec& spec) {
  const TensorType& x = InputOrUnknown(ctx, 0);
  const Shape& r = InputOrUnknown(ctx, 2).shape;
  const std::string direction = ctx.String("direction", "forward");
  int64_t dirs = 1;
  if (direction == "bidirectional") {
    dirs = 2;
  } else if (direction != "forward" && direction != "reverse") {
    ctx.Error(DiagKind::kAttribute, "direction", "direction must be forward, reverse or bidirectional, got '{}'",
              direction);
  }
  const int64_t layout = ctx.Int("layout", 0);
  if (layout != 0 && layout != 1) ctx.Error(DiagKind::kAttribute, "layout", "layout must be 0 or 1, got {}", layout);
  const bool batch_first = layout == 1;
  CheckRank(ctx, 0, 3);
  CheckRank(ctx, 1, 3);
  CheckRank(ctx, 2, 3);

  Dim hidden = DimOr(r, 2);
  if (ctx.has_attr("hidden_size")) {
    const int64_t h = ctx.Int("hidden_size", -1);
    if (h < 1) ctx.Error(DiagKind::kAttribute, "hidden_size", "hidden_size must be >= 1, got {}", h);
    else hidden = Dim(h);
  }
  const Dim seq = DimOr(x.shape, batch_first ? 1 : 0);
  const Dim batch = DimOr(x.shape, batch_first ? 0 : 1);
  const Dim gate_rows = hidden.known() ? Dim(CheckedMul(hidden.value, spec.gates).value_or(-1)) : Dim();
  const Dim bias_len = hidden.known() ? Dim(CheckedMul(hidden.value, 2 * spec.gates).value_or(-1)) : Dim();
  const Dim d(dirs);
  CheckInputShape(ctx, 1, Shape{d, gate_rows, DimOr(x.shape, 2)}, "W");
  CheckInputShape(ctx, 2, Shape{d, gate_rows, hidden}, "R");
  CheckInputShape(ctx, 3, Shape{d, bias_len}, "B");
  CheckInputShape(ctx, 4, Shape{batch}, "sequence_lens");
  const Shape state = batch_first ? Shape{batch, d, hidden} : Shape{d, batch, hidden};
  CheckInputShape(ctx, 5, state, "initial_h");
  if (spec.has_cell) {
    CheckInputShape(ctx, 6, state, "initial_c");
    CheckInputShape(ctx, 7, Shape{d, hidden.known() ? Dim(CheckedMul(hidden.value, 3).value_or(-1)) : Dim()}, "P");
  }
  const Shape y = batch_first ? Shape{batch, seq, d, hidden} : Shape{seq, d, batch, hidden};
  SetOutput(ctx, 0, x.dtype, y);
  SetOutput(ctx, 1, x.dtype, state);
  if (spec.has_cell) SetOutput(ctx, 2, x.dtype, state);
}

void InferLstm(InferContext& ctx) { InferRecurrent(ctx, {4, true}); }
void InferGru(InferContext& ctx) { InferRecurrent(ctx, {3, false}); }

}  // namespace

void RegisterRecurrentOps(std::vector<OpSchema>* out) {
  out->push_back({"Lstm", 3, 8, 1, 3, InferLstm,
                  "X[seq,batch,I], W[dirs,4H,I], R[dirs,4H,H], B?[dirs,8H], sequence_lens?[batch], initial_h?[dirs,batch,H], "
                  "initial_c?[dirs,batch,H], P?[dirs,3H] -> Y?[seq,dirs,batch,H], Y_h?, Y_c?[dirs,batch,H]; hidden_size "
                  "(or from R), direction, layout (0)"});
  out->push_back({"Gru", 3, 6, 1, 2, InferGru,
                  "X[seq,batch,I], W[dirs,3H,I], R[dirs,3H,H], B?[dirs,6H], sequence_lens?[batch], initial_h?[dirs,batch,H] "
                  "-> Y?[seq,dirs,batch,H], Y_h?[dirs,batch,H]; hidden_size (or from R), direction, layout (0), "
                  "linear_before_reset"});
}

}  // namespace qairt::ops
