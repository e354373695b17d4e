// Rendering encodings diagnostics as text, JSON or SARIF 2.1.0 (for IDEs and
// code-scanning tools).
#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <map>

#include "encodings/encodings.h"
#include "support/json_writer.h"

namespace qairt::encodings {
namespace {

const char* Level(Severity s) {
  return s == Severity::kError ? "error" : s == Severity::kWarning ? "warning" : "note";
}

// One line per rule, shown by SARIF viewers.
const char* RuleDescription(std::string_view code) {
  static const std::pair<std::string_view, const char*> kRules[] = {
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
  };
  for (const auto& [c, d] : kRules)
    if (c == code) return d;
  return "Encodings diagnostic.";
}

std::string FileUri(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~:", c)) out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace

std::string RenderDiagnostics(const Diags& diags, ReportFormat format) {
  size_t errors = 0, warnings = 0, notes = 0;
  for (const Diag& d : diags) {
    errors += d.severity == Severity::kError;
    warnings += d.severity == Severity::kWarning;
    notes += d.severity == Severity::kNote;
  }
  if (format == ReportFormat::kText) {
    std::string out;
    for (const Diag& d : diags) out += d.Format() + "\n";
    out += fmt::format("{} error{}, {} warning{}, {} note{}\n", errors, errors == 1 ? "" : "s", warnings,
                       warnings == 1 ? "" : "s", notes, notes == 1 ? "" : "s");
    return out;
  }
  JsonWriter w;
  if (format == ReportFormat::kJson) {
    w.BeginObject();
    w.Key("errors");
    w.UInt(errors);
    w.Key("warnings");
    w.UInt(warnings);
    w.Key("notes");
    w.UInt(notes);
    w.Key("diagnostics");
    w.BeginArray();
    for (const Diag& d : diags) {
      w.BeginObject();
      w.Key("severity");
      w.String(Level(d.severity));
      w.Key("code");
      w.String(d.code);
      w.Key("file");
      w.String(d.file);
      w.Key("line");
      w.UInt(d.line);
      w.Key("column");
      w.UInt(d.column);
      w.Key("tensor");
      w.String(d.tensor);
      w.Key("field");
      w.String(d.field);
      w.Key("message");
      w.String(d.message);
      w.Key("suggestion");
      w.String(d.suggestion);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return w.Take();
  }
  // SARIF 2.1.0: one run, one rule per diagnostic code (in first-use order).
  std::map<std::string, size_t> rule_index;
  std::vector<std::string> rules;
  for (const Diag& d : diags)
    if (rule_index.emplace(d.code, rules.size()).second) rules.push_back(d.code);
  w.BeginObject();
  w.Key("$schema");
  w.String("https://json.schemastore.org/sarif-2.1.0.json");
  w.Key("version");
  w.String("2.1.0");
  w.Key("runs");
  w.BeginArray();
  w.BeginObject();
  w.Key("tool");
  w.BeginObject();
  w.Key("driver");
  w.BeginObject();
  w.Key("name");
  w.String("qairt");
  w.Key("semanticVersion");
  w.String(QAIRT_VERSION_STRING);
  w.Key("rules");
  w.BeginArray();
  for (const std::string& r : rules) {
    w.BeginObject();
    w.Key("id");
    w.String(r);
    w.Key("shortDescription");
    w.BeginObject();
    w.Key("text");
    w.String(RuleDescription(r));
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  w.Key("columnKind");
  w.String("unicodeCodePoints");
  w.Key("results");
  w.BeginArray();
  for (const Diag& d : diags) {
    w.BeginObject();
    w.Key("ruleId");
    w.String(d.code);
    w.Key("ruleIndex");
    w.UInt(rule_index[d.code]);
    w.Key("level");
    w.String(Level(d.severity));
    w.Key("message");
    w.BeginObject();
    w.Key("text");
    std::string text = d.message;
    if (!d.tensor.empty()) text = fmt::format("tensor '{}': {}", d.tensor, text);
    if (!d.suggestion.empty()) text += fmt::format(" (did you mean '{}'?)", d.suggestion);
    w.String(text);
    w.EndObject();
    if (!d.file.empty()) {
      w.Key("locations");
      w.BeginArray();
      w.BeginObject();
      w.Key("physicalLocation");
      w.BeginObject();
      w.Key("artifactLocation");
      w.BeginObject();
      w.Key("uri");
      w.String(FileUri(d.file));
      w.EndObject();
      if (d.line) {
        w.Key("region");
        w.BeginObject();
        w.Key("startLine");
        w.UInt(d.line);
        w.Key("startColumn");
        w.UInt(d.column);
        w.EndObject();
      }
      w.EndObject();
      if (!d.tensor.empty()) {
        w.Key("logicalLocations");
        w.BeginArray();
        w.BeginObject();
        w.Key("name");
        w.String(d.tensor);
        w.Key("kind");
        w.String("variable");
        w.EndObject();
        w.EndArray();
      }
      w.EndObject();
      w.EndArray();
    }
    w.Key("properties");
    w.BeginObject();
    w.Key("tensor");
    w.String(d.tensor);
    w.Key("field");
    w.String(d.field);
    if (!d.suggestion.empty()) {
      w.Key("suggestion");
      w.String(d.suggestion);
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace qairt::encodings
