// Helpers shared by the encodings tests.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "encodings/encodings_writer.h"
#include "encodings/encodings.h"

namespace qairt::encodings::testing {

inline std::filesystem::path RepoDir() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}
inline std::string DataFile(const std::string& name) { return (RepoDir() / "tests/data/encodings" / name).string(); }

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline File ReadOk(const std::string& text, const std::string& name = "test.json", ReadOptions o = {}) {
  Diags d;
  auto r = ReadEncodingsBytes(text.data(), text.size(), name, o, &d);
  INFO(RenderDiagnostics(d, ReportFormat::kText));
  REQUIRE(r.ok());
  REQUIRE(CountErrors(d) == 0);
  return std::move(r.value());
}

inline File ReadFileOk(const std::string& path) {
  Diags d;
  auto r = ReadEncodingsFile(path, {}, &d);
  INFO(path << "\n" << RenderDiagnostics(d, ReportFormat::kText));
  REQUIRE(r.ok());
  REQUIRE(CountErrors(d) == 0);
  return std::move(r.value());
}

inline std::string WriteOk(const std::vector<Entry>& entries, Version v) {
  Diags d;
  WriteOptions o;
  o.version = v;
  auto r = WriteEncodings(entries, o, &d);
  INFO(RenderDiagnostics(d, ReportFormat::kText) << (r.ok() ? "" : r.status().message()));
  REQUIRE(r.ok());
  return r.value();
}

inline const Entry& Get(const File& f, const std::string& name) {
  const Entry* e = f.Find(name);
  INFO(name);
  REQUIRE(e != nullptr);
  return *e;
}

}  // namespace qairt::encodings::testing
