// HTTP failure classification and rate-limit header parsing shared by the HTTP providers.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "llm/wire.h"

namespace kforge::llm {
namespace {

bool Contains(const std::string& haystack, const char* needle) {
  std::string lower = haystack;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find(needle) != std::string::npos;
}

std::optional<double> ParseNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> Header(const HeaderMap& h, const std::string& name) {
  auto it = h.find(name);
  if (it == h.end()) return std::nullopt;
  return ParseNumber(it->second);
}

std::optional<std::string> HeaderText(const HeaderMap& h, const std::string& name) {
  auto it = h.find(name);
  if (it == h.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::string SanitizeMessage(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  // Mask key-like tokens ("sk-...", "sk-ant-...") that error messages sometimes echo back.
  for (size_t pos = text.find("sk-"); pos != std::string::npos; pos = text.find("sk-", pos + 3)) {
    size_t end = pos + 3;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-' ||
                                 text[end] == '_' || text[end] == '*'))
      ++end;
    if (end - pos > 8) text.replace(pos, end - pos, "sk-***");
  }
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

void MaskSecret(std::string& text, const std::string& secret) {
  if (secret.empty()) return;
  for (size_t p = text.find(secret); p != std::string::npos; p = text.find(secret))
    text.replace(p, secret.size(), "***");
}

ErrorInfo ClassifyFailure(const HttpResult& http, const std::string& api_type, const std::string& api_code,
                          const std::string& api_message) {
  ErrorInfo e;
  e.http_status = http.status;
  if (!http.transport_error.empty()) {
    e.kind = http.timed_out ? ErrorKind::kTimeout : ErrorKind::kTransport;
    e.message = SanitizeMessage(http.transport_error);
    return e;
  }
  const int s = http.status;
  const std::string what = api_type + " " + api_code + " " + api_message;
  if (s == 401 || s == 403 || api_type == "authentication_error" || api_type == "permission_error") {
    e.kind = ErrorKind::kAuth;
  } else if (Contains(api_code, "insufficient_quota") || Contains(api_type, "insufficient_quota") ||
             Contains(api_message, "exceeded your current quota")) {
    e.kind = ErrorKind::kQuota;
  } else if (s == 402 || api_type == "billing_error" || Contains(what, "credit balance")) {
    e.kind = ErrorKind::kBilling;
  } else if (s == 429) {
    e.kind = ErrorKind::kRateLimited;
  } else if (s == 529 || api_type == "overloaded_error") {
    e.kind = ErrorKind::kOverloaded;
  } else if (s == 408 || s == 409 || s >= 500) {
    e.kind = ErrorKind::kServer;
  } else if (s >= 400) {
    e.kind = ErrorKind::kInvalidRequest;
  } else {
    e.kind = ErrorKind::kMalformedResponse;  // 1xx/3xx as a final status
  }
  std::string detail = api_type.empty() ? "" : " " + api_type;
  if (!api_message.empty()) detail += ": " + api_message;
  e.message = SanitizeMessage("HTTP " + std::to_string(s) + detail);
  return e;
}

std::optional<double> ParseGoDuration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (auto plain = ParseNumber(text)) return plain;  // bare seconds
  double total = 0;
  const char* p = text.c_str();
  while (*p) {
    char* end = nullptr;
    double v = std::strtod(p, &end);
    if (end == p) return std::nullopt;
    p = end;
    if (std::strncmp(p, "ms", 2) == 0) {
      total += v / 1000;
      p += 2;
    } else if (*p == 'h') {
      total += v * 3600;
      ++p;
    } else if (*p == 'm') {
      total += v * 60;
      ++p;
    } else if (*p == 's') {
      total += v;
      ++p;
    } else {
      return std::nullopt;
    }
  }
  return total;
}

std::optional<double> SecondsUntilRfc3339(const std::string& text, std::time_t now) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) return std::nullopt;
  double frac = 0;
  if (*rest == '.') {
    char* end = nullptr;
    frac = std::strtod(rest, &end);
    rest = end;
  }
  long offset = 0;
  if (*rest == '+' || *rest == '-') {
    int hh = 0, mm = 0;
    if (std::sscanf(rest + 1, "%2d:%2d", &hh, &mm) != 2) return std::nullopt;
    offset = (*rest == '+' ? 1 : -1) * (hh * 3600L + mm * 60L);
  } else if (*rest != 'Z' && *rest != 'z') {
    return std::nullopt;
  }
  return static_cast<double>(timegm(&tm) - offset - now) + frac;
}

std::optional<double> ParseRetryAfter(const HeaderMap& headers, std::time_t now) {
  if (auto ms = Header(headers, "retry-after-ms"); ms && *ms >= 0) return *ms / 1000;
  auto text = HeaderText(headers, "retry-after");
  if (!text) return std::nullopt;
  if (auto s = ParseNumber(*text)) return *s >= 0 ? *s : 0;
  std::tm tm{};
  if (strptime(text->c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) {
    double s = static_cast<double>(timegm(&tm) - now);
    return s > 0 ? s : 0;
  }
  return std::nullopt;
}

RateLimitInfo ParseRateLimits(const HeaderMap& h, std::time_t now) {
  RateLimitInfo info;
  // Anthropic: reset is an RFC 3339 time. tokens-* is the most restrictive of input/output.
  info.requests_limit = Header(h, "anthropic-ratelimit-requests-limit");
  info.requests_remaining = Header(h, "anthropic-ratelimit-requests-remaining");
  if (auto r = HeaderText(h, "anthropic-ratelimit-requests-reset"))
    info.requests_reset_s = SecondsUntilRfc3339(*r, now);
  const char* token_family = h.count("anthropic-ratelimit-tokens-limit") ? "tokens" : "input-tokens";
  const std::string prefix = std::string("anthropic-ratelimit-") + token_family;
  info.tokens_limit = Header(h, prefix + "-limit");
  info.tokens_remaining = Header(h, prefix + "-remaining");
  if (auto r = HeaderText(h, prefix + "-reset")) info.tokens_reset_s = SecondsUntilRfc3339(*r, now);
  // OpenAI (and compatible servers): reset is a duration.
  if (!info.requests_limit) info.requests_limit = Header(h, "x-ratelimit-limit-requests");
  if (!info.requests_remaining) info.requests_remaining = Header(h, "x-ratelimit-remaining-requests");
  if (!info.requests_reset_s)
    if (auto r = HeaderText(h, "x-ratelimit-reset-requests")) info.requests_reset_s = ParseGoDuration(*r);
  if (!info.tokens_limit) info.tokens_limit = Header(h, "x-ratelimit-limit-tokens");
  if (!info.tokens_remaining) info.tokens_remaining = Header(h, "x-ratelimit-remaining-tokens");
  if (!info.tokens_reset_s)
    if (auto r = HeaderText(h, "x-ratelimit-reset-tokens")) info.tokens_reset_s = ParseGoDuration(*r);
  return info;
}

}  // namespace kforge::llm
