// TFLite -> IR lowering (see tflite_import.h). Runs only on a model that
// passed VerifyTfliteModel, so every index, size and quantization array used
// here has been range-checked.
//
// The driver: the value table is set up (tflite_values.cpp), subgraph 0's
// operators are lowered in order through the op table below (lowerings in
// lower_*.cpp), the subgraph outputs marked, and the graph checked. Layout
// handling is described in tflite_importer.h.
#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tflite/tflite_common.h"
#include "tflite/tflite_import.h"
#include "tflite/tflite_importer.h"

namespace qairt {

bool LooksLikeTflite(const void* data, size_t size) {
  return data && size >= 8 && std::memcmp(static_cast<const uint8_t*>(data) + 4, "TFL3", 4) == 0;
}

namespace tflite_import {
namespace {

Status LowerOperator(OpCtx& c);  // the op table, below

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

}  // namespace

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
  ++report_->source_ops[histogram_name];
  // Inputs whose producer failed: skip quietly (the first failure is reported).
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i) && !In(c, i).available) return;
  if (resized_) ResetDeclaredShapes(c);
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
  if (densified_)
    Diag(Severity::kNote, DiagKind::kStaticData, "sparsity",
         fmt::format("{} sparse constant{} densified: the target runs {} dense", densified_,
                     densified_ == 1 ? "" : "s", densified_ == 1 ? "it" : "them"));
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

namespace {

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
    case kDensify: return LowerDensify(c);
    case kCast: return LowerCast(c);
    default: return LowerUnary(c);
  }
}

// ---------------------------------------------------------------------------
// Entry
// ---------------------------------------------------------------------------

Result<Graph> RunImport(const uint8_t* data, size_t size, const std::string& what, const ImportOptions& options,
                        ImportReport* report) {
  ImportReport local;
  ImportReport* r = report ? report : &local;
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

Result<Graph> ImportTfliteBytes(const void* data, size_t size, const ImportOptions& options,
                                ImportReport* report) {
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

Result<Graph> ImportTfliteFile(const std::string& path, const ImportOptions& options, ImportReport* report) {
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
