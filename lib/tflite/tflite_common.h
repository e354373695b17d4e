// Internal to the TFLite importer: operator codes, tensor types and the
// checks shared by the verifier (tflite_verify.cpp) and the lowering
// (tflite_importer.cpp, tflite_values.cpp, lower_*.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "ir/dtype.h"
#include "tflite/tflite_subset_generated.h"

namespace qairt::tflite_import {

namespace fb = ::qairt::tflite::fb;

// BuiltinOperator values (tflite.md §1); only those qairt names or lowers.
enum Builtin : int32_t {
  kAdd = 0, kAveragePool2d = 1, kConcatenation = 2, kConv2d = 3, kDepthwiseConv2d = 4, kDepthToSpace = 5,
  kDequantize = 6, kEmbeddingLookup = 7, kFloor = 8, kFullyConnected = 9, kL2Normalization = 11,
  kLocalResponseNormalization = 13, kLogistic = 14, kLstm = 16, kMaxPool2d = 17, kMul = 18, kRelu = 19,
  kReluN1To1 = 20, kRelu6 = 21, kReshape = 22, kResizeBilinear = 23, kSoftmax = 25, kSpaceToDepth = 26,
  kTanh = 28, kCustom = 32, kPad = 34, kGather = 36, kBatchToSpaceNd = 37, kSpaceToBatchNd = 38,
  kTranspose = 39, kMean = 40, kSub = 41, kDiv = 42, kSqueeze = 43, kUnidirectionalSequenceLstm = 44,
  kStridedSlice = 45, kExp = 47, kTopkV2 = 48, kSplit = 49, kLogSoftmax = 50, kCast = 53, kPrelu = 54,
  kMaximum = 55, kArgMax = 56, kMinimum = 57, kLess = 58, kNeg = 59, kPadV2 = 60, kGreater = 61, kSelect = 64,
  kSlice = 65, kTransposeConv = 67, kTile = 69, kExpandDims = 70, kEqual = 71, kLog = 73, kSum = 74, kSqrt = 75,
  kRsqrt = 76, kShape = 77, kPow = 78, kReduceProd = 81, kReduceMax = 82, kPack = 83, kUnpack = 88,
  kReduceMin = 89, kSquare = 92, kFill = 94, kResizeNearestNeighbor = 97, kLeakyRelu = 98,
  kSquaredDifference = 99, kMirrorPad = 100, kAbs = 101, kSplitV = 102, kGatherNd = 107, kElu = 111,
  kQuantize = 114, kHardSwish = 117, kIf = 118, kWhile = 119, kSelectV2 = 123, kDensify = 124,
  kBatchMatmul = 126, kPlaceholderForGreaterOpCodes = 127, kCumsum = 128, kCallOnce = 129,
  kBroadcastTo = 130, kConv3d = 132, kGelu = 150, kRelu0To1 = 152,
};
// The schema's enum runs through STABLEHLO_CASE = 209; codes above 200 are
// unstable, so anything qairt does not lower is rejected by number.
inline constexpr int32_t kMaxBuiltinCode = 209;

// "CONV_2D", or "BUILTIN_<n>" for codes without a name here.
std::string BuiltinName(int32_t code);

// code = max(builtin_code, deprecated_builtin_code) (schema_utils GetBuiltinCode).
inline int32_t ResolveBuiltinCode(const fb::OperatorCode& c) {
  return std::max<int32_t>(c.builtin_code(), static_cast<int32_t>(c.deprecated_builtin_code()));
}

std::string_view TensorTypeName(int32_t type);  // "INT8", or "?" for unknown values
// Bits per element, 0 for types without a fixed size (STRING, RESOURCE, VARIANT) or unknown.
uint32_t TensorTypeBits(int32_t type);
// Bytes of `count` packed elements (sub-byte types nibble/crumb-packed).
std::optional<uint64_t> TensorBytes(int32_t type, uint64_t count);
// IR dtype of a plain (unquantized) tensor; nullopt for STRING/COMPLEX/RESOURCE/VARIANT/FLOAT8.
std::optional<DType> PlainDType(int32_t type);

// Element k of a vector of 8-byte values. The verifier checks a vector's
// length prefix for alignment but not its elements: a hostile file can place
// a [long] vector at 4 mod 8, so these are read with memcpy.
inline int64_t ZeroPointAt(const flatbuffers::Vector<int64_t>& v, size_t k) {
  int64_t x;
  std::memcpy(&x, v.Data() + 8 * k, 8);
  return x;
}

// True if input slot `slot` of builtin `code` may be -1 (absent).
bool OptionalInput(int32_t code, size_t slot);
// True if qairt lowers the builtin.
bool Lowered(int32_t code);

}  // namespace qairt::tflite_import
