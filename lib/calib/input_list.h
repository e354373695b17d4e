// The classic flow's input_list (qnn-model-export-classic-flow.md, Stage 2):
// one line per sample of space-separated `name:=path` entries (or bare paths
// in graph-input order); paths absolute or relative to the list file; each
// file holds the raw little-endian tensor in the graph input's dtype. Lines
// starting with '#' and a first line starting with '%' (qnn-net-run's output
// names line) are skipped.
//
// Everything is checked when the list is read (names, files, sizes), so a
// bad line fails before any calibration work; sample data is read one sample
// at a time. Errors name the list file and line, the input and the raw file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt::calib {

inline constexpr size_t kMaxInputListBytes = 64u << 20;
inline constexpr size_t kMaxSamples = 1u << 20;

struct InputSpec {
  std::string name;
  DType dtype;                // the graph input's dtype (fixed point: its storage type)
  std::vector<int64_t> dims;  // fully known
  uint64_t bytes;             // expected raw file size
};

struct InputList {
  std::string path;
  std::vector<InputSpec> inputs;  // graph-input order
  struct Sample {
    size_t line;                     // 1-based line in the list
    std::vector<std::string> files;  // one per input, resolved
    // Per input: the file holds int64 values for an int32 input (the model's
    // own dtype before the int64 -> int32 narrowing), narrowed on read.
    std::vector<bool> int64_file;
  };
  std::vector<Sample> samples;
};

// Input specs of a graph (fails naming an input whose shape is not static).
Result<std::vector<InputSpec>> GraphInputSpecs(const Graph& graph);

// Reads and checks a list against the graph's inputs.
Result<InputList> ReadInputList(const std::string& path, const std::vector<InputSpec>& inputs);

// Reads sample `index` (one buffer per input). Float inputs are checked for
// NaN/Inf; an error names the line, the input and the file.
Result<std::vector<std::vector<uint8_t>>> LoadSample(const InputList& list, size_t index);

}  // namespace qairt::calib
