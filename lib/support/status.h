// Internal error type of the core library. Never thrown: every fallible
// function returns a Status (or Result<T>) and the C boundary converts it to a
// qairt_status_t*. Codes mirror enum qairt_code in include/qairt/qairt.h.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace qairt {

enum class StatusCode : int32_t {
  kOk = 0,
  kInvalidArgument = 1, kNotFound = 2, kUnsupported = 3, kParseError = 4, kOutOfMemory = 5,
  kInternal = 6, kValidationFailed = 7, kIoError = 8, kBufferTooSmall = 9,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename... Args>
Status Error(StatusCode code, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
Status InvalidArgument(fmt::format_string<Args...> format, Args&&... args) {
  return Status(StatusCode::kInvalidArgument, fmt::format(format, std::forward<Args>(args)...));
}

// Either a value or an error Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT(implicit)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(implicit)
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace qairt

#define QAIRT_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::qairt::Status qairt_status_ = (expr);  \
    if (!qairt_status_.ok()) return qairt_status_; \
  } while (0)
