// Executor: planning (shapes, storage, liveness arena), static tensors,
// quantization simulation, I/O conversion and the run loop.
#include "exec/executor.h"
#include "ir/fused_activation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include "exec/kernel.h"
#include "kernels/common/scalar.h"
#include "kernels/threadpool.h"
#include "quant/quantize.h"

namespace qairt::exec {

// ---- helpers --------------------------------------------------------------------

Store StoreOf(DType d) {
  if (d == DType::kBool) return Store::kBool;
  if (IsInteger(d)) return Store::kI64;
  return Store::kF32;
}

DType ExternalDType(DType d) {
  if (IsFixedPoint(d) || d == DType::kBFloat16 || d == DType::kUndefined) return DType::kFloat32;
  return d;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> s(out_dims.size(), 0);
  const auto st = Strides(dims);
  const size_t off = out_dims.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) s[off + i] = dims[i] == 1 ? 0 : st[i];
  return s;
}

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// fp16 <-> fp32 through the kernels' scalar conversion (kernels/common/scalar.h,
// round to nearest even as F16C does) with the executor's NaN encoding on
// top: a NaN becomes the canonical quiet NaN and a signalling fp16 NaN stays
// signalling, where the kernels keep the payload and quiet it as the F16C
// instructions do. The ONNX importer reads fp16 constants through these too.
uint16_t FloatToHalfBits(float f) {
  if (f != f) return static_cast<uint16_t>(((kernels::BitsOf(f) >> 16) & 0x8000u) | 0x7e00u);
  return kernels::F32ToF16Bits(f);
}

float HalfBitsToFloat(uint16_t h) {
  const float f = kernels::F16BitsToF32(h);
  const bool signalling = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0 && (h & 0x200u) == 0;
  return signalling ? kernels::FloatOf(kernels::BitsOf(f) & ~0x400000u) : f;
}

float HalfRound(float x) { return HalfBitsToFloat(FloatToHalfBits(x)); }

// ---- Ctx --------------------------------------------------------------------------

namespace {
const Attribute* FindAttr(const Op& op, std::string_view name) {
  auto it = op.attrs.find(name);
  return it == op.attrs.end() ? nullptr : &it->second;
}
}  // namespace

int64_t Ctx::Int(std::string_view name, int64_t def) const {
  const Attribute* a = FindAttr(op_, name);
  if (!a) return def;
  if (auto* v = std::get_if<int64_t>(a)) return *v;
  if (auto* d = std::get_if<double>(a)) return static_cast<int64_t>(*d);
  return def;
}
double Ctx::Float(std::string_view name, double def) const {
  const Attribute* a = FindAttr(op_, name);
  if (!a) return def;
  if (auto* v = std::get_if<double>(a)) return *v;
  if (auto* i = std::get_if<int64_t>(a)) return static_cast<double>(*i);
  return def;
}
std::string Ctx::Str(std::string_view name, std::string def) const {
  const Attribute* a = FindAttr(op_, name);
  if (auto* v = a ? std::get_if<std::string>(a) : nullptr) return *v;
  return def;
}
std::vector<int64_t> Ctx::Ints(std::string_view name, std::vector<int64_t> def) const {
  const Attribute* a = FindAttr(op_, name);
  if (!a) return def;
  if (auto* v = std::get_if<std::vector<int64_t>>(a)) return *v;
  if (auto* i = std::get_if<int64_t>(a)) return {*i};
  if (auto* d = std::get_if<std::vector<double>>(a)) {
    std::vector<int64_t> r;
    for (double x : *d) r.push_back(static_cast<int64_t>(x));
    return r;
  }
  return def;
}
std::vector<double> Ctx::Floats(std::string_view name, std::vector<double> def) const {
  const Attribute* a = FindAttr(op_, name);
  if (!a) return def;
  if (auto* v = std::get_if<std::vector<double>>(a)) return *v;
  if (auto* d = std::get_if<double>(a)) return {*d};
  if (auto* i = std::get_if<std::vector<int64_t>>(a)) return std::vector<double>(i->begin(), i->end());
  return def;
}

