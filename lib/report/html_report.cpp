#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ir/dtype.h"
#include "ir/encoding.h"
#include "support/json_writer.h"

namespace qairt::report {
namespace {

// Rows per collapsible section of the graph, and the op count above which
// only the first section starts open: a large graph stays quick to open and
// to search, and its parts unfold on demand.
constexpr size_t kRowsPerSection = 24;
constexpr size_t kOpsShownOpen = 400;

void AppendEscaped(std::string* out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&': *out += "&amp;"; break;
      case '<': *out += "&lt;"; break;
      case '>': *out += "&gt;"; break;
      case '"': *out += "&quot;"; break;
      case '\'': *out += "&#39;"; break;
      default: *out += c;
    }
  }
}

std::string Escaped(std::string_view s) {
  std::string out;
  AppendEscaped(&out, s);
  return out;
}

std::string_view PrecisionOfDType(DType d, uint32_t bitwidth) {
  if (IsFixedPoint(d) || IsInteger(d)) {
    uint32_t bits = bitwidth ? bitwidth : DTypeBits(d);
    if (bits <= 4) return "int4";
    if (bits <= 8) return "int8";
    if (bits <= 16) return "int16";
    return "int32";
  }
  switch (d) {
    case DType::kFloat16: return "fp16";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat32: return "fp32";
    default: return "other";
  }
}

bool IsConvertOp(std::string_view type) {
  return type == "Convert" || type == "Quantize" || type == "Dequantize" || type == "Cast";
}

bool HasReason(const ReportData& d, const std::string& tensor, std::string_view token) {
  auto it = d.reasons.find(tensor);
  if (it == d.reasons.end()) return false;
  std::string_view r = it->second;
  size_t pos = 0;
  while (pos <= r.size()) {
    size_t end = r.find('^', pos);
    if (end == std::string_view::npos) end = r.size();
    if (r.substr(pos, end - pos) == token) return true;
    pos = end + 1;
  }
  return false;
}

// An op fell back to float when its requested dtypes were adapted or the
// passes gave one of its outputs the FLOAT_FALLBACK reason.
bool IsFallback(const Graph& g, const ReportData& d, OpId id) {
  const Op& op = g.op(id);
  if (auto it = d.ops.find(op.name); it != d.ops.end() && it->second.adapted) return true;
  for (TensorId t : op.outputs)
    if (HasReason(d, g.tensor(t).name, "FLOAT_FALLBACK")) return true;
  return false;
}

int32_t SuperGroupOf(const Graph& g, const ReportData& d, OpId id) {
  auto it = d.ops.find(g.op(id).name);
  return it == d.ops.end() ? -1 : it->second.super_group;
}

// An op inside a super group whose output only the group's next op reads:
// the fused kernel never materializes that tensor, so a per-layer figure of
// it (taken at its nominal encoding) says nothing about the device.
bool FeedsItsGroupOnly(const Graph& g, const ReportData& d, OpId id) {
  const int32_t group = SuperGroupOf(g, d, id);
  if (group < 0 || g.op(id).outputs.size() != 1) return false;
  const Tensor& t = g.tensor(g.op(id).outputs[0]);
  if (t.is_output || t.consumers.empty()) return false;
  for (const Use& u : t.consumers)
    if (SuperGroupOf(g, d, u.op) != group) return false;
  return true;
}

// The per-layer figure of an op's output (callers skip ops that feed only their super group).
const Accuracy* OpAccuracy(const Graph& g, const ReportData& d, OpId id) {
  for (TensorId t : g.op(id).outputs)
    if (auto it = d.layers.find(g.tensor(t).name); it != d.layers.end()) return &it->second;
  return nullptr;
}

std::string FormatDb(double db) { return std::isinf(db) ? std::string("exact") : fmt::format("{:.1f} dB", db); }

std::string_view AccuracyClass(double db) {
  if (db >= 30) return "good";
  if (db >= 15) return "fair";
  return "poor";
}

