// Internal to lib/prepare: the user's ONNX model as a ModelProto that prepare
// edits in place (external data read into memory first, so every tensor can
// be audited and the edited model checked without touching the user's files).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/status.h"

namespace qairt::prepare {

struct LoadedModel {
  onnx::ModelProto proto;
  std::string path;
  std::string dir;            // external data is resolved relative to it
  bool had_external = false;  // some tensor was stored outside the .onnx file
  uint64_t file_bytes = 0;    // the .onnx file plus the external data read
};

// Parses `path` and reads every external tensor into raw_data. Locations must
// stay inside the model's folder (no absolute paths, no "..").
Status LoadModel(const std::string& path, LoadedModel* out);

// Where a tensor sits: a graph initializer or the value of a Constant node.
struct TensorSite {
  onnx::TensorProto* tensor = nullptr;
  std::string name;               // initializer name / the Constant's output name
  const onnx::NodeProto* constant = nullptr;  // the Constant node, if any
  bool in_subgraph = false;
};
// Every initializer and Constant 'value' tensor, subgraphs included.
void ForEachTensor(onnx::GraphProto* graph, const std::function<void(const TensorSite&)>& fn);

// float32 tensors only (raw_data or float_data); false for other types.
bool ReadFloats(const onnx::TensorProto& t, std::vector<float>* out);
// Writes back in the representation the tensor already uses.
void WriteFloats(onnx::TensorProto* t, const std::vector<float>& v);

// Main-graph topology by value name.
struct GraphIndex {
  std::map<std::string, int> producer;  // value -> node index
  std::map<std::string, std::vector<std::pair<int, int>>> consumers;  // value -> (node, input slot)
  std::map<std::string, int> by_name;   // node name -> index (unique names only)
};
GraphIndex IndexGraph(const onnx::GraphProto& g);

// Serializes `model`; when `external`, every raw_data tensor of at least
// 1 KiB goes to `data_bytes` (referenced as `data_name`, 64-byte aligned).
Status SerializeModel(onnx::ModelProto model, bool external, const std::string& data_name, std::string* model_bytes,
                      std::string* data_bytes);

}  // namespace qairt::prepare
