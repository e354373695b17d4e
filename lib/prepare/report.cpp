// The report: severity names, finding counts and the text and JSON renderings
// (report.txt, report.json).
#include "prepare/prepare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "prepare/prepare_internal.h"
#include "support/json_writer.h"

namespace qairt::prepare {

using internal::Num;

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "?";
}

size_t Report::Count(Severity s) const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == s; }));
}

// ---------------------------------------------------------------------------
// Report rendering
// ---------------------------------------------------------------------------

std::string Report::Text() const {
  std::string t = fmt::format("qairt prepare --target {}: {}\n", target, model_path);
  auto dims = [](const std::vector<int64_t>& d) {
    std::string s;
    for (int64_t x : d) s += (s.empty() ? "" : ",") + (x < 0 ? std::string("?") : std::to_string(x));
    return "[" + s + "]";
  };
  if (!symbols.empty()) {
    t += "symbols:";
    for (const auto& [k, v] : symbols) t += fmt::format(" {}={}", k, v);
    t += "\n";
  }
  for (size_t i = 0; i < specializations.size(); ++i) {
    t += fmt::format("specialization {} '{}':", i, specializations[i].name);
    for (const auto& [k, v] : specializations[i].symbols) t += fmt::format(" {}={}", k, v);
    t += "\n";
  }
  for (const auto& [name, per] : input_shapes) {
    t += fmt::format("input {}:", name);
    for (const auto& d : per) t += " " + dims(d);
    t += "\n";
  }
  t += fmt::format("model: {} bytes{}\n", model_bytes, external_data ? ", external data" : "");
  t += fmt::format("findings: {} error(s), {} warning(s), {} info\n", Count(Severity::kError), Count(Severity::kWarning),
                   Count(Severity::kInfo));
  for (const auto& f : findings) t += fmt::format("  {:<7} {:<28} {}\n", SeverityName(f.severity), f.code, f.message);
  if (!changes.empty()) {
    t += "changes:\n";
    for (const auto& c : changes) t += fmt::format("  {}: {} ({} values)\n", c.tensor, c.what, c.count);
  }
  if (fixed_max_abs_diff >= 0)
    t += fmt::format("fixed vs original (executor, {} samples): max |d| = {}\n", fixed_check_samples, Num(fixed_max_abs_diff));
  if (fp16_error >= 0 || std::isinf(fp16_error))
    t += fmt::format("fp16 simulation ({} samples): output error {}{}\n", audit_samples, Num(fp16_error),
                     first_diverging_tensor.empty() ? "" : fmt::format(", first diverging tensor '{}' (node '{}')",
                                                                       first_diverging_tensor, first_diverging_node));
  if (!fp32_nodes.empty())
    t += fmt::format("fp32 island: {} nodes, {} names, fp16 output error {}\n", fp32_island_nodes, fp32_nodes.size(),
                     Num(fp16_island_error));
  if (!compile_command.empty()) t += "compile: " + compile_command + "\n";
  if (!files.empty()) {
    t += "wrote:";
    for (const auto& f : files) t += " " + f;
    t += "\n";
  }
  return t;
}

std::string Report::Json() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("model").String(model_path);
  w.Key("target").String(target);
  w.Key("ok").Bool(!HasErrors());
  w.Key("symbols").BeginObject();
  for (const auto& [k, v] : symbols) w.Key(k).Int(v);
  w.EndObject();
  w.Key("specializations").BeginArray();
  for (const auto& s : specializations) {
    w.BeginObject();
    w.Key("name").String(s.name);
    w.Key("symbols").BeginObject();
    for (const auto& [k, v] : s.symbols) w.Key(k).Int(v);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("input_shapes").BeginObject();
  for (const auto& [name, per] : input_shapes) {
    w.Key(name).BeginArray();
    for (const auto& d : per) {
      w.BeginArray();
      for (int64_t x : d) w.Int(x);
      w.EndArray();
    }
    w.EndArray();
  }
  w.EndObject();
  w.Key("model_bytes").UInt(model_bytes);
  w.Key("external_data").Bool(external_data);
  w.Key("findings").BeginArray();
  for (const auto& f : findings) {
    w.BeginObject();
    w.Key("severity").String(SeverityName(f.severity));
    w.Key("code").String(f.code);
    w.Key("subject").String(f.subject);
    w.Key("message").String(f.message);
    w.EndObject();
  }
  w.EndArray();
  w.Key("changes").BeginArray();
  for (const auto& c : changes) {
    w.BeginObject();
    w.Key("tensor").String(c.tensor);
    w.Key("what").String(c.what);
    w.Key("count").UInt(c.count);
    w.EndObject();
  }
  w.EndArray();
  auto num = [&](const char* key, double v) {
    w.Key(key);
    if (std::isinf(v) && v > 0) w.String("inf");
    else if (v < 0) w.Null();
    else w.Double(v);
  };
  num("fixed_max_abs_diff", fixed_max_abs_diff);
  w.Key("fixed_check_samples").UInt(fixed_check_samples);
  num("fp16_error", fp16_error);
  w.Key("first_diverging_tensor").String(first_diverging_tensor);
  w.Key("first_diverging_node").String(first_diverging_node);
  w.Key("audit_samples").UInt(audit_samples);
  w.Key("fp32_nodes").BeginArray();
  for (const auto& n : fp32_nodes) w.String(n);
  w.EndArray();
  w.Key("fp32_island_nodes").UInt(fp32_island_nodes);
  num("fp16_island_error", fp16_island_error);
  w.Key("compile_command").String(compile_command);
  w.Key("files").BeginArray();
  for (const auto& f : files) w.String(f);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace qairt::prepare
