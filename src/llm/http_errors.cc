#include "kforge/common/json_fields.h"
// HTTP failure classification and rate-limit header parsing shared by the HTTP providers.
#include <algorithm>
#include <cmath>
#include <map>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <vector>

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

namespace {

std::string JsonEscaped(const std::string& secret) {
  std::string quoted = common::JsonText(nlohmann::json(secret));
  return quoted.substr(1, quoted.size() - 2);
}

/// Marks in `covered` every byte of `text` inside a run of at least kSecretRunBytes bytes (the
/// whole of a shorter form) that also occurs in one of `forms`. Linear in the text: every window of
/// the forms goes in one set, and each window of the text is looked up once.
void MarkSecretRuns(std::string_view text, const std::vector<std::string>& forms,
                    std::vector<bool>& covered) {
  std::unordered_set<std::string_view> windows_by_size[kSecretRunBytes + 1];
  for (const std::string& form : forms) {
    if (form.empty()) continue;
    const size_t run = std::min(form.size(), kSecretRunBytes);
    for (size_t j = 0; j + run <= form.size(); ++j)
      windows_by_size[run].insert(std::string_view(form).substr(j, run));
  }
  for (size_t run = 1; run <= kSecretRunBytes; ++run) {
    const std::unordered_set<std::string_view>& windows = windows_by_size[run];
    if (windows.empty() || text.size() < run) continue;
    bool first[256] = {};
    for (std::string_view w : windows) first[static_cast<unsigned char>(w[0])] = true;
    size_t marked_until = 0;  // overlapping hits mark each byte once
    for (size_t i = 0; i + run <= text.size(); ++i) {
      if (!first[static_cast<unsigned char>(text[i])] || !windows.count(text.substr(i, run))) continue;
      for (size_t k = std::max(i, marked_until); k < i + run; ++k) covered[k] = true;
      marked_until = std::max(marked_until, i + run);
    }
  }
}

/// The forms a secret takes in text: as given, and JSON-escaped.
void AddForms(const std::string& secret, std::vector<std::string>& forms) {
  if (secret.empty()) return;
  forms.push_back(secret);
  forms.push_back(JsonEscaped(secret));
}

/// Replaces each maximal covered stretch of `text` with "***".
std::string ReplaceCovered(const std::string& text, const std::vector<bool>& covered) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (!covered[i]) {
      out.push_back(text[i++]);
      continue;
    }
    out += "***";
    while (i < text.size() && covered[i]) ++i;
  }
  return out;
}

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '*';
}

/// Cuts `text` to at most `limit` bytes without splitting a UTF-8 sequence or a "***" mask.
void CutUtf8(std::string& text, size_t limit) {
  if (text.size() <= limit) return;
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  while (cut > 0 && text[cut] == '*' && text[cut - 1] == '*') --cut;
  text.resize(cut);
  text += "...";
}

}  // namespace

void MaskSecrets(std::string& text, const Secrets& secrets) {
  std::vector<std::string> forms;
  for (const std::string& secret : secrets) AddForms(secret, forms);
  if (forms.empty()) return;
  std::vector<bool> covered(text.size(), false);
  MarkSecretRuns(text, forms, covered);
  if (std::find(covered.begin(), covered.end(), true) != covered.end()) text = ReplaceCovered(text, covered);
}

void MaskSecret(std::string& text, const std::string& secret) { MaskSecrets(text, {secret}); }

std::string RedactSecrets(std::string text, const Secrets& secrets) {
  Secrets kept;
  for (const std::string& secret : secrets)
    if (secret.size() >= kMinRedactedSecret) kept.push_back(secret);
  MaskSecrets(text, kept);
  return text;
}

std::string SanitizeMessage(std::string text, const Secrets& secrets) {
  // 1. Mask, on the whole text and in one pass (so that overlapping finds make one "***"): a key
  // straddling the cut below must not leave its start behind.
  std::vector<std::string> forms;
  for (const std::string& secret : secrets) AddForms(secret, forms);
  std::vector<bool> covered(text.size(), false);
  MarkSecretRuns(text, forms, covered);
  // Key-like tokens ("sk-...", "sk-ant-...") that error messages echo back.
  for (size_t pos = text.find("sk-"); pos != std::string::npos; pos = text.find("sk-", pos + 3)) {
    size_t end = pos + 3;
    while (end < text.size() && IsKeyChar(text[end])) ++end;
    if (end - pos > 8)
      for (size_t k = pos + 3; k < end; ++k) covered[k] = true;
  }
  text = ReplaceCovered(text, covered);
  // 2. Flatten and cut.
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  CutUtf8(text, 300);
  return text;
}

