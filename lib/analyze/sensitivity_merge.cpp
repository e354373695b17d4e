// Sharded sensitivity analysis: a shard's report read back from its JSON
// (it crosses processes and hosts as text) and the shards joined into the
// report of the whole analysis.
#include <simdjson.h>

#include <cmath>
#include <limits>

#include "analyze/sensitivity.h"
#include "support/json_writer.h"

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

// For each shard 0..n-1 the index of the part holding it, refusing parts
// that are not exactly the shards of one split.
template <class Part>
Result<std::vector<size_t>> ShardOwners(const std::vector<Part>& parts, std::string_view what) {
  if (parts.empty()) return InvalidArgument("merging {}: no reports given", what);
  const uint32_t n = parts[0].shard_count;
  std::vector<int> seen(n, -1);
  for (size_t k = 0; k < parts.size(); ++k) {
    const Part& p = parts[k];
    if (p.shard_count != n)
      return InvalidArgument("merging {}: report {} is shard {} of {}, report 0 one of {}", what, k, p.shard_index,
                             p.shard_count, n);
    if (seen[p.shard_index] >= 0)
      return InvalidArgument("merging {}: reports {} and {} are both shard {} of {}", what, seen[p.shard_index], k,
                             p.shard_index, n);
    seen[p.shard_index] = static_cast<int>(k);
  }
  std::vector<size_t> owners(n);
  for (uint32_t s = 0; s < n; ++s) {
    if (seen[s] < 0) return InvalidArgument("merging {}: shard {} of {} is missing", what, s, n);
    owners[s] = static_cast<size_t>(seen[s]);
  }
  return owners;
}

bool SameDouble(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Same samples and precisions (both kinds of report carry these).
template <class Part>
bool SameSetup(const Part& a, const Part& b) {
  return a.samples == b.samples && a.base_label == b.base_label && a.high_label == b.high_label;
}

// Parses `text` (kept alive by the caller with `parser`) into its root
// object and reads the fields every report has: samples, base, high.
template <class Part>
Status ReadRoot(simdjson::dom::parser& parser, const simdjson::padded_string& text, std::string_view what,
                simdjson::dom::object* root, Part* out) {
  simdjson::dom::element doc;
  if (auto e = parser.parse(text).get(doc); e) return ParseError(what, "document", simdjson::error_message(e));
  if (doc.get_object().get(*root)) return ParseError(what, "document", "not a JSON object");
  uint64_t samples = 0;
  if ((*root)["samples"].get_uint64().get(samples)) return ParseError(what, "samples", "missing or not a count");
  out->samples = static_cast<size_t>(samples);
  std::string_view label;
  if ((*root)["base"].get_string().get(label)) return ParseError(what, "base", "missing or not a string");
  out->base_label = std::string(label);
  if ((*root)["high"].get_string().get(label)) return ParseError(what, "high", "missing or not a string");
  out->high_label = std::string(label);
  return Status::Ok();
}

// The shard fields of a report's root object (absent: the whole analysis).
Status ReadShard(simdjson::dom::object root, std::string_view what, uint32_t* index, uint32_t* count) {
  uint64_t i = 0, n = 1;
  simdjson::dom::element v;
  if (root["shard_count"].get(v) == simdjson::SUCCESS) {
    if (v.get_uint64().get(n) || n < 1 || n > UINT32_MAX)
      return ParseError(what, "shard_count", "not a count of at least 1");
    if (root["shard_index"].get_uint64().get(i) || i >= n)
      return ParseError(what, "shard_index", "missing or not below shard_count");
  }
  *index = static_cast<uint32_t>(i);
  *count = static_cast<uint32_t>(n);
  return Status::Ok();
}

}  // namespace