const float* Ctx::F32(size_t i) {
  const Buf& b = in(i);
  if (b.store == Store::kF32) return b.f();
  auto& s = f_scratch_.emplace_back(static_cast<size_t>(b.count));
  for (int64_t k = 0; k < b.count; ++k)
    s[static_cast<size_t>(k)] = b.store == Store::kI64 ? static_cast<float>(b.i()[k]) : static_cast<float>(b.b()[k]);
  return s.data();
}
const int64_t* Ctx::I64(size_t i) {
  const Buf& b = in(i);
  if (b.store == Store::kI64) return b.i();
  auto& s = i_scratch_.emplace_back(static_cast<size_t>(b.count));
  for (int64_t k = 0; k < b.count; ++k)
    s[static_cast<size_t>(k)] = b.store == Store::kF32 ? static_cast<int64_t>(b.f()[k]) : static_cast<int64_t>(b.b()[k]);
  return s.data();
}

const KernelTable& Kernels() {
  static const KernelTable table = [] {
    KernelTable t;
    RegisterElementwise(&t);
    RegisterConv(&t);
    RegisterMatMul(&t);
    RegisterPool(&t);
    RegisterNorm(&t);
    RegisterResize(&t);
    RegisterData(&t);
    RegisterRecurrent(&t);
    return t;
  }();
  return table;
}

std::vector<std::string> SupportedOpTypes() {
  std::vector<std::string> r;
  for (const auto& [k, v] : Kernels()) r.push_back(k);
  std::sort(r.begin(), r.end());
  return r;
}

// ---- the executor -------------------------------------------------------------------

namespace {

constexpr size_t kAlign = 64;
size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

enum class SimKind : uint8_t { kNone, kFixed, kHalf };

// A tensor stored as quantized values: fixed-point dtype, or a plain integer
// dtype of the same width carrying a fixed-point encoding (what Q-DQ import
// makes of an integer graph input read by a DequantizeLinear).
bool QuantizedStorage(const Tensor& t) {
  if (IsFixedPoint(t.dtype)) return true;
  return IsInteger(t.dtype) && t.encoding && t.encoding->is_fixed_point() &&
         t.encoding->kind != EncodingKind::kArrayOf && DTypeBits(t.dtype) == DTypeBits(t.encoding->dtype);
}
Store TensorStore(const Tensor& t) { return QuantizedStorage(t) ? Store::kF32 : StoreOf(t.dtype); }

struct TensorRt {
  Buf buf;
  bool planned = false;   // lives in the arena
  size_t offset = 0;
  size_t size = 0;
  int64_t first = -1, last = -1;  // op positions
  SimKind sim = SimKind::kNone;
  std::vector<uint8_t> owned;     // converted static data
};

}  // namespace

struct Workspace::Impl {
  std::unique_ptr<uint8_t, AlignedFree> arena;
  size_t arena_size = 0;
  std::vector<uint8_t> qscratch;
  std::vector<float> scratch;
  std::unique_ptr<kernels::ThreadPool> pool;
  uint32_t pool_request = 0;  // the thread count the pool was made for
  // An executor is running in it. Atomic so that a second thread's run is
  // refused like a nested one instead of racing on the arena.
  std::atomic<bool> busy{false};
};

Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
Workspace::~Workspace() = default;
uint64_t Workspace::arena_bytes() const { return impl_->arena_size; }

struct Executor::Impl {
  Graph graph;
  Options options;
  std::vector<OpId> order;
  std::vector<KernelFn> fns;
  std::vector<TensorRt> t;
  std::unique_ptr<uint8_t, AlignedFree> arena;  // own arena (no workspace)
  std::vector<TensorId> planned;                // tensors living in the arena
  const uint8_t* bound_base = nullptr;          // the workspace arena they point into
  PlanStats stats;
  std::vector<DType> in_dtypes, out_dtypes;
  std::vector<std::vector<int64_t>> in_dims, out_dims;
  std::unique_ptr<kernels::ThreadPool> pool;
  std::vector<uint8_t> qscratch;
  std::vector<float> scratch;  // im2col and other per-op temporaries, reused
  std::vector<std::unique_ptr<OpState>> op_state;  // per position in `order`, kept across runs

  Workspace::Impl* ws() const { return options.workspace ? options.workspace->impl_.get() : nullptr; }
  kernels::ThreadPool* Pool() const {
    Workspace::Impl* w = ws();
    return pool ? pool.get() : w ? w->pool.get() : nullptr;
  }
  // Points the planned tensors into the workspace's arena, grown if needed.
  Status BindArena();
  Status Simulate(TensorId id);
  Status Observe(TensorId id, const Observer* observer) const;
  struct Running;
  Status Enter(Running* running);
  std::vector<TensorId> Crossing(size_t position) const;
  Result<std::vector<HostTensor>> Span(size_t from, size_t ops, const Observer* observer, Cut* save);
  Status Prepare();
  Status LoadStatic(TensorId id);
};

