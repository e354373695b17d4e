#include "analyze/sensitivity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "analyze/analysis_common.h"
#include "support/json_writer.h"

namespace qairt::analyze {

using namespace detail;  // NOLINT(build/namespaces): the analysis's shared pieces

namespace {

std::string XmlEscape(std::string_view v) {
  std::string s;
  for (char c : v) {
    if (c == '<') s += "&lt;";
    else if (c == '>') s += "&gt;";
    else if (c == '&') s += "&amp;";
    else if (c == '"') s += "&quot;";
    else s += c;
  }
  return s;
}

}  // namespace

Status AnalyzeSensitivity(const Graph& float_graph, const calib::SampleSource& samples, const Options& options,
                          SensitivityReport* report) {
  *report = SensitivityReport{};
  if (options.shard_count == 0 || options.shard_index >= options.shard_count)
    return InvalidArgument("sensitivity shard {} of {}: the index must be below the count", options.shard_index,
                           options.shard_count);
  Prepared p;
  if (Status s = Prepare(float_graph, samples, samples, options, &p); !s.ok()) return s;
  report->samples = samples.count;
  report->base_label = Label(options.calibration.weights_bitwidth, options.calibration.act_bitwidth);
  report->high_label = Label(options.high_weights_bitwidth, options.high_act_bitwidth);
  auto base = Score(p.low, samples, p, options);
  if (!base.ok()) return base.status();
  if (options.realize && base.value().sqnr <= kInfeasible) {
    // A base precision the target has no kernels for has nothing to rank:
    // its cause, not a score (realized again only to say it).
    if (auto r = options.realize(p.low); !r.ok())
      return Status(r.status().code(), fmt::format("sensitivity: the model at {} does not run on the target: {}",
                                                   report->base_label, r.status().message()));
  }
  auto high = Score(p.high, samples, p, options);
  if (!high.ok()) return high.status();
  report->sqnr_base = base.value().sqnr;
  report->sqnr_high = high.value().sqnr;
  report->shard_index = options.shard_index;
  report->shard_count = options.shard_count;
  for (size_t i = 0; i < p.units.size(); ++i) {
    Unit& u = p.units[i];
    if (i % options.shard_count != options.shard_index) {
      u.evaluated = false;
      u.sqnr_only_quantized = u.sqnr_only_high = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    auto only_q = WithEncodingsOf(float_graph, p.low, u.tensors);
    if (!only_q.ok()) return only_q.status();
    // A graph with one quantized unit is no configuration the target runs:
    // simulated as it is.
    Options unrealized = options;
    unrealized.realize = nullptr;
    auto sq = Score(only_q.value(), samples, p, unrealized);
    if (!sq.ok()) return sq.status();
    auto only_h = WithEncodingsOf(p.low, p.high, u.tensors);
    if (!only_h.ok()) return only_h.status();
    auto sh = Score(only_h.value(), samples, p, options);
    if (!sh.ok()) return sh.status();
    u.sqnr_only_quantized = sq.value().sqnr;
    u.sqnr_only_high = sh.value().sqnr;
  }
  report->units = std::move(p.units);
  return Status::Ok();
}

std::string SensitivityText(const SensitivityReport& r, size_t max_rows) {
  // A configuration the target cannot run has no SQNR.
  auto db = [](double v) {
    return v <= kInfeasible ? std::string("not runnable on the target") : fmt::format("{:.2f} dB", v);
  };
  std::string s = fmt::format(
      "sensitivity on {} sample{}: all {} {}, all {} {}, {} units\n"
      "most sensitive first (SQNR of the output when only this unit is quantized at {}; gain when only it is {}):\n",
      r.samples, r.samples == 1 ? "" : "s", r.base_label, db(r.sqnr_base), r.high_label, db(r.sqnr_high),
      r.units.size(), r.base_label, r.high_label);
  std::vector<size_t> idx;
  for (size_t i = 0; i < r.units.size(); ++i)
    if (r.units[i].evaluated) idx.push_back(i);
  if (r.shard_count > 1)
    s += fmt::format("shard {} of {}: {} of the {} units evaluated here\n", r.shard_index, r.shard_count, idx.size(),
                     r.units.size());
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return r.units[a].sqnr_only_quantized < r.units[b].sqnr_only_quantized;
  });
  s += fmt::format("  {:>4}  {:<40} {:<20} {:>5}  {:>10}  {:>10}  {:>8}\n", "rank", "unit", "type", "depth",
                   "only-quant", "only-high", "gain");
  for (size_t k = 0; k < idx.size() && k < max_rows; ++k) {
    const Unit& u = r.units[idx[k]];
    const bool high_runs = u.sqnr_only_high > kInfeasible && r.sqnr_base > kInfeasible;
    s += fmt::format("  {:>4}  {:<40} {:<20} {:>5}  {:>7.2f} dB  {:>10}  {:>8}\n", k + 1, u.name, u.op_type, u.depth,
                     u.sqnr_only_quantized, high_runs ? fmt::format("{:.2f} dB", u.sqnr_only_high) : "n/a",
                     high_runs ? fmt::format("{:+.2f} dB", u.sqnr_only_high - r.sqnr_base) : "n/a");
  }
  if (idx.size() > max_rows) s += fmt::format("  ... {} more (--json for all)\n", idx.size() - max_rows);
  return s;
}

