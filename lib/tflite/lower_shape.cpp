// Lowering of TFLite's data-movement, shape and reduction builtins: RESHAPE /
// SQUEEZE / EXPAND_DIMS, TRANSPOSE, CONCATENATION, PAD / PADV2, SLICE /
// STRIDED_SLICE, SPLIT / SPLIT_V, GATHER, PACK and the reductions (MEAN, SUM,
// REDUCE_MAX/MIN/PROD).
#include <algorithm>
#include <cstdint>

#include <fmt/ranges.h>

#include "tflite/tflite_importer.h"

namespace qairt::tflite_import {
namespace {

// Position of NHWC axis a in NCHW.
int64_t NchwAxis(int64_t a) { return a == 0 ? 0 : a == 3 ? 1 : a + 1; }

}  // namespace

Status LowerReduce(OpCtx& c) {
  Importer& imp = c.imp;
  const Val& x = imp.In(c, 0);
  auto axes = imp.ConstInts(imp.In(c, 1));
  if (!axes) return imp.Fail(c, "inputs[1]", "reduction axes must be an int32/int64 constant");
  const auto r = static_cast<int64_t>(x.shape.rank());
  for (int64_t& a : *axes) {
    if (a < -r || a >= r) return imp.Fail(c, "inputs[1]", "axis {} is out of range for rank {}", a, r);
    if (a < 0) a += r;
  }
  const auto* o = c.op.builtin_options_as_ReducerOptions();
  const bool keep = o && o->keep_dims();
  std::string type;
  switch (c.code) {
    case kMean: type = "ReduceMean"; break;
    case kSum: type = "ReduceSum"; break;
    case kReduceMax: type = "ReduceMax"; break;
    case kReduceMin: type = "ReduceMin"; break;
    default: type = "ReduceProd"; break;
  }
  // Over H and W of an NCHW-only input: reduce in NCHW (without keep_dims the
  // remaining [N, C] order is the same in both layouts).
  const bool hw = std::find(axes->begin(), axes->end(), 1) != axes->end() &&
                  std::find(axes->begin(), axes->end(), 2) != axes->end();
  if (NchwOnly(x) && r == 4 && (keep || hw)) {
    Ints mapped;
    for (int64_t a : *axes) mapped.push_back(NchwAxis(a));
    std::sort(mapped.begin(), mapped.end());
    TRY(xin, imp.GetNchw(c, 0));
    return Done(imp.Emit(c, type, {xin}, {{"axes", mapped}, {"keepdims", int64_t{keep}}}, 0, keep));
  }
  TRY(xin, imp.Get(c, 0));
  return Done(imp.Emit(c, type, {xin}, {{"axes", *axes}, {"keepdims", int64_t{keep}}}));
}

namespace {

// The output shape of RESHAPE / SQUEEZE / EXPAND_DIMS on resized inputs,
// where the file's declared shape no longer holds: from the op's own operands
// and its input's shape, with at most one dim left -1 for Reshape to infer.
Result<Ints> ResizedReshapeTarget(OpCtx& c) {
  Importer& imp = c.imp;
  const Val& x = imp.In(c, 0);
  const Val& y = imp.Out(c, 0);
  if (!x.shape.fully_known())
    return imp.Fail(c, "inputs[0]", "input '{}' has shape {} after the resize: the new shape cannot be computed",
                    x.name, x.shape.ToString());
  const Ints xs = x.shape.extents();
  const auto r = static_cast<int64_t>(xs.size());
  if (c.code == kSqueeze) {
    const auto* o = c.op.builtin_options_as_SqueezeOptions();
    std::vector<bool> drop(xs.size(), false);
    if (o && o->squeeze_dims() && o->squeeze_dims()->size()) {
      for (int32_t a : *o->squeeze_dims()) {
        const int64_t ax = a < 0 ? a + r : a;
        if (ax < 0 || ax >= r || xs[static_cast<size_t>(ax)] != 1)
          return imp.Fail(c, "builtin_options.squeeze_dims", "axis {} of the resized input {} is not 1", a,
                          x.shape.ToString());
        drop[static_cast<size_t>(ax)] = true;
      }
    } else {
      for (size_t d = 0; d < xs.size(); ++d) drop[d] = xs[d] == 1;
    }
    Ints out;
    for (size_t d = 0; d < xs.size(); ++d)
      if (!drop[d]) out.push_back(xs[d]);
    return out;
  }
  if (c.code == kExpandDims) {
    auto axis = imp.ConstInts(imp.In(c, 1));
    if (!axis || axis->size() != 1) return imp.Fail(c, "inputs[1]", "the axis must be one int32/int64 constant");
    int64_t a = (*axis)[0];
    if (a < 0) a += r + 1;
    if (a < 0 || a > r) return imp.Fail(c, "inputs[1]", "axis {} is out of range for rank {}", (*axis)[0], r);
    Ints out = xs;
    out.insert(out.begin() + a, 1);
    return out;
  }
  // RESHAPE: the shape operand (or the options' new_shape) as written; where
  // the converter wrote the traced size of a dim the signature marks dynamic,
  // that one dim is inferred.
  std::optional<Ints> target;
  if (c.has_input(1)) target = imp.ConstInts(imp.In(c, 1));
  if (!target) {
    const auto* o = c.op.builtin_options_as_ReshapeOptions();
    if (o && o->new_shape()) target = Ints(o->new_shape()->begin(), o->new_shape()->end());
  }
  if (!target) return imp.Fail(c, "inputs[1]", "the new shape is computed at run time; resized inputs need it constant");
  Ints out = *target;
  if (std::find(out.begin(), out.end(), -1) == out.end() && y.shape.rank() == out.size()) {
    size_t dynamic = 0, at = 0;
    for (size_t d = 0; d < out.size(); ++d)
      if (!y.shape[d].known()) ++dynamic, at = d;
    if (dynamic > 1)
      return imp.Fail(c, "inputs[1]", "the new shape {} was traced at the file's sizes and {} of its dims are "
                      "dynamic: it cannot follow the resized input {}", fmt::join(out, ","), dynamic,
                      x.shape.ToString());
    if (dynamic == 1) out[at] = -1;
  }
  return out;
}

}  // namespace

Status LowerReshape(OpCtx& c) {
  Importer& imp = c.imp;
  TRY(x, imp.Get(c, 0));
  Ints target = imp.Out(c, 0).shape.extents();
  if (imp.resized() && !imp.Out(c, 0).shape.fully_known()) {
    auto t = ResizedReshapeTarget(c);
    if (!t.ok()) return t.status();
    target = std::move(t.value());
  }
  // Otherwise the declared output shape: static in a TFLite file.
  return Done(imp.Emit(c, "Reshape", {x}, {{"shape", target}}));
}

Status LowerTranspose(OpCtx& c) {
  Importer& imp = c.imp;
  auto perm = imp.ConstInts(imp.In(c, 1));
  if (!perm) return imp.Fail(c, "inputs[1]", "perm must be an int32/int64 constant");
  TRY(x, imp.Get(c, 0));
  return Done(imp.Emit(c, "Transpose", {x}, {{"perm", *perm}}));
}

Status LowerConcat(OpCtx& c) {
  Importer& imp = c.imp;
  const auto* o = c.op.builtin_options_as_ConcatenationOptions();
  if (!o) return imp.Fail(c, "builtin_options", "ConcatenationOptions are missing");
  const Val& y = imp.Out(c, 0);
  const auto r = static_cast<int64_t>(y.shape.rank());
  int64_t axis = o->axis();
  if (axis < -r || axis >= r) return imp.Fail(c, "builtin_options.axis", "axis {} is out of range for rank {}", axis, r);
  if (axis < 0) axis += r;
  bool nchw = r == 4 && c.num_inputs() > 0;
  for (size_t i = 0; i < c.num_inputs(); ++i) nchw = nchw && imp.In(c, i).nchw != kInvalidId;
  std::vector<TensorId> in;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    auto t = nchw ? imp.GetNchw(c, i) : imp.Get(c, i);
    if (!t.ok()) return t.status();
    in.push_back(t.value());
  }
  return Done(imp.Emit(c, "Concat", in, {{"axis", nchw ? NchwAxis(axis) : axis}}, 0, nchw,
                       ActOf(o->fused_activation_function())));
}

