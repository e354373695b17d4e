// Loading a target descriptor: size and identifier checks, the FlatBuffers
// verifier under explicit limits, then a semantic check of every field while
// copying it into the plain C++ Target. Nothing from the buffer is used before
// the verifier has passed, and nothing from the C++ object before the
// semantic checks have.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>

#include <flatbuffers/idl.h>
#include <fmt/ranges.h>
#include <flatbuffers/verifier.h>

#include "target/builtin_data.h"
#include "ir/op_registry.h"
#include "target/target_descriptor.h"
#include "target_generated.h"

namespace qairt::target {
namespace {

// fmt-formatted error prefixed with the descriptor's origin.
template <typename... Args>
Status Bad(StatusCode code, std::string_view origin, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format("target descriptor '{}': {}", origin,
                                  fmt::format(format, std::forward<Args>(args)...)));
}

class Checker {
 public:
  explicit Checker(std::string_view origin) : origin_(origin) {}

  template <typename... Args>
  Status Fail(fmt::format_string<Args...> format, Args&&... args) {
    return Bad(StatusCode::kValidationFailed, origin_, format, std::forward<Args>(args)...);
  }

  Status String(const flatbuffers::String* s, const std::string& field, bool required, std::string* out) {
    if (!s) {
      if (required) return Fail("{} is required", field);
      out->clear();
      return Status::Ok();
    }
    if (s->size() > kMaxStringBytes) return Fail("{} is {} bytes long (limit {})", field, s->size(), kMaxStringBytes);
    if (std::memchr(s->data(), '\0', s->size())) return Fail("{} contains a NUL byte", field);
    out->assign(s->data(), s->size());
    if (required && out->empty()) return Fail("{} must not be empty", field);
    return Status::Ok();
  }

  template <typename V>
  Status Count(const V* v, const std::string& field, size_t limit) {
    if (v && v->size() > limit) return Fail("{} has {} entries (limit {})", field, v->size(), limit);
    return Status::Ok();
  }

  Status OpName(const flatbuffers::String* s, const std::string& field, std::string* out) {
    QAIRT_RETURN_IF_ERROR(String(s, field, true, out));
    if (!FindOpSchema(*out)) return Fail("{}: unknown op type '{}' (see `qairt ops`)", field, *out);
    return Status::Ok();
  }

  Status DTypeValue(fb::DType d, const std::string& field, DType* out) {
    const auto v = static_cast<uint32_t>(d);
    if (!IsValidDType(v)) return Fail("{}: value {} is not a dtype", field, v);
    *out = static_cast<DType>(v);
    return Status::Ok();
  }

  Status DTypes(const flatbuffers::Vector<fb::DType>* v, const std::string& field, bool required,
                std::vector<DType>* out) {
    QAIRT_RETURN_IF_ERROR(Count(v, field, kMaxListEntries));
    if (required && (!v || v->size() == 0)) return Fail("{} must list at least one dtype", field);
    out->clear();
    if (!v) return Status::Ok();
    for (uint32_t i = 0; i < v->size(); ++i) {
      DType d = DType::kUndefined;
      QAIRT_RETURN_IF_ERROR(DTypeValue(v->Get(i), fmt::format("{}[{}]", field, i), &d));
      if (d == DType::kUndefined) return Fail("{}[{}]: 'und' is not allowed here", field, i);
      if (std::find(out->begin(), out->end(), d) != out->end())
        return Fail("{}[{}]: dtype '{}' is listed twice", field, i, DTypeShortName(d));
      out->push_back(d);
    }
    return Status::Ok();
  }

