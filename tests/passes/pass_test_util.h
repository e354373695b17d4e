// Small graphs for the target-processing tests, built with the graph builder.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass_manager.h"
#include "target/target_descriptor.h"

namespace qairt::testing {

inline Encoding PerTensor(DType dtype, float scale, int32_t offset, bool overridden = true) {
  Encoding e;
  e.kind = EncodingKind::kPerTensor;
  e.dtype = dtype;
  e.scales = {scale};
  e.offsets = {offset};
  e.overridden = overridden;
  return e;
}

inline Encoding SymmetricPerTensor(DType dtype, float scale) {
  Encoding e = PerTensor(dtype, scale, 0);
  e.symmetry = Symmetry::kSymmetric;
  if (!IsSigned(dtype)) e.offsets = {-(int32_t{1} << (DTypeBits(dtype) - 1))};
  return e;
}

inline Encoding PerChannel(DType dtype, std::vector<float> scales, int32_t axis = 0) {
  Encoding e;
  e.kind = EncodingKind::kPerChannel;
  e.dtype = dtype;
  e.axis = axis;
  e.symmetry = Symmetry::kSymmetric;
  e.scales = std::move(scales);
  e.offsets.assign(e.scales.size(), 0);
  e.overridden = true;
  return e;
}

inline std::shared_ptr<const StaticData> FloatData(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return StaticData::Adopt(std::move(b));
}

inline std::shared_ptr<const StaticData> IntData(const std::vector<int32_t>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(int32_t));
  std::memcpy(b.data(), v.data(), b.size());
  return StaticData::Adopt(std::move(b));
}

inline std::vector<float> Ramp(size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n > 1 ? n - 1 : 1);
  return v;
}

inline target::TargetPtr Builtin(const std::string& name) {
  auto t = target::LoadBuiltinTarget(name);
  if (!t.ok()) throw std::runtime_error(t.status().message());
  return t.value();
}

// Runs processing; returns the result (REQUIREs the run itself succeeded).
inline pass::ProcessResult RunProcess(Graph* g, target::TargetPtr t, pass::LogLevel level = pass::LogLevel::kTrace,
                                      pass::Options o = {}) {
  o.target = std::move(t);
  o.log_level = level;
  pass::ProcessResult r;
  Status s = pass::Process(g, o, &r);
  if (!s.ok()) throw std::runtime_error(s.message());
  return r;
}

inline bool HasWarning(const pass::ProcessResult& r, const std::string& code) {
  for (const Diag& d : r.diagnostics)
    if (d.code == code && d.severity == Severity::kWarning) return true;
  return false;
}

inline size_t CountOps(const Graph& g, const std::string& type) {
  size_t n = 0;
  for (OpId i = 0; i < g.op_count(); ++i) n += g.op(i).type == type;
  return n;
}

inline bool Contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// CSV row (without the trailing newline) for a tensor, or "".
inline std::string CsvRow(const std::string& csv, const std::string& tensor) {
  size_t pos = 0;
  while (pos < csv.size()) {
    size_t end = csv.find('\n', pos);
    if (end == std::string::npos) end = csv.size();
    std::string line = csv.substr(pos, end - pos);
    if (line.rfind(tensor + ",", 0) == 0) return line;
    pos = end + 1;
  }
  return "";
}

// Splits a CSV row on commas (the test tensors' names have none).
inline std::vector<std::string> Fields(const std::string& row) {
  std::vector<std::string> f;
  size_t pos = 0;
  while (true) {
    size_t c = row.find(',', pos);
    f.push_back(row.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return f;
}

}  // namespace qairt::testing
