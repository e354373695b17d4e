// Lowering of TFLite's type conversions: QUANTIZE and DEQUANTIZE (folded into
// encodings and constants where they only carry quantization parameters),
// DENSIFY (of a sparse constant, densified when it was read) and CAST.
#include "onnx/importer.h"  // VectorData (fp16 weights folded to float32)
#include "tflite/tflite_importer.h"

namespace qairt::tflite_import {
namespace {

// A QUANTIZE or DEQUANTIZE of an activation that only carries quantization
// parameters: its output is the input's IR tensor (in each layout it has).
Status FoldIntoInput(Importer& imp, const Val& x, Val& y) {
  ++imp.report().qdq_folded;
  y.id = x.id;
  y.nchw = x.nchw;
  y.available = true;
  return Status::Ok();
}

}  // namespace

Status LowerQuantize(OpCtx& c) {
  Importer& imp = c.imp;
  Val& x = imp.In(c, 0);
  Val& y = imp.Out(c, 0);
  if (!y.enc) return imp.Fail(c, "outputs[0]", "output '{}' has no quantization parameters", y.name);
  if (x.is_const() && x.shape.element_count() != y.shape.element_count())
    return imp.Fail(c, "outputs[0]", "output {} and constant input {} differ in size", y.shape.ToString(),
                    x.shape.ToString());
  if (x.is_const()) {  // float weights quantized at load: keep the float constant with the encoding
    y.data = x.data;
    y.dtype = x.dtype;
    y.available = true;
    return Status::Ok();
  }
  const bool nchw = NchwOnly(x);
  TRY(xin, nchw ? imp.GetNchw(c, 0) : imp.Get(c, 0));
  const Tensor& t = imp.graph().tensor(xin);
  if (t.encoding) {
    // Requantization (int -> int with other parameters): an explicit Convert.
    return Done(imp.Emit(c, "Convert", {xin}, {{"output_dtype", static_cast<int64_t>(t.dtype)}}, 0, nchw));
  }
  // float -> int: the encoding goes on the float tensor (as Q-DQ folding
  // does), on each IR form of it that exists.
  for (const auto& [id, perm] : {std::pair{x.id, false}, std::pair{x.nchw, true}}) {
    if (id == kInvalidId) continue;
    Status s = imp.graph().SetEncoding(id, perm ? Permuted(*y.enc, kToNchw) : *y.enc);
    if (!s.ok()) return imp.Fail(c, "outputs[0]", "{}", s.message());
  }
  (void)xin;
  return FoldIntoInput(imp, x, y);
}

Status LowerDequantize(OpCtx& c) {
  Importer& imp = c.imp;
  Val& x = imp.In(c, 0);
  Val& y = imp.Out(c, 0);
  if (x.is_const() && x.shape.element_count() != y.shape.element_count())
    return imp.Fail(c, "outputs[0]", "output {} and constant input {} differ in size", y.shape.ToString(),
                    x.shape.ToString());
  if (x.is_const()) {
    if (x.dtype == DType::kFloat16 || x.dtype == DType::kBFloat16) {
      // fp16 weights + DEQUANTIZE (the MediaPipe pattern): folded into a float32 constant.
      auto f = imp.ConstFloats(x);
      if (!f) return imp.Fail(c, "inputs[0]", "cannot read constant '{}'", x.name);
      y.dtype = DType::kFloat32;
      y.data = onnx_import::VectorData(std::move(*f));
      y.enc.reset();
      ++imp.report().constants_folded;
    } else {
      // Quantized weights: a fixed-point static tensor with its encoding.
      y.data = x.data;
      y.dtype = x.dtype;
      y.enc = x.enc;
      ++imp.report().qdq_folded;
    }
    y.available = true;
    return Status::Ok();
  }
  const bool nchw = NchwOnly(x);
  TRY(xin, nchw ? imp.GetNchw(c, 0) : imp.Get(c, 0));
  if (imp.graph().tensor(xin).dtype == DType::kFloat16)
    return Done(imp.Emit(c, "Cast", {xin}, {{"to", static_cast<int64_t>(DType::kFloat32)}}, 0, nchw));
  // A quantized activation already is a float tensor with an encoding.
  return FoldIntoInput(imp, x, y);
}

// DENSIFY makes a sparse constant dense at run time; the importer densified
// it when reading it, so its output is that constant.
Status LowerDensify(OpCtx& c) {
  Importer& imp = c.imp;
  Val& x = imp.In(c, 0);
  Val& y = imp.Out(c, 0);
  if (!x.is_const()) return imp.Fail(c, "inputs[0]", "DENSIFY's input '{}' must be a (sparse) constant", x.name);
  if (x.shape != y.shape)
    return imp.Fail(c, "outputs[0]", "output {} and input {} differ in shape", y.shape.ToString(), x.shape.ToString());
  y.data = x.data;
  y.dtype = x.dtype;
  y.enc = x.enc;
  y.available = true;
  return Status::Ok();
}

Status LowerCast(OpCtx& c) {
  Importer& imp = c.imp;
  const Val& y = imp.Out(c, 0);
  auto to = PlainDType(y.type);
  if (!to) return imp.Fail(c, "outputs[0]", "cast to {} is not supported", TensorTypeName(y.type));
  TRY(x, imp.Get(c, 0));
  return Done(imp.Emit(c, "Cast", {x}, {{"to", static_cast<int64_t>(*to)}}));
}

}  // namespace qairt::tflite_import
