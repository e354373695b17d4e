// Internal: what an op kernel of the executor sees.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace qairt::kernels {
class ThreadPool;
}

namespace qairt::exec {

enum class Store : uint8_t { kF32, kI64, kBool };
inline size_t StoreSize(Store s) { return s == Store::kF32 ? 4 : s == Store::kI64 ? 8 : 1; }

// A value computed in double stored as an integer: NaN gives 0, values beyond
// int64's range its nearest end (a plain cast is undefined behaviour there:
// int64 sums that overflow, inf from a float tensor, hostile constants).
inline int64_t SaturatingInt64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;  // 2^63: the first double past INT64_MAX
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}
Store StoreOf(DType d);

struct Buf {
  Store store = Store::kF32;
  std::vector<int64_t> dims;
  int64_t count = 0;
  void* data = nullptr;
  // data holds the [dims[1], dims[0]] transpose of this 2-D tensor: a
  // FullyConnected weight read from the [K, N] source of a transposed view
  // (StaticData::TransposeOf), given only to FullyConnected.
  bool transposed = false;
  const float* f() const { return static_cast<const float*>(data); }
  float* f() { return static_cast<float*>(data); }
  const int64_t* i() const { return static_cast<const int64_t*>(data); }
  int64_t* i() { return static_cast<int64_t*>(data); }
  const uint8_t* b() const { return static_cast<const uint8_t*>(data); }
  uint8_t* b() { return static_cast<uint8_t*>(data); }
  size_t rank() const { return dims.size(); }
  size_t bytes() const { return static_cast<size_t>(count) * StoreSize(store); }
};

// Per-op state an executor keeps across runs (e.g. packed weights).
struct OpState {
  virtual ~OpState() = default;
};

class Ctx {
 public:
  Ctx(const Op& op, std::vector<const Buf*> in, std::vector<Buf*> out, uint32_t threads,
      kernels::ThreadPool* pool, std::vector<float>* scratch = nullptr, std::unique_ptr<OpState>* state = nullptr,
      uint64_t static_inputs = 0)
      : op_(op), in_(std::move(in)), out_(std::move(out)), threads_(threads), pool_(pool), scratch_(scratch),
        state_(state), static_inputs_(static_inputs) {}
  // The op's state across runs of its executor (null: none kept).
  std::unique_ptr<OpState>* state() { return state_; }
  // Input i is a static tensor: its buffer holds the same values every run.
  bool in_static(size_t i) const { return i < 64 && ((static_inputs_ >> i) & 1u); }
  // Float scratch kept by the executor across ops and runs (contents undefined).
  float* Scratch(size_t n) {
    if (!scratch_) scratch_ = &own_scratch_;
    if (scratch_->size() < n) scratch_->resize(n);
    return scratch_->data();
  }
  const Op& op() const { return op_; }
  size_t num_in() const { return in_.size(); }
  bool has_in(size_t i) const { return i < in_.size() && in_[i] != nullptr; }
  const Buf& in(size_t i) const { return *in_[i]; }
  size_t num_out() const { return out_.size(); }
  bool has_out(size_t i) const { return i < out_.size() && out_[i] != nullptr; }
  Buf& out(size_t i) { return *out_[i]; }
  uint32_t threads() const { return threads_; }
  kernels::ThreadPool* pool() const { return pool_; }

  int64_t Int(std::string_view name, int64_t def) const;
  double Float(std::string_view name, double def) const;
  std::string Str(std::string_view name, std::string def) const;
  std::vector<int64_t> Ints(std::string_view name, std::vector<int64_t> def) const;
  std::vector<double> Floats(std::string_view name, std::vector<double> def) const;
  bool Has(std::string_view name) const { return op_.attrs.find(name) != op_.attrs.end(); }

  // Input i as float32 / int64 (converted into scratch when stored otherwise).
  const float* F32(size_t i);
  const int64_t* I64(size_t i);

  template <typename... Args>
  Status Fail(fmt::format_string<Args...> format, Args&&... args) const {
    return Status(StatusCode::kUnsupported, fmt::format("op '{}' ({}): {}", op_.name, op_.type,
                                                        fmt::format(format, std::forward<Args>(args)...)));
  }

 private:
  const Op& op_;
  std::vector<const Buf*> in_;
  std::vector<Buf*> out_;
  uint32_t threads_;
  kernels::ThreadPool* pool_;
  std::vector<float>* scratch_;
  std::unique_ptr<OpState>* state_;
  uint64_t static_inputs_;
  std::vector<float> own_scratch_;
  std::vector<std::vector<float>> f_scratch_;
  std::vector<std::vector<int64_t>> i_scratch_;
};

