// `qairt compare --float MODEL --quantized OUT.qairt --input_list LIST`:
// how much accuracy quantization costs, per output and (--per_layer) per
// encoded tensor, before any device time. Uses only the public C API.
#include <qairt/qairt.h>
#include <qairt/qairt_calib.h>
#include <qairt/qairt_container.h>
#include <qairt/qairt_import.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli_util.h"
#include "help.h"

using qairt_cli::ParseDims;
using qairt_cli::ParseInt;
using qairt_cli::Progress;

namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

struct Loaded {
  qairt_graph_t* graph = nullptr;
  std::string error;
};

// A .qairt container's graph, or an imported ONNX model.
Loaded Load(const std::string& path, const qairt_import_options& io) {
  Loaded l;
  qairt_status_t* s = nullptr;
  if (EndsWith(path, ".qairt")) {
    qairt_container_t* c = nullptr;
    s = qairt_container_load_file(path.c_str(), &c);
    if (!s) s = qairt_container_get_graph(c, &l.graph);
    qairt_container_destroy(c);
  } else {
    s = qairt_cli::ImportModelFile(path.c_str(), &io, &l.graph, nullptr);
  }
  if (s) {
    l.error = qairt_status_message(s);
    qairt_status_free(s);
  }
  return l;
}

}  // namespace

int RunCompare(int argc, char** argv) {
  std::string float_model, quantized, input_list;
  bool per_layer = false, json = false, progress = true;
  std::vector<std::string> dim_names, sym_names;
  std::vector<std::vector<int64_t>> dims;
  std::vector<int64_t> sym_values;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](int n) {
      if (i + n >= argc) {
        std::fprintf(stderr, "qairt compare: %s needs %d argument%s\n", a.c_str(), n, n > 1 ? "s" : "");
        return false;
      }
      return true;
    };
    if (a == "--float" && value(1)) float_model = argv[++i];
    else if (a == "--quantized" && value(1)) quantized = argv[++i];
    else if (a == "--input_list" && value(1)) input_list = argv[++i];
    else if (a == "--per_layer") per_layer = true;
    else if (a == "--json") json = true;
    else if (a == "--no_progress") progress = false;
    else if ((a == "-d" || a == "--input_dim") && value(2)) {
      std::vector<int64_t> d;
      if (!ParseDims(argv[i + 2], &d)) {
        std::fprintf(stderr, "qairt compare: %s %s: '%s' is not a comma-separated list of dims\n", a.c_str(),
                     argv[i + 1], argv[i + 2]);
        return 2;
      }
      dim_names.push_back(argv[i + 1]);
      dims.push_back(std::move(d));
      i += 2;
    } else if (a == "--define_symbol" && value(2)) {
      int64_t v = 0;
      if (!ParseInt(argv[i + 2], &v)) {
        std::fprintf(stderr, "qairt compare: --define_symbol %s: '%s' is not a non-negative integer\n", argv[i + 1],
                     argv[i + 2]);
        return 2;
      }
      sym_names.push_back(argv[i + 1]);
      sym_values.push_back(v);
      i += 2;
    } else {
      if (i < argc && (a == "--float" || a == "--quantized" || a == "--input_list" || a == "-d" ||
                       a == "--input_dim" || a == "--define_symbol"))
        return 2;  // value() printed the message
      std::fprintf(stderr, "qairt compare: unknown argument '%s'%s\n", a.c_str(),
                   qairt_cli::SuggestFlag("compare", a).c_str());
      return 2;
    }
  }
  if (float_model.empty() || quantized.empty() || input_list.empty()) {
    std::fprintf(stderr, "usage: qairt compare --float MODEL.onnx|FILE.qairt --quantized OUT.qairt --input_list LIST "
                         "[-d NAME DIMS]... [--define_symbol NAME VALUE]... [--per_layer] [--json] [--no_progress]\n");
    return 2;
  }
  std::vector<const char*> dn, sn;
  std::vector<size_t> ranks;
  std::vector<const int64_t*> dp;
  for (size_t k = 0; k < dims.size(); ++k) {
    dn.push_back(dim_names[k].c_str());
    ranks.push_back(dims[k].size());
    dp.push_back(dims[k].data());
  }
  for (const auto& s : sym_names) sn.push_back(s.c_str());
  qairt_import_options io;
  qairt_import_options_init(&io);
  io.num_input_dims = dn.size();
  io.input_dim_names = dn.data();
  io.input_dim_ranks = ranks.data();
  io.input_dims = dp.data();
  io.num_define_symbols = sn.size();
  io.define_symbol_names = sn.data();
  io.define_symbol_values = sym_values.data();

  Loaded f = Load(float_model, io), q = Load(quantized, io);
  int rc = 0;
  if (!f.graph) std::fprintf(stderr, "qairt compare: %s\n", f.error.c_str()), rc = 1;
  if (!q.graph) std::fprintf(stderr, "qairt compare: %s\n", q.error.c_str()), rc = 1;
  qairt_compare_report_t* r = nullptr;
  if (rc == 0) {
    qairt_status_t* cs = nullptr;
    {
      Progress bar("compare", progress);
      cs = qairt_compare_input_list_progress(f.graph, q.graph, input_list.c_str(),
                                             per_layer ? QAIRT_COMPARE_PER_LAYER : 0u, Progress::Callback, &bar, &r);
    }
    if (qairt_status_t* s = cs) {
      std::fprintf(stderr, "qairt compare: %s\n", qairt_status_message(s));
      qairt_status_free(s);
      rc = 1;
    }
  }
  if (r) {
    const qairt_compare_format_t fmt = json ? QAIRT_COMPARE_JSON : QAIRT_COMPARE_TEXT;
    size_t len = 0;
    qairt_status_free(qairt_compare_report_render(r, fmt, nullptr, 0, &len));
    std::string text(len + 1, '\0');
    qairt_status_free(qairt_compare_report_render(r, fmt, text.data(), text.size(), &len));
    text.resize(len);
    std::printf("%s%s", text.c_str(), json ? "\n" : "");
    qairt_compare_report_destroy(r);
  }
  qairt_graph_destroy(f.graph);
  qairt_graph_destroy(q.graph);
  return rc;
}
