#include "passes/quant_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "passes/adapt.h"

namespace qairt::pass {

namespace {

constexpr size_t kMaxLoggedValues = 5;

template <typename V>  // std::vector or CowVector
std::string JoinValues(const V& v, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < kMaxLoggedValues; ++i) s += fmt::format("{}{}", i ? sep : "", v[i]);
  return s;
}

template <typename V>
std::string ListValues(const V& v) {
  std::string s = "[" + JoinValues(v, ", ");
  if (v.size() > kMaxLoggedValues) s += fmt::format(", ... ({} values)", v.size());
  return s + "]";
}

std::string CsvField(std::string_view v) {
  if (v.find_first_of(",\"\n") == std::string_view::npos) return std::string(v);
  std::string s = "\"";
  for (char c : v) {
    if (c == '"') s += '"';
    s += c;
  }
  return s + "\"";
}

std::string Percent(size_t n, size_t total) {
  return total ? fmt::format("{:.2f}%", 100.0 * static_cast<double>(n) / static_cast<double>(total)) : "0.00%";
}

std::string OpRef(const Graph& g, OpId id) {
  const Op& op = g.op(id);
  return fmt::format("{} ({})", op.name, op.type);
}

}  // namespace

std::string EncodingTraceText(const std::optional<Encoding>& e) {
  if (!e) return "UNDEFINED ENCODING";
  const bool fxp = IsFixedPoint(e->dtype);
  const bool sym = e->symmetry != Symmetry::kAsymmetric;
  if (!fxp)
    return fmt::format("{{ bw: {}, is_sym: {}, is_fxp: F, dtype: {}, overridden: {} }}", DTypeBits(e->dtype), "F",
                       DTypeShortName(e->dtype), e->overridden ? "T" : "F");
  std::string extra;
  if (e->axis >= 0) extra += fmt::format(", axis: {}", e->axis);
  if (!e->block_sizes.empty()) extra += fmt::format(", block_size: {}", ListValues(e->block_sizes));
  if (!e->block_int_scales.empty()) extra += fmt::format(", per_block_int_scale: {}", ListValues(e->block_int_scales));
  return fmt::format("{{ bw: {}, scale: {}, offset: {}{}, is_sym: {}, is_fxp: T, dtype: {}, overridden: {} }}",
                     e->effective_bitwidth(), ListValues(e->scales),
                     e->float_offsets.empty() ? ListValues(e->offsets) : ListValues(e->float_offsets), extra,
                     sym ? "T" : "F", DTypeShortName(e->dtype), e->overridden ? "T" : "F");
}

std::string GraphSnapshot(const Session& s, std::string_view when) {
  if (!s.tracing()) return {};
  const Graph& g = s.graph();
  std::string out = fmt::format("======== GRAPH: {} ========\nTENSORS ({})\n", when, g.tensor_count());
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    out += fmt::format("  {}\n    [consumers] [ ", t.name);
    for (const Use& u : t.consumers) out += fmt::format("{} [{}], ", OpRef(g, u.op), u.slot);
    out += "]\n    [producer ] ";
    out += t.producer != kInvalidId ? fmt::format("{} [{}]", OpRef(g, t.producer), t.producer_slot) : "-";
    out += "\n    [notes    ] [ ";
    switch (t.role()) {
      case TensorRole::kInput: out += "APP_WRITE, "; break;
      case TensorRole::kOutput: out += "APP_READ, "; break;
      case TensorRole::kInputOutput: out += "APP_WRITE, APP_READ, "; break;
      case TensorRole::kStatic: out += "STATIC, "; break;
      default: break;
    }
    out += fmt::format("]\n    datatype: {}\n    encoding: {}\n", DTypeShortName(t.dtype), EncodingTraceText(t.encoding));
  }
  out += fmt::format("OPS ({})\n", g.op_count());
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    out += fmt::format("  {} IN [ ", OpRef(g, id));
    for (TensorId in : op.inputs) out += (in == kInvalidId ? std::string("<none>") : g.tensor(in).name) + ", ";
    out += "] OUT [ ";
    for (TensorId o : op.outputs) out += g.tensor(o).name + ", ";
    out += "]";
    if (const OpRecord* r = s.find_op_record(id); r && !r->kernel.empty()) out += " kernel: " + r->kernel;
    out += "\n";
  }
  out += "======== END GRAPH ========\n";
  return out;
}

std::string InfoCsv(const Session& s) {
  const Graph& g = s.graph();
  std::string out =
      "Tensor name,Original tensor name,Encoding type,Selected datatype,Requested datatype,Reason,"
      "Scale / Original scale,Offset / Original offset\n";
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const TensorRecord* r = s.find_tensor_record(id);
    if (!r || r->reasons.empty()) continue;
    const Tensor& t = g.tensor(id);
    const Encoding* orig = r->original ? &*r->original : nullptr;
    if (r->injected && !r->origin.empty()) {
      if (auto src = g.FindTensor(r->origin)) {
        const TensorRecord* sr = s.find_tensor_record(*src);
        if (sr && sr->original) orig = &*sr->original;
      }
    }
    std::string reasons;
    for (const auto& x : r->reasons) reasons += (reasons.empty() ? "" : "^") + x;
    const DType selected = t.encoding ? t.encoding->dtype : t.dtype;
    const DType requested = orig ? orig->dtype : DType::kUndefined;
    std::string scales, offsets;
    if (t.encoding && IsFixedPoint(t.encoding->dtype)) {
      scales = JoinValues(t.encoding->scales, "^");
      offsets = JoinValues(t.encoding->offsets, "^");
    }
    if (orig && IsFixedPoint(orig->dtype) && (!t.encoding || *orig != *t.encoding)) {
      scales += " / " + JoinValues(orig->scales, "^");
      offsets += " / " + JoinValues(orig->offsets, "^");
    }
    out += fmt::format("{},{},{},{},{},{},{},{}\n", CsvField(t.name), CsvField(r->injected ? r->origin : ""),
                       EncodingTypeName(t.encoding), DTypeShortName(selected), DTypeShortName(requested), reasons,
                       CsvField(scales), CsvField(offsets));
  }
  return out;
}

