// Helpers of the reliability tests (tests/hostile): a sandbox folder with
// in/ and out/, and a `qairt convert`-like flow through the public C API
// (import -> encodings -> calibration -> target -> process -> container and
// encodings JSON written to out/), so every hostile input is checked for the
// exact error *and* for leaving nothing behind in out/.
#pragma once

#include <catch2/catch.hpp>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "qairt/qairt.h"

namespace qairt::hostile {

namespace fs = std::filesystem;

class Sandbox {
 public:
  Sandbox() {
    std::string tmpl = (fs::temp_directory_path() / "qairt_hostile_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    root_ = tmpl;
    fs::create_directories(root_ / "in");
    fs::create_directories(root_ / "out");
  }
  ~Sandbox() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  std::string In(const std::string& name) const { return (root_ / "in" / name).string(); }
  std::string Out(const std::string& name) const { return (root_ / "out" / name).string(); }
  const fs::path& root() const { return root_; }

  // Writes in/<name> (creating folders) and returns its path.
  std::string Put(const std::string& name, const std::string& bytes) const {
    const fs::path p = root_ / "in" / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

  // Everything under out/ (hidden files included), sorted.
  std::vector<std::string> OutFiles() const {
    std::vector<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(root_ / "out"))
      names.push_back(fs::relative(e.path(), root_ / "out").string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path root_;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

struct Outcome {
  qairt_code_t code = QAIRT_OK;
  std::string message;
};

// One conversion. Empty strings mean "not given".
struct Job {
  std::string model;
  std::string encodings;    // loaded with QAIRT_ENCODINGS_LOAD_STRICT, applied strictly
  std::string input_list;   // calibration
  std::string target = "htp_v73";  // built-in name or descriptor path
  std::string out_container;
  std::string out_encodings;
  uint32_t num_threads = 1;
};

// Runs the job; returns the first failure (code QAIRT_OK on success).
Outcome Convert(const Job& job);

// Convert must fail with `code`, name every needle in its message and leave
// out/ holding only `out_files` (what was there before).
void ExpectRejected(const Sandbox& sb, const Job& job, qairt_code_t code, const std::vector<std::string>& needles,
                    const std::vector<std::string>& out_files = {});

// A job on `model` writing out/model.qairt and out/model.encodings.json.
inline Job JobFor(const Sandbox& sb, const std::string& model) {
  Job j;
  j.model = model;
  j.out_container = sb.Out("model.qairt");
  j.out_encodings = sb.Out("model.encodings.json");
  return j;
}

}  // namespace qairt::hostile
