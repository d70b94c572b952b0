// Provider: one attempt at one chat request against one backend (Anthropic, OpenAI-compatible,
// replay cassette, external command). Retries, pacing, caching and accounting live in Client.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kforge/common/names.h"
#include "kforge/common/status.h"
#include "kforge/llm/chat.h"

namespace kforge::llm {

/// The backends that serve a teacher or students. A new one is a row here and its Provider; the
/// build then names every switch that must say how it is handled (MakeProvider, SendsJsonBody...).
enum class ProviderKind {
  kAnthropic,  ///< Anthropic Messages API
  kOpenAi,     ///< OpenAI-compatible chat completions (OpenAI, vLLM, SGLang, Ollama, ...)
  kReplay,     ///< a recorded cassette: replay:FILE
  kExec,       ///< an external command: exec:CMD
};
inline constexpr common::NameTable<ProviderKind, 4> kProviderKindNames = {{{ProviderKind::kAnthropic, "anthropic"},
                                                                          {ProviderKind::kOpenAi, "openai"},
                                                                          {ProviderKind::kReplay, "replay"},
                                                                          {ProviderKind::kExec, "exec"}}};
static_assert(kProviderKindNames.MatchesEnum());

/// "anthropic", "openai", "replay", "exec": the spelling flags and records use.
inline std::string ProviderKindName(ProviderKind kind) { return std::string(kProviderKindNames.Name(kind)); }

/// A provider as a flag names it (--teacher): "anthropic", "openai", "replay:FILE" or "exec:CMD".
struct ProviderSpec {
  ProviderKind kind = ProviderKind::kAnthropic;
  /// replay's cassette, exec's command line; empty for the HTTP providers.
  std::string argument;

  /// The spec as written: "openai", "replay:FILE".
  std::string Text() const;
};

/// Parses a spec; the error says what was expected ("unknown provider 'x' (expected ...)").
StatusOr<ProviderSpec> ParseProviderSpec(std::string_view text);

/// True for the providers that send a JSON body over HTTP to a model the user names (anthropic,
/// openai): they take --model, --header, --extra-body and --batch-api.
bool SendsJsonBody(ProviderKind kind);

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
  /// The server's `x-should-retry: true|false`; when set it decides over the error kind.
  std::optional<bool> should_retry;
  RateLimitInfo limits;
  /// The server billed this attempt, or may have, without saying how much (a reply without usage, a
  /// stream cut before its usage, a timeout): its cost is not known, and the request's worst case
  /// counts against the spending cap.
  bool usage_missing = false;
};

/// When an HTTP provider streams a reply (server-sent events).
enum class StreamMode {
  kAuto,    ///< when max_tokens > stream_above_max_tokens (or a model's own non-streaming cap)
  kAlways,  ///< every request
  kNever,   ///< no request
};
inline constexpr common::NameTable<StreamMode, 3> kStreamModeNames = {
    {{StreamMode::kAuto, "auto"}, {StreamMode::kAlways, "always"}, {StreamMode::kNever, "never"}}};
static_assert(kStreamModeNames.MatchesEnum());

/// Which assistant turns carry their reasoning back to an OpenAI-compatible server.
enum class ReasoningEcho {
  kAuto,       ///< kToolCalls for DeepSeek (api.deepseek.com), else kNone
  kNone,       ///< never (OpenAI, most servers)
  kToolCalls,  ///< turns that call tools (DeepSeek thinking mode rejects a tool loop without)
  kAll,        ///< every assistant turn that has reasoning
};
inline constexpr common::NameTable<ReasoningEcho, 4> kReasoningEchoNames = {
    {{ReasoningEcho::kAuto, "auto"},
     {ReasoningEcho::kNone, "none"},
     {ReasoningEcho::kToolCalls, "tool-calls"},
     {ReasoningEcho::kAll, "all"}}};
static_assert(kReasoningEchoNames.MatchesEnum());

