#include "calib/input_list.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace qairt::calib {

namespace {

std::string Dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string Resolve(const std::string& list_path, const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  return Dir(list_path) + "/" + p;
}

std::vector<std::string> SplitSpaces(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string tok;
  while (in >> tok) out.push_back(tok);
  return out;
}

}  // namespace

Result<std::vector<InputSpec>> GraphInputSpecs(const Graph& graph) {
  std::vector<InputSpec> specs;
  for (TensorId id : graph.inputs()) {
    const Tensor& t = graph.tensor(id);
    InputSpec s;
    s.name = t.name;
    s.dtype = t.dtype;
    if (!t.shape.fully_known())
      return InvalidArgument("graph input '{}' has shape {}: calibration needs static shapes (use -d NAME DIMS or "
                             "--define_symbol)",
                             t.name, t.shape.ToString());
    s.dims = t.shape.extents();
    auto bytes = StorageBytes(t.dtype, *t.shape.element_count());
    if (!bytes) return InvalidArgument("graph input '{}' is too large", t.name);
    s.bytes = *bytes;
    specs.push_back(std::move(s));
  }
  return specs;
}

Result<InputList> ReadInputList(const std::string& path, const std::vector<InputSpec>& inputs) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status(StatusCode::kIoError, fmt::format("input_list '{}': {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return Status(StatusCode::kIoError, fmt::format("input_list '{}': not a file", path));
  if (static_cast<uint64_t>(st.st_size) > kMaxInputListBytes)
    return InvalidArgument("input_list '{}': {} bytes, more than the limit of {}", path, st.st_size,
                           kMaxInputListBytes);
  std::ifstream f(path);
  if (!f) return Status(StatusCode::kIoError, fmt::format("input_list '{}': cannot open", path));
  InputList list;
  list.path = path;
  list.inputs = inputs;
  std::string line;
  size_t line_no = 0;
  while (std::getline(f, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto toks = SplitSpaces(line);
    if (toks.empty() || toks[0][0] == '#' || (line_no == 1 && toks[0][0] == '%')) continue;
    if (list.samples.size() >= kMaxSamples)
      return InvalidArgument("input_list '{}' line {}: more than {} samples", path, line_no, kMaxSamples);
    const std::string where = fmt::format("input_list '{}' line {}", path, line_no);
    InputList::Sample s;
    s.line = line_no;
    s.files.assign(inputs.size(), "");
    const bool named = toks[0].find(":=") != std::string::npos;
    if (!named && toks.size() != inputs.size())
      return InvalidArgument("{}: {} paths for {} graph inputs (give one per input, or name:=path entries)", where,
                             toks.size(), inputs.size());
    for (size_t k = 0; k < toks.size(); ++k) {
      size_t idx = k;
      std::string file = toks[k];
      const size_t sep = toks[k].find(":=");
      if (named != (sep != std::string::npos))
        return InvalidArgument("{}: mixes name:=path entries with bare paths ('{}')", where, toks[k]);
      if (named) {
        const std::string name = toks[k].substr(0, sep);
        file = toks[k].substr(sep + 2);
        idx = inputs.size();
        for (size_t i = 0; i < inputs.size(); ++i)
          if (inputs[i].name == name) idx = i;
        if (idx == inputs.size()) {
          std::string names;
          for (const auto& in : inputs) names += (names.empty() ? "'" : ", '") + in.name + "'";
          return InvalidArgument("{}: no graph input named '{}' (inputs: {})", where, name, names);
        }
        if (!s.files[idx].empty()) return InvalidArgument("{}: input '{}' is given twice", where, name);
      }
      const std::string resolved = Resolve(path, file);
      struct stat fs;
      if (::stat(resolved.c_str(), &fs) != 0)
        return Status(StatusCode::kIoError, fmt::format("{}: input '{}': file '{}': {}", where, inputs[idx].name,
                                                        resolved, std::strerror(errno)));
      if (s.int64_file.size() != inputs.size()) s.int64_file.assign(inputs.size(), false);
      if (inputs[idx].dtype == DType::kInt32 && static_cast<uint64_t>(fs.st_size) == 2 * inputs[idx].bytes) {
        s.int64_file[idx] = true;
      } else if (static_cast<uint64_t>(fs.st_size) != inputs[idx].bytes) {
        std::string hint;
        const uint64_t elems = inputs[idx].bytes / std::max<uint64_t>(1, DTypeBits(inputs[idx].dtype) / 8);
        if (elems && static_cast<uint64_t>(fs.st_size) % elems == 0 && fs.st_size != 0)
          hint = fmt::format(" (that is {} bytes per element; the input is {})",
                             static_cast<uint64_t>(fs.st_size) / elems, DTypeName(inputs[idx].dtype));
        return InvalidArgument("{}: input '{}': file '{}' has {} bytes, but a {} tensor of shape [{}] needs {}{}", where,
                               inputs[idx].name, resolved, fs.st_size, DTypeName(inputs[idx].dtype),
                               fmt::join(inputs[idx].dims, ", "), inputs[idx].bytes, hint);
      }
      s.files[idx] = resolved;
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      if (s.files[i].empty()) return InvalidArgument("{}: no file for input '{}'", where, inputs[i].name);
    list.samples.push_back(std::move(s));
  }
  if (list.samples.empty()) return InvalidArgument("input_list '{}': no samples (the list is empty)", path);
  return list;
}

Result<std::vector<std::vector<uint8_t>>> LoadSample(const InputList& list, size_t index) {
  if (index >= list.samples.size()) return InvalidArgument("sample {} out of range", index);
  const auto& s = list.samples[index];
  std::vector<std::vector<uint8_t>> out(list.inputs.size());
  for (size_t i = 0; i < list.inputs.size(); ++i) {
    const InputSpec& in = list.inputs[i];
    const std::string where = fmt::format("input_list '{}' line {}: input '{}': file '{}'", list.path, s.line, in.name,
                                          s.files[i]);
    FILE* f = std::fopen(s.files[i].c_str(), "rb");
    if (!f) return Status(StatusCode::kIoError, fmt::format("{}: {}", where, std::strerror(errno)));
    const bool wide = i < s.int64_file.size() && s.int64_file[i];
    const size_t want = wide ? 2 * in.bytes : in.bytes;
    out[i].resize(want);
    const size_t got = want ? std::fread(out[i].data(), 1, want, f) : 0;
    std::fclose(f);
    if (got != want) return Status(StatusCode::kIoError, fmt::format("{}: short read ({} of {} bytes)", where, got,
                                                                     want));
    if (wide) {
      const size_t n = in.bytes / 4;
      std::vector<uint8_t> narrow(in.bytes);
      for (size_t k = 0; k < n; ++k) {
        int64_t v;
        std::memcpy(&v, out[i].data() + 8 * k, 8);
        if (v < INT32_MIN || v > INT32_MAX)
          return InvalidArgument("{}: element {} is {}: the int64 file is read for an int32 input (int64 inputs are "
                                 "narrowed; --keep_int64_inputs keeps them) and the value does not fit",
                                 where, k, v);
        const auto x = static_cast<int32_t>(v);
        std::memcpy(narrow.data() + 4 * k, &x, 4);
      }
      out[i] = std::move(narrow);
    }
    if (in.dtype == DType::kFloat32) {
      const size_t n = in.bytes / 4;
      for (size_t k = 0; k < n; ++k) {
        float v;
        std::memcpy(&v, out[i].data() + 4 * k, 4);
        if (!std::isfinite(v))
          return InvalidArgument("{}: element {} is {} (calibration data must be finite)", where, k,
                                 std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf"));
      }
    }
  }
  return out;
}

}  // namespace qairt::calib
