// Status formatting.
#include "kforge/common/status.h"

namespace kforge {
namespace {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "ok";
    case Status::Code::kInvalidArgument:
      return "invalid argument";
    case Status::Code::kNotFound:
      return "not found";
    case Status::Code::kIoError:
      return "io error";
    case Status::Code::kParseError:
      return "parse error";
    case Status::Code::kUnavailable:
      return "unavailable";
    case Status::Code::kUnimplemented:
      return "not implemented";
    case Status::Code::kInternal:
      return "internal error";
    case Status::Code::kResourceExhausted:
      return "resource exhausted";
  }
  return "unknown";
}

}  // namespace

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace kforge