namespace {

// Quantize -> dequantize in place; fp16 -> round.
Status SimulateBuf(const Tensor& tensor, SimKind sim, Buf& b, std::vector<uint8_t>* scratch) {
  if (sim == SimKind::kHalf) {
    float* p = b.f();
    for (int64_t k = 0; k < b.count; ++k) p[k] = HalfRound(p[k]);
    return Status::Ok();
  }
  quant::QuantizeOptions qo;
  qo.nonfinite = quant::NonFinitePolicy::kWarnNanAsZero;
  std::vector<std::string> warnings;
  qo.warnings = &warnings;
  return quant::FakeQuantize(tensor.name, b.f(), b.dims, *tensor.encoding, scratch, qo);
}

SimKind SimOf(const Tensor& tensor) {
  if (TensorStore(tensor) != Store::kF32) return SimKind::kNone;
  if (tensor.encoding) {
    const Encoding& e = *tensor.encoding;
    if (e.is_fixed_point() && e.kind != EncodingKind::kFloat && e.kind != EncodingKind::kArrayOf) return SimKind::kFixed;
    if (e.kind == EncodingKind::kFloat && (e.dtype == DType::kFloat16 || e.effective_bitwidth() == 16))
      return SimKind::kHalf;
  }
  if (tensor.dtype == DType::kFloat16) return SimKind::kHalf;
  return SimKind::kNone;
}

// Converts `n` elements of dtype `src` into storage `dst` (of store `store`).
Status ConvertIn(DType src, const uint8_t* p, int64_t n, Store store, void* dst, const std::string& name) {
  auto put = [&](int64_t k, double v) {
    if (store == Store::kF32) static_cast<float*>(dst)[k] = static_cast<float>(v);
    else if (store == Store::kI64) static_cast<int64_t*>(dst)[k] = SaturatingInt64(v);
    else static_cast<uint8_t*>(dst)[k] = v != 0.0;
  };
  switch (src) {
    case DType::kFloat32:
      if (store == Store::kF32) std::memcpy(dst, p, static_cast<size_t>(n) * 4);
      else for (int64_t k = 0; k < n; ++k) { float v; std::memcpy(&v, p + 4 * k, 4); put(k, v); }
      return Status::Ok();
    case DType::kFloat16:
      for (int64_t k = 0; k < n; ++k) { uint16_t h; std::memcpy(&h, p + 2 * k, 2); put(k, HalfBitsToFloat(h)); }
      return Status::Ok();
    case DType::kBFloat16:
      for (int64_t k = 0; k < n; ++k) { uint16_t h; std::memcpy(&h, p + 2 * k, 2); put(k, kernels::BF16BitsToF32(h)); }
      return Status::Ok();
    case DType::kFloat64:
      for (int64_t k = 0; k < n; ++k) { double v; std::memcpy(&v, p + 8 * k, 8); put(k, v); }
      return Status::Ok();
    case DType::kBool:
    case DType::kUInt8:
      for (int64_t k = 0; k < n; ++k) put(k, p[k]);
      return Status::Ok();
    case DType::kInt8:
      for (int64_t k = 0; k < n; ++k) put(k, static_cast<int8_t>(p[k]));
      return Status::Ok();
    case DType::kInt16: case DType::kUInt16: case DType::kInt32: case DType::kUInt32: case DType::kInt64:
    case DType::kUInt64: {
      const uint32_t bytes = DTypeBits(src) / 8;
      const bool sign = IsSigned(src);
      for (int64_t k = 0; k < n; ++k) {
        uint64_t u = 0;
        std::memcpy(&u, p + bytes * k, bytes);
        int64_t v;
        if (bytes < 8 && sign && (u >> (bytes * 8 - 1)) & 1u) v = static_cast<int64_t>(u | (~uint64_t{0} << (bytes * 8)));
        else v = static_cast<int64_t>(u);
        if (store == Store::kI64) static_cast<int64_t*>(dst)[k] = v;
        else put(k, src == DType::kUInt64 ? static_cast<double>(u) : static_cast<double>(v));
      }
      return Status::Ok();
    }
    default:
      return Error(StatusCode::kUnsupported, "tensor '{}': dtype {} is not supported by the executor", name,
                   DTypeName(src));
  }
}

// Storage -> external dtype bytes.
void ConvertOut(const Buf& b, DType dst, uint8_t* out) {
  const int64_t n = b.count;
  auto get = [&](int64_t k) -> double {
    return b.store == Store::kF32 ? b.f()[k] : b.store == Store::kI64 ? static_cast<double>(b.i()[k]) : b.b()[k];
  };
  switch (dst) {
    case DType::kFloat32:
      if (b.store == Store::kF32) std::memcpy(out, b.data, static_cast<size_t>(n) * 4);
      else for (int64_t k = 0; k < n; ++k) { const float v = static_cast<float>(get(k)); std::memcpy(out + 4 * k, &v, 4); }
      return;
    case DType::kFloat16:
      for (int64_t k = 0; k < n; ++k) { const uint16_t h = FloatToHalfBits(static_cast<float>(get(k))); std::memcpy(out + 2 * k, &h, 2); }
      return;
    case DType::kFloat64:
      for (int64_t k = 0; k < n; ++k) { const double v = get(k); std::memcpy(out + 8 * k, &v, 8); }
      return;
    case DType::kBool:
      for (int64_t k = 0; k < n; ++k) out[k] = get(k) != 0.0;
      return;
    default: {
      const uint32_t bytes = DTypeBits(dst) / 8;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t v = b.store == Store::kI64 ? b.i()[k] : SaturatingInt64(get(k));
        std::memcpy(out + bytes * k, &v, bytes);  // little-endian truncation
      }
    }
  }
}

}  // namespace