// Layers top to bottom: an op sits one row below the lowest of its
// producers; within a row, ops follow the mean position of their producers
// (one barycentre sweep), which keeps chains straight and crossings few.
std::vector<std::vector<OpId>> LayoutRows(const Graph& g, const std::vector<OpId>& order) {
  std::vector<size_t> row(g.op_count(), 0);
  std::vector<double> pos(g.op_count(), 0);
  std::vector<std::vector<OpId>> rows;
  for (OpId id : order) {
    size_t r = 0;
    for (TensorId t : g.op(id).inputs) {
      if (t == kInvalidId || !g.valid_tensor(t)) continue;
      OpId p = g.tensor(t).producer;
      if (p != kInvalidId) r = std::max(r, row[p] + 1);
    }
    row[id] = r;
    if (rows.size() <= r) rows.resize(r + 1);
    rows[r].push_back(id);
  }
  for (auto& ids : rows) {
    std::vector<std::pair<double, OpId>> keyed;
    keyed.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      double sum = 0;
      size_t n = 0;
      for (TensorId t : g.op(ids[i]).inputs) {
        if (t == kInvalidId || !g.valid_tensor(t) || g.tensor(t).producer == kInvalidId) continue;
        sum += pos[g.tensor(t).producer];
        ++n;
      }
      keyed.emplace_back(n ? sum / double(n) : double(i) / double(ids.size()), ids[i]);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keyed.size(); ++i) {
      ids[i] = keyed[i].second;
      pos[ids[i]] = (double(i) + 0.5) / double(keyed.size());
    }
  }
  return rows;
}

void WriteEncoding(JsonWriter& w, const Encoding& e) {
  w.BeginObject();
  w.Key("kind").String(EncodingKindName(e.kind));
  w.Key("dtype").String(DTypeShortName(e.dtype));
  w.Key("bitwidth").UInt(e.effective_bitwidth());
  if (e.is_fixed_point()) w.Key("symmetry").String(SymmetryName(e.symmetry));
  if (e.axis >= 0) w.Key("axis").Int(e.axis);
  if (e.overridden) w.Key("overridden").Bool(true);
  if (!e.scales.empty()) {
    auto [lo, hi] = std::minmax_element(e.scales.begin(), e.scales.end());
    w.Key("scales").UInt(e.scales.size());
    w.Key("scale_min").Double(*lo);
    w.Key("scale_max").Double(*hi);
  }
  if (!e.offsets.empty()) {
    auto [lo, hi] = std::minmax_element(e.offsets.begin(), e.offsets.end());
    w.Key("offset_min").Int(*lo);
    w.Key("offset_max").Int(*hi);
  }
  if (e.kind == EncodingKind::kPerTensor && e.is_fixed_point() && e.scales.size() == 1 && e.offsets.size() == 1) {
    QuantRange q = QuantRangeOf(e.dtype, e.effective_bitwidth());
    w.Key("min").Double(double(q.qmin + e.offsets[0]) * e.scales[0]);
    w.Key("max").Double(double(q.qmax + e.offsets[0]) * e.scales[0]);
  }
  if (!e.block_sizes.empty()) {
    w.Key("block_sizes").BeginArray();
    for (int64_t b : e.block_sizes) w.Int(b);
    w.EndArray();
  }
  if (e.decompressed_bitwidth) w.Key("decompressed_bitwidth").UInt(e.decompressed_bitwidth);
  if (!e.sub_encodings.empty()) w.Key("sub_encodings").UInt(e.sub_encodings.size());
  w.EndObject();
}

void WriteAccuracy(JsonWriter& w, const Accuracy& a) {
  w.BeginObject();
  w.Key("sqnr_db").Double(a.sqnr_db);
  w.Key("exact").Bool(std::isinf(a.sqnr_db));
  w.Key("cosine").Double(a.cosine);
  w.Key("max_abs").Double(a.max_abs);
  w.EndObject();
}

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    default: return "note";
  }
}

