// What untrusted CUDA source and NVRTC options must satisfy before kforge compiles them. NVRTC
// reads any file an #include names and its log goes back to the model provider, so the checks
// err on the side of rejecting.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::cuda {

/// Largest accepted source, in bytes.
inline constexpr size_t kMaxSourceBytes = 256 * 1024;

/// OK when `source` is at most kMaxSourceBytes of valid UTF-8 text (no NULs or control characters
/// other than \t \n \v \f \r\n), every #include and __has_include names an allowlisted header, and
/// only allowlisted directives and pragmas occur. Otherwise InvalidArgument with a one-line message
/// that names the line and the offending directive or header (truncated), never other content.
/// When OK and `headers` is not null, it receives every header named, once each, in order.
Status CheckSourcePolicy(std::string_view source, std::vector<std::string>* headers = nullptr);

/// True when `header` (as written between <> or "") is on the allowlist: a CUDA or CCCL header, or
/// one that kforge supplies itself (a C or C++ library header, or a host-only one it drops).
bool IsAllowedHeader(std::string_view header);

/// OK when every entry is on the NVRTC option allowlist of docs/formats.md ("options").
Status CheckCompileOptions(const std::vector<std::string>& options);

}  // namespace kforge::cuda
