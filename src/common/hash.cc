// SHA-256 through OpenSSL's libcrypto (SHA-NI where the CPU has it), for cache keys and solution ids.
#include "kforge/common/hash.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace kforge::common {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("libcrypto: SHA-256 failed");
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

}  // namespace kforge::common
