#include "onnx/onnx_tensor.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace qairt::onnx_import {

std::optional<DType> DTypeFromOnnx(int32_t t) {
  using P = onnx::TensorProto;
  switch (t) {
    case P::FLOAT: return DType::kFloat32;
    case P::UINT8: return DType::kUInt8;
    case P::INT8: return DType::kInt8;
    case P::UINT16: return DType::kUInt16;
    case P::INT16: return DType::kInt16;
    case P::INT32: return DType::kInt32;
    case P::INT64: return DType::kInt64;
    case P::BOOL: return DType::kBool;
    case P::FLOAT16: return DType::kFloat16;
    case P::DOUBLE: return DType::kFloat64;
    case P::UINT32: return DType::kUInt32;
    case P::UINT64: return DType::kUInt64;
    case P::BFLOAT16: return DType::kBFloat16;
    case 21: return DType::kUInt4;  // UINT4 (onnx >= 1.16; Debian's 1.12 headers predate it)
    case 22: return DType::kInt4;   // INT4
    default: return std::nullopt;
  }
}

int32_t OnnxFromDType(DType d) {
  using P = onnx::TensorProto;
  switch (d) {
    case DType::kFloat32: return P::FLOAT;
    case DType::kUInt8: case DType::kUFixed8: return P::UINT8;
    case DType::kInt8: case DType::kSFixed8: return P::INT8;
    case DType::kUInt16: case DType::kUFixed16: return P::UINT16;
    case DType::kInt16: case DType::kSFixed16: return P::INT16;
    case DType::kInt32: case DType::kSFixed32: return P::INT32;
    case DType::kInt64: return P::INT64;
    case DType::kBool: return P::BOOL;
    case DType::kFloat16: return P::FLOAT16;
    case DType::kFloat64: return P::DOUBLE;
    case DType::kUInt32: case DType::kUFixed32: return P::UINT32;
    case DType::kUInt64: return P::UINT64;
    case DType::kBFloat16: return P::BFLOAT16;
    case DType::kUInt4: case DType::kUFixed4: return 21;
    case DType::kInt4: case DType::kSFixed4: return 22;
    default: return 0;
  }
}

const char* OnnxTypeName(int32_t t) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",      "UINT16", "INT16",
                                       "INT32",     "INT64",  "STRING",    "BOOL",      "FLOAT16", "DOUBLE",
                                       "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
                                       "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4"};
  return t >= 0 && t < static_cast<int32_t>(std::size(kNames)) ? kNames[t] : "UNKNOWN";
}

namespace {

constexpr const char* kOrtMemAddrMarker = "*/_ORT_MEM_ADDR_/*";

std::optional<uint64_t> ParseU64(const std::string& s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

// Resolves an external-data location inside `model_dir`, refusing anything
// that could read outside it.
Result<std::string> ResolveExternalPath(const std::string& model_dir, const std::string& location,
                                        const std::string& what) {
  if (model_dir.empty())
    return Error(StatusCode::kInvalidArgument,
                 "tensor '{}': external data '{}' cannot be resolved for a model given as bytes (no model folder)",
                 what, location);
  if (location.find(kOrtMemAddrMarker) != std::string::npos || location.find("_ORT_MEM_ADDR_") != std::string::npos)
    return Error(StatusCode::kInvalidArgument,
                 "tensor '{}': external data location '{}' is ONNX Runtime's in-memory marker, not a file", what,
                 location);
  if (location.empty()) return Error(StatusCode::kInvalidArgument, "tensor '{}': external data location is empty", what);
  if (location.find('\0') != std::string::npos)
    return Error(StatusCode::kInvalidArgument, "tensor '{}': external data location contains a NUL byte", what);
  if (location.front() == '/' || location.front() == '\\' || (location.size() > 1 && location[1] == ':'))
    return Error(StatusCode::kInvalidArgument, "tensor '{}': external data location '{}' is absolute; it must be "
                 "relative to the model's folder", what, location);
  // Reject any ".." path component (either separator).
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0)
      return Error(StatusCode::kInvalidArgument, "tensor '{}': external data location '{}' leaves the model's folder "
                   "('..')", what, location);
    start = end + 1;
  }
  const std::string joined = model_dir + "/" + location;
  char dir_real[PATH_MAX], file_real[PATH_MAX];
  if (!realpath(model_dir.c_str(), dir_real))
    return Error(StatusCode::kIoError, "tensor '{}': model folder '{}' cannot be resolved", what, model_dir);
  if (!realpath(joined.c_str(), file_real))
    return Error(StatusCode::kIoError, "tensor '{}': external data file '{}' does not exist", what, joined);
  const std::string dir(dir_real), file(file_real);
  if (file.size() <= dir.size() || file.compare(0, dir.size(), dir) != 0 || file[dir.size()] != '/')
    return Error(StatusCode::kInvalidArgument, "tensor '{}': external data '{}' resolves to '{}', outside the model's "
                 "folder '{}' (symlink?)", what, location, file, dir);
  return file;
}

