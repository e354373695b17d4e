// `qairt run`: runs a model on the reference CPU executor over the samples of
// an input_list, writing outputs as qnn-net-run does
// (DIR/Result_<i>/<output name>.raw, raw little-endian). Uses only the
// public C API.
#include <qairt/qairt.h>
#include <qairt/qairt_exec.h>
#include <qairt/qairt_import.h>
#if __has_include(<qairt/qairt_container.h>)
#include <qairt/qairt_container.h>
#define QAIRT_RUN_HAS_CONTAINER 1
#endif

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "cli_util.h"
#include "help.h"

namespace fs = std::filesystem;

using qairt_cli::ParseDims;
using qairt_cli::ParseInt;

namespace {

struct RunArgs {
  std::string model, input_list, output_dir;
  std::vector<std::string> symbol_names, dim_names;
  std::vector<int64_t> symbol_values;
  std::vector<std::vector<int64_t>> dims;
  uint32_t threads = 1;
  bool debug = false;
  bool no_quant_sim = false;
};

constexpr const char* kUsage =
    "usage: qairt run MODEL.onnx|MODEL.qairt --input_list LIST --output_dir DIR [-d NAME DIMS]... "
    "[--define_symbol NAME VALUE]... [--num_threads N] [--debug] [--no_quant_sim]\n";

int Parse(int argc, char** argv, RunArgs* a) {
  auto need = [&](int i, int n, const std::string& flag) {
    if (i + n >= argc) {
      std::fprintf(stderr, "qairt run: %s needs %d argument%s\n", flag.c_str(), n, n > 1 ? "s" : "");
      return false;
    }
    return true;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--input_list") {
      if (!need(i, 1, arg)) return 2;
      a->input_list = argv[++i];
    } else if (arg == "--output_dir") {
      if (!need(i, 1, arg)) return 2;
      a->output_dir = argv[++i];
    } else if (arg == "-i" || arg == "--input_network") {
      if (!need(i, 1, arg)) return 2;
      a->model = argv[++i];
    } else if (arg == "--debug") {
      a->debug = true;
    } else if (arg == "--no_quant_sim") {
      a->no_quant_sim = true;
    } else if (arg == "--num_threads") {
      int64_t v;
      if (!need(i, 1, arg)) return 2;
      if (!ParseInt(argv[i + 1], &v) || v < 1 || v > 1024) {
        std::fprintf(stderr, "qairt run: --num_threads '%s' must be an integer in 1..1024\n", argv[i + 1]);
        return 2;
      }
      a->threads = static_cast<uint32_t>(v);
      ++i;
    } else if (arg == "-d" || arg == "--input_dim") {
      if (!need(i, 2, arg)) return 2;
      std::vector<int64_t> dims;
      if (!ParseDims(argv[i + 2], &dims)) {
        std::fprintf(stderr, "qairt run: %s %s: '%s' is not a comma-separated list of dims\n", arg.c_str(), argv[i + 1],
                     argv[i + 2]);
        return 2;
      }
      a->dim_names.push_back(argv[i + 1]);
      a->dims.push_back(std::move(dims));
      i += 2;
    } else if (arg == "--define_symbol") {
      if (!need(i, 2, arg)) return 2;
      int64_t v;
      if (!ParseInt(argv[i + 2], &v)) {
        std::fprintf(stderr, "qairt run: --define_symbol %s: '%s' is not a non-negative integer\n", argv[i + 1],
                     argv[i + 2]);
        return 2;
      }
      a->symbol_names.push_back(argv[i + 1]);
      a->symbol_values.push_back(v);
      i += 2;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a->model.empty() && !arg.empty() && arg[0] != '-') {
      a->model = arg;
    } else {
      std::fprintf(stderr, "qairt run: unknown argument '%s'%s\n%s", arg.c_str(),
                   qairt_cli::SuggestFlag("run", arg).c_str(), kUsage);
      return 2;
    }
  }
  if (a->model.empty() || a->input_list.empty() || a->output_dir.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  return 0;
}

bool Fail(qairt_status_t* s, const char* what) {
  if (!s) return false;
  std::fprintf(stderr, "qairt run: %s%s%s\n", what, *what ? ": " : "", qairt_status_message(s));
  qairt_status_free(s);
  return true;
}

std::string ReportText(qairt_import_report_t* report) {
  size_t n = 0;
  if (qairt_status_t* s = qairt_import_report_text(report, nullptr, 0, &n)) {
    qairt_status_free(s);
    return {};
  }
  std::string text(n + 1, '\0');
  if (qairt_status_t* s = qairt_import_report_text(report, text.data(), text.size(), &n)) {
    qairt_status_free(s);
    return {};
  }
  text.resize(n);
  return text;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

qairt_graph_t* LoadModel(const RunArgs& a) {
#ifdef QAIRT_RUN_HAS_CONTAINER
  if (EndsWith(a.model, ".qairt")) {
    if (!a.dim_names.empty() || !a.symbol_names.empty())
      std::fprintf(stderr, "qairt run: note: -d/--define_symbol are ignored for a .qairt model (its shapes are fixed)\n");
    qairt_container_t* c = nullptr;
    if (Fail(qairt_container_load_file(a.model.c_str(), &c), "")) return nullptr;
    qairt_graph_t* g = nullptr;
    const bool bad = Fail(qairt_container_get_graph(c, &g), a.model.c_str());
    qairt_container_destroy(c);
    return bad ? nullptr : g;
  }
#else
  if (EndsWith(a.model, ".qairt")) {
    std::fprintf(stderr, "qairt run: %s: this build cannot read .qairt containers\n", a.model.c_str());
    return nullptr;
  }
#endif
  std::vector<const char*> symbol_names, dim_names;
  for (const auto& n : a.symbol_names) symbol_names.push_back(n.c_str());
  for (const auto& n : a.dim_names) dim_names.push_back(n.c_str());
  std::vector<size_t> ranks;
  std::vector<const int64_t*> dims;
  for (const auto& d : a.dims) {
    ranks.push_back(d.size());
    dims.push_back(d.data());
  }
  qairt_import_options opts;
  qairt_import_options_init(&opts);
  opts.flags |= QAIRT_IMPORT_REQUIRE_STATIC;
  opts.num_define_symbols = symbol_names.size();
  opts.define_symbol_names = symbol_names.data();
  opts.define_symbol_values = a.symbol_values.data();
  opts.num_input_dims = dim_names.size();
  opts.input_dim_names = dim_names.data();
  opts.input_dim_ranks = ranks.data();
  opts.input_dims = dims.data();
  qairt_graph_t* graph = nullptr;
  qairt_import_report_t* report = nullptr;
  qairt_status_t* s = qairt_cli::ImportModelFile(a.model.c_str(), &opts, &graph, &report);
  if (s) {
    std::fprintf(stderr, "qairt run: %s\n", qairt_status_message(s));
    qairt_status_free(s);
    if (report) std::fputs(ReportText(report).c_str(), stderr);
    if (report) qairt_import_report_destroy(report);
    if (graph) qairt_graph_destroy(graph);
    return nullptr;
  }
  if (report) qairt_import_report_destroy(report);
  return graph;
}

struct Sample {
  std::vector<std::vector<char>> data;  // one per graph input
};

std::string DescribeSpec(const qairt_exec_tensor_info& info) {
  std::string dims = "[";
  for (uint32_t k = 0; k < info.rank; ++k) dims += (k ? "," : "") + std::to_string(info.dims[k]);
  return std::string(qairt_dtype_name(info.dtype)) + " " + dims + "]";
}

// Reads and checks every sample of the list before anything runs.
bool ReadInputList(const std::string& list, const std::vector<qairt_exec_tensor_info>& inputs, std::vector<Sample>* out) {
  std::ifstream f(list);
  if (!f) {
    std::fprintf(stderr, "qairt run: cannot open input_list %s: %s\n", list.c_str(), std::strerror(errno));
    return false;
  }
  const fs::path base = fs::path(list).parent_path();
  std::string line;
  size_t line_no = 0;
  while (std::getline(f, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || line[first] == '%') continue;
    std::istringstream tokens(line);
    std::vector<std::string> entries;
    for (std::string t; tokens >> t;) entries.push_back(t);
    Sample sample;
    sample.data.resize(inputs.size());
    std::vector<std::string> paths(inputs.size());
    std::vector<bool> given(inputs.size(), false);
    const bool named = entries[0].find(":=") != std::string::npos;
    for (size_t e = 0; e < entries.size(); ++e) {
      const size_t sep = entries[e].find(":=");
      if ((sep != std::string::npos) != named) {
        std::fprintf(stderr, "qairt run: %s line %zu: mixes name:=path entries with bare paths\n", list.c_str(), line_no);
        return false;
      }
      size_t idx = e;
      std::string path = entries[e];
      if (named) {
        const std::string name = entries[e].substr(0, sep);
        path = entries[e].substr(sep + 2);
        idx = inputs.size();
        for (size_t k = 0; k < inputs.size(); ++k)
          if (name == inputs[k].name) idx = k;
        if (idx == inputs.size()) {
          std::string names;
          for (const auto& in : inputs) names += std::string(names.empty() ? "" : ", ") + in.name;
          std::fprintf(stderr, "qairt run: %s line %zu: the model has no input '%s' (its inputs: %s)\n", list.c_str(),
                       line_no, name.c_str(), names.c_str());
          return false;
        }
        if (given[idx]) {
          std::fprintf(stderr, "qairt run: %s line %zu: input '%s' is given twice\n", list.c_str(), line_no, name.c_str());
          return false;
        }
      } else if (e >= inputs.size()) {
        std::fprintf(stderr, "qairt run: %s line %zu: %zu paths but the model has %zu inputs\n", list.c_str(), line_no,
                     entries.size(), inputs.size());
        return false;
      }
      given[idx] = true;
      fs::path p(path);
      if (p.is_relative()) p = base / p;
      paths[idx] = p.string();
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (!given[k]) {
        std::fprintf(stderr, "qairt run: %s line %zu: no file for input '%s'\n", list.c_str(), line_no, inputs[k].name);
        return false;
      }
      std::ifstream in(paths[k], std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "qairt run: %s line %zu: cannot open %s for input '%s': %s\n", list.c_str(), line_no,
                     paths[k].c_str(), inputs[k].name, std::strerror(errno));
        return false;
      }
      std::error_code ec;
      const auto size = fs::file_size(paths[k], ec);
      // A converted model's int32 input (narrowed from int64, as the vendor
      // converter does) still takes the model's own int64 raw files.
      const bool wide = !ec && inputs[k].dtype == QAIRT_DTYPE_INT32 && size == 2 * inputs[k].byte_size;
      if (wide) {
        std::vector<int64_t> v(inputs[k].byte_size / 4);
        if (!in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(size))) {
          std::fprintf(stderr, "qairt run: cannot read %s\n", paths[k].c_str());
          return false;
        }
        sample.data[k].resize(inputs[k].byte_size);
        for (size_t i = 0; i < v.size(); ++i) {
          if (v[i] < INT32_MIN || v[i] > INT32_MAX) {
            std::fprintf(stderr, "qairt run: %s line %zu: %s element %zu is %lld, outside int32 (input '%s' was "
                         "narrowed from int64; --keep_int64_inputs keeps it)\n", list.c_str(), line_no,
                         paths[k].c_str(), i, static_cast<long long>(v[i]), inputs[k].name);
            return false;
          }
          const auto x = static_cast<int32_t>(v[i]);
          std::memcpy(sample.data[k].data() + 4 * i, &x, 4);
        }
        continue;
      }
      if (ec || size != inputs[k].byte_size) {
        std::fprintf(stderr,
                     "qairt run: %s line %zu: %s holds %llu bytes but input '%s' (%s) needs %llu bytes\n", list.c_str(),
                     line_no, paths[k].c_str(), static_cast<unsigned long long>(ec ? 0 : size), inputs[k].name,
                     DescribeSpec(inputs[k]).c_str(), static_cast<unsigned long long>(inputs[k].byte_size));
        return false;
      }
      sample.data[k].resize(size);
      if (size && !in.read(sample.data[k].data(), static_cast<std::streamsize>(size))) {
        std::fprintf(stderr, "qairt run: cannot read %s\n", paths[k].c_str());
        return false;
      }
    }
    out->push_back(std::move(sample));
  }
  if (out->empty()) {
    std::fprintf(stderr, "qairt run: %s has no samples\n", list.c_str());
    return false;
  }
  return true;
}

