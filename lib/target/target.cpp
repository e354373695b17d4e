// Target queries, names, the SoC table, the JSON dump and the diff.
#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "support/json_writer.h"
#include "target/target_descriptor.h"

namespace qairt::target {

std::span<const CapabilityName> CapabilityNames() {
  static constexpr std::array<CapabilityName, 8> kNames = {{
      {kCapFp16Compute, "fp16_compute"},
      {kCapFp32Compute, "fp32_compute"},
      {kCapInt16Activations, "int16_activations"},
      {kCapA16W16, "a16w16"},
      {kCapInt4Weights, "int4_weights"},
      {kCapPerChannelWeights, "per_channel_weights"},
      {kCapBlockWeights, "block_weights"},
      {kCapLpbqWeights, "lpbq_weights"},
  }};
  return kNames;
}

std::string_view BackendName(Backend b) {
  switch (b) {
    case Backend::kHtp: return "HTP";
    case Backend::kLpai: return "LPAI";
    case Backend::kCpu: return "CPU";
    case Backend::kAic: return "AIC";
    case Backend::kCustom: return "Custom";
    default: return "Unknown";
  }
}

std::string_view SlotRoleName(SlotRole r) {
  static constexpr std::string_view kNames[] = {"activation", "weight", "bias", "index"};
  const auto v = static_cast<uint32_t>(r);
  return v < std::size(kNames) ? kNames[v] : "invalid";
}

std::string_view ScaleRuleName(ScaleRule r) {
  static constexpr std::string_view kNames[] = {"none", "product_of_inputs", "same_as_input"};
  const auto v = static_cast<uint32_t>(r);
  return v < std::size(kNames) ? kNames[v] : "invalid";
}

std::string_view ConvertOpName(ConvertOp c) {
  static constexpr std::string_view kNames[] = {"Convert", "Cast", "Quantize", "Dequantize"};
  const auto v = static_cast<uint32_t>(c);
  return v < std::size(kNames) ? kNames[v] : "invalid";
}

std::string_view SymmetryName(uint32_t s) {
  static constexpr std::string_view kNames[] = {"asymmetric", "symmetric", "strict_symmetric", "unsigned_symmetric"};
  return s < std::size(kNames) ? kNames[s] : "invalid";
}

std::string_view GranularityName(uint32_t g) {
  static constexpr std::string_view kNames[] = {"invalid",    "unquantized", "per_tensor", "per_channel",
                                                "per_block", "lpbq",        "array_of"};
  return g < std::size(kNames) ? kNames[g] : "invalid";
}

bool Slot::Allows(DType d) const { return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end(); }

const Slot* Kernel::input(size_t i) const {
  if (i < inputs.size()) return &inputs[i];
  if (variadic_inputs && !inputs.empty()) return &inputs.back();
  return nullptr;
}

const OpKernels* Target::FindOp(std::string_view op) const {
  auto it = std::lower_bound(ops.begin(), ops.end(), op, [](const OpKernels& o, std::string_view n) { return o.op < n; });
  return it != ops.end() && it->op == op ? &*it : nullptr;
}

bool Target::IsDataMovement(std::string_view op) const {
  return std::find(data_movement_ops.begin(), data_movement_ops.end(), op) != data_movement_ops.end();
}

uint32_t Target::ConversionOps(DType from, DType to) const {
  uint32_t mask = 0;
  if (from == to) return 0;
  for (const Conversion& c : conversions) {
    const bool f = std::find(c.from.begin(), c.from.end(), from) != c.from.end();
    const bool t = std::find(c.to.begin(), c.to.end(), to) != c.to.end();
    if (f && t) mask |= 1u << static_cast<uint32_t>(c.via);
  }
  return mask;
}

std::optional<size_t> Target::FindKernel(std::string_view op, std::span<const DType> in,
                                         std::span<const DType> out) const {
  const OpKernels* o = FindOp(op);
  if (!o) return std::nullopt;
  for (size_t k = 0; k < o->kernels.size(); ++k) {
    const Kernel& kernel = o->kernels[k];
    bool ok = out.size() <= kernel.outputs.size() || kernel.outputs.empty();
    for (size_t i = 0; ok && i < in.size(); ++i) {
      const Slot* s = kernel.input(i);
      if (!s) {
        ok = in[i] == DType::kUndefined;
      } else if (in[i] == DType::kUndefined) {
        ok = s->optional;
      } else {
        ok = s->Allows(in[i]);
      }
    }
    // Required inputs the caller did not give.
    for (size_t i = in.size(); ok && i < kernel.inputs.size(); ++i) ok = kernel.inputs[i].optional;
    for (size_t i = 0; ok && i < out.size(); ++i) ok = kernel.outputs[std::min(i, kernel.outputs.size() - 1)].Allows(out[i]);
    if (ok) return k;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// SoC -> built-in target (formats.md §3.1: executorch qc_schema.py table)
// ---------------------------------------------------------------------------

std::optional<std::string_view> TargetNameForSoc(std::string_view soc) {
  std::string key;
  for (char c : soc) key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (key.empty()) return std::nullopt;
  const bool numeric = std::all_of(key.begin(), key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  // HTP first, then the others, in name order within each group.
  for (int pass = 0; pass < 2; ++pass) {
    for (std::string_view name : BuiltinTargetNames()) {
      auto t = LoadBuiltinTarget(name);
      if (!t.ok()) continue;
      const Target& target = *t.value();
      if ((target.backend == Backend::kHtp) != (pass == 0)) continue;
      for (const Soc& s : target.socs) {
        if (numeric ? (s.soc_model != 0 && std::to_string(s.soc_model) == key) : s.name == key) return name;
      }
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// JSON dump (the schema's JSON form: loads back with LoadTargetFromJson)
// ---------------------------------------------------------------------------

namespace {

void WriteDTypes(JsonWriter& w, const std::vector<DType>& ds) {
  w.BeginArray();
  for (DType d : ds) w.String(DTypeShortName(d));
  w.EndArray();
}

void WriteSlot(JsonWriter& w, const Slot& s) {
  w.BeginObject();
  w.Key("role").String(SlotRoleName(s.role));
  if (s.optional) w.Key("optional").Bool(true);
  w.Key("dtypes");
  WriteDTypes(w, s.dtypes);
  if (s.symmetry_mask) {
    w.Key("symmetries").BeginArray();
    for (uint32_t i = 0; i < 4; ++i)
      if (s.symmetry_mask & (1u << i)) w.String(SymmetryName(i));
    w.EndArray();
  }
  if (s.granularity_mask) {
    w.Key("granularities").BeginArray();
    for (uint32_t i = 1; i <= 6; ++i)
      if (s.granularity_mask & (1u << i)) w.String(GranularityName(i));
    w.EndArray();
  }
  if (s.channel_axis != -1) w.Key("channel_axis").Int(s.channel_axis);
  if (s.block_size_min) w.Key("block_size_min").UInt(s.block_size_min);
  if (s.block_size_multiple) w.Key("block_size_multiple").UInt(s.block_size_multiple);
  if (s.scale_rule != ScaleRule::kNone) w.Key("scale_rule").String(ScaleRuleName(s.scale_rule));
  if (s.has_range) {
    w.Key("value_range").BeginObject();
    w.Key("min").Double(s.range_min);
    w.Key("max").Double(s.range_max);
    w.EndObject();
  }
  if (!s.fixed_encodings.empty()) {
    w.Key("fixed_encodings").BeginArray();
    for (const FixedEncoding& e : s.fixed_encodings) {
      w.BeginObject();
      w.Key("dtype").String(DTypeShortName(e.dtype));
      w.Key("offset").Int(e.offset);
      w.Key("scale").Double(e.scale);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!s.note.empty()) w.Key("note").String(s.note);
  w.EndObject();
}

void WriteOp(JsonWriter& w, const OpKernels& o) {
  w.BeginObject();
  w.Key("op").String(o.op);
  w.Key("kernels").BeginArray();
  for (const Kernel& k : o.kernels) {
    w.BeginObject();
    w.Key("name").String(k.name);
    w.Key("inputs").BeginArray();
    for (const Slot& s : k.inputs) WriteSlot(w, s);
    w.EndArray();
    w.Key("outputs").BeginArray();
    for (const Slot& s : k.outputs) WriteSlot(w, s);
    w.EndArray();
    if (k.variadic_inputs) w.Key("variadic_inputs").Bool(true);
    if (!k.accuracy_preserving) w.Key("accuracy_preserving").Bool(false);
    if (!k.note.empty()) w.Key("note").String(k.note);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteSoc(JsonWriter& w, const Soc& s) {
  w.BeginObject();
  w.Key("name").String(s.name);
  w.Key("soc_model").UInt(s.soc_model);
  w.Key("vtcm_mb").UInt(s.vtcm_mb);
  w.EndObject();
}

void WriteStrings(JsonWriter& w, const std::vector<std::string>& v) {
  w.BeginArray();
  for (const auto& s : v) w.String(s);
  w.EndArray();
}

}  // namespace

Result<std::string> TargetToJson(const Target& t, std::string_view op) {
  JsonWriter w;
  if (!op.empty()) {
    const OpKernels* o = t.FindOp(op);
    if (!o)
      return Status(StatusCode::kNotFound, fmt::format("target '{}' has no kernels for op '{}'", t.name, op));
    WriteOp(w, *o);
    return w.Take();
  }
  w.BeginObject();
  w.Key("schema_version").UInt(t.schema_version);
  w.Key("min_reader_version").UInt(t.min_reader_version);
  w.Key("name").String(t.name);
  w.Key("description").String(t.description);
  w.Key("backend").String(BackendName(t.backend));
  w.Key("arch_version").UInt(t.arch_version);
  w.Key("socs").BeginArray();
  for (const Soc& s : t.socs) WriteSoc(w, s);
  w.EndArray();
  w.Key("capabilities").BeginObject();
  for (const CapabilityName& c : CapabilityNames()) w.Key(c.name).Bool((t.capabilities & c.bit) != 0);
  w.EndObject();
  w.Key("default_float_dtype").String(DTypeShortName(t.default_float_dtype));
  w.Key("quant_defaults").BeginObject();
  const QuantDefaults& q = t.quant_defaults;
  const std::pair<const char*, bool> qd[] = {{"activations_symmetric", q.activations_symmetric},
                                             {"params_symmetric", q.params_symmetric},
                                             {"strict_symmetric", q.strict_symmetric},
                                             {"unsigned_symmetric", q.unsigned_symmetric},
                                             {"per_channel", q.per_channel},
                                             {"bias_quantized", q.bias_quantized}};
  for (const auto& [k, v] : qd) w.Key(k).Bool(v);
  w.EndObject();
  w.Key("ops").BeginArray();
  for (const OpKernels& o : t.ops) WriteOp(w, o);
  w.EndArray();
  w.Key("data_movement_ops");
  WriteStrings(w, t.data_movement_ops);
  w.Key("super_groups").BeginArray();
  for (const SuperGroup& g : t.super_groups) {
    w.BeginObject();
    w.Key("ops");
    WriteStrings(w, g.ops);
    if (!g.note.empty()) w.Key("note").String(g.note);
    w.EndObject();
  }
  w.EndArray();
  w.Key("conversions").BeginArray();
  for (const Conversion& c : t.conversions) {
    w.BeginObject();
    w.Key("from");
    WriteDTypes(w, c.from);
    w.Key("to");
    WriteDTypes(w, c.to);
    w.Key("via").String(ConvertOpName(c.via));
    w.EndObject();
  }
  w.EndArray();
  w.Key("sources");
  WriteStrings(w, t.sources);
  w.EndObject();
  return w.Take();
}

// ---------------------------------------------------------------------------
// Diff
// ---------------------------------------------------------------------------

namespace {

struct Change {
  std::string kind;  // capability, property, op, kernel, data_movement, super_group, conversion, soc
  std::string item;  // what changed, e.g. "fp16_compute", "MatMul", "MatMul a16w16"
  std::string a, b;  // value in a / b; "" = absent
};

std::string SlotText(const Slot& s) {
  std::string out = fmt::format("{}:", SlotRoleName(s.role));
  for (size_t i = 0; i < s.dtypes.size(); ++i) out += (i ? "|" : "") + std::string(DTypeShortName(s.dtypes[i]));
  if (s.optional) out += "?";
  if (s.symmetry_mask) {
    out += " sym=";
    bool first = true;
    for (uint32_t i = 0; i < 4; ++i)
      if (s.symmetry_mask & (1u << i)) out += (first ? "" : "|") + std::string(SymmetryName(i)), first = false;
  }
  if (s.granularity_mask) {
    out += " gran=";
    bool first = true;
    for (uint32_t i = 1; i <= 6; ++i)
      if (s.granularity_mask & (1u << i)) out += (first ? "" : "|") + std::string(GranularityName(i)), first = false;
  }
  if (s.channel_axis >= 0) out += fmt::format(" axis={}", s.channel_axis);
  if (s.block_size_min) out += fmt::format(" block_min={}", s.block_size_min);
  if (s.block_size_multiple) out += fmt::format(" block_multiple={}", s.block_size_multiple);
  if (s.scale_rule != ScaleRule::kNone) out += fmt::format(" scale={}", ScaleRuleName(s.scale_rule));
  if (s.has_range) out += fmt::format(" range=[{}, {}]", s.range_min, s.range_max);
  for (const FixedEncoding& e : s.fixed_encodings)
    out += fmt::format(" fixed({} scale={} offset={})", DTypeShortName(e.dtype), e.scale, e.offset);
  return out;
}

std::string KernelText(const Kernel& k) {
  std::string out = "IN <";
  for (size_t i = 0; i < k.inputs.size(); ++i) out += (i ? ", " : " ") + SlotText(k.inputs[i]);
  if (k.variadic_inputs) out += " ...";
  out += " > OUT <";
  for (size_t i = 0; i < k.outputs.size(); ++i) out += (i ? ", " : " ") + SlotText(k.outputs[i]);
  out += " >";
  if (!k.accuracy_preserving) out += " (not accuracy preserving)";
  return out;
}

std::string Join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? std::string(sep) : "") + v[i];
  return out;
}

std::string ConversionText(const Target& t, DType from, DType to) {
  std::vector<std::string> via;
  const uint32_t mask = t.ConversionOps(from, to);
  for (uint32_t i = 0; i < 4; ++i)
    if (mask & (1u << i)) via.emplace_back(ConvertOpName(static_cast<ConvertOp>(i)));
  return Join(via, "|");
}

std::vector<Change> Compare(const Target& a, const Target& b) {
  std::vector<Change> out;
  auto prop = [&](std::string item, std::string va, std::string vb) {
    if (va != vb) out.push_back({"property", std::move(item), std::move(va), std::move(vb)});
  };
  prop("backend", std::string(BackendName(a.backend)), std::string(BackendName(b.backend)));
  prop("arch_version", std::to_string(a.arch_version), std::to_string(b.arch_version));
  prop("default_float_dtype", std::string(DTypeShortName(a.default_float_dtype)),
       std::string(DTypeShortName(b.default_float_dtype)));
  for (const CapabilityName& c : CapabilityNames()) {
    const bool va = a.capabilities & c.bit, vb = b.capabilities & c.bit;
    if (va != vb) out.push_back({"capability", std::string(c.name), va ? "true" : "false", vb ? "true" : "false"});
  }
  const std::pair<const char*, std::pair<bool, bool>> qd[] = {
      {"activations_symmetric", {a.quant_defaults.activations_symmetric, b.quant_defaults.activations_symmetric}},
      {"params_symmetric", {a.quant_defaults.params_symmetric, b.quant_defaults.params_symmetric}},
      {"strict_symmetric", {a.quant_defaults.strict_symmetric, b.quant_defaults.strict_symmetric}},
      {"unsigned_symmetric", {a.quant_defaults.unsigned_symmetric, b.quant_defaults.unsigned_symmetric}},
      {"per_channel", {a.quant_defaults.per_channel, b.quant_defaults.per_channel}},
      {"bias_quantized", {a.quant_defaults.bias_quantized, b.quant_defaults.bias_quantized}}};
  for (const auto& [k, v] : qd)
    if (v.first != v.second)
      out.push_back({"quant_default", k, v.first ? "true" : "false", v.second ? "true" : "false"});

  std::set<std::string> socs_a, socs_b;
  for (const Soc& s : a.socs) socs_a.insert(s.name);
  for (const Soc& s : b.socs) socs_b.insert(s.name);
  for (const auto& s : socs_a)
    if (!socs_b.count(s)) out.push_back({"soc", s, "yes", ""});
  for (const auto& s : socs_b)
    if (!socs_a.count(s)) out.push_back({"soc", s, "", "yes"});

  std::set<std::string> names;
  for (const OpKernels& o : a.ops) names.insert(o.op);
  for (const OpKernels& o : b.ops) names.insert(o.op);
  for (const std::string& op : names) {
    const OpKernels* oa = a.FindOp(op);
    const OpKernels* ob = b.FindOp(op);
    auto kernel_names = [](const OpKernels* o) {
      std::vector<std::string> v;
      if (o)
        for (const Kernel& k : o->kernels) v.push_back(k.name);
      return v;
    };
    if (!oa || !ob) {
      out.push_back({"op", op, oa ? Join(kernel_names(oa), " ") : "", ob ? Join(kernel_names(ob), " ") : ""});
      continue;
    }
    for (const Kernel& ka : oa->kernels) {
      auto it = std::find_if(ob->kernels.begin(), ob->kernels.end(), [&](const Kernel& k) { return k.name == ka.name; });
      const std::string ta = KernelText(ka);
      if (it == ob->kernels.end()) {
        out.push_back({"kernel", op + " " + ka.name, ta, ""});
      } else if (const std::string tb = KernelText(*it); ta != tb) {
        out.push_back({"kernel", op + " " + ka.name, ta, tb});
      }
    }
    for (const Kernel& kb : ob->kernels) {
      auto it = std::find_if(oa->kernels.begin(), oa->kernels.end(), [&](const Kernel& k) { return k.name == kb.name; });
      if (it == oa->kernels.end()) out.push_back({"kernel", op + " " + kb.name, "", KernelText(kb)});
    }
  }
  for (const auto& op : a.data_movement_ops)
    if (!b.IsDataMovement(op)) out.push_back({"data_movement", op, "yes", ""});
  for (const auto& op : b.data_movement_ops)
    if (!a.IsDataMovement(op)) out.push_back({"data_movement", op, "", "yes"});
  auto has_group = [](const Target& t, const SuperGroup& g) {
    return std::any_of(t.super_groups.begin(), t.super_groups.end(), [&](const SuperGroup& x) { return x.ops == g.ops; });
  };
  for (const SuperGroup& g : a.super_groups)
    if (!has_group(b, g)) out.push_back({"super_group", Join(g.ops, " + "), "yes", ""});
  for (const SuperGroup& g : b.super_groups)
    if (!has_group(a, g)) out.push_back({"super_group", Join(g.ops, " + "), "", "yes"});
  for (uint32_t f = 1; f < kDTypeCount; ++f) {
    for (uint32_t to = 1; to < kDTypeCount; ++to) {
      const std::string ca = ConversionText(a, static_cast<DType>(f), static_cast<DType>(to));
      const std::string cb = ConversionText(b, static_cast<DType>(f), static_cast<DType>(to));
      if (ca != cb)
        out.push_back({"conversion",
                       fmt::format("{} -> {}", DTypeShortName(static_cast<DType>(f)), DTypeShortName(static_cast<DType>(to))),
                       ca, cb});
    }
  }
  return out;
}

}  // namespace

std::string DiffTargets(const Target& a, const Target& b, bool json) {
  const std::vector<Change> changes = Compare(a, b);
  if (json) {
    JsonWriter w;
    w.BeginObject();
    w.Key("a").String(a.name);
    w.Key("b").String(b.name);
    w.Key("equal").Bool(changes.empty());
    w.Key("changes").BeginArray();
    for (const Change& c : changes) {
      w.BeginObject();
      w.Key("kind").String(c.kind);
      w.Key("item").String(c.item);
      w.Key("a");
      if (c.a.empty()) w.Null(); else w.String(c.a);
      w.Key("b");
      if (c.b.empty()) w.Null(); else w.String(c.b);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return w.Take();
  }
  std::string out = fmt::format("--- {}\n+++ {}\n", a.name, b.name);
  if (changes.empty()) return out + "no differences\n";
  for (const Change& c : changes) {
    if (c.kind == "capability" || c.kind == "property" || c.kind == "quant_default") {
      out += fmt::format("{} {}: {} -> {}\n", c.kind, c.item, c.a, c.b);
    } else if (c.a.empty()) {
      out += fmt::format("+ {} {}{}\n", c.kind, c.item, c.b == "yes" ? "" : ": " + c.b);
    } else if (c.b.empty()) {
      out += fmt::format("- {} {}{}\n", c.kind, c.item, c.a == "yes" ? "" : ": " + c.a);
    } else {
      out += fmt::format("~ {} {}\n    - {}\n    + {}\n", c.kind, c.item, c.a, c.b);
    }
  }
  return out;
}

}  // namespace qairt::target
