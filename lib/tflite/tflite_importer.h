// Internal to the TFLite importer: the value table, the per-operator context
// and the Importer the lowering functions (lower_*.cpp) work through.
// tflite_importer.cpp drives the import, tflite_values.cpp turns tensors,
// buffers and quantization parameters into IR values. All of it runs only on
// a model that passed VerifyTfliteModel, so every index, size and
// quantization array used has been range-checked.
//
// Layout: TFLite activations are NHWC. IR tensors keep the TFLite layout and
// names (so encodings files written against the .tflite apply unchanged),
// except around the ops whose IR form is NCHW (Conv2d, DepthWiseConv2d,
// TransposeConv2d, pooling, Resize, DepthToSpace/SpaceToDepth): each TFLite
// tensor has up to two IR forms, `id` (TFLite layout) and `nchw`, created on
// demand. A Transpose is emitted only when a consumer needs the form that does
// not exist yet; elementwise ops, Pad, Concat and reductions over H,W run in
// whichever layout their inputs already have, so conv chains stay NCHW.
// Constant weights are permuted once at import: OHWI -> OIHW (CONV_2D),
// 1HWO -> O1HW (DEPTHWISE_CONV_2D), OHWI -> IOHW (TRANSPOSE_CONV), with the
// per-channel encoding axis moved along.
#pragma once

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tflite/tflite_common.h"
#include "tflite/tflite_import.h"
#include "ir/graph.h"

namespace qairt::tflite_import {

using Ints = std::vector<int64_t>;

inline const Ints kToNchw = {0, 3, 1, 2};  // nchw[j] = nhwc[kToNchw[j]]
inline const Ints kToNhwc = {0, 2, 3, 1};

// Encoding of a tensor permuted by `perm` (a per-channel axis moves along).
Encoding Permuted(Encoding e, const Ints& perm);

struct Val {
  const fb::Tensor* t = nullptr;
  std::string name;
  // TFLite shape: the file's, until the inputs are resized (--input_dim on
  // a dynamic input), then what the lowered op makes.
  Shape shape;
  Ints signature;         // shape_signature (-1: dynamic), empty if absent
  int32_t type = 0;
  std::optional<Encoding> enc;  // from quantization, TFLite layout
  bool available = false;       // defined by now (constant, input or produced)
  // Constants: IR dtype and bytes in TFLite layout.
  std::shared_ptr<const StaticData> data;
  DType dtype = DType::kUndefined;
  TensorId id = kInvalidId;    // IR tensor in TFLite layout
  TensorId nchw = kInvalidId;  // NCHW form (rank-4 only)
  bool is_const() const { return data != nullptr; }
};

class Importer;

// The operator being lowered.
struct OpCtx {
  Importer& imp;
  const fb::Operator& op;
  size_t index;
  int32_t code;
  std::string opname;  // "CONV_2D"
  std::string name;    // IR op name base: "conv_2d_3"

  size_t num_inputs() const { return op.inputs() ? op.inputs()->size() : 0; }
  size_t num_outputs() const { return op.outputs() ? op.outputs()->size() : 0; }
  int32_t in_index(size_t i) const {
    return i < num_inputs() ? op.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)) : -1;
  }
  int32_t out_index(size_t i) const { return op.outputs()->Get(static_cast<flatbuffers::uoffset_t>(i)); }
  bool has_input(size_t i) const { return in_index(i) >= 0; }
};

class Importer {
 public:
  Importer(const fb::Model& m, const ImportOptions& options, ImportReport* report, const uint8_t* file,
           uint64_t file_size)
      : m_(m), options_(options), report_(report), file_(file), file_size_(file_size), graph_(GraphName(m)) {}

  Result<Graph> Run();

  // ---- diagnostics ----
  void Diag(Severity sev, DiagKind kind, std::string field, std::string message) {
    report_->diagnostics.push_back(
        {.severity = sev, .kind = kind, .field = std::move(field), .message = std::move(message)});
  }
  template <typename... Args>
  Status Fail(OpCtx& c, std::string field, fmt::format_string<Args...> format, Args&&... args) {
    std::string text = fmt::format("operators[{}] ({}): {}", c.index, c.opname,
                                   fmt::format(format, std::forward<Args>(args)...));
    Diag(Severity::kError, DiagKind::kAttribute, fmt::format("operators[{}].{}", c.index, field), text);
    return Status(StatusCode::kInvalidArgument, std::move(text));
  }

  // ---- values ----
  Val& V(int32_t i) { return vals_[static_cast<size_t>(i)]; }
  // Precondition (checked in LowerOp): slot i exists and is not -1; a stray
  // access still gets an empty, unavailable value instead of tensors[-1].
  Val& In(OpCtx& c, size_t i) { return c.in_index(i) >= 0 ? V(c.in_index(i)) : missing_; }
  Val& Out(OpCtx& c, size_t i) { return V(c.out_index(i)); }
  Result<TensorId> Get(OpCtx& c, size_t i);      // TFLite layout
  Result<TensorId> GetNchw(OpCtx& c, size_t i);  // NCHW (rank 4)
  Result<TensorId> GetPermutedConst(OpCtx& c, size_t i, const Ints& perm, const std::string& suffix);
  std::optional<Ints> ConstInts(const Val& v) const;
  std::optional<std::vector<float>> ConstFloats(const Val& v) const;  // dequantized if quantized
  // Whether an input was resized: declared output shapes then hold only
  // what the shape signatures fix.
  bool resized() const { return resized_; }

