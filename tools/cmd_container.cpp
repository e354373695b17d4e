// `qairt inspect MODEL.qairt`: what a .qairt container holds: the graph
// (inputs, outputs, op types, static data, encodings), the target, the
// resolved options namespace, the kernel annotations and the tensor notes.
// Uses only the public C API.
#include <qairt/qairt.h>
#include <qairt/qairt_container.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli_util.h"

namespace {

std::string ShapeText(const qairt_graph_t* g, qairt_tensor_id id, const qairt_tensor_info& info) {
  if (!info.rank_known) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < info.rank; ++i) {
    if (i) s += ", ";
    if (info.dims[i] >= 0) {
      s += std::to_string(info.dims[i]);
      continue;
    }
    const char* sym = nullptr;
    qairt_status_free(qairt_graph_tensor_dim_symbol(g, id, i, &sym));
    s += sym ? sym : "?";
  }
  return s + "]";
}

std::string EncodingText(const qairt_graph_t* g, qairt_tensor_id id) {
  qairt_encoding_t* e = nullptr;
  qairt_status_free(qairt_graph_get_encoding(g, id, &e));
  if (!e) return "";
  static const char* const kKinds[] = {"?", "float", "per_tensor", "per_channel", "per_block", "lpbq", "array_of"};
  const uint32_t kind = qairt_encoding_kind(e);
  std::string s = std::string(kind < 7 ? kKinds[kind] : "?") + " " + qairt_dtype_short_name(qairt_encoding_dtype(e));
  if (qairt_encoding_overridden(e)) s += " (overridden)";
  qairt_encoding_destroy(e);
  return s;
}

struct TensorLine {
  std::string name, dtype, shape, encoding;
};

TensorLine Describe(const qairt_graph_t* g, qairt_tensor_id id) {
  qairt_tensor_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  qairt_status_free(qairt_graph_tensor_info(g, id, &info));
  return {info.name ? info.name : "?", qairt_dtype_short_name(info.dtype), ShapeText(g, id, info), EncodingText(g, id)};
}

std::string GraphSummaryJson(const qairt_graph_t* g) {
  size_t len = 0;
  if (qairt_status_t* s = qairt_graph_summary_json(g, nullptr, 0, &len)) {
    qairt_status_free(s);
    return "null";
  }
  std::string out(len + 1, '\0');
  qairt_status_free(qairt_graph_summary_json(g, out.data(), out.size(), &len));
  out.resize(len);
  return out;
}

void PrintText(const std::string& path, const qairt_container_t* c, const qairt_container_info& info,
               const qairt_graph_t* g) {
  std::printf("container: %s\n", path.c_str());
  std::printf("producer: %s (schema %u, min reader %u)\n", info.producer, info.schema_version, info.min_reader_version);
  std::printf("target: %s\n", info.target_name[0] ? info.target_name : "(none)");

  const size_t n_tensors = qairt_graph_tensor_count(g), n_ops = qairt_graph_op_count(g);
  size_t n_static = 0, static_bytes = 0, n_encoded = 0;
  for (size_t i = 0; i < n_tensors; ++i) {
    qairt_tensor_info t;
    std::memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    qairt_status_free(qairt_graph_tensor_info(g, static_cast<qairt_tensor_id>(i), &t));
    if (t.role == QAIRT_TENSOR_ROLE_STATIC) {
      ++n_static;
      static_bytes += t.static_data_size;
    }
    if (t.has_encoding) ++n_encoded;
  }
  std::printf("graph: %s\n", qairt_graph_name(g));
  std::printf("  %zu tensors (%zu static, %zu bytes of static data), %zu ops, %zu encodings\n", n_tensors, n_static,
              static_bytes, n_ops, n_encoded);
  auto print_tensors = [&](const char* title, size_t count, qairt_tensor_id (*at)(const qairt_graph_t*, size_t)) {
    std::printf("  %s (%zu):\n", title, count);
    for (size_t i = 0; i < count; ++i) {
      const TensorLine l = Describe(g, at(g, i));
      std::printf("    %s %s %s%s%s\n", l.name.c_str(), l.dtype.c_str(), l.shape.c_str(),
                  l.encoding.empty() ? "" : "  encoding: ", l.encoding.c_str());
    }
  };
  print_tensors("inputs", qairt_graph_input_count(g), qairt_graph_input);
  print_tensors("outputs", qairt_graph_output_count(g), qairt_graph_output);
  std::map<std::string, size_t> histogram;
  for (size_t i = 0; i < n_ops; ++i) {
    qairt_op_info op;
    std::memset(&op, 0, sizeof op);
    op.struct_size = sizeof op;
    if (qairt_status_t* s = qairt_graph_op_info(g, static_cast<qairt_op_id>(i), &op)) {
      qairt_status_free(s);
      continue;
    }
    ++histogram[op.type];
  }
  std::printf("  op types (%zu):\n", histogram.size());
  for (const auto& [type, n] : histogram) std::printf("    %-24s %zu\n", type.c_str(), n);

  std::printf("options (%zu):\n", info.num_options);
  size_t key_width = 3;
  std::vector<qairt_container_option> options(info.num_options);
  for (size_t i = 0; i < info.num_options; ++i) {
    qairt_status_free(qairt_container_option_at(c, i, &options[i]));
    key_width = std::max(key_width, std::strlen(options[i].key));
  }
  if (!options.empty()) std::printf("  %-*s  %-7s  %s\n", static_cast<int>(key_width), "KEY", "SOURCE", "VALUE");
  for (const auto& o : options)
    std::printf("  %-*s  %-7s  %s\n", static_cast<int>(key_width), o.key, qairt_option_source_name(o.source),
                o.value);

  std::printf("op annotations (%zu):\n", info.num_op_annotations);
  for (size_t i = 0; i < info.num_op_annotations; ++i) {
    qairt_container_op_annotation a{};
    qairt_status_free(qairt_container_op_annotation_at(c, i, &a));
    std::string group = a.super_group >= 0 ? "  super_group " + std::to_string(a.super_group) : "";
    std::printf("  %s: kernel %s%s%s\n", a.op_name, a.kernel[0] ? a.kernel : "(none)", group.c_str(),
                a.adapted ? "  adapted" : "");
  }
  std::printf("tensor notes (%zu):\n", info.num_tensor_notes);
  for (size_t i = 0; i < info.num_tensor_notes; ++i) {
    qairt_container_tensor_note n{};
    qairt_status_free(qairt_container_tensor_note_at(c, i, &n));
    std::printf("  %s: %s\n", n.tensor_name, n.reasons);
  }
}