ApiError ParseApiError(const nlohmann::json& body) {
  ApiError e;
  if (!body.is_object() || !body.contains("error")) return e;
  const nlohmann::json& err = body["error"];
  if (err.is_string()) {  // Ollama, llama.cpp
    e.message = err.get<std::string>();
    return e;
  }
  if (!err.is_object()) return e;
  auto text = [&](const char* key) {
    return err.contains(key) && err[key].is_string() ? err[key].get<std::string>() : std::string();
  };
  e.type = text("type");
  e.code = err.contains("code") && err["code"].is_number_integer()
               ? std::to_string(err["code"].get<int64_t>())
               : text("code");
  e.message = text("message");
  if (err.contains("metadata") && err["metadata"].is_object()) {
    const nlohmann::json& meta = err["metadata"];
    e.flagged = meta.contains("reasons") || meta.contains("flagged_input");
  }
  return e;
}

int StatusOfApiError(const ApiError& api) {
  static const std::map<std::string, int> kByName = {
      // Anthropic error types
      {"invalid_request_error", 400}, {"authentication_error", 401}, {"billing_error", 402},
      {"permission_error", 403}, {"not_found_error", 404}, {"request_too_large", 413},
      {"rate_limit_error", 429}, {"api_error", 500}, {"timeout_error", 504}, {"overloaded_error", 529},
      // OpenAI-compatible types and codes
      {"context_length_exceeded", 400}, {"invalid_prompt", 400}, {"string_above_max_length", 400},
      {"BadRequestError", 400}, {"invalid_api_key", 401}, {"model_not_found", 404},
      {"NotFoundError", 404}, {"rate_limit_exceeded", 429}, {"insufficient_quota", 429},
      {"server_error", 500}, {"InternalServerError", 500}};
  if (!api.code.empty() && api.code.size() == 3 && std::all_of(api.code.begin(), api.code.end(), ::isdigit)) {
    const int code = std::atoi(api.code.c_str());
    if (code >= 400 && code < 600) return code;
  }
  for (const std::string* name : {&api.code, &api.type})
    if (auto it = kByName.find(*name); it != kByName.end()) return it->second;
  return 500;
}

std::string NotFoundHint(const std::string& url, const std::string& model, std::string_view base_url_rule) {
  return "POST " + url + " was not found: check the model name '" + model + "' and the base URL (" +
         std::string(base_url_rule) + ")";
}

ErrorInfo ClassifyFailure(const HttpResult& http, const ApiError& api, const Secrets& secrets) {
  ErrorInfo e;
  e.http_status = http.status;
  if (!http.transport_error.empty()) {
    e.kind = http.timed_out ? ErrorKind::kTimeout : ErrorKind::kTransport;
    e.message = SanitizeMessage(http.transport_error, secrets);
    return e;
  }
  const int s = http.status;
  const std::string what = api.type + " " + api.code + " " + api.message;
  if (s == 403 && (api.flagged || Contains(api.message, "flagged") || Contains(api.message, "moderation"))) {
    e.kind = ErrorKind::kModeration;
  } else if (s == 401 || s == 403 || api.type == "authentication_error" || api.type == "permission_error") {
    e.kind = ErrorKind::kAuth;
  } else if (Contains(api.code, "insufficient_quota") || Contains(api.type, "insufficient_quota") ||
             Contains(api.message, "exceeded your current quota")) {
    e.kind = ErrorKind::kQuota;
  } else if (s == 402 || api.type == "billing_error" || Contains(what, "credit balance")) {
    e.kind = ErrorKind::kBilling;
  } else if (s == 429) {
    e.kind = ErrorKind::kRateLimited;
  } else if (s == 529 || api.type == "overloaded_error") {
    e.kind = ErrorKind::kOverloaded;
  } else if (s == 408 || s == 409 || s >= 500) {
    e.kind = ErrorKind::kServer;
  } else if (s == 404) {
    e.kind = ErrorKind::kNotFound;
  } else if (s >= 400) {
    e.kind = ErrorKind::kInvalidRequest;
  } else {
    e.kind = ErrorKind::kMalformedResponse;  // 1xx/3xx as a final status
  }
  std::string detail = api.type.empty() ? "" : " " + api.type;
  if (!api.message.empty()) detail += ": " + api.message;
  e.message = SanitizeMessage("HTTP " + std::to_string(s) + detail, secrets);
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

std::optional<bool> ParseShouldRetry(const HeaderMap& headers) {
  auto text = HeaderText(headers, "x-should-retry");
  if (text == "true") return true;
  if (text == "false") return false;
  return std::nullopt;
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

void ReadReplyHeaders(const HttpResult& http, std::time_t now, Attempt& a) {
  a.limits = ParseRateLimits(http.headers, now);
  a.retry_after_s = ParseRetryAfter(http.headers, now);
  a.should_retry = ParseShouldRetry(http.headers);
}

ErrorInfo MalformedReply(const HttpResult& http, const std::string& why, const Secrets& secrets) {
  return ErrorInfo{ErrorKind::kMalformedResponse, http.status, SanitizeMessage("malformed reply: " + why, secrets)};
}

std::string StringField(const nlohmann::json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : "";
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
