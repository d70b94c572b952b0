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

StatusOr<std::unique_ptr<Provider>> MakeProvider(const std::string& spec, const ProviderOptions& options) {
  if (options.max_in_flight < 1) return Status::InvalidArgument("max_in_flight must be at least 1");
  const bool named_key = !options.api_key_env.empty();
  if (named_key && options.api_key_env.find_first_of("= \t\n") != std::string::npos)
    return Status::InvalidArgument("api key env '" + options.api_key_env + "' is not a variable name");
  if (spec == "anthropic") {
    const std::string var = named_key ? options.api_key_env : "ANTHROPIC_API_KEY";
    std::string key = Env(var.c_str());
    if (key.empty()) return Status::InvalidArgument("provider anthropic: set " + var + " in the environment");
    std::string url = Endpoint(options, "ANTHROPIC_BASE_URL", "https://api.anthropic.com");
    if (options.batch_api) return MakeAnthropicBatchProvider(std::move(url), std::move(key), options);
    return MakeAnthropicProvider(std::move(url), std::move(key), options);
  }
  if (spec == "openai") {
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
  if (spec.rfind("replay:", 0) == 0) {
    std::string path = spec.substr(7);
    if (path.empty()) return Status::InvalidArgument("provider replay: needs a file, as in replay:FILE");
    return MakeReplayProvider(path);
  }
  if (spec.rfind("exec:", 0) == 0) {
    std::string command = spec.substr(5);
    if (command.empty()) return Status::InvalidArgument("provider exec: needs a command, as in exec:CMD");
    return MakeExecProvider(std::move(command), options);
  }
  return Status::InvalidArgument("unknown provider '" + spec +
                                 "' (expected anthropic, openai, replay:FILE or exec:CMD)");
}

}  // namespace kforge::llm
