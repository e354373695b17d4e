// Minimal streaming JSON writer: correct string escaping (control characters,
// quotes, invalid UTF-8 replaced), finite-number handling, no dependencies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qairt {

class JsonWriter {
 public:
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // Returns *this so that a member reads as one statement:
  // `w.Key("name").String(name);`.
  JsonWriter& Key(std::string_view key);
  void String(std::string_view value);
  void Int(int64_t value);
  void UInt(uint64_t value);
  void Double(double value);  // non-finite values are written as null
  void Bool(bool value);
  void Null();

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Appends `s` as a quoted JSON string.
void AppendJsonString(std::string* out, std::string_view s);
// `s` as a quoted JSON string.
inline std::string JsonQuoted(std::string_view s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

}  // namespace qairt
