// Quantization in the exported ONNX model: the executor's simulation
// (lib/exec, SimOf / SimulateBuf) spelled as QuantizeLinear/DequantizeLinear
// nodes, so ONNX Runtime computes what qairt computes.
//
//   fixed-point static tensor   int initializer -> DequantizeLinear
//   fixed-point graph input     input            -> DequantizeLinear
//   other tensor with an        producer -> QuantizeLinear -> DequantizeLinear
//   integer encoding
//   fp16-encoded float tensor   producer -> Cast(float16) -> Cast(float)
//
// Zero point = -offset (QNN stores offsets). Per-block parameters are
// written in ONNX's blocked layout (one axis divided into blocks, one
// parameter per index along every other axis); LPBQ weights of rank 2 use
// the two-level pattern ONNX Runtime's QNN execution provider recognises:
// DequantizeLinear(uint8 per-block scales, per-channel float scales) gives
// the float block scales of the weight's blocked DequantizeLinear.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "onnx/exporter.h"
#include "ir/fused_activation.h"
#include "onnx/onnx_tensor.h"

namespace qairt::onnx_export {

using onnx_import::OnnxFromDType;

namespace {

// TensorProto.DataType UINT4 / INT4 (onnx >= 1.16; Debian's headers predate them).
constexpr int32_t kOnnxUInt4 = 21;
constexpr int32_t kOnnxInt4 = 22;

// ONNX integer element type of a `bits`-wide grid (0 if none).
int32_t GridElem(bool is_signed, uint32_t bits) {
  switch (bits) {
    case 4: return is_signed ? kOnnxInt4 : kOnnxUInt4;
    case 8: return is_signed ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8;
    case 16: return is_signed ? onnx::TensorProto::INT16 : onnx::TensorProto::UINT16;
    case 32: return is_signed ? onnx::TensorProto::INT32 : 0;
    default: return 0;
  }
}

bool IsGridEncoding(const Encoding& e) {
  return e.is_fixed_point() && e.kind != EncodingKind::kFloat && e.kind != EncodingKind::kArrayOf;
}

// Integers `values` stored as an ONNX tensor of `bits` (sub-byte packed, low
// nibble first, like ONNX's int4).
std::vector<uint8_t> PackInts(const std::vector<int64_t>& values, uint32_t bits) {
  std::vector<uint8_t> out(bits == 4 ? (values.size() + 1) / 2 : values.size() * (bits / 8), 0);
  for (size_t k = 0; k < values.size(); ++k) {
    const int64_t z = values[k];
    switch (bits) {
      case 4: out[k / 2] |= static_cast<uint8_t>((z & 0xF) << ((k % 2) * 4)); break;
      case 8: out[k] = static_cast<uint8_t>(z); break;
      case 16: { const auto v = static_cast<uint16_t>(z); std::memcpy(&out[2 * k], &v, 2); break; }
      case 32: { const auto v = static_cast<uint32_t>(z); std::memcpy(&out[4 * k], &v, 4); break; }
      default: break;
    }
  }
  return out;
}

// ONNX's blocked layout of a per-block grid: `axis` is divided into blocks
// of `block`; `source[k]` is the index, in the encoding's row-major block
// grid, of the k-th parameter in ONNX's row-major parameter tensor of
// `dims` (blocks along any other axis are repeated per index).
struct BlockLayout {
  int64_t axis = 0;
  int64_t block = 1;
  std::vector<int64_t> dims;
  std::vector<size_t> source;
};

Result<BlockLayout> MakeBlockLayout(const std::string& what, const Shape& shape, const Encoding& e) {
  if (!shape.fully_known())
    return Error(StatusCode::kUnsupported, "{}: a block encoding needs a static shape, got {}", what, shape.ToString());
  const std::vector<int64_t> dims = shape.extents();
  const size_t rank = dims.size();
  if (rank == 0 || e.block_sizes.size() != rank)
    return Error(StatusCode::kInvalidArgument, "{}: {} block sizes for rank {}", what, e.block_sizes.size(), rank);
  BlockLayout l;
  l.axis = -1;
  if (e.axis >= 0 && static_cast<size_t>(e.axis) < rank && e.block_sizes[e.axis] > 1) l.axis = e.axis;
  for (size_t d = 0; d < rank && l.axis < 0; ++d)
    if (e.block_sizes[d] > 1) l.axis = static_cast<int64_t>(d);
  if (l.axis < 0) l.axis = 0;
  l.block = e.block_sizes[l.axis];
  std::vector<int64_t> grid(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (e.block_sizes[d] < 1 || dims[d] % e.block_sizes[d] != 0)
      return Error(StatusCode::kInvalidArgument, "{}: block size {} does not divide dim {} ({})", what,
                   e.block_sizes[d], d, dims[d]);
    grid[d] = dims[d] / e.block_sizes[d];
    l.dims.push_back(static_cast<int64_t>(d) == l.axis ? grid[d] : dims[d]);
  }
  size_t count = 1;
  for (int64_t d : l.dims) count *= static_cast<size_t>(d);
  l.source.resize(count);
  std::vector<int64_t> idx(rank, 0);
  for (size_t k = 0; k < count; ++k) {
    size_t src = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t g = static_cast<int64_t>(d) == l.axis ? idx[d] : idx[d] / e.block_sizes[d];
      src = src * static_cast<size_t>(grid[d]) + static_cast<size_t>(g);
    }
    l.source[k] = src;
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < l.dims[d]) break;
      idx[d] = 0;
    }
  }
  return l;
}

}  // namespace

