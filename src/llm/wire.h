// Wire formats: request bodies and reply parsing for the Anthropic Messages API and OpenAI chat
// completions, HTTP error classification, retry-after and rate-limit headers. Pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <ctime>
#include <map>
#include <optional>
#include <string>

#include "kforge/llm/chat.h"
#include "kforge/llm/provider.h"
#include "llm/http_transport.h"

namespace kforge::llm {

using HeaderMap = std::map<std::string, std::string>;

nlohmann::json AnthropicRequestBody(const ChatRequest& request);
/// Turns one HTTP exchange with /v1/messages into an Attempt (reply or classified error).
Attempt AnthropicAttempt(const HttpResult& http, std::time_t now);

nlohmann::json OpenAiRequestBody(const ChatRequest& request, const std::string& max_tokens_field);
/// Turns one HTTP exchange with /chat/completions into an Attempt.
Attempt OpenAiAttempt(const HttpResult& http, std::time_t now);

/// Classifies a non-2xx status or a transport failure. `api_type`, `api_code` and `api_message`
/// come from the error body when it has one.
ErrorInfo ClassifyFailure(const HttpResult& http, const std::string& api_type, const std::string& api_code,
                          const std::string& api_message);
/// retry-after-ms, else retry-after (seconds or an HTTP date), in seconds from `now`.
std::optional<double> ParseRetryAfter(const HeaderMap& headers, std::time_t now);
/// Anthropic (anthropic-ratelimit-*) and OpenAI (x-ratelimit-*) headers.
RateLimitInfo ParseRateLimits(const HeaderMap& headers, std::time_t now);
/// "6m0s", "1.5s", "120ms" -> seconds.
std::optional<double> ParseGoDuration(const std::string& text);
/// "2024-05-01T12:00:30Z" (RFC 3339) -> seconds from `now` (may be negative).
std::optional<double> SecondsUntilRfc3339(const std::string& text, std::time_t now);
/// One line, at most ~300 bytes, with anything that looks like an API key masked.
std::string SanitizeMessage(std::string text);
/// Replaces every occurrence of `secret` in `text` with "***".
void MaskSecret(std::string& text, const std::string& secret);

}  // namespace kforge::llm
