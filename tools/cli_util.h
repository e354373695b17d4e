// Argument parsing shared by the CLI commands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <qairt/qairt_convert.h>
#include <qairt/qairt_import.h>

namespace qairt_cli {

// A .tflite model: by extension, or by the FlatBuffers identifier "TFL3" at bytes 4..7.
bool IsTflitePath(const char* path);
// Imports an ONNX or TFLite model file, whichever `path` holds.
qairt_status_t* ImportModelFile(const char* path, const qairt_import_options* options, qairt_graph_t** graph,
                                qairt_import_report_t** report);

// A non-negative decimal integer (the whole string).
bool ParseInt(const std::string& s, int64_t* out);
// "1,3,224,224" -> {1, 3, 224, 224}; false on an empty list or a bad entry.
bool ParseDims(const std::string& s, std::vector<int64_t>* out);

// The shape options, the same wherever a model is read (inspect, convert,
// analyze, encodings): -d/--input_dim NAME DIMS, --define_symbol NAME VALUE,
// --onnx-define-symbol NAME,VALUE and -onnx-define-symbol=NAME,VALUE.
class ShapeArgs {
 public:
  // 1: argv[*i] was a shape option (consumed, *i advanced past its values);
  // 0: it is not one; -1: a usage error, printed as "qairt COMMAND: ...".
  int Parse(int argc, char** argv, int* i, const char* command);
  // Points the shape fields of `options` into this object (keep it alive).
  void Apply(qairt_import_options* options);

 private:
  std::vector<std::string> symbol_names_, dim_names_;
  std::vector<int64_t> symbol_values_;
  std::vector<std::vector<int64_t>> dims_;
  std::vector<const char*> symbol_ptrs_, dim_name_ptrs_;
  std::vector<size_t> ranks_;
  std::vector<const int64_t*> dim_ptrs_;
};

// `s` as a quoted JSON string (quotes, backslashes and control characters escaped).
std::string JsonQuoted(const std::string& s);

// Progress of calibration / comparison on stderr: a bar redrawn in place on
// a terminal, a plain line every 10% otherwise (logs stay readable), nothing
// when disabled. Pass Progress::Callback with the object as user data.
class Progress {
 public:
  // `label` NULL: the phase names itself ("calibration: ranges").
  Progress(const char* label, bool enabled);
  ~Progress();  // ends a drawn bar with a newline
  static void Callback(void* self, const char* phase, size_t done, size_t total);

 private:
  void Update(const char* phase, size_t done, size_t total);
  const char* label_;
  bool enabled_, tty_, drawn_ = false;
  std::string phase_;
  size_t next_line_ = 0;  // non-TTY: next percentage to print
};

// Writes text to path atomically, as the library writes its own outputs
// (false with the cause in *error).
bool WriteTextAtomically(const std::string& path, const std::string& text, std::string* error);
// convert --diagnostics FILE: every error and warning of the conversion as
// SARIF 2.1.0 (.sarif), JSON (.json) or text; false after printing why not.
bool WriteDiagnostics(const std::string& path, const qairt_convert_result_t* r);

}  // namespace qairt_cli
