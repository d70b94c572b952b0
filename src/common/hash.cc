// SHA-256 through OpenSSL's libcrypto (SHA-NI where the CPU has it), for cache keys, solution ids and
// dataset hashes.
#include "kforge/common/hash.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace kforge::common {
namespace {

std::string Hex(const unsigned char* digest, unsigned int size) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("libcrypto: SHA-256 failed");
  return Hex(digest, size);
}

struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (!context_->ctx || EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("libcrypto: SHA-256 init failed");
}

Sha256::~Sha256() = default;

void Sha256::Update(std::string_view data) {
  if (EVP_DigestUpdate(context_->ctx, data.data(), data.size()) != 1)
    throw std::runtime_error("libcrypto: SHA-256 update failed");
}

std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context_->ctx, digest, &size) != 1)
    throw std::runtime_error("libcrypto: SHA-256 final failed");
  return Hex(digest, size);
}

}  // namespace kforge::common
