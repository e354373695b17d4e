// Inject convert ops (spec "Insert converts"). Runs twice: after data-movement
// propagation (the chain-boundary converts it queued) and after kernel
// selection, when every op input whose tensor carries another encoding than
// the selected kernel needs gets a Convert (fixed -> fixed), Quantize,
// Dequantize or Cast. The model's datatype is first converted to the
// user-specified encoding and then, if the kernel selected another one, to
// that (two-step rule). Graph inputs and outputs keep the model's datatype:
// a Quantize follows a float input with a fixed-point encoding and a
// Dequantize precedes such an output. Converts planned twice for the same
// tensor and encoding, and converts to the encoding the tensor already has,
// are pruned before they reach the graph.
#include <fmt/format.h>

#include "passes/adapt.h"
#include "passes/quant_log.h"
#include "passes/passes.h"

namespace qairt::pass {

namespace {

bool SameEncoding(const std::optional<Encoding>& a, const std::optional<Encoding>& b) {
  if (!a || !b) return !a && !b;
  Encoding x = *a, y = *b;
  x.overridden = y.overridden = false;
  return x == y;
}

DType CarriedDType(const Tensor& t) { return t.encoding ? t.encoding->dtype : t.dtype; }

// Graph inputs: the app writes the model's float type, a Quantize makes the
// user's encoding.
std::vector<ConvertSite> PlanInputQuantizes(Session& s) {
  Graph& g = s.graph();
  std::vector<ConvertSite> sites;
  if (!s.options().preserve_io_datatype) return sites;
  for (TensorId x : g.inputs()) {
    const Tensor& t = g.tensor(x);
    if (t.is_output || !t.encoding || !IsFixedPoint(t.encoding->dtype) || !IsFloat(t.dtype)) continue;
    ConvertSite site;
    site.source = x;
    site.to = *t.encoding;
    site.consumers = t.consumers;
    site.why = fmt::format("graph input keeps its datatype {}", DTypeShortName(t.dtype));
    sites.push_back(std::move(site));
  }
  return sites;
}

void PlanAfterSelection(Session& s) {
  Graph& g = s.graph();
  const bool preserve_io = s.options().preserve_io_datatype;
  for (OpId id = 0; id < g.op_count(); ++id) {
    const OpRecord* rec = s.find_op_record(id);
    if (!rec || rec->injected || rec->failed || rec->needed_in.empty()) continue;
    const Op& op = g.op(id);
    for (size_t i = 0; i < op.inputs.size() && i < rec->needed_in.size(); ++i) {
      const TensorId t = op.inputs[i];
      if (t == kInvalidId || !rec->needed_in[i]) continue;
      const Tensor& tensor = g.tensor(t);
      if (tensor.kind == TensorKind::kStatic) continue;  // requantized offline
      const Encoding& need = *rec->needed_in[i];
      // What the tensor carries once graph inputs are quantized.
      std::optional<Encoding> have = tensor.encoding;
      if (SameEncoding(have, need)) continue;
      if (!have && !IsFloat(tensor.dtype) && !IsFixedPoint(tensor.dtype)) {
        if (tensor.dtype == need.dtype) continue;
      }
      ConvertSite site;
      site.source = t;
      site.to = need;
      site.to.overridden = false;
      site.consumers = {Use{id, static_cast<uint32_t>(i)}};
      const auto& user = s.tensor_record(t).requested_encoding;
      if (user && have && IsFixedPoint(user->dtype) && !SameEncoding(user, have) && !SameEncoding(user, need) &&
          user->dtype != need.dtype && !ConvertOpType(s.target(), have->dtype, user->dtype).empty() &&
          !ConvertOpType(s.target(), user->dtype, need.dtype).empty())
        site.via = *user;
      site.why = fmt::format("{} ({}) input {} needs {}", op.name, op.type, i, DTypeShortName(need.dtype));
      s.pending_converts.push_back(std::move(site));
    }
  }
  if (preserve_io) {
    for (TensorId y : g.outputs()) {
      const Tensor& t = g.tensor(y);
      const DType model = s.tensor_record(y).original_dtype;
      if (t.kind == TensorKind::kInput || !t.encoding || !IsFixedPoint(t.encoding->dtype) || !IsFloat(model)) continue;
      ConvertSite site;
      site.source = y;
      site.to = FloatEncoding(model);
      site.graph_output = true;
      site.why = fmt::format("graph output keeps its datatype {}", DTypeShortName(model));
      s.pending_converts.push_back(std::move(site));
    }
  }
}

Status Materialize(Session& s, const ConvertSite& site) {
  Graph& g = s.graph();
  const std::string source_name = g.tensor(site.source).name;
  std::vector<Encoding> steps;
  if (site.via) steps.push_back(*site.via);
  steps.push_back(site.to);
  // Check every step first: nothing is added for a site that cannot be built.
  std::vector<std::string> types;
  const Tensor& src = g.tensor(site.source);
  DType from = src.kind == TensorKind::kInput && IsFloat(src.dtype) ? src.dtype : CarriedDType(src);
  for (const Encoding& e : steps) {
    std::string type = ConvertOpType(s.target(), from, e.dtype);
    if (type.empty()) {
      s.Error("no-convert",
              fmt::format("no Cast/Convert from {} to {} for tensor '{}' on target '{}' ({})", DTypeShortName(from),
                          DTypeShortName(e.dtype), source_name, s.target().name, site.why),
              {}, source_name);
      return Status::Ok();
    }
    types.push_back(std::move(type));
    from = e.dtype;
  }
  if (site.graph_output) {
    // The app reads the original name: the fixed-point tensor is renamed.
    const DType carried = CarriedDType(g.tensor(site.source));
    QAIRT_RETURN_IF_ERROR(
        g.RenameTensor(site.source, s.UniqueTensorName(fmt::format("{}_{}", source_name, DTypeShortName(carried)))));
  }
  TensorId current = site.source;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Encoding& e = steps[i];
    const DType in_dtype = g.tensor(current).kind == TensorKind::kInput && IsFloat(g.tensor(current).dtype)
                               ? g.tensor(current).dtype
                               : CarriedDType(g.tensor(current));
    const bool last = i + 1 == steps.size();
    const std::string name = site.graph_output && last
                                 ? source_name
                                 : s.UniqueTensorName(fmt::format("{}_{}", source_name, DTypeShortName(e.dtype)));
    auto out = g.AddTensor(name, e.dtype, g.tensor(site.source).shape);
    if (!out.ok()) return out.status();
    OpSpec spec;
    spec.type = types[i];
    spec.name = s.UniqueOpName(fmt::format("{}_{}_{}", source_name, ToLowerOpName(types[i]), DTypeShortName(e.dtype)));
    spec.inputs = {current};
    spec.outputs = {out.value()};
    auto op = g.AddOp(std::move(spec));
    if (!op.ok()) return op.status();
    Encoding enc = e;
    enc.overridden = false;
    QAIRT_RETURN_IF_ERROR(g.SetEncoding(out.value(), enc));
    TensorRecord& r = s.tensor_record(out.value());
    r.injected = true;
    r.origin = source_name;
    r.original_dtype = e.dtype;
    s.AddReason(out.value(), site.reason);
    OpRecord& orec = s.op_record(op.value());
    orec.injected = true;
    orec.kernel = types[i];
    orec.selected_in = {in_dtype};
    orec.selected_out = {e.dtype};
    s.converts.push_back({in_dtype, e.dtype});
    s.Trace("[INJECT CONVERT] {} ({}): {} {} -> {} {}", g.op(op.value()).name, types[i], g.tensor(current).name,
            DTypeShortName(in_dtype), name, DTypeShortName(e.dtype));
    current = out.value();
  }
  for (const Use& u : site.consumers) QAIRT_RETURN_IF_ERROR(g.SetOpInput(u.op, u.slot, current));
  if (site.graph_output) QAIRT_RETURN_IF_ERROR(g.ReplaceGraphOutput(site.source, current));
  return Status::Ok();
}

}  // namespace

