// Encoding handles of the C API: built with setters, checked against their
// tensor when attached with qairt_graph_set_encoding.
#include "capi/capi_internal.h"

using namespace qairt;  // NOLINT: implementation file of the C boundary
using capi::InvalidArg;

namespace {

// Upper bound on values in one encoding array; far above any real tensor's
// channel or block count, it keeps a hostile count from exhausting memory.
constexpr size_t kMaxEncodingValues = size_t{1} << 31;

bool ValidKind(uint32_t k) { return k >= 1 && k <= 6; }

template <typename T, typename V>  // V: std::vector<T> or CowVector<T>
qairt_status_t* SetArray(qairt_encoding_t* e, const T* values, size_t count, V* field, const char* fn) {
  if (!e) return InvalidArg("{}: encoding must not be NULL", fn);
  if (count && !values) return InvalidArg("{}: values is NULL but count is {}", fn, count);
  if (count > kMaxEncodingValues) return InvalidArg("{}: count {} is too large", fn, count);
  field->assign(values, values + count);
  return nullptr;
}

template <typename T, typename V>
void GetArray(const V* v, const T** out, size_t* out_count) {
  if (out) *out = v && !v->empty() ? v->data() : nullptr;
  if (out_count) *out_count = v ? v->size() : 0;
}

}  // namespace

