// Which values of a provider's settings are credentials: its key, extra headers that carry one, and
// the user:password or ?api_key= of its base URL. They are masked (wire.h) and never stored.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kforge/common/base64.h"
#include "kforge/llm/provider.h"
#include "llm/wire.h"

namespace kforge::llm {
namespace {

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

bool NamesACredential(std::string_view name) {
  const std::string lower = Lower(name);
  for (const char* word : {"auth", "key", "token", "secret", "cookie", "password", "passwd", "credential",
                           "signature", "session"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

/// A key's look: 20 or more bytes without spaces that mix upper case, lower case and digits.
bool LooksLikeKey(std::string_view value) {
  if (value.size() < 20 || value.find_first_of(" \t") != std::string_view::npos) return false;
  bool upper = false, lower = false, digit = false;
  for (char c : value) {
    upper = upper || std::isupper(static_cast<unsigned char>(c));
    lower = lower || std::islower(static_cast<unsigned char>(c));
    digit = digit || std::isdigit(static_cast<unsigned char>(c));
  }
  return upper && lower && digit;
}

/// "Bearer TOKEN" -> "TOKEN"; a value with no scheme word is the credential itself.
std::string_view WithoutScheme(std::string_view value) {
  const size_t space = value.find(' ');
  if (space == std::string_view::npos) return value;
  const std::string scheme = Lower(value.substr(0, space));
  if (scheme != "bearer" && scheme != "basic" && scheme != "token" && scheme != "digest" &&
      scheme != "apikey")
    return value;
  value.remove_prefix(space + 1);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return value;
}

/// Where a URL's authority ("user:pass@host:port") starts and ends; npos when it has no "//".
std::pair<size_t, size_t> Authority(std::string_view url) {
  const size_t slashes = url.find("//");
  if (slashes == std::string_view::npos) return {std::string_view::npos, std::string_view::npos};
  const size_t start = slashes + 2;
  return {start, std::min(url.find_first_of("/?#", start), url.size())};
}

/// Calls `each(value_start, value_end)` for every query parameter that names a credential.
template <typename Each>
void ForEachCredentialParam(std::string_view url, Each each) {
  const size_t query = url.find('?');
  if (query == std::string_view::npos) return;
  const size_t end = std::min(url.find('#', query), url.size());
  for (size_t start = query + 1; start < end;) {
    const size_t amp = std::min(url.find('&', start), end);
    const size_t eq = url.find('=', start);
    if (eq < amp && NamesACredential(url.substr(start, eq - start))) each(eq + 1, amp);
    start = amp + 1;
  }
}

}  // namespace

Secrets UrlCredentials(std::string_view url) {
  Secrets found;
  const auto [start, end] = Authority(url);
  if (start != std::string_view::npos) {
    const size_t at = url.substr(start, end - start).rfind('@');
    if (at != std::string_view::npos) {
      const std::string_view userinfo = url.substr(start, at);
      found.emplace_back(userinfo);
      found.push_back(common::Base64Encode(userinfo));  // as curl sends it: Authorization: Basic ...
      const size_t colon = userinfo.find(':');
      if (colon != std::string_view::npos) found.emplace_back(userinfo.substr(colon + 1));
    }
  }
  ForEachCredentialParam(url,
                         [&](size_t from, size_t to) { found.emplace_back(url.substr(from, to - from)); });
  found.erase(std::remove(found.begin(), found.end(), std::string()), found.end());
  return found;
}

std::string UrlWithoutCredentials(std::string_view url) {
  std::string out(url);
  // Query values first: removing the user info moves them.
  std::vector<std::pair<size_t, size_t>> values;
  ForEachCredentialParam(url, [&](size_t from, size_t to) { values.emplace_back(from, to); });
  for (auto it = values.rbegin(); it != values.rend(); ++it)
    out.replace(it->first, it->second - it->first, "***");
  const auto [start, end] = Authority(url);
  if (start != std::string_view::npos) {
    const size_t at = url.substr(start, end - start).rfind('@');
    if (at != std::string_view::npos) out.erase(start, at + 1);
  }
  return out;
}

Secrets ProviderSecrets(const std::string& key, const ProviderOptions& options, const std::string& base_url) {
  Secrets secrets;
  if (!key.empty()) secrets.push_back(key);
  for (const auto& [name, value] : options.extra_headers) {
    const std::string_view credential = WithoutScheme(value);
    if (NamesACredential(name) || credential != value || credential.substr(0, 3) == "sk-" ||
        LooksLikeKey(value))
      if (!credential.empty()) secrets.emplace_back(credential);
  }
  for (std::string& secret : UrlCredentials(base_url)) secrets.push_back(std::move(secret));
  return secrets;
}

}  // namespace kforge::llm
