// Base64 through OpenSSL's libcrypto. EVP_DecodeBlock is lenient (it trims white space, reads '=' as
// zero bits anywhere and keeps the padding's bytes), so the text is checked here first.
#include "kforge/common/base64.h"

#include <openssl/evp.h>

#include <algorithm>
#include <climits>

namespace kforge::common {
namespace {

/// Bytes encoded per EVP_EncodeBlock call: a multiple of 3, so that only the last call pads.
constexpr size_t kEncodeChunk = size_t{3} << 20;

bool InAlphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');  // EVP_EncodeBlock writes a NUL
  size_t written = 0;
  for (size_t done = 0; done < bytes.size(); done += kEncodeChunk) {
    const size_t n = std::min(kEncodeChunk, bytes.size() - done);
    written += static_cast<size_t>(
        EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + written),
                        reinterpret_cast<const unsigned char*>(bytes.data() + done), static_cast<int>(n)));
  }
  out.resize(written);
  return out;
}

StatusOr<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return Status::InvalidArgument("base64: length is not a multiple of 4");
  if (text.size() > INT_MAX) return Status::InvalidArgument("base64: text too long");
  // '=' pads the last group only: "xx==" or "xxx=".
  size_t pad = 0;
  if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  for (size_t i = 0; i < text.size() - pad; ++i) {
    if (!InAlphabet(text[i])) return Status::InvalidArgument("base64: bad character at " + std::to_string(i));
  }
  std::string out(text.size() / 4 * 3, '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return Status::InvalidArgument("base64: malformed");
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

}  // namespace kforge::common