// The data the script needs for the details panel, the edges and the super
// group outlines. '<' is written as \u003c so no string can end the <script>.
std::string DataJson(const Graph& g, const ReportData& d) {
  JsonWriter w;
  w.BeginObject();
  w.Key("ops").BeginArray();
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Op& op = g.op(id);
    w.BeginObject();
    w.Key("name").String(op.name);
    w.Key("type").String(op.type);
    if (!op.source_name.empty()) w.Key("source").String(op.source_name);
    if (!op.source_op_type.empty()) w.Key("source_type").String(op.source_op_type);
    w.Key("precision").String(OpPrecision(g, id));
    if (auto it = d.ops.find(op.name); it != d.ops.end()) {
      w.Key("kernel").String(it->second.kernel);
      w.Key("super_group").Int(it->second.super_group);
      w.Key("adapted").Bool(it->second.adapted);
    }
    w.Key("inputs").BeginArray();
    for (TensorId t : op.inputs) t == kInvalidId ? w.Int(-1) : w.UInt(t);
    w.EndArray();
    w.Key("outputs").BeginArray();
    for (TensorId t : op.outputs) w.UInt(t);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("tensors").BeginArray();
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    w.BeginObject();
    w.Key("name").String(t.name);
    w.Key("dtype").String(DTypeShortName(t.dtype));
    w.Key("shape").String(t.shape.ToString());
    w.Key("kind").String(t.kind == TensorKind::kStatic  ? "static"
                         : t.kind == TensorKind::kInput ? "input"
                                                        : "activation");
    if (t.is_output) w.Key("output").Bool(true);
    if (t.encoding) {
      w.Key("encoding");
      WriteEncoding(w, *t.encoding);
    }
    if (auto it = d.reasons.find(t.name); it != d.reasons.end() && !it->second.empty())
      w.Key("reasons").String(it->second);
    if (auto it = d.layers.find(t.name); it != d.layers.end()) {
      w.Key("accuracy");
      WriteAccuracy(w, it->second);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("diagnostics").BeginArray();
  for (const Diag& diag : d.diagnostics) {
    w.BeginObject();
    w.Key("severity").String(SeverityName(diag.severity));
    w.Key("code").String(diag.code);
    w.Key("op").String(diag.op);
    w.Key("tensor").String(diag.tensor);
    w.Key("text").String(diag.Format());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  std::string json = w.Take();
  std::string out;
  out.reserve(json.size());
  for (char c : json) c == '<' ? out += "\\u003c" : out += c;
  return out;
}

void WriteOpBox(std::string* h, const Graph& g, const ReportData& d, OpId id) {
  const Op& op = g.op(id);
  std::string_view precision = OpPrecision(g, id);
  *h += fmt::format("<div class=\"op p-{}", precision);
  if (IsConvertOp(op.type)) *h += " convert";
  if (IsFallback(g, d, id)) *h += " fallback";
  *h += fmt::format("\" id=\"o{}\" data-idx=\"{}\" data-op=\"", id, id);
  AppendEscaped(h, op.name);
  if (auto it = d.ops.find(op.name); it != d.ops.end() && it->second.super_group >= 0)
    *h += fmt::format("\" data-sg=\"{}", it->second.super_group);
  *h += "\" title=\"";
  AppendEscaped(h, op.name);
  *h += "\"><span class=\"ty\">";
  AppendEscaped(h, op.type);
  *h += fmt::format("</span><span class=\"pr\">{}</span>", precision);
  if (FeedsItsGroupOnly(g, d, id)) {
    if (!d.layers.empty())
      *h += "<span class=\"acc fused\" title=\"inside a fused super group: not materialized\">fused</span>";
  } else if (const Accuracy* a = OpAccuracy(g, d, id)) {
    *h += fmt::format("<span class=\"acc {}\">{}</span>", AccuracyClass(a->sqnr_db), FormatDb(a->sqnr_db));
  }
  *h += "<span class=\"nm\">";
  AppendEscaped(h, op.name);
  *h += "</span></div>";
}

void WriteGraph(std::string* h, const Graph& g, const ReportData& d, const std::vector<std::vector<OpId>>& rows) {
  *h += "<div id=\"graph\"><svg id=\"edges\" aria-hidden=\"true\"></svg><div class=\"row inputs\">";
  for (TensorId t : g.inputs())
    *h += fmt::format("<div class=\"io\" id=\"t{}\" data-tensor=\"{}\">{} <small>{}</small></div>", t,
                      Escaped(g.tensor(t).name), Escaped(g.tensor(t).name), Escaped(g.tensor(t).shape.ToString()));
  *h += "</div>";
  const bool all_open = g.op_count() <= kOpsShownOpen;
  for (size_t first = 0; first < rows.size(); first += kRowsPerSection) {
    size_t last = std::min(rows.size(), first + kRowsPerSection);
    size_t ops = 0;
    for (size_t r = first; r < last; ++r) ops += rows[r].size();
    *h += fmt::format("<details class=\"section\"{}><summary>rows {}–{} · {} ops</summary>",
                      all_open || first == 0 ? " open" : "", first + 1, last, ops);
    for (size_t r = first; r < last; ++r) {
      *h += "<div class=\"row\">";
      for (OpId id : rows[r]) WriteOpBox(h, g, d, id);
      *h += "</div>";
    }
    *h += "</details>";
  }
  *h += "</div>";
}

void WriteSummary(std::string* h, const Graph& g, const ReportData& d) {
  std::map<std::string_view, size_t> by_precision;
  size_t converts = 0, fallbacks = 0;
  for (OpId id = 0; id < g.op_count(); ++id) {
    ++by_precision[OpPrecision(g, id)];
    if (IsConvertOp(g.op(id).type)) ++converts;
    if (IsFallback(g, d, id)) ++fallbacks;
  }
  *h += "<div id=\"summary\"><p>";
  *h += fmt::format("graph <b>{}</b> · {} ops · {} tensors", Escaped(g.name()), g.op_count(), g.tensor_count());
  if (!d.target.empty()) *h += fmt::format(" · target <b>{}</b>", Escaped(d.target));
  if (!d.producer.empty()) *h += fmt::format(" · {}", Escaped(d.producer));
  *h += "</p><p class=\"legend\">";
  for (auto& [p, n] : by_precision) *h += fmt::format("<span class=\"key p-{}\">{} × {}</span>", p, p, n);
  *h += fmt::format("<span class=\"key convert\">convert × {}</span>", converts);
  *h += fmt::format("<span class=\"key fallback\">float fallback × {}</span>", fallbacks);
  *h += "<span class=\"key sg\">super group</span></p>";
  size_t errors = CountErrors(d.diagnostics), warnings = CountSeverity(d.diagnostics, Severity::kWarning);
  if (errors || warnings) *h += fmt::format("<p><a href=\"#diagnostics\">{} errors, {} warnings</a></p>", errors, warnings);
  if (!d.outputs.empty()) {
    const OutputAccuracy& worst = *std::min_element(d.outputs.begin(), d.outputs.end(), [](auto& a, auto& b) {
      return a.accuracy.sqnr_db < b.accuracy.sqnr_db;
    });
    *h += fmt::format("<p>accuracy on {} samples: worst output <b>{}</b> {} (cosine {:.5f})</p>", d.samples,
                      Escaped(worst.name), FormatDb(worst.accuracy.sqnr_db), worst.accuracy.cosine);
  }
  *h += "</div>";
}

void WriteSections(std::string* h, const Graph& g, const ReportData& d) {
  if (!d.diagnostics.empty()) {
    *h += "<section id=\"diagnostics\"><h2>Diagnostics</h2><ul>";
    for (const Diag& diag : d.diagnostics)
      *h += fmt::format("<li class=\"{}\">{}</li>", SeverityName(diag.severity), Escaped(diag.Format()));
    *h += "</ul></section>";
  }
  if (!d.outputs.empty() || !d.layers.empty()) {
    *h += fmt::format("<section id=\"accuracy\"><h2>Accuracy against float ({} samples)</h2>", d.samples);
    if (!d.outputs.empty()) {
      *h += "<table><tr><th>output</th><th>SQNR</th><th>cosine</th><th>max abs</th><th>argmax agree</th></tr>";
      for (const OutputAccuracy& o : d.outputs)
        *h += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.6f}</td><td>{:.4g}</td><td>{}</td></tr>",
                          Escaped(o.name), FormatDb(o.accuracy.sqnr_db), o.accuracy.cosine, o.accuracy.max_abs,
                          // Per position where an output has several per sample (a sequence's steps).
                          o.argmax_positions > d.samples
                              ? fmt::format("{}/{} positions", o.argmax_positions_agree, o.argmax_positions)
                              : fmt::format("{}/{}", o.argmax_agree, d.samples));
      *h += "</table>";
    }
    if (!d.layers.empty()) {
      std::vector<std::pair<std::string, Accuracy>> worst;
      for (const auto& [name, a] : d.layers) {
        const auto t = g.FindTensor(name);
        const OpId producer = t ? g.tensor(*t).producer : kInvalidId;
        if (producer != kInvalidId && FeedsItsGroupOnly(g, d, producer)) continue;  // not on the device
        worst.emplace_back(name, a);
      }
      std::sort(worst.begin(), worst.end(), [](auto& a, auto& b) {
        return a.second.sqnr_db != b.second.sqnr_db ? a.second.sqnr_db < b.second.sqnr_db : a.first < b.first;
      });
      if (worst.size() > 20) worst.resize(20);
      *h += "<h3>Least accurate tensors</h3><table><tr><th>tensor</th><th>SQNR</th><th>cosine</th></tr>";
      for (auto& [name, a] : worst)
        *h += fmt::format("<tr><td><a href=\"#\" class=\"focus-tensor\" data-tensor=\"{}\">{}</a></td>"
                          "<td>{}</td><td>{:.6f}</td></tr>",
                          Escaped(name), Escaped(name), FormatDb(a.sqnr_db), a.cosine);
      *h += "</table>";
    }
    *h += "</section>";
  }
  if (!d.stats.empty()) *h += fmt::format("<section id=\"stats\"><h2>Stats summary</h2><pre>{}</pre></section>", Escaped(d.stats));
  if (!d.sensitivity_svg.empty())
    *h += fmt::format("<section id=\"sensitivity\"><h2>Sensitivity</h2><div class=\"plot\">{}</div></section>",
                      d.sensitivity_svg);
  if (!d.options.empty()) {
    *h += "<section id=\"options\"><h2>Options</h2><table><tr><th>option</th><th>source</th><th>value</th></tr>";
    for (const OptionEntry& o : d.options)
      *h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>", Escaped(o.key), Escaped(o.source),
                        Escaped(o.value));
    *h += "</table></section>";
  }
}

}  // namespace

