// Test helper: builds .tflite FlatBuffers (through qairt's own schema subset,
// lib/tflite/schema/tflite_subset.fbs) from plain structs, so tests
// can state a model briefly and then break exactly one field of it.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tflite/tflite_subset_generated.h"

namespace qairt::tflite_test {

namespace tfb = ::qairt::tflite::fb;

// TFLite sparsity parameters (per traversal level: DENSE with its size, or
// SPARSE_CSR with segments and indices, written as uint8 vectors when
// `small_indices`, else int32).
struct TSparseLevel {
  bool csr = false;
  int32_t dense_size = 0;
  std::vector<int32_t> segments, indices;
};
struct TSparsity {
  std::vector<int32_t> traversal_order, block_map;
  std::vector<TSparseLevel> levels;
  bool small_indices = false;
};

struct TTensor {
  TTensor() = default;
  TTensor(std::string n, std::vector<int32_t> s, tfb::TensorType t = tfb::TensorType::FLOAT32,
          std::vector<uint8_t> d = {}, std::vector<float> sc = {}, std::vector<int64_t> zp = {}, int32_t qd = 0)
      : name(std::move(n)), shape(std::move(s)), type(t), data(std::move(d)), scale(std::move(sc)),
        zero_point(std::move(zp)), quantized_dimension(qd) {}

  std::string name;
  std::vector<int32_t> shape;
  tfb::TensorType type = tfb::TensorType::FLOAT32;
  std::vector<uint8_t> data;       // constant bytes (empty: activation)
  std::vector<float> scale;        // quantization (empty: none)
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
  // Hostile knobs.
  std::optional<uint32_t> buffer_index;  // instead of the buffer created for `data`
  std::optional<std::pair<uint64_t, uint64_t>> external;  // Buffer.offset/size instead of data
  bool sparse = false;
  uint8_t details_type = 0;  // QuantizationDetails type (1 custom, 2 blockwise, 3 multi-axis)
  uint32_t external_buffer = 0;
  bool is_variable = false;
  std::vector<int32_t> shape_signature;  // empty: none written
  std::optional<TSparsity> sparsity;     // `data` then holds the stored values only
};

using OptionsFn = std::function<std::pair<tfb::BuiltinOptions, flatbuffers::Offset<void>>(flatbuffers::FlatBufferBuilder&)>;

struct TOp {
  int32_t code = 0;
  std::vector<int32_t> inputs, outputs;
  OptionsFn options;
  std::string custom_code;                 // for CUSTOM (32)
  std::vector<uint8_t> custom_options;     // for CUSTOM: its raw option bytes
  std::optional<uint32_t> opcode_index;    // hostile: instead of the code's entry
  std::optional<int8_t> deprecated_code;   // hostile: deprecated_builtin_code
};

struct TModel {
  std::vector<TTensor> tensors;
  std::vector<TOp> ops;
  std::vector<int32_t> inputs, outputs;
  uint32_t version = 3;
  size_t extra_subgraphs = 0;   // empty subgraphs appended (for IF/WHILE references)
  uint32_t metadata_buffer = 0; // when nonzero, a Metadata entry pointing at this buffer
  bool no_subgraphs = false;

