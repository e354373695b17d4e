// Structural and semantic verification of a .tflite FlatBuffer: nothing the
// importer reads is used before it has passed here (tflite.md §5-§6: the
// official verifier leaves quantization, Buffer.offset/size, -1 misuse and
// subgraph recursion unchecked, and each gap had a CVE).
#include <flatbuffers/flatbuffers.h>
#include <flatbuffers/verifier.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "tflite/sparse_tensor.h"
#include "tflite/tflite_common.h"
#include "tflite/tflite_import.h"

namespace qairt::tflite_import {

namespace {

struct NameEntry {
  int32_t code;
  const char* name;
};
constexpr NameEntry kNames[] = {
    {0, "ADD"}, {1, "AVERAGE_POOL_2D"}, {2, "CONCATENATION"}, {3, "CONV_2D"}, {4, "DEPTHWISE_CONV_2D"},
    {5, "DEPTH_TO_SPACE"}, {6, "DEQUANTIZE"}, {7, "EMBEDDING_LOOKUP"}, {8, "FLOOR"}, {9, "FULLY_CONNECTED"},
    {11, "L2_NORMALIZATION"}, {13, "LOCAL_RESPONSE_NORMALIZATION"}, {14, "LOGISTIC"}, {16, "LSTM"},
    {17, "MAX_POOL_2D"}, {18, "MUL"}, {19, "RELU"}, {20, "RELU_N1_TO_1"}, {21, "RELU6"}, {22, "RESHAPE"},
    {23, "RESIZE_BILINEAR"}, {25, "SOFTMAX"}, {26, "SPACE_TO_DEPTH"}, {28, "TANH"}, {32, "CUSTOM"}, {34, "PAD"},
    {36, "GATHER"}, {37, "BATCH_TO_SPACE_ND"}, {38, "SPACE_TO_BATCH_ND"}, {39, "TRANSPOSE"}, {40, "MEAN"},
    {41, "SUB"}, {42, "DIV"}, {43, "SQUEEZE"}, {44, "UNIDIRECTIONAL_SEQUENCE_LSTM"}, {45, "STRIDED_SLICE"},
    {47, "EXP"}, {48, "TOPK_V2"}, {49, "SPLIT"}, {50, "LOG_SOFTMAX"}, {53, "CAST"}, {54, "PRELU"},
    {55, "MAXIMUM"}, {56, "ARG_MAX"}, {57, "MINIMUM"}, {58, "LESS"}, {59, "NEG"}, {60, "PADV2"}, {61, "GREATER"},
    {64, "SELECT"}, {65, "SLICE"}, {67, "TRANSPOSE_CONV"}, {69, "TILE"}, {70, "EXPAND_DIMS"}, {71, "EQUAL"},
    {73, "LOG"}, {74, "SUM"}, {75, "SQRT"}, {76, "RSQRT"}, {77, "SHAPE"}, {78, "POW"}, {81, "REDUCE_PROD"},
    {82, "REDUCE_MAX"}, {83, "PACK"}, {88, "UNPACK"}, {89, "REDUCE_MIN"}, {92, "SQUARE"}, {94, "FILL"},
    {97, "RESIZE_NEAREST_NEIGHBOR"}, {98, "LEAKY_RELU"}, {99, "SQUARED_DIFFERENCE"}, {100, "MIRROR_PAD"},
    {101, "ABS"}, {102, "SPLIT_V"}, {107, "GATHER_ND"}, {111, "ELU"}, {114, "QUANTIZE"}, {117, "HARD_SWISH"},
    {118, "IF"}, {119, "WHILE"}, {123, "SELECT_V2"}, {124, "DENSIFY"}, {126, "BATCH_MATMUL"},
    {127, "PLACEHOLDER_FOR_GREATER_OP_CODES"}, {128, "CUMSUM"}, {129, "CALL_ONCE"}, {130, "BROADCAST_TO"},
    {132, "CONV_3D"}, {150, "GELU"}, {152, "RELU_0_TO_1"},
};

constexpr const char* kTypeNames[] = {"FLOAT32", "FLOAT16", "INT32",  "UINT8",      "INT64",     "STRING",
                                      "BOOL",    "INT16",   "COMPLEX64", "INT8",     "FLOAT64",   "COMPLEX128",
                                      "UINT64",  "RESOURCE", "VARIANT", "UINT32",    "UINT16",    "INT4",
                                      "BFLOAT16", "INT2",   "UINT4",   "FLOAT8_E4M3FN", "FLOAT8_E5M2"};
constexpr uint32_t kTypeBits[] = {32, 16, 32, 8, 64, 0, 8, 16, 64, 8, 64, 128, 64, 0, 0, 32, 16, 4, 16, 2, 4, 8, 8};

// FlatBuffers verifier limits (tflite.md §6: depth 64, tables ~1e6).
constexpr uint32_t kMaxDepth = 64;
constexpr uint32_t kMaxTables = 1u << 22;
// Elements of one tensor (TFLite checks the product against INT32 too).
constexpr uint64_t kMaxElements = uint64_t{1} << 40;

}  // namespace

std::string BuiltinName(int32_t code) {
  for (const NameEntry& e : kNames)
    if (e.code == code) return e.name;
  if (code > 200 && code <= kMaxBuiltinCode) return fmt::format("STABLEHLO_{}", code);
  return fmt::format("BUILTIN_{}", code);
}

std::string_view TensorTypeName(int32_t type) {
  return type >= 0 && type < static_cast<int32_t>(std::size(kTypeNames)) ? kTypeNames[type] : "?";
}

uint32_t TensorTypeBits(int32_t type) {
  return type >= 0 && type < static_cast<int32_t>(std::size(kTypeBits)) ? kTypeBits[type] : 0;
}

std::optional<uint64_t> TensorBytes(int32_t type, uint64_t count) {
  const uint32_t bits = TensorTypeBits(type);
  if (bits == 0) return std::nullopt;
  if (bits < 8) return (count * bits + 7) / 8;  // count <= 2^40: no overflow
  return count * (bits / 8);
}

std::optional<DType> PlainDType(int32_t type) {
  switch (type) {
    case 0: return DType::kFloat32;
    case 1: return DType::kFloat16;
    case 2: return DType::kInt32;
    case 3: return DType::kUInt8;
    case 4: return DType::kInt64;
    case 6: return DType::kBool;
    case 7: return DType::kInt16;
    case 9: return DType::kInt8;
    case 10: return DType::kFloat64;
    case 12: return DType::kUInt64;
    case 15: return DType::kUInt32;
    case 16: return DType::kUInt16;
    case 17: return DType::kInt4;
    case 18: return DType::kBFloat16;
    case 19: return DType::kInt2;
    case 20: return DType::kUInt4;
    default: return std::nullopt;
  }
}

bool OptionalInput(int32_t code, size_t slot) {
  switch (code) {
    case kConv2d: case kDepthwiseConv2d: case kFullyConnected: return slot == 2;  // bias
    case kTransposeConv: return slot == 3;                                         // bias
    default: return false;
  }
}

bool Lowered(int32_t code) {
  switch (code) {
    case kAdd: case kAveragePool2d: case kConcatenation: case kConv2d: case kDepthwiseConv2d: case kDepthToSpace:
    case kDequantize: case kFloor: case kFullyConnected: case kL2Normalization: case kLogistic: case kMaxPool2d:
    case kMul: case kRelu: case kReluN1To1: case kRelu6: case kReshape: case kResizeBilinear: case kSoftmax:
    case kSpaceToDepth: case kTanh: case kPad: case kGather: case kTranspose: case kMean: case kSub: case kDiv:
    case kSqueeze: case kStridedSlice: case kExp: case kSplit: case kSplitV: case kLogSoftmax: case kCast:
    case kPrelu: case kMaximum: case kMinimum: case kNeg: case kPadV2: case kSlice: case kTransposeConv:
    case kExpandDims: case kLog: case kSum: case kSqrt: case kRsqrt: case kReduceProd: case kReduceMax:
    case kReduceMin: case kSquare: case kResizeNearestNeighbor: case kLeakyRelu: case kSquaredDifference:
    case kMirrorPad: case kAbs: case kElu: case kQuantize: case kHardSwish: case kBatchMatmul: case kGelu:
    case kPack: case kRelu0To1: case kDensify:
      return true;
    default: return false;
  }
}

namespace {

std::string ShapeText(const flatbuffers::Vector<int32_t>* shape);

class Checker {
 public:
  Checker(const fb::Model& m, uint64_t fb_size, uint64_t file_size) : m_(m), fb_size_(fb_size), file_size_(file_size) {}