Status LowerPad(OpCtx& c) {
  Importer& imp = c.imp;
  const Val& x = imp.In(c, 0);
  auto p = imp.ConstInts(imp.In(c, 1));
  const size_t r = x.shape.rank();
  if (!p || p->size() != 2 * r)
    return imp.Fail(c, "inputs[1]", "paddings must be an int32/int64 constant of shape [{}, 2]", r);
  double value = 0.0;
  if (c.code == kPadV2 && c.has_input(2)) {
    auto v = imp.ConstFloats(imp.In(c, 2));
    if (!v || v->size() != 1) return imp.Fail(c, "inputs[2]", "constant_values must be a scalar constant");
    value = (*v)[0];
  }
  Ints pads(2 * r);
  for (size_t i = 0; i < r; ++i) {
    pads[i] = (*p)[2 * i];
    pads[r + i] = (*p)[2 * i + 1];
  }
  const bool nchw = NchwOnly(x) && r == 4;
  if (nchw) {
    Ints q(8);
    for (size_t j = 0; j < 4; ++j) {
      q[j] = pads[static_cast<size_t>(kToNchw[j])];
      q[4 + j] = pads[4 + static_cast<size_t>(kToNchw[j])];
    }
    pads = q;
  }
  TRY(xin, nchw ? imp.GetNchw(c, 0) : imp.Get(c, 0));
  return Done(imp.Emit(c, "Pad", {xin}, {{"pads", pads}, {"mode", std::string("constant")}, {"constant_value", value}},
                       0, nchw));
}

