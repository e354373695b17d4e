// The HTML report of a converted graph: one self-contained file (inline CSS,
// JS and data; no network) showing the graph top to bottom with ops coloured
// by precision, converts and float fallbacks marked, super groups outlined,
// each op's encodings, kernel and reasons on click, per-layer accuracy beside
// each op when samples were compared, the stats summary, the sensitivity
// plot, the resolved options and the diagnostics.
//
// The renderer knows only the IR and plain values: the C boundary fills
// ReportData from a container, a processing result, a compare report or an
// analysis report, whichever the caller has.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "support/diagnostic.h"
#include "support/status.h"

namespace qairt::report {

struct OptionEntry {
  std::string key;
  std::string value;
  std::string source;  // "default", "user", "target"
};

// What kernel selection decided for one op.
struct OpDecision {
  std::string kernel;
  int32_t super_group = -1;
  bool adapted = false;  // the op's requested dtypes were adapted
};

struct Accuracy {
  double sqnr_db = 0;
  double cosine = 0;
  double max_abs = 0;
};

struct OutputAccuracy {
  std::string name;
  Accuracy accuracy;
  uint64_t argmax_agree = 0;                              // samples
  uint64_t argmax_positions = 0, argmax_positions_agree = 0;  // along the last axis (0: unknown)
};

struct ReportData {
  std::string title;     // e.g. the container or model path; "" = the graph's name
  std::string target;    // "" = none
  std::string producer;  // e.g. "qairt 0.1.0"; "" = none
  std::vector<OptionEntry> options;
  std::unordered_map<std::string, OpDecision> ops;      // by op name
  std::unordered_map<std::string, std::string> reasons;  // by tensor name, '^'-joined reason tokens
  std::unordered_map<std::string, Accuracy> layers;      // per-layer accuracy by tensor name
  std::vector<OutputAccuracy> outputs;                   // per graph output
  size_t samples = 0;                                    // samples behind layers/outputs
  std::string stats;            // the stats summary text
  std::string sensitivity_svg;  // an <svg> element (qairt's own plot), embedded as is
  Diags diagnostics;
};

// "int4", "int8", "int16", "int32", "fp16", "fp32", "bf16" or "other": the
// precision an op computes in, read from its first output's encoding (else
// its data type).
std::string_view OpPrecision(const Graph& graph, OpId op);

// The report as one HTML document. Fails only for a graph with a cycle.
Result<std::string> RenderHtml(const Graph& graph, const ReportData& data);

// The page's stylesheet and script (html_assets.cpp).
std::string_view ReportCss();
std::string_view ReportScript();

}  // namespace qairt::report