  // Emits `type` whose single output is TFLite output `k` (in NCHW if `nchw`),
  // followed by the fused activation.
  Result<TensorId> Emit(OpCtx& c, const std::string& type, std::vector<TensorId> inputs, AttributeMap attrs = {},
                        size_t k = 0, bool nchw = false, int act = 0);
  Result<TensorId> EmitTemp(OpCtx& c, const std::string& type, const std::string& suffix, std::vector<TensorId> inputs,
                            AttributeMap attrs);
  Graph& graph() { return graph_; }
  ImportReport& report() { return *report_; }

 private:
  static std::string GraphName(const fb::Model& m) {
    const fb::SubGraph* sg = m.subgraphs()->Get(0);
    return sg->name() && sg->name()->size() ? sg->name()->str() : "model";
  }
  std::string UniqueName(const std::string& base);
  Result<TensorId> Transposed(Val& v, TensorId src, const Ints& perm, const std::string& name);
  Status SetupValues();
  Status LoadInputs();
  void LowerOp(size_t index, const fb::Operator& op);
  void MarkOutputs();
  void BindOutput(Val& v, TensorId id, bool nchw);
  // With resized inputs: what an op's output declares before it is lowered
  // (dims the signature leaves dynamic unknown; a file without signatures
  // declares nothing the resize keeps).
  void ResetDeclaredShapes(const OpCtx& c);
  void ResizeInput(Val& v, std::set<std::string>* matched);

  const fb::Model& m_;
  ImportOptions options_;
  ImportReport* report_;
  const uint8_t* file_;
  uint64_t file_size_;
  Graph graph_;
  const fb::SubGraph* sg_ = nullptr;
  std::vector<Val> vals_;
  Val missing_;
  std::unordered_map<std::string, size_t> name_counter_;
  bool resized_ = false;  // an input was given dims other than the file's
  size_t densified_ = 0;  // sparse constants made dense
};

// ---------------------------------------------------------------------------
// Helpers shared by the lowering files
// ---------------------------------------------------------------------------

// TRY(t, expr): `TensorId t` from a Result<TensorId>, or return its status.
#define TRY(var, expr)             \
  auto var##_r = (expr);           \
  if (!var##_r.ok()) return var##_r.status(); \
  TensorId var = var##_r.value()

inline Status Done(const Result<TensorId>& r) { return r.ok() ? Status::Ok() : r.status(); }

inline int ActOf(fb::ActivationFunctionType a) { return static_cast<int>(a); }

// Rank-4 activation that exists only in NCHW (so an NCHW consumer avoids a Transpose).
inline bool NchwOnly(const Val& v) { return v.nchw != kInvalidId && v.id == kInvalidId; }

// ---------------------------------------------------------------------------
// The lowerings, one per builtin family (dispatched by LowerOperator in
// tflite_importer.cpp)
// ---------------------------------------------------------------------------

// lower_nn.cpp: convolutions, fully connected, pooling, softmax, resizing.
Status LowerConv(OpCtx& c);
Status LowerTransposeConv(OpCtx& c);
Status LowerConvolution2DTransposeBias(OpCtx& c);  // MediaPipe custom op (called by LowerOp)
Status LowerFullyConnected(OpCtx& c);
Status LowerPool(OpCtx& c);
Status LowerSoftmax(OpCtx& c);
Status LowerResize(OpCtx& c);
Status LowerDepthSpace(OpCtx& c);
Status LowerBatchMatmul(OpCtx& c);

// lower_elementwise.cpp: binary and unary elementwise ops, activations.
Status LowerBinary(OpCtx& c);
Status LowerUnary(OpCtx& c);
Status LowerPrelu(OpCtx& c);

// lower_shape.cpp: data movement, shape ops and reductions.
Status LowerReduce(OpCtx& c);
Status LowerReshape(OpCtx& c);
Status LowerTranspose(OpCtx& c);
Status LowerConcat(OpCtx& c);
Status LowerPad(OpCtx& c);
Status LowerSlice(OpCtx& c);
Status LowerSplit(OpCtx& c);
Status LowerGather(OpCtx& c);
Status LowerPack(OpCtx& c);

// lower_qdq.cpp: QUANTIZE, DEQUANTIZE and CAST.
Status LowerQuantize(OpCtx& c);
Status LowerDequantize(OpCtx& c);
Status LowerDensify(OpCtx& c);
Status LowerCast(OpCtx& c);

}  // namespace qairt::tflite_import
