// Content hashes for caches and record ids.
#pragma once

#include <string>
#include <string_view>

namespace kforge::common {

/// SHA-256 of `data` as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view data);

}  // namespace kforge::common
