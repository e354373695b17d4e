// Applying an encodings file to a graph: exact name matching with "did you
// mean" suggestions, axis inference where the format stores none, block sizes
// from the tensor shape, 1.0.0 array reordering, validation against the
// tensor, precedence over the model's Q-DQ encodings.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <mutex>
#include <thread>
#include <cstring>

#include "encodings/apply_internal.h"
#include "encodings/encodings.h"
#include "support/shares.h"

namespace qairt::encodings {
namespace {

std::string ShapeString(const Shape& s) { return s.ToString(); }

// Optimal-string-alignment distance, abandoned once it exceeds `max_d`.
size_t EditDistance(std::string_view a, std::string_view b, size_t max_d) {
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > max_d) return max_d + 1;
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t v = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) v = std::min(v, prev2[j - 2] + 1);
      cur[j] = v;
      row_min = std::min(row_min, v);
    }
    if (row_min > max_d) return max_d + 1;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

bool EqualIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> SuggestNames(std::string_view name, const std::vector<std::string_view>& candidates,
                                      size_t max_results) {
  const size_t max_d = std::min<size_t>(5, std::max<size_t>(2, name.size() / 4));
  std::vector<std::pair<size_t, std::string_view>> scored;  // (2 * distance, name)
  for (std::string_view c : candidates) {
    if (c == name) continue;
    if (Trim(c) == Trim(name) || EqualIgnoringCase(c, name)) {
      scored.emplace_back(1, c);  // whitespace or case only: better than any edit
      continue;
    }
    const size_t d = EditDistance(name, c, max_d);
    if (d <= max_d) scored.emplace_back(2 * d, c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < max_results; ++i) out.emplace_back(scored[i].second);
  return out;
}

std::optional<WeightAxes> InferWeightAxes(const Graph& graph, TensorId tensor) {
  if (!graph.valid_tensor(tensor)) return std::nullopt;
  const Tensor& t = graph.tensor(tensor);
  for (const Use& u : t.consumers) {
    const Op& op = graph.op(u.op);
    const std::string who = fmt::format("{} '{}'", op.type, op.name);
    if (u.slot != 1) continue;
    const std::string& ty = op.type;
    if (ty == "Conv1d" || ty == "Conv2d" || ty == "Conv3d" || ty == "DepthWiseConv2d")
      return WeightAxes{0, 1, who};  // ONNX OIHW: output channels first, blocks over input channels
    if (ty == "TransposeConv1d" || ty == "TransposeConv2d" || ty == "TransposeConv3d")
      return WeightAxes{1, 0, who};  // ONNX ConvTranspose weight [C_in, C_out/group, k...]
    if (ty == "FullyConnected") return WeightAxes{0, 1, who};  // [N, K]
    if (ty == "MatMul") {
      if (!t.shape.rank_known() || t.shape.rank() < 2) continue;
      const auto r = static_cast<int32_t>(t.shape.rank());
      bool transposed = false;
      if (auto it = op.attrs.find("transpose_in1"); it != op.attrs.end())
        if (const auto* v = std::get_if<int64_t>(&it->second)) transposed = *v != 0;
      // [.., K, N]: one scale per output column; transposed: [.., N, K].
      return transposed ? WeightAxes{r - 2, r - 1, who} : WeightAxes{r - 1, r - 2, who};
    }
  }
  return std::nullopt;
}

namespace {

class Resolver {
 public:
  Resolver(const File& file, const Entry& entry, const Graph& graph, TensorId tid, Diags* diags)
      : file_(file), entry_(entry), graph_(graph), tid_(tid), t_(graph.tensor(tid)), diags_(diags),
        kind_(entry.encoding.kind) {}

  // `enc` is the entry's encoding (a copy, or the entry's own moved out).
  std::optional<Encoding> Run(Encoding enc);

 private:
  template <typename... Args>
  void Add(Severity sev, const char* code, uint64_t offset, std::string field, fmt::format_string<Args...> format,
           Args&&... args) {
    Diag d;
    d.severity = sev;
    d.code = code;
    d.offset = offset;
    d.tensor = entry_.name;
    d.field = std::move(field);
    d.message = fmt::format(format, std::forward<Args>(args)...);
    file_.Locate(&d);
    if (sev == Severity::kError) ok_ = false;
    diags_->push_back(std::move(d));
  }
  uint64_t FieldOff(std::string_view ir_field) const { return entry_.FieldOffset(ir_field); }

  // Channel axis for a per-channel encoding with `count` scales.
  std::optional<int32_t> ChannelAxis(size_t count, int32_t written);
  bool ResolveBlocks(Encoding* enc);

  const File& file_;
  const Entry& entry_;
  const Graph& graph_;
  TensorId tid_;
  const Tensor& t_;
  Diags* diags_;
  EncodingKind kind_;  // the entry's, kept: Run may be given the entry's encoding moved out
  bool ok_ = true;
};

std::optional<int32_t> Resolver::ChannelAxis(size_t count, int32_t written) {
  const Shape& s = t_.shape;
  if (!s.rank_known()) {
    Add(Severity::kError, "axis-inference", FieldOff("axis"), "axis",
        "the file gives no usable channel axis and the tensor's rank is unknown");
    return std::nullopt;
  }
  const auto rank = static_cast<int32_t>(s.rank());
  if (written < 0 && entry_.negative_axis != 0) {
    const int32_t a = entry_.negative_axis + rank;
    if (a < 0) {
      Add(Severity::kError, "value-range", FieldOff("axis"), "axis", "axis {} is out of range for shape {}",
          entry_.negative_axis, ShapeString(s));
      return std::nullopt;
    }
    return a;
  }
  if (written >= 0) return written;
  // Not in the file: the output channels for the tensor's consumer.
  std::string why;
  int32_t axis = -1;
  if (auto w = InferWeightAxes(graph_, tid_)) {
    axis = w->channel_axis;
    why = fmt::format("output channels of {}", w->consumer);
  } else if (rank == 1) {
    axis = 0;
    why = "the only dim";
  } else if (t_.kind == TensorKind::kStatic) {
    axis = 0;
    why = "a weight's output channels (dim 0)";
  } else {
    axis = rank >= 2 ? 1 : 0;
    why = "an activation's channel dim (NCHW)";
  }
  if (axis >= 0 && axis < rank && s[static_cast<size_t>(axis)].known() &&
      static_cast<size_t>(s[static_cast<size_t>(axis)].value) == count)
    return axis;
  // The expected axis does not fit: accept the single dim that does.
  int32_t match = -1, matches = 0;
  for (int32_t i = 0; i < rank; ++i)
    if (s[static_cast<size_t>(i)].known() && static_cast<size_t>(s[static_cast<size_t>(i)].value) == count)
      match = i, ++matches;
  if (matches == 1 && kind_ != EncodingKind::kArrayOf) {
    Add(Severity::kWarning, "axis-inference", FieldOff("scales"), "axis",
        "{} scales do not match axis {} ({}) of shape {}; using axis {}, the only dim of that size", count, axis, why,
        ShapeString(s), match);
    return match;
  }
  Add(Severity::kError, "axis-inference", FieldOff("scales"), "axis",
      "{} per-channel scales but the file stores no axis and axis {} ({}) of shape {} has {} channels", count, axis,
      why, ShapeString(s), axis < rank && s[static_cast<size_t>(axis)].known() ? s[static_cast<size_t>(axis)].value : -1);
  return std::nullopt;
}

template <typename T>
std::vector<T> Transpose2d(std::span<const T> v, size_t rows, size_t cols) {
  std::vector<T> out(v.size());
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) out[c * rows + r] = v[r * cols + c];
  return out;
}

bool Resolver::ResolveBlocks(Encoding* enc) {
  const Shape& s = t_.shape;
  if (!s.rank_known() || !s.fully_known()) {
    Add(Severity::kError, "shape-mismatch", FieldOff("block_sizes"), "block_size",
        "blockwise encodings need the tensor's full shape, which is {}", ShapeString(s));
    return false;
  }
  const size_t rank = s.rank();
  const std::vector<int64_t> dims = s.extents();
  if (!entry_.grid_shape.empty()) {
    // 2.0.0: the scale grid's shape is written; axis = block axis.
    const auto& g = entry_.grid_shape;
    const char* grid_field = enc->kind == EncodingKind::kLpbq ? "per_block_int_scale" : "y_scale";
    if (g.size() != rank) {
      Add(Severity::kError, "shape-mismatch", FieldOff(enc->kind == EncodingKind::kLpbq ? "block_int_scales" : "scales"),
          grid_field, "has rank {} but the tensor has rank {} {}", g.size(), rank, ShapeString(s));
      return false;
    }
    if (enc->block_sizes.empty()) {
      enc->block_sizes.resize(rank);
      for (size_t i = 0; i < rank; ++i) {
        if (static_cast<int32_t>(i) == enc->axis) {
          enc->block_sizes[i] = entry_.block_size;
          if (g[i] * entry_.block_size != dims[i]) {
            Add(Severity::kError, "shape-mismatch", FieldOff("block_sizes"), "block_size",
                "{} blocks of {} along axis {} do not cover its {} elements (shape {})", g[i], entry_.block_size, i,
                dims[i], ShapeString(s));
            return false;
          }
        } else {
          if (g[i] <= 0 || dims[i] % g[i] != 0) {
            Add(Severity::kError, "shape-mismatch", FieldOff("scales"), fmt::format("{}", grid_field),
                "dim {} of the scale grid {} does not divide dim {} of the tensor {}", g[i],
                fmt::format("[{}]", fmt::join(g, ", ")), i, ShapeString(s));
            return false;
          }
          enc->block_sizes[i] = dims[i] / g[i];
        }
      }
    }
    return true;
  }
  // 1.0.0: flat arrays, no axes. Channel axis = output channels of the consumer.
  auto axes = InferWeightAxes(graph_, tid_);
  if (!axes) {
    if (rank < 2) {
      Add(Severity::kError, "axis-inference", FieldOff("scales"), "block_size",
          "a blockwise encoding needs a tensor of rank >= 2, got {}", ShapeString(s));
      return false;
    }
    axes = WeightAxes{0, 1, ""};
    Add(Severity::kWarning, "axis-inference", FieldOff("block_sizes"), "block_size",
        "the tensor feeds no Conv, TransposeConv, FullyConnected or MatMul: assuming output channels on axis 0 "
        "and blocks along axis 1");
  }
  const auto ca = static_cast<size_t>(axes->channel_axis), ba = static_cast<size_t>(axes->block_axis);
  if (ca >= rank || ba >= rank) {
    Add(Severity::kError, "axis-inference", FieldOff("block_sizes"), "block_size", "shape {} is too small for {}",
        ShapeString(s), axes->consumer);
    return false;
  }
  const int64_t bs = entry_.block_size;
  if (bs <= 0 || dims[ba] % bs != 0) {
    Add(Severity::kError, "shape-mismatch", FieldOff("block_sizes"), "block_size",
        "block size {} does not divide the {} elements of axis {} (shape {})", bs, dims[ba], ba, ShapeString(s));
    return false;
  }
  enc->block_sizes.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) enc->block_sizes[i] = i == ca ? 1 : i == ba ? bs : dims[i];
  enc->axis = static_cast<int32_t>(ba);
  const auto channels = static_cast<size_t>(dims[ca]);
  const auto blocks = static_cast<size_t>(dims[ba] / bs);
  const size_t expected = channels * blocks;
  const size_t got = enc->kind == EncodingKind::kLpbq ? enc->block_int_scales.size() : enc->scales.size();
  if (got != expected) {
    Add(Severity::kError, "shape-mismatch", FieldOff(enc->kind == EncodingKind::kLpbq ? "block_int_scales" : "scales"),
        enc->kind == EncodingKind::kLpbq ? "per_block_int_scale" : "scale",
        "has {} values but {} channels x {} blocks of {} = {} are needed (shape {})", got, channels, blocks, bs,
        expected, ShapeString(s));
    return false;
  }
  // AIMET writes 2-D blockwise arrays ordered (out_channels, in_channels);
  // when the channel axis comes second ([K, N] MatMul weights) the IR's
  // row-major grid is the transpose.
  if (rank == 2 && ca == 1) {
    if (enc->kind == EncodingKind::kLpbq) {
      enc->block_int_scales = Transpose2d<int32_t>(enc->block_int_scales, channels, blocks);
    } else {
      enc->scales = Transpose2d<float>(enc->scales, channels, blocks);
      if (!enc->offsets.empty()) enc->offsets = Transpose2d<int32_t>(enc->offsets, channels, blocks);
    }
  }
  return true;
}

