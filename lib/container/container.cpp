// The .qairt container reader (see container.h and schema/container.fbs),
// and the metadata checks it shares with the writer. Nothing from a buffer
// is used before the verifier has passed, and no graph is built from a field
// before it has been checked.
#include "container/container.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include <flatbuffers/flatbuffers.h>
#include <flatbuffers/verifier.h>

#include "container/container_generated.h"
#include "container/container_internal.h"

namespace qairt::container {
namespace internal {

// ===========================================================================
// Metadata checks (shared by writer and reader)
// ===========================================================================

Status CheckMeta(const Graph& g, const ContainerMeta& m, const std::string& prefix) {
  auto fail = [&](std::string msg) { return Status(StatusCode::kValidationFailed, prefix + msg); };
  std::map<std::string_view, size_t> keys;
  for (size_t i = 0; i < m.options.size(); ++i) {
    const ContainerOption& o = m.options[i];
    if (o.key.empty()) return fail(fmt::format("options[{}].key is empty", i));
    if (static_cast<uint32_t>(o.source) > static_cast<uint32_t>(OptionSource::kTarget))
      return fail(fmt::format("options[{}] '{}'.source: value {} is not default (0), user (1) or target (2)", i, o.key,
                              static_cast<uint32_t>(o.source)));
    auto [it, inserted] = keys.emplace(o.key, i);
    if (!inserted) return fail(fmt::format("options[{}].key '{}' repeats options[{}]", i, o.key, it->second));
  }
  for (size_t i = 0; i < m.op_annotations.size(); ++i) {
    const OpAnnotation& a = m.op_annotations[i];
    if (!g.FindOp(a.op_name))
      return fail(fmt::format("op_annotations[{}].op_name '{}' is not an op of the graph", i, a.op_name));
    if (a.super_group < -1)
      return fail(fmt::format("op_annotations[{}] '{}'.super_group is {} (an id >= 0, or -1 for none)", i, a.op_name,
                              a.super_group));
  }
  for (size_t i = 0; i < m.tensor_notes.size(); ++i) {
    const TensorNote& n = m.tensor_notes[i];
    if (!g.FindTensor(n.tensor_name))
      return fail(fmt::format("tensor_notes[{}].tensor_name '{}' is not a tensor of the graph", i, n.tensor_name));
  }
  return Status::Ok();
}

std::string ErrorLines(const Diagnostics& diags) {
  std::string out;
  for (const Diagnostic& d : diags)
    if (d.severity == Severity::kError) out += "\n  " + d.message;
  return out;
}

}  // namespace internal

namespace {

namespace fbc = ::qairt::container::fb;
using internal::CheckMeta;
using internal::ErrorLines;

// ===========================================================================
// Reader
// ===========================================================================

template <typename T>
size_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

class Reader {
 public:
  // `section`: the data section (null when the file has none).
  Reader(std::string_view origin, std::shared_ptr<void> keepalive, std::span<const uint8_t> section, bool has_section)
      : prefix_(fmt::format("container '{}': ", origin)),
        keepalive_(std::move(keepalive)),
        section_(section),
        has_section_(has_section) {}

  const std::string& prefix() const { return prefix_; }

  template <typename... Args>
  Status Fail(fmt::format_string<Args...> format, Args&&... args) {
    return Status(StatusCode::kValidationFailed, prefix_ + fmt::format(format, std::forward<Args>(args)...));
  }

  Status Str(const flatbuffers::String* s, const std::string& field, std::string* out) {
    out->clear();
    if (!s) return Status::Ok();
    if (s->size() > kMaxStringBytes)
      return Fail("{} is {} bytes long (limit {})", field, s->size(), kMaxStringBytes);
    if (std::memchr(s->data(), '\0', s->size())) return Fail("{} contains a NUL byte", field);
    out->assign(s->data(), s->size());
    return Status::Ok();
  }

  // The verifier checks a vector's length prefix (4-byte alignment), not
  // 8-byte elements: a corrupt offset could make them misaligned reads.
  template <typename T>
  Status Aligned(const flatbuffers::Vector<T>* v, const std::string& field) {
    if (v && reinterpret_cast<uintptr_t>(v->data()) % alignof(T) != 0)
      return Fail("{} is not {}-byte aligned (corrupt container)", field, alignof(T));
    return Status::Ok();
  }

