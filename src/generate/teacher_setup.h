// The teacher side of a run's setup: options checked against what the provider sends, the sampling
// parameters as they go on the wire (for the startup line and the records), and a one-token probe
// of the model before the batch starts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/generate/generate.h"
#include "kforge/llm/provider.h"

namespace kforge::generate {

/// Refuses, in one line naming the flag, what the chosen provider would reject on every request or
/// would not send (a thinking budget not below --max-tokens, --thinking-budget with openai, ...).
Status CheckTeacherOptions(const GenerateOptions& o);

/// The sampling parameters as `body` (a wire body; nullopt for replay and exec) carries them; null
/// or 0 where the provider drops one. `dropped` names what was asked for and is not sent.
nlohmann::json SentParams(const GenerateOptions& o, const std::optional<nlohmann::json>& body,
                          std::vector<std::string>& dropped);

/// "max_tokens 8192, temperature 0.7; not sent ...: ..." for the startup line.
std::string DescribeSent(const nlohmann::json& params, const std::vector<std::string>& dropped);

/// One request of one output token before anything starts: a model or endpoint that does not
/// exist, a key that is refused or a parameter the model rejects stops the run here, in one line.
/// Transient failures only warn (the batch retries them).
Status ProbeModel(llm::Provider& provider, const std::string& model);

}  // namespace kforge::generate