  int32_t Add(TTensor t) {
    tensors.push_back(std::move(t));
    return static_cast<int32_t>(tensors.size() - 1);
  }
  void Op(int32_t code, std::vector<int32_t> in, std::vector<int32_t> out, OptionsFn opts = nullptr) {
    TOp op;
    op.code = code;
    op.inputs = std::move(in);
    op.outputs = std::move(out);
    op.options = std::move(opts);
    ops.push_back(std::move(op));
  }
};

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline std::vector<uint8_t> Build(const TModel& m) {
  flatbuffers::FlatBufferBuilder b(1024);
  // Buffers: [0] is the empty sentinel, then one per constant.
  std::vector<flatbuffers::Offset<tfb::Buffer>> buffers;
  buffers.push_back(tfb::CreateBuffer(b));
  std::vector<uint32_t> tensor_buffer(m.tensors.size(), 0);
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TTensor& t = m.tensors[i];
    if (t.external) {
      tensor_buffer[i] = static_cast<uint32_t>(buffers.size());
      buffers.push_back(tfb::CreateBuffer(b, 0, t.external->first, t.external->second));
    } else if (!t.data.empty()) {
      b.ForceVectorAlignment(t.data.size(), 1, 16);
      auto d = b.CreateVector(t.data);
      tensor_buffer[i] = static_cast<uint32_t>(buffers.size());
      buffers.push_back(tfb::CreateBuffer(b, d));
    }
  }
  std::vector<flatbuffers::Offset<tfb::Tensor>> tensors;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TTensor& t = m.tensors[i];
    flatbuffers::Offset<tfb::QuantizationParameters> q;
    if (!t.scale.empty() || !t.zero_point.empty() || t.details_type || t.quantized_dimension) {
      auto s = b.CreateVector(t.scale);
      auto z = b.CreateVector(t.zero_point);
      flatbuffers::Offset<void> details;
      if (t.details_type == 1) details = tfb::CreateCustomQuantization(b, b.CreateVector(std::vector<uint8_t>{1})).Union();
      if (t.details_type == 2) details = tfb::CreateBlockwiseQuantization(b, 0, -1, 32).Union();
      if (t.details_type == 3) details = tfb::CreateMultiAxisQuantization(b, 0, -1, 0).Union();
      q = tfb::CreateQuantizationParameters(b, 0, 0, s, z, static_cast<tfb::QuantizationDetails>(t.details_type),
                                            details, t.quantized_dimension);
    }
    flatbuffers::Offset<tfb::SparsityParameters> sp;
    if (t.sparse) sp = tfb::CreateSparsityParameters(b, b.CreateVector(std::vector<int32_t>{0, 1}));
    if (t.sparsity) {
      auto index_vector = [&](const std::vector<int32_t>& v) -> std::pair<tfb::SparseIndexVector, flatbuffers::Offset<void>> {
        if (t.sparsity->small_indices) {
          std::vector<uint8_t> u(v.begin(), v.end());
          return {tfb::SparseIndexVector::Uint8Vector, tfb::CreateUint8Vector(b, b.CreateVector(u)).Union()};
        }
        return {tfb::SparseIndexVector::Int32Vector, tfb::CreateInt32Vector(b, b.CreateVector(v)).Union()};
      };
      std::vector<flatbuffers::Offset<tfb::DimensionMetadata>> levels;
      for (const TSparseLevel& l : t.sparsity->levels) {
        if (!l.csr) {
          levels.push_back(tfb::CreateDimensionMetadata(b, tfb::DimensionType::DENSE, l.dense_size));
          continue;
        }
        auto [st, seg] = index_vector(l.segments);
        auto [it, idx] = index_vector(l.indices);
        levels.push_back(tfb::CreateDimensionMetadata(b, tfb::DimensionType::SPARSE_CSR, 0, st, seg, it, idx));
      }
      sp = tfb::CreateSparsityParameters(b, b.CreateVector(t.sparsity->traversal_order),
                                         t.sparsity->block_map.empty() ? 0 : b.CreateVector(t.sparsity->block_map),
                                         b.CreateVector(levels));
    }
    auto shape = b.CreateVector(t.shape);
    auto name = b.CreateString(t.name);
    flatbuffers::Offset<flatbuffers::Vector<int32_t>> signature;
    if (!t.shape_signature.empty()) signature = b.CreateVector(t.shape_signature);
    tensors.push_back(tfb::CreateTensor(b, shape, t.type, t.buffer_index.value_or(tensor_buffer[i]), name, q,
                                        t.is_variable, sp, signature, false, t.external_buffer));
  }
  // Operator codes: one per distinct (code, custom name, deprecated byte).
  std::vector<flatbuffers::Offset<tfb::OperatorCode>> codes;
  std::vector<uint32_t> op_code_index;
  std::vector<std::tuple<int32_t, std::string, int>> seen;
  for (const TOp& op : m.ops) {
    const int dep = op.deprecated_code ? *op.deprecated_code : 1000;
    auto key = std::make_tuple(op.code, op.custom_code, dep);
    size_t k = 0;
    while (k < seen.size() && seen[k] != key) ++k;
    if (k == seen.size()) {
      seen.push_back(key);
      const int8_t d = op.deprecated_code ? *op.deprecated_code : static_cast<int8_t>(std::min(op.code, 127));
      auto cc = op.custom_code.empty() ? flatbuffers::Offset<flatbuffers::String>() : b.CreateString(op.custom_code);
      codes.push_back(tfb::CreateOperatorCode(b, d, cc, 1, op.code));
    }
    op_code_index.push_back(static_cast<uint32_t>(k));
  }
  std::vector<flatbuffers::Offset<tfb::Operator>> ops;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const TOp& op = m.ops[i];
    std::pair<tfb::BuiltinOptions, flatbuffers::Offset<void>> opts{tfb::BuiltinOptions::NONE, 0};
    if (op.options) opts = op.options(b);
    auto in = b.CreateVector(op.inputs);
    auto out = b.CreateVector(op.outputs);
    auto custom = op.custom_options.empty() ? flatbuffers::Offset<flatbuffers::Vector<uint8_t>>()
                                            : b.CreateVector(op.custom_options);
    ops.push_back(tfb::CreateOperator(b, op.opcode_index.value_or(op_code_index[i]), in, out, opts.first, opts.second,
                                      custom));
  }
  std::vector<flatbuffers::Offset<tfb::SubGraph>> subgraphs;
  if (!m.no_subgraphs) {
    subgraphs.push_back(tfb::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(m.inputs),
                                            b.CreateVector(m.outputs), b.CreateVector(ops), b.CreateString("main")));
    for (size_t i = 0; i < m.extra_subgraphs; ++i) subgraphs.push_back(tfb::CreateSubGraph(b));
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<tfb::Metadata>>> metadata;
  if (m.metadata_buffer)
    metadata = b.CreateVector(std::vector<flatbuffers::Offset<tfb::Metadata>>{
        tfb::CreateMetadata(b, b.CreateString("min_runtime_version"), m.metadata_buffer)});
  auto model = tfb::CreateModel(b, m.version, b.CreateVector(codes), b.CreateVector(subgraphs),
                                b.CreateString("qairt test"), b.CreateVector(buffers), 0, metadata);
  tfb::FinishModelBuffer(b, model);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

