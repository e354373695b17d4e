// Sharded sensitivity analysis: a shard's report read back from its JSON
// (it crosses processes and hosts as text) and the shards joined into the
// report of the whole analysis.
#include <simdjson.h>

#include <cmath>
#include <limits>

#include "analyze/sensitivity.h"

namespace qairt::analyze {
namespace {

Status ParseError(std::string_view what, std::string_view field, std::string_view problem) {
  return Error(StatusCode::kParseError, "sensitivity report {}: {}: {}", what, field, problem);
}

// A score: a number, or null (SensitivityJson's non-finite value).
bool ReadScore(simdjson::dom::element e, double* out) {
  if (e.is_null()) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  return !e.get_double().get(*out);
}

}  // namespace

Status ReadSensitivityJson(std::string_view json, std::string_view what, SensitivityReport* out) {
  *out = SensitivityReport{};
  simdjson::dom::parser parser;
  simdjson::padded_string text(json);
  simdjson::dom::element doc;
  if (auto e = parser.parse(text).get(doc); e) return ParseError(what, "document", simdjson::error_message(e));
  simdjson::dom::object root;
  if (doc.get_object().get(root)) return ParseError(what, "document", "not a JSON object");
  uint64_t samples = 0;
  if (root["samples"].get_uint64().get(samples)) return ParseError(what, "samples", "missing or not a count");
  out->samples = static_cast<size_t>(samples);
  std::string_view label;
  if (root["base"].get_string().get(label)) return ParseError(what, "base", "missing or not a string");
  out->base_label = std::string(label);
  if (root["high"].get_string().get(label)) return ParseError(what, "high", "missing or not a string");
  out->high_label = std::string(label);
  simdjson::dom::element v;
  if (root["sqnr_base_db"].get(v) || !ReadScore(v, &out->sqnr_base))
    return ParseError(what, "sqnr_base_db", "missing or not a number");
  if (root["sqnr_high_db"].get(v) || !ReadScore(v, &out->sqnr_high))
    return ParseError(what, "sqnr_high_db", "missing or not a number");
  uint64_t index = 0, count = 1;
  if (root["shard_count"].get(v) == simdjson::SUCCESS) {
    if (v.get_uint64().get(count) || count < 1 || count > UINT32_MAX)
      return ParseError(what, "shard_count", "not a count of at least 1");
    if (root["shard_index"].get_uint64().get(index) || index >= count)
      return ParseError(what, "shard_index", "missing or not below shard_count");
  }
  out->shard_index = static_cast<uint32_t>(index);
  out->shard_count = static_cast<uint32_t>(count);
  simdjson::dom::array units;
  if (root["units"].get_array().get(units)) return ParseError(what, "units", "missing or not an array");
  size_t i = 0;
  for (simdjson::dom::element e : units) {
    const std::string field = fmt::format("units[{}]", i++);
    simdjson::dom::object u;
    if (e.get_object().get(u)) return ParseError(what, field, "not an object");
    Unit unit;
    std::string_view s;
    if (u["name"].get_string().get(s)) return ParseError(what, field + ".name", "missing or not a string");
    unit.name = std::string(s);
    if (u["op_type"].get_string().get(s)) return ParseError(what, field + ".op_type", "missing or not a string");
    unit.op_type = std::string(s);
    uint64_t depth = 0;
    if (u["depth"].get_uint64().get(depth)) return ParseError(what, field + ".depth", "missing or not a count");
    unit.depth = static_cast<size_t>(depth);
    const bool has_q = u["sqnr_only_quantized_db"].get(v) == simdjson::SUCCESS;
    if (has_q && !ReadScore(v, &unit.sqnr_only_quantized))
      return ParseError(what, field + ".sqnr_only_quantized_db", "not a number");
    const bool has_h = u["sqnr_only_high_db"].get(v) == simdjson::SUCCESS;
    if (has_h && !ReadScore(v, &unit.sqnr_only_high))
      return ParseError(what, field + ".sqnr_only_high_db", "not a number");
    if (has_q != has_h) return ParseError(what, field, "has one of its two scores");
    unit.evaluated = has_q;
    if (!unit.evaluated) unit.sqnr_only_quantized = unit.sqnr_only_high = std::numeric_limits<double>::quiet_NaN();
    // Which units a shard evaluates is fixed by its index: anything else is
    // an edited or foreign file.
    if (unit.evaluated != ((i - 1) % count == index))
      return ParseError(what, field, unit.evaluated ? "has scores, but belongs to another shard"
                                                    : "has no scores, but belongs to this shard");
    out->units.push_back(std::move(unit));
  }
  return Status::Ok();
}

Status MergeSensitivity(const std::vector<SensitivityReport>& parts, SensitivityReport* out) {
  if (parts.empty()) return InvalidArgument("merging sensitivity reports: no reports given");
  const SensitivityReport& first = parts[0];
  const uint32_t n = first.shard_count;
  std::vector<int> seen(n, -1);
  auto same_double = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (size_t k = 0; k < parts.size(); ++k) {
    const SensitivityReport& p = parts[k];
    if (p.shard_count != n)
      return InvalidArgument("merging sensitivity reports: report {} is shard {} of {}, report 0 one of {}", k,
                             p.shard_index, p.shard_count, n);
    if (seen[p.shard_index] >= 0)
      return InvalidArgument("merging sensitivity reports: reports {} and {} are both shard {} of {}",
                             seen[p.shard_index], k, p.shard_index, n);
    seen[p.shard_index] = static_cast<int>(k);
    // Every shard calibrates the same model on the same samples, so these
    // agree exactly unless a part comes from another analysis.
    if (p.samples != first.samples || p.base_label != first.base_label || p.high_label != first.high_label ||
        !same_double(p.sqnr_base, first.sqnr_base) || !same_double(p.sqnr_high, first.sqnr_high))
      return InvalidArgument(
          "merging sensitivity reports: report {} is of another analysis ({} samples, {} {} dB, {} {} dB; report 0: "
          "{} samples, {} {} dB, {} {} dB)",
          k, p.samples, p.base_label, p.sqnr_base, p.high_label, p.sqnr_high, first.samples, first.base_label,
          first.sqnr_base, first.high_label, first.sqnr_high);
    if (p.units.size() != first.units.size())
      return InvalidArgument("merging sensitivity reports: report {} has {} units, report 0 has {}", k,
                             p.units.size(), first.units.size());
    for (size_t i = 0; i < p.units.size(); ++i) {
      const Unit& a = p.units[i];
      const Unit& b = first.units[i];
      if (a.name != b.name || a.op_type != b.op_type || a.depth != b.depth)
        return InvalidArgument("merging sensitivity reports: unit {} is '{}' ({}) in report {} but '{}' ({}) in "
                               "report 0: another model",
                               i, a.name, a.op_type, k, b.name, b.op_type);
    }
  }
  for (uint32_t s = 0; s < n; ++s)
    if (seen[s] < 0) return InvalidArgument("merging sensitivity reports: shard {} of {} is missing", s, n);
  SensitivityReport merged = first;
  merged.shard_index = 0;
  merged.shard_count = 1;
  for (size_t i = 0; i < merged.units.size(); ++i) {
    const SensitivityReport& owner = parts[static_cast<size_t>(seen[i % n])];
    const Unit& u = owner.units[i];
    if (!u.evaluated)
      return InvalidArgument("merging sensitivity reports: unit '{}' was not evaluated by shard {} of {}", u.name,
                             owner.shard_index, n);
    merged.units[i] = u;
  }
  *out = std::move(merged);
  return Status::Ok();
}

}  // namespace qairt::analyze