// ---------------------------------------------------------------------------

Exporter::Sim Exporter::SimOf(TensorId id) const {
  const Tensor& t = graph_.tensor(id);
  if (IsFusedActivationInput(graph_, id)) return Sim::kNone;  // inside a fused kernel (ir/fused_activation.h)
  // Fixed-point constants and graph inputs are dequantized where they enter
  // (WriteDequantized); a fixed-point activation is quantized where produced.
  if (IsFixedPoint(t.dtype)) return t.kind == TensorKind::kStatic || t.producer == kInvalidId ? Sim::kNone : Sim::kFixed;
  if (t.dtype != DType::kFloat32 || !t.encoding) return Sim::kNone;
  const Encoding& e = *t.encoding;
  if (IsGridEncoding(e)) return Sim::kFixed;
  if (e.kind == EncodingKind::kFloat && (e.dtype == DType::kFloat16 || e.effective_bitwidth() == 16))
    return Sim::kHalf;
  return Sim::kNone;
}

std::string Exporter::SimulatedName(TensorId id) {
  return FreshName(graph_.tensor(id).name + (SimOf(id) == Sim::kHalf ? "_fp16" : "_dq"));
}

onnx::NodeProto* Exporter::QdqNode(const std::string& type, const std::string& name) {
  auto* n = proto_->add_node();
  n->set_op_type(type);
  n->set_name(FreshNodeName(name + "/" + type));
  if (options_.qdq_ms_domain) n->set_domain("com.microsoft");
  return n;
}

Status Exporter::ResolveOpset() {
  opset_ = options_.opset;
  if (opset_ != 0) return Status::Ok();
  // Automatic: opset 21 only when a Q/DQ node needs it (the model then
  // needs a recent runtime); blocks and 4-bit always do, 16-bit unless the
  // com.microsoft Q/DQ are asked for.
  bool needs21 = false;
  for (TensorId id = 0; id < graph_.tensor_count() && !needs21; ++id) {
    const Tensor& t = graph_.tensor(id);
    const bool dequantized = IsFixedPoint(t.dtype) && SimOf(id) == Sim::kNone;
    if (!t.encoding || !(dequantized || SimOf(id) == Sim::kFixed)) continue;
    const uint32_t bits = dequantized ? DTypeBits(t.dtype) : t.encoding->effective_bitwidth();
    const EncodingKind k = t.encoding->kind;
    needs21 = bits == 4 || (bits == 16 && !options_.qdq_ms_domain) || k == EncodingKind::kPerBlock ||
              k == EncodingKind::kLpbq;
  }
  opset_ = needs21 ? 21 : kOnnxExportDefaultOpset;
  return Status::Ok();
}