std::string_view OpPrecision(const Graph& graph, OpId op) {
  const Op& o = graph.op(op);
  if (o.outputs.empty()) return "other";
  const Tensor& t = graph.tensor(o.outputs[0]);
  if (t.encoding) {
    const Encoding& e = *t.encoding;
    if (e.kind == EncodingKind::kArrayOf && !e.sub_encodings.empty())
      return PrecisionOfDType(e.sub_encodings[0].dtype, e.sub_encodings[0].bitwidth);
    return PrecisionOfDType(e.dtype, e.bitwidth);
  }
  return PrecisionOfDType(t.dtype, 0);
}

Result<std::string> RenderHtml(const Graph& graph, const ReportData& data) {
  Result<std::vector<OpId>> order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  const std::vector<std::vector<OpId>> rows = LayoutRows(graph, order.value());
  const std::string title = data.title.empty() ? graph.name() : data.title;

  std::string h;
  h.reserve(4096 + graph.op_count() * 400 + graph.tensor_count() * 200);
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">";
  h += fmt::format("<title>qairt report: {}</title><style>{}</style></head><body>\n", Escaped(title), ReportCss());
  h += fmt::format("<header><h1>qairt report: {}</h1>", Escaped(title));
  WriteSummary(&h, graph, data);
  h += "<div id=\"tools\"><input id=\"search\" type=\"search\" placeholder=\"search ops by name or type\" "
       "aria-label=\"search ops\"><span id=\"hits\"></span>"
       "<button id=\"expand\" type=\"button\">expand all</button>"
       "<button id=\"collapse\" type=\"button\">collapse all</button></div></header>\n<main>";
  WriteGraph(&h, graph, data, rows);
  h += "<aside id=\"details\"><p class=\"hint\">Click an op to see its encodings, kernel and reasons.</p></aside>"
       "</main>\n";
  WriteSections(&h, graph, data);
  h += "\n<script type=\"application/json\" id=\"qairt-data\">";
  h += DataJson(graph, data);
  h += "</script>\n<script>";
  h += ReportScript();
  h += "</script>\n</body></html>\n";
  return h;
}

}  // namespace qairt::report