  Status Slot(const fb::Slot* s, const std::string& field, bool is_input, size_t index, target::Slot* out) {
    if (!s) return Fail("{} is null", field);
    const auto role = static_cast<uint32_t>(s->role());
    if (role > static_cast<uint32_t>(SlotRole::kIndex)) return Fail("{}.role: value {} is out of range", field, role);
    out->role = static_cast<SlotRole>(role);
    if (!is_input && out->role == SlotRole::kBias) return Fail("{}.role: an output cannot be a bias", field);
    if (!is_input && out->role == SlotRole::kWeight) return Fail("{}.role: an output cannot be a weight", field);
    out->optional = s->optional();
    if (!is_input && out->optional) return Fail("{}.optional: outputs cannot be optional", field);
    QAIRT_RETURN_IF_ERROR(DTypes(s->dtypes(), field + ".dtypes", true, &out->dtypes));
    QAIRT_RETURN_IF_ERROR(Count(s->symmetries(), field + ".symmetries", kMaxListEntries));
    if (s->symmetries()) {
      for (uint32_t i = 0; i < s->symmetries()->size(); ++i) {
        const auto v = static_cast<uint32_t>(s->symmetries()->Get(i));
        if (v > 3) return Fail("{}.symmetries[{}]: value {} is out of range", field, i, v);
        out->symmetry_mask |= 1u << v;
      }
    }
    QAIRT_RETURN_IF_ERROR(Count(s->granularities(), field + ".granularities", kMaxListEntries));
    if (s->granularities()) {
      for (uint32_t i = 0; i < s->granularities()->size(); ++i) {
        const auto v = static_cast<uint32_t>(s->granularities()->Get(i));
        if (v < 1 || v > 6) return Fail("{}.granularities[{}]: value {} is out of range", field, i, v);
        out->granularity_mask |= 1u << v;
      }
    }
    out->channel_axis = s->channel_axis();
    if (out->channel_axis < -1 || out->channel_axis > 7)
      return Fail("{}.channel_axis: {} must be -1 (any) or 0..7", field, out->channel_axis);
    out->block_size_min = s->block_size_min();
    out->block_size_multiple = s->block_size_multiple();
    const auto rule = static_cast<uint32_t>(s->scale_rule());
    if (rule > static_cast<uint32_t>(ScaleRule::kSameAsInput))
      return Fail("{}.scale_rule: value {} is out of range", field, rule);
    out->scale_rule = static_cast<ScaleRule>(rule);
    if (out->scale_rule == ScaleRule::kProductOfInputs && (!is_input || index < 2))
      return Fail("{}.scale_rule: product_of_inputs needs an input slot after inputs 0 and 1", field);
    if (out->scale_rule == ScaleRule::kSameAsInput && is_input)
      return Fail("{}.scale_rule: same_as_input applies to output slots only", field);
    if (const fb::ValueRange* r = s->value_range()) {
      if (!std::isfinite(r->min()) || !std::isfinite(r->max()) || !(r->min() < r->max()))
        return Fail("{}.value_range: [{}, {}] must be finite with min < max", field, r->min(), r->max());
      out->has_range = true;
      out->range_min = r->min();
      out->range_max = r->max();
    }
    QAIRT_RETURN_IF_ERROR(Count(s->fixed_encodings(), field + ".fixed_encodings", kMaxListEntries));
    if (s->fixed_encodings()) {
      for (uint32_t i = 0; i < s->fixed_encodings()->size(); ++i) {
        const fb::FixedEncoding* e = s->fixed_encodings()->Get(i);
        const std::string f = fmt::format("{}.fixed_encodings[{}]", field, i);
        FixedEncoding fe{};
        QAIRT_RETURN_IF_ERROR(DTypeValue(e->dtype(), f + ".dtype", &fe.dtype));
        if (std::find(out->dtypes.begin(), out->dtypes.end(), fe.dtype) == out->dtypes.end())
          return Fail("{}.dtype: '{}' is not one of the slot's dtypes", f, DTypeShortName(fe.dtype));
        if (!IsFixedPoint(fe.dtype)) return Fail("{}.dtype: '{}' is not a fixed-point dtype", f, DTypeShortName(fe.dtype));
        fe.offset = e->offset();
        fe.scale = e->scale();
        if (!std::isfinite(fe.scale) || fe.scale <= 0) return Fail("{}.scale: {} must be finite and > 0", f, fe.scale);
        out->fixed_encodings.push_back(fe);
      }
    }
    return String(s->note(), field + ".note", false, &out->note);
  }

