// Chat requests and responses in the canonical chat form (kforge/common/chat.h), shared by every
// provider: what determines a reply, the reply with its usage and cost, and why a request failed.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kforge/common/chat.h"
#include "kforge/common/status.h"

namespace kforge::llm {

// The chat form is common's (kforge/common/chat.h): requests and responses hold it as it is.
using common::ContentBlock;
using common::Message;
using common::ParseRole;
using common::Role;
using common::RoleName;
using common::ToolCall;
using common::ToolSpec;

/// Everything that determines a reply. Two equal requests have equal cache and cassette keys.
struct ChatRequest {
  std::string model;
  std::vector<Message> messages;  ///< system messages are allowed anywhere; providers hoist them
  std::vector<ToolSpec> tools;
  int max_tokens = 4096;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::vector<std::string> stop;
  /// Anthropic: mark the system prompt, the tools and the last message as cache breakpoints.
  bool prompt_cache = true;
  /// Anthropic extended thinking, `thinking: {type: enabled, budget_tokens}`, when > 0 (at least
  /// 1024 and below max_tokens). Other providers ignore it.
  int thinking_budget_tokens = 0;
  /// OpenAI-compatible `reasoning_effort` ("minimal", "low", "medium", "high") when not empty.
  std::string reasoning_effort;
  /// Anthropic adaptive thinking, `thinking: {type: adaptive}` (models from Claude 4.6 on; the
  /// model decides how much to think). Excludes thinking_budget_tokens.
  bool adaptive_thinking = false;
  /// Anthropic `output_config: {effort}` ("low", "medium", "high", "xhigh", "max") when not empty.
  std::string effort;
  /// Anthropic `thinking.display` ("summarized", "omitted") when not empty and thinking is on. Claude
  /// Opus 4.7 returns no thinking text unless it is "summarized".
  std::string thinking_display;
  /// Free-form tag for logs and records (e.g. "task/sample/turn"); not sent, not part of the key.
  std::string tag;
  /// Not sent and not in ToJson (so cassette keys ignore it): added to the response cache key when
  /// not empty, so that samples of one prompt at temperature > 0 are cached apart ("sample 3 turn 2").
  std::string cache_scope;
  /// OpenAI `prompt_cache_key` (sent to api.openai.com only, with prompt_cache): requests with one
  /// key are routed to the same prompt cache, e.g. the samples of one task. Not in ToJson.
  std::string prompt_cache_key;
};

enum class StopReason { kEndTurn, kMaxTokens, kToolUse, kStopSequence, kRefusal, kOther };

/// Token counts of one response. `input_tokens` excludes cache reads and writes on every provider.
struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;  ///< reasoning included
  int64_t cache_read_tokens = 0;
  int64_t cache_write_tokens = 0;
  /// The part of output_tokens spent on reasoning, where the server reports it (OpenAI-compatible
  /// `completion_tokens_details.reasoning_tokens`; the Anthropic API does not report it).
  int64_t reasoning_tokens = 0;
  Usage& operator+=(const Usage& o);
};

/// Why a request produced no reply. Expected failures are data, never exceptions.
enum class ErrorKind {
  kNone,
  kTransport,          ///< connection refused/reset/dropped; retried
  kTimeout,            ///< no full reply within the timeout; retried
  kRateLimited,        ///< 429 (not quota); retried, honouring retry-after
  kOverloaded,         ///< 529 or overloaded_error; retried
  kServer,             ///< 408/409/5xx; retried
  kMalformedResponse,  ///< 2xx with a body that is not the API's shape
  kInvalidRequest,     ///< 400/413/422: this request is wrong; not retried
  kModeration,         ///< the input was flagged by moderation (OpenRouter 403); this request only
  kNotFound,           ///< 404: wrong model or base URL; fatal for the batch
  kAuth,               ///< 401/403 or missing key; fatal for the batch
  kQuota,              ///< insufficient_quota and similar; fatal for the batch
  kBilling,            ///< credit balance / payment required; fatal for the batch
  kReplayMiss,         ///< replay cassette has no entry for this request
  kExecFailed,         ///< exec provider command failed (exit status, timeout)
  kAborted,            ///< not sent because the batch was stopped by a fatal error
};

struct ErrorInfo {
  ErrorKind kind = ErrorKind::kNone;
  int http_status = 0;  ///< 0 when there was no HTTP status
  std::string message;  ///< one line; never contains an API key
  bool ok() const { return kind == ErrorKind::kNone; }
};

/// Retried by Client (with backoff) when true.
bool IsRetryable(ErrorKind kind);
/// A batch must stop: every further request would fail the same way (auth, quota, billing,
/// not found).
bool IsFatal(ErrorKind kind);
const char* ErrorKindName(ErrorKind kind);
const char* StopReasonName(StopReason reason);

struct ChatResponse {
  /// The assistant turn (role kAssistant): text and tool calls.
  Message message;
  StopReason stop_reason = StopReason::kOther;
  std::string raw_stop_reason;  ///< provider's own word ("end_turn", "length", ...)
  std::string model;            ///< model name reported by the server
  std::string id;               ///< provider's response id
  Usage usage;
  double cost_usd = 0;      ///< from the price table; 0 when the model is not priced
  bool cost_known = false;  ///< whether the price table had the model
  ErrorInfo error;
  int attempts = 0;         ///< HTTP/exec attempts made in this run (0 for a cache hit)
  bool from_cache = false;  ///< served from the on-disk response cache (nothing paid this run)
  double latency_s = 0;     ///< from submission to completion, retries and pacing included

  bool ok() const { return error.ok(); }
};

nlohmann::json ToJson(const Usage& usage);
/// Canonical form; keys are sorted, so dump() is stable and suitable for hashing.
nlohmann::json ToJson(const ChatRequest& request);
nlohmann::json ToJson(const ChatResponse& response);

StatusOr<ChatRequest> ChatRequestFromJson(const nlohmann::json& j);
StatusOr<ChatResponse> ChatResponseFromJson(const nlohmann::json& j);

std::optional<StopReason> ParseStopReason(std::string_view name);

/// SHA-256 of the canonical request JSON (tag excluded). Used as the cassette key.
std::string RequestKey(const ChatRequest& request);

}  // namespace kforge::llm