  Status ReadEncoding(const fbc::Encoding* e, const std::string& field, bool nested, Encoding* out) {
    const auto kind = static_cast<uint32_t>(e->kind());
    if (kind < 1 || kind > 6) return Fail("{}.kind: value {} is not an encoding kind (1..6)", field, kind);
    out->kind = static_cast<EncodingKind>(kind);
    const auto dtype = static_cast<uint32_t>(e->dtype());
    if (!IsValidDType(dtype)) return Fail("{}.dtype: value {} is not a dtype", field, dtype);
    out->dtype = static_cast<DType>(dtype);
    out->bitwidth = e->bitwidth();
    const auto sym = static_cast<uint32_t>(e->symmetry());
    if (sym > 3) return Fail("{}.symmetry: value {} is not a symmetry (0..3)", field, sym);
    out->symmetry = static_cast<Symmetry>(sym);
    out->overridden = e->overridden();
    out->axis = e->axis();
    QAIRT_RETURN_IF_ERROR(Aligned(e->block_sizes(), field + ".block_sizes"));
    if (auto* v = e->block_sizes()) out->block_sizes.assign(v->begin(), v->end());
    if (auto* v = e->scales()) out->scales.assign(v->begin(), v->end());
    if (auto* v = e->offsets()) out->offsets.assign(v->begin(), v->end());
    if (auto* v = e->float_offsets()) out->float_offsets.assign(v->begin(), v->end());
    if (e->block_int_scales() && e->block_int_scales_u8())
      return Fail("{}: block_int_scales and block_int_scales_u8 are both set; a writer sets one", field);
    if (auto* v = e->block_int_scales()) out->block_int_scales.assign(v->begin(), v->end());
    if (auto* v = e->block_int_scales_u8()) out->block_int_scales.assign(v->begin(), v->end());
    out->decompressed_bitwidth = e->decompressed_bitwidth();
    QAIRT_RETURN_IF_ERROR(Str(e->index_tensor(), field + ".index_tensor", &out->index_tensor));
    if (const auto* subs = e->sub_encodings(); subs && subs->size()) {
      if (nested) return Fail("{}.sub_encodings: sub-encodings may not have sub-encodings", field);
      for (uint32_t i = 0; i < subs->size(); ++i) {
        Encoding sub;
        QAIRT_RETURN_IF_ERROR(ReadEncoding(subs->Get(i), fmt::format("{}.sub_encodings[{}]", field, i), true, &sub));
        out->sub_encodings.push_back(std::move(sub));
      }
    }
    return Status::Ok();
  }

  Status ReadAttribute(const fbc::Attribute* a, const std::string& field, std::string* name, Attribute* out) {
    QAIRT_RETURN_IF_ERROR(Str(a->name(), field + ".name", name));
    if (name->empty()) return Fail("{}.name is empty", field);
    const std::string where = fmt::format("{} '{}'", field, *name);
    switch (a->type()) {
      case fbc::AttrType::Int: *out = a->i(); break;
      case fbc::AttrType::Float: *out = a->f(); break;
      case fbc::AttrType::String: {
        std::string s;
        QAIRT_RETURN_IF_ERROR(Str(a->s(), where + ".s", &s));
        *out = std::move(s);
        break;
      }
      case fbc::AttrType::Ints:
        QAIRT_RETURN_IF_ERROR(Aligned(a->ints(), where + ".ints"));
        *out = a->ints() ? std::vector<int64_t>(a->ints()->begin(), a->ints()->end()) : std::vector<int64_t>{};
        break;
      case fbc::AttrType::Floats:
        QAIRT_RETURN_IF_ERROR(Aligned(a->floats(), where + ".floats"));
        *out = a->floats() ? std::vector<double>(a->floats()->begin(), a->floats()->end()) : std::vector<double>{};
        break;
      case fbc::AttrType::Strings: {
        std::vector<std::string> list;
        for (uint32_t i = 0; i < Len(a->strings()); ++i) {
          std::string s;
          QAIRT_RETURN_IF_ERROR(Str(a->strings()->Get(i), fmt::format("{}.strings[{}]", where, i), &s));
          list.push_back(std::move(s));
        }
        *out = std::move(list);
        break;
      }
      default:
        return Fail("{}.type: value {} is not an attribute type (1..6)", where, static_cast<uint32_t>(a->type()));
    }
    return Status::Ok();
  }