  Status Kernel(const fb::Kernel* k, const OpSchema& schema, const std::string& field, target::Kernel* out) {
    if (!k) return Fail("{} is null", field);
    QAIRT_RETURN_IF_ERROR(String(k->name(), field + ".name", true, &out->name));
    const std::string where = fmt::format("{} '{}'", field, out->name);
    QAIRT_RETURN_IF_ERROR(Count(k->inputs(), where + ".inputs", kMaxSlots));
    QAIRT_RETURN_IF_ERROR(Count(k->outputs(), where + ".outputs", kMaxSlots));
    out->variadic_inputs = k->variadic_inputs();
    out->accuracy_preserving = k->accuracy_preserving();
    const size_t n_in = k->inputs() ? k->inputs()->size() : 0;
    const size_t n_out = k->outputs() ? k->outputs()->size() : 0;
    if (schema.max_inputs != kVariadic && n_in > schema.max_inputs)
      return Fail("{}.inputs: {} slots but {} takes at most {} inputs", where, n_in, schema.type, schema.max_inputs);
    if (out->variadic_inputs && (schema.max_inputs != kVariadic || n_in == 0))
      return Fail("{}.variadic_inputs: {} does not take a variable number of inputs or no input slot is given", where,
                  schema.type);
    if (n_out == 0) return Fail("{}.outputs: at least one output slot is required", where);
    if (schema.max_outputs != kVariadic && n_out > schema.max_outputs)
      return Fail("{}.outputs: {} slots but {} has at most {} outputs", where, n_out, schema.type, schema.max_outputs);
    for (size_t i = 0; i < n_in; ++i) {
      target::Slot s;
      QAIRT_RETURN_IF_ERROR(Slot(k->inputs()->Get(static_cast<uint32_t>(i)), fmt::format("{}.inputs[{}]", where, i),
                                 true, i, &s));
      if (s.optional && i < schema.min_inputs)
        return Fail("{}.inputs[{}].optional: input {} of {} is required", where, i, i, schema.type);
      out->inputs.push_back(std::move(s));
    }
    for (size_t i = 0; i < n_out; ++i) {
      target::Slot s;
      QAIRT_RETURN_IF_ERROR(Slot(k->outputs()->Get(static_cast<uint32_t>(i)),
                                 fmt::format("{}.outputs[{}]", where, i), false, i, &s));
      out->outputs.push_back(std::move(s));
    }
    return String(k->note(), where + ".note", false, &out->note);
  }

