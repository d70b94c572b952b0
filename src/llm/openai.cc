// OpenAI-compatible chat completions (OpenAI, vLLM, SGLang, Ollama, llama.cpp): request body,
// reply parsing, and the provider.
#include <cstdint>
#include <string>

#include "llm/http_transport.h"
#include "llm/providers.h"
#include "llm/wire.h"

namespace kforge::llm {

using nlohmann::json;

namespace {

constexpr auto kReplace = json::error_handler_t::replace;

StopReason MapStop(const std::string& s) {
  if (s == "stop") return StopReason::kEndTurn;
  if (s == "length") return StopReason::kMaxTokens;
  if (s == "tool_calls" || s == "function_call") return StopReason::kToolUse;
  if (s == "content_filter") return StopReason::kRefusal;
  return StopReason::kOther;
}

int64_t Count(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number_integer()) return 0;
  return obj[key].get<int64_t>();
}

std::string Text(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : "";
}

ErrorInfo Malformed(const HttpResult& http, const std::string& why) {
  return ErrorInfo{ErrorKind::kMalformedResponse, http.status, SanitizeMessage("malformed reply: " + why)};
}

}  // namespace

json OpenAiRequestBody(const ChatRequest& r, const std::string& max_tokens_field) {
  json messages = json::array();
  for (const Message& m : r.messages) {
    json j = {{"role", RoleName(m.role)}, {"content", m.content}};
    if (!m.tool_calls.empty()) {
      json calls = json::array();
      for (const ToolCall& c : m.tool_calls) {
        std::string args = c.arguments.is_string() ? c.arguments.get<std::string>()
                                                   : c.arguments.dump(-1, ' ', false, kReplace);
        calls.push_back(
            {{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", args}}}});
      }
      j["tool_calls"] = std::move(calls);
      if (m.content.empty()) j["content"] = nullptr;
    }
    if (m.role == Role::kTool) j["tool_call_id"] = m.tool_call_id;
    messages.push_back(std::move(j));
  }
  json body = {{"model", r.model}, {"messages", std::move(messages)}, {max_tokens_field, r.max_tokens}};
  if (!r.tools.empty()) {
    json tools = json::array();
    for (const ToolSpec& t : r.tools) tools.push_back(ToJson(t));
    body["tools"] = std::move(tools);
  }
  if (r.temperature) body["temperature"] = *r.temperature;
  if (r.top_p) body["top_p"] = *r.top_p;
  if (!r.stop.empty()) body["stop"] = r.stop;
  return body;
}

Attempt OpenAiAttempt(const HttpResult& http, std::time_t now) {
  Attempt a;
  a.limits = ParseRateLimits(http.headers, now);
  a.retry_after_s = ParseRetryAfter(http.headers, now);
  json body = json::parse(http.body, nullptr, /*allow_exceptions=*/false);
  const bool is_error_body = body.is_object() && body.contains("error") && !body["error"].is_null();
  if (!http.transport_error.empty() || http.status < 200 || http.status >= 300 || is_error_body) {
    std::string type, code, message;
    if (is_error_body && body["error"].is_object()) {
      const json& e = body["error"];
      type = Text(e, "type");
      code = e.contains("code") && e["code"].is_number() ? std::to_string(e["code"].get<int64_t>())
                                                         : Text(e, "code");
      message = Text(e, "message");
    } else if (is_error_body && body["error"].is_string()) {  // Ollama, llama.cpp
      message = body["error"].get<std::string>();
    }
    HttpResult h = http;
    if (h.status >= 200 && h.status < 300) h.status = 500;
    a.response.error = ClassifyFailure(h, type, code, message);
    return a;
  }
  if (!body.is_object() || !body.contains("choices") || !body["choices"].is_array() ||
      body["choices"].empty() || !body["choices"][0].is_object() || !body["choices"][0].contains("message") ||
      !body["choices"][0]["message"].is_object()) {
    a.response.error = Malformed(http, body.is_discarded() ? "body is not JSON" : "no choices[0].message");
    return a;
  }
  const json& choice = body["choices"][0];
  const json& msg = choice["message"];
  ChatResponse& r = a.response;
  r.message.role = Role::kAssistant;
  r.message.content = Text(msg, "content");
  if (msg.contains("tool_calls") && msg["tool_calls"].is_array()) {
    for (const json& c : msg["tool_calls"]) {
      const json fn = c.is_object() && c.contains("function") ? c["function"] : json();
      if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) {
        r.error = Malformed(http, "tool call without function.name");
        return a;
      }
      ToolCall call{Text(c, "id"), fn["name"].get<std::string>(), json::object()};
      if (fn.contains("arguments")) {
        const json& args = fn["arguments"];
        if (args.is_string()) {
          json parsed = json::parse(args.get<std::string>(), nullptr, false);
          call.arguments = parsed.is_discarded() ? args : parsed;
        } else {
          call.arguments = args;
        }
      }
      r.message.tool_calls.push_back(std::move(call));
    }
  }
  r.raw_stop_reason = Text(choice, "finish_reason");
  r.stop_reason = MapStop(r.raw_stop_reason);
  r.model = Text(body, "model");
  r.id = Text(body, "id");
  const json usage = body.contains("usage") ? body["usage"] : json::object();
  const json details =
      usage.is_object() && usage.contains("prompt_tokens_details") ? usage["prompt_tokens_details"] : json();
  r.usage.cache_read_tokens = Count(details, "cached_tokens");
  r.usage.input_tokens = std::max<int64_t>(0, Count(usage, "prompt_tokens") - r.usage.cache_read_tokens);
  r.usage.output_tokens = Count(usage, "completion_tokens");
  return a;
}

namespace {

class OpenAiProvider : public Provider {
 public:
  OpenAiProvider(std::string base_url, std::string key, const ProviderOptions& o)
      : base_url_(std::move(base_url)), key_(std::move(key)), options_(o), transport_(o.max_in_flight) {
    while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  }
  std::string Name() const override { return "openai"; }
  std::string Identity() const override { return "openai " + base_url_; }

  void Send(const ChatRequest& request, AttemptCallback done) override {
    HttpRequest http;
    http.url = base_url_ + "/chat/completions";
    http.headers = {{"content-type", "application/json"}};
    if (!key_.empty()) http.headers.emplace_back("authorization", "Bearer " + key_);
    http.body = OpenAiRequestBody(request, options_.openai_max_tokens_field).dump(-1, ' ', false, kReplace);
    http.timeout_s = options_.timeout_s;
    http.connect_timeout_s = options_.connect_timeout_s;
    transport_.Send(std::move(http), [key = key_, done = std::move(done)](HttpResult result) {
      Attempt a = OpenAiAttempt(result, std::time(nullptr));
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

std::unique_ptr<Provider> MakeOpenAiProvider(std::string base_url, std::string api_key,
                                             const ProviderOptions& o) {
  return std::make_unique<OpenAiProvider>(std::move(base_url), std::move(api_key), o);
}

}  // namespace kforge::llm
