#include "support/json_writer.h"

#include <fmt/format.h>

#include <cmath>

namespace qairt {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  return n;
}

}  // namespace

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': *out += "\\\""; ++i; continue;
      case '\\': *out += "\\\\"; ++i; continue;
      case '\n': *out += "\\n"; ++i; continue;
      case '\r': *out += "\\r"; ++i; continue;
      case '\t': *out += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      *out += fmt::format("\\u{:04x}", c);
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      *out += "\\ufffd";  // names from hostile files may not be UTF-8
      ++i;
      continue;
    }
    out->append(s.substr(i, n));
    i += n;
  }
  out->push_back('"');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  first_.push_back(true);
}
void JsonWriter::EndObject() {
  out_.push_back('}');
  first_.pop_back();
}
void JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  first_.push_back(true);
}
void JsonWriter::EndArray() {
  out_.push_back(']');
  first_.pop_back();
}
JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(&out_, key);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}
void JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(&out_, value);
}
void JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += fmt::format("{}", value);
}
void JsonWriter::UInt(uint64_t value) {
  BeforeValue();
  out_ += fmt::format("{}", value);
}
void JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_ += "null";
    return;
  }
  out_ += fmt::format("{}", value);  // shortest round-trip representation
}
void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}
void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

}  // namespace qairt