  Status Convert(const fb::Target& t, Target* out) {
    out->schema_version = t.schema_version();
    out->min_reader_version = t.min_reader_version();
    if (out->min_reader_version > kReaderVersion)
      return Bad(StatusCode::kUnsupported, origin_,
                 "min_reader_version is {}: the descriptor needs a newer qairt (this one reads version {})",
                 out->min_reader_version, kReaderVersion);
    if (out->min_reader_version == 0) return Fail("min_reader_version must be at least 1");
    if (out->schema_version < out->min_reader_version)
      return Fail("schema_version {} is older than min_reader_version {}", out->schema_version,
                  out->min_reader_version);
    QAIRT_RETURN_IF_ERROR(String(t.name(), "name", true, &out->name));
    if (out->name.size() > 64) return Fail("name is longer than 64 bytes");
    for (char c : out->name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
        return Fail("name '{}' may only contain letters, digits, '_', '-' and '.'", out->name);
    QAIRT_RETURN_IF_ERROR(String(t.description(), "description", false, &out->description));
    const auto backend = static_cast<uint32_t>(t.backend());
    if (backend > static_cast<uint32_t>(Backend::kCustom)) return Fail("backend: value {} is out of range", backend);
    if (backend == 0) return Fail("backend must be set (HTP, LPAI, CPU, AIC or Custom)");
    out->backend = static_cast<Backend>(backend);
    out->arch_version = t.arch_version();

    QAIRT_RETURN_IF_ERROR(Count(t.socs(), "socs", kMaxListEntries));
    if (t.socs()) {
      for (uint32_t i = 0; i < t.socs()->size(); ++i) {
        const fb::Soc* s = t.socs()->Get(i);
        Soc soc;
        QAIRT_RETURN_IF_ERROR(String(s->name(), fmt::format("socs[{}].name", i), true, &soc.name));
        soc.soc_model = s->soc_model();
        soc.vtcm_mb = s->vtcm_mb();
        out->socs.push_back(std::move(soc));
      }
    }
    if (const fb::Capabilities* c = t.capabilities()) {
      const bool bits[] = {c->fp16_compute(), c->fp32_compute(), c->int16_activations(), c->a16w16(),
                           c->int4_weights(), c->per_channel_weights(), c->block_weights(), c->lpbq_weights()};
      for (size_t i = 0; i < std::size(bits); ++i)
        if (bits[i]) out->capabilities |= uint64_t{1} << i;
    }
    QAIRT_RETURN_IF_ERROR(DTypeValue(t.default_float_dtype(), "default_float_dtype", &out->default_float_dtype));
    if (out->default_float_dtype != DType::kUndefined && !IsFloat(out->default_float_dtype))
      return Fail("default_float_dtype: '{}' is not a float dtype (or 'und')", DTypeShortName(out->default_float_dtype));
    if (const fb::QuantDefaults* q = t.quant_defaults()) {
      out->quant_defaults = {q->activations_symmetric(), q->params_symmetric(), q->strict_symmetric(),
                             q->unsigned_symmetric(), q->per_channel(), q->bias_quantized()};
    }

    QAIRT_RETURN_IF_ERROR(Count(t.ops(), "ops", kMaxOps));
    if (t.ops()) {
      for (uint32_t i = 0; i < t.ops()->size(); ++i) {
        const fb::OpKernels* o = t.ops()->Get(i);
        OpKernels ok;
        const std::string field = fmt::format("ops[{}]", i);
        QAIRT_RETURN_IF_ERROR(OpName(o->op(), field + ".op", &ok.op));
        const std::string where = fmt::format("{} '{}'", field, ok.op);
        QAIRT_RETURN_IF_ERROR(Count(o->kernels(), where + ".kernels", kMaxKernelsPerOp));
        const OpSchema& schema = *FindOpSchema(ok.op);
        if (o->kernels()) {
          for (uint32_t k = 0; k < o->kernels()->size(); ++k) {
            target::Kernel kernel;
            QAIRT_RETURN_IF_ERROR(Kernel(o->kernels()->Get(k), schema, fmt::format("{}.kernels[{}]", where, k), &kernel));
            for (const auto& prev : ok.kernels)
              if (prev.name == kernel.name) return Fail("{}.kernels[{}]: kernel name '{}' is used twice", where, k, kernel.name);
            ok.kernels.push_back(std::move(kernel));
          }
        }
        out->ops.push_back(std::move(ok));
      }
    }
    std::sort(out->ops.begin(), out->ops.end(), [](const OpKernels& a, const OpKernels& b) { return a.op < b.op; });
    for (size_t i = 1; i < out->ops.size(); ++i)
      if (out->ops[i].op == out->ops[i - 1].op) return Fail("ops: op '{}' is listed twice", out->ops[i].op);

    QAIRT_RETURN_IF_ERROR(Count(t.data_movement_ops(), "data_movement_ops", kMaxOps));
    if (t.data_movement_ops()) {
      for (uint32_t i = 0; i < t.data_movement_ops()->size(); ++i) {
        std::string op;
        QAIRT_RETURN_IF_ERROR(OpName(t.data_movement_ops()->Get(i), fmt::format("data_movement_ops[{}]", i), &op));
        if (out->IsDataMovement(op)) return Fail("data_movement_ops[{}]: '{}' is listed twice", i, op);
        out->data_movement_ops.push_back(std::move(op));
      }
    }
    QAIRT_RETURN_IF_ERROR(Count(t.super_groups(), "super_groups", kMaxOps));
    if (t.super_groups()) {
      for (uint32_t i = 0; i < t.super_groups()->size(); ++i) {
        const fb::SuperGroup* g = t.super_groups()->Get(i);
        const std::string field = fmt::format("super_groups[{}]", i);
        QAIRT_RETURN_IF_ERROR(Count(g->ops(), field + ".ops", kMaxListEntries));
        if (!g->ops() || g->ops()->size() < 2) return Fail("{}.ops: a super group needs at least 2 ops", field);
        SuperGroup sg;
        for (uint32_t k = 0; k < g->ops()->size(); ++k) {
          std::string op;
          QAIRT_RETURN_IF_ERROR(OpName(g->ops()->Get(k), fmt::format("{}.ops[{}]", field, k), &op));
          sg.ops.push_back(std::move(op));
        }
        QAIRT_RETURN_IF_ERROR(String(g->note(), field + ".note", false, &sg.note));
        out->super_groups.push_back(std::move(sg));
      }
    }
    QAIRT_RETURN_IF_ERROR(Count(t.conversions(), "conversions", kMaxListEntries));
    if (t.conversions()) {
      for (uint32_t i = 0; i < t.conversions()->size(); ++i) {
        const fb::Conversion* c = t.conversions()->Get(i);
        const std::string field = fmt::format("conversions[{}]", i);
        Conversion conv{};
        QAIRT_RETURN_IF_ERROR(DTypes(c->from(), field + ".from", true, &conv.from));
        QAIRT_RETURN_IF_ERROR(DTypes(c->to(), field + ".to", true, &conv.to));
        const auto via = static_cast<uint32_t>(c->via());
        if (via > static_cast<uint32_t>(ConvertOp::kDequantize)) return Fail("{}.via: value {} is out of range", field, via);
        conv.via = static_cast<ConvertOp>(via);
        out->conversions.push_back(std::move(conv));
      }
    }
    QAIRT_RETURN_IF_ERROR(Count(t.sources(), "sources", kMaxListEntries));
    if (t.sources()) {
      for (uint32_t i = 0; i < t.sources()->size(); ++i) {
        std::string s;
        QAIRT_RETURN_IF_ERROR(String(t.sources()->Get(i), fmt::format("sources[{}]", i), false, &s));
        out->sources.push_back(std::move(s));
      }
    }
    return Status::Ok();
  }

 private:
  std::string origin_;
};

bool HasIdentifier(std::span<const uint8_t> bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data() + 4, fb::TargetIdentifier(), 4) == 0;
}

}  // namespace

