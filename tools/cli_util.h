// Argument parsing shared by the CLI commands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace qairt_cli
