// Decoding ONNX TensorProtos (typed fields, raw_data, external data) into
// static IR data, with every size and path checked.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

#include "ir/dtype.h"
#include "ir/shape.h"
#include "support/static_data.h"
#include "support/status.h"

namespace qairt::onnx_import {

// ONNX TensorProto.DataType -> IR dtype; nullopt if the IR has no such type
// (strings, complex, float8).
std::optional<DType> DTypeFromOnnx(int32_t elem_type);
// IR dtype -> ONNX elem type (0 if none).
int32_t OnnxFromDType(DType dtype);
const char* OnnxTypeName(int32_t elem_type);

struct DecodedTensor {
  DType dtype = DType::kUndefined;
  Shape shape;
  std::shared_ptr<const StaticData> data;
};

// Decodes `t`. `keepalive` owns `t` (raw_data is referenced, not copied).
// `model_dir` is the folder external data must stay inside (empty = no
// external data allowed). `what` names the tensor in messages.
Result<DecodedTensor> DecodeTensor(const onnx::TensorProto& t, const std::shared_ptr<const void>& keepalive,
                                   const std::string& model_dir, const std::string& what);

}  // namespace qairt::onnx_import