Status Executor::Impl::Simulate(TensorId id) {
  TensorRt& rt = t[id];
  if (!options.simulate_quantization || rt.sim == SimKind::kNone) return Status::Ok();
  return SimulateBuf(graph.tensor(id), rt.sim, rt.buf, ws() ? &ws()->qscratch : &qscratch);
}

Status Executor::Impl::LoadStatic(TensorId id) {
  const Tensor& tensor = graph.tensor(id);
  TensorRt& rt = t[id];
  if (!tensor.data) return InvalidArgument("static tensor '{}' has no data", tensor.name);
  const StaticData& sd = *tensor.data;
  const auto need = StorageBytes(tensor.dtype, static_cast<uint64_t>(rt.buf.count));
  if (!need || sd.size() < *need)
    return InvalidArgument("static tensor '{}' holds {} bytes but {} {} of shape {} need {}", tensor.name, sd.size(),
                           rt.buf.count, DTypeName(tensor.dtype), tensor.shape.ToString(), need.value_or(0));
  const bool sim_fixed = options.simulate_quantization && rt.sim == SimKind::kFixed;
  // A transposed view read by FullyConnected ops only: their GEMM takes the
  // [K, N] source as it is, and the transpose is never made.
  if (const StaticTransposition* view = sd.transposition();
      view && view->elem == sizeof(float) && tensor.dtype == DType::kFloat32 && !sim_fixed &&
      rt.sim != SimKind::kHalf && rt.buf.rank() == 2 && rt.buf.dims[0] == view->cols &&
      rt.buf.dims[1] == view->rows && !tensor.consumers.empty() &&
      std::all_of(tensor.consumers.begin(), tensor.consumers.end(), [&](const Use& u) {
        return u.slot == 1 && graph.op(u.op).type == "FullyConnected";
      }) &&
      reinterpret_cast<uintptr_t>(view->source->data()) % alignof(float) == 0) {
    rt.buf.data = const_cast<uint8_t*>(view->source->data());
    rt.buf.transposed = true;
    stats.static_borrowed_bytes += sd.size();
    return Status::Ok();
  }
  if (tensor.dtype == DType::kFloat32 && !sim_fixed && rt.sim != SimKind::kHalf &&
      reinterpret_cast<uintptr_t>(sd.data()) % alignof(float) == 0) {
    rt.buf.data = const_cast<uint8_t*>(sd.data());  // read only: kernels never write inputs
    stats.static_borrowed_bytes += sd.size();
    return Status::Ok();
  }
  rt.owned.assign(AlignUp(rt.buf.bytes()) + kAlign, 0);
  void* dst = rt.owned.data();
  if (QuantizedStorage(tensor)) {
    if (!tensor.encoding || !tensor.encoding->is_fixed_point())
      return InvalidArgument("static tensor '{}' is {} but has no fixed-point encoding to dequantize it with",
                             tensor.name, DTypeName(tensor.dtype));
    quant::QuantizeOptions qo;
    Status s = quant::DequantizeTensor(tensor.name, sd.data(), *need, rt.buf.dims, *tensor.encoding,
                                       static_cast<float*>(dst), qo);
    if (!s.ok()) return s;
    rt.buf.data = dst;
    stats.static_copied_bytes += rt.owned.size();
    return Status::Ok();  // already on the grid
  }
  Status s = ConvertIn(tensor.dtype, sd.data(), rt.buf.count, rt.buf.store, dst, tensor.name);
  if (!s.ok()) return s;
  rt.buf.data = dst;
  stats.static_copied_bytes += rt.owned.size();
  return Simulate(id);
}

