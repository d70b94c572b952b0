// Content hashes for caches, record ids and dataset manifests (SHA-256 through OpenSSL's libcrypto).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kforge::common {

/// SplitMix64's finaliser: decorrelates values derived from one seed (per-tensor and per-trial seeds,
/// MinHash permutations). Not a cryptographic hash.
constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// SHA-256 of `data` as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view data);

/// SHA-256 of data given in pieces (a file read in chunks): Update any number of times, then HexDigest.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(std::string_view data);
  /// The digest of everything given so far; Update must not be called afterwards.
  std::string HexDigest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace kforge::common