  template <typename... Args>
  void Fail(fmt::format_string<Args...> format, Args&&... args) {
    if (errors_.size() < 20) errors_.push_back(fmt::format(format, std::forward<Args>(args)...));
    else truncated_ = true;
  }

  void Run();
  const std::vector<std::string>& errors() const { return errors_; }
  bool truncated() const { return truncated_; }

 private:
  void CheckBuffers();
  void CheckOperatorCodes();
  void CheckSubgraph(size_t si);
  void CheckTensor(size_t si, size_t ti, const fb::Tensor* t);
  void CheckQuantization(const std::string& where, const fb::Tensor& t, const fb::QuantizationParameters& q);
  void CheckSubgraphCalls();

  const fb::Model& m_;
  uint64_t fb_size_, file_size_;
  std::vector<std::string> errors_;
  bool truncated_ = false;
  std::vector<int32_t> codes_;  // resolved builtin code per operator_codes entry (-1000 if bad)
  std::vector<std::vector<int32_t>> calls_;  // subgraph -> subgraphs it references (IF/WHILE)
};

void Checker::Run() {
  if (m_.version() != 3) Fail("version is {}; only TFLite schema version 3 is supported", m_.version());
  const auto* subgraphs = m_.subgraphs();
  if (!subgraphs || subgraphs->size() == 0) {
    Fail("subgraphs is empty: a model needs a main subgraph (subgraphs[0])");
    return;
  }
  if (m_.external_buffers() && m_.external_buffers()->size() > 0)
    Fail("external_buffers: {} external buffer(s) (schema 3d) are not supported", m_.external_buffers()->size());
  CheckBuffers();
  CheckOperatorCodes();
  if (const auto* md = m_.metadata()) {
    const size_t nb = m_.buffers() ? m_.buffers()->size() : 0;
    for (size_t i = 0; i < md->size(); ++i)
      if (md->Get(i)->buffer() >= nb)
        Fail("metadata[{}].buffer = {} is out of range ({} buffers)", i, md->Get(i)->buffer(), nb);
  }
  if (const auto* mb = m_.metadata_buffer()) {
    const size_t nb = m_.buffers() ? m_.buffers()->size() : 0;
    for (size_t i = 0; i < mb->size(); ++i)
      if (mb->Get(i) < 0 || static_cast<size_t>(mb->Get(i)) >= nb)
        Fail("metadata_buffer[{}] = {} is out of range ({} buffers)", i, mb->Get(i), nb);
  }
  calls_.assign(subgraphs->size(), {});
  for (size_t si = 0; si < subgraphs->size(); ++si) CheckSubgraph(si);
  CheckSubgraphCalls();
}

void Checker::CheckBuffers() {
  const auto* buffers = m_.buffers();
  if (!buffers) return;
  for (size_t i = 0; i < buffers->size(); ++i) {
    const fb::Buffer* b = buffers->Get(i);
    // offset/size are "only valid if > 1" (schema comment); checked without overflow (TF #116632).
    if (b->offset() > 1) {
      if (b->data() && b->data()->size() > 0)
        Fail("buffers[{}] has both inline data ({} bytes) and an external offset {}", i, b->data()->size(), b->offset());
      if (b->offset() < fb_size_ && fb_size_ < file_size_)
        Fail("buffers[{}].offset = {} points into the FlatBuffer part ({} bytes) of the file", i, b->offset(), fb_size_);
      if (b->offset() > file_size_ || b->size() > file_size_ - b->offset())
        Fail("buffers[{}].offset = {} + size = {} is past the end of the file ({} bytes)", i, b->offset(), b->size(),
             file_size_);
    }
  }
}

void Checker::CheckOperatorCodes() {
  const auto* oc = m_.operator_codes();
  if (!oc) return;
  for (size_t i = 0; i < oc->size(); ++i) {
    const fb::OperatorCode* c = oc->Get(i);
    const int32_t code = ResolveBuiltinCode(*c);
    if (code < 0 || code > kMaxBuiltinCode) {
      Fail("operator_codes[{}]: builtin code {} (builtin_code {}, deprecated_builtin_code {}) is outside 0..{}", i,
           code, c->builtin_code(), c->deprecated_builtin_code(), kMaxBuiltinCode);
      codes_.push_back(-1000);
      continue;
    }
    if (code == kCustom && (!c->custom_code() || c->custom_code()->size() == 0))
      Fail("operator_codes[{}].custom_code is empty for a CUSTOM op", i);
    codes_.push_back(code);
  }
}

void Checker::CheckQuantization(const std::string& where, const fb::Tensor& t, const fb::QuantizationParameters& q) {
  if (q.details_type() != fb::QuantizationDetails::NONE) {
    const auto dt = static_cast<int>(q.details_type());
    Fail("{}.quantization.details: {} quantization is not supported (per-tensor and per-channel scale/zero_point only)",
         where, dt == 1 ? "custom" : dt == 2 ? "blockwise" : dt == 3 ? "multi-axis" : fmt::format("type {}", dt));
    return;
  }
  const size_t ns = q.scale() ? q.scale()->size() : 0;
  const size_t nz = q.zero_point() ? q.zero_point()->size() : 0;
  if (ns == 0) {
    if (nz != 0) Fail("{}.quantization.zero_point has {} values but scale is empty", where, nz);
    return;
  }
  if (nz != ns) Fail("{}.quantization.zero_point has {} values, scale has {}: they must be equal", where, nz, ns);
  const size_t rank = t.shape() ? t.shape()->size() : 0;
  const int32_t qd = q.quantized_dimension();
  if (ns > 1 || qd != 0) {
    if (qd < 0 || static_cast<size_t>(qd) >= rank) {
      Fail("{}.quantization.quantized_dimension = {} is out of range for a rank-{} tensor", where, qd, rank);
      return;
    }
    const int32_t extent = t.shape()->Get(static_cast<flatbuffers::uoffset_t>(qd));
    if (ns > 1 && static_cast<int64_t>(ns) != extent)
      Fail("{}.quantization.scale has {} values but dim {} (quantized_dimension) has {}", where, ns, qd, extent);
  }
  for (size_t k = 0; k < ns; ++k) {
    const float s = q.scale()->Get(static_cast<flatbuffers::uoffset_t>(k));
    if (!(s > 0) || !std::isfinite(s) || !std::isnormal(s)) {
      Fail("{}.quantization.scale[{}] = {} must be finite, normal and > 0", where, k, s);
      break;
    }
  }
  const uint32_t bits = TensorTypeBits(t.type() == fb::TensorType::INT64 ? 2 : static_cast<int32_t>(t.type()));
  const bool is_signed = t.type() != fb::TensorType::UINT8 && t.type() != fb::TensorType::UINT4 &&
                         t.type() != fb::TensorType::UINT16 && t.type() != fb::TensorType::UINT32;
  for (size_t k = 0; k < nz && k < ns; ++k) {
    const int64_t z = ZeroPointAt(*q.zero_point(), k);
    int64_t lo = INT32_MIN, hi = INT32_MAX;
    if (bits > 0 && bits < 32) {
      lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
      hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    }
    if (z < lo || z > hi) {
      Fail("{}.quantization.zero_point[{}] = {} is outside the {} range [{}, {}]", where, k, z,
           TensorTypeName(static_cast<int32_t>(t.type())), lo, hi);
      break;
    }
  }
}

void Checker::CheckTensor(size_t si, size_t ti, const fb::Tensor* t) {
  const std::string where = fmt::format("subgraphs[{}].tensors[{}]{}", si, ti,
                                        t->name() ? fmt::format(" '{}'", t->name()->string_view()) : std::string());
  const int32_t type = static_cast<int32_t>(t->type());
  if (type < 0 || type > 22) Fail("{}.type = {} is not a TensorType", where, type);
  uint64_t count = 1;
  bool count_ok = true;
  if (const auto* shape = t->shape()) {
    if (shape->size() > 16) {
      Fail("{}.shape has rank {} (at most 16 is supported)", where, shape->size());
      count_ok = false;
    }
    for (size_t d = 0; d < shape->size() && count_ok; ++d) {
      const int32_t v = shape->Get(static_cast<flatbuffers::uoffset_t>(d));
      if (v < 0) {
        Fail("{}.shape[{}] = {} is negative", where, d, v);
        count_ok = false;
      } else if (v != 0 && count > kMaxElements / static_cast<uint64_t>(v)) {
        Fail("{}.shape: the element count overflows (more than 2^40 elements at dim {})", where, d);
        count_ok = false;
      } else {
        count *= static_cast<uint64_t>(v);
      }
    }
  }
  // A sparse constant stores only the values its sparsity parameters visit.
  std::optional<uint64_t> stored;
  if (t->sparsity() && count_ok) {
    std::vector<int64_t> dims;
    if (t->shape())
      for (int32_t d : *t->shape()) dims.push_back(d);
    auto n = SparseValueCount(*t->sparsity(), dims);
    if (!n.ok()) {
      Fail("{}.sparsity: {}", where, n.status().message());
      count_ok = false;
    } else if (TensorTypeBits(type) < 8) {
      Fail("{}.sparsity: sparse tensors of type {} are not supported", where, TensorTypeName(type));
      count_ok = false;
    } else {
      stored = n.value();
    }
  }
  if (t->external_buffer() != 0) Fail("{}.external_buffer = {}: external buffers (schema 3d) are not supported", where,
                                      t->external_buffer());
  const size_t nb = m_.buffers() ? m_.buffers()->size() : 0;
  if (t->buffer() >= nb && !(t->buffer() == 0 && nb == 0)) {
    Fail("{}.buffer = {} is out of range ({} buffers)", where, t->buffer(), nb);
  } else if (t->buffer() != 0 && count_ok) {
    const fb::Buffer* b = m_.buffers()->Get(t->buffer());
    const uint64_t have = b->offset() > 1 ? b->size() : (b->data() ? b->data()->size() : 0);
    if (have > 0) {
      const auto need = TensorBytes(type, stored.value_or(count));
      if (!need)
        Fail("{}: constant data of type {} is not supported", where, TensorTypeName(type));
      else if (*need != have && stored)
        Fail("{}: buffers[{}] holds {} bytes, but its sparsity parameters visit {} values of {} ({} bytes)", where,
             t->buffer(), have, *stored, TensorTypeName(type), *need);
      else if (*need != have)
        Fail("{}: buffers[{}] holds {} bytes, but shape {} ({} elements of {}) needs {}", where, t->buffer(), have,
             ShapeText(t->shape()), count, TensorTypeName(type), *need);
    }
  } else if (stored && t->buffer() == 0) {
    Fail("{}.sparsity: a sparse tensor must be a constant (it has no buffer)", where);
  }
  if (t->quantization()) CheckQuantization(where, *t, *t->quantization());
}

std::string ShapeText(const flatbuffers::Vector<int32_t>* shape) {
  std::string s = "[";
  for (size_t i = 0; shape && i < shape->size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape->Get(static_cast<flatbuffers::uoffset_t>(i)));
  return s + "]";
}

bool HasData(const fb::Model& m, const fb::Tensor& t) {
  if (t.buffer() == 0 || !m.buffers() || t.buffer() >= m.buffers()->size()) return false;
  const fb::Buffer* b = m.buffers()->Get(t.buffer());
  return b->offset() > 1 ? b->size() > 0 : (b->data() && b->data()->size() > 0);
}

void Checker::CheckSubgraph(size_t si) {
  const fb::SubGraph* sg = m_.subgraphs()->Get(static_cast<flatbuffers::uoffset_t>(si));
  const size_t nt = sg->tensors() ? sg->tensors()->size() : 0;
  for (size_t ti = 0; ti < nt; ++ti) CheckTensor(si, ti, sg->tensors()->Get(static_cast<flatbuffers::uoffset_t>(ti)));
  // 0 = unknown, 1 = available (constant/variable/input), 2 = produced by an op.
  std::vector<uint8_t> state(nt, 0);
  for (size_t ti = 0; ti < nt; ++ti) {
    const fb::Tensor* t = sg->tensors()->Get(static_cast<flatbuffers::uoffset_t>(ti));
    if (HasData(m_, *t) || t->is_variable()) state[ti] = 1;
  }
  auto check_io = [&](const flatbuffers::Vector<int32_t>* v, const char* field, bool input) {
    if (!v) return;
    for (size_t k = 0; k < v->size(); ++k) {
      const int32_t i = v->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (i < 0 || static_cast<size_t>(i) >= nt) {
        Fail("subgraphs[{}].{}[{}] = {} is out of range ({} tensors)", si, field, k, i, nt);
      } else if (input) {
        state[static_cast<size_t>(i)] = 1;
      }
    }
  };
  check_io(sg->inputs(), "inputs", true);
  check_io(sg->outputs(), "outputs", false);
  const size_t nops = sg->operators() ? sg->operators()->size() : 0;
  const size_t ncodes = codes_.size();
  for (size_t oi = 0; oi < nops; ++oi) {
    const fb::Operator* op = sg->operators()->Get(static_cast<flatbuffers::uoffset_t>(oi));
    const std::string where = fmt::format("subgraphs[{}].operators[{}]", si, oi);
    int32_t code = -1000;
    if (op->opcode_index() >= ncodes)
      Fail("{}.opcode_index = {} is out of range ({} operator_codes)", where, op->opcode_index(), ncodes);
    else
      code = codes_[op->opcode_index()];
    const std::string opname = code >= 0 ? BuiltinName(code) : "?";
    if (!op->outputs() || op->outputs()->size() == 0) Fail("{} ({}).outputs is empty", where, opname);
    if (const auto* in = op->inputs()) {
      for (size_t k = 0; k < in->size(); ++k) {
        const int32_t i = in->Get(static_cast<flatbuffers::uoffset_t>(k));
        if (i == -1) {
          // CVE-2020-15211: -1 only where the op declares the input optional.
          if (code >= 0 && Lowered(code) && !OptionalInput(code, k))
            Fail("{} ({}).inputs[{}] is -1 (absent), but input {} of {} is not optional", where, opname, k, k, opname);
          continue;
        }
        if (i < 0 || static_cast<size_t>(i) >= nt) {
          Fail("{} ({}).inputs[{}] = {} is out of range ({} tensors)", where, opname, k, i, nt);
          continue;
        }
        if (state[static_cast<size_t>(i)] == 0) {
          const fb::Tensor* t = sg->tensors()->Get(static_cast<flatbuffers::uoffset_t>(i));
          Fail("{} ({}).inputs[{}] = {} ('{}') is neither a constant, a subgraph input nor the output of an earlier "
               "operator", where, opname, k, i, t->name() ? t->name()->string_view() : "");
        }
      }
    }
    if (const auto* out = op->outputs()) {
      for (size_t k = 0; k < out->size(); ++k) {
        const int32_t i = out->Get(static_cast<flatbuffers::uoffset_t>(k));
        if (i < 0 || static_cast<size_t>(i) >= nt) {
          Fail("{} ({}).outputs[{}] = {} is out of range ({} tensors)", where, opname, k, i, nt);
          continue;
        }
        if (state[static_cast<size_t>(i)] != 0)
          Fail("{} ({}).outputs[{}] = {} is already a constant, variable, subgraph input or the output of another "
               "operator", where, opname, k, i);
        state[static_cast<size_t>(i)] = 2;
      }
    }
    // Subgraph references of control flow (CVE-2021-29591).
    const size_t nsg = m_.subgraphs()->size();
    auto ref = [&](int32_t idx, const char* field) {
      if (idx < 0 || static_cast<size_t>(idx) >= nsg)
        Fail("{} ({}).builtin_options.{} = {} is out of range ({} subgraphs)", where, opname, field, idx, nsg);
      else
        calls_[si].push_back(idx);
    };
    if (const auto* o = op->builtin_options_as_IfOptions()) {
      ref(o->then_subgraph_index(), "then_subgraph_index");
      ref(o->else_subgraph_index(), "else_subgraph_index");
    } else if (const auto* w = op->builtin_options_as_WhileOptions()) {
      ref(w->cond_subgraph_index(), "cond_subgraph_index");
      ref(w->body_subgraph_index(), "body_subgraph_index");
    }
  }
}

void Checker::CheckSubgraphCalls() {
  // Depth-first search for a cycle, iteratively (no recursion on hostile input).
  const size_t n = calls_.size();
  std::vector<uint8_t> color(n, 0);  // 0 white, 1 on stack, 2 done
  for (size_t start = 0; start < n; ++start) {
    if (color[start]) continue;
    std::vector<std::pair<size_t, size_t>> stack = {{start, 0}};
    color[start] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < calls_[node].size()) {
        const auto callee = static_cast<size_t>(calls_[node][next++]);
        if (color[callee] == 1) {
          Fail("subgraphs[{}] calls subgraphs[{}] (IF/WHILE builtin_options), which is already on the call path: "
               "subgraph recursion", node, callee);
          return;
        }
        if (color[callee] == 0) {
          color[callee] = 1;
          stack.emplace_back(callee, 0);
        }
      } else {
        color[node] = 2;
        stack.pop_back();
      }
    }
  }
}

}  // namespace

