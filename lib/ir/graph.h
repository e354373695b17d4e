// The intermediate representation: a graph of QNN-style ops over named
// tensors. Tensors and ops live in dense vectors and are referred to by index
// (TensorId / OpId), stable for the graph's lifetime.
//
// Construction is deliberately lenient (like building an ONNX GraphProto):
// argument-level mistakes fail at once, but graph-level consistency (names,
// producers, cycles, dtypes, shapes, encodings) is checked by Validate(),
// which reports every problem in one call so importers of hostile files and
// IDE plugins can show them all.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/diagnostic.h"
#include "ir/dtype.h"
#include "ir/encoding.h"
#include "ir/shape.h"
#include "support/name_index.h"
#include "support/static_data.h"
#include "support/status.h"

namespace qairt {

using TensorId = uint32_t;
using OpId = uint32_t;

// What a shape function sees of one input or computes for one output.
struct TensorType {
  DType dtype = DType::kUndefined;
  Shape shape;
  const StaticData* data = nullptr;  // inputs only: static bytes (e.g. Reshape's shape input)
};

// How the tensor came to be; whether it is a graph output is separate.
enum class TensorKind : uint8_t { kInput, kStatic, kActivation };

// Values equal enum qairt_tensor_role.
enum class TensorRole : uint32_t {
  kInput = 1,        // APP_WRITE
  kOutput = 2,       // APP_READ
  kInputOutput = 3,  // APP_READWRITE
  kStatic = 4,       // STATIC
  kActivation = 5,   // NATIVE
};
std::string_view TensorRoleName(TensorRole r);  // QNN spelling: "APP_WRITE", ...

struct Use {
  OpId op;
  uint32_t slot;
  bool operator==(const Use& o) const { return op == o.op && slot == o.slot; }
};

struct Tensor {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  TensorKind kind = TensorKind::kActivation;
  bool is_output = false;
  OpId producer = kInvalidId;  // first op that declared it as output
  uint32_t producer_slot = 0;
  std::vector<Use> consumers;  // in insertion order
  std::shared_ptr<const StaticData> data;  // static tensors only
  std::optional<Encoding> encoding;

  TensorRole role() const;
};

struct Op {
  std::string type;  // QNN op type name
  std::string name;
  std::vector<TensorId> inputs;  // kInvalidId = absent optional input
  std::vector<TensorId> outputs;
  AttributeMap attrs;
  std::string source_name;     // framework node name
  std::string source_op_type;  // framework op type
};

// How a FullyConnected is written back to ONNX: Gemm(transB=1) for a 2-D
// input, unless it came from a MatMul; otherwise MatMul by the transposed
// weight (then Add for a bias), as a MatMul-sourced one was. The executor
// sums it as ONNX Runtime sums that form (lib/exec/gemm.cpp), so the Q-DQ
// export and the original model both agree with the simulation bit for bit.
inline bool FullyConnectedExportsAsGemm(const Op& op, size_t input_rank) {
  return input_rank == 2 && op.source_op_type != "MatMul";
}

// An average pool over whole planes that came from a GlobalAveragePool is
// written back as one (ONNX Runtime sums the two differently: four
// interleaved partial sums for GlobalAveragePool, left to right for
// AveragePool), and the executor sums it as that op is summed.
inline bool AveragePoolExportsAsGlobal(const Op& op) { return op.source_op_type == "GlobalAveragePool"; }

// Everything needed to add an op.
struct OpSpec {
  std::string type;
  std::string name;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  AttributeMap attrs;
  std::string source_name;
  std::string source_op_type;
};

class Graph {
 public:
  explicit Graph(std::string name = "graph") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  // ---- construction ------------------------------------------------------
  Result<TensorId> AddInput(std::string name, DType dtype, Shape shape);
  // `data` must hold exactly StorageBytes(dtype, elements) bytes when the
  // shape is fully known.
  Result<TensorId> AddConstant(std::string name, DType dtype, Shape shape, std::shared_ptr<const StaticData> data);
  // Declares an activation (dtype/shape may be unknown).
  Result<TensorId> AddTensor(std::string name, DType dtype = DType::kUndefined, Shape shape = Shape());
  // Adds an op whose outputs are existing tensors; infers unknown output
  // dtypes/shapes.
  Result<OpId> AddOp(OpSpec spec);
  // Convenience: creates one activation per output name, then AddOp.
  Result<OpId> AddOp(std::string type, std::string name, std::vector<TensorId> inputs,
                     const std::vector<std::string>& output_names, AttributeMap attrs = {});
  Status MarkOutput(TensorId tensor);
  // Renames a tensor (lookups by the old name stop finding it). A name that
  // is already taken is allowed and reported by Validate().
  Status RenameTensor(TensorId tensor, std::string new_name);
  Status SetOpInput(OpId op, size_t slot, TensorId tensor);
  // Target processing: a tensor's datatype follows its selected kernel
  // (float -> u8, f32 -> f16). Fixed-point and float types are one class for
  // Validate(), integer/bool types are not: changing those is refused.
  Status SetTensorDType(TensorId tensor, DType dtype);
  // Replaces a static tensor's bytes and dtype (quantized/packed weights);
  // `data` must hold exactly StorageBytes(dtype, elements) bytes.
  Status SetStaticData(TensorId tensor, DType dtype, std::shared_ptr<const StaticData> data);
  // `replacement` takes `output`'s place (same position) in the graph outputs.
  Status ReplaceGraphOutput(TensorId output, TensorId replacement);
  // Runs shape inference over all ops in topological order (no-op on cycles).
  void InferShapes();