namespace {

// Scale and zero-point initializers (and the axis / block attributes) of one
// Q/DQ grid: encoding `e` of a tensor of `shape`, stored as `elem` of `bits`.
struct GridParams {
  std::string scale, zero_point;
  bool per_axis = false;
  int64_t axis = 0;
  int64_t block_size = 0;  // > 0: blocked
  void SetAttrs(onnx::NodeProto* n) const {
    if (per_axis || block_size) SetAttr(n, "axis", axis);
    if (block_size) SetAttr(n, "block_size", block_size);
  }
};

Status CheckGridOpset(const std::string& what, const Encoding& e, uint32_t bits, int64_t opset, bool ms) {
  if (e.kind == EncodingKind::kPerBlock || e.kind == EncodingKind::kLpbq) {
    if (ms) return Error(StatusCode::kUnsupported, "{}: {} encodings need ai.onnx Q/DQ of opset 21 (the com.microsoft "
                                                   "Q/DQ have no blocks)", what, EncodingKindName(e.kind));
    if (opset < 21)
      return Error(StatusCode::kUnsupported, "{}: {} encodings need opset 21 (exporting opset {})", what,
                   EncodingKindName(e.kind), opset);
  }
  if (bits == 4 && (opset < 21 || ms))
    return Error(StatusCode::kUnsupported, "{}: 4-bit Q/DQ needs ai.onnx opset 21 (exporting opset {}{})", what, opset,
                 ms ? ", com.microsoft Q/DQ" : "");
  if (bits == 16 && opset < 21 && !ms)
    return Error(StatusCode::kUnsupported,
                 "{}: 16-bit Q/DQ needs opset 21 or the com.microsoft Q/DQ (exporting opset {})", what, opset);
  if (e.kind == EncodingKind::kPerChannel && opset < 13 && !ms)
    return Error(StatusCode::kUnsupported, "{}: per-axis Q/DQ needs opset 13 (exporting opset {})", what, opset);
  return Status::Ok();
}

Result<GridParams> MakeGridParams(Exporter& ex, const std::string& what, const Tensor& t, const Encoding& e,
                                  int32_t elem, uint32_t bits, bool is_signed) {
  GridParams p;
  std::vector<float> scales = e.scales.to_vector();
  std::vector<int64_t> zero(scales.size(), 0);
  if (!e.float_offsets.empty()) {
    if (e.float_offsets.size() != scales.size())
      return Error(StatusCode::kInvalidArgument, "{}: {} float offsets for {} scales", what, e.float_offsets.size(),
                   scales.size());
    for (size_t k = 0; k < zero.size(); ++k) {
      const float f = e.float_offsets[k];
      if (f != std::nearbyint(f))
        return Error(StatusCode::kUnsupported, "{}: float offset {} is not an integer (ONNX zero points are)", what, f);
      zero[k] = -static_cast<int64_t>(f);
    }
  } else if (!e.offsets.empty()) {
    if (e.offsets.size() != scales.size())
      return Error(StatusCode::kInvalidArgument, "{}: {} offsets for {} scales", what, e.offsets.size(), scales.size());
    for (size_t k = 0; k < zero.size(); ++k) zero[k] = -static_cast<int64_t>(e.offsets[k]);
  }
  if (scales.empty()) return Error(StatusCode::kInvalidArgument, "{}: the encoding has no scales", what);
  const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
  const int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  for (int64_t z : zero) {
    if (z < lo || z > hi)
      return Error(StatusCode::kUnsupported, "{}: zero point {} does not fit a {}-bit {} grid", what, z, bits,
                   is_signed ? "signed" : "unsigned");
    if (bits == 32 && z != 0)
      return Error(StatusCode::kUnsupported, "{}: int32 DequantizeLinear needs zero point 0, got {}", what, z);
  }
  std::vector<int64_t> pdims;
  switch (e.kind) {
    case EncodingKind::kPerTensor:
      if (scales.size() != 1)
        return Error(StatusCode::kInvalidArgument, "{}: per-tensor encoding with {} scales", what, scales.size());
      break;
    case EncodingKind::kPerChannel:
      p.per_axis = true;
      p.axis = e.axis;
      pdims = {static_cast<int64_t>(scales.size())};
      break;
    case EncodingKind::kPerBlock: {
      auto layout = MakeBlockLayout(what, t.shape, e);
      if (!layout.ok()) return layout.status();
      const BlockLayout& l = layout.value();
      size_t grid = 1;
      for (size_t d = 0; d < l.dims.size(); ++d) grid *= static_cast<size_t>(t.shape[d].value / e.block_sizes[d]);
      if (scales.size() != grid)
        return Error(StatusCode::kInvalidArgument, "{}: {} scales for a grid of {} blocks", what, scales.size(), grid);
      std::vector<float> s(l.source.size());
      std::vector<int64_t> z(l.source.size());
      for (size_t k = 0; k < l.source.size(); ++k) s[k] = scales[l.source[k]], z[k] = zero[l.source[k]];
      scales = std::move(s);
      zero = std::move(z);
      p.axis = l.axis;
      p.block_size = l.block;
      pdims = l.dims;
      break;
    }
    default:
      return Error(StatusCode::kUnsupported, "{}: {} encodings have no Q/DQ spelling here", what,
                   EncodingKindName(e.kind));
  }
  p.scale = ex.AddInitializer(t.name + "_scale", onnx::TensorProto::FLOAT, pdims, scales.data(),
                              scales.size() * sizeof(float));
  const std::vector<uint8_t> zp = PackInts(zero, bits);
  p.zero_point = ex.AddInitializer(t.name + "_zero_point", elem, pdims, zp.data(), zp.size());
  return p;
}

}  // namespace