std::optional<Encoding> Resolver::Run(Encoding enc) {
  enc.overridden = true;
  const DType td = t_.dtype;
  if (enc.kind != EncodingKind::kFloat && (IsInteger(td) || td == DType::kBool)) {
    Add(Severity::kError, "not-quantizable", entry_.offset, "",
        "tensor holds {} values (indices, shapes or masks), which are not quantized", DTypeName(td));
    return std::nullopt;
  }
  if (t_.kind == TensorKind::kStatic && IsFixedPoint(td) && t_.encoding) {
    Encoding current = *t_.encoding;
    current.overridden = true;
    if (enc.kind == EncodingKind::kPerChannel && enc.axis < 0) enc.axis = current.axis;  // compare like for like
    if (current != enc) {
      Add(Severity::kError, "overrides-model", entry_.offset, "",
          "the model stores this weight already quantized ({}: {}); an override with another encoding ({}) would "
          "reinterpret its bytes",
          DTypeShortName(td), current.ToString(), enc.ToString());
      return std::nullopt;
    }
  }
  switch (enc.kind) {
    case EncodingKind::kPerChannel: {
      if (enc.axis < 0) {
        auto a = ChannelAxis(enc.scales.size(), enc.axis);
        if (!a) return std::nullopt;
        enc.axis = *a;
      }
      break;
    }
    case EncodingKind::kArrayOf: {
      if (!graph_.FindTensor(enc.index_tensor))
        Add(Severity::kError, "unknown-tensor", FieldOff("index_tensor"), "index_tensor",
            "index tensor '{}' is not a tensor of the graph", enc.index_tensor);
      for (Encoding& sub : enc.sub_encodings) {
        if (sub.kind == EncodingKind::kPerChannel && sub.axis < 0) {
          auto a = ChannelAxis(sub.scales.size(), sub.axis);
          if (!a) return std::nullopt;
          sub.axis = *a;
        }
      }
      break;
    }
    case EncodingKind::kPerBlock:
    case EncodingKind::kLpbq:
      if (!ResolveBlocks(&enc)) return std::nullopt;
      break;
    default:
      break;
  }
  if (!ok_) return std::nullopt;
  // Validated here against the tensor, once: ApplyEncodings then stores it
  // with Graph::SetValidatedEncoding.
  Diagnostics ir;
  if (!ValidateEncoding(enc, t_.name, t_.shape, tid_, &ir)) {
    for (const Diagnostic& d : ir) {
      std::string msg = d.message;
      const std::string prefix = fmt::format("tensor '{}': encoding field '{}': ", t_.name, d.field);
      if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
      Add(Severity::kError, "shape-mismatch", FieldOff(d.field), entry_.JsonField(d.field), "{} (tensor shape {})", msg,
          ShapeString(t_.shape));
    }
    return std::nullopt;
  }
  return enc;
}

}  // namespace