  Status ReadGraph(const fbc::Graph& fg, Graph* g) {
    std::string name;
    QAIRT_RETURN_IF_ERROR(Str(fg.name(), "graph.name", &name));
    *g = Graph(std::move(name));
    const size_t n_tensors = Len(fg.tensors());
    const size_t n_ops = Len(fg.ops());
    if (n_tensors >= kInvalidId - 1) return Fail("graph.tensors has {} entries (too many)", n_tensors);
    if (n_ops >= kInvalidId - 1) return Fail("graph.ops has {} entries (too many)", n_ops);

    // ---- tensors ----
    std::vector<TensorId> input_tensors;
    std::vector<TensorId> output_flags;
    for (uint32_t i = 0; i < n_tensors; ++i) {
      const fbc::Tensor* ft = fg.tensors()->Get(i);
      const std::string field = fmt::format("graph.tensors[{}]", i);
      std::string tname;
      QAIRT_RETURN_IF_ERROR(Str(ft->name(), field + ".name", &tname));
      if (tname.empty()) return Fail("{}.name is empty", field);
      const std::string where = fmt::format("{} '{}'", field, tname);
      const auto dtype_value = static_cast<uint32_t>(ft->dtype());
      if (!IsValidDType(dtype_value)) return Fail("{}.dtype: value {} is not a dtype", where, dtype_value);
      const auto dtype = static_cast<DType>(dtype_value);
      const auto kind = static_cast<uint32_t>(ft->kind());
      if (kind > 2) return Fail("{}.kind: value {} is not a tensor kind (0..2)", where, kind);

      QAIRT_RETURN_IF_ERROR(Aligned(ft->dims(), where + ".dims"));
      Shape shape;
      const size_t rank = Len(ft->dims());
      if (ft->dim_symbols() && ft->dim_symbols()->size() != rank)
        return Fail("{}.dim_symbols has {} entries for {} dims", where, ft->dim_symbols()->size(), rank);
      if (ft->rank_known()) {
        std::vector<Dim> dims(rank);
        for (uint32_t d = 0; d < rank; ++d) {
          dims[d].value = ft->dims()->Get(d);
          if (dims[d].value < -1) return Fail("{}.dims[{}] is {} (an extent >= 0, or -1 for unknown)", where, d, dims[d].value);
          if (ft->dim_symbols())
            QAIRT_RETURN_IF_ERROR(
                Str(ft->dim_symbols()->Get(d), fmt::format("{}.dim_symbols[{}]", where, d), &dims[d].symbol));
        }
        shape = Shape(std::move(dims));
      } else if (rank) {
        return Fail("{}: rank_known is false but {} dims are given", where, rank);
      }

      const bool has_data = ft->data() != nullptr || ft->section() != nullptr;
      Result<TensorId> id = TensorId{0};
      if (kind == static_cast<uint32_t>(fbc::TensorKind::Static)) {
        if (!has_data) return Fail("{}.data is missing (static tensors need their bytes)", where);
        if (ft->data() && ft->section()) return Fail("{}: both data and section are given", where);
        if (dtype == DType::kUndefined) return Fail("{}.dtype is undefined (static tensors need a dtype)", where);
        if (!shape.fully_known())
          return Fail("{}.dims: static tensors need a fully known shape, got {}", where, shape.ToString());
        const auto count = shape.element_count();
        const auto bytes = count ? StorageBytes(dtype, *count) : std::nullopt;
        if (!bytes) return Fail("{}.dims: the size of shape {} overflows", where, shape.ToString());
        const uint8_t* src = nullptr;
        uint64_t size = 0;
        if (ft->data()) {
          src = ft->data()->data();
          size = ft->data()->size();
        } else {
          const fbc::DataRef& ref = *ft->section();
          if (!has_section_)
            return Status(StatusCode::kParseError,
                          prefix_ + fmt::format("{}.section: the file has no data section (its trailer is missing: "
                                                "truncated?)",
                                                where));
          if (ref.offset() > section_.size() || ref.size() > section_.size() - ref.offset())
            return Status(StatusCode::kParseError,
                          prefix_ + fmt::format("{}.section [{}, +{}) lies outside the {}-byte data section "
                                                "(truncated or corrupt)",
                                                where, ref.offset(), ref.size(), section_.size()));
          if (ref.offset() % kStaticDataAlignment != 0)
            return Fail("{}.section offset {} is not a multiple of {}", where, ref.offset(), kStaticDataAlignment);
          src = section_.data() + ref.offset();
          size = ref.size();
        }
        const char* bytes_field = ft->data() ? "data" : "section";
        if (*bytes != size)
          return Fail("{}.{} has {} bytes, but dtype {} and shape {} need {}", where, bytes_field, size, DTypeName(dtype),
                      shape.ToString(), *bytes);
        if (ft->is_output()) return Fail("{}.is_output: a static tensor cannot be a graph output", where);
        std::shared_ptr<const StaticData> data;
        if (keepalive_)
          data = std::make_shared<const StaticData>(src, static_cast<size_t>(size), StaticDataOrigin::kMapped,
                                                    keepalive_);
        else
          data = StaticData::Copy(src, static_cast<size_t>(size));
        id = g->AddConstant(tname, dtype, std::move(shape), std::move(data));
      } else {
        if (has_data) return Fail("{}.data: only static tensors have data", where);
        if (kind == static_cast<uint32_t>(fbc::TensorKind::Input)) {
          if (dtype == DType::kUndefined) return Fail("{}.dtype is undefined (graph inputs need a dtype)", where);
          id = g->AddInput(tname, dtype, std::move(shape));
          input_tensors.push_back(i);
        } else {
          id = g->AddTensor(tname, dtype, std::move(shape));
        }
      }
      if (!id.ok()) return Fail("{}: {}", where, id.status().message());
      if (ft->is_output()) output_flags.push_back(i);
    }

    // ---- encodings (after every tensor exists: Array-Of names another) ----
    for (uint32_t i = 0; i < n_tensors; ++i) {
      const fbc::Tensor* ft = fg.tensors()->Get(i);
      if (!ft->encoding()) continue;
      const Tensor& t = g->tensor(i);
      const std::string field = fmt::format("graph.tensors[{}] '{}'.encoding", i, t.name);
      Encoding e;
      QAIRT_RETURN_IF_ERROR(ReadEncoding(ft->encoding(), field, false, &e));
      Diagnostics diags;
      if (!ValidateEncoding(e, t.name, t.shape, i, &diags)) return Fail("{}: {}", field, ErrorLines(diags).substr(3));
      if (Status s = g->SetEncoding(i, std::move(e)); !s.ok()) return Fail("{}: {}", field, s.message());
    }

    // ---- ops: added with absent inputs, so no shape inference rewrites a
    // stored type; the inputs are wired from the tensors' consumer lists,
    // which reproduces every tensor's consumer order. ----
    std::vector<uint32_t> wired_inputs(n_ops, 0);
    size_t present_inputs = 0;
    for (uint32_t i = 0; i < n_ops; ++i) {
      const fbc::Op* fo = fg.ops()->Get(i);
      const std::string field = fmt::format("graph.ops[{}]", i);
      OpSpec spec;
      QAIRT_RETURN_IF_ERROR(Str(fo->type(), field + ".type", &spec.type));
      QAIRT_RETURN_IF_ERROR(Str(fo->name(), field + ".name", &spec.name));
      if (spec.name.empty()) return Fail("{}.name is empty", field);
      const std::string where = fmt::format("{} '{}'", field, spec.name);
      if (spec.type.empty()) return Fail("{}.type is empty", where);
      for (uint32_t s = 0; s < Len(fo->inputs()); ++s) {
        const uint32_t t = fo->inputs()->Get(s);
        if (t != kInvalidId && t >= n_tensors)
          return Fail("{}.inputs[{}]: tensor index {} is out of range ({} tensors)", where, s, t, n_tensors);
        if (t != kInvalidId) ++present_inputs;
      }
      spec.inputs.assign(Len(fo->inputs()), kInvalidId);
      for (uint32_t s = 0; s < Len(fo->outputs()); ++s) {
        const uint32_t t = fo->outputs()->Get(s);
        if (t >= n_tensors)
          return Fail("{}.outputs[{}]: tensor index {} is out of range ({} tensors)", where, s, t, n_tensors);
        spec.outputs.push_back(t);
      }
      std::string previous;
      for (uint32_t a = 0; a < Len(fo->attributes()); ++a) {
        std::string aname;
        Attribute value;
        QAIRT_RETURN_IF_ERROR(ReadAttribute(fo->attributes()->Get(a), fmt::format("{}.attributes[{}]", where, a),
                                            &aname, &value));
        if (a > 0 && !(std::string_view(previous) < std::string_view(aname)))
          return Fail("{}.attributes[{}].name '{}' is repeated or out of order (attributes are sorted by name)",
                      where, a, aname);
        previous = aname;
        spec.attrs.emplace(std::move(aname), std::move(value));
      }
      QAIRT_RETURN_IF_ERROR(Str(fo->source_name(), where + ".source_name", &spec.source_name));
      QAIRT_RETURN_IF_ERROR(Str(fo->source_op_type(), where + ".source_op_type", &spec.source_op_type));
      auto id = g->AddOp(std::move(spec));
      if (!id.ok()) return Fail("{}: {}", where, id.status().message());
    }
    size_t wired = 0;
    for (uint32_t i = 0; i < n_tensors; ++i) {
      const auto* uses = fg.tensors()->Get(i)->consumers();
      for (uint32_t u = 0; u < Len(uses); ++u) {
        const fbc::Use* use = uses->Get(u);
        const std::string field = fmt::format("graph.tensors[{}] '{}'.consumers[{}]", i, g->tensor(i).name, u);
        if (use->op() >= n_ops) return Fail("{}: op index {} is out of range ({} ops)", field, use->op(), n_ops);
        const fbc::Op* fo = fg.ops()->Get(use->op());
        if (use->slot() >= Len(fo->inputs()) || fo->inputs()->Get(use->slot()) != i)
          return Fail("{}: op '{}' does not read this tensor at input {}", field, g->op(use->op()).name, use->slot());
        if (g->op(use->op()).inputs[use->slot()] != kInvalidId)
          return Fail("{}: input {} of op '{}' is listed twice", field, use->slot(), g->op(use->op()).name);
        if (Status s = g->SetOpInput(use->op(), use->slot(), i); !s.ok()) return Fail("{}: {}", field, s.message());
        ++wired;
      }
    }
    if (wired != present_inputs) {
      for (OpId o = 0; o < n_ops; ++o) {
        const fbc::Op* fo = fg.ops()->Get(o);
        for (uint32_t s = 0; s < Len(fo->inputs()); ++s)
          if (fo->inputs()->Get(s) != kInvalidId && g->op(o).inputs[s] == kInvalidId)
            return Fail("graph.ops[{}] '{}'.inputs[{}]: tensor {} does not list this op among its consumers", o,
                        g->op(o).name, s, fo->inputs()->Get(s));
      }
    }

    // ---- graph inputs and outputs ----
    std::vector<TensorId> inputs;
    for (uint32_t i = 0; i < Len(fg.inputs()); ++i) inputs.push_back(fg.inputs()->Get(i));
    if (inputs != input_tensors)
      return Fail("graph.inputs lists {} tensors that are not the {} input tensors in tensor order", inputs.size(),
                  input_tensors.size());
    std::set<TensorId> seen;
    for (uint32_t i = 0; i < Len(fg.outputs()); ++i) {
      const TensorId t = fg.outputs()->Get(i);
      if (t >= n_tensors) return Fail("graph.outputs[{}]: tensor index {} is out of range ({} tensors)", i, t, n_tensors);
      if (!seen.insert(t).second) return Fail("graph.outputs[{}]: tensor '{}' is listed twice", i, g->tensor(t).name);
      if (!fg.tensors()->Get(t)->is_output())
        return Fail("graph.outputs[{}]: tensor '{}' is not flagged is_output", i, g->tensor(t).name);
      if (Status s = g->MarkOutput(t); !s.ok()) return Fail("graph.outputs[{}]: {}", i, s.message());
    }
    if (seen.size() != output_flags.size())
      for (TensorId t : output_flags)
        if (!seen.count(t))
          return Fail("graph.tensors[{}] '{}'.is_output is set but graph.outputs does not list it", t,
                      g->tensor(t).name);

    Diagnostics diags = g->Validate();
    if (HasErrors(diags))
      return Status(StatusCode::kValidationFailed, prefix_ + "the graph does not validate:" + ErrorLines(diags));
    return Status::Ok();
  }