Status Executor::Impl::Prepare() {
  // A graph read from a file may declare shapes its ops do not compute; the
  // kernels trust the declared shapes, so an invalid graph is refused.
  {
    Diagnostics diags = graph.Validate();
    if (HasErrors(diags)) {
      Diagnostics errors;
      for (const auto& d : diags)
        if (d.severity == Severity::kError) errors.push_back(d);
      return InvalidArgument("graph '{}' does not validate, so it cannot run: {}", graph.name(), JoinMessages(errors));
    }
  }
  auto topo = graph.TopologicalOrder();
  if (!topo.ok()) return topo.status();
  order = topo.value();
  const KernelTable& table = Kernels();
  t.resize(graph.tensor_count());
  for (OpId id : order) {
    const Op& op = graph.op(id);
    if (!table.count(op.type))
      return Error(StatusCode::kUnsupported, "op '{}' of type {} is not supported by the executor", op.name, op.type);
  }
  // Shapes and storage.
  for (TensorId id = 0; id < graph.tensor_count(); ++id) {
    const Tensor& tensor = graph.tensor(id);
    TensorRt& rt = t[id];
    rt.buf.store = TensorStore(tensor);
    rt.sim = IsFusedActivationInput(graph, id) ? SimKind::kNone : SimOf(tensor);
    const bool used = tensor.kind != TensorKind::kActivation || tensor.producer != kInvalidId || tensor.is_output;
    if (!used && tensor.consumers.empty()) continue;
    if (!tensor.shape.fully_known())
      return Error(StatusCode::kUnsupported,
                   "tensor '{}' has shape {} which is not static; fix its dims (-d NAME DIMS / --define_symbol) "
                   "before running", tensor.name, tensor.shape.ToString());
    rt.buf.dims = tensor.shape.extents();
    rt.buf.count = Count(rt.buf.dims);
    if (tensor.dtype == DType::kUndefined)
      return Error(StatusCode::kUnsupported, "tensor '{}' has no dtype", tensor.name);
  }
  // Kernels and liveness.
  fns.resize(order.size());
  op_state.resize(order.size());
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const Op& op = graph.op(order[pos]);
    auto it = table.find(op.type);
    if (it == table.end())
      return Error(StatusCode::kUnsupported, "op '{}' of type {} is not supported by the executor", op.name, op.type);
    fns[pos] = it->second;
    for (TensorId in : op.inputs) {
      if (in == kInvalidId) continue;
      if (!graph.valid_tensor(in)) return InvalidArgument("op '{}' reads tensor id {} which does not exist", op.name, in);
      t[in].last = std::max<int64_t>(t[in].last, static_cast<int64_t>(pos));
    }
    for (TensorId out : op.outputs) {
      if (out == kInvalidId) continue;
      if (!graph.valid_tensor(out)) return InvalidArgument("op '{}' writes tensor id {} which does not exist", op.name, out);
      if (graph.tensor(out).kind != TensorKind::kActivation)
        return InvalidArgument("op '{}' writes tensor '{}' which is not an activation", op.name, graph.tensor(out).name);
      if (t[out].first < 0) t[out].first = static_cast<int64_t>(pos);
      t[out].last = std::max<int64_t>(t[out].last, static_cast<int64_t>(pos));
    }
  }
  const int64_t end = static_cast<int64_t>(order.size());
  for (TensorId in : graph.inputs()) {
    t[in].first = -1;
    t[in].last = end;
  }
  for (TensorId out : graph.outputs()) t[out].last = end;
  // Static tensors.
  for (TensorId id = 0; id < graph.tensor_count(); ++id) {
    const Tensor& tensor = graph.tensor(id);
    if (tensor.kind == TensorKind::kStatic && t[id].last >= 0) {
      Status s = LoadStatic(id);
      if (!s.ok()) return s;
    }
  }
  // Arena: greedy by size (largest first), lowest offset free over the lifetime.
  std::vector<TensorId> planned;
  for (TensorId id = 0; id < graph.tensor_count(); ++id) {
    const Tensor& tensor = graph.tensor(id);
    if (tensor.kind == TensorKind::kStatic) continue;
    if (t[id].first == -1 && tensor.kind == TensorKind::kActivation) {
      if (t[id].last >= 0)
        return InvalidArgument("tensor '{}' is read by an op but no op produces it", tensor.name);
      continue;  // never produced or read
    }
    if (t[id].last < 0 && tensor.kind != TensorKind::kInput) continue;
    t[id].size = AlignUp(std::max<size_t>(t[id].buf.bytes(), 1));
    t[id].planned = true;
    planned.push_back(id);
    stats.unplanned_bytes += t[id].size;
  }
  for (TensorId id : graph.outputs())
    if (graph.tensor(id).kind == TensorKind::kActivation && t[id].first < 0)
      return InvalidArgument("graph output '{}' is not produced by any op", graph.tensor(id).name);
  std::stable_sort(planned.begin(), planned.end(), [&](TensorId a, TensorId b) { return t[a].size > t[b].size; });
  std::vector<TensorId> placed;
  size_t arena_size = 0;
  for (TensorId id : planned) {
    TensorRt& rt = t[id];
    std::vector<std::pair<size_t, size_t>> busy;
    for (TensorId o : placed)
      if (!(t[o].last < rt.first || rt.last < t[o].first)) busy.emplace_back(t[o].offset, t[o].offset + t[o].size);
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + rt.size <= b) break;
      off = std::max(off, e);
    }
    rt.offset = off;
    arena_size = std::max(arena_size, off + rt.size);
    placed.push_back(id);
  }
  stats.arena_bytes = arena_size;
  stats.ops = order.size();
  this->planned = std::move(planned);
  if (!ws()) {
    arena.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, std::max<size_t>(arena_size, kAlign))));
    if (!arena)
      return Status(StatusCode::kOutOfMemory, fmt::format("cannot allocate the {}-byte activation arena", arena_size));
    for (TensorId id : this->planned) t[id].buf.data = arena.get() + t[id].offset;
  }
  // I/O metadata.
  for (TensorId id : graph.inputs()) {
    in_dtypes.push_back(graph.tensor(id).dtype);
    in_dims.push_back(t[id].buf.dims);
  }
  for (TensorId id : graph.outputs()) {
    out_dtypes.push_back(QuantizedStorage(graph.tensor(id)) ? DType::kFloat32 : ExternalDType(graph.tensor(id).dtype));
    out_dims.push_back(t[id].buf.dims);
  }
  const uint32_t threads = options.num_threads;
  if (threads != 1) {
    Workspace::Impl* w = ws();
    if (w && !w->pool) {
      w->pool = std::make_unique<kernels::ThreadPool>(threads);
      w->pool_request = threads;
    }
    if (!w || w->pool_request != threads) pool = std::make_unique<kernels::ThreadPool>(threads);
    options.num_threads = static_cast<uint32_t>(Pool()->size());
  }
  return Status::Ok();
}

