#include "cli_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace qairt_cli {

bool IsTflitePath(const char* path) {
  const size_t n = std::strlen(path);
  if (n >= 7 && std::strcmp(path + n - 7, ".tflite") == 0) return true;
  FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  unsigned char head[8];
  const bool is = std::fread(head, 1, 8, f) == 8 && std::memcmp(head + 4, "TFL3", 4) == 0;
  std::fclose(f);
  return is;
}

qairt_status_t* ImportModelFile(const char* path, const qairt_import_options* options, qairt_graph_t** graph,
                                qairt_import_report_t** report) {
  return (IsTflitePath(path) ? qairt_import_tflite_file : qairt_import_onnx_file)(path, options, graph, report);
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

bool ParseDims(const std::string& s, std::vector<int64_t>* out) {
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    int64_t v;
    if (!ParseInt(s.substr(start, comma - start), &v)) return false;
    out->push_back(v);
    start = comma + 1;
  }
  return !out->empty();
}

std::string JsonQuoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

Progress::Progress(const char* label, bool enabled)
    : label_(label), enabled_(enabled), tty_(enabled && isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (drawn_) std::fputc('\n', stderr);
}

void Progress::Callback(void* self, const char* phase, size_t done, size_t total) {
  static_cast<Progress*>(self)->Update(phase ? phase : "", done, total);
}

void Progress::Update(const char* phase, size_t done, size_t total) {
  if (!enabled_ || total == 0) return;
  if (phase_ != phase) {  // a new pass starts from 0%, on a new line
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
    phase_ = phase;
    next_line_ = 0;
  }
  const size_t pct = done * 100 / total;
  if (tty_) {
    constexpr size_t kWidth = 30;
    const size_t fill = done * kWidth / total;
    std::fprintf(stderr, "\r%s%s%-10s [%s%s] %zu/%zu", label_ ? label_ : "", label_ ? " " : "", phase,
                 std::string(fill, '#').c_str(),
                 std::string(kWidth - fill, '.').c_str(), done, total);
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  if (pct < next_line_ && done != total) return;
  std::fprintf(stderr, "%s%s%s %zu/%zu (%zu%%)\n", label_ ? label_ : "", label_ ? ": " : "", phase, done, total, pct);
  next_line_ = (pct / 10 + 1) * 10;
}

}  // namespace qairt_cli