using KernelFn = Status (*)(Ctx&);
using KernelTable = std::unordered_map<std::string, KernelFn>;

void RegisterElementwise(KernelTable* t);
void RegisterConv(KernelTable* t);
void RegisterMatMul(KernelTable* t);
void RegisterPool(KernelTable* t);
void RegisterNorm(KernelTable* t);
void RegisterResize(KernelTable* t);
void RegisterData(KernelTable* t);
void RegisterRecurrent(KernelTable* t);
const KernelTable& Kernels();

// ---- helpers shared by the kernel files ----------------------------------------

// Row-major C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C.
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
// The transposes of the same product in the exported ONNX op, which decide
// the summation order ONNX Runtime uses and the AVX-512 backend follows (a
// MatMul sees B untransposed even when the executor holds it as [N, K]).
struct GemmView {
  bool trans_a = false;
  bool trans_b = false;
};
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc, GemmView view);
// MLAS's K block for an N-column product (MlasSgemmOperation's StrideK).
int64_t MlasGemmKBlock(int64_t n, int64_t k, bool trans_a);
void SetGemmThreads(uint32_t threads);
// "avx512" (gemm_avx512.cpp), "fma" (gemm_fma.cpp), "openblas" or "portable": see gemm.cpp for the choice.
const char* GemmBackendName();

// Which GEMM Gemm() uses; kAuto = the default choice. For tests and
// benchmarks (QAIRT_EXEC_GEMM=auto|avx512|fma|openblas|portable sets it too).
// Append-only: PackedGemmA records the value of the tile it was packed for.
enum class GemmBackend { kAuto, kAvx512, kOpenBlas, kPortable, kFma };
void SetGemmBackend(GemmBackend backend);
// The SIMD kernels (gemm_avx512.cpp, gemm_fma.cpp; precondition: the host
// supports AVX-512F, resp. AVX2 + FMA3): a product packing A per call, A
// packed once, and a product with A packed (gemm_blocked.h). They sum every
// element in the same order, so they give the same bits; false if their
// packing buffers could not be allocated.
struct BlockedGemm;
const BlockedGemm& Avx512Gemm();
const BlockedGemm& FmaGemm();

// A constant left operand (convolution weights) packed once for the active
// SIMD kernel. PackGemmA returns null when neither SIMD kernel is the active
// backend (callers then use Gemm). m x k = op(A).
struct PackedGemmA;
// PackGemmAIfUseful packs for products of N columns (null for M = 1 or
// N = 1, which Gemm() sends to other kernels).
std::shared_ptr<const PackedGemmA> PackGemmAIfUseful(bool trans_a, int64_t m, int64_t n, int64_t k, const float* a,
                                                     int64_t lda);
std::shared_ptr<const PackedGemmA> PackGemmA(bool trans_a, int64_t m, int64_t k, int64_t kblock, const float* a,
                                             int64_t lda);
// C[M,N] = alpha * A * op(B)[K,N] + beta * C (+ row_bias[i] on row i, after
// the product, as a separate pass would) with A packed; false if out of
// memory or if A was packed for another K block than `kblock`.
bool GemmPackedA(const PackedGemmA& a, bool trans_b, int64_t n, int64_t kblock, float alpha, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc, const float* row_bias = nullptr);
std::vector<int64_t> Strides(const std::vector<int64_t>& dims);
// Advances a row-major multi-index over `dims` by one element (the last
// dimension fastest); past the end it wraps to all zeros.
inline void NextIndex(std::vector<int64_t>* index, const std::vector<int64_t>& dims) {
  for (size_t d = index->size(); d-- > 0;) {
    if (++(*index)[d] < dims[d]) return;
    (*index)[d] = 0;
  }
}
// Strides of `dims` aligned to an output of rank `rank`, 0 on broadcast dims.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out_dims);
int64_t Count(const std::vector<int64_t>& dims);
// A row-major tensor seen around one axis: `outer` slices (the dims before the
// axis), each of `n` (the axis) by `inner` (the dims after it) elements.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
inline AxisSplit SplitAt(const std::vector<int64_t>& dims, size_t axis) {
  AxisSplit s;
  for (size_t i = 0; i < dims.size(); ++i) (i < axis ? s.outer : i == axis ? s.n : s.inner) *= dims[i];
  return s;
}
float HalfRound(float x);  // round to the nearest float16 value (saturating to inf)
uint16_t FloatToHalfBits(float x);
float HalfBitsToFloat(uint16_t h);

}  // namespace qairt::exec
