// Status and StatusOr: how kforge reports expected failures (bad input, IO, parse errors) up the
// call chain by early return. Exceptions are reserved for broken environments and bugs.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kforge {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,
    kNotFound,
    kIoError,
    kParseError,
    kUnavailable,
    kUnimplemented,
    kInternal,
    kResourceExhausted
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(Code::kIoError, std::move(msg)); }
  static Status ParseError(std::string msg) { return Status(Code::kParseError, std::move(msg)); }
  static Status Unavailable(std::string msg) { return Status(Code::kUnavailable, std::move(msg)); }
  static Status Unimplemented(std::string msg) { return Status(Code::kUnimplemented, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }
  /// Out of memory (device or host): the environment's limit, not the input's fault.
  static Status ResourceExhausted(std::string msg) { return Status(Code::kResourceExhausted, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "ok" or "<code name>: <message>", one line.
  std::string ToString() const;
  /// Returns a copy whose message is prefixed with `context: `.
  Status WithContext(const std::string& context) const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

/// A value or the Status that explains why there is none.
template <class T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) {}

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace kforge

/// Returns early from the enclosing function when `expr` yields a non-ok Status.
#define KFORGE_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::kforge::Status kforge_status_ = (expr);        \
    if (!kforge_status_.ok()) return kforge_status_; \
  } while (0)

#define KFORGE_CONCAT_INNER(a, b) a##b
#define KFORGE_CONCAT(a, b) KFORGE_CONCAT_INNER(a, b)
/// `KFORGE_ASSIGN_OR_RETURN(auto x, Fn());` binds the value or returns the Status.
#define KFORGE_ASSIGN_OR_RETURN(lhs, expr)                                                            \
  auto KFORGE_CONCAT(kforge_or_, __LINE__) = (expr);                                                  \
  if (!KFORGE_CONCAT(kforge_or_, __LINE__).ok()) return KFORGE_CONCAT(kforge_or_, __LINE__).status(); \
  lhs = std::move(KFORGE_CONCAT(kforge_or_, __LINE__)).value()