// ---- option helpers ----------------------------------------------------------
inline OptionsFn Conv(tfb::Padding pad, int sh, int sw, tfb::ActivationFunctionType act = tfb::ActivationFunctionType::NONE,
                      int dh = 1, int dw = 1) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::Conv2DOptions,
                          tfb::CreateConv2DOptions(b, pad, sw, sh, act, dw, dh).Union());
  };
}
inline OptionsFn Depthwise(tfb::Padding pad, int sh, int sw, int mult,
                           tfb::ActivationFunctionType act = tfb::ActivationFunctionType::NONE) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::DepthwiseConv2DOptions,
                          tfb::CreateDepthwiseConv2DOptions(b, pad, sw, sh, mult, act).Union());
  };
}
inline OptionsFn Fc(tfb::ActivationFunctionType act = tfb::ActivationFunctionType::NONE, bool keep = false) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::FullyConnectedOptions,
                          tfb::CreateFullyConnectedOptions(b, act, 0, keep).Union());
  };
}
inline OptionsFn AddOpts(tfb::ActivationFunctionType act = tfb::ActivationFunctionType::NONE) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::AddOptions, tfb::CreateAddOptions(b, act).Union());
  };
}
inline OptionsFn Concat(int axis, tfb::ActivationFunctionType act = tfb::ActivationFunctionType::NONE) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::ConcatenationOptions,
                          tfb::CreateConcatenationOptions(b, axis, act).Union());
  };
}
inline OptionsFn Pool(tfb::Padding pad, int s, int f) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::Pool2DOptions, tfb::CreatePool2DOptions(b, pad, s, s, f, f).Union());
  };
}
inline OptionsFn While(int cond, int body) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::WhileOptions, tfb::CreateWhileOptions(b, cond, body).Union());
  };
}
inline OptionsFn Squeeze(std::vector<int32_t> dims) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::SqueezeOptions, tfb::CreateSqueezeOptions(b, b.CreateVector(dims)).Union());
  };
}
inline OptionsFn Reshape() {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tfb::BuiltinOptions::ReshapeOptions, tfb::CreateReshapeOptions(b).Union());
  };
}

}  // namespace qairt::tflite_test