Status Executor::Impl::BindArena() {
  Workspace::Impl& w = *ws();
  const size_t need = std::max<size_t>(stats.arena_bytes, kAlign);
  if (w.arena_size < need) {
    w.arena.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, need)));
    w.arena_size = w.arena ? need : 0;
    if (!w.arena)
      return Status(StatusCode::kOutOfMemory, fmt::format("cannot allocate the {}-byte activation arena", need));
  }
  if (bound_base != w.arena.get()) {
    for (TensorId id : planned) t[id].buf.data = w.arena.get() + t[id].offset;
    bound_base = w.arena.get();
  }
  return Status::Ok();
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::Create(const Graph& graph, const Options& options) {
  auto impl = std::make_unique<Impl>();
  impl->graph = graph;
  impl->options = options;
  Status s = impl->Prepare();
  if (!s.ok()) return s;
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

const Graph& Executor::graph() const { return impl_->graph; }
DType Executor::InputDType(size_t i) const { return impl_->in_dtypes.at(i); }
DType Executor::OutputDType(size_t i) const { return impl_->out_dtypes.at(i); }
const std::vector<int64_t>& Executor::InputDims(size_t i) const { return impl_->in_dims.at(i); }
const std::vector<int64_t>& Executor::OutputDims(size_t i) const { return impl_->out_dims.at(i); }
const PlanStats& Executor::stats() const { return impl_->stats; }

const std::vector<OpId>& Executor::order() const { return impl_->order; }

Result<std::vector<HostTensor>> Executor::Run(const std::vector<const void*>& inputs,
                                              const std::vector<size_t>& input_bytes, const Observer* observer) {
  return RunPrefix(inputs, input_bytes, observer, impl_->order.size());
}

Result<std::vector<HostTensor>> Executor::Run(const std::vector<std::vector<uint8_t>>& inputs,
                                              const Observer* observer) {
  return RunPrefix(inputs, observer, impl_->order.size());
}

Result<std::vector<HostTensor>> Executor::RunPrefix(const std::vector<std::vector<uint8_t>>& inputs,
                                                    const Observer* observer, size_t ops, Cut* save) {
  std::vector<const void*> ptrs;
  std::vector<size_t> sizes;
  for (const auto& b : inputs) {
    ptrs.push_back(b.data());
    sizes.push_back(b.size());
  }
  return RunPrefix(ptrs, sizes, observer, ops, save);
}

std::vector<TensorId> Executor::Crossing(size_t position) const { return impl_->Crossing(position); }

std::vector<TensorId> Executor::Impl::Crossing(size_t position) const {
  const Graph& g = graph;
  const int64_t p = static_cast<int64_t>(position);
  std::vector<TensorId> ids;
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const TensorRt& rt = t[id];
    if (g.tensor(id).kind == TensorKind::kStatic || rt.last < p) continue;
    const bool made_before = rt.first >= 0 ? rt.first < p : g.tensor(id).kind == TensorKind::kInput;
    if (made_before) ids.push_back(id);
  }
  return ids;
}