// A tensor name as a file name: path separators and other awkward characters become '_'.
std::string FileName(const std::string& name) {
  std::string s = name.empty() ? "_" : name;
  for (char& ch : s)
    if (ch == '/' || ch == '\\' || ch == ':' || static_cast<unsigned char>(ch) < 32) ch = '_';
  if (s[0] == '.') s[0] = '_';
  return s + ".raw";
}

bool WriteFile(const fs::path& p, const void* data, size_t size) {
  std::FILE* f = std::fopen(p.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "qairt run: cannot create %s: %s\n", p.c_str(), std::strerror(errno));
    return false;
  }
  const bool ok = (size == 0 || std::fwrite(data, 1, size, f) == size);
  if (std::fclose(f) != 0 || !ok) {
    std::fprintf(stderr, "qairt run: cannot write %s\n", p.c_str());
    return false;
  }
  return true;
}

struct DebugSink {
  fs::path dir;
  bool failed = false;
};

int32_t DebugObserver(void* user, const char* name, qairt_dtype_t, uint32_t, const int64_t*, const void* data,
                      size_t size) {
  auto* sink = static_cast<DebugSink*>(user);
  if (!WriteFile(sink->dir / FileName(name), data, size)) {
    sink->failed = true;
    return 1;
  }
  return 0;
}

}  // namespace