  Status ReadMeta(const fbc::Container& c, ContainerMeta* m) {
    QAIRT_RETURN_IF_ERROR(Str(c.producer(), "producer", &m->producer));
    QAIRT_RETURN_IF_ERROR(Str(c.target(), "target", &m->target));
    QAIRT_RETURN_IF_ERROR(Str(c.stats_summary(), "stats_summary", &m->stats_summary));
    for (uint32_t i = 0; i < Len(c.options()); ++i) {
      const fbc::Option* o = c.options()->Get(i);
      ContainerOption opt;
      QAIRT_RETURN_IF_ERROR(Str(o->key(), fmt::format("options[{}].key", i), &opt.key));
      QAIRT_RETURN_IF_ERROR(Str(o->value(), fmt::format("options[{}] '{}'.value", i, opt.key), &opt.value));
      opt.source = static_cast<OptionSource>(static_cast<uint32_t>(o->source()));
      m->options.push_back(std::move(opt));
    }
    for (uint32_t i = 0; i < Len(c.op_annotations()); ++i) {
      const fbc::OpAnnotation* a = c.op_annotations()->Get(i);
      OpAnnotation ann;
      QAIRT_RETURN_IF_ERROR(Str(a->op_name(), fmt::format("op_annotations[{}].op_name", i), &ann.op_name));
      QAIRT_RETURN_IF_ERROR(Str(a->kernel(), fmt::format("op_annotations[{}].kernel", i), &ann.kernel));
      ann.super_group = a->super_group();
      ann.adapted = a->adapted();
      m->op_annotations.push_back(std::move(ann));
    }
    for (uint32_t i = 0; i < Len(c.tensor_notes()); ++i) {
      const fbc::TensorNote* n = c.tensor_notes()->Get(i);
      TensorNote note;
      QAIRT_RETURN_IF_ERROR(Str(n->tensor_name(), fmt::format("tensor_notes[{}].tensor_name", i), &note.tensor_name));
      QAIRT_RETURN_IF_ERROR(Str(n->reasons(), fmt::format("tensor_notes[{}].reasons", i), &note.reasons));
      m->tensor_notes.push_back(std::move(note));
    }
    return Status::Ok();
  }

