// Provider: one attempt at one chat request against one backend (Anthropic, OpenAI-compatible,
// replay cassette, external command). Retries, pacing, caching and accounting live in Client.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "kforge/common/status.h"
#include "kforge/llm/chat.h"

namespace kforge::llm {

/// What a server said about its rate limits (anthropic-ratelimit-*, x-ratelimit-*). Resets are
/// seconds from the moment the response arrived.
struct RateLimitInfo {
  std::optional<double> requests_limit, requests_remaining, requests_reset_s;
  std::optional<double> tokens_limit, tokens_remaining, tokens_reset_s;
};

/// The outcome of one attempt. `response.error` is set on failure.
struct Attempt {
  ChatResponse response;
  std::optional<double> retry_after_s;  ///< from retry-after / retry-after-ms
  RateLimitInfo limits;
};

struct ProviderOptions {
  /// Endpoint; empty means ANTHROPIC_BASE_URL / OPENAI_BASE_URL, then the public API.
  std::string base_url;
  /// Whole-request timeout per attempt, seconds.
  double timeout_s = 600;
  /// TCP connect timeout, seconds.
  double connect_timeout_s = 20;
  /// Upper bound on concurrent attempts (HTTP connections, exec processes).
  int max_in_flight = 16;
  /// Anthropic `anthropic-version` header.
  std::string anthropic_version = "2023-06-01";
  /// OpenAI: JSON field for the output cap ("max_tokens" for vLLM/SGLang/Ollama/llama.cpp,
  /// "max_completion_tokens" for OpenAI reasoning models).
  std::string openai_max_tokens_field = "max_tokens";
};

/// Done callbacks run on a provider thread; they must be quick and must not call Send.
using AttemptCallback = std::function<void(Attempt)>;

class Provider {
 public:
  virtual ~Provider() = default;
  /// "anthropic", "openai", "replay", "exec".
  virtual std::string Name() const = 0;
  /// Provider name plus endpoint (base URL, cassette path, command): part of the cache key.
  virtual std::string Identity() const = 0;
  /// Starts one attempt; `done` is called exactly once, possibly before Send returns. Thread-safe.
  /// Destroying a provider ends attempts in progress (HTTP ones fail with kTransport, exec ones
  /// run to completion); each `done` still runs exactly once. Client destroys it only when idle.
  virtual void Send(const ChatRequest& request, AttemptCallback done) = 0;
};

/// spec: "anthropic", "openai", "replay:FILE" or "exec:CMD". Keys come only from the environment
/// (ANTHROPIC_API_KEY, OPENAI_API_KEY); a missing required key is an InvalidArgument status.
StatusOr<std::unique_ptr<Provider>> MakeProvider(const std::string& spec, const ProviderOptions& options);

}  // namespace kforge::llm