extern "C" {

qairt_status_t* qairt_encoding_create(qairt_encoding_kind_t kind, qairt_dtype_t dtype, qairt_encoding_t** out_encoding) {
  QAIRT_CAPI_BEGIN
  if (!out_encoding) return InvalidArg("qairt_encoding_create: out_encoding must not be NULL");
  if (!ValidKind(kind)) return InvalidArg("qairt_encoding_create: kind={} is not a qairt_encoding_kind", kind);
  if (!IsValidDType(dtype) || dtype == QAIRT_DTYPE_UNDEFINED)
    return InvalidArg("qairt_encoding_create: dtype={} is not a defined qairt_dtype", dtype);
  auto* e = new qairt_encoding_t{};
  e->encoding.kind = static_cast<EncodingKind>(kind);
  e->encoding.dtype = static_cast<DType>(dtype);
  *out_encoding = e;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_clone(const qairt_encoding_t* encoding, qairt_encoding_t** out_encoding) {
  QAIRT_CAPI_BEGIN
  if (!encoding || !out_encoding) return InvalidArg("qairt_encoding_clone: arguments must not be NULL");
  *out_encoding = new qairt_encoding_t{encoding->encoding};
  return nullptr;
  QAIRT_CAPI_END
}

void qairt_encoding_destroy(qairt_encoding_t* encoding) { delete encoding; }

qairt_status_t* qairt_encoding_set_bitwidth(qairt_encoding_t* e, uint32_t bitwidth) {
  QAIRT_CAPI_BEGIN
  if (!e) return InvalidArg("qairt_encoding_set_bitwidth: encoding must not be NULL");
  if (bitwidth > DTypeBits(e->encoding.dtype))
    return InvalidArg("qairt_encoding_set_bitwidth: bitwidth {} exceeds the {} bits of dtype {}", bitwidth,
                      DTypeBits(e->encoding.dtype), DTypeName(e->encoding.dtype));
  e->encoding.bitwidth = bitwidth;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_set_symmetry(qairt_encoding_t* e, qairt_symmetry_t symmetry) {
  QAIRT_CAPI_BEGIN
  if (!e) return InvalidArg("qairt_encoding_set_symmetry: encoding must not be NULL");
  if (symmetry > QAIRT_SYMMETRY_UNSIGNED_SYMMETRIC)
    return InvalidArg("qairt_encoding_set_symmetry: {} is not a qairt_symmetry", symmetry);
  e->encoding.symmetry = static_cast<Symmetry>(symmetry);
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_set_overridden(qairt_encoding_t* e, int32_t overridden) {
  if (!e) return InvalidArg("qairt_encoding_set_overridden: encoding must not be NULL");
  e->encoding.overridden = overridden != 0;
  return nullptr;
}

qairt_status_t* qairt_encoding_set_axis(qairt_encoding_t* e, int32_t axis) {
  if (!e) return InvalidArg("qairt_encoding_set_axis: encoding must not be NULL");
  if (axis < -1) return InvalidArg("qairt_encoding_set_axis: axis {} must be >= 0 (or -1 for none)", axis);
  e->encoding.axis = axis;
  return nullptr;
}

qairt_status_t* qairt_encoding_set_scales(qairt_encoding_t* e, const float* scales, size_t count) {
  QAIRT_CAPI_BEGIN
  return SetArray(e, scales, count, e ? &e->encoding.scales : nullptr, "qairt_encoding_set_scales");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_set_offsets(qairt_encoding_t* e, const int32_t* offsets, size_t count) {
  QAIRT_CAPI_BEGIN
  return SetArray(e, offsets, count, e ? &e->encoding.offsets : nullptr, "qairt_encoding_set_offsets");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_set_float_offsets(qairt_encoding_t* e, const float* offsets, size_t count) {
  QAIRT_CAPI_BEGIN
  return SetArray(e, offsets, count, e ? &e->encoding.float_offsets : nullptr, "qairt_encoding_set_float_offsets");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_set_block_sizes(qairt_encoding_t* e, const int64_t* block_sizes, size_t rank) {
  QAIRT_CAPI_BEGIN
  return SetArray(e, block_sizes, rank, e ? &e->encoding.block_sizes : nullptr, "qairt_encoding_set_block_sizes");
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_set_lpbq(qairt_encoding_t* e, const int32_t* block_int_scales, size_t count,
                                        uint32_t decompressed_bitwidth) {
  QAIRT_CAPI_BEGIN
  if (auto* s = SetArray(e, block_int_scales, count, e ? &e->encoding.block_int_scales : nullptr,
                         "qairt_encoding_set_lpbq"))
    return s;
  e->encoding.decompressed_bitwidth = decompressed_bitwidth;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_set_index_tensor(qairt_encoding_t* e, const char* index_tensor) {
  QAIRT_CAPI_BEGIN
  if (!e || !index_tensor) return InvalidArg("qairt_encoding_set_index_tensor: arguments must not be NULL");
  e->encoding.index_tensor = index_tensor;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_encoding_add_sub_encoding(qairt_encoding_t* e, const qairt_encoding_t* sub) {
  QAIRT_CAPI_BEGIN
  if (!e || !sub) return InvalidArg("qairt_encoding_add_sub_encoding: arguments must not be NULL");
  if (e->encoding.kind != EncodingKind::kArrayOf)
    return InvalidArg("qairt_encoding_add_sub_encoding: only array_of encodings have sub-encodings, this one is {}",
                      EncodingKindName(e->encoding.kind));
  if (sub == e) return InvalidArg("qairt_encoding_add_sub_encoding: an encoding cannot contain itself");
  e->encoding.sub_encodings.push_back(sub->encoding);
  return nullptr;
  QAIRT_CAPI_END
}

qairt_encoding_kind_t qairt_encoding_kind(const qairt_encoding_t* e) {
  return e ? static_cast<qairt_encoding_kind_t>(e->encoding.kind) : 0;
}
qairt_dtype_t qairt_encoding_dtype(const qairt_encoding_t* e) {
  return e ? static_cast<qairt_dtype_t>(e->encoding.dtype) : qairt_dtype_t{QAIRT_DTYPE_UNDEFINED};
}
uint32_t qairt_encoding_bitwidth(const qairt_encoding_t* e) { return e ? e->encoding.effective_bitwidth() : 0; }
qairt_symmetry_t qairt_encoding_symmetry(const qairt_encoding_t* e) {
  return e ? static_cast<qairt_symmetry_t>(e->encoding.symmetry) : 0;
}
int32_t qairt_encoding_overridden(const qairt_encoding_t* e) { return e && e->encoding.overridden ? 1 : 0; }
int32_t qairt_encoding_axis(const qairt_encoding_t* e) { return e ? e->encoding.axis : -1; }
uint32_t qairt_encoding_decompressed_bitwidth(const qairt_encoding_t* e) {
  return e ? e->encoding.decompressed_bitwidth : 0;
}

void qairt_encoding_scales(const qairt_encoding_t* e, const float** out, size_t* out_count) {
  GetArray(e ? &e->encoding.scales : nullptr, out, out_count);
}
void qairt_encoding_offsets(const qairt_encoding_t* e, const int32_t** out, size_t* out_count) {
  GetArray(e ? &e->encoding.offsets : nullptr, out, out_count);
}
void qairt_encoding_float_offsets(const qairt_encoding_t* e, const float** out, size_t* out_count) {
  GetArray(e ? &e->encoding.float_offsets : nullptr, out, out_count);
}
void qairt_encoding_block_sizes(const qairt_encoding_t* e, const int64_t** out, size_t* out_count) {
  GetArray(e ? &e->encoding.block_sizes : nullptr, out, out_count);
}
void qairt_encoding_block_int_scales(const qairt_encoding_t* e, const int32_t** out, size_t* out_count) {
  GetArray(e ? &e->encoding.block_int_scales : nullptr, out, out_count);
}
const char* qairt_encoding_index_tensor(const qairt_encoding_t* e) { return e ? e->encoding.index_tensor.c_str() : ""; }
size_t qairt_encoding_sub_encoding_count(const qairt_encoding_t* e) { return e ? e->encoding.sub_encodings.size() : 0; }

const qairt_encoding_t* qairt_encoding_sub_encoding(const qairt_encoding_t* e, size_t index) {
  if (!e || index >= e->encoding.sub_encodings.size()) return nullptr;
  // qairt_encoding_t is a standard-layout wrapper of Encoding: the address of
  // the sub-encoding is a valid borrowed handle.
  static_assert(std::is_standard_layout_v<qairt_encoding_t>);
  static_assert(offsetof(qairt_encoding_t, encoding) == 0);
  return reinterpret_cast<const qairt_encoding_t*>(&e->encoding.sub_encodings[index]);
}

int32_t qairt_encoding_equal(const qairt_encoding_t* a, const qairt_encoding_t* b) {
  if (!a || !b) return a == b ? 1 : 0;
  return a->encoding == b->encoding ? 1 : 0;
}

qairt_status_t* qairt_graph_set_encoding(qairt_graph_t* graph, qairt_tensor_id tensor, const qairt_encoding_t* e) {
  QAIRT_CAPI_BEGIN
  if (!graph || !e) return InvalidArg("qairt_graph_set_encoding: graph and encoding must not be NULL");
  if (!graph->graph.valid_tensor(tensor))
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("qairt_graph_set_encoding: tensor id {} is not in graph '{}'",
                                                         tensor, graph->graph.name()));
  return capi::FromStatus(graph->graph.SetEncoding(tensor, e->encoding));
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_get_encoding(const qairt_graph_t* graph, qairt_tensor_id tensor,
                                         qairt_encoding_t** out_encoding) {
  QAIRT_CAPI_BEGIN
  if (!graph || !out_encoding) return InvalidArg("qairt_graph_get_encoding: graph and out_encoding must not be NULL");
  if (!graph->graph.valid_tensor(tensor))
    return capi::MakeStatus(QAIRT_NOT_FOUND, fmt::format("qairt_graph_get_encoding: tensor id {} is not in graph '{}'",
                                                         tensor, graph->graph.name()));
  const auto& enc = graph->graph.tensor(tensor).encoding;
  *out_encoding = enc ? new qairt_encoding_t{*enc} : nullptr;
  return nullptr;
  QAIRT_CAPI_END
}

qairt_status_t* qairt_graph_clear_encoding(qairt_graph_t* graph, qairt_tensor_id tensor) {
  QAIRT_CAPI_BEGIN
  if (!graph) return InvalidArg("qairt_graph_clear_encoding: graph must not be NULL");
  return capi::FromStatus(graph->graph.ClearEncoding(tensor));
  QAIRT_CAPI_END
}

}  // extern "C"
