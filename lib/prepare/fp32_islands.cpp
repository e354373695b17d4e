// Precision islands (--fp32_nodes auto|FILE): the nodes kept in fp32 to meet
// --fp16_budget and the fp32_nodes.yaml that lists them.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "prepare/prepare_internal.h"
#include "support/json_writer.h"

namespace qairt::prepare::internal {

namespace {

constexpr size_t kMaxAutoIterations = 64;

}  // namespace

void Preparer::Islands() {
  if (o_.fp32_nodes.empty()) return;
  if (ref_.empty()) {
    if (o_.input_list_path.empty())
      Add(Severity::kError, "fp32-nodes", o_.fp32_nodes, "--fp32_nodes needs calibration data (--input_list)");
    return;
  }
  const Graph& g = graphs_[audit_spec_];
  const auto& og = model_.proto.graph();
  const size_t nn = static_cast<size_t>(og.node_size());
  std::vector<bool> island(nn, false);
  std::map<std::string, int> first_output;
  for (int i = 0; i < og.node_size(); ++i)
    if (og.node(i).output_size() && !og.node(i).output(0).empty()) first_output[og.node(i).output(0)] = i;
  auto count = [&]() { return static_cast<size_t>(std::count(island.begin(), island.end(), true)); };

  if (o_.fp32_nodes != "auto") {
    std::ifstream in(o_.fp32_nodes);
    if (!in) {
      Add(Severity::kError, "fp32-nodes", o_.fp32_nodes, "cannot read '{}': {}", o_.fp32_nodes, std::strerror(errno));
      return;
    }
    std::string line;
    size_t lineno = 0, names = 0;
    while (std::getline(in, line)) {
      ++lineno;
      std::string s = line;
      auto trim = [](std::string& x) {
        x.erase(0, x.find_first_not_of(" \t\r"));
        x.erase(x.find_last_not_of(" \t\r") + 1);
      };
      trim(s);
      if (s.empty() || s[0] == '#' || s.rfind("FP32NodeInstanceNames", 0) == 0) continue;
      if (s[0] == '-') {
        s.erase(0, 1);
        trim(s);
      } else if (s.find(':') != std::string::npos && s.front() != '"') {
        Add(Severity::kError, "fp32-nodes", o_.fp32_nodes, "'{}' line {}: only FP32NodeInstanceNames is supported, got "
            "'{}'", o_.fp32_nodes, lineno, s);
        continue;
      }
      if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
      ++names;
      auto it = first_output.find(s);
      if (it == first_output.end())
        Add(Severity::kError, "fp32-nodes", s, "'{}' line {}: '{}' is not the first output of any node of the model",
            o_.fp32_nodes, lineno, s);
      else
        island[static_cast<size_t>(it->second)] = true;
    }
    if (names == 0) Add(Severity::kError, "fp32-nodes", o_.fp32_nodes, "'{}' names no node", o_.fp32_nodes);
    if (Failed()) return;
  } else {
    const size_t nsim = std::min<size_t>(samples_.size(), 4);
    std::vector<Sample> sims(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(nsim));
    std::string first;
    double err = r_.fp16_error;
    auto node_of = [&](const std::string& tensor) -> int {
      auto t = g.FindTensor(tensor);
      if (!t || g.tensor(*t).producer == kInvalidId) return -1;
      return node_of_op_[g.tensor(*t).producer];
    };
    // Nodes whose outputs overflow fp16 in fp32 must be fp32, and so must
    // their consumers (they would read an out-of-range value).
    auto closure = [&]() {
      bool changed = true;
      while (changed) {
        changed = false;
        for (OpId op = 0; op < g.op_count(); ++op) {
          const int n = node_of_op_[op];
          if (n < 0 || !island[static_cast<size_t>(n)]) continue;
          for (TensorId t : g.op(op).outputs) {
            auto s = stats_.find(g.tensor(t).name);
            if (s == stats_.end() || (s->second.over == 0 && s->second.nonfinite == 0)) continue;
            for (const Use& u : g.tensor(t).consumers) {
              const int c = node_of_op_[u.op];
              if (c >= 0 && !island[static_cast<size_t>(c)]) island[static_cast<size_t>(c)] = changed = true;
            }
          }
        }
      }
    };
    if (err > o_.fp16_budget) {
      for (const auto& [name, s] : stats_)
        if (s.over) {
          const int n = node_of(name);
          if (n >= 0) island[static_cast<size_t>(n)] = true;
        }
      closure();
      for (size_t iter = 0; iter < kMaxAutoIterations; ++iter) {
        err = Simulate(island, sims, &first);
        if (err <= o_.fp16_budget || first.empty()) break;
        const int n = node_of(first);
        if (n < 0) break;
        if (!island[static_cast<size_t>(n)]) {
          island[static_cast<size_t>(n)] = true;
        } else {
          // Already fp32 but its output is still rounded: an fp16 consumer
          // reads it. Take the consumers in.
          bool added = false;
          auto t = g.FindTensor(first);
          for (const Use& u : g.tensor(*t).consumers) {
            const int c = node_of_op_[u.op];
            if (c >= 0 && !island[static_cast<size_t>(c)]) island[static_cast<size_t>(c)] = added = true;
          }
          if (!added) break;
        }
        closure();
      }
      // Drop nodes the budget does not need (latest first).
      if (err <= o_.fp16_budget)
        for (size_t k = nn; k-- > 0;) {
          if (!island[k]) continue;
          island[k] = false;
          std::vector<bool> before = island;
          closure();
          if (island != before) {  // a required consumer of an overflowing node
            island = before;
            island[k] = true;
            continue;
          }
          std::string f2;
          const double e2 = Simulate(island, sims, &f2);
          if (e2 <= o_.fp16_budget) err = e2;
          else island[k] = true;
        }
    }
  }
  // Final numbers on every sample.
  std::string first;
  r_.fp32_island_nodes = count();
  r_.fp16_island_error = r_.fp32_island_nodes ? Simulate(island, samples_, &first) : r_.fp16_error;
  std::set<std::string> names;
  for (size_t k = 0; k < nn; ++k) {
    if (!island[k]) continue;
    const auto& node = og.node(static_cast<int>(k));
    if (node.output_size() == 0 || node.output(0).empty()) continue;
    if (names.insert(node.output(0)).second) yaml_names_.push_back(node.output(0));
    // The compiler's precision info is per first output; a Clip's producer
    // must be listed too or the value is converted before the Clip.
    if (node.op_type() == "Clip" && node.input_size() && ix_.producer.count(node.input(0))) {
      const auto& p = og.node(ix_.producer.at(node.input(0)));
      if (p.output_size() && names.insert(p.output(0)).second) yaml_names_.push_back(p.output(0));
    }
  }
  r_.fp32_nodes = yaml_names_;
  const bool met = r_.fp16_island_error <= o_.fp16_budget;
  Add(met ? Severity::kInfo : Severity::kWarning, "fp32-island", o_.fp32_nodes == "auto" ? "auto" : o_.fp32_nodes,
      "{} of {} nodes kept in fp32 ({} YAML names): fp16 output error {} -> {} (budget {}{})", r_.fp32_island_nodes, nn,
      yaml_names_.size(), Num(r_.fp16_error), Num(r_.fp16_island_error), Num(o_.fp16_budget), met ? ", met" : ", NOT met");
  if (!yaml_names_.empty()) {
    yaml_ = "# qairt prepare: nodes qaic-compile keeps in fp32 (-node-precision-info), by first output name\n"
            "FP32NodeInstanceNames:\n";
    for (const auto& n : yaml_names_) {
      std::string q;
      AppendJsonString(&q, n);  // a JSON string is a valid double-quoted YAML scalar
      yaml_ += "  - " + q + "\n";
    }
  }
}

}  // namespace qairt::prepare::internal