int RunRun(int argc, char** argv) {
  RunArgs a;
  if (int rc = Parse(argc, argv, &a)) return rc;
  qairt_graph_t* graph = LoadModel(a);
  if (!graph) return 1;
  qairt_executor_options opts;
  qairt_executor_options_init(&opts);
  opts.num_threads = a.threads;
  if (a.no_quant_sim) opts.flags |= QAIRT_EXEC_NO_QUANT_SIM;
  qairt_executor_t* ex = nullptr;
  const bool bad = Fail(qairt_executor_create(graph, &opts, &ex), a.model.c_str());
  qairt_graph_destroy(graph);
  if (bad) return 1;
  std::vector<qairt_exec_tensor_info> inputs(qairt_executor_input_count(ex)), outputs(qairt_executor_output_count(ex));
  for (size_t k = 0; k < inputs.size(); ++k) {
    inputs[k].struct_size = sizeof(inputs[k]);
    if (Fail(qairt_executor_input_info(ex, k, &inputs[k]), "")) return qairt_executor_destroy(ex), 1;
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    outputs[k].struct_size = sizeof(outputs[k]);
    if (Fail(qairt_executor_output_info(ex, k, &outputs[k]), "")) return qairt_executor_destroy(ex), 1;
  }
  std::vector<Sample> samples;
  if (!ReadInputList(a.input_list, inputs, &samples)) {
    qairt_executor_destroy(ex);
    return 1;
  }
  // Results go to a staging folder first: a failed run leaves no partial output.
  std::error_code ec;
  const fs::path out_dir(a.output_dir);
  fs::create_directories(out_dir, ec);
  if (ec) {
    std::fprintf(stderr, "qairt run: cannot create %s: %s\n", a.output_dir.c_str(), ec.message().c_str());
    qairt_executor_destroy(ex);
    return 1;
  }
  const fs::path staging = out_dir / (".qairt-run-" + std::to_string(getpid()));
  fs::remove_all(staging, ec);
  int rc = 0;
  DebugSink sink;
  std::vector<char> buf;
  for (size_t i = 0; i < samples.size() && rc == 0; ++i) {
    const fs::path result = staging / ("Result_" + std::to_string(i));
    fs::create_directories(result, ec);
    if (ec) {
      std::fprintf(stderr, "qairt run: cannot create %s: %s\n", result.c_str(), ec.message().c_str());
      rc = 1;
      break;
    }
    sink.dir = result;
    if (a.debug && Fail(qairt_executor_set_observer(ex, DebugObserver, &sink), "")) {
      rc = 1;
      break;
    }
    std::vector<const void*> ptrs;
    std::vector<size_t> sizes;
    for (const auto& d : samples[i].data) {
      ptrs.push_back(d.data());
      sizes.push_back(d.size());
    }
    const std::string what = "sample " + std::to_string(i) + " (line of " + a.input_list + ")";
    if (Fail(qairt_executor_run(ex, ptrs.data(), sizes.data(), ptrs.size()), what.c_str())) {
      rc = 1;
      break;
    }
    for (size_t k = 0; k < outputs.size() && rc == 0; ++k) {
      size_t n = 0;
      if (Fail(qairt_executor_get_output(ex, k, nullptr, 0, &n), "")) rc = 1;
      buf.resize(n);
      if (rc == 0 && Fail(qairt_executor_get_output(ex, k, buf.data(), buf.size(), &n), "")) rc = 1;
      if (rc == 0 && !WriteFile(result / FileName(outputs[k].name), buf.data(), n)) rc = 1;
    }
  }
  qairt_executor_destroy(ex);
  if (rc == 0) {
    for (size_t i = 0; i < samples.size() && rc == 0; ++i) {
      const std::string name = "Result_" + std::to_string(i);
      fs::remove_all(out_dir / name, ec);
      fs::rename(staging / name, out_dir / name, ec);
      if (ec) {
        std::fprintf(stderr, "qairt run: cannot move results into %s: %s\n", (out_dir / name).c_str(),
                     ec.message().c_str());
        rc = 1;
      }
    }
  }
  fs::remove_all(staging, ec);
  if (rc == 0)
    std::printf("qairt run: %zu sample%s, %zu output%s each, written to %s\n", samples.size(),
                samples.size() == 1 ? "" : "s", outputs.size(), outputs.size() == 1 ? "" : "s", a.output_dir.c_str());
  return rc;
}