namespace apply_internal {

std::optional<Encoding> Resolve(const File& file, const Entry& entry, Encoding start, const Graph& graph,
                                TensorId tensor, Diags* diags) {
  Resolver r(file, entry, graph, tensor, diags);
  return r.Run(std::move(start));
}

void HandleUnmatched(const File& file, const std::vector<const Entry*>& unmatched,
                     const std::function<Entry(size_t)>& take, const Graph& graph, const ApplyOptions& options,
                     Diags* diags, ApplyStats* stats) {
  if (unmatched.empty()) return;
  stats->unmatched += unmatched.size();
  if (options.unmatched_out) {
    File& later = *options.unmatched_out;
    later.path = file.path;
    later.version = file.version;
    later.version_string = file.version_string;
    later.bare_list = file.bare_list;
    later.source = file.source;
    for (size_t i = 0; i < unmatched.size(); ++i) later.entries.push_back(take(i));
    return;
  }
  // Suggestions: bounded work on huge graphs.
  std::vector<std::string_view> names;
  names.reserve(graph.tensor_count());
  for (TensorId t = 0; t < graph.tensor_count(); ++t) names.push_back(graph.tensor(t).name);
  const size_t budget = std::max<size_t>(3, 4'000'000 / std::max<size_t>(1, names.size()));
  for (size_t i = 0; i < unmatched.size(); ++i) {
    const Entry& e = *unmatched[i];
    Diag d;
    d.severity = options.allow_unmatched ? Severity::kWarning : Severity::kError;
    d.code = "unknown-tensor";
    d.offset = e.offset;
    d.tensor = e.name;
    d.field = "name";
    if (i < budget) {
      auto s = SuggestNames(e.name, names, 1);
      if (!s.empty()) d.suggestion = s[0];
    }
    d.message =
        fmt::format("no tensor named '{}' in graph '{}': the encoding is not applied", e.name, graph.name());
    file.Locate(&d);
    diags->push_back(std::move(d));
  }
}

void NoteReplaced(const File& file, const std::vector<Replaced>& replaced, Diags* diags, ApplyStats* stats) {
  constexpr size_t kShown = 20;
  for (size_t i = 0; i < replaced.size() && i < kShown; ++i) {
    Diag d;
    d.severity = Severity::kNote;
    d.code = "overrides-model";
    d.offset = replaced[i].entry_offset;
    d.tensor = std::string(replaced[i].tensor);
    d.message = fmt::format("replaces the encoding from the model's Q-DQ nodes ({})", replaced[i].previous->ToString());
    file.Locate(&d);
    diags->push_back(std::move(d));
  }
  stats->replaced_model_encodings += replaced.size();
  if (replaced.size() > kShown) {
    Diag d;
    d.severity = Severity::kNote;
    d.code = "overrides-model";
    d.file = file.path;
    d.message = fmt::format("{} encodings from the model's Q-DQ nodes were replaced in all", replaced.size());
    diags->push_back(std::move(d));
  }
}

Result<ApplyStats> Finish(const File& file, const Graph& graph, const ApplyOptions& options, size_t errors_before,
                          ApplyStats stats, Diags* diags) {
  if (options.report_missing) {
    std::vector<std::string_view> missing;
    for (TensorId t = 0; t < graph.tensor_count(); ++t) {
      const Tensor& x = graph.tensor(t);
      if (!x.encoding && (IsFloat(x.dtype) || x.dtype == DType::kUndefined)) missing.push_back(x.name);
    }
    stats.tensors_without_encoding = missing.size();
    if (!missing.empty()) {
      Diag d;
      d.severity = Severity::kNote;
      d.code = "missing-encoding";
      d.file = file.path;
      std::string list;
      for (size_t i = 0; i < missing.size() && i < 10; ++i) list += fmt::format("{}'{}'", i ? ", " : "", missing[i]);
      if (missing.size() > 10) list += fmt::format(", ... ({} more)", missing.size() - 10);
      // What becomes of them is the pipeline's to say (calibration encodes
      // them; without samples --float_fallback encodes the weights; the
      // rest run in float).
      d.message = fmt::format("{} floating-point tensor{} of graph '{}' {} no encoding from the model or this file: {}",
                              missing.size(), missing.size() > 1 ? "s" : "", graph.name(),
                              missing.size() > 1 ? "have" : "has", list);
      diags->push_back(std::move(d));
    }
  }
  const size_t errors = CountErrors(*diags) - errors_before;
  if (errors) {
    std::string msg = fmt::format("{}: {} error{} applying encodings to graph '{}'{}", file.path, errors,
                                  errors > 1 ? "s" : "", graph.name(),
                                  options.keep_going ? "" : " (nothing was applied)");
    size_t shown = 0;
    for (const Diag& d : *diags)
      if (d.severity == Severity::kError && shown++ < 5) msg += "\n  " + d.Format();
    return Status(StatusCode::kValidationFailed, msg);
  }
  return stats;
}

}  // namespace apply_internal

