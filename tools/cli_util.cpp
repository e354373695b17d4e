#include "cli_util.h"

#include <qairt/qairt_report.h>

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

int ShapeArgs::Parse(int argc, char** argv, int* i, const char* command) {
  const std::string arg = argv[*i];
  auto need = [&](int n) {
    if (*i + n < argc) return true;
    std::fprintf(stderr, "qairt %s: %s needs %d argument%s\n", command, arg.c_str(), n, n > 1 ? "s" : "");
    return false;
  };
  if (arg == "-d" || arg == "--input_dim") {
    if (!need(2)) return -1;
    std::vector<int64_t> dims;
    if (!ParseDims(argv[*i + 2], &dims)) {
      std::fprintf(stderr, "qairt %s: %s %s: '%s' is not a comma-separated list of dims\n", command, arg.c_str(),
                   argv[*i + 1], argv[*i + 2]);
      return -1;
    }
    dim_names_.push_back(argv[*i + 1]);
    dims_.push_back(std::move(dims));
    *i += 2;
    return 1;
  }
  if (arg == "--define_symbol") {
    if (!need(2)) return -1;
    int64_t v;
    if (!ParseInt(argv[*i + 2], &v)) {
      std::fprintf(stderr, "qairt %s: --define_symbol %s: '%s' is not a non-negative integer\n", command,
                   argv[*i + 1], argv[*i + 2]);
      return -1;
    }
    symbol_names_.push_back(argv[*i + 1]);
    symbol_values_.push_back(v);
    *i += 2;
    return 1;
  }
  if (arg == "--onnx-define-symbol" || arg.rfind("-onnx-define-symbol=", 0) == 0) {
    std::string spec;
    if (arg == "--onnx-define-symbol") {
      if (!need(1)) return -1;
      spec = argv[++*i];
    } else {
      spec = arg.substr(std::strlen("-onnx-define-symbol="));
    }
    const size_t comma = spec.find(',');
    int64_t v;
    if (comma == std::string::npos || !ParseInt(spec.substr(comma + 1), &v)) {
      std::fprintf(stderr, "qairt %s: --onnx-define-symbol expects NAME,VALUE, got '%s'\n", command, spec.c_str());
      return -1;
    }
    symbol_names_.push_back(spec.substr(0, comma));
    symbol_values_.push_back(v);
    return 1;
  }
  return 0;
}

void ShapeArgs::Apply(qairt_import_options* options) {
  symbol_ptrs_.clear();
  dim_name_ptrs_.clear();
  ranks_.clear();
  dim_ptrs_.clear();
  for (const auto& n : symbol_names_) symbol_ptrs_.push_back(n.c_str());
  for (const auto& n : dim_names_) dim_name_ptrs_.push_back(n.c_str());
  for (const auto& d : dims_) {
    ranks_.push_back(d.size());
    dim_ptrs_.push_back(d.data());
  }
  options->num_define_symbols = symbol_ptrs_.size();
  options->define_symbol_names = symbol_ptrs_.data();
  options->define_symbol_values = symbol_values_.data();
  options->num_input_dims = dim_name_ptrs_.size();
  options->input_dim_names = dim_name_ptrs_.data();
  options->input_dim_ranks = ranks_.data();
  options->input_dims = dim_ptrs_.data();
}

std::string JsonQuoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
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

// Writes text to path atomically, as the library writes its own outputs.
bool WriteTextAtomically(const std::string& path, const std::string& text, std::string* error) {
  qairt_status_t* s = qairt_write_file_atomically(path.c_str(), text.data(), text.size());
  if (!s) return true;
  *error = qairt_status_message(s);
  qairt_status_free(s);
  return false;
}

// --diagnostics FILE: every error and warning of the conversion as SARIF 2.1.0
// (.sarif), JSON (.json) or text, written whether or not the conversion
// succeeded: a failed conversion is when an IDE needs it most.
bool WriteDiagnostics(const std::string& path, const qairt_convert_result_t* r) {
  auto ends_with = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  const qairt_report_format_t format =
      ends_with(".sarif") ? QAIRT_REPORT_SARIF : ends_with(".json") ? QAIRT_REPORT_JSON : QAIRT_REPORT_TEXT;
  const qairt_diagnostics_t* diags = qairt_convert_result_diagnostics(r);
  size_t length = 0;
  qairt_status_free(qairt_diagnostics_render(diags, format, nullptr, 0, &length));
  std::string text(length + 1, '\0');
  qairt_status_t* s = qairt_diagnostics_render(diags, format, text.data(), text.size(), &length);
  std::string error;
  if (s) {
    error = qairt_status_message(s);
    qairt_status_free(s);
  } else {
    text.resize(length);
    if (WriteTextAtomically(path, text, &error)) return true;
  }
  std::fprintf(stderr, "qairt convert: --diagnostics %s: cannot write the diagnostics: %s\n", path.c_str(),
               error.c_str());
  return false;
}


}  // namespace qairt_cli