std::string SensitivityJson(const SensitivityReport& r) {
  std::string s = fmt::format(
      "{{\"samples\":{},\"base\":{},\"high\":{},\"sqnr_base_db\":{},\"sqnr_high_db\":{},", r.samples,
      JsonQuoted(r.base_label), JsonQuoted(r.high_label), Db(r.sqnr_base), Db(r.sqnr_high));
  if (r.shard_count > 1) s += fmt::format("\"shard_index\":{},\"shard_count\":{},", r.shard_index, r.shard_count);
  s += "\"units\":[";
  for (size_t i = 0; i < r.units.size(); ++i) {
    const Unit& u = r.units[i];
    s += fmt::format("{}{{\"name\":{},\"op_type\":{},\"depth\":{}", i ? "," : "", JsonQuoted(u.name),
                     JsonQuoted(u.op_type), u.depth);
    // Another shard's unit has no scores.
    if (u.evaluated)
      s += fmt::format(",\"sqnr_only_quantized_db\":{},\"sqnr_only_high_db\":{}", Db(u.sqnr_only_quantized),
                       Db(u.sqnr_only_high));
    s += "}";
  }
  return s + "]}";
}

std::string SensitivitySvg(const SensitivityReport& r) {
  const double w = 900, h = 420, left = 60, right = 20, top = 40, bottom = 50;
  double lo = 1e300, hi = -1e300;
  size_t max_depth = 1;
  std::vector<const Unit*> shown;  // this shard's units
  for (const Unit& u : r.units)
    if (u.evaluated) shown.push_back(&u);
  for (const Unit* u : shown) {
    for (double v : {u->sqnr_only_quantized, u->sqnr_only_high}) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    max_depth = std::max(max_depth, u->depth);
  }
  if (shown.empty()) lo = 0, hi = 1;
  lo = std::floor(lo / 10) * 10;
  hi = std::ceil(hi / 10) * 10;
  if (hi <= lo) hi = lo + 10;
  auto X = [&](double d) { return left + (w - left - right) * d / static_cast<double>(max_depth); };
  auto Y = [&](double v) { return top + (h - top - bottom) * (hi - v) / (hi - lo); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\">Per-layer output SQNR along the graph ({} samples; all {} {:.1f} dB, "
      "all {} {:.1f} dB)</text>\n",
      w, h, left, r.samples, XmlEscape(r.base_label), r.sqnr_base, XmlEscape(r.high_label), r.sqnr_high);
  for (double v = lo; v <= hi + 1e-9; v += 10)
    s += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                     "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.0f}</text>\n",
                     left, w - right, Y(v), left - 6, Y(v) + 4, v);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">graph depth (op index)</text>\n",
                   (left + w - right) / 2, h - 12);
  s += fmt::format("<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">output SQNR "
                   "(dB)</text>\n",
                   (top + h - bottom) / 2, (top + h - bottom) / 2);
  auto series = [&](bool quant, const char* color, const char* label, double ly) {
    std::string pts;
    for (const Unit* u : shown)
      pts += fmt::format("{:.1f},{:.1f} ", X(static_cast<double>(u->depth)),
                         Y(quant ? u->sqnr_only_quantized : u->sqnr_only_high));
    std::string out = fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
                                  color, pts);
    for (const Unit* u : shown)
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{} ({}): {:.2f} dB</title>"
                         "</circle>\n",
                         X(static_cast<double>(u->depth)), Y(quant ? u->sqnr_only_quantized : u->sqnr_only_high),
                         color, XmlEscape(u->name), XmlEscape(u->op_type),
                         quant ? u->sqnr_only_quantized : u->sqnr_only_high);
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n", w - right - 330, ly, color, label);
    return out;
  };
  s += series(true, "#c0392b", ("only this layer quantized at " + XmlEscape(r.base_label)).c_str(), top + 14);
  s += series(false, "#2471a3", ("all " + XmlEscape(r.base_label) + ", this layer at " + XmlEscape(r.high_label)).c_str(),
              top + 30);
  // The most sensitive unit, named.
  if (!shown.empty()) {
    const Unit* worst = shown[0];
    for (const Unit* u : shown)
      if (u->sqnr_only_quantized < worst->sqnr_only_quantized) worst = u;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#c0392b\">most sensitive: {}</text>\n",
                     std::min(X(static_cast<double>(worst->depth)) + 6, w - right - 250),
                     std::min(Y(worst->sqnr_only_quantized) + 14, h - bottom - 4), XmlEscape(worst->name));
  }
  return s + "</svg>\n";
}

}  // namespace qairt::analyze