struct ProviderOptions {
  /// Endpoint; empty means ANTHROPIC_BASE_URL / OPENAI_BASE_URL, then the public API.
  std::string base_url;
  /// Environment variable that holds the API key (--api-key-env); empty means ANTHROPIC_API_KEY
  /// or OPENAI_API_KEY. A variable named here must be set.
  std::string api_key_env;
  /// Whole-request timeout of an attempt that is not streamed, seconds.
  double timeout_s = 600;
  /// A streamed attempt ends (kTimeout) when no byte arrived for this long, seconds.
  double idle_timeout_s = 300;
  /// Whole-attempt timeout of a streamed attempt, seconds: far above any real generation, so that a
  /// long one that keeps sending finishes, while endless pings or text end.
  double stream_timeout_s = 3600;
  /// Reply bytes (streamed or not) read at most; a larger reply fails the attempt (kNetwork).
  size_t max_reply_bytes = size_t{64} << 20;
  /// TCP connect timeout, seconds.
  double connect_timeout_s = 20;
  StreamMode stream = StreamMode::kAuto;
  /// kAuto streams above this max_tokens: the Anthropic SDK's limit (an hour per 128k tokens must
  /// stay under 10 minutes, so 21,333).
  int stream_above_max_tokens = 21333;
  /// Upper bound on concurrent attempts (HTTP connections, exec processes).
  int max_in_flight = 16;
  /// Anthropic `anthropic-version` header.
  std::string anthropic_version = "2023-06-01";
  /// OpenAI: JSON field for the output cap. Empty = by model: "max_completion_tokens" for OpenAI
  /// reasoning models (gpt-5*, o1*, o3*, o4*, also behind a "vendor/" prefix), "max_tokens" for
  /// the rest (vLLM, SGLang, Ollama, llama.cpp).
  std::string openai_max_tokens_field;
  /// OpenAI: whether the model takes only reasoning-model parameters (no `stop`, no temperature or
  /// top_p other than 1, max_completion_tokens). Unset = by model name, as above.
  std::optional<bool> openai_reasoning_model;
  /// OpenAI-compatible: which assistant turns carry `openai_reasoning_field` back.
  ReasoningEcho openai_reasoning_echo = ReasoningEcho::kAuto;
  /// OpenAI-compatible: the message field reasoning is sent back in ("reasoning_content" for
  /// DeepSeek, vLLM and SGLang; "reasoning" for OpenRouter).
  std::string openai_reasoning_field = "reasoning_content";
  /// HTTP providers: headers added to every request (--header K:V), after kforge's own; a header
  /// named here replaces kforge's of the same name (e.g. anthropic-beta, anthropic-version).
  std::vector<std::pair<std::string, std::string>> extra_headers;
  /// HTTP providers: a JSON object merged into every request body (--extra-body), its fields
  /// replacing kforge's (RFC 7396 merge: a null removes a field).
  nlohmann::json extra_body = nlohmann::json::object();
  /// Send requests through the provider's batch API (half price, results within hours): Anthropic's
  /// Message Batches, OpenAI's Batch API (a JSON-lines file uploaded to /files, then /batches);
  /// requests that arrive within batch_window_s of each other go out as one batch, polled every
  /// batch_poll_s. batch_state_path (when set) lists the batches created, so that a rerun after a
  /// crash collects their results instead of paying twice.
  bool batch_api = false;
  double batch_window_s = 2;
  double batch_poll_s = 30;
  std::string batch_state_path;
};

/// Done callbacks run on a provider thread; they must be quick and must not call Send.
using AttemptCallback = std::function<void(Attempt)>;

class Provider {
 public:
  virtual ~Provider() = default;
  virtual ProviderKind Kind() const = 0;
  /// kProviderKindNames' spelling of Kind().
  std::string Name() const { return ProviderKindName(Kind()); }
  /// Provider name plus endpoint (base URL, cassette path, command): part of the cache key.
  virtual std::string Identity() const = 0;
  /// Starts one attempt; `done` is called exactly once, possibly before Send returns. Thread-safe.
  /// Destroying a provider ends attempts in progress (HTTP ones fail with kTransport, exec ones
  /// run to completion); each `done` still runs exactly once. Client destroys it only when idle.
  /// Error messages in the attempt never contain the provider's key.
  virtual void Send(const ChatRequest& request, AttemptCallback done) = 0;
  /// `text` with every secret this provider holds (its API key, the credentials of its extra headers
  /// and base URL; those of at least 8 bytes: shorter ones are placeholders such as "x" that masking
  /// would mangle data with) masked by the rule of error messages (llm/wire.h, MaskSecrets). Client
  /// passes what it writes (cassettes, cache files, logs, records) through it.
  virtual std::string Redact(std::string text) const { return text; }
  /// The JSON body an HTTP provider would send for `request` (not streamed), extra body fields
  /// merged; nullopt for providers that send no JSON body (replay, exec). For dry runs and for
  /// recording what was sent.
  virtual std::optional<nlohmann::json> WireBody(const ChatRequest&) const { return std::nullopt; }
  /// What the provider charges as a fraction of the price table (0.5 for batch APIs).
  virtual double PriceFactor() const { return 1; }
};

/// `url` without its credentials, as a run may store it: no "user:password@", and the value of a
/// query parameter that names a key, token or secret (?api_key=) replaced by "***".
std::string UrlWithoutCredentials(std::string_view url);

/// Keys come only from the environment (options.api_key_env, else ANTHROPIC_API_KEY,
/// OPENAI_API_KEY); a missing required key is an InvalidArgument status that names the variable.
StatusOr<std::unique_ptr<Provider>> MakeProvider(const ProviderSpec& spec, const ProviderOptions& options);

}  // namespace kforge::llm