  Result<LoadedContainer> Read(const fbc::Container& c) {
    LoadedContainer out;
    out.schema_version = c.schema_version();
    out.min_reader_version = c.min_reader_version();
    if (out.min_reader_version > kReaderVersion)
      return Status(StatusCode::kUnsupported,
                    prefix_ + fmt::format("min_reader_version is {}: the container needs a newer qairt (this one "
                                          "reads version {})",
                                          out.min_reader_version, kReaderVersion));
    if (out.min_reader_version == 0) return Fail("min_reader_version must be at least 1");
    if (out.schema_version < out.min_reader_version)
      return Fail("schema_version {} is older than min_reader_version {}", out.schema_version,
                  out.min_reader_version);
    QAIRT_RETURN_IF_ERROR(ReadMeta(c, &out.meta));
    QAIRT_RETURN_IF_ERROR(ReadGraph(*c.graph(), &out.graph));
    QAIRT_RETURN_IF_ERROR(CheckMeta(out.graph, out.meta, prefix_));
    return out;
  }

 private:
  std::string prefix_;
  std::shared_ptr<void> keepalive_;  // non-null: static data borrows from the buffer
  std::span<const uint8_t> section_;
  bool has_section_ = false;
};

Result<LoadedContainer> ReadImpl(const uint8_t* data, size_t size, std::string_view origin,
                                 std::shared_ptr<void> keepalive) {
  auto bad = [&](std::string msg) { return Status(StatusCode::kParseError, fmt::format("container '{}': {}", origin, msg)); };
  // A data section: the FlatBuffer is the part before it.
  std::span<const uint8_t> section;
  bool has_section = false;
  if (size >= kDataTrailerBytes && std::memcmp(data + size - kDataTrailerBytes, kDataTrailerMagic, 8) == 0) {
    uint64_t start = 0;
    for (int i = 0; i < 8; ++i) start |= uint64_t{data[size - 8 + i]} << (8 * i);
    if (start % kDataSectionAlignment != 0 || start == 0 || start > size - kDataTrailerBytes)
      return bad(fmt::format("the data section trailer gives offset {}, not a multiple of {} inside the {}-byte file "
                             "(corrupt)",
                             start, kDataSectionAlignment, size));
    section = {data + start, static_cast<size_t>(size - kDataTrailerBytes - start)};
    has_section = true;
    size = static_cast<size_t>(start);
  }
  // Size first: the verifier asserts on buffers >= 2 GiB.
  if (size > kMaxContainerBytes)
    return bad(fmt::format("{} bytes is larger than the limit of {} bytes", size, kMaxContainerBytes));
  if (size < 8) return bad(fmt::format("{} bytes is too short for a .qairt container (truncated?)", size));
  if (std::memcmp(data + 4, fbc::ContainerIdentifier(), 4) != 0)
    return bad(fmt::format("file identifier (bytes 4..7) is {:02x} {:02x} {:02x} {:02x}, expected '{}' (not a .qairt "
                           "container)",
                           data[4], data[5], data[6], data[7], fbc::ContainerIdentifier()));
  flatbuffers::Verifier verifier(
      data, size, {.max_depth = kMaxVerifierDepth, .max_tables = kMaxVerifierTables, .check_alignment = true});
  if (!fbc::VerifyContainerBuffer(verifier))
    return bad(fmt::format("the FlatBuffers verifier rejected the {} bytes (truncated or corrupt: an offset or length "
                           "points outside the buffer, a required field is missing, or nesting is deeper than {} / "
                           "more than {} tables)",
                           size, kMaxVerifierDepth, kMaxVerifierTables));
  Reader reader(origin, std::move(keepalive), section, has_section);
  return reader.Read(*fbc::GetContainer(data));
}

}  // namespace
std::string_view OptionSourceName(OptionSource s) {
  switch (s) {
    case OptionSource::kDefault: return "default";
    case OptionSource::kUser: return "user";
    case OptionSource::kTarget: return "target";
  }
  return "invalid";
}

bool LooksLikeContainer(std::span<const uint8_t> bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data() + 4, fbc::ContainerIdentifier(), 4) == 0;
}

Result<LoadedContainer> ReadContainer(std::span<const uint8_t> bytes, std::string_view origin) {
  if (bytes.size() < 8 || reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) == 0)
    return ReadImpl(bytes.data(), bytes.size(), origin, nullptr);
  // Scalars are read in place: work on an aligned copy.
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  return ReadImpl(reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size(), origin, nullptr);
}

Result<LoadedContainer> ReadContainerFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Status(StatusCode::kNotFound, fmt::format("container '{}': no such file", path));
  if (!S_ISREG(st.st_mode)) return Status(StatusCode::kIoError, fmt::format("container '{}': not a regular file", path));
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < 8)
    return Status(StatusCode::kParseError,
                  fmt::format("container '{}': {} bytes is too short for a .qairt container (truncated?)", path, size));
  auto mapped = StaticData::MapFile(path, 0, size);
  if (!mapped.ok()) return Status(mapped.status().code(), fmt::format("container '{}': {}", path, mapped.status().message()));
  std::shared_ptr<const StaticData> map = std::move(mapped).value();
  const uint8_t* data = map->data();
  const size_t n = map->size();
  return ReadImpl(data, n, path, std::const_pointer_cast<StaticData>(map));
}

}  // namespace qairt::container
