#include "passes/pass_manager.h"

#include <fmt/format.h>

#include "passes/quant_log.h"
#include "passes/legalize.h"

namespace qairt::pass {

std::string PrintPipeline() {
  std::string s;
  size_t i = 1;
  for (const PassInfo& p : Pipeline()) s += fmt::format("{:2}. {:<26} {}: {}\n", i++, p.name, p.title, p.summary);
  return s;
}

Status RunPipeline(Session& session) {
  const std::string& stop = session.options().stop_after;
  if (!stop.empty()) {
    bool known = false;
    for (const PassInfo& p : Pipeline()) known = known || p.name == stop;
    if (!known) return InvalidArgument("--stop_after '{}': no such pass (see --print_pipeline)", stop);
  }
  // A pass that left the graph as the last validated one was (the same
  // version) left it valid; the first pass's result is always validated.
  uint64_t valid = 0;
  for (const PassInfo& p : Pipeline()) {
    session.Trace("======== BEGIN: {} ========", p.title);
    QAIRT_RETURN_IF_ERROR(p.run(session));
    session.Trace("======== END: {} ========", p.title);
    if (session.graph().version() != valid) {
      Diagnostics diags = session.graph().Validate();
      for (const Diagnostic& d : diags)
        if (d.severity == Severity::kError)
          return Status(StatusCode::kInternal,
                        fmt::format("pass '{}' left the graph invalid: {}", p.name, d.message));
      valid = session.graph().version();
    }
    if (p.name == stop) break;
  }
  return Status::Ok();
}

Status Process(Graph* graph, Options options, ProcessResult* result) {
  *result = ProcessResult{};
  std::vector<ResolvedOption> resolved;
  QAIRT_RETURN_IF_ERROR(ResolveOptions(&options, &resolved));
  LegalizeReport legalized;
  QAIRT_RETURN_IF_ERROR(LegalizeForTarget(graph, *options.target, &legalized));
  {
    Diagnostics diags = graph->Validate();
    for (const Diagnostic& d : diags)
      if (d.severity == Severity::kError)
        return Status(StatusCode::kValidationFailed, "the graph is invalid before processing: " + d.message);
  }
  Session session(graph, std::move(options));
  session.resolved_options = resolved;
  // The TRACE log opens with the resolved options (what the container and
  // the Q-DQ export's metadata record too), so a log is self-describing.
  {
    std::string header = "======== OPTIONS ========\n";
    for (const ResolvedOption& o : resolved)
      header += fmt::format("  {} = {} ({})\n", o.key, o.value, OptionSourceName(o.source));
    session.TraceRaw(header);
  }
  if (legalized.changed) {
    std::string text = "======== LEGALIZE FOR TARGET ========\n";
    for (const std::string& n : legalized.notes) text += "  " + n + "\n";
    session.TraceRaw(text);
  }
  session.TraceRaw(GraphSnapshot(session, "before target-specific processing"));
  QAIRT_RETURN_IF_ERROR(RunPipeline(session));
  session.TraceRaw(GraphSnapshot(session, "after target-specific processing"));

  result->errors = session.errors();
  result->warnings = session.warnings();
  result->diagnostics = session.diagnostics();
  result->stats = StatsSummary(session);
  if (session.options().log_level == LogLevel::kTrace) {
    result->log = session.trace();
    if (!result->errors.empty()) {
      result->log += "======== ERRORS ========\n";
      for (const auto& e : result->errors) result->log += e + "\n";
    }
    result->log += result->stats;
  } else if (session.options().log_level == LogLevel::kInfo) {
    result->log = InfoCsv(session);
  }
  result->options = resolved;
  for (OpId id = 0; id < graph->op_count(); ++id) {
    const OpRecord* r = session.find_op_record(id);
    ProcessResult::OpAnnotation a;
    a.op = graph->op(id).name;
    if (r) {
      a.kernel = r->kernel;
      a.super_group = r->super_group;
      a.adapted = r->adapted;
    }
    result->annotations.push_back(std::move(a));
  }
  for (TensorId id = 0; id < graph->tensor_count(); ++id) {
    const TensorRecord* r = session.find_tensor_record(id);
    if (!r || r->reasons.empty()) continue;
    std::string joined;
    for (const auto& x : r->reasons) joined += (joined.empty() ? "" : "^") + x;
    result->notes.push_back({graph->tensor(id).name, joined});
  }
  return Status::Ok();
}

}  // namespace qairt::pass
