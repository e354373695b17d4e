// The .qairt container writer (see container.h and schema/container.fbs):
// the FlatBuffer holds the graph and metadata; static bytes stream after it
// into the data section, straight from each tensor's StaticData.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>

#include <flatbuffers/flatbuffers.h>

#include "container/container.h"
#include "container/container_generated.h"
#include "container/container_internal.h"
#include "support/atomic_file.h"
#include "support/piece_stream.h"
#include "support/stream_writer.h"

namespace qairt::container {
namespace {

namespace fbc = ::qairt::container::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using internal::CheckMeta;
using internal::ErrorLines;

// ===========================================================================
// Writer
// ===========================================================================

// Whether every value fits in a byte (0..255): OR of the high bits, a loop
// the compiler vectorizes (a negative value has them set).
bool FitByte(const int32_t* v, size_t n) {
  uint32_t high = 0;
  for (size_t i = 0; i < n; ++i) high |= static_cast<uint32_t>(v[i]) & ~uint32_t{0xFF};
  return high == 0;
}

// A generous upper bound of the serialized size, so the 2 GiB FlatBuffers
// limit is refused before the builder could overflow its 32-bit offsets.
uint64_t EncodingBound(const Encoding& e) {
  uint64_t n = 160 + e.index_tensor.size() + 8 * (e.block_sizes.size() + e.scales.size() + e.offsets.size() +
                                                  e.float_offsets.size() + e.block_int_scales.size()) + 40;
  for (const Encoding& s : e.sub_encodings) n += 8 + EncodingBound(s);
  return n;
}

uint64_t SizeBound(const Graph& g, const ContainerMeta& m) {
  uint64_t n = 1024 + g.name().size() + m.producer.size() + m.target.size() + 64;
  n += 8 * (g.inputs().size() + g.outputs().size());
  for (TensorId i = 0; i < g.tensor_count(); ++i) {
    const Tensor& t = g.tensor(i);
    n += 160 + t.name.size() + 24 * t.shape.rank() + 16 * t.consumers.size();
    for (const Dim& d : t.shape.dims()) n += d.symbol.size() + 8;
    if (t.data) n += 32;  // a DataRef: the bytes go to the data section
    if (t.encoding) n += EncodingBound(*t.encoding);
  }
  for (OpId i = 0; i < g.op_count(); ++i) {
    const Op& op = g.op(i);
    n += 160 + op.type.size() + op.name.size() + op.source_name.size() + op.source_op_type.size() +
         8 * (op.inputs.size() + op.outputs.size()) + 16;
    for (const auto& [name, value] : op.attrs) {
      n += 120 + name.size();
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) n += v.size() + 8;
            else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
              for (const std::string& s : v) n += s.size() + 16;
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<double>>) {
              n += 8 * v.size() + 16;
            }
          },
          value);
    }
  }
  for (const ContainerOption& o : m.options) n += 96 + o.key.size() + o.value.size();
  for (const OpAnnotation& a : m.op_annotations) n += 96 + a.op_name.size() + a.kernel.size();
  for (const TensorNote& t : m.tensor_notes) n += 96 + t.tensor_name.size() + t.reasons.size();
  n += 16 + m.stats_summary.size();
  return n;
}

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

class Writer {
 public:
  // `initial`: the size bound, so large weights are never reallocated.
  explicit Writer(size_t initial) : b_(std::max<size_t>(initial, 1024)) { b_.ForceDefaults(true); }