std::optional<Encoding> ResolveEntry(const File& file, const Entry& entry, const Graph& graph, TensorId tensor,
                                     Diags* diags) {
  Diags local;
  return apply_internal::Resolve(file, entry, entry.encoding, graph, tensor, diags ? diags : &local);
}

namespace {

// ApplyEncodings; `movable` is `file` itself when its encodings may be moved
// out, null when they are copied.
Result<ApplyStats> Apply(const File& file, File* movable, Graph* graph, const ApplyOptions& options, Diags* diags) {
  Diags local;
  if (!diags) diags = &local;
  if (!graph) return InvalidArgument("ApplyEncodings: graph is NULL");
  ApplyStats stats;
  const size_t errors_before = CountErrors(*diags);
  // Each entry is checked against its tensor (Resolver: reads the graph
  // only), in chunks on worker threads when there are many. Resolved
  // encodings wait in their entries when the file is the caller's to consume
  // (a side vector of 200k encodings was ~35 MB of fresh pages), else in
  // `own`. Each chunk keeps its diagnostics, appended in file order.
  const size_t n = file.entries.size();
  std::vector<std::string_view> names;
  names.reserve(n);
  for (const Entry& e : file.entries) names.push_back(e.name);
  const unsigned workers = ThreadsFor(options.threads, 4);
  const std::vector<TensorId> ids = graph->FindTensors(names, workers);
  std::vector<Encoding> own(movable ? 0 : n);
  std::vector<uint8_t> resolved(n, 0);
  constexpr size_t kChunk = 4096;
  const size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<Diags> chunk_diags(chunks);
  std::atomic<size_t> next{0};
  std::exception_ptr thrown;  // out of memory on a worker: rethrown here, as without workers
  std::mutex thrown_mutex;
  auto resolve = [&] {
    try {
    for (size_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      for (size_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
        const Entry& e = file.entries[i];
        if (ids[i] == kInvalidId) continue;
        Resolver r(file, e, *graph, ids[i], &chunk_diags[c]);
        // Not `movable ? std::move(a) : b`: with b a const lvalue the
        // conditional is a const prvalue, copied (by some compilers) even from a.
        Encoding start;
        if (movable) {
          start = std::move(movable->entries[i].encoding);
        } else {
          start = e.encoding;
        }
        if (auto enc = r.Run(std::move(start))) {
          (movable ? movable->entries[i].encoding : own[i]) = std::move(*enc);
          resolved[i] = 1;
        }
      }
    }
    } catch (...) {
      next = chunks;
      const std::lock_guard<std::mutex> lock(thrown_mutex);
      if (!thrown) thrown = std::current_exception();
    }
  };
  const unsigned resolvers = static_cast<unsigned>(std::min<size_t>(workers, chunks / 2 + 1));
  std::vector<std::thread> threads;
  try {
    for (unsigned w = 1; w < resolvers; ++w) threads.emplace_back(resolve);
  } catch (...) {  // no thread to be had: this one resolves the rest
  }
  resolve();
  for (std::thread& t : threads) t.join();
  if (thrown) std::rethrow_exception(thrown);
  for (Diags& d : chunk_diags)
    for (Diag& x : d) diags->push_back(std::move(x));
  std::vector<std::pair<TensorId, Encoding*>> pending;
  std::vector<const Entry*> pending_entries;  // what each of `pending` came from
  pending.reserve(n);
  pending_entries.reserve(n);
  std::vector<const Entry*> unmatched;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] == kInvalidId) {
      unmatched.push_back(&file.entries[i]);
    } else if (resolved[i]) {
      pending.emplace_back(ids[i], movable ? &movable->entries[i].encoding : &own[i]);
      pending_entries.push_back(&file.entries[i]);
    } else {
      ++stats.failed;
    }
  }
  // Moved when the file's entries may be (their block tables are the bulk).
  apply_internal::HandleUnmatched(
      file, unmatched,
      [&](size_t i) -> Entry {
        if (movable) return std::move(movable->entries[static_cast<size_t>(unmatched[i] - file.entries.data())]);
        return *unmatched[i];
      },
      *graph, options, diags, &stats);
  const bool failed = CountErrors(*diags) > errors_before;
  if (failed && !options.keep_going) {
    stats.applied = 0;
  } else {
    std::vector<apply_internal::Replaced> replaced;
    for (size_t i = 0; i < pending.size(); ++i) {
      const Tensor& t = graph->tensor(pending[i].first);
      if (t.encoding && !t.encoding->overridden) replaced.push_back({t.name, pending_entries[i]->offset, &*t.encoding});
    }
    apply_internal::NoteReplaced(file, replaced, diags, &stats);
    // All at once (on the workers), or one by one when a tensor is named
    // twice (a File built by hand: the last one wins) or not at all.
    if (graph->SetValidatedEncodings(pending, workers).ok()) {
      stats.applied = pending.size();
    } else {
      for (auto& [id, enc] : pending) {
        Status s = graph->SetValidatedEncoding(id, std::move(*enc));
        if (!s.ok()) {
          Diag d;
          d.code = "invalid-encoding";
          d.tensor = graph->valid_tensor(id) ? graph->tensor(id).name : std::string();
          d.file = file.path;
          d.message = s.message();
          diags->push_back(std::move(d));
          ++stats.failed;
          continue;
        }
        ++stats.applied;
      }
    }
  }
  return apply_internal::Finish(file, *graph, options, errors_before, stats, diags);
}

}  // namespace

Result<ApplyStats> ApplyEncodings(const File& file, Graph* graph, const ApplyOptions& options, Diags* diags) {
  return Apply(file, nullptr, graph, options, diags);
}

Result<ApplyStats> ApplyEncodings(File&& file, Graph* graph, const ApplyOptions& options, Diags* diags) {
  return Apply(file, &file, graph, options, diags);
}

}  // namespace qairt::encodings
