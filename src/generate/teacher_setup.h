// The teacher side of a run's setup: options checked against what the provider sends, the sampling
// parameters as they go on the wire (for the startup line and the records), and a one-token probe
// of the model before the batch starts.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/generate/generate.h"
#include "kforge/llm/provider.h"

namespace kforge::generate {

/// The teacher of a run before its client exists: the provider, the tools it is offered and the
/// sampling parameters as they go on the wire.
struct Teacher {
  std::unique_ptr<llm::Provider> provider;
  std::vector<common::ToolSpec> tools;  ///< tools protocol: run and submit (and read_skill_file with skills)
  nlohmann::json sent_params;        ///< SentParams, recorded in every trajectory
  bool http = false;                 ///< a provider that sends JSON bodies
  std::string startup_line;          ///< "generate: sending MODEL ...", said once the run may start
};

/// Makes the provider of `options` and checks what needs it: --model for an HTTP teacher, a price
/// for the model under --max-cost. InvalidArgument naming the flag.
StatusOr<Teacher> MakeTeacher(const GenerateOptions& options);

/// Refuses, in one line naming the flag, what the chosen provider would reject on every request or
/// would not send (a thinking budget not below --max-tokens, --thinking-budget with openai, ...).
Status CheckTeacherOptions(const GenerateOptions& o);

/// Claude Opus 4.7 (and its dated or vendor-prefixed ids): it returns no thinking text unless
/// thinking.display is "summarized", and it alone takes --effort xhigh.
bool OmitsThinkingByDefault(const std::string& model);

/// The fewest prompt tokens a cache entry of `model` holds: Anthropic 4,096 for Claude Opus 4.5 to
/// 4.7 and Haiku 4.5, 2,048 for Sonnet 4.6 and the Haiku 3 models, else 1,024; OpenAI 1,024.
int64_t CacheMinimumTokens(llm::ProviderKind kind, const std::string& model);

/// An upper estimate of the tokens of `request`'s cacheable prefix (system prompt, tools, messages):
/// 3 bytes a token, so that a prefix near the minimum still counts as cacheable.
int64_t PrefixTokens(const llm::ChatRequest& request);

/// The sampling parameters as `body` (a wire body; nullopt for replay and exec) carries them; null
/// or 0 where the provider drops one. `dropped` names what was asked for and is not sent.
nlohmann::json SentParams(const GenerateOptions& o, const std::optional<nlohmann::json>& body,
                          std::vector<std::string>& dropped);

/// "max_tokens 8192, temperature 0.7; not sent ...: ..." for the startup line.
std::string DescribeSent(const nlohmann::json& params, const std::vector<std::string>& dropped);

/// The request the probe sends: the run's own parameters (model, temperature, thinking, effort;
/// the provider adds --extra-body and --header) with a short prompt and a small max_tokens that the
/// API still accepts: 16, or 16 above a thinking budget (--extra-body's included; 1024 for adaptive
/// thinking).
llm::ChatRequest ProbeRequest(const GenerateOptions& o);

/// One small request before anything starts: a model or endpoint that does not exist, a key that is
/// refused or a parameter the model rejects stops the run here, in one line. Transient failures only
/// warn (the batch retries them). What the probe was billed, priced with `prices`: `usage`, `cost_usd`.
Status ProbeModel(llm::Provider& provider, const GenerateOptions& o, llm::Usage& usage, double& cost_usd);

}  // namespace kforge::generate