// DequantizeLinear of a fixed-point tensor (static or graph input) with its
// encoding; consumers then read the float output.
Status Exporter::WriteDequantized(TensorId id) {
  const Tensor& t = graph_.tensor(id);
  const bool is_static = t.kind == TensorKind::kStatic;
  const std::string what = fmt::format("{} '{}'", is_static ? "static tensor" : "graph input", t.name);
  if (!t.encoding)
    return Error(StatusCode::kUnsupported, "{} is {} but has no encoding to dequantize it with", what,
                 DTypeName(t.dtype));
  const Encoding& e = *t.encoding;
  const uint32_t bits = DTypeBits(t.dtype);
  const int32_t elem = GridElem(IsSigned(t.dtype), bits);
  if (elem == 0) return Error(StatusCode::kUnsupported, "{}: {} has no ONNX DequantizeLinear", what, DTypeName(t.dtype));
  QAIRT_RETURN_IF_ERROR(CheckGridOpset(what, e, bits, opset_, options_.qdq_ms_domain));
  if (e.kind == EncodingKind::kLpbq) return WriteLpbq(id);
  auto params = MakeGridParams(*this, what, t, e, elem, bits, IsSigned(t.dtype));
  if (!params.ok()) return params.status();
  std::string quantized, dequantized;
  if (is_static) {
    const auto count = t.shape.element_count();
    const auto bytes = count ? StorageBytes(t.dtype, *count) : std::nullopt;
    if (!t.data || !bytes || t.data->size() != *bytes)
      return Error(StatusCode::kInvalidArgument, "{}: data size does not match {} {}", what, DTypeName(t.dtype),
                   t.shape.ToString());
    quantized = AddInitializer(t.name + "_quantized", elem, t.shape.extents(), t.data->data(), t.data->size());
    dequantized = t.name;  // consumers keep reading the original name
  } else {
    quantized = t.name;
    dequantized = FreshName(t.name + "_dequantized");
  }
  auto* node = QdqNode("DequantizeLinear", t.name);
  node->add_input(quantized);
  node->add_input(params.value().scale);
  node->add_input(params.value().zero_point);
  node->add_output(dequantized);
  params.value().SetAttrs(node);
  value_names_[id] = dequantized;
  return Status::Ok();
}

