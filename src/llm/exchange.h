// One attempt of an HTTP provider: the request sent whole or streamed, the reply turned into an
// Attempt, a 404 given its hint. Shared by the Anthropic and OpenAI-compatible providers.
#pragma once

#include <ctime>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kforge/llm/provider.h"
#include "llm/http_transport.h"
#include "llm/wire.h"

namespace kforge::llm {

/// `base` with `extra` added; an extra header replaces a base one of the same name (any case).
std::vector<std::pair<std::string, std::string>> WithExtraHeaders(
    std::vector<std::pair<std::string, std::string>> base,
    const std::vector<std::pair<std::string, std::string>>& extra);

/// Parses a whole (not streamed) reply: AnthropicAttempt or OpenAiAttempt.
using ReplyParser = Attempt (*)(const HttpResult& http, std::time_t now, const Secrets& secrets);

/// Sends `http`: through `assembler` with the idle timeout when one is given (a streamed request),
/// else whole with the total timeout. `done` gets the Attempt; a 404's message names the URL,
/// `model` and `base_url_rule` (NotFoundHint), masked of `secrets`.
void SendAttempt(HttpTransport& transport, HttpRequest http, const ProviderOptions& options,
                 std::shared_ptr<StreamAssembler> assembler, ReplyParser parse, const Secrets& secrets,
                 const std::string& model, std::string_view base_url_rule, AttemptCallback done);

}  // namespace kforge::llm
