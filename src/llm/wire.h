// Wire formats: request bodies and reply parsing (whole and streamed) for the Anthropic Messages
// API and OpenAI chat completions, HTTP error classification, retry and rate-limit headers, and
// the masking of secrets in messages. Pure functions and small state machines, no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/llm/chat.h"
#include "kforge/llm/provider.h"
#include "llm/http_transport.h"

namespace kforge::llm {

using HeaderMap = std::map<std::string, std::string>;
/// Values that must never appear in a message, a log line or a file (API keys).
using Secrets = std::vector<std::string>;

/// A reply that carries tool calls stopped for them, whatever its stop reason says, unless it was cut
/// (vLLM, Ollama and some routers send "stop" with tool calls).
inline StopReason ToolCallsWin(StopReason reason, const common::Message& message) {
  if (!message.tool_calls.empty() && (reason == StopReason::kEndTurn || reason == StopReason::kOther))
    return StopReason::kToolUse;
  return reason;
}

// ---- Anthropic ----

/// The /v1/messages body. Avoids the API's 400s: whitespace-only text blocks are dropped, an empty
/// tool result says "(no output)", a tool schema without "type" gets "object", top_p is left out
/// when temperature is set, and with thinking on only the values thinking allows are sent.
nlohmann::json AnthropicRequestBody(const ChatRequest& request, bool stream);
/// Turns one HTTP exchange with /v1/messages into an Attempt (reply or classified error).
Attempt AnthropicAttempt(const HttpResult& http, std::time_t now, const Secrets& secrets);
/// A one-line reason why the API would reject `request` before it is sent, or "" (thinking budget).
std::string AnthropicRequestProblem(const ChatRequest& request);

// ---- OpenAI-compatible ----

/// How a request is written for one server and model.
struct OpenAiDialect {
  std::string max_tokens_field = "max_tokens";
  bool reasoning_model = false;  ///< no stop; temperature and top_p only when 1
  ReasoningEcho echo = ReasoningEcho::kNone;
  std::string reasoning_field = "reasoning_content";
  /// Send the request's prompt_cache_key: api.openai.com only (other servers may not know the field).
  bool prompt_cache_key = false;
};
/// gpt-5*, o1*, o3*, o4*, also after a "vendor/" prefix (OpenRouter, LiteLLM).
bool IsOpenAiReasoningModel(const std::string& model);
/// The options' overrides, else the rules by model name and base URL.
OpenAiDialect ResolveOpenAiDialect(const ProviderOptions& options, const std::string& base_url,
                                   const std::string& model);
nlohmann::json OpenAiRequestBody(const ChatRequest& request, const OpenAiDialect& dialect, bool stream);
/// Turns one HTTP exchange with /chat/completions into an Attempt.
Attempt OpenAiAttempt(const HttpResult& http, std::time_t now, const Secrets& secrets);

// ---- Streaming (server-sent events) ----

struct SseEvent {
  std::string event;  ///< the `event:` field; empty when the server sent none
  std::string data;   ///< the `data:` lines joined by '\n'
};

/// Splits a text/event-stream into events as its bytes arrive, in chunks of any size; lines end in
/// \n, \r\n or \r.
class SseParser {
 public:
  template <class OnEvent>
  void Feed(std::string_view bytes, OnEvent&& on_event) {
    for (char c : bytes) {
      if (after_cr_ && c == '\n') {
        after_cr_ = false;
        continue;
      }
      after_cr_ = c == '\r';
      if (c != '\r' && c != '\n') {
        line_.push_back(c);
        continue;
      }
      if (line_.empty()) {
        if (has_data_ || !current_.event.empty()) on_event(std::move(current_));
        current_ = SseEvent();
        has_data_ = false;
      } else {
        Line();
      }
      line_.clear();
    }
  }

 private:
  void Line();
  std::string line_;
  bool after_cr_ = false;
  bool has_data_ = false;
  SseEvent current_;
};

/// Builds one reply from a streamed one as its bytes arrive.
class StreamAssembler {
 public:
  virtual ~StreamAssembler() = default;
  void Feed(std::string_view bytes) {
    parser_.Feed(bytes, [this](SseEvent e) { OnEvent(e); });
  }
  /// The reply; or the error event the stream carried; or, when the stream ended before its end
  /// event, a retryable error (kTimeout when `http` timed out, else kTransport).
  virtual Attempt Finish(const HttpResult& http, std::time_t now, const Secrets& secrets) = 0;

 protected:
  virtual void OnEvent(const SseEvent& e) = 0;