// LPBQ weight: per-block integer scales x per-channel float scales.
Status Exporter::WriteLpbq(TensorId id) {
  const Tensor& t = graph_.tensor(id);
  const std::string what = fmt::format("static tensor '{}'", t.name);
  const Encoding& e = *t.encoding;
  if (t.kind != TensorKind::kStatic)
    return Error(StatusCode::kUnsupported, "graph input '{}': LPBQ inputs are not exported", t.name);
  auto layout = MakeBlockLayout(what, t.shape, e);
  if (!layout.ok()) return layout.status();
  const BlockLayout& l = layout.value();
  const std::vector<int64_t> dims = t.shape.extents();
  size_t grid = 1, channels = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    grid *= static_cast<size_t>(dims[d] / e.block_sizes[d]);
    if (static_cast<int64_t>(d) != l.axis) channels *= static_cast<size_t>(dims[d] / e.block_sizes[d]);
  }
  if (e.block_int_scales.size() != grid || e.scales.size() != channels)
    return Error(StatusCode::kInvalidArgument, "{}: LPBQ with {} block scales and {} channel scales for {} blocks of {} "
                 "channels", what, e.block_int_scales.size(), e.scales.size(), grid, channels);
  for (int32_t o : e.offsets)
    if (o != 0) return Error(StatusCode::kUnsupported, "{}: LPBQ with a nonzero offset ({})", what, o);
  const auto count = t.shape.element_count();
  const auto bytes = count ? StorageBytes(t.dtype, *count) : std::nullopt;
  if (!t.data || !bytes || t.data->size() != *bytes)
    return Error(StatusCode::kInvalidArgument, "{}: data size does not match {} {}", what, DTypeName(t.dtype),
                 t.shape.ToString());
  const int32_t elem = GridElem(IsSigned(t.dtype), DTypeBits(t.dtype));
  const std::string quantized =
      AddInitializer(t.name + "_quantized", elem, dims, t.data->data(), t.data->size());
  int32_t max_int = 0;
  for (int32_t v : e.block_int_scales) max_int = std::max(max_int, v);
  // Two levels when every block of a parameter row shares one channel scale
  // along a single channel axis (rank 2, the MatMul/FullyConnected case the
  // QNN EP fuses); otherwise the block scales are multiplied out here, the
  // same float32 product the executor uses.
  const bool two_level = dims.size() == 2 && e.block_sizes[1 - l.axis] == 1 && max_int <= 65535;
  std::string block_scales;
  if (two_level) {
    const int64_t channel_axis = 1 - l.axis;
    std::vector<int64_t> ints(l.source.size());
    for (size_t k = 0; k < l.source.size(); ++k) ints[k] = e.block_int_scales[l.source[k]];
    const uint32_t ibits = max_int <= 255 ? 8 : 16;
    const std::vector<uint8_t> packed = PackInts(ints, ibits);
    const std::string int_scales = AddInitializer(t.name + "_block_int_scales",
                                                  ibits == 8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::UINT16,
                                                  l.dims, packed.data(), packed.size());
    const std::string channel_scales =
        AddInitializer(t.name + "_channel_scales", onnx::TensorProto::FLOAT, {dims[channel_axis]}, e.scales.data(),
                       e.scales.size() * sizeof(float));
    block_scales = FreshName(t.name + "_block_scales");
    auto* n = QdqNode("DequantizeLinear", t.name + "/block_scales");
    n->add_input(int_scales);
    n->add_input(channel_scales);
    n->add_output(block_scales);
    SetAttr(n, "axis", channel_axis);
  } else {
    std::vector<float> eff(l.source.size());
    for (size_t k = 0; k < l.source.size(); ++k) {
      const size_t b = l.source[k];
      // The channel of block b: its grid index without the block axis.
      size_t rem = b, ch = 0, stride = 1;
      for (size_t d = dims.size(); d-- > 0;) {
        const size_t gd = static_cast<size_t>(dims[d] / e.block_sizes[d]);
        const size_t i = rem % gd;
        rem /= gd;
        if (static_cast<int64_t>(d) == l.axis) continue;
        ch += i * stride;
        stride *= gd;
      }
      eff[k] = static_cast<float>(e.block_int_scales[b]) * e.scales[ch];
    }
    block_scales = AddInitializer(t.name + "_block_scales", onnx::TensorProto::FLOAT, l.dims, eff.data(),
                                  eff.size() * sizeof(float));
  }
  auto* n = QdqNode("DequantizeLinear", t.name);
  n->add_input(quantized);
  n->add_input(block_scales);
  n->add_output(t.name);
  SetAttr(n, "axis", l.axis);
  SetAttr(n, "block_size", l.block);
  value_names_[id] = t.name;
  return Status::Ok();
}