void PrintJson(const std::string& path, const qairt_container_t* c, const qairt_container_info& info,
               const qairt_graph_t* g) {
  std::string j = "{\"container\":{\"path\":" + qairt_cli::JsonQuoted(path) + ",\"producer\":" + qairt_cli::JsonQuoted(info.producer) +
                  ",\"schema_version\":" + std::to_string(info.schema_version) +
                  ",\"min_reader_version\":" + std::to_string(info.min_reader_version) +
                  ",\"target\":" + qairt_cli::JsonQuoted(info.target_name) + ",\"options\":[";
  for (size_t i = 0; i < info.num_options; ++i) {
    qairt_container_option o{};
    qairt_status_free(qairt_container_option_at(c, i, &o));
    j += std::string(i ? "," : "") + "{\"key\":" + qairt_cli::JsonQuoted(o.key) + ",\"value\":" + qairt_cli::JsonQuoted(o.value) +
         ",\"source\":" + qairt_cli::JsonQuoted(qairt_option_source_name(o.source)) + "}";
  }
  j += "],\"op_annotations\":[";
  for (size_t i = 0; i < info.num_op_annotations; ++i) {
    qairt_container_op_annotation a{};
    qairt_status_free(qairt_container_op_annotation_at(c, i, &a));
    j += std::string(i ? "," : "") + "{\"op\":" + qairt_cli::JsonQuoted(a.op_name) + ",\"kernel\":" + qairt_cli::JsonQuoted(a.kernel) +
         ",\"super_group\":" + std::to_string(a.super_group) + ",\"adapted\":" + (a.adapted ? "true" : "false") + "}";
  }
  j += "],\"tensor_notes\":[";
  for (size_t i = 0; i < info.num_tensor_notes; ++i) {
    qairt_container_tensor_note n{};
    qairt_status_free(qairt_container_tensor_note_at(c, i, &n));
    j += std::string(i ? "," : "") + "{\"tensor\":" + qairt_cli::JsonQuoted(n.tensor_name) + ",\"reasons\":" +
         qairt_cli::JsonQuoted(n.reasons) + "}";
  }
  j += "]},\"graph\":" + GraphSummaryJson(g) + "}\n";
  std::fputs(j.c_str(), stdout);
}

}  // namespace

// True when `path` names a .qairt container: by extension, or by the file
// identifier "QAIR" at bytes 4..7 (what inspect dispatches on).
bool IsContainerPath(const char* path) {
  const size_t n = std::strlen(path);
  if (n >= 6 && std::strcmp(path + n - 6, ".qairt") == 0) return true;
  FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  unsigned char head[8];
  const bool is = std::fread(head, 1, 8, f) == 8 && std::memcmp(head + 4, "QAIR", 4) == 0;
  std::fclose(f);
  return is;
}

int RunInspectContainer(int argc, char** argv) {
  std::string path;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (path.empty() && !arg.empty() && arg[0] != '-') {
      path = arg;
    } else {
      std::fprintf(stderr, "qairt %s: unknown argument '%s' (a .qairt container takes only --json)\n", argv[0],
                   arg.c_str());
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: qairt inspect MODEL.qairt [--json]\n");
    return 2;
  }
  qairt_container_t* c = nullptr;
  if (qairt_status_t* s = qairt_container_load_file(path.c_str(), &c)) {
    std::fprintf(stderr, "qairt %s: %s\n", argv[0], qairt_status_message(s));
    qairt_status_free(s);
    return 1;
  }
  qairt_container_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  qairt_graph_t* g = nullptr;
  qairt_status_t* s = qairt_container_get_info(c, &info);
  if (!s) s = qairt_container_get_graph(c, &g);
  int rc = 0;
  if (s) {
    std::fprintf(stderr, "qairt %s: %s\n", argv[0], qairt_status_message(s));
    qairt_status_free(s);
    rc = 1;
  } else if (json) {
    PrintJson(path, c, info, g);
  } else {
    PrintText(path, c, info, g);
  }
  qairt_graph_destroy(g);
  qairt_container_destroy(c);
  return rc;
}
