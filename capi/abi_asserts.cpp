// Pins the ABI: enum values shared between the C header and the core, and the
// layout of every public struct on LP64 targets. A failing assert here means a
// change broke binary compatibility: revert it or bump QAIRT_ABI_MAJOR.
#include <cstddef>

#include "capi/capi_internal.h"
#include "ir/dtype.h"
#include "ir/encoding.h"

namespace {

using qairt::DType;

#define QAIRT_SAME(c_value, cpp_value) \
  static_assert(static_cast<uint32_t>(c_value) == static_cast<uint32_t>(cpp_value), #c_value)

QAIRT_SAME(QAIRT_DTYPE_UNDEFINED, DType::kUndefined);
QAIRT_SAME(QAIRT_DTYPE_FLOAT32, DType::kFloat32);
QAIRT_SAME(QAIRT_DTYPE_FLOAT16, DType::kFloat16);
QAIRT_SAME(QAIRT_DTYPE_BFLOAT16, DType::kBFloat16);
QAIRT_SAME(QAIRT_DTYPE_FLOAT64, DType::kFloat64);
QAIRT_SAME(QAIRT_DTYPE_BOOL, DType::kBool);
QAIRT_SAME(QAIRT_DTYPE_INT2, DType::kInt2);
QAIRT_SAME(QAIRT_DTYPE_INT4, DType::kInt4);
QAIRT_SAME(QAIRT_DTYPE_INT8, DType::kInt8);
QAIRT_SAME(QAIRT_DTYPE_INT16, DType::kInt16);
QAIRT_SAME(QAIRT_DTYPE_INT32, DType::kInt32);
QAIRT_SAME(QAIRT_DTYPE_INT64, DType::kInt64);
QAIRT_SAME(QAIRT_DTYPE_UINT2, DType::kUInt2);
QAIRT_SAME(QAIRT_DTYPE_UINT4, DType::kUInt4);
QAIRT_SAME(QAIRT_DTYPE_UINT8, DType::kUInt8);
QAIRT_SAME(QAIRT_DTYPE_UINT16, DType::kUInt16);
QAIRT_SAME(QAIRT_DTYPE_UINT32, DType::kUInt32);
QAIRT_SAME(QAIRT_DTYPE_UINT64, DType::kUInt64);
QAIRT_SAME(QAIRT_DTYPE_SFIXED_POINT_2, DType::kSFixed2);
QAIRT_SAME(QAIRT_DTYPE_SFIXED_POINT_4, DType::kSFixed4);
QAIRT_SAME(QAIRT_DTYPE_SFIXED_POINT_8, DType::kSFixed8);
QAIRT_SAME(QAIRT_DTYPE_SFIXED_POINT_16, DType::kSFixed16);
QAIRT_SAME(QAIRT_DTYPE_SFIXED_POINT_32, DType::kSFixed32);
QAIRT_SAME(QAIRT_DTYPE_UFIXED_POINT_2, DType::kUFixed2);
QAIRT_SAME(QAIRT_DTYPE_UFIXED_POINT_4, DType::kUFixed4);
QAIRT_SAME(QAIRT_DTYPE_UFIXED_POINT_8, DType::kUFixed8);
QAIRT_SAME(QAIRT_DTYPE_UFIXED_POINT_16, DType::kUFixed16);
QAIRT_SAME(QAIRT_DTYPE_UFIXED_POINT_32, DType::kUFixed32);
static_assert(qairt::kDTypeCount == 28, "new dtypes must be appended to both enums");

QAIRT_SAME(QAIRT_ENCODING_FLOAT, qairt::EncodingKind::kFloat);
QAIRT_SAME(QAIRT_ENCODING_PER_TENSOR, qairt::EncodingKind::kPerTensor);
QAIRT_SAME(QAIRT_ENCODING_PER_CHANNEL, qairt::EncodingKind::kPerChannel);
QAIRT_SAME(QAIRT_ENCODING_PER_BLOCK, qairt::EncodingKind::kPerBlock);
QAIRT_SAME(QAIRT_ENCODING_LPBQ, qairt::EncodingKind::kLpbq);
QAIRT_SAME(QAIRT_ENCODING_ARRAY_OF, qairt::EncodingKind::kArrayOf);
QAIRT_SAME(QAIRT_SYMMETRY_ASYMMETRIC, qairt::Symmetry::kAsymmetric);
QAIRT_SAME(QAIRT_SYMMETRY_SYMMETRIC, qairt::Symmetry::kSymmetric);
QAIRT_SAME(QAIRT_SYMMETRY_STRICT_SYMMETRIC, qairt::Symmetry::kStrictSymmetric);
QAIRT_SAME(QAIRT_SYMMETRY_UNSIGNED_SYMMETRIC, qairt::Symmetry::kUnsignedSymmetric);
QAIRT_SAME(QAIRT_TENSOR_ROLE_INPUT, qairt::TensorRole::kInput);
QAIRT_SAME(QAIRT_TENSOR_ROLE_OUTPUT, qairt::TensorRole::kOutput);
QAIRT_SAME(QAIRT_TENSOR_ROLE_INPUT_OUTPUT, qairt::TensorRole::kInputOutput);
QAIRT_SAME(QAIRT_TENSOR_ROLE_STATIC, qairt::TensorRole::kStatic);
QAIRT_SAME(QAIRT_TENSOR_ROLE_ACTIVATION, qairt::TensorRole::kActivation);
QAIRT_SAME(QAIRT_SEVERITY_ERROR, qairt::Severity::kError);
QAIRT_SAME(QAIRT_SEVERITY_WARNING, qairt::Severity::kWarning);
QAIRT_SAME(QAIRT_SEVERITY_NOTE, qairt::Severity::kNote);
QAIRT_SAME(QAIRT_DIAG_CYCLE, qairt::DiagKind::kCycle);
QAIRT_SAME(QAIRT_DIAG_DUPLICATE_TENSOR_NAME, qairt::DiagKind::kDuplicateTensorName);
QAIRT_SAME(QAIRT_DIAG_DUPLICATE_OP_NAME, qairt::DiagKind::kDuplicateOpName);
QAIRT_SAME(QAIRT_DIAG_DANGLING_TENSOR, qairt::DiagKind::kDanglingTensor);
QAIRT_SAME(QAIRT_DIAG_MISSING_PRODUCER, qairt::DiagKind::kMissingProducer);
QAIRT_SAME(QAIRT_DIAG_MULTIPLE_PRODUCERS, qairt::DiagKind::kMultipleProducers);
QAIRT_SAME(QAIRT_DIAG_DTYPE_MISMATCH, qairt::DiagKind::kDTypeMismatch);
QAIRT_SAME(QAIRT_DIAG_SHAPE_MISMATCH, qairt::DiagKind::kShapeMismatch);
QAIRT_SAME(QAIRT_DIAG_ARITY, qairt::DiagKind::kArity);
QAIRT_SAME(QAIRT_DIAG_ATTRIBUTE, qairt::DiagKind::kAttribute);
QAIRT_SAME(QAIRT_DIAG_UNKNOWN_OP_TYPE, qairt::DiagKind::kUnknownOpType);
QAIRT_SAME(QAIRT_DIAG_INVALID_ENCODING, qairt::DiagKind::kInvalidEncoding);
QAIRT_SAME(QAIRT_DIAG_NO_OUTPUTS, qairt::DiagKind::kNoOutputs);
QAIRT_SAME(QAIRT_DIAG_STATIC_DATA, qairt::DiagKind::kStaticData);
QAIRT_SAME(QAIRT_OK, qairt::StatusCode::kOk);
QAIRT_SAME(QAIRT_INVALID_ARGUMENT, qairt::StatusCode::kInvalidArgument);
QAIRT_SAME(QAIRT_NOT_FOUND, qairt::StatusCode::kNotFound);
QAIRT_SAME(QAIRT_UNSUPPORTED, qairt::StatusCode::kUnsupported);
QAIRT_SAME(QAIRT_PARSE_ERROR, qairt::StatusCode::kParseError);
QAIRT_SAME(QAIRT_OUT_OF_MEMORY, qairt::StatusCode::kOutOfMemory);
QAIRT_SAME(QAIRT_INTERNAL, qairt::StatusCode::kInternal);
QAIRT_SAME(QAIRT_VALIDATION_FAILED, qairt::StatusCode::kValidationFailed);
QAIRT_SAME(QAIRT_IO_ERROR, qairt::StatusCode::kIoError);
QAIRT_SAME(QAIRT_BUFFER_TOO_SMALL, qairt::StatusCode::kBufferTooSmall);
static_assert(QAIRT_INVALID_ID == qairt::kInvalidId);

// Fixed-width enum carriers.
static_assert(sizeof(qairt_dtype_t) == 4 && sizeof(qairt_code_t) == 4 && sizeof(qairt_tensor_id) == 4);

#define QAIRT_LAYOUT(type, field, offset) static_assert(offsetof(type, field) == (offset), #type "." #field)

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu  // LP64 layouts
static_assert(sizeof(qairt_graph_options) == 16);
QAIRT_LAYOUT(qairt_graph_options, struct_size, 0);
QAIRT_LAYOUT(qairt_graph_options, flags, 4);
QAIRT_LAYOUT(qairt_graph_options, name, 8);

static_assert(sizeof(qairt_tensor_desc) == 48);
QAIRT_LAYOUT(qairt_tensor_desc, struct_size, 0);
QAIRT_LAYOUT(qairt_tensor_desc, dtype, 4);
QAIRT_LAYOUT(qairt_tensor_desc, name, 8);
QAIRT_LAYOUT(qairt_tensor_desc, rank, 16);
QAIRT_LAYOUT(qairt_tensor_desc, dims, 24);
QAIRT_LAYOUT(qairt_tensor_desc, dim_symbols, 32);
QAIRT_LAYOUT(qairt_tensor_desc, rank_known, 40);
QAIRT_LAYOUT(qairt_tensor_desc, reserved, 44);

static_assert(sizeof(qairt_attr) == 32);
QAIRT_LAYOUT(qairt_attr, name, 0);
QAIRT_LAYOUT(qairt_attr, type, 8);
QAIRT_LAYOUT(qairt_attr, reserved, 12);
QAIRT_LAYOUT(qairt_attr, count, 16);
QAIRT_LAYOUT(qairt_attr, data, 24);

static_assert(sizeof(qairt_op_desc) == 88);
QAIRT_LAYOUT(qairt_op_desc, struct_size, 0);
QAIRT_LAYOUT(qairt_op_desc, flags, 4);
QAIRT_LAYOUT(qairt_op_desc, type, 8);
QAIRT_LAYOUT(qairt_op_desc, name, 16);
QAIRT_LAYOUT(qairt_op_desc, num_inputs, 24);
QAIRT_LAYOUT(qairt_op_desc, inputs, 32);
QAIRT_LAYOUT(qairt_op_desc, num_outputs, 40);
QAIRT_LAYOUT(qairt_op_desc, outputs, 48);
QAIRT_LAYOUT(qairt_op_desc, num_attrs, 56);
QAIRT_LAYOUT(qairt_op_desc, attrs, 64);
QAIRT_LAYOUT(qairt_op_desc, source_name, 72);
QAIRT_LAYOUT(qairt_op_desc, source_op_type, 80);

static_assert(sizeof(qairt_diagnostic) == 88);
QAIRT_LAYOUT(qairt_diagnostic, struct_size, 0);
QAIRT_LAYOUT(qairt_diagnostic, severity, 4);
QAIRT_LAYOUT(qairt_diagnostic, kind, 8);
QAIRT_LAYOUT(qairt_diagnostic, op, 12);
QAIRT_LAYOUT(qairt_diagnostic, tensor, 16);
QAIRT_LAYOUT(qairt_diagnostic, reserved, 20);
QAIRT_LAYOUT(qairt_diagnostic, field, 24);
QAIRT_LAYOUT(qairt_diagnostic, message, 32);
QAIRT_LAYOUT(qairt_diagnostic, code, 40);
QAIRT_LAYOUT(qairt_diagnostic, file, 48);
QAIRT_LAYOUT(qairt_diagnostic, line, 56);
QAIRT_LAYOUT(qairt_diagnostic, column, 60);
QAIRT_LAYOUT(qairt_diagnostic, op_name, 64);
QAIRT_LAYOUT(qairt_diagnostic, tensor_name, 72);
QAIRT_LAYOUT(qairt_diagnostic, suggestion, 80);

static_assert(sizeof(qairt_tensor_info) == 72);
QAIRT_LAYOUT(qairt_tensor_info, struct_size, 0);
QAIRT_LAYOUT(qairt_tensor_info, dtype, 4);
QAIRT_LAYOUT(qairt_tensor_info, name, 8);
QAIRT_LAYOUT(qairt_tensor_info, role, 16);
QAIRT_LAYOUT(qairt_tensor_info, rank_known, 20);
QAIRT_LAYOUT(qairt_tensor_info, rank, 24);
QAIRT_LAYOUT(qairt_tensor_info, dims, 32);
QAIRT_LAYOUT(qairt_tensor_info, producer, 40);
QAIRT_LAYOUT(qairt_tensor_info, producer_slot, 44);
QAIRT_LAYOUT(qairt_tensor_info, num_consumers, 48);
QAIRT_LAYOUT(qairt_tensor_info, has_encoding, 56);
QAIRT_LAYOUT(qairt_tensor_info, static_data_borrowed, 60);
QAIRT_LAYOUT(qairt_tensor_info, static_data_size, 64);

static_assert(sizeof(qairt_op_info) == 80);
QAIRT_LAYOUT(qairt_op_info, struct_size, 0);
QAIRT_LAYOUT(qairt_op_info, reserved, 4);
QAIRT_LAYOUT(qairt_op_info, type, 8);
QAIRT_LAYOUT(qairt_op_info, name, 16);
QAIRT_LAYOUT(qairt_op_info, source_name, 24);
QAIRT_LAYOUT(qairt_op_info, source_op_type, 32);
QAIRT_LAYOUT(qairt_op_info, num_inputs, 40);
QAIRT_LAYOUT(qairt_op_info, inputs, 48);
QAIRT_LAYOUT(qairt_op_info, num_outputs, 56);
QAIRT_LAYOUT(qairt_op_info, outputs, 64);
QAIRT_LAYOUT(qairt_op_info, num_attrs, 72);
#endif

}  // namespace