// Runs order() positions [from, ops) on tensors already in place, saving
// `save`'s cut on the way, and returns the outputs when the last op ran.
Result<std::vector<HostTensor>> Executor::Impl::Span(size_t from, size_t ops, const Observer* observer, Cut* save) {
  const Graph& g = graph;
  Workspace::Impl* w = ws();
  const size_t run_ops = std::min(ops, order.size());
  if (save && (save->position < from || save->position > run_ops))
    return InvalidArgument("graph '{}': a cut at op {} is not within the ops run ({} to {})", g.name(),
                           save->position, from, run_ops);
  auto keep = [&] {
    save->ids = Crossing(save->position);
    save->values.resize(save->ids.size());
    for (size_t k = 0; k < save->ids.size(); ++k) {
      const Buf& b = t[save->ids[k]].buf;
      save->values[k].assign(b.b(), b.b() + b.bytes());
    }
  };
  SetGemmThreads(options.num_threads);
  for (size_t pos = from; pos < run_ops; ++pos) {
    if (save && pos == save->position) keep();
    const Op& op = g.op(order[pos]);
    std::vector<const Buf*> in;
    std::vector<Buf*> out;
    for (TensorId id : op.inputs) in.push_back(id == kInvalidId ? nullptr : &t[id].buf);
    for (TensorId id : op.outputs) out.push_back(id == kInvalidId ? nullptr : &t[id].buf);
    uint64_t statics = 0;
    for (size_t i = 0; i < op.inputs.size() && i < 64; ++i)
      if (op.inputs[i] != kInvalidId && g.tensor(op.inputs[i]).kind == TensorKind::kStatic) statics |= uint64_t{1} << i;
    Ctx ctx(op, std::move(in), std::move(out), options.num_threads, Pool(), w ? &w->scratch : &scratch,
            &op_state[pos], statics);
    Status s = fns[pos](ctx);
    if (!s.ok()) return s;
    for (TensorId id : op.outputs) {
      if (id == kInvalidId) continue;
      const bool before = options.observe_unsimulated && observer && *observer;
      if (before) s = Observe(id, observer);
      if (s.ok()) s = Simulate(id);
      if (s.ok() && observer && *observer && !before) s = Observe(id, observer);
      if (!s.ok()) return s;
    }
  }
  if (save && save->position == run_ops) keep();
  std::vector<HostTensor> outs;
  if (run_ops < order.size()) return outs;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const TensorId id = g.outputs()[k];
    const TensorRt& rt = t[id];
    HostTensor h;
    h.name = g.tensor(id).name;
    h.dtype = out_dtypes[k];
    h.dims = rt.buf.dims;
    h.bytes.resize(*StorageBytes(h.dtype, static_cast<uint64_t>(rt.buf.count)));
    ConvertOut(rt.buf, h.dtype, h.bytes.data());
    outs.push_back(std::move(h));
  }
  return outs;
}

Status Executor::Impl::Observe(TensorId id, const Observer* observer) const {
  const TensorRt& rt = t[id];
  ObservedTensor o{id, &graph.tensor(id).name,
                   rt.buf.store == Store::kF32 ? DType::kFloat32 : rt.buf.store == Store::kI64 ? DType::kInt64 : DType::kBool,
                   &rt.buf.dims, rt.buf.data, rt.buf.bytes()};
  return (*observer)(o);
}

