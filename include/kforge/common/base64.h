// Base64 (RFC 4648) for binary payloads in JSON lines (CUBIN images sent to workers).
#pragma once

#include <string>
#include <string_view>

#include "kforge/common/status.h"

namespace kforge::common {

std::string Base64Encode(std::string_view bytes);
/// Fails on characters outside the alphabet or a bad length.
StatusOr<std::string> Base64Decode(std::string_view text);

}  // namespace kforge::common