  Offset<fbc::Encoding> WriteEncoding(const Encoding& e) {
    std::vector<Offset<fbc::Encoding>> subs;
    for (const Encoding& s : e.sub_encodings) subs.push_back(WriteEncoding(s));
    auto block_sizes = e.block_sizes.empty() ? 0 : b_.CreateVector(e.block_sizes);
    auto scales = e.scales.empty() ? 0 : b_.CreateVector(e.scales.data(), e.scales.size());
    auto offsets = e.offsets.empty() ? 0 : b_.CreateVector(e.offsets.data(), e.offsets.size());
    auto float_offsets = e.float_offsets.empty() ? 0 : b_.CreateVector(e.float_offsets.data(), e.float_offsets.size());
    // Integer scales that all fit in a byte go in block_int_scales_u8 (a
    // quarter of the bytes, to build, write and read).
    Offset<flatbuffers::Vector<int32_t>> int_scales = 0;
    Offset<flatbuffers::Vector<uint8_t>> int_scales_u8 = 0;
    if (!e.block_int_scales.empty()) {
      const int32_t* v = e.block_int_scales.data();
      const size_t n = e.block_int_scales.size();
      if (FitByte(v, n)) {
        uint8_t* bytes = nullptr;
        int_scales_u8 = b_.CreateUninitializedVector(n, &bytes);
        for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(v[i]);
        byte_int_scales_ = true;
      } else {
        int_scales = b_.CreateVector(e.block_int_scales.data(), e.block_int_scales.size());
      }
    }
    auto index = e.index_tensor.empty() ? 0 : b_.CreateString(e.index_tensor);
    auto sub_vec = subs.empty() ? 0 : b_.CreateVector(subs);
    fbc::EncodingBuilder eb(b_);
    eb.add_kind(static_cast<fbc::EncodingKind>(e.kind));
    eb.add_dtype(static_cast<fbc::DType>(e.dtype));
    eb.add_bitwidth(e.bitwidth);
    eb.add_symmetry(static_cast<fbc::Symmetry>(e.symmetry));
    eb.add_overridden(e.overridden);
    eb.add_axis(e.axis);
    if (!block_sizes.IsNull()) eb.add_block_sizes(block_sizes);
    if (!scales.IsNull()) eb.add_scales(scales);
    if (!offsets.IsNull()) eb.add_offsets(offsets);
    if (!float_offsets.IsNull()) eb.add_float_offsets(float_offsets);
    if (!int_scales.IsNull()) eb.add_block_int_scales(int_scales);
    if (!int_scales_u8.IsNull()) eb.add_block_int_scales_u8(int_scales_u8);
    eb.add_decompressed_bitwidth(e.decompressed_bitwidth);
    if (!index.IsNull()) eb.add_index_tensor(index);
    if (!sub_vec.IsNull()) eb.add_sub_encodings(sub_vec);
    return eb.Finish();
  }

  Offset<fbc::Tensor> WriteTensor(const Tensor& t) {
    auto name = b_.CreateString(t.name);
    std::vector<int64_t> dims;
    bool any_symbol = false;
    for (const Dim& d : t.shape.dims()) {
      dims.push_back(d.value);
      any_symbol = any_symbol || !d.symbol.empty();
    }
    auto dims_vec = dims.empty() ? 0 : b_.CreateVector(dims);
    Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> symbols = 0;
    if (any_symbol) {
      std::vector<Offset<flatbuffers::String>> s;
      for (const Dim& d : t.shape.dims()) s.push_back(b_.CreateString(d.symbol));
      symbols = b_.CreateVector(s);
    }
    std::optional<fbc::DataRef> section;
    if (t.kind == TensorKind::kStatic && t.data) {
      // Tensors sharing their bytes (one StaticData) share their place.
      if (auto it = placed_.find(t.data.get()); it != placed_.end()) {
        section = fbc::DataRef(it->second, t.data->size());
      } else {
        // Aligned so that a mapped file hands out SIMD-friendly weights.
        const uint64_t at = AlignUp(section_bytes_, kSectionEntryAlignment);
        section = fbc::DataRef(at, t.data->size());
        section_.push_back({t.data, at});
        placed_.emplace(t.data.get(), at);
        section_bytes_ = at + t.data->size();
      }
    }
    auto enc = t.encoding ? WriteEncoding(*t.encoding) : 0;
    std::vector<fbc::Use> uses;
    for (const Use& u : t.consumers) uses.emplace_back(u.op, u.slot);
    auto consumers = uses.empty() ? 0 : b_.CreateVectorOfStructs(uses);
    fbc::TensorBuilder tb(b_);
    tb.add_name(name);
    tb.add_dtype(static_cast<fbc::DType>(t.dtype));
    tb.add_kind(t.kind == TensorKind::kInput    ? fbc::TensorKind::Input
                : t.kind == TensorKind::kStatic ? fbc::TensorKind::Static
                                                : fbc::TensorKind::Activation);
    tb.add_is_output(t.is_output);
    tb.add_rank_known(t.shape.rank_known());
    if (!dims_vec.IsNull()) tb.add_dims(dims_vec);
    if (!symbols.IsNull()) tb.add_dim_symbols(symbols);
    if (section) tb.add_section(&*section);
    if (!enc.IsNull()) tb.add_encoding(enc);
    if (!consumers.IsNull()) tb.add_consumers(consumers);
    return tb.Finish();
  }

