// TFLite tensors as IR values: names, shapes and encodings from the
// quantization parameters, constant data from the buffers (in the file or
// external), the TFLite-layout and NCHW forms of each tensor, and the
// emission of the IR ops that produce an operator's outputs.
#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/ranges.h>

#include "onnx/importer.h"  // ReadAsFloats (fp16 weights)
#include "tflite/sparse_tensor.h"
#include "tflite/tflite_importer.h"

namespace qairt::tflite_import {
namespace {

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

// "N,1,N" for the signature [-1, 1, -1]: the form --input_dim takes.
std::string DimsExample(const Ints& signature) {
  std::string out;
  for (int64_t d : signature) out += (out.empty() ? "" : ",") + (d < 0 ? std::string("N") : std::to_string(d));
  return out;
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

}  // namespace

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
    if (t->shape_signature())
      for (int32_t d : *t->shape_signature()) v.signature.push_back(d);
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
      std::vector<uint8_t> dense;  // a sparse constant's values in place (the verifier checked its layout)
      if (n > 0 && t->sparsity()) {
        auto d = Densify(*t->sparsity(), extents, TensorTypeBits(v.type) / 8, p, n);
        if (!d.ok()) {
          Diag(Severity::kError, DiagKind::kStaticData, v.name,
               fmt::format("tensor '{}' (tensors[{}]).sparsity: {}", v.name, i, d.status().message()));
          continue;
        }
        dense = std::move(d.value());
        p = dense.data();
        n = dense.size();
        ++densified_;
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
  if (!options_.define_symbols.empty())
    Diag(Severity::kWarning, DiagKind::kAttribute, "define_symbol",
         "--define_symbol is ignored for TFLite models (they name no dims): give an input's shape with --input_dim");
  std::set<std::string> matched;
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
    ResizeInput(v, &matched);
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
  for (const auto& [name, dims] : options_.input_dims)
    if (!matched.count(name))
      Diag(Severity::kError, DiagKind::kAttribute, name,
           fmt::format("--input_dim names '{}', which is not an input of the model", name));
  return Status::Ok();
}

// TFLite's interpreter runs a model at the shapes in the file until an input
// is resized; a dim its shape_signature marks -1 is the one meant to be
// resized (a sequence or sample length). --input_dim resizes; the ops'
// output shapes then follow from the lowered graph.
void Importer::ResizeInput(Val& v, std::set<std::string>* matched) {
  const bool dynamic = std::find(v.signature.begin(), v.signature.end(), -1) != v.signature.end();
  auto it = options_.input_dims.find(v.name);
  if (it == options_.input_dims.end()) {
    // A dynamic batch alone (signature [-1, ...] at the file's 1) is how TF
    // exports most models: a note; any other dynamic dim is a length the
    // file's placeholder rarely fits.
    bool batch_only = !v.signature.empty() && v.shape.rank() == v.signature.size() && v.shape[0].value == 1;
    for (size_t d = 1; batch_only && d < v.signature.size(); ++d) batch_only = v.signature[d] != -1;
    if (dynamic)
      Diag(batch_only ? Severity::kNote : Severity::kWarning, DiagKind::kShapeMismatch, v.name,
           fmt::format("input '{}' is dynamic (shape signature [{}]); it is imported at the file's shape {}, as "
                       "TFLite runs it before a resize: give its real shape with --input_dim {} {}",
                       v.name, fmt::join(v.signature, ", "), v.shape.ToString(), v.name,
                       DimsExample(v.signature)));
    return;
  }
  matched->insert(v.name);
  const Ints& given = it->second;
  if (given.size() != v.shape.rank()) {
    Diag(Severity::kError, DiagKind::kShapeMismatch, v.name,
         fmt::format("--input_dim {}: {} dims given but the input has rank {} {}", v.name, given.size(),
                     v.shape.rank(), v.shape.ToString()));
    return;
  }
  for (size_t i = 0; i < given.size(); ++i) {
    if (given[i] < 1) {
      Diag(Severity::kError, DiagKind::kShapeMismatch, v.name,
           fmt::format("--input_dim {}: dim {} is {}; dims must be >= 1", v.name, i, given[i]));
      return;
    }
    const bool fixed = !dynamic || v.signature.size() != given.size() || v.signature[i] != -1;
    if (fixed && given[i] != v.shape[i].value)
      Diag(Severity::kWarning, DiagKind::kShapeMismatch, v.name,
           fmt::format("--input_dim {}: dim {} overridden from {} to {}, which the model's shape signature {} "
                       "fixes", v.name, i, v.shape[i].value, given[i],
                       v.signature.empty() ? std::string("(none: every dim)")
                                           : fmt::format("[{}]", fmt::join(v.signature, ", "))));
  }
  if (Shape::FromExtents(given) != v.shape) resized_ = true;
  v.shape = Shape::FromExtents(given);
}

void Importer::ResetDeclaredShapes(const OpCtx& c) {
  for (size_t k = 0; k < c.num_outputs(); ++k) {
    if (c.out_index(k) < 0) continue;
    Val& v = V(c.out_index(k));
    if (v.is_const() || !v.shape.rank_known()) continue;
    std::vector<Dim> dims;
    for (size_t d = 0; d < v.shape.rank(); ++d) {
      const bool kept = v.signature.size() == v.shape.rank() && v.signature[d] >= 0;
      dims.push_back(kept ? v.shape[d] : Dim());
    }
    v.shape = Shape(std::move(dims));
  }
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
  if (resized_) {
    // What the resized graph makes is the shape later ops read.
    const Shape& got = graph_.tensor(id).shape;
    if (got.rank_known()) v.shape = nchw && got.rank() == 4 ? PermutedShape(got, kToNhwc) : got;
  }
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
  if (resized_ && v.shape.rank_known() && !v.shape.fully_known()) {
    // Resized: only the dims the signature fixes are declared.
    const Shape want = nchw && v.shape.rank() == 4 ? PermutedShape(v.shape, kToNchw) : v.shape;
    bool agree = got.rank_known() && got.rank() == want.rank();
    for (size_t d = 0; agree && d < want.rank(); ++d)
      agree = !want[d].known() || !got[d].known() || want[d].value == got[d].value;
    if (!agree)
      return Fail(c, fmt::format("outputs[{}]", k), "lowered to {} with output shape {}, but the model's shape "
                  "signature for '{}' is {} (the inputs were resized)", type, got.ToString(), v.name,
                  want.ToString());
  } else if (got.fully_known() && v.shape.rank_known()) {
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

}  // namespace qairt::tflite_import