std::string ToLowerOpName(std::string_view type) {
  std::string s;
  for (char c : type) s += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

namespace {

// Materializes the converts planned so far (s.pending_converts), pruning a
// second convert of a tensor to the same encoding and a convert to what the
// tensor already carries.
Status MaterializePlanned(Session& s) {
  Graph& g = s.graph();
  std::vector<ConvertSite> sites = std::move(s.pending_converts);
  s.pending_converts.clear();

  std::vector<ConvertSite> kept;
  for (ConvertSite& site : sites) {
    const Tensor& t = g.tensor(site.source);
    s.Trace("[IDENT. CONVERT] {} {} -> {}{}: {}", t.name, DTypeShortName(CarriedDType(t)),
            site.via ? std::string(DTypeShortName(site.via->dtype)) + " -> " : std::string(),
            DTypeShortName(site.to.dtype), "", site.why);
    // Pruned: a second convert of the same tensor to the same encoding(s).
    bool merged = false;
    for (ConvertSite& k : kept) {
      if (k.source == site.source && SameEncoding(k.to, site.to) && SameEncoding(k.via, site.via) &&
          k.graph_output == site.graph_output) {
        k.consumers.insert(k.consumers.end(), site.consumers.begin(), site.consumers.end());
        merged = true;
        break;
      }
    }
    if (merged) {
      s.pruned_converts.emplace_back(t.name, fmt::format("{}->{}", DTypeShortName(CarriedDType(t)),
                                                         DTypeShortName(site.to.dtype)));
      s.Trace("[PRUNED] {} -> {}: same conversion of '{}' already planned", DTypeShortName(CarriedDType(t)),
              DTypeShortName(site.to.dtype), t.name);
      continue;
    }
    // Pruned: converting to what the tensor already carries.
    if (!site.via && !site.graph_output && t.kind != TensorKind::kInput && SameEncoding(t.encoding, site.to)) {
      s.pruned_converts.emplace_back(t.name, "identity");
      s.Trace("[PRUNED] '{}' already carries {}", t.name, EncodingTraceText(site.to));
      continue;
    }
    kept.push_back(std::move(site));
  }
  for (const ConvertSite& site : kept) QAIRT_RETURN_IF_ERROR(Materialize(s, site));
  return Status::Ok();
}

}  // namespace

Status InjectDataMovementConverts(Session& s) { return MaterializePlanned(s); }

Status InjectConverts(Session& s) {
  Graph& g = s.graph();
  for (const ConvertSite& site : PlanInputQuantizes(s)) {
    s.Trace("[IDENT. CONVERT] {}: {}", g.tensor(site.source).name, site.why);
    QAIRT_RETURN_IF_ERROR(Materialize(s, site));
    QAIRT_RETURN_IF_ERROR(g.SetEncoding(site.source, FloatEncoding(g.tensor(site.source).dtype)));
  }
  PlanAfterSelection(s);
  QAIRT_RETURN_IF_ERROR(MaterializePlanned(s));
  // Graph inputs now carry the model's float type; every other activation's
  // datatype follows its encoding (spec: "later snapshots may show the
  // datatype updated to match").
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    if (t.kind == TensorKind::kStatic) continue;
    if (t.kind == TensorKind::kInput && s.options().preserve_io_datatype) continue;
    if (!t.encoding || (!IsFloat(t.dtype) && !IsFixedPoint(t.dtype))) continue;
    if (t.encoding->kind == EncodingKind::kArrayOf) continue;
    QAIRT_RETURN_IF_ERROR(g.SetTensorDType(id, t.encoding->dtype));
  }
  return Status::Ok();
}

}  // namespace qairt::pass