  Offset<fbc::Attribute> WriteAttribute(const std::string& name, const Attribute& value) {
    auto n = b_.CreateString(name);
    Offset<flatbuffers::String> s = 0;
    Offset<flatbuffers::Vector<int64_t>> ints = 0;
    Offset<flatbuffers::Vector<double>> floats = 0;
    Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strings = 0;
    int64_t i = 0;
    double f = 0;
    fbc::AttrType type = fbc::AttrType::Invalid;
    switch (value.index()) {
      case 0: type = fbc::AttrType::Int; i = std::get<0>(value); break;
      case 1: type = fbc::AttrType::Float; f = std::get<1>(value); break;
      case 2: type = fbc::AttrType::String; s = b_.CreateString(std::get<2>(value)); break;
      case 3: type = fbc::AttrType::Ints; ints = b_.CreateVector(std::get<3>(value)); break;
      case 4: type = fbc::AttrType::Floats; floats = b_.CreateVector(std::get<4>(value)); break;
      case 5: type = fbc::AttrType::Strings; strings = b_.CreateVectorOfStrings(std::get<5>(value)); break;
    }
    fbc::AttributeBuilder ab(b_);
    ab.add_name(n);
    ab.add_type(type);
    ab.add_i(i);
    ab.add_f(f);
    if (!s.IsNull()) ab.add_s(s);
    if (!ints.IsNull()) ab.add_ints(ints);
    if (!floats.IsNull()) ab.add_floats(floats);
    if (!strings.IsNull()) ab.add_strings(strings);
    return ab.Finish();
  }

  Offset<fbc::Op> WriteOp(const Op& op) {
    auto type = b_.CreateString(op.type);
    auto name = b_.CreateString(op.name);
    auto inputs = op.inputs.empty() ? 0 : b_.CreateVector(op.inputs);
    auto outputs = op.outputs.empty() ? 0 : b_.CreateVector(op.outputs);
    std::vector<Offset<fbc::Attribute>> attrs;
    for (const auto& [k, v] : op.attrs) attrs.push_back(WriteAttribute(k, v));
    auto attr_vec = attrs.empty() ? 0 : b_.CreateVector(attrs);
    auto src = op.source_name.empty() ? 0 : b_.CreateString(op.source_name);
    auto src_type = op.source_op_type.empty() ? 0 : b_.CreateString(op.source_op_type);
    fbc::OpBuilder ob(b_);
    ob.add_type(type);
    ob.add_name(name);
    if (!inputs.IsNull()) ob.add_inputs(inputs);
    if (!outputs.IsNull()) ob.add_outputs(outputs);
    if (!attr_vec.IsNull()) ob.add_attributes(attr_vec);
    if (!src.IsNull()) ob.add_source_name(src);
    if (!src_type.IsNull()) ob.add_source_op_type(src_type);
    return ob.Finish();
  }

