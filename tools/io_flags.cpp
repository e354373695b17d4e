#include "io_flags.h"

#include <cstdio>
#include <cstring>

namespace qairt_cli {

namespace {

// The vendor's layout names and the ranks they describe (0 = any rank).
struct Layout {
  const char* name;
  size_t rank;
};
constexpr Layout kLayouts[] = {{"NCDHW", 5}, {"NDHWC", 5}, {"NCHW", 4}, {"NHWC", 4}, {"NFC", 3}, {"NCF", 3},
                               {"NTF", 3},   {"TNF", 3},   {"NF", 2},   {"NC", 2},   {"F", 1},   {"NONTRIVIAL", 0}};

bool GraphInput(qairt_graph_t* graph, const std::string& name, qairt_tensor_info* info) {
  for (size_t k = 0; k < qairt_graph_input_count(graph); ++k) {
    std::memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    if (qairt_status_t* s = qairt_graph_tensor_info(graph, qairt_graph_input(graph, k), info)) {
      qairt_status_free(s);
      continue;
    }
    if (info->name && name == info->name) return true;
  }
  return false;
}

bool IsGraphIo(qairt_graph_t* graph, const std::string& name) {
  qairt_tensor_id id = QAIRT_INVALID_ID;
  if (qairt_status_t* s = qairt_graph_find_tensor(graph, name.c_str(), &id)) {
    qairt_status_free(s);
    return false;
  }
  qairt_tensor_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  qairt_status_free(qairt_graph_tensor_info(graph, id, &info));
  return info.role == QAIRT_TENSOR_ROLE_INPUT || info.role == QAIRT_TENSOR_ROLE_OUTPUT ||
         info.role == QAIRT_TENSOR_ROLE_INPUT_OUTPUT;
}

}  // namespace

int ParseIoFlag(int argc, char** argv, int* i, IoFlags* f) {
  const std::string arg = argv[*i];
  auto two = [&](std::vector<std::pair<std::string, std::string>>* out) {
    if (*i + 2 >= argc) {
      std::fprintf(stderr, "qairt %s: %s needs NAME and a value\n", argv[0], arg.c_str());
      return -1;
    }
    out->emplace_back(argv[*i + 1], argv[*i + 2]);
    *i += 2;
    return 1;
  };
  if (arg == "--input_layout" || arg == "-l" || arg == "--source_model_input_layout") return two(&f->layouts);
  if (arg == "--input_dtype" || arg == "--source_model_input_datatype") return two(&f->dtypes);
  if (arg == "--ignore_encodings") {
    f->ignore_encodings = true;
    return 1;
  }
  if (arg == "--export_format") {
    if (*i + 1 >= argc) return 0;
    const std::string v = argv[*i + 1];
    if (v == "DLC_STRIP_QUANT") f->ignore_encodings = true;
    if (v != "DLC_STRIP_QUANT" && v != "DLC_DEFAULT") return 0;  // cpp/dlc: the vendor table refuses it
    ++*i;
    return 1;
  }
  if (arg == "--preserve_io" || arg == "--preserve_io_datatype") {
    f->preserve_io = true;
    if (arg == "--preserve_io_datatype") f->preserve_io_mode = "datatype";
    // Optional mode and names: the following words that are not flags.
    while (*i + 1 < argc && argv[*i + 1][0] != '-') {
      const std::string w = argv[++*i];
      if (f->preserve_io_mode.empty() && f->preserve_names.empty() && (w == "layout" || w == "datatype"))
        f->preserve_io_mode = w;
      else
        f->preserve_names.push_back(w);
    }
    return 1;
  }
  return 0;
}

bool ApplyIoFlags(const IoFlags& f, const IoContext& c, qairt_graph_t* graph, const char* command) {
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "qairt %s: %s\n", command, message.c_str());
    return false;
  };
  for (const auto& [name, layout] : f.layouts) {
    qairt_tensor_info info;
    if (!GraphInput(graph, name, &info)) return fail("--input_layout " + name + ": not an input of the model");
    const Layout* known = nullptr;
    for (const Layout& l : kLayouts)
      if (layout == l.name) known = &l;
    if (!known) return fail("--input_layout " + name + " " + layout + ": not a layout (NCDHW NDHWC NCHW NHWC NFC NCF "
                            "NTF TNF NF NC F NONTRIVIAL)");
    if (known->rank && info.rank_known && info.rank != known->rank)
      return fail("--input_layout " + name + " " + layout + ": the input has rank " + std::to_string(info.rank));
    // qairt keeps every tensor in the source layout, so a correct
    // declaration changes nothing; raw input files stay in that layout.
  }
  for (const std::string& name : c.float_inputs) {
    qairt_tensor_info info;
    if (!GraphInput(graph, name, &info)) return fail("--input_encoding " + name + " other: not an input of the model");
  }
  for (const auto& [name, dtype] : f.dtypes) {
    qairt_tensor_info info;
    if (!GraphInput(graph, name, &info)) return fail("--input_dtype " + name + ": not an input of the model");
    qairt_dtype_t want = 0;
    if (qairt_status_t* s = qairt_dtype_from_name(dtype.c_str(), &want)) {
      qairt_status_free(s);
      return fail("--input_dtype " + name + " " + dtype + ": not a data type (qairt dtypes)");
    }
    if (want != info.dtype)
      return fail("--input_dtype " + name + " " + dtype + ": the input is " + qairt_dtype_name(info.dtype) +
                  (c.keep_int64 ? "" : " (int64 inputs become int32 unless --keep_int64_inputs)") +
                  "; changing an input's data type is not supported");
  }
  if (f.preserve_io) {
    if (f.preserve_io_mode != "layout" && c.quantized_io)
      return fail("--preserve_io keeps the model's I/O data types, --quantized_io quantizes them: give one");
    for (const std::string& n : f.preserve_names)
      if (!IsGraphIo(graph, n)) return fail("--preserve_io " + n + ": not an input or output of the model");
    if (f.preserve_io_mode != "layout" && !f.preserve_names.empty())
      return fail("--preserve_io datatype NAMES: keeping only some I/O unquantized is not implemented; qairt keeps "
                  "every graph input and output in the model's data type unless --quantized_io");
  }
  if (f.ignore_encodings) {
    if (c.overrides) return fail("--ignore_encodings cannot be used with --quantization_overrides (as the vendor's)");
    if (c.float_fallback) return fail("--ignore_encodings cannot be used with --float_fallback");
    if (!c.input_list)
      return fail("--ignore_encodings needs --input_list: without calibration nothing would give the tensors "
                  "encodings");
    for (size_t t = 0; t < qairt_graph_tensor_count(graph); ++t) {
      qairt_status_t* s = qairt_graph_clear_encoding(graph, static_cast<qairt_tensor_id>(t));
      qairt_status_free(s);
    }
  }
  return true;
}

}  // namespace qairt_cli
