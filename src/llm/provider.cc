// MakeProvider: provider specs to providers; endpoints and keys from options and the environment.
#include "kforge/llm/provider.h"

#include <cstdlib>

#include "llm/providers.h"

namespace kforge::llm {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string Endpoint(const ProviderOptions& o, const char* env_name, const char* fallback) {
  if (!o.base_url.empty()) return o.base_url;
  std::string from_env = Env(env_name);
  return from_env.empty() ? fallback : from_env;
}

}  // namespace

std::string ProviderSpec::Text() const {
  return argument.empty() ? ProviderKindName(kind) : ProviderKindName(kind) + ":" + argument;
}

StatusOr<ProviderSpec> ParseProviderSpec(std::string_view text) {
  const size_t colon = text.find(':');
  std::optional<ProviderKind> kind = kProviderKindNames.Parse(text.substr(0, colon));
  const std::string expected = " (expected anthropic, openai, replay:FILE or exec:CMD)";
  if (!kind) return Status::InvalidArgument("unknown provider '" + std::string(text) + "'" + expected);
  ProviderSpec spec{*kind, colon == std::string_view::npos ? "" : std::string(text.substr(colon + 1))};
  switch (*kind) {
    case ProviderKind::kAnthropic:
    case ProviderKind::kOpenAi:
      if (colon != std::string_view::npos)
        return Status::InvalidArgument("unknown provider '" + std::string(text) + "'" + expected);
      break;
    case ProviderKind::kReplay:
      if (spec.argument.empty()) return Status::InvalidArgument("provider replay: needs a file, as in replay:FILE");
      break;
    case ProviderKind::kExec:
      if (spec.argument.empty()) return Status::InvalidArgument("provider exec: needs a command, as in exec:CMD");
      break;
  }
  return spec;
}

bool SendsJsonBody(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::kAnthropic:
    case ProviderKind::kOpenAi:
      return true;
    case ProviderKind::kReplay:
    case ProviderKind::kExec:
      return false;
  }
  return false;  // not reached: the switch names every kind
}

StatusOr<std::unique_ptr<Provider>> MakeProvider(const ProviderSpec& spec, const ProviderOptions& options) {
  if (options.max_in_flight < 1) return Status::InvalidArgument("max_in_flight must be at least 1");
  const bool named_key = !options.api_key_env.empty();
  if (named_key && options.api_key_env.find_first_of("= \t\n") != std::string::npos)
    return Status::InvalidArgument("api key env '" + options.api_key_env + "' is not a variable name");
  switch (spec.kind) {
    case ProviderKind::kAnthropic: {
      const std::string var = named_key ? options.api_key_env : "ANTHROPIC_API_KEY";
      std::string key = Env(var.c_str());
      if (key.empty()) return Status::InvalidArgument("provider anthropic: set " + var + " in the environment");
      std::string url = Endpoint(options, "ANTHROPIC_BASE_URL", "https://api.anthropic.com");
      if (options.batch_api) return MakeAnthropicBatchProvider(std::move(url), std::move(key), options);
      return MakeAnthropicProvider(std::move(url), std::move(key), options);
    }
    case ProviderKind::kOpenAi: {
      std::string url = Endpoint(options, "OPENAI_BASE_URL", "https://api.openai.com/v1");
      const std::string var = named_key ? options.api_key_env : "OPENAI_API_KEY";
      std::string key = Env(var.c_str());
      // A variable named on purpose must be set; the default one only for api.openai.com.
      if (key.empty() && (named_key || url.find("api.openai.com") != std::string::npos))
        return Status::InvalidArgument("provider openai: set " + var + " in the environment" +
                                       (named_key ? "" : " (or --base-url for a local server)"));
      if (options.batch_api) return MakeOpenAiBatchProvider(std::move(url), std::move(key), options);
      return MakeOpenAiProvider(std::move(url), std::move(key), options);
    }
    case ProviderKind::kReplay:
      if (spec.argument.empty()) return Status::InvalidArgument("provider replay: needs a file, as in replay:FILE");
      return MakeReplayProvider(spec.argument);
    case ProviderKind::kExec:
      if (spec.argument.empty()) return Status::InvalidArgument("provider exec: needs a command, as in exec:CMD");
      return MakeExecProvider(spec.argument, options);
  }
  return Status::Internal("unknown provider kind");  // not reached: the switch names every kind
}

}  // namespace kforge::llm
