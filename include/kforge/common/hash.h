// Content hashes for caches, record ids and dataset manifests.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kforge::common {

/// SHA-256 of `data` as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view data);

/// SHA-256 of data given in pieces (a file read in chunks): Update any number of times, then HexDigest.
class Sha256 {
 public:
  Sha256();
  void Update(std::string_view data);
  /// The digest of everything given so far; Update must not be called afterwards.
  std::string HexDigest();

 private:
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> block_ = {};
  size_t block_used_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace kforge::common