Result<TargetPtr> LoadTargetFromBinary(std::span<const uint8_t> bytes, std::string_view origin) {
  // Size first: the verifier asserts on buffers >= 2 GiB, and a descriptor
  // has no business being larger than a few hundred KiB.
  if (bytes.size() > kMaxBinaryBytes)
    return Bad(StatusCode::kParseError, origin, "{} bytes is larger than the limit of {} bytes", bytes.size(),
               kMaxBinaryBytes);
  if (bytes.size() < 8)
    return Bad(StatusCode::kParseError, origin, "{} bytes is too short for a target descriptor (truncated?)",
               bytes.size());
  if (!HasIdentifier(bytes))
    return Bad(StatusCode::kParseError, origin,
               "file identifier (bytes 4..7) is {:02x} {:02x} {:02x} {:02x}, expected '{}' (not a qairt target "
               "descriptor)",
               bytes[4], bytes[5], bytes[6], bytes[7], fb::TargetIdentifier());
  // The verifier checks alignment, so work on an aligned copy.
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  const auto* data = reinterpret_cast<const uint8_t*>(aligned.data());
  flatbuffers::Verifier::Options opts;
  opts.max_depth = kMaxVerifierDepth;
  opts.max_tables = kMaxVerifierTables;
  opts.check_alignment = true;
  flatbuffers::Verifier verifier(data, bytes.size(), opts);
  if (!fb::VerifyTargetBuffer(verifier))
    return Bad(StatusCode::kParseError, origin,
               "the FlatBuffers verifier rejected the {} bytes (truncated or corrupt: an offset or length points "
               "outside the buffer, or nesting deeper than {} / more than {} tables)",
               bytes.size(), kMaxVerifierDepth, kMaxVerifierTables);
  auto target = std::make_shared<Target>();
  target->origin = std::string(origin);
  Checker checker(origin);
  QAIRT_RETURN_IF_ERROR(checker.Convert(*fb::GetTarget(data), target.get()));
  return TargetPtr(std::move(target));
}

