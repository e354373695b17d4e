// TFLite -> IR lowering (see tflite_import.h). Runs only on a model that
// passed VerifyTfliteModel, so every index, size and quantization array used
// here has been range-checked.
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
#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "import/onnx/importer.h"  // ReadAsFloats (fp16 weights)
#include "import/tflite/tflite_common.h"
#include "import/tflite/tflite_import.h"

namespace qairt {

bool LooksLikeTflite(const void* data, size_t size) {
  return data && size >= 8 && std::memcmp(static_cast<const uint8_t*>(data) + 4, "TFL3", 4) == 0;
}

namespace tflite_import {
namespace {

using Ints = std::vector<int64_t>;

const Ints kToNchw = {0, 3, 1, 2};  // nchw[j] = nhwc[kToNchw[j]]
const Ints kToNhwc = {0, 2, 3, 1};

// Position of NHWC axis a in NCHW.
int64_t NchwAxis(int64_t a) { return a == 0 ? 0 : a == 3 ? 1 : a + 1; }

std::optional<DType> FixedOf(int32_t type) {
  switch (type) {
    case 9: return DType::kSFixed8;
    case 3: return DType::kUFixed8;
    case 7: return DType::kSFixed16;
    case 16: return DType::kUFixed16;
    case 2: return DType::kSFixed32;
    case 4: return DType::kSFixed32;  // int64 bias (16x8): narrowed to 32 bits
    case 17: return DType::kSFixed4;
    case 20: return DType::kUFixed4;
    default: return std::nullopt;
  }
}

Encoding Permuted(Encoding e, const Ints& perm) {
  if (e.kind == EncodingKind::kPerChannel) {
    for (size_t j = 0; j < perm.size(); ++j)
      if (perm[j] == e.axis) {
        e.axis = static_cast<int32_t>(j);
        break;
      }
  }
  return e;
}

Shape PermutedShape(const Shape& s, const Ints& perm) {
  std::vector<Dim> d;
  for (int64_t p : perm) d.push_back(s[static_cast<size_t>(p)]);
  return Shape(std::move(d));
}

// Permutes packed elements of `bits` each (1..64 bits; sub-byte low bits first).
std::shared_ptr<const StaticData> PermuteData(const uint8_t* src, uint32_t bits, const Ints& shape, const Ints& perm) {
  const size_t rank = shape.size();
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  std::vector<uint64_t> in_stride(rank, 1);
  for (size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * static_cast<uint64_t>(shape[i]);
  Ints out_shape(rank);
  for (size_t j = 0; j < rank; ++j) out_shape[j] = shape[static_cast<size_t>(perm[j])];
  std::vector<uint8_t> out(bits >= 8 ? n * (bits / 8) : (n * bits + 7) / 8, 0);
  std::vector<int64_t> idx(rank, 0);
  for (uint64_t o = 0; o < n; ++o) {
    uint64_t s = 0;
    for (size_t j = 0; j < rank; ++j) s += static_cast<uint64_t>(idx[j]) * in_stride[static_cast<size_t>(perm[j])];
    if (bits >= 8) {
      std::memcpy(out.data() + o * (bits / 8), src + s * (bits / 8), bits / 8);
    } else {
      const uint32_t per = 8 / bits, mask = (1u << bits) - 1;
      const uint32_t v = (src[s / per] >> ((s % per) * bits)) & mask;
      out[o / per] = static_cast<uint8_t>(out[o / per] | (v << ((o % per) * bits)));
    }
    for (size_t j = rank; j-- > 0;) {
      if (++idx[j] < out_shape[j]) break;
      idx[j] = 0;
    }
  }
  return StaticData::Adopt(std::move(out));
}

// SAME/VALID -> explicit [begin, end] for one spatial dim (tflite padding.h).
std::pair<int64_t, int64_t> SamePads(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same) {
  if (!same) return {0, 0};
  const int64_t eff = (k - 1) * dilation + 1;
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + eff - in);
  return {total / 2, total - total / 2};
}

struct Val {
  const fb::Tensor* t = nullptr;
  std::string name;
  Shape shape;            // TFLite shape (static)
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
  Importer(const fb::Model& m, const OnnxImportOptions& options, OnnxImportReport* report, const uint8_t* file,
           uint64_t file_size)
      : m_(m), options_(options), report_(report), file_(file), file_size_(file_size), graph_(GraphName(m)) {}

  Result<Graph> Run();

