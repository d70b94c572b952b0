// The Anthropic Messages API: request body, reply parsing, and the provider.
#include <cstdint>
#include <string>

#include "llm/http_transport.h"
#include "llm/providers.h"
#include "llm/wire.h"

namespace kforge::llm {

using nlohmann::json;

namespace {

const json kEphemeral = {{"type", "ephemeral"}};

json ToolUseInput(const json& arguments) { return arguments.is_object() ? arguments : json::object(); }

std::string AnthropicRole(Role role) { return role == Role::kAssistant ? "assistant" : "user"; }

json Blocks(const Message& m) {
  json blocks = json::array();
  if (m.role == Role::kTool) {
    json b = {{"type", "tool_result"}, {"tool_use_id", m.tool_call_id}, {"content", m.content}};
    if (m.is_error) b["is_error"] = true;
    blocks.push_back(std::move(b));
    return blocks;
  }
  if (!m.content.empty()) blocks.push_back({{"type", "text"}, {"text", m.content}});
  for (const ToolCall& c : m.tool_calls)
    blocks.push_back(
        {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", ToolUseInput(c.arguments)}});
  return blocks;
}

StopReason MapStop(const std::string& s) {
  if (s == "end_turn") return StopReason::kEndTurn;
  if (s == "max_tokens" || s == "model_context_window_exceeded") return StopReason::kMaxTokens;
  if (s == "tool_use") return StopReason::kToolUse;
  if (s == "stop_sequence") return StopReason::kStopSequence;
  if (s == "refusal") return StopReason::kRefusal;
  return StopReason::kOther;
}

int64_t Count(const json& usage, const char* key) {
  if (!usage.is_object() || !usage.contains(key) || !usage[key].is_number_integer()) return 0;
  return usage[key].get<int64_t>();
}

ErrorInfo Malformed(const HttpResult& http, const std::string& why) {
  return ErrorInfo{ErrorKind::kMalformedResponse, http.status, SanitizeMessage("malformed reply: " + why)};
}

}  // namespace

json AnthropicRequestBody(const ChatRequest& r) {
  json body = {{"model", r.model}, {"max_tokens", r.max_tokens}};
  std::string system;
  json messages = json::array();
  for (const Message& m : r.messages) {
    if (m.role == Role::kSystem) {
      if (!system.empty()) system += "\n\n";
      system += m.content;
      continue;
    }
    json blocks = Blocks(m);
    if (blocks.empty()) continue;
    const std::string role = AnthropicRole(m.role);
    if (!messages.empty() && messages.back()["role"] == role) {  // tool results + user text share a turn
      for (json& b : blocks) messages.back()["content"].push_back(std::move(b));
    } else {
      messages.push_back({{"role", role}, {"content", std::move(blocks)}});
    }
  }
  if (!system.empty()) {
    json block = {{"type", "text"}, {"text", system}};
    if (r.prompt_cache) block["cache_control"] = kEphemeral;
    body["system"] = json::array({std::move(block)});
  }
  if (r.prompt_cache && !messages.empty()) messages.back()["content"].back()["cache_control"] = kEphemeral;
  body["messages"] = std::move(messages);
  if (!r.tools.empty()) {
    json tools = json::array();
    for (const ToolSpec& t : r.tools)
      tools.push_back({{"name", t.name}, {"description", t.description}, {"input_schema", t.parameters}});
    if (r.prompt_cache) tools.back()["cache_control"] = kEphemeral;
    body["tools"] = std::move(tools);
  }
  if (r.temperature) body["temperature"] = *r.temperature;
  if (r.top_p) body["top_p"] = *r.top_p;
  if (!r.stop.empty()) body["stop_sequences"] = r.stop;
  return body;
}

Attempt AnthropicAttempt(const HttpResult& http, std::time_t now) {
  Attempt a;
  a.limits = ParseRateLimits(http.headers, now);
  a.retry_after_s = ParseRetryAfter(http.headers, now);
  json body = json::parse(http.body, nullptr, /*allow_exceptions=*/false);
  const bool is_error_body = body.is_object() && body.value("type", "") == "error";
  if (!http.transport_error.empty() || http.status < 200 || http.status >= 300 || is_error_body) {
    std::string type, message;
    if (body.is_object() && body.contains("error") && body["error"].is_object()) {
      type = body["error"].value("type", "");
      message = body["error"].value("message", "");
    }
    HttpResult h = http;
    if (h.status >= 200 && h.status < 300) h.status = type == "overloaded_error" ? 529 : 500;
    a.response.error = ClassifyFailure(h, type, "", message);
    return a;
  }
  if (!body.is_object() || !body.contains("content") || !body["content"].is_array()) {
    a.response.error = Malformed(http, body.is_discarded() ? "body is not JSON" : "no content list");
    return a;
  }
  ChatResponse& r = a.response;
  r.message.role = Role::kAssistant;
  for (const json& b : body["content"]) {
    if (!b.is_object()) continue;
    const std::string type = b.value("type", "");
    if (type == "text" && b.contains("text") && b["text"].is_string()) {
      r.message.content += b["text"].get<std::string>();
    } else if (type == "tool_use") {
      if (!b.contains("name") || !b["name"].is_string()) {
        r.error = Malformed(http, "tool_use block without a name");
        return a;
      }
      r.message.tool_calls.push_back(ToolCall{b.value("id", ""), b["name"].get<std::string>(),
                                              b.contains("input") ? b["input"] : json::object()});
    }
  }
  r.raw_stop_reason = body.contains("stop_reason") && body["stop_reason"].is_string()
                          ? body["stop_reason"].get<std::string>()
                          : "";
  r.stop_reason = MapStop(r.raw_stop_reason);
  r.model = body.contains("model") && body["model"].is_string() ? body["model"].get<std::string>() : "";
  r.id = body.contains("id") && body["id"].is_string() ? body["id"].get<std::string>() : "";
  const json usage = body.contains("usage") ? body["usage"] : json::object();
  r.usage.input_tokens = Count(usage, "input_tokens");
  r.usage.output_tokens = Count(usage, "output_tokens");
  r.usage.cache_read_tokens = Count(usage, "cache_read_input_tokens");
  r.usage.cache_write_tokens = Count(usage, "cache_creation_input_tokens");
  return a;
}

namespace {

class AnthropicProvider : public Provider {
 public:
  AnthropicProvider(std::string base_url, std::string key, const ProviderOptions& o)
      : base_url_(std::move(base_url)), key_(std::move(key)), options_(o), transport_(o.max_in_flight) {
    while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  }
  std::string Name() const override { return "anthropic"; }
  std::string Identity() const override { return "anthropic " + base_url_; }

  void Send(const ChatRequest& request, AttemptCallback done) override {
    HttpRequest http;
    http.url = base_url_ + "/v1/messages";
    http.headers = {{"content-type", "application/json"},
                    {"x-api-key", key_},
                    {"anthropic-version", options_.anthropic_version}};
    http.body = AnthropicRequestBody(request).dump(-1, ' ', false, json::error_handler_t::replace);
    http.timeout_s = options_.timeout_s;
    http.connect_timeout_s = options_.connect_timeout_s;
    transport_.Send(std::move(http), [key = key_, done = std::move(done)](HttpResult result) {
      Attempt a = AnthropicAttempt(result, std::time(nullptr));
      MaskSecret(a.response.error.message, key);
      done(std::move(a));
    });
  }

 private:
  std::string base_url_;
  std::string key_;
  ProviderOptions options_;
  HttpTransport transport_;
};

}  // namespace

std::unique_ptr<Provider> MakeAnthropicProvider(std::string base_url, std::string api_key,
                                                const ProviderOptions& o) {
  return std::make_unique<AnthropicProvider>(std::move(base_url), std::move(api_key), o);
}

}  // namespace kforge::llm
