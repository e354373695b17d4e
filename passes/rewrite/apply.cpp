// The driver that applies the registered rewrites (passes/registry.cpp) and
// verifies them (the classic flow's "gate on that before quantizing": a
// rewrite that changes what the model computes is undone, not trusted).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "calib/sample_eval.h"
#include "exec/executor.h"
#include "support/json_writer.h"
#include "passes/rewrite/rewrite.h"

namespace qairt::rewrite {
namespace {

bool Selected(const RewriteInfo& info, const Options& options) {
  if (std::find(options.disabled.begin(), options.disabled.end(), info.name) != options.disabled.end()) return false;
  return info.on_by_default ||
         std::find(options.enabled.begin(), options.enabled.end(), info.name) != options.enabled.end();
}

// Why a selected rewrite does not run ("" when it does): it would create an
// op the target cannot run.
std::string SkipReason(const RewriteInfo& info, const Options& options) {
  if (info.produces && options.target_has_op && !options.target_has_op(info.produces))
    return fmt::format("the target has no {} kernels", info.produces);
  return {};
}

// Applies each selected rewrite to a copy of the graph; `accept` decides
// whether a rewrite that fired is kept (it records why not in the outcome
// and the report).
using Accept = std::function<bool(const RewriteInfo&, const Graph& candidate, Outcome* out)>;
Status ApplyEach(Graph* graph, std::span<const RewriteInfo> registry, const Options& options, Report* report,
                 const Accept& accept) {
  Graph current = *graph;
  for (const RewriteInfo& info : registry) {
    if (!Selected(info, options)) continue;
    Outcome out;
    out.name = info.name;
    if (!options.verify) out.cosine = std::numeric_limits<double>::quiet_NaN();
    out.skipped = SkipReason(info, options);
    if (!out.skipped.empty()) {
      report->rewrites.push_back(std::move(out));
      continue;
    }
    Graph candidate = current;
    auto fired = info.run(&candidate, &out.notes);
    if (!fired.ok()) {
      // A rewrite that cannot build its graph is a defect of the rewrite,
      // not of the model: report it and go on without it.
      out.rolled_back = true;
      report->warnings.push_back(fmt::format("rewrite '{}' failed and was skipped: {}", info.name,
                                             fired.status().message()));
      report->rewrites.push_back(std::move(out));
      continue;
    }
    out.fired = fired.value();
    const bool keep = out.fired && accept(info, candidate, &out);
    if (keep) current = std::move(candidate);
    report->rewrites.push_back(std::move(out));
  }
  report->ops_after = current.op_count();
  *graph = std::move(current);
  return Status::Ok();
}

}  // namespace

namespace {
Status Apply(Graph* graph, const Options& options, Report* report);
Status Judge(const Graph& original, Graph* graph, const Options& options, Report* report);
}  // namespace

Status RunRewrites(Graph* graph, const Options& options, Report* report) {
  *report = Report{};
  if (!options.quantized_score) return Apply(graph, options, report);
  const Graph original = *graph;
  Graph work = *graph;
  QAIRT_RETURN_IF_ERROR(Apply(&work, options, report));
  Graph judged = work;
  if (Status s = Judge(original, &judged, options, report); !s.ok()) {
    // A graph the judgement cannot score (calibration or processing refuses
    // it) keeps every rewrite: the conversion then meets that problem itself.
    report->judged = false;
    for (Outcome& o : report->rewrites) {
      o.refused = false;
      o.quantized_with = o.quantized_without = std::numeric_limits<double>::quiet_NaN();
    }
    report->warnings.erase(std::remove_if(report->warnings.begin(), report->warnings.end(),
                                          [](const std::string& w) { return w.find("' kept off: ") != std::string::npos; }),
                           report->warnings.end());
    report->warnings.push_back("rewrites kept without judgement on the quantized model: " + s.message());
    report->ops_after = work.op_count();
    *graph = std::move(work);
    return Status::Ok();
  }
  *graph = std::move(judged);
  return Status::Ok();
}

namespace {

// Each rewrite on by default that fired, judged on the quantized model by
// leaving it out: the graph with every rewrite against the graph with all
// but this one (so the opt-in rewrites the caller asked for, which others
// may need, are always there). One left out that scores better by more
// than the tolerance is kept off; the graph is then rebuilt without those.
Status Judge(const Graph& original, Graph* graph, const Options& options, Report* report) {
  auto judged = [&](const Outcome& o) {
    return o.fired && !o.rolled_back && o.skipped.empty() &&
           std::find(options.enabled.begin(), options.enabled.end(), o.name) == options.enabled.end();
  };
  // Nothing to judge (only rewrites the caller asked for fired): no scoring.
  if (std::none_of(report->rewrites.begin(), report->rewrites.end(), judged)) return Status::Ok();
  report->judged = true;
  auto with_all = options.quantized_score(*graph);
  if (!with_all.ok()) return Status(with_all.status().code(), "rewrite judgement: " + with_all.status().message());
  Options quiet = options;
  quiet.quantized_score = nullptr;
  quiet.verify = false;  // already applied (and verified, if asked) once
  std::vector<std::string> refused;
  for (Outcome& o : report->rewrites) {
    if (!judged(o)) continue;
    Options without = quiet;
    without.disabled.push_back(o.name);
    Graph g = original;
    Report ignored;
    QAIRT_RETURN_IF_ERROR(Apply(&g, without, &ignored));
    auto score = options.quantized_score(g);
    if (!score.ok())
      return Status(score.status().code(), "rewrite judgement (without '" + o.name + "'): " + score.status().message());
    o.quantized_with = with_all.value();
    o.quantized_without = score.value();
    if (o.quantized_with >= o.quantized_without - options.judge_tolerance_db) continue;
    o.refused = true;
    refused.push_back(o.name);
    report->warnings.push_back(fmt::format(
        "rewrite '{}' kept off: the quantized model scores {:.2f} dB with it against {:.2f} dB without it (output "
        "SQNR on the calibration samples); --disable_rewrite {} silences this", o.name, o.quantized_with,
        o.quantized_without, o.name));
  }
  if (refused.empty()) return Status::Ok();
  Options rebuilt = quiet;
  rebuilt.disabled.insert(rebuilt.disabled.end(), refused.begin(), refused.end());
  Graph g = original;
  Report ignored;
  QAIRT_RETURN_IF_ERROR(Apply(&g, rebuilt, &ignored));
  report->ops_after = g.op_count();
  *graph = std::move(g);
  return Status::Ok();
}

Status Apply(Graph* graph, const Options& options, Report* report) {
  const std::span<const RewriteInfo> registry =
      options.replace_registry.empty() ? Rewrites()
                                       : std::span<const RewriteInfo>(options.replace_registry);
  std::vector<std::string> named = options.disabled;
  named.insert(named.end(), options.enabled.begin(), options.enabled.end());
  for (const std::string& d : named) {
    const bool known = std::any_of(registry.begin(), registry.end(),
                                   [&](const RewriteInfo& r) { return d == r.name; });
    if (!known) {
      std::string names;
      for (const RewriteInfo& r : registry) names += (names.empty() ? "" : ", ") + std::string(r.name);
      return InvalidArgument("unknown rewrite '{}' (known: {})", d, names);
    }
  }
  report->ops_before = graph->op_count();
  report->verified = options.verify;
  if (!options.verify) {
    // The default: each rewrite is exact by construction (and by its unit
    // tests), so it is applied without running the model; only a rewritten
    // graph that fails validation is undone.
    return ApplyEach(graph, registry, options, report, [&](const RewriteInfo& info, const Graph& g, Outcome* out) {
      if (!HasErrors(g.Validate())) return true;
      out->rolled_back = true;
      report->warnings.push_back(
          fmt::format("rewrite '{}' failed and was skipped: the rewritten graph is invalid", info.name));
      return false;
    });
  }
  calib::SampleSource samples = options.samples.count > options.max_samples && options.max_samples > 0
                                    ? calib::Slice(options.samples, 0, options.max_samples)
                                    : options.samples;
  if (samples.count == 0) {
    auto synth = calib::SyntheticSamples(*graph, options.synthetic_samples);
    if (!synth.ok()) return Status(synth.status().code(), "rewrite verification: " + synth.status().message());
    samples = std::move(synth).value();
    report->synthetic = true;
  }
  report->samples = samples.count;
  // The reference is the graph as given; every rewrite is checked against it,
  // so small differences cannot accumulate unseen across rewrites.
  // The verification's runs follow each other: one arena for all of them.
  auto space = std::make_shared<exec::Workspace>();
  auto reference = calib::RunSamples(*graph, samples, false, options.num_threads, space);
  if (!reference.ok()) {
    // A graph the executor cannot run (an op it does not implement) still
    // converts: it only goes without the rewrites, which cannot be verified.
    if (reference.status().code() == StatusCode::kUnsupported) {
      report->warnings.push_back("rewrites not applied: they are verified in the executor, which cannot run this "
                                 "graph: " + reference.status().message());
      report->ops_after = graph->op_count();
      return Status::Ok();
    }
    return Status(reference.status().code(), "rewrite verification (original graph): " + reference.status().message());
  }
  return ApplyEach(graph, registry, options, report, [&](const RewriteInfo& info, const Graph& candidate, Outcome* out) {
    const Diagnostics diags = candidate.Validate();
    auto got = HasErrors(diags) ? Result<calib::SampleOutputs>(InvalidArgument("the rewritten graph is invalid"))
                                : calib::RunSamples(candidate, samples, false, options.num_threads, space);
    if (!got.ok()) {
      out->rolled_back = true;
      out->cosine = 0;
      report->warnings.push_back(fmt::format("rewrite '{}' rolled back: {}", info.name, got.status().message()));
      return false;
    }
    out->cosine = calib::Worst(reference.value(), got.value()).cosine;
    if (!(out->cosine >= options.min_cosine)) {
      out->rolled_back = true;
      report->warnings.push_back(fmt::format(
          "rewrite '{}' rolled back: output cosine {:.7f} vs the original is below {:.7f} on {} sample(s)", info.name,
          out->cosine, options.min_cosine, samples.count));
      return false;
    }
    return true;
  });
}

}  // namespace

std::string ReportText(const Report& r, bool with_notes) {
  size_t fired = 0;
  for (const Outcome& o : r.rewrites) fired += o.fired && !o.rolled_back && !o.refused;
  std::string s =
      r.verified ? fmt::format("rewrites: {} of {} fired, {} ops -> {}, verified on {} {}sample{}\n", fired,
                               r.rewrites.size(), r.ops_before, r.ops_after, r.samples,
                               r.synthetic ? "synthetic " : "", r.samples == 1 ? "" : "s")
                 : fmt::format("rewrites: {} of {} fired, {} ops -> {} (exact by construction; --verify_rewrites "
                               "checks them on samples)\n",
                               fired, r.rewrites.size(), r.ops_before, r.ops_after);
  if (r.judged)
    s += "  each kept only where the quantized model (calibrated, processed, simulated) scores no worse with it\n";
  for (const Outcome& o : r.rewrites) {
    s += fmt::format("  {:<24} {:>4} place{}", o.name, o.fired, o.fired == 1 ? " " : "s");
    if (o.fired && r.verified) s += fmt::format("  cosine {:.7f}", o.cosine);
    if (std::isfinite(o.quantized_with))
      s += fmt::format("  quantized {:.2f} -> {:.2f} dB", o.quantized_without, o.quantized_with);
    if (o.refused) s += "  KEPT OFF";
    if (o.rolled_back) s += "  ROLLED BACK";
    if (!o.skipped.empty()) s += "  skipped: " + o.skipped;
    s += "\n";
    if (with_notes)
      for (const std::string& n : o.notes) s += "      " + n + "\n";
  }
  return s;
}

std::string ReportJson(const Report& r) {
  std::string s =
      fmt::format("{{\"ops_before\":{},\"ops_after\":{},\"verified\":{},\"samples\":{},\"synthetic\":{},\"rewrites\":[",
                  r.ops_before, r.ops_after, r.verified ? "true" : "false", r.samples, r.synthetic ? "true" : "false");
  for (size_t i = 0; i < r.rewrites.size(); ++i) {
    const Outcome& o = r.rewrites[i];
    auto num = [](double v) { return std::isfinite(v) ? fmt::format("{:.9g}", v) : std::string("null"); };
    s += fmt::format("{}{{\"name\":{},\"fired\":{},\"rolled_back\":{},\"skipped\":{},\"cosine\":{},"
                     "\"quantized_without_db\":{},\"quantized_with_db\":{},\"refused\":{},\"notes\":[",
                     i ? "," : "", JsonQuoted(o.name), o.fired, o.rolled_back ? "true" : "false",
                     o.skipped.empty() ? "null" : JsonQuoted(o.skipped), num(o.cosine), num(o.quantized_without),
                     num(o.quantized_with), o.refused ? "true" : "false");
    for (size_t k = 0; k < o.notes.size(); ++k) s += (k ? "," : "") + JsonQuoted(o.notes[k]);
    s += "]}";
  }
  s += "],\"warnings\":[";
  for (size_t k = 0; k < r.warnings.size(); ++k) s += (k ? "," : "") + JsonQuoted(r.warnings[k]);
  return s + "]}";
}

}  // namespace qairt::rewrite
