#include "encodings/encodings_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "support/json_writer.h"

namespace qairt::encodings {

std::string FormatFloat(float v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string FormatDouble(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {

// A float that must read back as a float literal (float zero points).
std::string FormatFloatLiteral(float v) {
  std::string s = FormatFloat(v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::vector<int64_t> GridOf(const Shape& shape, const Encoding& e) {
  std::vector<int64_t> g;
  if (!shape.fully_known() || e.block_sizes.size() != shape.rank()) return g;
  for (size_t i = 0; i < shape.rank(); ++i) g.push_back(e.block_sizes[i] ? shape[i].value / e.block_sizes[i] : 0);
  return g;
}

void FillFromTensor(const Graph& graph, TensorId id, Entry* e) {
  const Tensor& t = graph.tensor(id);
  e->section = t.kind == TensorKind::kStatic ? Section::kParam : Section::kActivation;
  const Encoding& enc = e->encoding;
  if (enc.kind == EncodingKind::kPerBlock || enc.kind == EncodingKind::kLpbq) {
    e->grid_shape = GridOf(t.shape, enc);
    e->block_size = enc.axis >= 0 && static_cast<size_t>(enc.axis) < enc.block_sizes.size()
                        ? enc.block_sizes[static_cast<size_t>(enc.axis)]
                        : 0;
    if (auto w = InferWeightAxes(graph, id)) e->channel_axis = w->channel_axis;
    else if (e->grid_shape.size() == 2) e->channel_axis = 1 - enc.axis;
  }
}

}  // namespace

namespace {

// A float graph input that processing quantizes on the way in (its only
// consumers are Quantize ops of one encoding), or a float graph output it
// dequantizes from a quantized tensor: the encoding of that quantized side.
// The file gives it to the input or output itself, as an encodings file
// means it (the tensor is quantized; whether the runtime feeds floats is an
// I/O option), so the file applies to the model it came from again.
const Encoding* BoundaryEncoding(const Graph& graph, const Tensor& t) {
  if (t.encoding && t.encoding->kind != EncodingKind::kFloat) return nullptr;
  if (t.kind == TensorKind::kInput && !t.consumers.empty()) {
    const Encoding* found = nullptr;
    for (const Use& u : t.consumers) {
      const Op& op = graph.op(u.op);
      if (op.type != "Quantize" || op.outputs.size() != 1) return nullptr;
      const Tensor& q = graph.tensor(op.outputs[0]);
      if (!q.encoding || !q.encoding->is_fixed_point() || (found && !(*found == *q.encoding))) return nullptr;
      found = &*q.encoding;
    }
    return found;
  }
  if (t.producer != kInvalidId && t.is_output) {
    const Op& op = graph.op(t.producer);
    if (op.type != "Dequantize" || op.inputs.empty()) return nullptr;
    const Tensor& q = graph.tensor(op.inputs[0]);
    return q.encoding && q.encoding->is_fixed_point() ? &*q.encoding : nullptr;
  }
  return nullptr;
}

}  // namespace

std::vector<Entry> CollectEntries(const Graph& graph) {
  std::vector<Entry> out;
  for (TensorId id = 0; id < graph.tensor_count(); ++id) {
    const Tensor& t = graph.tensor(id);
    const Encoding* boundary = BoundaryEncoding(graph, t);
    if (!t.encoding && !boundary) continue;
    Entry e;
    e.name = t.name;
    e.encoding = boundary ? *boundary : *t.encoding;
    FillFromTensor(graph, id, &e);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Entry> EntriesAfterApply(const File& file, const Graph& graph) {
  std::vector<Entry> out;
  out.reserve(file.entries.size());
  for (const Entry& fe : file.entries) {
    Entry e = fe;
    if (auto id = graph.FindTensor(fe.name); id && graph.tensor(*id).encoding) {
      e.encoding = *graph.tensor(*id).encoding;
      e.axis_inferred = false;
      e.negative_axis = 0;
      const Section section = fe.section;
      FillFromTensor(graph, *id, &e);
      if (section != Section::kUnspecified) e.section = section;
    }
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

// Without a model (2.0.0 has no sections): weights are blockwise/per-channel
// or named like parameters.
Section GuessSection(const Entry& e) {
  const auto k = e.encoding.kind;
  if (k == EncodingKind::kPerChannel || k == EncodingKind::kPerBlock || k == EncodingKind::kLpbq) return Section::kParam;
  const std::string& n = e.name;
  for (std::string_view suffix : {".weight", ".bias", "_weight", "_bias"})
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      return Section::kParam;
  return Section::kActivation;
}

class Writer {
 public:
  Writer(const WriteOptions& o, Diags* d) : opt_(o), diags_(d) {}

  Result<std::string> Run(const std::vector<Entry>& entries);

 private:
  template <typename... Args>
  void Add(Severity sev, const Entry& e, std::string field, fmt::format_string<Args...> format, Args&&... args) {
    Diag d;
    d.severity = sev;
    d.code = "format-limit";
    d.file = opt_.output_name;
    d.tensor = e.name;
    d.field = std::move(field);
    d.message = fmt::format(format, std::forward<Args>(args)...);
    if (sev == Severity::kError) ++errors_;
    diags_->push_back(std::move(d));
  }

  // Appends a nested array of `values` with `shape` (row-major).
  template <typename T, typename F>
  void Nested(std::string* out, const CowVector<T>& values, const std::vector<int64_t>& shape, F fmt_value) {
    size_t pos = 0;
    NestedRec(out, std::span<const T>(values), shape, 0, &pos, fmt_value);
  }
  template <typename T, typename F>
  void Nested(std::string* out, const std::vector<T>& values, const std::vector<int64_t>& shape, F fmt_value) {
    size_t pos = 0;
    NestedRec(out, std::span<const T>(values), shape, 0, &pos, fmt_value);
  }
  template <typename T, typename F>
  void NestedRec(std::string* out, std::span<const T> values, const std::vector<int64_t>& shape, size_t dim,
                 size_t* pos, F fmt_value) {
    out->push_back('[');
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (i) out->append(", ");
      if (dim + 1 == shape.size()) {
        out->append(*pos < values.size() ? fmt_value(values[*pos]) : "0");
        ++*pos;
      } else {
        NestedRec(out, values, shape, dim + 1, pos, fmt_value);
      }
    }
    out->push_back(']');
  }
  template <typename T, typename F>
  static std::string Flat(const CowVector<T>& v, F fmt_value) {
    return FlatSpan(std::span<const T>(v), fmt_value);
  }
  template <typename T, typename F>
  static std::string Flat(const std::vector<T>& v, F fmt_value) {
    return FlatSpan(std::span<const T>(v), fmt_value);
  }
  template <typename T, typename F>
  static std::string FlatSpan(std::span<const T> v, F fmt_value) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s += ", ";
      s += fmt_value(v[i]);
    }
    return s + "]";
  }

  static std::string Str(std::string_view s) {
    std::string out;
    AppendJsonString(&out, s);
    return out;
  }
  static std::string F(float v) { return FormatFloat(v); }
  static std::string I(int64_t v) { return std::to_string(v); }

  std::string OutputDType(const Entry& e, const Encoding& enc);
  bool V2(const Entry& e, std::string* out);
  bool V1(const Entry& e, std::string* out);
  bool V061(const Entry& e, std::string* out);

  // Offset on the unsigned grid (0.6.1 / 1.0.0) and is_symmetric.
  std::pair<int64_t, bool> UnsignedGrid(const Encoding& enc, int32_t offset) const {
    const uint32_t bw = enc.effective_bitwidth();
    const bool is_signed = IsSigned(enc.dtype);
    const int64_t half = int64_t{1} << (bw - 1);
    switch (enc.symmetry) {
      case Symmetry::kSymmetric:
        return {is_signed ? -half : offset, true};
      case Symmetry::kStrictSymmetric:
        return {is_signed ? -(half - 1) : offset, true};
      case Symmetry::kUnsignedSymmetric:
        return {offset, true};
      case Symmetry::kAsymmetric:
        break;
    }
    return {is_signed ? int64_t{offset} - half : int64_t{offset}, false};
  }
  // Channel-major flat order for 1.0.0 blockwise arrays.
  template <typename T>
  bool ChannelMajor(const Entry& e, const CowVector<T>& grid_values, std::vector<T>* out, const char* field) {
    return ChannelMajor(e, grid_values.to_vector(), out, field);
  }
  template <typename T>
  bool ChannelMajor(const Entry& e, const std::vector<T>& grid_values, std::vector<T>* out, const char* field) {
    *out = grid_values;
    if (e.grid_shape.empty()) return true;  // read from a 1.0.0 file: already in its order
    const auto& g = e.grid_shape;
    const int32_t block_axis = e.encoding.axis;
    int32_t channel_axis = e.channel_axis;
    if (channel_axis < 0 && g.size() == 2) channel_axis = 1 - block_axis;
    size_t non_trivial = 0;
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] != 1 && static_cast<int32_t>(i) != block_axis && static_cast<int32_t>(i) != channel_axis) ++non_trivial;
    if (non_trivial) {
      Add(Severity::kError, e, field,
          "1.0.0 blockwise encodings have one channel axis and one block axis; this grid {} has more",
          fmt::format("[{}]", fmt::join(g, ", ")));
      return false;
    }
    if (g.size() == 2 && channel_axis == 1) {
      const auto rows = static_cast<size_t>(g[0]), cols = static_cast<size_t>(g[1]);
      for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c) (*out)[c * rows + r] = grid_values[r * cols + c];
    }
    return true;
  }

  WriteOptions opt_;
  Diags* diags_;
  size_t errors_ = 0;
};

std::string Writer::OutputDType(const Entry& e, const Encoding& enc) {
  if (enc.kind == EncodingKind::kFloat) {
    if (enc.dtype == DType::kFloat16) return "float16";
    if (enc.dtype == DType::kFloat32) return "float32";
    Add(Severity::kError, e, "output_dtype", "2.0.0 float entries are float16 or float32, not {}", DTypeName(enc.dtype));
    return "";
  }
  const uint32_t bw = enc.effective_bitwidth();
  if (bw != 2 && bw != 4 && bw != 8 && bw != 16 && bw != 32) {
    Add(Severity::kError, e, "output_dtype", "bitwidth {} has no 2.0.0 output_dtype (int4/8/16/32, uint4/8/16/32)",
        bw);
    return "";
  }
  return fmt::format("{}int{}", IsSigned(enc.dtype) ? "" : "u", bw);
}

bool Writer::V2(const Entry& e, std::string* out) {
  const Encoding& enc = e.encoding;
  const std::string dtype = OutputDType(e, enc);
  if (dtype.empty()) return false;
  std::string s = "{\"name\": " + Str(e.name) + ", \"output_dtype\": \"" + dtype + "\"";
  if (enc.symmetry == Symmetry::kStrictSymmetric)
    Add(Severity::kWarning, e, "output_dtype",
        "2.0.0 has no field for strict symmetry: written as symmetric {} (the grid's range is not kept)", dtype);
  auto zp = [](int32_t o) { return std::to_string(-int64_t{o}); };
  auto any_nonzero = [](std::span<const int32_t> v) {
    for (int32_t x : v)
      if (x) return true;
    return false;
  };
  switch (enc.kind) {
    case EncodingKind::kFloat:
      break;
    case EncodingKind::kPerTensor:
      if (enc.scales.size() != 1) {
        Add(Severity::kError, e, "y_scale", "a per-tensor encoding needs one scale, it has {}", enc.scales.size());
        break;
      }
      s += ", \"y_scale\": " + F(enc.scales[0]);
      if (!enc.offsets.empty() && enc.offsets[0]) s += ", \"y_zero_point\": " + zp(enc.offsets[0]);
      break;
    case EncodingKind::kPerChannel:
      s += ", \"y_scale\": " + Flat(enc.scales, F);
      if (any_nonzero(enc.offsets)) s += ", \"y_zero_point\": " + Flat(enc.offsets, zp);
      if (enc.axis >= 0) {
        s += ", \"axis\": " + I(enc.axis);
      } else if (e.negative_axis) {
        s += ", \"axis\": " + I(e.negative_axis);
      } else {
        Add(Severity::kWarning, e, "axis",
            "the per-channel axis is unknown (the source format does not store it): written without \"axis\"; "
            "give the model (-i) to infer it");
      }
      break;
    case EncodingKind::kPerBlock:
    case EncodingKind::kLpbq: {
      if (e.grid_shape.empty()) {
        Add(Severity::kError, e, "y_scale",
            "2.0.0 blockwise arrays are nested with the tensor's block-grid shape, which the source does not give: "
            "convert with the model (-i MODEL)");
        return false;
      }
      size_t grid = 1;
      for (int64_t d : e.grid_shape) grid *= static_cast<size_t>(d);
      const auto axis = static_cast<size_t>(enc.axis);
      if (enc.kind == EncodingKind::kPerBlock) {
        if (enc.scales.size() != grid) {
          Add(Severity::kError, e, "y_scale", "{} scales for a block grid of {}", enc.scales.size(), grid);
          return false;
        }
        s += ", \"y_scale\": ";
        Nested(&s, enc.scales, e.grid_shape, F);
        if (!enc.float_offsets.empty()) {
          std::vector<float> zps;
          for (float o : enc.float_offsets) zps.push_back(-o);
          s += ", \"y_zero_point\": ";
          Nested(&s, zps, e.grid_shape, FormatFloatLiteral);
        } else if (any_nonzero(enc.offsets)) {
          s += ", \"y_zero_point\": ";
          Nested(&s, enc.offsets, e.grid_shape, zp);
        }
      } else {
        if (enc.decompressed_bitwidth != 2 * enc.effective_bitwidth()) {
          Add(Severity::kError, e, "per_block_int_scale",
              "2.0.0 LPBQ decompresses to twice the bitwidth ({} -> {}); this encoding decompresses to {}",
              enc.effective_bitwidth(), 2 * enc.effective_bitwidth(), enc.decompressed_bitwidth);
          return false;
        }
        std::vector<int64_t> pc_shape = e.grid_shape;
        if (axis < pc_shape.size()) pc_shape[axis] = 1;  // AIMET keeps the singleton block dim
        s += ", \"per_channel_float_scale\": ";
        Nested(&s, enc.scales, pc_shape, F);
        s += ", \"per_block_int_scale\": ";
        Nested(&s, enc.block_int_scales, e.grid_shape, [](int32_t v) { return std::to_string(v); });
      }
      s += ", \"axis\": " + I(enc.axis) + ", \"block_size\": " + I(e.block_size);
      break;
    }
    case EncodingKind::kArrayOf: {
      if (enc.sub_encodings.empty()) {
        Add(Severity::kError, e, "index_tensor", "Array-Of encoding without sub-encodings");
        return false;
      }
      s += ", \"index_tensor\": " + Str(enc.index_tensor);
      std::string scales = "[", zps = "[";
      bool nonzero = false;
      int32_t axis = -1;
      for (size_t i = 0; i < enc.sub_encodings.size(); ++i) {
        const Encoding& sub = enc.sub_encodings[i];
        if (i && sub.scales.size() != enc.sub_encodings[0].scales.size()) {
          Add(Severity::kError, e, "y_scale", "2.0.0 Array-Of sub-encodings must all have the same number of scales");
          return false;
        }
        scales += (i ? ", " : "") + Flat(sub.scales, F);
        std::vector<int32_t> offs = sub.offsets.to_vector();
        offs.resize(sub.scales.size(), 0);
        zps += (i ? ", " : "") + Flat(offs, zp);
        nonzero |= any_nonzero(offs);
        if (sub.kind == EncodingKind::kPerChannel) axis = sub.axis;
      }
      s += ", \"y_scale\": " + scales + "]";
      if (nonzero) s += ", \"y_zero_point\": " + zps + "]";
      if (axis >= 0) s += ", \"axis\": " + I(axis);
      else if (e.negative_axis) s += ", \"axis\": " + I(e.negative_axis);
      break;
    }
  }
  *out += s + "}";
  return true;
}

bool Writer::V1(const Entry& e, std::string* out) {
  const Encoding& enc = e.encoding;
  std::string s = "{\"name\": " + Str(e.name);
  if (enc.kind == EncodingKind::kFloat) {
    const int bw = enc.dtype == DType::kFloat16 ? 16 : enc.dtype == DType::kFloat32 ? 32 : 0;
    if (!bw) {
      Add(Severity::kError, e, "dtype", "1.0.0 FLOAT entries have bw 16 or 32, not {}", DTypeName(enc.dtype));
      return false;
    }
    *out += s + ", \"dtype\": \"FLOAT\", \"enc_type\": \"PER_TENSOR\", \"bw\": " + I(bw) + "}";
    return true;
  }
  if (enc.kind == EncodingKind::kArrayOf) {
    Add(Severity::kError, e, "index_tensor", "1.0.0 cannot hold Array-Of encodings: use 2.0.0");
    return false;
  }
  if (!enc.float_offsets.empty()) {
    Add(Severity::kError, e, "y_zero_point", "1.0.0 offsets are integers: float zero points need 2.0.0");
    return false;
  }
  const uint32_t bw = enc.effective_bitwidth();
  if (enc.kind == EncodingKind::kLpbq) {
    const uint32_t dbw = enc.decompressed_bitwidth;
    std::vector<int32_t> pbis;
    if (!ChannelMajor(e, enc.block_int_scales, &pbis, "per_block_int_scale")) return false;
    std::vector<int64_t> offsets(enc.scales.size(), -(int64_t{1} << (dbw - 1)));
    s += ", \"dtype\": \"INT\", \"enc_type\": \"LPBQ\", \"bw\": " + I(dbw) + ", \"is_sym\": true, \"scale\": " +
         Flat(enc.scales, F) + ", \"offset\": " + Flat(offsets, I) + ", \"block_size\": " + I(e.block_size) +
         ", \"compressed_bw\": " + I(bw) + ", \"per_block_int_scale\": " +
         Flat(pbis, [](int32_t v) { return std::to_string(v); }) + "}";
    *out += s;
    return true;
  }
  const char* type = enc.kind == EncodingKind::kPerTensor    ? "PER_TENSOR"
                     : enc.kind == EncodingKind::kPerChannel ? "PER_CHANNEL"
                                                             : "PER_BLOCK";
  std::vector<float> scales;
  std::vector<int32_t> offs = enc.offsets.to_vector();
  offs.resize(enc.scales.size(), 0);
  if (enc.kind == EncodingKind::kPerBlock) {
    std::vector<int32_t> tmp;
    if (!ChannelMajor(e, enc.scales, &scales, "scale") || !ChannelMajor(e, offs, &tmp, "offset")) return false;
    offs = tmp;
  } else {
    scales = enc.scales.to_vector();
  }
  bool sym = false;
  std::vector<int64_t> offsets_u;
  for (int32_t o : offs) {
    auto [u, is_sym] = UnsignedGrid(enc, o);
    offsets_u.push_back(u);
    sym = is_sym;
  }
  s += std::string(", \"dtype\": \"INT\", \"enc_type\": \"") + type + "\", \"bw\": " + I(bw) +
       ", \"is_sym\": " + (sym ? "true" : "false") + ", \"scale\": " + Flat(scales, F) +
       ", \"offset\": " + Flat(offsets_u, I);
  if (enc.kind == EncodingKind::kPerBlock) s += ", \"block_size\": " + I(e.block_size);
  *out += s + "}";
  return true;
}

bool Writer::V061(const Entry& e, std::string* out) {
  const Encoding& enc = e.encoding;
  if (enc.kind == EncodingKind::kFloat) {
    const int bw = enc.dtype == DType::kFloat16 ? 16 : enc.dtype == DType::kFloat32 ? 32 : 0;
    if (!bw) {
      Add(Severity::kError, e, "dtype", "0.6.1 float entries have bitwidth 16 or 32, not {}", DTypeName(enc.dtype));
      return false;
    }
    *out += Str(e.name) + ": [{\"bitwidth\": " + I(bw) + ", \"dtype\": \"float\"}]";
    return true;
  }
  if (enc.kind != EncodingKind::kPerTensor && enc.kind != EncodingKind::kPerChannel) {
    Add(Severity::kError, e, "", "0.6.1 holds per-tensor and per-channel encodings only, not {}: use {}",
        EncodingKindName(enc.kind), enc.kind == EncodingKind::kArrayOf ? "2.0.0" : "1.0.0 or 2.0.0");
    return false;
  }
  const uint32_t bw = enc.effective_bitwidth();
  const int64_t steps = (int64_t{1} << bw) - 1 - (enc.symmetry == Symmetry::kStrictSymmetric ? 1 : 0);
  std::string s = Str(e.name) + ": [";
  for (size_t i = 0; i < enc.scales.size(); ++i) {
    const int32_t o = i < enc.offsets.size() ? enc.offsets[i] : 0;
    auto [u, sym] = UnsignedGrid(enc, o);
    const double scale = enc.scales[i];
    const double mn = scale * static_cast<double>(u);
    const double mx = scale * static_cast<double>(u + steps);
    s += std::string(i ? ", " : "") + "{\"bitwidth\": " + I(bw) + ", \"dtype\": \"int\", \"is_symmetric\": \"" +
         (sym ? "True" : "False") + "\", \"max\": " + FormatDouble(mx) + ", \"min\": " + FormatDouble(mn) +
         ", \"offset\": " + I(u) + ", \"scale\": " + F(enc.scales[i]) + "}";
  }
  *out += s + "]";
  return true;
}

Result<std::string> Writer::Run(const std::vector<Entry>& entries) {
  std::string out;
  const Version v = opt_.version;
  if (v == Version::kV2_0_0) {
    out = "{\n  \"version\": \"2.0.0\",\n  \"encodings\": [";
    bool first = true;
    for (const Entry& e : entries) {
      std::string one;
      if (!V2(e, &one)) continue;
      out += (first ? "\n    " : ",\n    ") + one;
      first = false;
    }
    out += first ? "]\n}\n" : "\n  ]\n}\n";
  } else if (v == Version::kV1_0_0 || v == Version::kV0_6_1) {
    const bool v1 = v == Version::kV1_0_0;
    out = std::string("{\n  \"version\": \"") + (v1 ? "1.0.0" : "0.6.1") + "\"";
    for (Section sec : {Section::kActivation, Section::kParam}) {
      out += sec == Section::kActivation ? ",\n  \"activation_encodings\": " : ",\n  \"param_encodings\": ";
      out += v1 ? "[" : "{";
      bool first = true;
      for (const Entry& e : entries) {
        Section es = e.section;
        if (es == Section::kUnspecified) es = GuessSection(e);
        if (es != sec) continue;
        std::string one;
        if (!(v1 ? V1(e, &one) : V061(e, &one))) continue;
        out += (first ? "\n    " : ",\n    ") + one;
        first = false;
      }
      out += first ? "" : "\n  ";
      out += v1 ? "]" : "}";
    }
    out += "\n}\n";
  } else {
    return InvalidArgument("encodings writer: choose a version (0.6.1, 1.0.0 or 2.0.0)");
  }
  if (errors_) {
    std::string msg = fmt::format("cannot write encodings as {}: {} entr{} cannot be represented", VersionName(v),
                                  errors_, errors_ > 1 ? "ies" : "y");
    size_t shown = 0;
    for (const Diag& d : *diags_)
      if (d.severity == Severity::kError && d.code == "format-limit" && shown++ < 5)
        msg += fmt::format("\n  tensor '{}': {}", d.tensor, d.message);
    return Status(StatusCode::kUnsupported, msg);
  }
  return out;
}

}  // namespace

Result<std::string> WriteEncodings(const std::vector<Entry>& entries, const WriteOptions& options, Diags* diags) {
  Diags local;
  Writer w(options, diags ? diags : &local);
  return w.Run(entries);
}

}  // namespace qairt::encodings