  // ---- diagnostics ----
  void Diag(Severity sev, DiagKind kind, std::string field, std::string message) {
    Diagnostic d;
    d.severity = sev;
    d.kind = kind;
    d.field = std::move(field);
    d.message = std::move(message);
    report_->diagnostics.push_back(std::move(d));
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

  // Emits `type` whose single output is TFLite output `k` (in NCHW if `nchw`),
  // followed by the fused activation.
  Result<TensorId> Emit(OpCtx& c, const std::string& type, std::vector<TensorId> inputs, AttributeMap attrs = {},
                        size_t k = 0, bool nchw = false, int act = 0);
  Result<TensorId> EmitTemp(OpCtx& c, const std::string& type, const std::string& suffix, std::vector<TensorId> inputs,
                            AttributeMap attrs);
  Graph& graph() { return graph_; }
  OnnxImportReport& report() { return *report_; }

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

  const fb::Model& m_;
  OnnxImportOptions options_;
  OnnxImportReport* report_;
  const uint8_t* file_;
  uint64_t file_size_;
  Graph graph_;
  const fb::SubGraph* sg_ = nullptr;
  std::vector<Val> vals_;
  Val missing_;
  std::unordered_map<std::string, size_t> name_counter_;
};

Status LowerOperator(OpCtx& c);  // the op table, below
Status LowerConvolution2DTransposeBias(OpCtx& c);  // MediaPipe custom op, below

// Inputs every lowering reads (optional slots beyond are checked where read).
size_t MinInputs(int32_t code) {
  switch (code) {
    case kTransposeConv: case kSlice: case kStridedSlice: case kSplitV: return 3;
    case kConv2d: case kDepthwiseConv2d: case kFullyConnected: case kAdd: case kSub: case kMul: case kDiv:
    case kMaximum: case kMinimum: case kSquaredDifference: case kPad: case kPadV2: case kTranspose: case kMean:
    case kSum: case kReduceMax: case kReduceMin: case kReduceProd: case kGather: case kResizeBilinear:
    case kResizeNearestNeighbor: case kSplit: case kBatchMatmul: case kPrelu:
      return 2;
    default: return 1;
  }
}

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

std::string Importer::UniqueName(const std::string& base) {
  auto& n = name_counter_[base];
  if (n++ == 0 && !graph_.FindTensor(base) && !graph_.FindOp(base)) return base;
  for (;;) {
    std::string candidate = fmt::format("{}__{}", base, n++);
    if (!graph_.FindTensor(candidate) && !graph_.FindOp(candidate)) return candidate;
  }
}

Status Importer::SetupValues() {
  sg_ = m_.subgraphs()->Get(0);
  const size_t nt = sg_->tensors() ? sg_->tensors()->size() : 0;
  vals_.resize(nt);
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < nt; ++i) {
    const fb::Tensor* t = sg_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(i));
    Val& v = vals_[i];
    v.t = t;
    v.name = t->name() && t->name()->size() ? t->name()->str() : fmt::format("tensor_{}", i);
    if (!seen.emplace(v.name, i).second) v.name = fmt::format("{}__t{}", v.name, i);  // keep names unique
    v.type = static_cast<int32_t>(t->type());
    Ints extents;
    if (t->shape())
      for (int32_t d : *t->shape()) extents.push_back(d);
    v.shape = Shape::FromExtents(extents);
    const fb::QuantizationParameters* q = t->quantization();
    if (q && q->scale() && q->scale()->size() > 0) {
      auto fixed = FixedOf(v.type);
      if (!fixed) {
        Diag(Severity::kError, DiagKind::kInvalidEncoding, v.name,
             fmt::format("tensor '{}' (tensors[{}]): quantized tensors of type {} are not supported", v.name, i,
                         TensorTypeName(v.type)));
      } else {
        Encoding e;
        e.dtype = *fixed;
        e.overridden = false;
        if (v.type == 17 || v.type == 20) e.bitwidth = 4;
        for (float s : *q->scale()) e.scales.push_back(s);
        bool symmetric = true;
        const int64_t centre = IsSigned(*fixed) ? 0 : (int64_t{1} << (DTypeBits(*fixed) - 1));
        for (size_t k = 0; k < q->zero_point()->size(); ++k) {
          const int64_t z = ZeroPointAt(*q->zero_point(), k);
          e.offsets.push_back(static_cast<int32_t>(-z));
          symmetric = symmetric && z == centre;
        }
        e.symmetry = symmetric ? Symmetry::kSymmetric : Symmetry::kAsymmetric;
        if (q->scale()->size() > 1) {
          e.kind = EncodingKind::kPerChannel;
          e.axis = q->quantized_dimension();
        } else {
          e.kind = EncodingKind::kPerTensor;
        }
        v.enc = e;
      }
    }
    // Constant data.
    if (t->buffer() != 0) {
      const fb::Buffer* b = m_.buffers()->Get(t->buffer());
      const uint8_t* p = nullptr;
      uint64_t n = 0;
      if (b->offset() > 1) {
        p = file_ + b->offset();
        n = b->size();
      } else if (b->data()) {
        p = b->data()->data();
        n = b->data()->size();
      }
      if (n > 0) {
        if (v.enc) {
          v.dtype = *FixedOf(v.type);
          if (v.type == 4) {  // int64 bias: narrowed to the IR's widest fixed-point type
            std::vector<int32_t> narrow(n / 8);
            for (size_t k = 0; k < narrow.size(); ++k) {
              int64_t x;
              std::memcpy(&x, p + 8 * k, 8);
              if (x < INT32_MIN || x > INT32_MAX) {
                Diag(Severity::kError, DiagKind::kStaticData, v.name,
                     fmt::format("tensor '{}' (tensors[{}]): int64 value {} at index {} does not fit the 32-bit "
                                 "fixed-point bias type", v.name, i, x, k));
                break;
              }
              narrow[k] = static_cast<int32_t>(x);
            }
            v.data = StaticData::Copy(narrow.data(), narrow.size() * 4);
            Diag(Severity::kWarning, DiagKind::kStaticData, v.name,
                 fmt::format("tensor '{}': int64 quantized data stored as 32-bit fixed point", v.name));
          } else {
            v.data = StaticData::Copy(p, n);
          }
        } else if (auto d = PlainDType(v.type)) {
          v.dtype = *d;
          v.data = StaticData::Copy(p, n);
        } else {
          Diag(Severity::kError, DiagKind::kStaticData, v.name,
               fmt::format("tensor '{}' (tensors[{}]): constant of type {} is not supported", v.name, i,
                           TensorTypeName(v.type)));
        }
        v.available = v.data != nullptr;
      }
    }
  }
  return Status::Ok();
}

Status Importer::LoadInputs() {
  if (!options_.input_dims.empty() || !options_.define_symbols.empty())
    Diag(Severity::kWarning, DiagKind::kAttribute, "input_dim",
         "--input_dim/--define_symbol are ignored for TFLite models (their shapes are static)");
  if (!sg_->inputs()) return Status::Ok();
  for (int32_t i : *sg_->inputs()) {
    Val& v = V(i);
    if (v.available) continue;  // a constant listed as input
    DType dtype = DType::kUndefined;
    if (v.enc) {
      // The model's own quantized type (int8 codes in, as TFLite takes
      // them), with its encoding: processing keeps a graph input's datatype,
      // and encodings files name it with that type.
      dtype = v.enc->dtype;
    } else if (auto d = PlainDType(v.type)) {
      dtype = *d;
    } else {
      Diag(Severity::kError, DiagKind::kDTypeMismatch, v.name,
           fmt::format("subgraph input '{}' has type {}, which is not supported", v.name, TensorTypeName(v.type)));
      continue;
    }
    if (v.t->is_variable()) {
      Diag(Severity::kError, DiagKind::kAttribute, v.name,
           fmt::format("tensor '{}' is a variable (stateful) tensor; variables are not supported", v.name));
      continue;
    }
    auto id = graph_.AddInput(UniqueName(v.name), dtype, v.shape);
    if (!id.ok()) {
      Diag(Severity::kError, DiagKind::kAttribute, v.name, id.status().message());
      continue;
    }
    if (v.enc) {
      Status s = graph_.SetEncoding(id.value(), *v.enc);
      if (!s.ok()) Diag(Severity::kError, DiagKind::kInvalidEncoding, v.name, s.message());
    }
    v.id = id.value();
    v.available = true;
  }
  return Status::Ok();
}

Result<TensorId> Importer::Transposed(Val& v, TensorId src, const Ints& perm, const std::string& name) {
  OpSpec spec;
  spec.type = "Transpose";
  spec.name = UniqueName(name + "/transpose");
  spec.inputs = {src};
  spec.attrs = {{"perm", perm}};
  spec.source_name = v.name;
  spec.source_op_type = "layout";
  auto t = graph_.AddTensor(UniqueName(name));
  if (!t.ok()) return t.status();
  spec.outputs = {t.value()};
  auto op = graph_.AddOp(std::move(spec));
  if (!op.ok()) return op.status();
  const Tensor& st = graph_.tensor(src);
  if (st.encoding) (void)graph_.SetEncoding(t.value(), Permuted(*st.encoding, perm));
  return t.value();
}

Result<TensorId> Importer::Get(OpCtx& c, size_t i) {
  if (!c.has_input(i)) return kInvalidId;
  Val& v = In(c, i);
  if (v.id != kInvalidId) return v.id;
  if (v.is_const()) {
    auto t = graph_.AddConstant(UniqueName(v.name), v.dtype, v.shape, v.data);
    if (!t.ok()) return Fail(c, fmt::format("inputs[{}]", i), "{}", t.status().message());
    if (v.enc) {
      Status s = graph_.SetEncoding(t.value(), *v.enc);
      if (!s.ok()) return Fail(c, fmt::format("inputs[{}]", i), "{}", s.message());
    }
    v.id = t.value();
    return v.id;
  }
  if (v.nchw != kInvalidId) {
    auto t = Transposed(v, v.nchw, kToNhwc, graph_.FindTensor(v.name) ? v.name + "/nhwc" : v.name);
    if (!t.ok()) return t;
    v.id = t.value();
    return v.id;
  }
  return Fail(c, fmt::format("inputs[{}]", i), "input '{}' is not available (its producer failed)", v.name);
}

Result<TensorId> Importer::GetNchw(OpCtx& c, size_t i) {
  Val& v = In(c, i);
  if (!v.shape.rank_known() || v.shape.rank() != 4)
    return Fail(c, fmt::format("inputs[{}]", i), "input '{}' must be 4-D (NHWC), got {}", v.name, v.shape.ToString());
  if (v.nchw != kInvalidId) return v.nchw;
  if (v.is_const()) return GetPermutedConst(c, i, kToNchw, "nchw");
  auto src = Get(c, i);
  if (!src.ok()) return src;
  auto t = Transposed(v, src.value(), kToNchw, v.name + "/nchw");
  if (!t.ok()) return t;
  v.nchw = t.value();
  return v.nchw;
}

Result<TensorId> Importer::GetPermutedConst(OpCtx& c, size_t i, const Ints& perm, const std::string& suffix) {
  Val& v = In(c, i);
  if (!v.is_const()) return Fail(c, fmt::format("inputs[{}]", i), "'{}' must be a constant", v.name);
  const uint32_t bits = DTypeBits(v.dtype);
  const auto count = v.shape.element_count();
  const auto need = count ? StorageBytes(v.dtype, *count) : std::nullopt;
  if (!need || *need != v.data->size() || bits == 0)
    return Fail(c, fmt::format("inputs[{}]", i), "constant '{}' has {} bytes, which does not match its shape {} of {}",
                v.name, v.data->size(), v.shape.ToString(), DTypeName(v.dtype));
  auto data = PermuteData(v.data->data(), bits, v.shape.extents(), perm);
  auto t = graph_.AddConstant(UniqueName(v.name), v.dtype, PermutedShape(v.shape, perm), data);
  if (!t.ok()) return Fail(c, fmt::format("inputs[{}]", i), "{} ({})", t.status().message(), suffix);
  if (v.enc) {
    Status s = graph_.SetEncoding(t.value(), Permuted(*v.enc, perm));
    if (!s.ok()) return Fail(c, fmt::format("inputs[{}]", i), "{}", s.message());
  }
  return t.value();
}

std::optional<Ints> Importer::ConstInts(const Val& v) const {
  if (!v.is_const()) return std::nullopt;
  const auto n = v.shape.element_count();
  if (!n || *n > (1u << 20)) return std::nullopt;
  Ints out(*n);
  const uint8_t* p = v.data->data();
  for (size_t k = 0; k < *n; ++k) {
    if (v.dtype == DType::kInt32) {
      int32_t x;
      std::memcpy(&x, p + 4 * k, 4);
      out[k] = x;
    } else if (v.dtype == DType::kInt64) {
      std::memcpy(&out[k], p + 8 * k, 8);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<std::vector<float>> Importer::ConstFloats(const Val& v) const {
  if (!v.is_const()) return std::nullopt;
  onnx_import::Value ov;
  ov.dtype = v.dtype;
  ov.shape = v.shape;
  ov.data = v.data;
  auto f = onnx_import::ReadAsFloats(ov);
  if (f.size() != v.shape.element_count().value_or(0)) return std::nullopt;
  if (v.enc && v.enc->kind == EncodingKind::kPerTensor)
    for (float& x : f) x = static_cast<float>((x + v.enc->offsets[0]) * v.enc->scales[0]);
  return f;
}

void Importer::BindOutput(Val& v, TensorId id, bool nchw) {
  if (nchw) v.nchw = id; else v.id = id;
  v.available = true;
}

Result<TensorId> Importer::EmitTemp(OpCtx& c, const std::string& type, const std::string& suffix,
                                    std::vector<TensorId> inputs, AttributeMap attrs) {
  OpSpec spec;
  spec.type = type;
  spec.name = UniqueName(c.name + "/" + suffix);
  spec.inputs = std::move(inputs);
  spec.attrs = std::move(attrs);
  spec.source_name = c.name;
  spec.source_op_type = c.opname;
  auto t = graph_.AddTensor(UniqueName(c.name + "/" + suffix + "_out"));
  if (!t.ok()) return t.status();
  spec.outputs = {t.value()};
  auto op = graph_.AddOp(std::move(spec));
  if (!op.ok()) return op.status();
  return t.value();
}

Result<TensorId> Importer::Emit(OpCtx& c, const std::string& type, std::vector<TensorId> inputs, AttributeMap attrs,
                                size_t k, bool nchw, int act) {
  Val& v = Out(c, k);
  if (v.t->is_variable())
    return Fail(c, fmt::format("outputs[{}]", k), "output '{}' is a variable tensor; variables are not supported",
                v.name);
  if (!v.enc && !PlainDType(v.type))
    return Fail(c, fmt::format("outputs[{}]", k), "output '{}' has type {}, which is not supported", v.name,
                TensorTypeName(v.type));
  std::optional<Encoding> enc;
  if (v.enc) enc = nchw ? Permuted(*v.enc, kToNchw) : *v.enc;
  std::string act_type;
  AttributeMap act_attrs;
  switch (act) {
    case 0: break;
    case 1: act_type = "Relu"; break;
    case 2: act_type = "ReluMinMax"; act_attrs = {{"min_value", -1.0}, {"max_value", 1.0}}; break;
    case 3: act_type = "ReluMinMax"; act_attrs = {{"min_value", 0.0}, {"max_value", 6.0}}; break;
    default:
      return Fail(c, "builtin_options.fused_activation_function", "fused activation {} is not supported "
                  "(NONE, RELU, RELU_N1_TO_1 and RELU6 are)", act == 4 ? "TANH" : act == 5 ? "SIGN_BIT" :
                  fmt::format("value {}", act));
  }
  auto add = [&](const std::string& op_type, std::vector<TensorId> ins, AttributeMap a,
                 const std::string& out_name, const std::string& op_name) -> Result<TensorId> {
    auto t = graph_.AddTensor(UniqueName(out_name));
    if (!t.ok()) return t.status();
    OpSpec spec;
    spec.type = op_type;
    spec.name = UniqueName(op_name);
    spec.inputs = std::move(ins);
    spec.outputs = {t.value()};
    spec.attrs = std::move(a);
    spec.source_name = v.name;
    spec.source_op_type = c.opname;
    auto op = graph_.AddOp(std::move(spec));
    if (!op.ok()) return op.status();
    if (enc) {
      Status s = graph_.SetEncoding(t.value(), *enc);
      if (!s.ok()) return s;
    }
    return t.value();
  };
  Result<TensorId> out = kInvalidId;
  if (act_type.empty()) {
    out = add(type, std::move(inputs), std::move(attrs), v.name, c.name);
  } else {
    // The fused activation becomes its own op; both tensors carry the output encoding.
    auto pre = add(type, std::move(inputs), std::move(attrs), v.name + "/pre_act", c.name);
    if (!pre.ok()) return Fail(c, "", "{}", pre.status().message());
    out = add(act_type, {pre.value()}, std::move(act_attrs), v.name, c.name + "/act");
  }
  if (!out.ok()) return Fail(c, "", "{}", out.status().message());
  // The IR's shape functions must agree with the shape the model declares.
  const Shape& got = graph_.tensor(out.value()).shape;
  if (got.fully_known() && v.shape.rank_known()) {
    const Shape want = nchw && v.shape.rank() == 4 ? PermutedShape(v.shape, kToNchw) : v.shape;
    if (got != want && got.element_count() != want.element_count())
      return Fail(c, fmt::format("outputs[{}]", k), "lowered to {} with output shape {}, but the model declares {} "
                  "for '{}'", type, got.ToString(), want.ToString(), v.name);
    if (got != want)
      return Fail(c, fmt::format("outputs[{}]", k), "lowered to {} with output shape {}, but the model declares {} "
                  "for '{}'", type, got.ToString(), want.ToString(), v.name);
  }
  BindOutput(v, out.value(), nchw);
  return out;
}

// ---------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------

void Importer::LowerOp(size_t index, const fb::Operator& op) {
  const int32_t code = ResolveBuiltinCode(*m_.operator_codes()->Get(op.opcode_index()));
  OpCtx c{*this, op, index, code, BuiltinName(code), ""};
  std::string lower = c.opname;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  c.name = fmt::format("{}_{}", lower, index);
  std::string histogram_name = c.opname;
  if (code == kCustom) {
    const auto* cc = m_.operator_codes()->Get(op.opcode_index())->custom_code();
    histogram_name = "CUSTOM:" + (cc ? cc->str() : std::string());
  }
  ++report_->onnx_ops[histogram_name];
  // Inputs whose producer failed: skip quietly (the first failure is reported).
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i) && !In(c, i).available) return;
  auto unsupported = [&](std::string why) {
    report_->unsupported.push_back(fmt::format("operators[{}] ({})", index, histogram_name));
    Diag(Severity::kError, DiagKind::kUnknownOpType, fmt::format("operators[{}]", index),
         fmt::format("operators[{}] ({}): {}", index, histogram_name, why));
  };
  if (code == kCustom) {
    const auto* cc = m_.operator_codes()->Get(op.opcode_index())->custom_code();
    const std::string custom = cc ? cc->str() : std::string();
    if (custom != "Convolution2DTransposeBias")
      return unsupported(fmt::format("custom op '{}' is not supported (custom ops: Convolution2DTransposeBias)", custom));
    c.opname = "Convolution2DTransposeBias";
    if (c.num_outputs() != 1) return (void)Fail(c, "outputs", "Convolution2DTransposeBias has one output");
    Status s = LowerConvolution2DTransposeBias(c);
    if (!s.ok() && (report_->diagnostics.empty() || report_->diagnostics.back().message != s.message()))
      Diag(Severity::kError, DiagKind::kAttribute, fmt::format("operators[{}]", index),
           fmt::format("operators[{}] ({}): {}", index, c.opname, s.message()));
    return;
  }
  if (code == kIf || code == kWhile || code == kCallOnce)
    return unsupported("control flow (IF/WHILE/CALL_ONCE) is not supported");
  if (code > 200) return unsupported("StableHLO ops are not supported");
  if (!Lowered(code)) return unsupported(fmt::format("op {} is not supported", c.opname));
  const size_t need = MinInputs(code);
  if (c.num_inputs() < need)
    return (void)Fail(c, "inputs", "{} needs at least {} inputs, the operator has {}", c.opname, need, c.num_inputs());
  for (size_t i = 0; i < need; ++i)
    if (!c.has_input(i) && !OptionalInput(code, i))
      return (void)Fail(c, fmt::format("inputs[{}]", i), "input {} is absent (-1) but required", i);
  Status s = LowerOperator(c);
  if (!s.ok() && (report_->diagnostics.empty() || report_->diagnostics.back().message != s.message()))
    Diag(Severity::kError, DiagKind::kAttribute, fmt::format("operators[{}]", index),
         fmt::format("operators[{}] ({}): {}", index, c.opname, s.message()));
}

void Importer::MarkOutputs() {
  if (!sg_->outputs()) return;
  for (int32_t i : *sg_->outputs()) {
    Val& v = V(i);
    if (!v.available) {
      if (!HasErrors(report_->diagnostics))
        Diag(Severity::kError, DiagKind::kMissingProducer, v.name,
             fmt::format("subgraph output '{}' is not produced by any operator", v.name));
      continue;
    }
    if (v.is_const() && v.id == kInvalidId) {
      Diag(Severity::kError, DiagKind::kStaticData, v.name,
           fmt::format("subgraph output '{}' is a constant; constant outputs are not supported", v.name));
      continue;
    }
    if (v.id == kInvalidId) {
      // Only the NCHW form exists: the output gets the TFLite name and layout.
      if (graph_.tensor(v.nchw).name == v.name) (void)graph_.RenameTensor(v.nchw, UniqueName(v.name + "/nchw"));
      auto t = Transposed(v, v.nchw, kToNhwc, v.name);
      if (!t.ok()) {
        Diag(Severity::kError, DiagKind::kAttribute, v.name, t.status().message());
        continue;
      }
      v.id = t.value();
    }
    const Tensor& t = graph_.tensor(v.id);
    if (t.is_output) continue;
    if (t.name != v.name && t.kind == TensorKind::kActivation && !graph_.FindTensor(v.name))
      (void)graph_.RenameTensor(v.id, v.name);
    Status s = graph_.MarkOutput(v.id);
    if (!s.ok()) Diag(Severity::kError, DiagKind::kAttribute, v.name, s.message());
    // A quantized output is the model's quantized type, as an input is.
    if (s.ok() && v.enc && IsFloat(graph_.tensor(v.id).dtype)) (void)graph_.SetTensorDType(v.id, v.enc->dtype);
  }
}

Result<Graph> Importer::Run() {
  report_->ir_version = m_.version();
  report_->producer = "tflite";
  if (m_.description() && m_.description()->size())
    report_->producer += " (" + m_.description()->str().substr(0, 200) + ")";
  report_->opsets["tflite"] = m_.version();
  if (m_.subgraphs()->size() > 1)
    Diag(Severity::kWarning, DiagKind::kAttribute, "subgraphs",
         fmt::format("the model has {} subgraphs; only subgraphs[0] (the main graph) is imported",
                     m_.subgraphs()->size()));
  (void)SetupValues();
  (void)LoadInputs();
  if (sg_->operators())
    for (size_t i = 0; i < sg_->operators()->size(); ++i)
      LowerOp(i, *sg_->operators()->Get(static_cast<flatbuffers::uoffset_t>(i)));
  MarkOutputs();
  graph_.InferShapes();
  if (!HasErrors(report_->diagnostics))
    for (Diagnostic& d : graph_.Validate()) report_->diagnostics.push_back(std::move(d));
  for (TensorId id = 0; id < graph_.tensor_count(); ++id) {
    const Tensor& t = graph_.tensor(id);
    if (!t.shape.rank_known()) report_->dynamic_dims.push_back(fmt::format("tensor '{}' has unknown rank", t.name));
    else
      for (size_t d = 0; d < t.shape.rank(); ++d)
        if (!t.shape[d].known()) report_->dynamic_dims.push_back(fmt::format("tensor '{}' dim {} ('?')", t.name, d));
  }
  if (HasErrors(report_->diagnostics)) {
    std::string text;
    size_t errors = 0;
    for (const Diagnostic& d : report_->diagnostics) {
      if (d.severity != Severity::kError) continue;
      if (++errors <= 50) text += "\n  " + d.message;
    }
    if (errors > 50) text += fmt::format("\n  ... and {} more", errors - 50);
    return Error(StatusCode::kValidationFailed, "model cannot be imported ({} errors):{}", errors, text);
  }
  return std::move(graph_);
}

// ---------------------------------------------------------------------------
// The op table
// ---------------------------------------------------------------------------

#define TRY(var, expr)             \
  auto var##_r = (expr);           \
  if (!var##_r.ok()) return var##_r.status(); \
  TensorId var = var##_r.value()

Status Done(const Result<TensorId>& r) { return r.ok() ? Status::Ok() : r.status(); }

int ActOf(fb::ActivationFunctionType a) { return static_cast<int>(a); }

// Rank-4 activation that exists only in NCHW (so an NCHW consumer avoids a Transpose).
bool NchwOnly(const Val& v) { return v.nchw != kInvalidId && v.id == kInvalidId; }
bool ScalarConst(const Val& v) { return v.is_const() && v.shape.element_count() == 1u && v.shape.rank() <= 1; }

Status LowerConv(OpCtx& c) {
  Importer& imp = c.imp;
  const bool depthwise = c.code == kDepthwiseConv2d;
  int64_t sw = 0, sh = 0, dw = 1, dh = 1;
  bool same = true;
  int act = 0;
  if (depthwise) {
    const auto* o = c.op.builtin_options_as_DepthwiseConv2DOptions();
    if (!o) return imp.Fail(c, "builtin_options", "DepthwiseConv2DOptions are missing");
    sw = o->stride_w(); sh = o->stride_h(); dw = o->dilation_w_factor(); dh = o->dilation_h_factor();
    same = o->padding() == fb::Padding::SAME; act = ActOf(o->fused_activation_function());
  } else {
    const auto* o = c.op.builtin_options_as_Conv2DOptions();
    if (!o) return imp.Fail(c, "builtin_options", "Conv2DOptions are missing");
    sw = o->stride_w(); sh = o->stride_h(); dw = o->dilation_w_factor(); dh = o->dilation_h_factor();
    same = o->padding() == fb::Padding::SAME; act = ActOf(o->fused_activation_function());
  }
  if (sw < 1 || sh < 1 || dw < 1 || dh < 1)
    return imp.Fail(c, "builtin_options", "strides ({}, {}) and dilations ({}, {}) must be >= 1", sh, sw, dh, dw);
  const Val& x = imp.In(c, 0);
  const Val& w = imp.In(c, 1);
  if (x.shape.rank() != 4 || w.shape.rank() != 4)
    return imp.Fail(c, "inputs", "input {} and filter {} must be 4-D", x.shape.ToString(), w.shape.ToString());
  const Ints xs = x.shape.extents(), ws = w.shape.extents();
  const int64_t kh = ws[1], kw = ws[2];
  const Ints perm = depthwise ? Ints{3, 0, 1, 2} : Ints{0, 3, 1, 2};
  TRY(xin, imp.GetNchw(c, 0));
  TensorId wid;
  if (w.is_const()) {
    TRY(t, imp.GetPermutedConst(c, 1, perm, "weight"));
    wid = t;
  } else {
    TRY(raw, imp.Get(c, 1));
    TRY(t, imp.EmitTemp(c, "Transpose", "weight_layout", {raw}, {{"perm", perm}}));
    wid = t;
  }
  std::vector<TensorId> inputs = {xin, wid};
  if (c.has_input(2)) {
    TRY(b, imp.Get(c, 2));
    inputs.push_back(b);
  }
  const auto [pt, pb] = SamePads(xs[1], kh, sh, dh, same);
  const auto [pl, pr] = SamePads(xs[2], kw, sw, dw, same);
  AttributeMap attrs = {{"strides", Ints{sh, sw}}, {"dilations", Ints{dh, dw}}, {"pads", Ints{pt, pl, pb, pr}}};
  std::string type = "Conv2d";
  if (depthwise) {
    type = "DepthWiseConv2d";
    attrs["group"] = xs[3];
  } else {
    if (ws[3] <= 0 || xs[3] % ws[3] != 0)
      return imp.Fail(c, "inputs[1]", "input has {} channels, not a multiple of the filter's {}", xs[3], ws[3]);
    attrs["group"] = xs[3] / ws[3];
  }
  return Done(imp.Emit(c, type, inputs, attrs, 0, true, act));
}

// A transposed convolution whose inputs sit at `x_in`, `w_in` (OHWI) and
// `b_in` (absent: no bias), as TRANSPOSE_CONV and MediaPipe's custom
// Convolution2DTransposeBias both compute it.
Status EmitTransposeConv(OpCtx& c, size_t x_in, size_t w_in, size_t b_in, int64_t sh, int64_t sw, bool same,
                         int act) {
  Importer& imp = c.imp;
  if (sh < 1 || sw < 1) return imp.Fail(c, "builtin_options", "strides ({}, {}) must be >= 1", sh, sw);
  const Val& w = imp.In(c, w_in);
  const Val& x = imp.In(c, x_in);
  const Val& y = imp.Out(c, 0);
  if (x.shape.rank() != 4 || w.shape.rank() != 4 || y.shape.rank() != 4)
    return imp.Fail(c, "inputs", "input {}, weights {} and output {} must be 4-D", x.shape.ToString(),
                    w.shape.ToString(), y.shape.ToString());
  if (!w.is_const()) return imp.Fail(c, fmt::format("inputs[{}]", w_in), "weights must be a constant");
  if (!x.shape.fully_known() || !w.shape.fully_known() || !y.shape.fully_known())
    return imp.Fail(c, "inputs", "transposed convolution needs static shapes");
  const Ints xs = x.shape.extents(), ws = w.shape.extents(), ys = y.shape.extents();
  TRY(xin, imp.GetNchw(c, x_in));
  TRY(wid, imp.GetPermutedConst(c, w_in, {3, 0, 1, 2}, "weight"));  // OHWI -> IOHW
  std::vector<TensorId> inputs = {xin, wid};
  if (c.has_input(b_in)) {
    TRY(b, imp.Get(c, b_in));
    inputs.push_back(b);
  }
  Ints pads(4, 0), out_pad(2, 0);
  const int64_t in[2] = {xs[1], xs[2]}, k[2] = {ws[1], ws[2]}, s[2] = {sh, sw}, out[2] = {ys[1], ys[2]};
  for (size_t i = 0; i < 2; ++i) {
    const int64_t total = (in[i] - 1) * s[i] + k[i] - out[i];
    if (total >= 0) {
      pads[i] = same ? total / 2 : 0;
      pads[i + 2] = total - pads[i];
    } else {
      out_pad[i] = -total;
    }
  }
  AttributeMap attrs = {{"strides", Ints{sh, sw}}, {"pads", pads}, {"dilations", Ints{1, 1}}, {"group", int64_t{1}}};
  if (out_pad[0] || out_pad[1]) attrs["output_padding"] = out_pad;
  return Done(imp.Emit(c, "TransposeConv2d", inputs, attrs, 0, true, act));
}

Status LowerTransposeConv(OpCtx& c) {
  const auto* o = c.op.builtin_options_as_TransposeConvOptions();
  if (!o) return c.imp.Fail(c, "builtin_options", "TransposeConvOptions are missing");
  return EmitTransposeConv(c, 2, 1, 3, o->stride_h(), o->stride_w(), o->padding() == fb::Padding::SAME,
                           ActOf(o->fused_activation_function()));
}

// MediaPipe's Convolution2DTransposeBias (mediapipe/util/tflite/operations/
// transpose_conv_bias.cc): inputs data, OHWI weights, bias; its custom options
// are the raw struct TfLiteTransposeConvParams {int32 padding (1 SAME,
// 2 VALID); int32 stride_width; int32 stride_height}, little-endian.
Status LowerConvolution2DTransposeBias(OpCtx& c) {
  const auto* opts = c.op.custom_options();
  if (!opts || opts->size() < 12)
    return c.imp.Fail(c, "custom_options", "Convolution2DTransposeBias needs 12 bytes of options (padding, "
                      "stride_width, stride_height), got {}", opts ? opts->size() : 0);
  if (c.num_inputs() != 3 || !c.has_input(0) || !c.has_input(1) || !c.has_input(2))
    return c.imp.Fail(c, "inputs", "Convolution2DTransposeBias takes data, weights and bias");
  int32_t p[3];
  std::memcpy(p, opts->data(), sizeof p);
  if (p[0] != 1 && p[0] != 2)
    return c.imp.Fail(c, "custom_options", "padding {} is neither SAME (1) nor VALID (2)", p[0]);
  return EmitTransposeConv(c, 0, 1, 2, p[2], p[1], p[0] == 1, 0);  // no fused activation
}

Status LowerFullyConnected(OpCtx& c) {
  Importer& imp = c.imp;
  const auto* o = c.op.builtin_options_as_FullyConnectedOptions();
  const int act = o ? ActOf(o->fused_activation_function()) : 0;
  if (o && o->weights_format() != 0)
    return imp.Fail(c, "builtin_options.weights_format", "shuffled weights (format {}) are not supported",
                    o->weights_format());
  const bool keep = o && o->keep_num_dims();
  const Val& x = imp.In(c, 0);
  const Val& w = imp.In(c, 1);
  const Val& y = imp.Out(c, 0);
  if (w.shape.rank() != 2) return imp.Fail(c, "inputs[1]", "weights must be 2-D [out, in], got {}", w.shape.ToString());
  TRY(xin, imp.Get(c, 0));
  TensorId a = xin;
  if (!keep && x.shape.rank() != 2) {
    const int64_t kdim = w.shape[1].value;
    const auto n = x.shape.element_count().value_or(0);
    if (kdim <= 0 || n % static_cast<uint64_t>(kdim) != 0)
      return imp.Fail(c, "inputs[0]", "input {} cannot be flattened to [*, {}]", x.shape.ToString(), kdim);
    TRY(r, imp.EmitTemp(c, "Reshape", "flatten", {xin},
                        {{"shape", Ints{static_cast<int64_t>(n / static_cast<uint64_t>(kdim)), kdim}}}));
    a = r;
  }
  TRY(wid, imp.Get(c, 1));
  std::vector<TensorId> inputs = {a, wid};
  if (c.has_input(2)) {
    TRY(b, imp.Get(c, 2));
    inputs.push_back(b);
  }
  (void)y;
  return Done(imp.Emit(c, "FullyConnected", inputs, {}, 0, false, act));
}

Status LowerPool(OpCtx& c) {
  Importer& imp = c.imp;
  const auto* o = c.op.builtin_options_as_Pool2DOptions();
  if (!o) return imp.Fail(c, "builtin_options", "Pool2DOptions are missing");
  const int64_t sh = o->stride_h(), sw = o->stride_w(), fh = o->filter_height(), fw = o->filter_width();
  if (sh < 1 || sw < 1 || fh < 1 || fw < 1)
    return imp.Fail(c, "builtin_options", "strides ({}, {}) and filter ({}, {}) must be >= 1", sh, sw, fh, fw);
  const Val& x = imp.In(c, 0);
  if (x.shape.rank() != 4) return imp.Fail(c, "inputs[0]", "input must be 4-D, got {}", x.shape.ToString());
  const Ints xs = x.shape.extents();
  const bool same = o->padding() == fb::Padding::SAME;
  const auto [pt, pb] = SamePads(xs[1], fh, sh, 1, same);
  const auto [pl, pr] = SamePads(xs[2], fw, sw, 1, same);
  TRY(xin, imp.GetNchw(c, 0));
  AttributeMap attrs = {{"kernel_shape", Ints{fh, fw}}, {"strides", Ints{sh, sw}}, {"pads", Ints{pt, pl, pb, pr}},
                        {"ceil_mode", int64_t{0}}};
  const bool avg = c.code == kAveragePool2d;
  if (avg) attrs["count_include_pad"] = int64_t{0};  // TFLite averages the valid elements only
  return Done(imp.Emit(c, avg ? "PoolAvg2d" : "PoolMax2d", {xin}, attrs, 0, true,
                       ActOf(o->fused_activation_function())));
}

Status LowerBinary(OpCtx& c) {
  Importer& imp = c.imp;
  std::string type;
  int act = 0;
  switch (c.code) {
    case kAdd: type = "ElementWiseAdd";
      if (auto* o = c.op.builtin_options_as_AddOptions()) act = ActOf(o->fused_activation_function());
      break;
    case kSub: type = "ElementWiseSubtract";
      if (auto* o = c.op.builtin_options_as_SubOptions()) act = ActOf(o->fused_activation_function());
      break;
    case kMul: type = "ElementWiseMultiply";
      if (auto* o = c.op.builtin_options_as_MulOptions()) act = ActOf(o->fused_activation_function());
      break;
    case kDiv: type = "ElementWiseDivide";
      if (auto* o = c.op.builtin_options_as_DivOptions()) act = ActOf(o->fused_activation_function());
      break;
    case kMaximum: type = "ElementWiseMaximum"; break;
    case kMinimum: type = "ElementWiseMinimum"; break;
    case kSquaredDifference: type = "ElementWiseSquaredDifference"; break;
    default: return imp.Fail(c, "", "not a binary op");
  }
  if (c.num_inputs() != 2) return imp.Fail(c, "inputs", "expects 2 inputs, got {}", c.num_inputs());
  const Val& a = imp.In(c, 0);
  const Val& b = imp.In(c, 1);
  // Stay in NCHW when both operands are NCHW activations of one shape, or one is a scalar constant.
  const bool nchw = (NchwOnly(a) && (ScalarConst(b) || (NchwOnly(b) && a.shape == b.shape))) ||
                    (NchwOnly(b) && ScalarConst(a));
  std::vector<TensorId> in;
  for (size_t i = 0; i < 2; ++i) {
    const Val& v = imp.In(c, i);
    auto t = nchw && !ScalarConst(v) ? imp.GetNchw(c, i) : imp.Get(c, i);
    if (!t.ok()) return t.status();
    in.push_back(t.value());
  }
  return Done(imp.Emit(c, type, in, {}, 0, nchw, act));
}

Status LowerUnary(OpCtx& c) {
  Importer& imp = c.imp;
  std::string type;
  AttributeMap attrs;
  switch (c.code) {
    case kRelu: type = "Relu"; break;
    case kRelu6: type = "ReluMinMax"; attrs = {{"min_value", 0.0}, {"max_value", 6.0}}; break;
    case kReluN1To1: type = "ReluMinMax"; attrs = {{"min_value", -1.0}, {"max_value", 1.0}}; break;
    case kRelu0To1: type = "ReluMinMax"; attrs = {{"min_value", 0.0}, {"max_value", 1.0}}; break;
    case kLogistic: type = "Sigmoid"; break;
    case kTanh: type = "Tanh"; break;
    case kHardSwish: type = "HardSwish"; break;
    case kElu: type = "Elu"; attrs = {{"alpha", 1.0}}; break;
    case kExp: type = "ElementWiseExp"; break;
    case kLog: type = "ElementWiseLog"; break;
    case kSqrt: type = "ElementWiseSquareRoot"; break;
    case kRsqrt: type = "ElementWiseRsqrt"; break;
    case kAbs: type = "ElementWiseAbs"; break;
    case kNeg: type = "ElementWiseNeg"; break;
    case kFloor: type = "ElementWiseFloor"; break;
    default: break;
  }
  const bool nchw = NchwOnly(imp.In(c, 0));
  TRY(x, nchw ? imp.GetNchw(c, 0) : imp.Get(c, 0));
  if (c.code == kSquare) return Done(imp.Emit(c, "ElementWiseMultiply", {x, x}, {}, 0, nchw));
  if (c.code == kLeakyRelu) {
    const auto* o = c.op.builtin_options_as_LeakyReluOptions();
    const float alpha = o ? o->alpha() : 0.2f;
    auto slope = imp.graph().AddConstant(fmt::format("{}/alpha", c.name), DType::kFloat32, Shape::Scalar(),
                                         StaticData::Copy(&alpha, sizeof alpha));
    if (!slope.ok()) return imp.Fail(c, "builtin_options.alpha", "{}", slope.status().message());
    return Done(imp.Emit(c, "Prelu", {x, slope.value()}, {}, 0, nchw));
  }
  return Done(imp.Emit(c, type, {x}, attrs, 0, nchw));
}

Status LowerPrelu(OpCtx& c) {
  Importer& imp = c.imp;
  TRY(x, imp.Get(c, 0));
  TRY(alpha, imp.Get(c, 1));
  return Done(imp.Emit(c, "Prelu", {x, alpha}));
}

Status LowerSoftmax(OpCtx& c) {
  Importer& imp = c.imp;
  TRY(x, imp.Get(c, 0));
  if (c.code == kLogSoftmax) return Done(imp.Emit(c, "LogSoftmax", {x}, {{"axis", int64_t{-1}}}));
  if (c.code == kL2Normalization) return Done(imp.Emit(c, "L2Norm", {x}, {{"axis", int64_t{-1}}}));
  const auto* o = c.op.builtin_options_as_SoftmaxOptions();
  const double beta = o ? o->beta() : 1.0;
  return Done(imp.Emit(c, "Softmax", {x}, {{"axis", int64_t{-1}}, {"beta", beta}}));
}

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

Status LowerReshape(OpCtx& c) {
  Importer& imp = c.imp;
  TRY(x, imp.Get(c, 0));
  // The declared output shape is static in a TFLite file.
  return Done(imp.Emit(c, "Reshape", {x}, {{"shape", imp.Out(c, 0).shape.extents()}}));
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

Status LowerResize(OpCtx& c) {
  Importer& imp = c.imp;
  const bool bilinear = c.code == kResizeBilinear;
  bool align = false, half = false;
  if (bilinear) {
    if (const auto* o = c.op.builtin_options_as_ResizeBilinearOptions()) {
      align = o->align_corners();
      half = o->half_pixel_centers();
    }
  } else if (const auto* o = c.op.builtin_options_as_ResizeNearestNeighborOptions()) {
    align = o->align_corners();
    half = o->half_pixel_centers();
  }
  auto size = imp.ConstInts(imp.In(c, 1));
  const Val& x = imp.In(c, 0);
  if (!size || size->size() != 2) return imp.Fail(c, "inputs[1]", "size must be an int32 constant [new_height, new_width]");
  if (x.shape.rank() != 4) return imp.Fail(c, "inputs[0]", "input must be 4-D, got {}", x.shape.ToString());
  TRY(xin, imp.GetNchw(c, 0));
  std::string ctm = align ? "align_corners" : half ? (bilinear ? "half_pixel" : "tf_half_pixel_for_nn") : "asymmetric";
  AttributeMap attrs = {{"mode", std::string(bilinear ? "linear" : "nearest")},
                        {"coordinate_transformation_mode", ctm},
                        {"nearest_mode", std::string(align ? "round_prefer_ceil" : "floor")},
                        {"sizes", Ints{x.shape[0].value, x.shape[3].value, (*size)[0], (*size)[1]}}};
  return Done(imp.Emit(c, "Resize", {xin}, attrs, 0, true));
}

Status LowerDepthSpace(OpCtx& c) {
  Importer& imp = c.imp;
  int64_t block = 0;
  if (c.code == kDepthToSpace) {
    if (const auto* o = c.op.builtin_options_as_DepthToSpaceOptions()) block = o->block_size();
  } else if (const auto* o = c.op.builtin_options_as_SpaceToDepthOptions()) {
    block = o->block_size();
  }
  if (block < 1) return imp.Fail(c, "builtin_options.block_size", "block_size must be >= 1, got {}", block);
  TRY(xin, imp.GetNchw(c, 0));
  AttributeMap attrs = {{"block_size", block}};
  if (c.code == kDepthToSpace) attrs["mode"] = std::string("DCR");  // TF's channel order
  return Done(imp.Emit(c, c.code == kDepthToSpace ? "DepthToSpace" : "SpaceToDepth", {xin}, attrs, 0, true));
}

Status LowerBatchMatmul(OpCtx& c) {
  Importer& imp = c.imp;
  const auto* o = c.op.builtin_options_as_BatchMatMulOptions();
  TRY(a, imp.Get(c, 0));
  TRY(b, imp.Get(c, 1));
  return Done(imp.Emit(c, "MatMul", {a, b},
                       {{"transpose_in0", int64_t{o && o->adj_x()}}, {"transpose_in1", int64_t{o && o->adj_y()}}}));
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
  ++imp.report().qdq_folded;
  y.id = x.id;
  y.nchw = x.nchw;
  y.available = true;
  return Status::Ok();
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
  ++imp.report().qdq_folded;
  y.id = x.id;
  y.nchw = x.nchw;
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

Status LowerOperator(OpCtx& c) {
  switch (c.code) {
    case kConv2d: case kDepthwiseConv2d: return LowerConv(c);
    case kTransposeConv: return LowerTransposeConv(c);
    case kFullyConnected: return LowerFullyConnected(c);
    case kAveragePool2d: case kMaxPool2d: return LowerPool(c);
    case kAdd: case kSub: case kMul: case kDiv: case kMaximum: case kMinimum: case kSquaredDifference:
      return LowerBinary(c);
    case kPrelu: return LowerPrelu(c);
    case kSoftmax: case kLogSoftmax: case kL2Normalization: return LowerSoftmax(c);
    case kMean: case kSum: case kReduceMax: case kReduceMin: case kReduceProd: return LowerReduce(c);
    case kReshape: case kSqueeze: case kExpandDims: return LowerReshape(c);
    case kTranspose: return LowerTranspose(c);
    case kConcatenation: return LowerConcat(c);
    case kPad: case kPadV2: return LowerPad(c);
    case kSlice: case kStridedSlice: return LowerSlice(c);
    case kSplit: case kSplitV: return LowerSplit(c);
    case kGather: return LowerGather(c);
    case kResizeBilinear: case kResizeNearestNeighbor: return LowerResize(c);
    case kDepthToSpace: case kSpaceToDepth: return LowerDepthSpace(c);
    case kBatchMatmul: return LowerBatchMatmul(c);
    case kPack: return LowerPack(c);
    case kQuantize: return LowerQuantize(c);
    case kDequantize: return LowerDequantize(c);
    case kCast: return LowerCast(c);
    default: return LowerUnary(c);
  }
}

#undef TRY

// ---------------------------------------------------------------------------
// Entry
// ---------------------------------------------------------------------------

Result<Graph> RunImport(const uint8_t* data, size_t size, const std::string& what, const OnnxImportOptions& options,
                        OnnxImportReport* report) {
  OnnxImportReport local;
  OnnxImportReport* r = report ? report : &local;
  Status v = VerifyTfliteModel(data, size, size, what);
  if (!v.ok()) {
    Diagnostic d;
    d.kind = DiagKind::kStaticData;
    d.field = "model";
    d.message = v.message();
    r->diagnostics.push_back(std::move(d));
    return v;
  }
  Importer imp(*fb::GetModel(data), options, r, data, size);
  return imp.Run();
}

}  // namespace
}  // namespace tflite_import

Result<Graph> ImportTfliteBytes(const void* data, size_t size, const OnnxImportOptions& options,
                                OnnxImportReport* report) {
  if (!data && size) return InvalidArgument("failed to import TFLite: data is NULL");
  if (size > options.max_model_bytes)
    return Error(StatusCode::kInvalidArgument, "model bytes: {} bytes exceeds the {}-byte limit", size,
                 options.max_model_bytes);
  // The verifier checks alignment: work on an 8-byte-aligned copy if needed.
  std::vector<uint64_t> aligned;
  const auto* p = static_cast<const uint8_t*>(data);
  if (reinterpret_cast<uintptr_t>(p) % 8 != 0) {
    aligned.resize((size + 7) / 8);
    std::memcpy(aligned.data(), data, size);
    p = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  return tflite_import::RunImport(p, size, "model bytes", options, report);
}

Result<Graph> ImportTfliteFile(const std::string& path, const OnnxImportOptions& options, OnnxImportReport* report) {
  struct stat st {};  // stat, not open: a FIFO must be refused, not block
  if (::stat(path.c_str(), &st) != 0)
    return Error(StatusCode::kIoError, "failed to open TFLite model '{}': {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Error(StatusCode::kIoError, "TFLite model '{}' is not a regular file", path);
  const auto size = static_cast<uint64_t>(st.st_size);
  const uint64_t limit = std::max<uint64_t>(options.max_model_bytes, uint64_t{64} << 30);
  if (size > limit)
    return Error(StatusCode::kInvalidArgument, "'{}': {} bytes exceeds the {}-byte limit", path, size, limit);
  if (size < 8)
    return Error(StatusCode::kParseError, "'{}': {} bytes is too small for a TFLite model (truncated file?)", path, size);
  auto file = StaticData::MapFile(path, 0, size);
  if (!file.ok()) return file.status();
  return tflite_import::RunImport(file.value()->data(), file.value()->size(), "'" + path + "'", options, report);
}

}  // namespace qairt