Result<TargetPtr> LoadTargetFromJson(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxJsonBytes)
    return Bad(StatusCode::kParseError, origin, "{} bytes of JSON is larger than the limit of {} bytes", text.size(),
               kMaxJsonBytes);
  if (std::memchr(text.data(), '\0', text.size()))
    return Bad(StatusCode::kParseError, origin, "JSON text contains a NUL byte (is it a truncated binary?)");
  flatbuffers::IDLOptions opts;
  opts.skip_unexpected_fields_in_json = false;
  flatbuffers::Parser parser(opts);
  const std::string schema(TargetSchemaText());
  if (!parser.Parse(schema.c_str()))
    return Bad(StatusCode::kInternal, origin, "embedded schema does not parse: {}", parser.error_);
  const std::string source(text);  // NUL-terminated copy for the parser
  if (!parser.Parse(source.c_str()))
    return Bad(StatusCode::kParseError, origin, "invalid descriptor JSON: {}", parser.error_);
  if (parser.builder_.GetSize() == 0) return Bad(StatusCode::kParseError, origin, "JSON text holds no descriptor");
  return LoadTargetFromBinary(
      std::span<const uint8_t>(parser.builder_.GetBufferPointer(), parser.builder_.GetSize()), origin);
}

Result<TargetPtr> LoadTargetFromBytes(std::span<const uint8_t> bytes, std::string_view origin) {
  if (HasIdentifier(bytes)) return LoadTargetFromBinary(bytes, origin);
  // JSON starts (after whitespace) with '{'; anything else is a broken binary.
  size_t i = 0;
  while (i < bytes.size() && std::isspace(bytes[i])) ++i;
  if (i < bytes.size() && bytes[i] == '{')
    return LoadTargetFromJson(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), origin);
  return LoadTargetFromBinary(bytes, origin);  // reports size / identifier
}

Result<TargetPtr> LoadTargetFromFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Status(StatusCode::kNotFound, fmt::format("target descriptor '{}': no such file", path));
  if (!S_ISREG(st.st_mode))
    return Status(StatusCode::kIoError, fmt::format("target descriptor '{}': not a regular file", path));
  if (static_cast<uint64_t>(st.st_size) > kMaxJsonBytes)
    return Bad(StatusCode::kParseError, path, "file is {} bytes, larger than the limit of {} bytes",
               static_cast<uint64_t>(st.st_size), kMaxJsonBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIoError, fmt::format("target descriptor '{}': cannot open file", path));
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (static_cast<size_t>(in.gcount()) != bytes.size())
    return Status(StatusCode::kIoError, fmt::format("target descriptor '{}': read failed", path));
  return LoadTargetFromBytes(bytes, path);
}

namespace {

struct BuiltinCache {
  std::vector<std::string_view> names;
  std::vector<Result<TargetPtr>> targets;
};

const BuiltinCache& Builtins() {
  static const BuiltinCache cache = [] {
    BuiltinCache c;
    for (const BuiltinBlob& b : BuiltinBlobs()) {
      c.names.emplace_back(b.name);
      c.targets.push_back(LoadTargetFromBinary(std::span<const uint8_t>(b.data, b.size),
                                               fmt::format("built-in {}", b.name)));
    }
    return c;
  }();
  return cache;
}

}  // namespace

std::span<const std::string_view> BuiltinTargetNames() { return Builtins().names; }

Result<TargetPtr> LoadBuiltinTarget(std::string_view name) {
  const BuiltinCache& c = Builtins();
  for (size_t i = 0; i < c.names.size(); ++i)
    if (c.names[i] == name) return c.targets[i];
  return Status(StatusCode::kNotFound,
                fmt::format("no built-in target '{}' (built-in: {})", name, fmt::join(c.names, ", ")));
}

Result<TargetPtr> LoadTarget(std::string_view name_or_path) {
  for (std::string_view n : BuiltinTargetNames())
    if (n == name_or_path) return LoadBuiltinTarget(n);
  struct stat st {};
  if (::stat(std::string(name_or_path).c_str(), &st) != 0)
    return Status(StatusCode::kNotFound,
                  fmt::format("target '{}' is neither a built-in target ({}) nor an existing file", name_or_path,
                              fmt::join(BuiltinTargetNames(), ", ")));
  return LoadTargetFromFile(std::string(name_or_path));
}

}  // namespace qairt::target