  // What the graph holds at one moment, to undo the additions made since:
  // an importer lowers a node, evaluates what it emitted and takes it back.
  struct Checkpoint {
    size_t ops = 0;
    size_t tensors = 0;
    size_t inputs = 0;
    size_t outputs = 0;
  };
  Checkpoint Mark() const { return {ops_.size(), tensors_.size(), inputs_.size(), outputs_.size()}; }
  // Removes every op and tensor added since `mark`. Refused (graph unchanged)
  // when an op kept reads or writes a tensor to be removed.
  Status RollBack(const Checkpoint& mark);

  // ---- encodings -----------------------------------------------------------
  // Validates against the tensor; on failure the message names tensor and field.
  Status SetEncoding(TensorId tensor, Encoding encoding);
  // For callers that ran ValidateEncoding(encoding, name, shape) on this
  // tensor already (applying an encodings file: 7.8M block scales are not
  // checked twice). Fails only for an invalid tensor id.
  Status SetValidatedEncoding(TensorId tensor, Encoding encoding);
  // SetValidatedEncoding for many tensors at once, moving each `*encoding`
  // into its tensor, on up to `threads` threads (an encodings file's 200k
  // activations). Ids must be valid and distinct: otherwise nothing changes
  // and the status names the first offender.
  Status SetValidatedEncodings(const std::vector<std::pair<TensorId, Encoding*>>& items, unsigned threads);
  Status ClearEncoding(TensorId tensor);
  // Stores validated encodings from several threads at once (an encodings
  // file applied window by window on the reader's threads). While one
  // exists, nothing else may change the graph; reading it is fine except for
  // the encodings of tensors being exchanged. Exchange may be called from any
  // thread, never for one tensor from two threads at once.
  class EncodingExchange {
   public:
    explicit EncodingExchange(Graph* graph);
    // What a tensor held: its encoding, and the shape SetEncoding checked it
    // against (Validate() skips it while the shape is that one).
    struct Held {
      std::optional<Encoding> encoding;
      std::optional<Shape> checked_for;
    };
    // Stores `encoding` (validated against the tensor by the caller; nullopt
    // clears it) into a valid tensor and returns what the tensor held.
    Held Exchange(TensorId tensor, std::optional<Encoding> encoding);
    // Puts back exactly what Exchange returned for the tensor.
    void Restore(TensorId tensor, Held held);
    // Once every exchanged tensor holds what it held (on one thread, after
    // the others): the graph's version too, as nothing changed.
    void RestoreVersion();