Status LowerSlice(OpCtx& c) {
  Importer& imp = c.imp;
  const Val& x = imp.In(c, 0);
  const auto r = static_cast<int64_t>(x.shape.rank());
  auto begin = imp.ConstInts(imp.In(c, 1));
  auto second = imp.ConstInts(imp.In(c, 2));
  if (!begin || !second || static_cast<int64_t>(begin->size()) != r || static_cast<int64_t>(second->size()) != r)
    return imp.Fail(c, "inputs[1]", "begin/{} must be int32/int64 constants with {} values",
                    c.code == kSlice ? "size" : "end", r);
  Ints starts = *begin, ends(static_cast<size_t>(r)), steps(static_cast<size_t>(r), 1), axes;
  for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  bool reshape = false;
  if (c.code == kSlice) {
    for (size_t i = 0; i < starts.size(); ++i)
      ends[i] = (*second)[i] < 0 ? INT64_MAX : starts[i] + (*second)[i];
  } else {
    const auto* o = c.op.builtin_options_as_StridedSliceOptions();
    if (!o) return imp.Fail(c, "builtin_options", "StridedSliceOptions are missing");
    if (o->ellipsis_mask() || o->new_axis_mask())
      return imp.Fail(c, "builtin_options", "ellipsis_mask/new_axis_mask are not supported");
    if (c.has_input(3)) {
      auto s = imp.ConstInts(imp.In(c, 3));
      if (!s || static_cast<int64_t>(s->size()) != r) return imp.Fail(c, "inputs[3]", "strides must be a constant");
      steps = *s;
    }
    for (int64_t i = 0; i < r; ++i) {
      const auto k = static_cast<size_t>(i);
      if (steps[k] == 0) return imp.Fail(c, "inputs[3]", "strides[{}] is 0", i);
      ends[k] = o->offset() ? starts[k] + (*second)[k] : (*second)[k];
      if (o->begin_mask() & (1 << i)) starts[k] = steps[k] > 0 ? 0 : INT64_MAX;
      if (o->end_mask() & (1 << i)) ends[k] = steps[k] > 0 ? INT64_MAX : INT64_MIN;
      if (o->shrink_axis_mask() & (1 << i)) {
        ends[k] = starts[k] == -1 ? INT64_MAX : starts[k] + 1;
        steps[k] = 1;
        reshape = true;
      }
    }
  }
  TRY(xin, imp.Get(c, 0));
  AttributeMap attrs = {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}};
  if (!reshape) return Done(imp.Emit(c, "StridedSlice", {xin}, attrs));
  TRY(s, imp.EmitTemp(c, "StridedSlice", "slice", {xin}, attrs));
  return Done(imp.Emit(c, "Reshape", {s}, {{"shape", imp.Out(c, 0).shape.extents()}}));
}

