// Formatting and rendering of Diag records (text, JSON, SARIF 2.1.0 for IDEs
// and code-scanning tools), and the catalogue of rule ids.
#include "support/diagnostic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <utility>

#include "support/json_writer.h"

namespace qairt {
namespace {

const char* Level(Severity s) {
  return s == Severity::kError ? "error" : s == Severity::kWarning ? "warning" : "note";
}

// Every code any producer uses, with the sentence SARIF viewers show. A new
// code is added here in the same change that first reports it.
constexpr std::pair<std::string_view, std::string_view> kRules[] = {
    // encodings files
    {"json-syntax", "The file is not valid JSON."},
    {"json-non-finite", "NaN/Infinity literals are not JSON (Python writes them unless allow_nan=False)."},
    {"json-duplicate-key", "A key appears twice in one object; JSON readers disagree on which one wins."},
    {"json-depth", "Nesting deeper than the reader's limit."},
    {"file-size", "The file exceeds the size limit."},
    {"file-encoding", "The file is not plain UTF-8 (BOM, UTF-16, invalid bytes)."},
    {"io", "The file cannot be read or written."},
    {"version", "Format version missing, unknown or overridden."},
    {"wrong-type", "A value has the wrong JSON type."},
    {"missing-field", "A required field is missing."},
    {"value-range", "A value is out of range (scale <= 0, zero point outside the grid, bad bitwidth, ...)."},
    {"shape-mismatch", "Array sizes do not match each other or the tensor's shape."},
    {"invalid-encoding", "The encoding is inconsistent."},
    {"symmetry", "Symmetry flag and offset disagree."},
    {"unknown-key", "A key the format does not define (ignored)."},
    {"unknown-tensor", "The name is not a tensor of the graph."},
    {"duplicate-entry", "Two entries for one tensor."},
    {"axis-inference", "The channel or block axis could not be inferred from the tensor's use."},
    {"not-quantizable", "The tensor holds integers or booleans, which are not quantized."},
    {"overrides-model", "The override replaces an encoding from the model's Q-DQ nodes."},
    {"missing-encoding", "Floating-point tensors left without an encoding."},
    {"float-entry", "An entry without dtype: the tensor stays in floating point."},
    {"unsupported", "A feature of the format this library does not support."},
    {"format-limit", "The chosen output format cannot hold this encoding."},
    // graph validation (qairt_diag_kind)
    {"cycle", "The ops form a cycle."},
    {"duplicate-tensor-name", "Two tensors share a name."},
    {"duplicate-op-name", "Two ops share a name."},
    {"dangling-tensor", "A tensor is declared by name and never defined."},
    {"missing-producer", "An activation or output that no op produces."},
    {"multiple-producers", "A tensor produced by more than one op."},
    {"dtype-mismatch", "An op's input or output has a data type the op does not accept."},
    {"arity", "An op has the wrong number of inputs or outputs."},
    {"attribute", "An attribute is missing or invalid."},
    {"unknown-op-type", "The op type is not in the IR's schema."},
    {"no-outputs", "The graph has no outputs."},
    {"static-data", "A static tensor's data does not match its shape and data type."},
    // target processing
    {"no-kernel", "No kernel of the target accepts the op with these encodings (the op would be rejected)."},
    {"precision-needs-encodings", "The requested precision is supported only with other encodings."},
    {"bias-encoding", "A bias encoding cannot be computed from its input and weight encodings."},
    {"bias-encoding-replaced", "A given bias encoding is replaced by input scale x weight scale."},
    {"bias-saturation", "Bias values do not fit the bias grid at input scale x weight scale."},
    {"static-range", "A static value does not fit the integer type the kernel needs."},
    {"static-quantize", "A static tensor cannot be quantized."},
    {"unknown-shape", "A static tensor has no known shape."},
    {"no-convert", "The target has no Cast/Convert between the two data types."},
    {"fp16-audit", "Float tensors remain on a target without float compute."},
    {"super-group-encoding", "A super group's shared encoding cannot be formed."},
    // conversion stages without finer codes
    {"import", "The model cannot be imported."},
    {"quantization-overrides", "The quantization overrides cannot be applied."},
    {"target", "The target cannot run the model as given."},
    {"rewrites", "A graph rewrite failed or was rejected."},
    {"calibration", "Calibration failed or warned."},
    {"mixed-precision", "Mixed precision search failed or warned."},
    {"processing", "Target processing failed."},
    {"output", "An output file cannot be written."},
    {"accuracy", "The accuracy comparison failed."},
};

// An absolute path is a file:// URI; a relative one stays a relative reference
// (SARIF resolves it against the run's working folder).
std::string FileUri(const std::string& path) {
  std::string out = !path.empty() && path[0] == '/' ? "file://" : "";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~:", c)) out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

void WriteJsonRecord(JsonWriter& w, const Diag& d) {
  w.BeginObject();
  w.Key("severity").String(Level(d.severity));
  w.Key("code").String(d.code);
  w.Key("file").String(d.file);
  w.Key("line").UInt(d.line);
  w.Key("column").UInt(d.column);
  if (!d.op.empty()) w.Key("op").String(d.op);
  w.Key("tensor").String(d.tensor);
  w.Key("field").String(d.field);
  w.Key("message").String(d.message);
  w.Key("suggestion").String(d.suggestion);
  w.EndObject();
}

void WriteSarifLocations(JsonWriter& w, const Diag& d) {
  // A problem of a whole file (no line) names it as the analysis target: a
  // physical location without a region says nothing more and viewers warn.
  if (!d.file.empty() && !d.line) {
    w.Key("analysisTarget").BeginObject();
    w.Key("uri").String(FileUri(d.file));
    w.EndObject();
  }
  const bool physical = !d.file.empty() && d.line;
  if (!physical && d.op.empty() && d.tensor.empty()) return;
  w.Key("locations").BeginArray();
  w.BeginObject();
  if (physical) {
    w.Key("physicalLocation").BeginObject();
    w.Key("artifactLocation").BeginObject();
    w.Key("uri").String(FileUri(d.file));
    w.EndObject();
    w.Key("region").BeginObject();
    w.Key("startLine").UInt(d.line);
    w.Key("startColumn").UInt(std::max<uint32_t>(d.column, 1));
    w.EndObject();
    w.EndObject();
  }
  if (!d.op.empty() || !d.tensor.empty()) {
    // Graph elements have no file position: SARIF's logical locations name them.
    w.Key("logicalLocations").BeginArray();
    if (!d.op.empty()) {
      w.BeginObject();
      w.Key("name").String(d.op);
      w.Key("kind").String("function");
      w.EndObject();
    }
    if (!d.tensor.empty()) {
      w.BeginObject();
      w.Key("name").String(d.tensor);
      w.Key("kind").String("variable");
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  w.EndArray();
}

void WriteSarifResult(JsonWriter& w, const Diag& d, size_t rule_index) {
  w.BeginObject();
  w.Key("ruleId").String(d.code);
  w.Key("ruleIndex").UInt(rule_index);
  w.Key("level").String(Level(d.severity));
  std::string text = d.message;
  if (!d.tensor.empty()) text = fmt::format("tensor '{}': {}", d.tensor, text);
  if (!d.suggestion.empty()) text += fmt::format(" (did you mean '{}'?)", d.suggestion);
  w.Key("message").BeginObject();
  w.Key("text").String(text);
  w.EndObject();
  WriteSarifLocations(w, d);
  w.Key("properties").BeginObject();
  if (!d.op.empty()) w.Key("op").String(d.op);
  w.Key("tensor").String(d.tensor);
  w.Key("field").String(d.field);
  if (!d.suggestion.empty()) w.Key("suggestion").String(d.suggestion);
  w.EndObject();
  w.EndObject();
}

std::string RenderSarif(const Diags& diags) {
  std::map<std::string, size_t> rule_index;
  std::vector<std::string> rules;
  for (const Diag& d : diags)
    if (rule_index.emplace(d.code, rules.size()).second) rules.push_back(d.code);
  JsonWriter w;
  w.BeginObject();
  w.Key("$schema").String("https://json.schemastore.org/sarif-2.1.0.json");
  w.Key("version").String("2.1.0");
  w.Key("runs").BeginArray();
  w.BeginObject();
  w.Key("tool").BeginObject();
  w.Key("driver").BeginObject();
  w.Key("name").String("qairt");
  w.Key("semanticVersion").String(QAIRT_VERSION_STRING);
  w.Key("informationUri").String(QAIRT_INFORMATION_URI);
  w.Key("rules").BeginArray();
  for (const std::string& r : rules) {
    w.BeginObject();
    w.Key("id").String(r);
    w.Key("shortDescription").BeginObject();
    w.Key("text").String(RuleDescription(r));
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  w.Key("columnKind").String("unicodeCodePoints");
  w.Key("results").BeginArray();
  for (const Diag& d : diags) WriteSarifResult(w, d, rule_index[d.code]);
  w.EndArray();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace

std::string_view RuleDescription(std::string_view code) {
  for (const auto& [c, d] : kRules)
    if (c == code) return d;
  return "Diagnostic.";
}

std::string Diag::Format() const {
  std::string s;
  if (!file.empty()) {
    s = file;
    if (line) s += fmt::format(":{}:{}", line, column);
    s += ": ";
  }
  s += Level(severity);
  s += ": ";
  if (!op.empty()) s += fmt::format("op '{}': ", op);
  if (!tensor.empty()) s += fmt::format("tensor '{}': ", tensor);
  if (!field.empty()) s += fmt::format("field '{}': ", field);
  s += message;
  if (!suggestion.empty()) s += fmt::format(" (did you mean '{}'?)", suggestion);
  return s;
}

size_t CountSeverity(const Diags& d, Severity severity) {
  size_t n = 0;
  for (const Diag& x : d) n += x.severity == severity;
  return n;
}

std::string RenderDiagnostics(const Diags& diags, ReportFormat format) {
  const size_t errors = CountSeverity(diags, Severity::kError);
  const size_t warnings = CountSeverity(diags, Severity::kWarning);
  const size_t notes = CountSeverity(diags, Severity::kNote);
  if (format == ReportFormat::kSarif) return RenderSarif(diags);
  if (format == ReportFormat::kText) {
    std::string out;
    for (const Diag& d : diags) out += d.Format() + "\n";
    out += fmt::format("{} error{}, {} warning{}, {} note{}\n", errors, errors == 1 ? "" : "s", warnings,
                       warnings == 1 ? "" : "s", notes, notes == 1 ? "" : "s");
    return out;
  }
  JsonWriter w;
  w.BeginObject();
  w.Key("errors").UInt(errors);
  w.Key("warnings").UInt(warnings);
  w.Key("notes").UInt(notes);
  w.Key("diagnostics").BeginArray();
  for (const Diag& d : diags) WriteJsonRecord(w, d);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace qairt