 private:
  SseParser parser_;
};

/// message_start, content_block_start/delta/stop (text, thinking + signature, redacted_thinking,
/// tool_use input_json_delta), message_delta (stop reason, usage), message_stop, ping, error.
std::unique_ptr<StreamAssembler> MakeAnthropicStream();
/// chat.completion.chunk deltas (content, reasoning_content/reasoning, tool_calls by index with
/// argument fragments), finish_reason, the usage chunk, [DONE], and {"error": ...} events.
std::unique_ptr<StreamAssembler> MakeOpenAiStream();
/// The output tokens the Anthropic SDK allows `model` without streaming when it caps the model lower
/// than stream_above_max_tokens (8,192 for Opus 4 and 4.1); nullopt for the others.
std::optional<int> AnthropicNonStreamingCap(const std::string& model);
/// Whether an attempt is streamed: kAlways, kNever, or for kAuto max_tokens above the limit (and
/// above the provider's own `non_streaming_cap` for the model, when it has one).
bool ShouldStream(const ProviderOptions& options, const ChatRequest& request,
                  std::optional<int> non_streaming_cap = std::nullopt);

// ---- Errors and headers ----

/// What an error body said.
struct ApiError {
  std::string type;
  std::string code;
  std::string message;
  bool flagged = false;  ///< moderation metadata (OpenRouter: reasons, flagged_input)
};

/// The HTTP status an error carried without one (inside a 2xx body, a stream, a batch result) stands
/// for, by its own type or code: invalid_request_error and context_length_exceeded are 400s (never
/// retried), overloaded_error 529, rate_limit_error 429, a numeric code its status; unknown ones 500.
int StatusOfApiError(const ApiError& api);
/// Classifies a non-2xx status or a transport failure. The message is sanitized with `secrets`.
ErrorInfo ClassifyFailure(const HttpResult& http, const ApiError& api, const Secrets& secrets);
/// The `error` object of an Anthropic or OpenAI-compatible error body (or event).
ApiError ParseApiError(const nlohmann::json& body);
/// Where each HTTP API's base URL must end, said with a 404.
inline constexpr std::string_view kAnthropicBaseUrlRule = "the server's root: /v1/messages is added to it";
inline constexpr std::string_view kOpenAiBaseUrlRule =
    "it must end where /chat/completions is added, usually in /v1, as in http://host:8000/v1";
/// For a 404: what to check, naming the URL, the model and the API's `base_url_rule`.
std::string NotFoundHint(const std::string& url, const std::string& model, std::string_view base_url_rule);
/// retry-after-ms, else retry-after (seconds or an HTTP date), in seconds from `now`.
std::optional<double> ParseRetryAfter(const HeaderMap& headers, std::time_t now);
/// x-should-retry: "true" or "false"; anything else is no opinion.
std::optional<bool> ParseShouldRetry(const HeaderMap& headers);
/// Anthropic (anthropic-ratelimit-*) and OpenAI (x-ratelimit-*) headers.
RateLimitInfo ParseRateLimits(const HeaderMap& headers, std::time_t now);
/// The rate limits, retry-after and x-should-retry of a reply's headers, into `a`.
void ReadReplyHeaders(const HttpResult& http, std::time_t now, Attempt& a);
/// A reply the provider could not read: kMalformedResponse with the reason, secrets masked.
ErrorInfo MalformedReply(const HttpResult& http, const std::string& why, const Secrets& secrets);
/// `obj[key]` when it is a string, else "" (a reply's optional text fields).
std::string StringField(const nlohmann::json& obj, const char* key);
/// "6m0s", "1.5s", "120ms" -> seconds.
std::optional<double> ParseGoDuration(const std::string& text);
/// "2024-05-01T12:00:30Z" (RFC 3339) -> seconds from `now` (may be negative).
std::optional<double> SecondsUntilRfc3339(const std::string& text, std::time_t now);

// ---- Secrets ----

/// The one rule that masks a secret, in messages and data alike: each run of kSecretRunBytes or
/// more of its bytes (the whole of a shorter secret), as given or JSON-escaped, becomes "***". A
/// run rather than the whole key, because servers echo keys cut ("invalid key sk-ant-api03-AbCd...").
/// Linear in the text; terminates for any secret, "*" included.
constexpr size_t kSecretRunBytes = 8;
void MaskSecrets(std::string& text, const Secrets& secrets);
void MaskSecret(std::string& text, const std::string& secret);
/// One line, at most ~300 bytes, safe to show: MaskSecrets with every secret, then anything that
/// looks like a key ("sk-..."), then flattened and cut (at a UTF-8 boundary), so that nothing of a
/// key survives the cut.
std::string SanitizeMessage(std::string text, const Secrets& secrets);
/// What Provider::Redact does to data written to files and logs: MaskSecrets with the secrets of at
/// least kMinRedactedSecret bytes. Shorter values are the placeholders local servers take ("x",
/// "EMPTY"); masking them would mangle the data ("threadIdx.x"), so data keeps them (messages do not).
constexpr size_t kMinRedactedSecret = kSecretRunBytes;
std::string RedactSecrets(std::string text, const Secrets& secrets);
/// The secrets of an HTTP provider: its key; the credential of every extra header that carries one
/// (by name: Authorization, x-api-key, cf-aig-authorization, anything naming a key, token, secret,
/// cookie or password; or by value: "Bearer ...", "Basic ...", "sk-...", a long mixed-case token),
/// without its scheme word; and the credentials of `base_url` (UrlCredentials).
Secrets ProviderSecrets(const std::string& key, const ProviderOptions& options, const std::string& base_url);
/// The user info of a URL ("user:password", the password, and its base64 as basic auth sends it) and the
/// values of query parameters that name a key, token, secret, signature or password (?api_key=...).
Secrets UrlCredentials(std::string_view url);

}  // namespace kforge::llm