Status LowerSplit(OpCtx& c) {
  Importer& imp = c.imp;
  const bool v = c.code == kSplitV;
  const size_t data = v ? 0 : 1, axis_in = v ? 2 : 0;
  auto axis = imp.ConstInts(imp.In(c, axis_in));
  if (!axis || axis->size() != 1) return imp.Fail(c, fmt::format("inputs[{}]", axis_in), "axis must be a scalar constant");
  const Val& x = imp.In(c, data);
  const auto r = static_cast<int64_t>(x.shape.rank());
  int64_t a = (*axis)[0];
  if (a < -r || a >= r) return imp.Fail(c, fmt::format("inputs[{}]", axis_in), "axis {} out of range for rank {}", a, r);
  if (a < 0) a += r;
  Ints split;
  for (size_t k = 0; k < c.num_outputs(); ++k)
    split.push_back(imp.Out(c, k).shape.rank() == x.shape.rank() ? imp.Out(c, k).shape[static_cast<size_t>(a)].value : -1);
  TRY(xin, imp.Get(c, data));
  // One IR op with several outputs.
  OpSpec spec;
  spec.type = "Split";
  spec.name = c.name;
  spec.inputs = {xin};
  spec.attrs = {{"axis", a}, {"split", split}};
  spec.source_op_type = c.opname;
  std::vector<TensorId> outs;
  for (size_t k = 0; k < c.num_outputs(); ++k) {
    Val& o = imp.Out(c, k);
    auto t = imp.graph().AddTensor(imp.graph().FindTensor(o.name) ? o.name + "__split" : o.name);
    if (!t.ok()) return imp.Fail(c, "outputs", "{}", t.status().message());
    outs.push_back(t.value());
  }
  spec.outputs = outs;
  spec.source_name = imp.Out(c, 0).name;
  auto op = imp.graph().AddOp(std::move(spec));
  if (!op.ok()) return imp.Fail(c, "", "{}", op.status().message());
  for (size_t k = 0; k < outs.size(); ++k) {
    Val& o = imp.Out(c, k);
    if (o.enc) (void)imp.graph().SetEncoding(outs[k], *o.enc);
    o.id = outs[k];
    o.available = true;
  }
  return Status::Ok();
}

Status LowerGather(OpCtx& c) {
  Importer& imp = c.imp;
  const auto* o = c.op.builtin_options_as_GatherOptions();
  if (o && o->batch_dims() != 0) return imp.Fail(c, "builtin_options.batch_dims", "batch_dims != 0 is not supported");
  TRY(x, imp.Get(c, 0));
  TRY(idx, imp.Get(c, 1));
  return Done(imp.Emit(c, "Gather", {x, idx}, {{"axis", int64_t{o ? o->axis() : 0}}}));
}

Status LowerPack(OpCtx& c) {
  Importer& imp = c.imp;
  const Val& y = imp.Out(c, 0);
  if (c.num_inputs() == 0) return imp.Fail(c, "inputs", "PACK has no inputs");
  const auto r = static_cast<int64_t>(y.shape.rank());
  // Axis from the declared shapes: the one dim of the output that equals the input count.
  const Val& x0 = imp.In(c, 0);
  int64_t axis = -1;
  for (int64_t a = 0; a < r && axis < 0; ++a) {
    Ints expect = x0.shape.extents();
    expect.insert(expect.begin() + a, static_cast<int64_t>(c.num_inputs()));
    if (expect == y.shape.extents()) axis = a;
  }
  if (axis < 0) return imp.Fail(c, "outputs[0]", "cannot relate the output {} to the inputs {}", y.shape.ToString(),
                                x0.shape.ToString());
  Ints unsq = x0.shape.extents();
  unsq.insert(unsq.begin() + axis, 1);
  std::vector<TensorId> in;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    TRY(x, imp.Get(c, i));
    TRY(e, imp.EmitTemp(c, "Reshape", fmt::format("expand{}", i), {x}, {{"shape", unsq}}));
    in.push_back(e);
  }
  return Done(imp.Emit(c, "Concat", in, {{"axis", axis}}));
}

}  // namespace qairt::tflite_import