std::string StatsSummary(const Session& s) {
  const Graph& g = s.graph();
  size_t missing = 0, propagated = 0, fp16 = 0, fp32 = 0, supergrouped = 0, bias_fxp = 0, dup = 0, computed = 0,
         adjusted = 0;
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const TensorRecord* r = s.find_tensor_record(id);
    if (!r) continue;
    const bool has = [&] {
      for (const auto& x : r->reasons) {
        if (x == kReasonDuplicatedBias) return true;
      }
      return false;
    }();
    if (has) ++dup;
    if (r->computed && r->existed_at_start && r->original) ++adjusted;
    if (r->computed && !(r->existed_at_start && r->original)) ++computed;
    if (!r->existed_at_start) continue;
    if (r->original) continue;
    const DType d = r->original_dtype;
    if (!IsFloat(d) && !IsFixedPoint(d)) continue;  // integer/bool tensors need no encoding
    ++missing;
    auto reason = [&](std::string_view x) { return std::find(r->reasons.begin(), r->reasons.end(), x) != r->reasons.end(); };
    if (r->bias_fxp) ++bias_fxp;
    if (reason(kReasonDataMovement)) ++propagated;
    else if (reason(kReasonSuperGroup)) ++supergrouped;
    else if (r->float_fallback) {
      const Tensor& t = g.tensor(id);
      (t.encoding && t.encoding->dtype == DType::kFloat32 ? fp32 : fp16)++;
    }
  }
  const size_t tensors = s.tensors_at_start;
  std::string out = "======== QUANTIZER STATS ========\n";
  out += fmt::format("[MISSING ENC.] {} / {} tensors ({})\n", missing, tensors, Percent(missing, tensors));
  out += fmt::format("    [PROPAGATED] {} ({})\n", propagated, Percent(propagated, tensors));
  out += fmt::format("    [FP16 FALLBACK] {} ({})\n", fp16, Percent(fp16, tensors));
  out += fmt::format("    [FP32 FALLBACK] {} ({})\n", fp32, Percent(fp32, tensors));
  out += fmt::format("    [SUPERGROUPED] {} ({})\n", supergrouped, Percent(supergrouped, tensors));
  out += fmt::format("[BIAS FXP] {}\n", bias_fxp);
  out += fmt::format("[DUP. BIASES] {}\n", dup);
  if (!s.raised_weight_scales.empty()) {
    // qairt's own line: weights whose scales were raised so their biases fit.
    size_t channels = 0;
    for (const auto& r : s.raised_weight_scales) channels += r.channels;
    out += fmt::format("[BIAS-AWARE W. SCALES] {} channels of {} weights raised so their biases fit the bias grid\n",
                       channels, s.raised_weight_scales.size());
  }

  // Adapted ops: requested -> selected dtype tuples.
  size_t adapted = 0, ops = 0;
  std::map<std::pair<std::string, std::string>, size_t> table;
  for (OpId id = 0; id < g.op_count(); ++id) {
    const OpRecord* r = s.find_op_record(id);
    if (r && r->injected) continue;
    ++ops;
    if (!r || !r->adapted) continue;
    ++adapted;
    ++table[{DTypeTuple(r->requested_in, r->requested_out), DTypeTuple(r->selected_in, r->selected_out)}];
  }
  out += fmt::format("[ADAPTED OPS] {} / {} ops ({})\n", adapted, ops, Percent(adapted, ops));
  if (!s.converts.empty())
    for (const auto& [k, n] : table) out += fmt::format("    {} -> {} : {}\n", k.first, k.second, n);
  // Computed for tensors that had none; user encodings the quantizer had to
  // adjust (rescaled to a kernel's output constraint, bias product rule) apart.
  out += fmt::format("[COMP. ENC.] {} ({} of tensors missing encodings); user encodings adjusted: {}\n", computed,
                     Percent(computed, missing), adjusted);

  out += fmt::format("[CONVERTS] {}\n", s.converts.size());
  if (!s.converts.empty()) {
    std::set<DType> src, dst;
    std::map<std::pair<DType, DType>, size_t> m;
    for (const auto& c : s.converts) {
      src.insert(c.from);
      dst.insert(c.to);
      ++m[{c.from, c.to}];
    }
    out += fmt::format("    {:>8}", "src\\dst");
    for (DType d : dst) out += fmt::format(" {:>6}", DTypeShortName(d));
    out += "\n";
    for (DType a : src) {
      out += fmt::format("    {:>8}", DTypeShortName(a));
      for (DType b : dst) out += fmt::format(" {:>6}", m.count({a, b}) ? m[{a, b}] : 0);
      out += "\n";
    }
  }
  out += fmt::format("[PRUNED CONVERTS] {}\n", s.pruned_converts.size());
  return out;
}

}  // namespace qairt::pass
