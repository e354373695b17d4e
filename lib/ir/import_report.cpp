#include "ir/import_report.h"

#include <fmt/format.h>

#include <map>

#include "ir/shape_json.h"
#include "support/json_writer.h"

namespace qairt {
namespace {

std::string ShapeText(const Shape& s) { return s.ToString(); }

struct ParamStats {
  uint64_t count = 0;
  uint64_t bytes = 0;
};

ParamStats Params(const Graph& g) {
  ParamStats p;
  for (TensorId id = 0; id < g.tensor_count(); ++id) {
    const Tensor& t = g.tensor(id);
    if (t.kind != TensorKind::kStatic) continue;
    p.count += t.shape.element_count().value_or(0);
    p.bytes += t.data ? t.data->size() : 0;
  }
  return p;
}


void WriteIo(JsonWriter& w, const Graph& g, const std::vector<TensorId>& ids) {
  w.BeginArray();
  for (TensorId id : ids) {
    const Tensor& t = g.tensor(id);
    w.BeginObject();
    w.Key("name").String(t.name);
    w.Key("dtype").String(DTypeName(t.dtype));
    w.Key("shape");
    WriteShapeJson(w, t.shape);
    w.Key("static").Bool(t.shape.fully_known());
    w.EndObject();
  }
  w.EndArray();
}

std::string SeverityName(Severity s) {
  return s == Severity::kError ? "error" : s == Severity::kWarning ? "warning" : "note";
}

// One entry of "diagnostics": the importer's own, and (with require_static)
// the dynamic dims left, which are errors of the same form.
void WriteDiagnostic(JsonWriter& w, std::string_view severity, std::string_view field, std::string_view message) {
  w.BeginObject();
  w.Key("severity").String(severity);
  w.Key("field").String(field);
  w.Key("message").String(message);
  w.EndObject();
}

}  // namespace

bool ImportSucceeded(const ImportSummaryInput& in) {
  if (!in.graph || HasErrors(in.report->diagnostics)) return false;
  return !in.require_static || in.report->dynamic_dims.empty();
}

std::string ImportReportJson(const ImportSummaryInput& in) {
  const ImportReport& r = *in.report;
  JsonWriter w;
  w.BeginObject();
  w.Key("model").String(in.model);
  w.Key("ok").Bool(ImportSucceeded(in));
  w.Key("producer").String(r.producer);
  w.Key("ir_version").Int(r.ir_version);
  w.Key("opsets").BeginObject();
  for (const auto& [domain, v] : r.opsets) w.Key(domain.empty() ? "ai.onnx" : domain).Int(v);
  w.EndObject();
  if (in.graph) {
    const Graph& g = *in.graph;
    w.Key("inputs");
    WriteIo(w, g, g.inputs());
    w.Key("outputs");
    WriteIo(w, g, g.outputs());
    std::map<std::string, size_t> ir_ops;
    for (OpId id = 0; id < g.op_count(); ++id) ++ir_ops[g.op(id).type];
    w.Key("ir_ops").BeginObject();
    for (const auto& [t, n] : ir_ops) w.Key(t).UInt(n);
    w.EndObject();
    const ParamStats p = Params(g);
    w.Key("parameters").BeginObject();
    w.Key("count").UInt(p.count);
    w.Key("bytes").UInt(p.bytes);
    w.EndObject();
    w.Key("encodings").BeginArray();
    for (TensorId id = 0; id < g.tensor_count(); ++id) {
      const Tensor& t = g.tensor(id);
      if (!t.encoding) continue;
      w.BeginObject();
      w.Key("tensor").String(t.name);
      w.Key("kind").String(EncodingKindName(t.encoding->kind));
      w.Key("dtype").String(DTypeName(t.encoding->dtype));
      w.Key("bitwidth").UInt(t.encoding->effective_bitwidth());
      w.EndObject();
    }
    w.EndArray();
  }
  w.Key("onnx_ops").BeginObject();
  for (const auto& [t, n] : r.source_ops) w.Key(t).UInt(n);
  w.EndObject();
  w.Key("qdq_folded").UInt(r.qdq_folded);
  w.Key("constants_folded").UInt(r.constants_folded);
  w.Key("unsupported").BeginArray();
  for (const auto& u : r.unsupported) w.String(u);
  w.EndArray();
  w.Key("dynamic_dims").BeginArray();
  for (const auto& d : r.dynamic_dims) w.String(d);
  w.EndArray();
  w.Key("diagnostics").BeginArray();
  for (const Diagnostic& d : r.diagnostics) WriteDiagnostic(w, SeverityName(d.severity), d.field, d.message);
  if (in.require_static)
    for (const auto& d : r.dynamic_dims)
      WriteDiagnostic(w, "error", "shape", "dynamic dimension left: " + d + " (fix it with --define_symbol or --input_dim)");
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string ImportReportText(const ImportSummaryInput& in) {
  const ImportReport& r = *in.report;
  std::string s = fmt::format("model: {}\nproducer: {} (IR {})\nopsets:", in.model, r.producer.empty() ? "?" : r.producer,
                              r.ir_version);
  for (const auto& [domain, v] : r.opsets) s += fmt::format(" {}={}", domain.empty() ? "ai.onnx" : domain, v);
  s += "\n";
  if (in.graph) {
    const Graph& g = *in.graph;
    auto io = [&](const char* title, const std::vector<TensorId>& ids) {
      s += fmt::format("{}:\n", title);
      for (TensorId id : ids)
        s += fmt::format("  {:<24} {:<10} {}\n", g.tensor(id).name, DTypeName(g.tensor(id).dtype),
                         ShapeText(g.tensor(id).shape));
    };
    io("inputs", g.inputs());
    io("outputs", g.outputs());
    const ParamStats p = Params(g);
    s += fmt::format("parameters: {} ({:.2f} MiB)\n", p.count, static_cast<double>(p.bytes) / (1024.0 * 1024.0));
    std::map<std::string, size_t> ir_ops;
    for (OpId id = 0; id < g.op_count(); ++id) ++ir_ops[g.op(id).type];
    // The source's own unit: TFLite operators or ONNX nodes.
    s += fmt::format("ops: {} {} -> {} IR ops\n", [&] {
      size_t n = 0;
      for (const auto& [t, c] : r.source_ops) n += c;
      return n;
    }(), r.opsets.count("tflite") ? "TFLite operators" : "ONNX nodes", g.op_count());
    for (const auto& [t, n] : ir_ops) s += fmt::format("  {:<24} {}\n", t, n);
    size_t encoded = 0;
    for (TensorId id = 0; id < g.tensor_count(); ++id) encoded += g.tensor(id).encoding ? 1 : 0;
    s += fmt::format("encodings: {} tensors (Q/DQ nodes folded: {})\n", encoded, r.qdq_folded);
  }
  s += fmt::format("constant nodes folded: {}\n", r.constants_folded);
  if (!r.unsupported.empty()) {
    s += fmt::format("unsupported ops ({}):\n", r.unsupported.size());
    for (const auto& u : r.unsupported) s += "  " + u + "\n";
  }
  if (!r.dynamic_dims.empty()) {
    s += fmt::format("dynamic dims ({}){}:\n", r.dynamic_dims.size(),
                     in.require_static ? " - QNN needs static shapes: use --define_symbol or --input_dim" : "");
    size_t shown = 0;
    for (const auto& d : r.dynamic_dims) {
      if (++shown > 20) {
        s += fmt::format("  ... and {} more\n", r.dynamic_dims.size() - 20);
        break;
      }
      s += "  " + d + "\n";
    }
  }
  size_t errors = 0, warnings = 0;
  for (const Diagnostic& d : r.diagnostics) {
    if (d.severity == Severity::kError) ++errors;
    if (d.severity == Severity::kWarning) ++warnings;
  }
  for (const Diagnostic& d : r.diagnostics) s += fmt::format("{}: {}\n", SeverityName(d.severity), d.message);
  s += fmt::format("result: {} ({} errors, {} warnings{})\n", ImportSucceeded(in) ? "OK" : "FAILED", errors, warnings,
                   in.require_static && !r.dynamic_dims.empty() ? ", dynamic dims left" : "");
  return s;
}

}  // namespace qairt