template <typename Src, typename Dst>
std::vector<uint8_t> Narrow(const google::protobuf::RepeatedField<Src>& src) {
  std::vector<uint8_t> out(static_cast<size_t>(src.size()) * sizeof(Dst));
  for (int i = 0; i < src.size(); ++i) {
    const Dst v = static_cast<Dst>(src.Get(i));
    std::memcpy(out.data() + static_cast<size_t>(i) * sizeof(Dst), &v, sizeof(Dst));
  }
  return out;
}

}  // namespace

Result<DecodedTensor> DecodeTensor(const onnx::TensorProto& t, const std::shared_ptr<const void>& keepalive,
                                   const std::string& model_dir, const std::string& what) {
  DecodedTensor out;
  auto dtype = DTypeFromOnnx(t.data_type());
  if (!dtype)
    return Error(StatusCode::kUnsupported, "tensor '{}': data type {} ({}) is not supported", what, t.data_type(),
                 OnnxTypeName(t.data_type()));
  out.dtype = *dtype;
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0) return Error(StatusCode::kInvalidArgument, "tensor '{}': dims[{}] is negative ({})", what, i, dims[i]);
  out.shape = Shape::FromExtents(dims);
  const auto count = out.shape.element_count();
  const auto bytes = count ? StorageBytes(out.dtype, *count) : std::nullopt;
  if (!bytes)
    return Error(StatusCode::kInvalidArgument, "tensor '{}': shape {} x {} overflows", what, out.shape.ToString(),
                 DTypeName(out.dtype));
  const std::string expected = fmt::format("{} bytes for {} {}", *bytes, DTypeName(out.dtype), out.shape.ToString());

  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    std::optional<uint64_t> offset = 0, length;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset") {
        offset = ParseU64(kv.value());
        if (!offset) return Error(StatusCode::kInvalidArgument, "tensor '{}': external data offset '{}' is not a "
                                  "non-negative 64-bit integer", what, kv.value());
      } else if (kv.key() == "length") {
        length = ParseU64(kv.value());
        if (!length) return Error(StatusCode::kInvalidArgument, "tensor '{}': external data length '{}' is not a "
                                  "non-negative 64-bit integer", what, kv.value());
      }
    }
    if (offset && *offset > static_cast<uint64_t>(INT64_MAX))
      return Error(StatusCode::kInvalidArgument, "tensor '{}': external data offset {} overflows int64", what, *offset);
    if (length && *length > static_cast<uint64_t>(INT64_MAX))
      return Error(StatusCode::kInvalidArgument, "tensor '{}': external data length {} overflows int64", what, *length);
    auto path = ResolveExternalPath(model_dir, location, what);
    if (!path.ok()) return path.status();
    if (length && *length != *bytes)
      return Error(StatusCode::kInvalidArgument, "tensor '{}': external data length {} does not match the {}", what,
                   *length, expected);
    auto mapped = StaticData::MapFile(path.value(), *offset, *bytes);
    if (!mapped.ok())
      return Error(mapped.status().code(), "tensor '{}': {}", what, mapped.status().message());
    out.data = std::move(mapped.value());
    return out;
  }

  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != *bytes)
      return Error(StatusCode::kInvalidArgument, "tensor '{}': raw_data has {} bytes but the shape needs {}", what,
                   raw.size(), expected);
    // Zero-copy: the bytes stay inside the parsed model, kept alive with it.
    out.data = std::make_shared<const StaticData>(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(),
                                                  StaticDataOrigin::kOwned, std::const_pointer_cast<void>(keepalive));
    return out;
  }

  using P = onnx::TensorProto;
  std::vector<uint8_t> data;
  auto check_count = [&](int n) -> Status {
    if (static_cast<uint64_t>(n) != *count)
      return Error(StatusCode::kInvalidArgument, "tensor '{}': has {} values but the shape {} needs {}", what, n,
                   out.shape.ToString(), *count);
    return Status::Ok();
  };
  switch (t.data_type()) {
    case P::FLOAT:
      QAIRT_RETURN_IF_ERROR(check_count(t.float_data_size()));
      data.resize(*bytes);
      if (*bytes) std::memcpy(data.data(), t.float_data().data(), *bytes);
      break;
    case P::DOUBLE:
      QAIRT_RETURN_IF_ERROR(check_count(t.double_data_size()));
      data.resize(*bytes);
      if (*bytes) std::memcpy(data.data(), t.double_data().data(), *bytes);
      break;
    case P::INT64:
      QAIRT_RETURN_IF_ERROR(check_count(t.int64_data_size()));
      data.resize(*bytes);
      if (*bytes) std::memcpy(data.data(), t.int64_data().data(), *bytes);
      break;
    case P::INT32:
      QAIRT_RETURN_IF_ERROR(check_count(t.int32_data_size()));
      data = Narrow<int32_t, int32_t>(t.int32_data());
      break;
    case P::INT16: QAIRT_RETURN_IF_ERROR(check_count(t.int32_data_size())); data = Narrow<int32_t, int16_t>(t.int32_data()); break;
    case P::UINT16:
    case P::FLOAT16:
    case P::BFLOAT16:
      QAIRT_RETURN_IF_ERROR(check_count(t.int32_data_size()));
      data = Narrow<int32_t, uint16_t>(t.int32_data());
      break;
    case P::INT8: QAIRT_RETURN_IF_ERROR(check_count(t.int32_data_size())); data = Narrow<int32_t, int8_t>(t.int32_data()); break;
    case P::UINT8:
    case P::BOOL:
      QAIRT_RETURN_IF_ERROR(check_count(t.int32_data_size()));
      data = Narrow<int32_t, uint8_t>(t.int32_data());
      break;
    case P::UINT32: QAIRT_RETURN_IF_ERROR(check_count(t.uint64_data_size())); data = Narrow<uint64_t, uint32_t>(t.uint64_data()); break;
    case P::UINT64: QAIRT_RETURN_IF_ERROR(check_count(t.uint64_data_size())); data = Narrow<uint64_t, uint64_t>(t.uint64_data()); break;
    case 21:
    case 22: {
      // int32_data holds one packed byte (two 4-bit values) per entry.
      if (static_cast<uint64_t>(t.int32_data_size()) != *bytes)
        return Error(StatusCode::kInvalidArgument, "tensor '{}': int32_data has {} packed bytes but {} are needed", what,
                     t.int32_data_size(), *bytes);
      data = Narrow<int32_t, uint8_t>(t.int32_data());
      break;
    }
    default:
      return Error(StatusCode::kUnsupported, "tensor '{}': data type {} is not supported", what,
                   OnnxTypeName(t.data_type()));
  }
  if (data.size() != *bytes)
    return Error(StatusCode::kInvalidArgument, "tensor '{}': decoded {} bytes but the shape needs {}", what,
                 data.size(), expected);
  out.data = StaticData::Copy(data.data(), data.size());
  return out;
}

}  // namespace qairt::onnx_import
