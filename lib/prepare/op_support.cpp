// Op support: risky and compiler-custom ONNX ops, ops missing from the
// compiler's OnnxSupportedOperators.txt and IR ops without an fp16 kernel in
// the target descriptor.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "prepare/prepare_internal.h"

namespace qairt::prepare::internal {

void Preparer::OpSupport() {
  const auto& g = model_.proto.graph();
  std::map<std::string, std::vector<std::string>> onnx_ops;
  for (const auto& n : g.node()) {
    const std::string key = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "::" + n.op_type();
    onnx_ops[key].push_back(n.name().empty() ? (n.output_size() ? n.output(0) : "?") : n.name());
  }
  for (const auto& [op, nodes] : onnx_ops) {
    if (op.rfind("com.qti.aisw.onnx::", 0) == 0 || op.rfind("com.qualcomm.cloud::", 0) == 0)
      Add(Severity::kInfo, "compiler-custom-op", op, "{} ({} nodes): a compiler-known custom op", op, nodes.size());
    if (op == "Einsum" || op == "NonZero")
      Add(Severity::kWarning, "op-risky", op, "{} ({} nodes, first '{}'): {}", op, nodes.size(), nodes[0],
          op == "Einsum" ? "not in the compiler's ONNX op list in practice: rewrite it as MatMul/Transpose"
                         : "data-dependent output shape: the compiler needs static shapes");
  }
  if (!o_.supported_ops_path.empty()) {
    std::ifstream in(o_.supported_ops_path);
    if (!in) {
      Add(Severity::kError, "supported-ops-file", o_.supported_ops_path, "cannot read '{}': {}", o_.supported_ops_path,
          std::strerror(errno));
    } else {
      std::set<std::string> listed;
      std::string line;
      while (std::getline(in, line)) {
        // One op per line; anything after the first token (versions, notes)
        // and comment lines are ignored.
        std::istringstream ls(line);
        std::string tok;
        if (!(ls >> tok) || tok[0] == '#') continue;
        while (!tok.empty() && (tok.back() == ',' || tok.back() == ':')) tok.pop_back();
        listed.insert(tok);
      }
      if (listed.empty())
        Add(Severity::kError, "supported-ops-file", o_.supported_ops_path, "'{}' lists no operator", o_.supported_ops_path);
      else
        for (const auto& [op, nodes] : onnx_ops) {
          const std::string bare = op.substr(op.find("::") == std::string::npos ? 0 : op.find("::") + 2);
          if (!listed.count(op) && !listed.count(bare))
            Add(Severity::kError, "op-unsupported", op, "{} ({} nodes, first '{}') is not in '{}'", op, nodes.size(),
                nodes[0], o_.supported_ops_path);
        }
    }
  }
  if (o_.target_fp16_ops.empty() || graphs_.empty()) return;
  std::map<std::string, std::vector<std::string>> missing;
  const Graph& ir = graphs_[audit_spec_];
  for (OpId i = 0; i < ir.op_count(); ++i)
    if (!o_.target_fp16_ops.count(ir.op(i).type)) missing[ir.op(i).type].push_back(ir.op(i).source_name.empty() ? ir.op(i).name : ir.op(i).source_name);
  for (const auto& [op, nodes] : missing)
    Add(Severity::kWarning, "op-not-in-descriptor", op, "{} ({} ops, first from node '{}') has no fp16 kernel in the {} "
        "descriptor (targets/builtin/{}.json); check the compiler's OnnxSupportedOperators.txt (--supported_ops)",
        op, nodes.size(), nodes[0], o_.target_name, o_.target_name);
}

}  // namespace qairt::prepare::internal