  void Write(const Graph& g, const ContainerMeta& m) {
    std::vector<Offset<fbc::Tensor>> tensors;
    tensors.reserve(g.tensor_count());
    for (TensorId i = 0; i < g.tensor_count(); ++i) tensors.push_back(WriteTensor(g.tensor(i)));
    std::vector<Offset<fbc::Op>> ops;
    ops.reserve(g.op_count());
    for (OpId i = 0; i < g.op_count(); ++i) ops.push_back(WriteOp(g.op(i)));
    auto gname = b_.CreateString(g.name());
    auto tvec = tensors.empty() ? 0 : b_.CreateVector(tensors);
    auto ovec = ops.empty() ? 0 : b_.CreateVector(ops);
    auto ins = g.inputs().empty() ? 0 : b_.CreateVector(g.inputs());
    auto outs = g.outputs().empty() ? 0 : b_.CreateVector(g.outputs());
    fbc::GraphBuilder gb(b_);
    gb.add_name(gname);
    if (!tvec.IsNull()) gb.add_tensors(tvec);
    if (!ovec.IsNull()) gb.add_ops(ovec);
    if (!ins.IsNull()) gb.add_inputs(ins);
    if (!outs.IsNull()) gb.add_outputs(outs);
    auto graph = gb.Finish();

    std::vector<Offset<fbc::Option>> options;
    for (const ContainerOption& o : m.options)
      options.push_back(fbc::CreateOption(b_, b_.CreateString(o.key), b_.CreateString(o.value),
                                          static_cast<fbc::OptionSource>(o.source)));
    std::vector<Offset<fbc::OpAnnotation>> annotations;
    for (const OpAnnotation& a : m.op_annotations)
      annotations.push_back(fbc::CreateOpAnnotation(b_, b_.CreateString(a.op_name), b_.CreateString(a.kernel),
                                                    a.super_group, a.adapted));
    std::vector<Offset<fbc::TensorNote>> notes;
    for (const TensorNote& n : m.tensor_notes)
      notes.push_back(fbc::CreateTensorNote(b_, b_.CreateString(n.tensor_name), b_.CreateString(n.reasons)));
    const std::string producer = m.producer.empty() ? std::string("qairt ") + QAIRT_VERSION_STRING : m.producer;
    auto prod = b_.CreateString(producer);
    auto target = b_.CreateString(m.target);
    auto stats = m.stats_summary.empty() ? flatbuffers::Offset<flatbuffers::String>() : b_.CreateString(m.stats_summary);
    auto opt_vec = options.empty() ? 0 : b_.CreateVector(options);
    auto ann_vec = annotations.empty() ? 0 : b_.CreateVector(annotations);
    auto note_vec = notes.empty() ? 0 : b_.CreateVector(notes);
    fbc::ContainerBuilder cb(b_);
    cb.add_schema_version(kSchemaVersion);
    // Without static bytes nothing needs the data section: readers of
    // schema 2 read such a file (the trailer is bytes after the buffer).
    cb.add_min_reader_version(byte_int_scales_ ? kMinReaderVersionByteIntScales
                              : section_.empty() ? 1
                                                 : kMinReaderVersion);
    cb.add_producer(prod);
    cb.add_target(target);
    cb.add_graph(graph);
    if (!opt_vec.IsNull()) cb.add_options(opt_vec);
    if (!ann_vec.IsNull()) cb.add_op_annotations(ann_vec);
    if (!note_vec.IsNull()) cb.add_tensor_notes(note_vec);
    if (!stats.IsNull()) cb.add_stats_summary(stats);
    fbc::FinishContainerBuffer(b_, cb.Finish());
  }