   private:
    Graph* graph_;
    uint64_t version_before_;
  };
  // True when SetEncoding checked the tensor's current encoding against its
  // current shape (Validate() skips it then).
  bool EncodingCheckedForShape(TensorId tensor) const;

  // ---- queries -------------------------------------------------------------
  size_t tensor_count() const { return tensors_.size(); }
  size_t op_count() const { return ops_.size(); }
  const Tensor& tensor(TensorId id) const { return tensors_[id]; }
  const Op& op(OpId id) const { return ops_[id]; }
  bool valid_tensor(TensorId id) const { return id < tensors_.size(); }
  bool valid_op(OpId id) const { return id < ops_.size(); }
  const std::vector<TensorId>& inputs() const { return inputs_; }
  const std::vector<TensorId>& outputs() const { return outputs_; }
  std::optional<TensorId> FindTensor(std::string_view name) const;
  // FindTensor for many names at once (kInvalidId where absent), with the
  // memory latency of the lookups overlapped, on up to `threads` threads
  // when there are many: an encodings file's 200k names.
  std::vector<TensorId> FindTensors(const std::vector<std::string_view>& names, unsigned threads = 1) const;
  std::optional<OpId> FindOp(std::string_view name) const;

  // Kahn's algorithm, ties broken by op insertion order. Fails naming the ops
  // on a cycle.
  Result<std::vector<OpId>> TopologicalOrder() const;

  // Every problem at once.
  Diagnostics Validate() const;
  // Changes whenever the graph does: two graphs (or one graph at two
  // moments) with the same version hold the same ops, tensors, data and
  // encodings, so a check of one holds for the other (a pass that left the
  // graph as it was need not be validated again). Copies keep the version.
  uint64_t version() const { return version_; }

  // Deterministic JSON summary (see qairt_graph_summary_json).
  std::string SummaryJson() const;

  // First structural difference between two graphs, or empty if identical.
  static std::string Diff(const Graph& a, const Graph& b);

 private:
  // What SetValidatedEncoding(s) store for one valid tensor.
  void StoreValidatedEncoding(TensorId tensor, Encoding&& encoding);
  // FindTensors of names[begin, end) into ids[begin, end), on this thread.
  void FindTensorsIn(const std::vector<std::string_view>& names, size_t begin, size_t end, TensorId* ids) const;
  Result<TensorId> NewTensor(std::string name, DType dtype, Shape shape, TensorKind kind);
  // Runs the op's shape function on the current input types. False if the
  // op type is unknown or its arity is wrong (reported by Validate).
  bool ComputeOutputTypes(OpId id, Diagnostics* diags, std::vector<TensorType>* out) const;
  void FillOutputTypes(OpId id);
  void CheckOutputTypes(OpId id, Diagnostics* diags) const;
  auto TensorNames() const {
    return [this](uint32_t id) -> const std::string& { return tensors_[id].name; };
  }
  auto OpNames() const {
    return [this](uint32_t id) -> const std::string& { return ops_[id].name; };
  }

  std::string name_;
  std::vector<Tensor> tensors_;
  static uint64_t NextVersion();  // process-wide, never repeats
  void Touched() { version_ = NextVersion(); }
  uint64_t version_ = NextVersion();
  std::vector<Op> ops_;
  std::vector<TensorId> inputs_;
  std::vector<TensorId> outputs_;
  // Name lookups over the names stored in tensors_/ops_ (first definition
  // wins). Flat: an encodings file applies ~200k names, and rewrites copy
  // graphs.
  NameIndex tensor_by_name_;
  NameIndex op_by_name_;
  // The shape each tensor's encoding was checked against when SetEncoding
  // set it: Validate() checks that encoding again only if the shape has
  // changed since. Passes validate the graph after each other, and an LLM's
  // LPBQ tables hold millions of block scales. Encodings change only through
  // SetEncoding, SetValidatedEncoding and ClearEncoding.
  std::vector<std::optional<Shape>> encoding_checked_for_;
};

}  // namespace qairt