Status VerifyTfliteModel(const uint8_t* data, size_t size, uint64_t file_size, const std::string& what) {
  if (!data || size < 8)
    return Error(StatusCode::kParseError, "{}: {} bytes is too small for a TFLite model (truncated file?)", what, size);
  if (std::memcmp(data + 4, "TFL3", 4) != 0)
    return Error(StatusCode::kParseError, "{}: not a TFLite model (file identifier at bytes 4..7 is not \"TFL3\")", what);
  // The Verifier asserts size < FLATBUFFERS_MAX_BUFFER_SIZE: a bigger file keeps
  // its buffers outside the FlatBuffer, which is verified on its own.
  const size_t fb_size = std::min<uint64_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  flatbuffers::Verifier verifier(data, fb_size,
                                 {.max_depth = kMaxDepth, .max_tables = kMaxTables, .check_alignment = true});
  if (!fb::VerifyModelBuffer(verifier))
    return Error(StatusCode::kParseError,
                 "{}: the FlatBuffers verifier rejected the model ({} bytes: truncated or corrupt, an offset or length "
                 "points outside the buffer, or nesting is deeper than {} / more than {} tables)",
                 what, fb_size, kMaxDepth, kMaxTables);
  Checker checker(*fb::GetModel(data), fb_size, file_size);
  checker.Run();
  if (checker.errors().empty()) return Status::Ok();
  std::string text = fmt::format("{}: invalid TFLite model ({} error{}):", what, checker.errors().size(),
                                 checker.errors().size() == 1 ? "" : "s");
  for (const auto& e : checker.errors()) text += "\n  " + e;
  if (checker.truncated()) text += "\n  ... (more errors not listed)";
  return Status(StatusCode::kValidationFailed, std::move(text));
}

}  // namespace qairt::tflite_import
