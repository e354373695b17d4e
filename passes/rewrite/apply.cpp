// The driver that applies the registered rewrites (passes/registry.cpp) and
// verifies them (the classic flow's "gate on that before quantizing": a
// rewrite that changes what the model computes is undone, not trusted).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>

#include "calib/sample_eval.h"
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
    if (out.fired && accept(info, candidate, &out)) current = std::move(candidate);
    report->rewrites.push_back(std::move(out));
  }
  report->ops_after = current.op_count();
  *graph = std::move(current);
  return Status::Ok();
}

}  // namespace

Status RunRewrites(Graph* graph, const Options& options, Report* report) {
  *report = Report{};
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
  auto reference = calib::RunSamples(*graph, samples, false, options.num_threads);
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
                                : calib::RunSamples(candidate, samples, false, options.num_threads);
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

std::string ReportText(const Report& r, bool with_notes) {
  size_t fired = 0;
  for (const Outcome& o : r.rewrites) fired += o.fired && !o.rolled_back;
  std::string s =
      r.verified ? fmt::format("rewrites: {} of {} fired, {} ops -> {}, verified on {} {}sample{}\n", fired,
                               r.rewrites.size(), r.ops_before, r.ops_after, r.samples,
                               r.synthetic ? "synthetic " : "", r.samples == 1 ? "" : "s")
                 : fmt::format("rewrites: {} of {} fired, {} ops -> {} (exact by construction; --verify_rewrites "
                               "checks them on samples)\n",
                               fired, r.rewrites.size(), r.ops_before, r.ops_after);
  for (const Outcome& o : r.rewrites) {
    s += fmt::format("  {:<24} {:>4} place{}", o.name, o.fired, o.fired == 1 ? " " : "s");
    if (o.fired && r.verified) s += fmt::format("  cosine {:.7f}", o.cosine);
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
    s += fmt::format("{}{{\"name\":{},\"fired\":{},\"rolled_back\":{},\"skipped\":{},\"cosine\":{},\"notes\":[",
                     i ? "," : "", JsonQuoted(o.name), o.fired, o.rolled_back ? "true" : "false",
                     o.skipped.empty() ? "null" : JsonQuoted(o.skipped),
                     std::isfinite(o.cosine) ? fmt::format("{:.9g}", o.cosine) : "null");
    for (size_t k = 0; k < o.notes.size(); ++k) s += (k ? "," : "") + JsonQuoted(o.notes[k]);
    s += "]}";
  }
  s += "],\"warnings\":[";
  for (size_t k = 0; k < r.warnings.size(); ++k) s += (k ? "," : "") + JsonQuoted(r.warnings[k]);
  return s + "]}";
}

}  // namespace qairt::rewrite
