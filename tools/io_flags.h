// The vendor converter's graph-I/O flags that qairt honours on the imported
// graph: --input_layout / --source_model_input_layout (declared, checked),
// --input_dtype / --source_model_input_datatype (the datatype qairt gives the
// input, checked), --preserve_io / --preserve_io_datatype (qairt's default
// float I/O, checked against --quantized_io) and --ignore_encodings /
// --export_format DLC_STRIP_QUANT (the model's own encodings dropped).
#pragma once

#include <qairt/qairt.h>

#include <string>
#include <utility>
#include <vector>

namespace qairt_cli {

struct IoFlags {
  std::vector<std::pair<std::string, std::string>> layouts;  // input -> layout
  std::vector<std::pair<std::string, std::string>> dtypes;   // input -> dtype name
  bool preserve_io = false;
  std::string preserve_io_mode;            // "", "layout" or "datatype"
  std::vector<std::string> preserve_names;
  bool ignore_encodings = false;
};

// 1: argv[*i] was one of these flags (consumed); 0: it is not; -1: usage error (printed).
int ParseIoFlag(int argc, char** argv, int* i, IoFlags* f);

// What the rest of the command line says, for the conflict checks.
struct IoContext {
  bool quantized_io = false;
  bool overrides = false;
  bool float_fallback = false;
  bool input_list = false;
  bool keep_int64 = false;
  std::vector<std::string> float_inputs;  // --input_encoding NAME other
};

// Checks the flags against the imported graph and the other options, then
// drops the model's encodings for --ignore_encodings. False (printed) on a
// conflict or a name the graph does not have.
bool ApplyIoFlags(const IoFlags& f, const IoContext& c, qairt_graph_t* graph, const char* command);

}  // namespace qairt_cli
