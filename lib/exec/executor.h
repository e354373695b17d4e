// Reference CPU executor: runs an IR graph in float32 on the CPU,
// with quantization simulation at every tensor that carries an integer
// encoding and fp16 storage emulation where the encoding (or dtype) is fp16.
//
//   auto ex = exec::Executor::Create(graph, options);   // plan once
//   auto outs = (*ex)->Run(inputs, observer);           // any number of times
//
// Storage: every float or fixed-point tensor is held as float32 (fixed-point
// values dequantized), every integer tensor as int64, bools as one byte.
// Activations live in one arena planned by liveness (buffers reused once
// their last consumer ran); float32 static weights are read in place from the
// graph's StaticData (memory-mapped when the model was), other static
// tensors are converted once at Create.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt::exec {

// Memory and threads that executors run one at a time can share: the
// activation arena, the kernels' scratch and the thread pool. An analysis
// that builds an executor per op (hundreds on one model) would otherwise
// give each its own arena, touched fresh on its first runs and held until
// the end: on the PP-OCR recognizer that was most of the analysis's time
// and 0.6 GB. Executors sharing a workspace must never run at the same
// time, nor one inside another's observer: Run returns an error if they do.
// Each executor holds the workspace (Options::workspace), so it lives as
// long as the last of them.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  uint64_t arena_bytes() const;  // the arena's size: the largest any of its executors needed

 private:
  friend class Executor;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct Options {
  uint32_t num_threads = 1;           // 1: single-threaded (reproducible); 0: hardware concurrency
  bool simulate_quantization = true;  // quantize->dequantize at tensors with integer encodings
  // The observer also sees every graph input, as the first op reads it
  // (loaded, its quantization simulated), before any op runs.
  bool observe_inputs = false;
  // The observer sees each op output as the op computed it, before its
  // quantization is simulated (what the next op reads is that value
  // quantized). Graph inputs are still seen as loaded.
  bool observe_unsimulated = false;
  // Shared with other executors run in turn (see Workspace); null: own memory.
  std::shared_ptr<Workspace> workspace = nullptr;
};

// One tensor crossing the executor boundary. `dtype` is the external dtype:
// the IR dtype, except that fixed-point and bfloat16 outputs are float32
// (dequantized values). Inputs are given in the graph input's own dtype
// (fixed-point inputs as quantized bytes, dequantized with their encoding).
struct HostTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

// What an observer sees after each op, per output: data in storage form
// (float32 for float/fixed-point tensors, int64 for integers, bool bytes).
struct ObservedTensor {
  TensorId id;
  const std::string* name;
  DType storage_dtype;  // kFloat32, kInt64 or kBool
  const std::vector<int64_t>* dims;
  const void* data;
  size_t bytes;
};
using Observer = std::function<Status(const ObservedTensor&)>;

struct PlanStats {
  uint64_t arena_bytes = 0;        // planned activation arena
  uint64_t unplanned_bytes = 0;    // sum of all activation sizes (no reuse)
  uint64_t static_copied_bytes = 0;  // static tensors converted at Create
  uint64_t static_borrowed_bytes = 0;  // read in place
  size_t ops = 0;
};

// The values of a run at one position of its order(): what the ops from
// there on read of what came before. A sequential pass that changes only
// ops at or after the position resumes from it (Executor::RunFrom) instead
// of running every sample from its inputs again.
struct Cut {
  size_t position = 0;
  std::vector<TensorId> ids;                 // Executor::Crossing(position)
  std::vector<std::vector<uint8_t>> values;  // storage bytes, one per id
  uint64_t bytes() const {
    uint64_t n = 0;
    for (const auto& v : values) n += v.size();
    return n;
  }
};

class Executor {
 public:
  static Result<std::unique_ptr<Executor>> Create(const Graph& graph, const Options& options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const Graph& graph() const;
  // External dtype and dims of graph input / output i.
  DType InputDType(size_t i) const;
  DType OutputDType(size_t i) const;
  const std::vector<int64_t>& InputDims(size_t i) const;
  const std::vector<int64_t>& OutputDims(size_t i) const;
  const PlanStats& stats() const;

  // inputs: one per graph input, in graph-input order, bytes in the input's
  // external dtype. Returns one HostTensor per graph output. Not thread-safe:
  // one Run at a time per executor.
  Result<std::vector<HostTensor>> Run(const std::vector<const void*>& inputs, const std::vector<size_t>& input_bytes,
                                      const Observer* observer = nullptr);
  // The same with each input as one byte buffer (a loaded sample, graph-input order).
  Result<std::vector<HostTensor>> Run(const std::vector<std::vector<uint8_t>>& inputs,
                                      const Observer* observer = nullptr);
  // The ops in the order Run executes them.
  const std::vector<OpId>& order() const;
  // Only the first `ops` ops of order() (all of them when ops >= their
  // count): for an observer that needs the values of a prefix of the
  // graph. Returns the graph outputs only when every op ran (otherwise an
  // empty vector).
  // With `save`, the run also saves the cut at save->position (which must
  // lie within the ops it runs, or be their end).
  Result<std::vector<HostTensor>> RunPrefix(const std::vector<const void*>& inputs,
                                            const std::vector<size_t>& input_bytes, const Observer* observer,
                                            size_t ops, Cut* save = nullptr);
  Result<std::vector<HostTensor>> RunPrefix(const std::vector<std::vector<uint8_t>>& inputs,
                                            const Observer* observer, size_t ops, Cut* save = nullptr);
  // Resumes from a cut an executor with the same order() saved: runs the ops
  // from from.position up to `ops`, exactly as a run from the inputs would
  // (same values, bit for bit), provided nothing any op before the cut reads
  // changed. The observer first sees the restored tensors (graph inputs
  // among them only with Options::observe_inputs), then each op's outputs.
  // Not with Options::observe_unsimulated (a cut holds simulated values).
  Result<std::vector<HostTensor>> RunFrom(const Cut& from, const Observer* observer, size_t ops,
                                          Cut* save = nullptr);
  // The tensors a cut at `position` holds: graph inputs and op outputs made
  // before it that an op at or after it reads, or that are graph outputs.
  std::vector<TensorId> Crossing(size_t position) const;

 private:
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Op types this executor implements (sorted).
std::vector<std::string> SupportedOpTypes();
// External dtype for an IR dtype (see HostTensor).
DType ExternalDType(DType ir_dtype);

}  // namespace qairt::exec