  // The whole file in order, as pieces handed to `sink(bytes, size)`: the
  // FlatBuffer, padding, each static tensor's bytes from its StaticData (no
  // copy in between), the trailer. Bytes not made yet (a weight whose
  // quantization was deferred, a transposed view) are made on the way, a
  // piece ahead of the sink, into buffers reused from piece to piece and
  // never kept (StreamPieces): the anonymous memory this needs is two
  // pieces, not the model.
  Status Emit(const std::function<Status(const void*, size_t)>& sink, const FileSink& file_sink) const {
    static constexpr uint8_t kZeros[kDataSectionAlignment] = {};
    const uint64_t fb = b_.GetSize();
    const uint64_t start = AlignUp(fb, kDataSectionAlignment);
    std::vector<StreamPiece> pieces;
    pieces.push_back({b_.GetBufferPointer(), nullptr, 0, static_cast<size_t>(fb)});
    pieces.push_back({kZeros, nullptr, 0, static_cast<size_t>(start - fb)});
    uint64_t at = 0;
    for (const auto& [data, offset] : section_) {
      pieces.push_back({kZeros, nullptr, 0, static_cast<size_t>(offset - at)});
      AddStaticDataPieces(*data, &pieces);
      at = offset + data->size();
    }
    uint8_t trailer[kDataTrailerBytes];
    std::memcpy(trailer, kDataTrailerMagic, 8);
    for (int i = 0; i < 8; ++i) trailer[8 + i] = static_cast<uint8_t>(start >> (8 * i));
    pieces.push_back({trailer, nullptr, 0, sizeof trailer});
    return StreamPieces(pieces, sink, "container", file_sink);
  }

  uint64_t FileBytes() const {
    return AlignUp(b_.GetSize(), kDataSectionAlignment) + section_bytes_ + kDataTrailerBytes;
  }

 private:
  FlatBufferBuilder b_;
  std::vector<std::pair<std::shared_ptr<const StaticData>, uint64_t>> section_;  // bytes, offset in the section
  std::unordered_map<const StaticData*, uint64_t> placed_;                        // where each one's bytes are
  uint64_t section_bytes_ = 0;
  bool byte_int_scales_ = false;  // some encoding's integer scales went in as bytes
};


// Checks, then serializes into `w` (which holds the bytes).
Status Build(const Graph& graph, const ContainerMeta& meta, std::unique_ptr<Writer>* w) {
  const std::string prefix = fmt::format("cannot write graph '{}' as a container: ", graph.name());
  Diagnostics diags = graph.Validate();
  if (HasErrors(diags))
    return Status(StatusCode::kValidationFailed, prefix + "the graph does not validate:" + ErrorLines(diags));
  QAIRT_RETURN_IF_ERROR(CheckMeta(graph, meta, prefix));
  const uint64_t bound = SizeBound(graph, meta);
  if (bound > kMaxContainerBytes)
    return Status(StatusCode::kUnsupported,
                  prefix + fmt::format("it would take up to {} bytes, more than the {} bytes a FlatBuffers container "
                                       "can hold",
                                       bound, kMaxContainerBytes));
  *w = std::make_unique<Writer>(static_cast<size_t>(bound));
  (*w)->Write(graph, meta);
  return Status::Ok();
}

}  // namespace

Result<std::vector<uint8_t>> SerializeContainer(const Graph& graph, const ContainerMeta& meta) {
  std::unique_ptr<Writer> w;
  QAIRT_RETURN_IF_ERROR(Build(graph, meta, &w));
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(w->FileBytes()));
  QAIRT_RETURN_IF_ERROR(w->Emit(
      [&](const void* p, size_t n) {
        out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
        return Status::Ok();
      },
      nullptr));
  return out;
}

Status WriteContainer(const Graph& graph, const ContainerMeta& meta, const std::string& path) {
  if (path.empty()) return InvalidArgument("cannot write the container: the output path is empty");
  std::unique_ptr<Writer> w;
  QAIRT_RETURN_IF_ERROR(Build(graph, meta, &w));
  return WriteFileAtomicallyWith(path, "container", [&](int fd) {
    StreamWriter out(fd, path, "container", w->FileBytes());
    QAIRT_RETURN_IF_ERROR(w->Emit([&](const void* p, size_t n) { return out.Write(p, n); },
                                  [&](const StaticData& d, size_t b, size_t e) { return out.WriteData(d, b, e); }));
    return out.Finish();
  });
}

}  // namespace qairt::container
