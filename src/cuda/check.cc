// Message formatting for the call-check macros of check.h.
#include "kforge/cuda/check.h"

#include <string_view>

namespace kforge::cuda::internal {

std::string FormatCallFailure(const char* call, const char* error, const char* file, int line) {
  std::string_view f(file);
  const size_t slash = f.rfind("src/");
  if (slash != std::string_view::npos) f = f.substr(slash);
  return std::string(call) + " failed: " + error + " at " + std::string(f) + ":" + std::to_string(line);
}

}  // namespace kforge::cuda::internal