// Marks the executor's workspace busy for one run (refusing a second at
// the same time) and points its arena at it.
struct Executor::Impl::Running {
  Workspace::Impl* w = nullptr;
  ~Running() {
    if (w) w->busy = false;
  }
};

Status Executor::Impl::Enter(Running* running) {
  Workspace::Impl* w = ws();
  if (w && w->busy.exchange(true))
    return InvalidArgument(
        "graph '{}': its executor shares a workspace with one that is running; executors sharing a workspace "
        "must run one at a time",
        graph.name());
  running->w = w;
  return w ? BindArena() : Status::Ok();
}

Result<std::vector<HostTensor>> Executor::RunPrefix(const std::vector<const void*>& inputs,
                                                    const std::vector<size_t>& input_bytes, const Observer* observer,
                                                    size_t ops, Cut* save) {
  Impl& m = *impl_;
  const Graph& g = m.graph;
  if (inputs.size() != g.inputs().size() || input_bytes.size() != inputs.size())
    return InvalidArgument("the graph has {} inputs but {} were given", g.inputs().size(), inputs.size());
  Impl::Running running;
  QAIRT_RETURN_IF_ERROR(m.Enter(&running));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorId id = g.inputs()[k];
    const Tensor& tensor = g.tensor(id);
    TensorRt& rt = m.t[id];
    const auto need = StorageBytes(tensor.dtype, static_cast<uint64_t>(rt.buf.count));
    if (!need) return InvalidArgument("input '{}': cannot size dtype {}", tensor.name, DTypeName(tensor.dtype));
    if (input_bytes[k] != *need)
      return InvalidArgument("input '{}' needs {} bytes ({} x {} of shape {}) but {} were given", tensor.name, *need,
                             rt.buf.count, DTypeName(tensor.dtype), tensor.shape.ToString(), input_bytes[k]);
    if (!inputs[k] && *need) return InvalidArgument("input '{}': data pointer is NULL", tensor.name);
    Status s;
    if (QuantizedStorage(tensor)) {
      if (!tensor.encoding || !tensor.encoding->is_fixed_point())
        return InvalidArgument("input '{}' is {} but has no fixed-point encoding", tensor.name, DTypeName(tensor.dtype));
      s = quant::DequantizeTensor(tensor.name, inputs[k], *need, rt.buf.dims, *tensor.encoding, rt.buf.f());
    } else {
      s = ConvertIn(tensor.dtype, static_cast<const uint8_t*>(inputs[k]), rt.buf.count, rt.buf.store, rt.buf.data,
                    tensor.name);
      if (s.ok()) s = m.Simulate(id);
    }
    if (!s.ok()) return s;
  }
  if (observer && *observer && m.options.observe_inputs)
    for (TensorId id : g.inputs())
      if (Status s = m.Observe(id, observer); !s.ok()) return s;
  return m.Span(0, ops, observer, save);
}

Result<std::vector<HostTensor>> Executor::RunFrom(const Cut& from, const Observer* observer, size_t ops, Cut* save) {
  Impl& m = *impl_;
  const Graph& g = m.graph;
  if (m.options.observe_unsimulated)
    return InvalidArgument("graph '{}': a run observing unsimulated values cannot resume from a cut", g.name());
  if (from.position > m.order.size() || from.ids != m.Crossing(from.position) || from.values.size() != from.ids.size())
    return InvalidArgument("graph '{}': the cut at op {} was not saved by an executor of this graph", g.name(),
                           from.position);
  for (size_t k = 0; k < from.ids.size(); ++k)
    if (from.values[k].size() != m.t[from.ids[k]].buf.bytes())
      return InvalidArgument("graph '{}': the cut holds {} bytes for tensor '{}', which has {}", g.name(),
                             from.values[k].size(), g.tensor(from.ids[k]).name, m.t[from.ids[k]].buf.bytes());
  Impl::Running running;
  QAIRT_RETURN_IF_ERROR(m.Enter(&running));
  for (size_t k = 0; k < from.ids.size(); ++k)
    if (!from.values[k].empty()) std::memcpy(m.t[from.ids[k]].buf.data, from.values[k].data(), from.values[k].size());
  if (observer && *observer)
    for (TensorId id : from.ids)
      if (m.options.observe_inputs || g.tensor(id).kind != TensorKind::kInput)
        if (Status s = m.Observe(id, observer); !s.ok()) return s;
  return m.Span(from.position, ops, observer, save);
}

}  // namespace qairt::exec
