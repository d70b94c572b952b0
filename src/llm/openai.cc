#include "kforge/common/json_fields.h"
// OpenAI-compatible chat completions (OpenAI, DeepSeek, OpenRouter, vLLM, SGLang, Ollama,
// llama.cpp): the dialect per server and model, request body, reply parsing (whole and streamed),
// and the provider.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "llm/exchange.h"
#include "llm/http_transport.h"
#include "llm/providers.h"
#include "llm/wire.h"

namespace kforge::llm {

using nlohmann::json;

namespace {

StopReason OpenAiStopReason(const std::string& s) {
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

/// reasoning_content (DeepSeek, vLLM, SGLang) or reasoning (OpenRouter, newer vLLM, Ollama).
std::string Reasoning(const json& msg) {
  std::string r = StringField(msg, "reasoning_content");
  return r.empty() ? StringField(msg, "reasoning") : r;
}

json ParseArguments(const json& args) {
  if (!args.is_string()) return args;
  const std::string& text = args.get_ref<const std::string&>();
  if (text.empty()) return json::object();
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? args : parsed;
}

Usage ReadUsage(const json& usage) {
  Usage u;
  const json details =
      usage.is_object() && usage.contains("prompt_tokens_details") ? usage["prompt_tokens_details"] : json();
  u.cache_read_tokens = Count(details, "cached_tokens");
  if (u.cache_read_tokens == 0) u.cache_read_tokens = Count(usage, "prompt_cache_hit_tokens");  // DeepSeek
  u.input_tokens = std::max<int64_t>(0, Count(usage, "prompt_tokens") - u.cache_read_tokens);
  u.output_tokens = Count(usage, "completion_tokens");
  const json out_details = usage.is_object() && usage.contains("completion_tokens_details")
                               ? usage["completion_tokens_details"]
                               : json();
  u.reasoning_tokens = Count(out_details, "reasoning_tokens");
  return u;
}

/// An error inside a 2xx body or a stream, classified by its own type or code (StatusOfApiError).
ErrorInfo EmbeddedError(const HttpResult& http, const ApiError& api, const Secrets& secrets) {
  HttpResult h = http;
  h.transport_error.clear();
  h.status = StatusOfApiError(api);
  return ClassifyFailure(h, api, secrets);
}

class OpenAiStream : public StreamAssembler {
 public:
  Attempt Finish(const HttpResult& http, std::time_t now, const Secrets& secrets) override {
    Attempt a;
    ReadReplyHeaders(http, now, a);
    // Tokens were generated (and billed) once a choice came; only the usage chunk says how many.
    const bool usage_seen = usage_.is_object();
    a.response.usage = ReadUsage(usage_);
    a.usage_missing = generated_ && !usage_seen;
    if (error_) {
      a.response.error = EmbeddedError(http, *error_, secrets);
      a.response.error.message = SanitizeMessage("stream: " + a.response.error.message, secrets);
      return a;
    }
    // Complete: [DONE], or the finish and the usage chunk after it. A finish_reason alone may be cut
    // before the usage chunk and [DONE].
    if (!done_ && (finish_reason_.empty() || !usage_seen)) {
      if (!http.transport_error.empty()) {
        a.response.error = ClassifyFailure(http, {}, secrets);
      } else {
        a.response.error = {ErrorKind::kTransport, http.status,
                            finish_reason_.empty() ? "stream ended before a finish_reason"
                                                   : "stream ended after its finish_reason, before its usage and [DONE]"};
      }
      return a;
    }
    if (!malformed_.empty()) {
      a.response.error = MalformedReply(http, malformed_, secrets);
      return a;
    }
    ChatResponse& r = a.response;
    r.message.role = Role::kAssistant;
    const bool refused = !refusal_.empty();
    r.message.content = content_.empty() ? std::move(refusal_) : std::move(content_);
    r.message.reasoning = std::move(reasoning_);
    for (auto& [index, call] : calls_) {
      if (call.name.empty()) {
        r.error = MalformedReply(http, "streamed tool call without a name", secrets);
        return a;
      }
      r.message.tool_calls.push_back(ToolCall{call.id, call.name, ParseArguments(json(call.arguments))});
    }
    r.raw_stop_reason = finish_reason_;
    r.stop_reason = refused ? StopReason::kRefusal : ToolCallsWin(OpenAiStopReason(finish_reason_), r.message);
    r.model = model_;
    r.id = id_;
    return a;
  }

 protected:
  void OnEvent(const SseEvent& e) override {
    if (e.data == "[DONE]") {
      done_ = true;
      return;
    }
    if (e.data.empty()) return;
    json data = json::parse(e.data, nullptr, false);
    if (!data.is_object()) {
      if (malformed_.empty()) malformed_ = "a stream event is not a JSON object";
      return;
    }
    if (data.contains("error") && !data["error"].is_null()) {
      error_ = ParseApiError(data);
      return;
    }
    if (id_.empty()) id_ = StringField(data, "id");
    if (model_.empty()) model_ = StringField(data, "model");
    if (data.contains("usage") && data["usage"].is_object()) usage_ = data["usage"];
    if (!data.contains("choices") || !data["choices"].is_array() || data["choices"].empty()) return;
    const json& choice = data["choices"][0];
    if (!choice.is_object()) return;
    generated_ = true;
    const std::string finish = StringField(choice, "finish_reason");
    if (!finish.empty()) finish_reason_ = finish;
    if (!choice.contains("delta") || !choice["delta"].is_object()) return;
    const json& d = choice["delta"];
    content_ += StringField(d, "content");
    refusal_ += StringField(d, "refusal");
    reasoning_ += Reasoning(d);
    if (!d.contains("tool_calls") || !d["tool_calls"].is_array()) return;
    for (size_t k = 0; k < d["tool_calls"].size(); ++k) {
      const json& c = d["tool_calls"][k];
      if (!c.is_object()) continue;
      const int64_t index = c.contains("index") && c["index"].is_number_integer() ? c["index"].get<int64_t>()
                                                                                  : static_cast<int64_t>(k);
      if (index < 0 || (calls_.size() >= kMaxCalls && !calls_.count(index))) continue;
      Call& call = calls_[index];
      if (call.id.empty()) call.id = StringField(c, "id");
      const json fn = c.contains("function") ? c["function"] : json();
      if (call.name.empty()) call.name = StringField(fn, "name");
      call.arguments += StringField(fn, "arguments");
    }
  }

 private:
  static constexpr size_t kMaxCalls = 1024;
  struct Call {
    std::string id, name, arguments;
  };
  std::map<int64_t, Call> calls_;  // by index: the order the model wrote them
  std::string id_, model_, content_, refusal_, reasoning_, finish_reason_, malformed_;
  json usage_;
  std::optional<ApiError> error_;
  bool done_ = false;
  bool generated_ = false;  // a choice arrived
};

}  // namespace

bool IsOpenAiReasoningModel(const std::string& model) {
  const size_t slash = model.rfind('/');
  const std::string name = slash == std::string::npos ? model : model.substr(slash + 1);
  if (name.rfind("gpt-5", 0) == 0) return true;
  return name.size() >= 2 && name[0] == 'o' && (name[1] == '1' || name[1] == '3' || name[1] == '4') &&
         (name.size() == 2 || name[2] == '-');
}

OpenAiDialect ResolveOpenAiDialect(const ProviderOptions& o, const std::string& base_url,
                                   const std::string& model) {
  OpenAiDialect d;
  d.reasoning_model = o.openai_reasoning_model.value_or(IsOpenAiReasoningModel(model));
  d.max_tokens_field = !o.openai_max_tokens_field.empty() ? o.openai_max_tokens_field
                       : d.reasoning_model                ? "max_completion_tokens"
                                                          : "max_tokens";
  d.echo = o.openai_reasoning_echo;
  if (d.echo == ReasoningEcho::kAuto)
    d.echo =
        base_url.find("deepseek.com") != std::string::npos ? ReasoningEcho::kToolCalls : ReasoningEcho::kNone;
  if (!o.openai_reasoning_field.empty()) d.reasoning_field = o.openai_reasoning_field;
  d.prompt_cache_key = base_url.find("://api.openai.com") != std::string::npos;
  return d;
}

json OpenAiRequestBody(const ChatRequest& r, const OpenAiDialect& d, bool stream) {
  json messages = json::array();
  for (const Message& m : r.messages) {
    json j = {{"role", RoleName(m.role)}, {"content", m.content}};
    if (!m.tool_calls.empty()) {
      json calls = json::array();
      for (const ToolCall& c : m.tool_calls) {
        std::string args =
            c.arguments.is_string() ? c.arguments.get<std::string>() : common::JsonText(c.arguments);
        calls.push_back(
            {{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", args}}}});
      }
      j["tool_calls"] = std::move(calls);
      if (m.content.empty()) j["content"] = nullptr;
    }
    if (m.role == Role::kAssistant) {
      // DeepSeek's thinking mode needs the field on every turn that called tools, even when empty.
      const bool echo = (d.echo == ReasoningEcho::kToolCalls && !m.tool_calls.empty()) ||
                        (d.echo == ReasoningEcho::kAll && (!m.reasoning.empty() || !m.tool_calls.empty()));
      if (echo) j[d.reasoning_field] = m.reasoning;
    }
    if (m.role == Role::kTool) j["tool_call_id"] = m.tool_call_id;
    messages.push_back(std::move(j));
  }
  json body = {{"model", r.model}, {"messages", std::move(messages)}, {d.max_tokens_field, r.max_tokens}};
  if (!r.tools.empty()) {
    json tools = json::array();
    for (const ToolSpec& t : r.tools) tools.push_back(common::ToolSpecToJson(t));
    body["tools"] = std::move(tools);
  }
  // Reasoning models reject stop and any temperature or top_p but the default 1.
  if (r.temperature && (!d.reasoning_model || *r.temperature == 1)) body["temperature"] = *r.temperature;
  if (r.top_p && (!d.reasoning_model || *r.top_p == 1)) body["top_p"] = *r.top_p;
  if (!r.stop.empty() && !d.reasoning_model) body["stop"] = r.stop;
  if (!r.reasoning_effort.empty()) body["reasoning_effort"] = r.reasoning_effort;
  if (d.prompt_cache_key && r.prompt_cache && !r.prompt_cache_key.empty()) body["prompt_cache_key"] = r.prompt_cache_key;
  if (stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  return body;
}

Attempt OpenAiAttempt(const HttpResult& http, std::time_t now, const Secrets& secrets) {
  Attempt a;
  ReadReplyHeaders(http, now, a);
  json body = json::parse(http.body, nullptr, /*allow_exceptions=*/false);
  const bool is_error_body = body.is_object() && body.contains("error") && !body["error"].is_null();
  if (!http.transport_error.empty() || http.status < 200 || http.status >= 300 || is_error_body) {
    const ApiError api = ParseApiError(body);
    a.response.error = http.transport_error.empty() && http.status >= 200 && http.status < 300
                           ? EmbeddedError(http, api, secrets)
                           : ClassifyFailure(http, api, secrets);
    return a;
  }
  if (!body.is_object() || !body.contains("choices") || !body["choices"].is_array() ||
      body["choices"].empty() || !body["choices"][0].is_object() || !body["choices"][0].contains("message") ||
      !body["choices"][0]["message"].is_object()) {
    a.response.error =
        MalformedReply(http, body.is_discarded() ? "body is not JSON" : "no choices[0].message", secrets);
    return a;
  }
  const json& choice = body["choices"][0];
  const json& msg = choice["message"];
  ChatResponse& r = a.response;
  r.message.role = Role::kAssistant;
  r.message.content = StringField(msg, "content");
  r.message.reasoning = Reasoning(msg);
  const std::string refusal = StringField(msg, "refusal");  // OpenAI's own field: the text of a refusal
  if (r.message.content.empty()) r.message.content = refusal;
  if (msg.contains("tool_calls") && msg["tool_calls"].is_array()) {
    for (const json& c : msg["tool_calls"]) {
      const json fn = c.is_object() && c.contains("function") ? c["function"] : json();
      if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) {
        r.error = MalformedReply(http, "tool call without function.name", secrets);
        return a;
      }
      r.message.tool_calls.push_back(
          ToolCall{StringField(c, "id"), fn["name"].get<std::string>(),
                   fn.contains("arguments") ? ParseArguments(fn["arguments"]) : json::object()});
    }
  }
  r.raw_stop_reason = StringField(choice, "finish_reason");
  r.stop_reason = refusal.empty() ? ToolCallsWin(OpenAiStopReason(r.raw_stop_reason), r.message) : StopReason::kRefusal;
  r.model = StringField(body, "model");
  r.id = StringField(body, "id");
  a.usage_missing = !body.contains("usage") || !body["usage"].is_object();
  r.usage = ReadUsage(a.usage_missing ? json::object() : body["usage"]);
  return a;
}

std::unique_ptr<StreamAssembler> MakeOpenAiStream() { return std::make_unique<OpenAiStream>(); }

namespace {

class OpenAiProvider : public Provider {
 public:
  OpenAiProvider(std::string base_url, std::string key, const ProviderOptions& o)
      : base_url_(std::move(base_url)), key_(std::move(key)), options_(o), transport_(o.max_in_flight) {
    while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
    secrets_ = ProviderSecrets(key_, options_, base_url_);
  }
  ProviderKind Kind() const override { return ProviderKind::kOpenAi; }
  std::string Identity() const override { return "openai " + base_url_; }
  std::string Redact(std::string text) const override { return RedactSecrets(std::move(text), secrets_); }
  std::optional<json> WireBody(const ChatRequest& request) const override {
    json body = OpenAiRequestBody(request, ResolveOpenAiDialect(options_, base_url_, request.model), false);
    body.merge_patch(options_.extra_body);
    return body;
  }

  void Send(const ChatRequest& request, AttemptCallback done) override {
    const Secrets& secrets = secrets_;
    const bool stream = ShouldStream(options_, request);
    HttpRequest http;
    http.url = base_url_ + "/chat/completions";
    http.headers = {{"content-type", "application/json"}};
    if (!key_.empty()) http.headers.emplace_back("authorization", "Bearer " + key_);
    http.headers = WithExtraHeaders(std::move(http.headers), options_.extra_headers);
    const OpenAiDialect dialect = ResolveOpenAiDialect(options_, base_url_, request.model);
    json body = OpenAiRequestBody(request, dialect, stream);
    body.merge_patch(options_.extra_body);
    http.body = common::JsonText(body);
    SendAttempt(transport_, std::move(http), options_,
                stream ? std::shared_ptr<StreamAssembler>(MakeOpenAiStream()) : nullptr, OpenAiAttempt, secrets,
                request.model, kOpenAiBaseUrlRule, std::move(done));
  }

 private:
  std::string base_url_;
  std::string key_;
  ProviderOptions options_;
  Secrets secrets_;
  HttpTransport transport_;
};

}  // namespace

std::unique_ptr<Provider> MakeOpenAiProvider(std::string base_url, std::string api_key,
                                             const ProviderOptions& o) {
  return std::make_unique<OpenAiProvider>(std::move(base_url), std::move(api_key), o);
}

}  // namespace kforge::llm