Status Exporter::WriteSimulation(TensorId id, const std::string& value, const std::string& result) {
  const Tensor& t = graph_.tensor(id);
  if (SimOf(id) == Sim::kHalf) {
    auto* down = proto_->add_node();
    down->set_op_type("Cast");
    down->set_name(FreshNodeName(t.name + "/to_fp16"));
    down->add_input(value);
    const std::string half = FreshName(t.name + "_as_fp16");
    down->add_output(half);
    SetAttr(down, "to", static_cast<int64_t>(onnx::TensorProto::FLOAT16));
    auto* up = proto_->add_node();
    up->set_op_type("Cast");
    up->set_name(FreshNodeName(t.name + "/from_fp16"));
    up->add_input(half);
    up->add_output(result);
    SetAttr(up, "to", static_cast<int64_t>(onnx::TensorProto::FLOAT));
    return Status::Ok();
  }
  const std::string what = fmt::format("tensor '{}'", t.name);
  if (!t.encoding || !IsGridEncoding(*t.encoding))
    return Error(StatusCode::kUnsupported, "{} is {} but has no integer encoding to quantize it with", what,
                 DTypeName(t.dtype));
  const Encoding& e = *t.encoding;
  if (e.kind == EncodingKind::kLpbq)
    return Error(StatusCode::kUnsupported, "{}: LPBQ encodings are only exported on static weights", what);
  const uint32_t bits = e.effective_bitwidth();
  const bool is_signed = IsSigned(e.dtype);
  const int32_t elem = bits == 32 ? 0 : GridElem(is_signed, bits);
  if (elem == 0)
    return Error(StatusCode::kUnsupported, "{}: a {}-bit {} grid has no ONNX QuantizeLinear (4, 8 or 16 bits)", what,
                 bits, is_signed ? "signed" : "unsigned");
  QAIRT_RETURN_IF_ERROR(CheckGridOpset(what, e, bits, opset_, options_.qdq_ms_domain));
  auto params = MakeGridParams(*this, what, t, e, elem, bits, is_signed);
  if (!params.ok()) return params.status();
  const GridParams& p = params.value();
  const std::string q = FreshName(t.name + "_q");
  auto* qn = QdqNode("QuantizeLinear", t.name);
  qn->add_input(value);
  qn->add_input(p.scale);
  qn->add_input(p.zero_point);
  qn->add_output(q);
  p.SetAttrs(qn);
  auto* dq = QdqNode("DequantizeLinear", t.name);
  dq->add_input(q);
  dq->add_input(p.scale);
  dq->add_input(p.zero_point);
  dq->add_output(result);
  p.SetAttrs(dq);
  return Status::Ok();
}

}  // namespace qairt::onnx_export