Status ReadSensitivityJson(std::string_view json, std::string_view what, SensitivityReport* out) {
  *out = SensitivityReport{};
  simdjson::dom::parser parser;
  const simdjson::padded_string text(json);
  simdjson::dom::object root;
  if (Status s = ReadRoot(parser, text, what, &root, out); !s.ok()) return s;
  simdjson::dom::element v;
  if (root["sqnr_base_db"].get(v) || !ReadScore(v, &out->sqnr_base))
    return ParseError(what, "sqnr_base_db", "missing or not a number");
  if (root["sqnr_high_db"].get(v) || !ReadScore(v, &out->sqnr_high))
    return ParseError(what, "sqnr_high_db", "missing or not a number");
  if (Status s = ReadShard(root, what, &out->shard_index, &out->shard_count); !s.ok()) return s;
  const uint32_t index = out->shard_index, count = out->shard_count;
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
  auto owners = ShardOwners(parts, "sensitivity reports");
  if (!owners.ok()) return owners.status();
  const SensitivityReport& first = parts[0];
  for (size_t k = 1; k < parts.size(); ++k) {
    const SensitivityReport& p = parts[k];
    // Every shard calibrates the same model on the same samples, so these
    // agree exactly unless a part comes from another analysis.
    if (!SameSetup(p, first) || !SameDouble(p.sqnr_base, first.sqnr_base) || !SameDouble(p.sqnr_high, first.sqnr_high))
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
  SensitivityReport merged = first;
  merged.shard_index = 0;
  merged.shard_count = 1;
  for (size_t i = 0; i < merged.units.size(); ++i) {
    const SensitivityReport& owner = parts[owners.value()[i % owners.value().size()]];
    if (!owner.units[i].evaluated)
      return InvalidArgument("merging sensitivity reports: unit '{}' was not evaluated by shard {} of {}",
                             owner.units[i].name, owner.shard_index, owner.shard_count);
    merged.units[i] = owner.units[i];
  }
  *out = std::move(merged);
  return Status::Ok();
}

std::string MixedGainsJson(const MixedGains& g) {
  std::string s = fmt::format(
      "{{\"kind\":\"mixed_gains\",\"samples\":{},\"base\":{},\"high\":{},\"base_typical_db\":{},"
      "\"shard_index\":{},\"shard_count\":{},\"units\":[",
      g.samples, JsonQuoted(g.base_label), JsonQuoted(g.high_label), g.base_typical, g.shard_index, g.shard_count);
  for (size_t i = 0; i < g.units.size(); ++i) {
    s += fmt::format("{}{{\"name\":{}", i ? "," : "", JsonQuoted(g.units[i]));
    // Round-trip precision: the merged gains must rank exactly as local ones.
    if (g.evaluated[i]) s += std::isfinite(g.gains[i]) ? fmt::format(",\"gain_db\":{}", g.gains[i]) : ",\"gain_db\":null";
    s += "}";
  }
  return s + "]}";
}

std::string MixedGainsText(const MixedGains& g) {
  size_t done = 0;
  for (bool e : g.evaluated) done += e;
  std::string s = fmt::format("mixed precision gains on {} sample{} ({} -> {}): shard {} of {}, {} of {} candidates\n",
                              g.samples, g.samples == 1 ? "" : "s", g.base_label, g.high_label, g.shard_index,
                              g.shard_count, done, g.units.size());
  for (size_t i = 0; i < g.units.size(); ++i)
    if (g.evaluated[i]) s += fmt::format("  {:<48} {:>+8.2f} dB\n", g.units[i], g.gains[i]);
  return s;
}

bool IsMixedGainsJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string text(json);
  simdjson::dom::element doc;
  std::string_view kind;
  return !parser.parse(text).get(doc) && doc.is_object() && !doc["kind"].get_string().get(kind) &&
         kind == "mixed_gains";
}

Status ReadMixedGainsJson(std::string_view json, std::string_view what, MixedGains* out) {
  *out = MixedGains{};
  simdjson::dom::parser parser;
  const simdjson::padded_string text(json);
  simdjson::dom::object root;
  if (Status s = ReadRoot(parser, text, what, &root, out); !s.ok()) return s;
  std::string_view sv;
  if (root["kind"].get_string().get(sv) || sv != "mixed_gains")
    return ParseError(what, "kind", "missing or not \"mixed_gains\"");
  if (root["base_typical_db"].get_double().get(out->base_typical))
    return ParseError(what, "base_typical_db", "missing or not a number");
  if (Status s = ReadShard(root, what, &out->shard_index, &out->shard_count); !s.ok()) return s;
  simdjson::dom::array units;
  if (root["units"].get_array().get(units)) return ParseError(what, "units", "missing or not an array");
  size_t i = 0;
  for (simdjson::dom::element e : units) {
    const std::string field = fmt::format("units[{}]", i);
    simdjson::dom::object u;
    if (e.get_object().get(u)) return ParseError(what, field, "not an object");
    if (u["name"].get_string().get(sv)) return ParseError(what, field + ".name", "missing or not a string");
    out->units.push_back(std::string(sv));
    simdjson::dom::element v;
    const bool has = u["gain_db"].get(v) == simdjson::SUCCESS;
    double gain = std::numeric_limits<double>::quiet_NaN();
    if (has && !ReadScore(v, &gain)) return ParseError(what, field + ".gain_db", "not a number");
    if (has != (i % out->shard_count == out->shard_index))
      return ParseError(what, field, has ? "has a gain, but belongs to another shard"
                                         : "has no gain, but belongs to this shard");
    out->gains.push_back(gain);
    out->evaluated.push_back(has);
    ++i;
  }
  return Status::Ok();
}

Status MergeMixedGains(const std::vector<MixedGains>& parts, MixedGains* out) {
  auto owners = ShardOwners(parts, "mixed precision gains");
  if (!owners.ok()) return owners.status();
  const MixedGains& first = parts[0];
  for (size_t k = 1; k < parts.size(); ++k) {
    const MixedGains& p = parts[k];
    if (!SameSetup(p, first) || !SameDouble(p.base_typical, first.base_typical) || p.units != first.units)
      return InvalidArgument("merging mixed precision gains: report {} is of another search (other model, samples "
                             "or precision than report 0)",
                             k);
  }
  MixedGains merged = first;
  merged.shard_index = 0;
  merged.shard_count = 1;
  for (size_t i = 0; i < merged.units.size(); ++i) {
    const MixedGains& owner = parts[owners.value()[i % owners.value().size()]];
    if (!owner.evaluated[i])
      return InvalidArgument("merging mixed precision gains: '{}' was not evaluated by shard {} of {}",
                             owner.units[i], owner.shard_index, owner.shard_count);
    merged.gains[i] = owner.gains[i];
    merged.evaluated[i] = true;
  }
  *out = std::move(merged);
  return Status::Ok();
}

}  // namespace qairt::analyze
