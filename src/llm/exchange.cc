// One attempt of an HTTP provider (llm/exchange.h).
#include "llm/exchange.h"

#include <cctype>
#include <string_view>
#include <utility>

namespace kforge::llm {
namespace {

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> WithExtraHeaders(
    std::vector<std::pair<std::string, std::string>> base,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  for (const auto& [name, value] : extra) {
    std::erase_if(base, [&](const auto& h) { return Lower(h.first) == Lower(name); });
    base.emplace_back(name, value);
  }
  return base;
}

void SendAttempt(HttpTransport& transport, HttpRequest http, const ProviderOptions& options,
                 std::shared_ptr<StreamAssembler> assembler, ReplyParser parse, const Secrets& secrets,
                 const std::string& model, std::string_view base_url_rule, AttemptCallback done) {
  http.connect_timeout_s = options.connect_timeout_s;
  http.max_body_bytes = options.max_reply_bytes;
  if (assembler) {
    http.timeout_s = options.stream_timeout_s;
    http.idle_timeout_s = options.idle_timeout_s;
    http.on_stream_data = [assembler](std::string_view bytes) { assembler->Feed(bytes); };
  } else {
    http.timeout_s = options.timeout_s;
  }
  std::string url = http.url;
  transport.Send(std::move(http), [secrets, assembler, parse, base_url_rule = std::string(base_url_rule), url = std::move(url), model,
                                   done = std::move(done)](HttpResult result) {
    const std::time_t now = std::time(nullptr);
    Attempt a = result.streamed ? assembler->Finish(result, now, secrets) : parse(result, now, secrets);
    if (a.response.error.kind == ErrorKind::kNotFound)
      a.response.error.message =
          SanitizeMessage(NotFoundHint(url, model, base_url_rule) + " (" + a.response.error.message + ")", secrets);
    done(std::move(a));
  });
}

}  // namespace kforge::llm
