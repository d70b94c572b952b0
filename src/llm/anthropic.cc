#include "kforge/common/json_fields.h"
// The Anthropic Messages API: request body, reply parsing (whole and streamed), and the provider.
#include <cstdint>
#include <memory>
#include <string>

#include "llm/exchange.h"
#include "llm/http_transport.h"
#include "llm/providers.h"
#include "llm/wire.h"

namespace kforge::llm {

using nlohmann::json;

namespace {

const json kEphemeral = {{"type", "ephemeral"}};
/// What an empty tool result says: the API rejects empty content (with is_error) and blank text.
constexpr const char* kNoOutput = "(no output)";

bool IsBlank(const std::string& text) { return text.find_first_not_of(" \t\n\r\f\v") == std::string::npos; }

/// A tool_use input must be an object: arguments that were not valid JSON go back as the text the
/// model wrote (under "unparsed_input"), never as an empty object it did not send.
json ToolUseInput(const json& arguments) {
  if (arguments.is_object()) return arguments;
  if (arguments.is_null()) return json::object();
  return json{{"unparsed_input", arguments.is_string() ? arguments.get<std::string>() : arguments.dump()}};
}

std::string AnthropicRole(Role role) { return role == Role::kAssistant ? "assistant" : "user"; }

json TextBlock(const std::string& text) { return json{{"type", "text"}, {"text", text}}; }

json ToolUseBlock(const ToolCall& c) {
  return json{{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", ToolUseInput(c.arguments)}};
}

/// An assistant turn with reasoning blocks: the blocks in their order, thinking ones unchanged.
/// Text and tool uses come from `content` and `tool_calls`, which stay the truth if edited.
json OrderedBlocks(const Message& m) {
  std::string block_text;
  for (const ContentBlock& b : m.blocks)
    if (b.type == ContentBlock::Type::kText) block_text += b.text;
  const bool texts_current = block_text == m.content;
  bool content_sent = false;
  std::vector<bool> call_sent(m.tool_calls.size(), false);
  auto send_content = [&](json& out) {
    if (!content_sent && !IsBlank(m.content)) out.push_back(TextBlock(m.content));
    content_sent = true;
  };
  json out = json::array();
  for (const ContentBlock& b : m.blocks) {
    switch (b.type) {
      case ContentBlock::Type::kThinking:
        out.push_back({{"type", "thinking"}, {"thinking", b.text}, {"signature", b.signature}});
        break;
      case ContentBlock::Type::kRedactedThinking:
        out.push_back({{"type", "redacted_thinking"}, {"data", b.data}});
        break;
      case ContentBlock::Type::kText:
        if (!texts_current) {
          send_content(out);
        } else if (!IsBlank(b.text)) {
          out.push_back(TextBlock(b.text));
          content_sent = true;
        }
        break;
      case ContentBlock::Type::kToolUse:
        send_content(out);
        for (size_t i = 0; i < m.tool_calls.size(); ++i)
          if (!call_sent[i] && m.tool_calls[i].id == b.tool_call_id) {
            out.push_back(ToolUseBlock(m.tool_calls[i]));
            call_sent[i] = true;
            break;
          }
        break;
    }
  }
  send_content(out);
  for (size_t i = 0; i < m.tool_calls.size(); ++i)
    if (!call_sent[i]) out.push_back(ToolUseBlock(m.tool_calls[i]));
  return out;
}

json Blocks(const Message& m) {
  if (m.role == Role::kTool) {
    json b = {{"type", "tool_result"},
              {"tool_use_id", m.tool_call_id},
              {"content", IsBlank(m.content) ? kNoOutput : m.content}};
    if (m.is_error) b["is_error"] = true;
    return json::array({std::move(b)});
  }
  if (m.role == Role::kAssistant && !m.blocks.empty()) return OrderedBlocks(m);
  json blocks = json::array();
  if (!IsBlank(m.content)) blocks.push_back(TextBlock(m.content));
  for (const ToolCall& c : m.tool_calls) blocks.push_back(ToolUseBlock(c));
  return blocks;
}

bool IsReasoningBlock(const json& b) {
  const std::string type = b.value("type", "");
  return type == "thinking" || type == "redacted_thinking";
}

json InputSchema(const json& parameters) {
  if (!parameters.is_object()) return json{{"type", "object"}};
  json schema = parameters;
  if (!schema.contains("type")) schema["type"] = "object";
  return schema;
}

StopReason AnthropicStopReason(const std::string& s) {
  if (s == "end_turn") return StopReason::kEndTurn;
  if (s == "max_tokens" || s == "model_context_window_exceeded") return StopReason::kMaxTokens;
  if (s == "tool_use") return StopReason::kToolUse;
  if (s == "stop_sequence") return StopReason::kStopSequence;
  if (s == "refusal") return StopReason::kRefusal;
  return StopReason::kOther;
}

/// Copies the counts present in `usage` (a streamed message_delta carries only some).
void ReadUsage(const json& usage, Usage& u) {
  auto read = [&](const char* key, int64_t& out) {
    if (usage.is_object() && usage.contains(key) && usage[key].is_number_integer())
      out = usage[key].get<int64_t>();
  };
  read("input_tokens", u.input_tokens);
  read("output_tokens", u.output_tokens);
  read("cache_read_input_tokens", u.cache_read_tokens);
  read("cache_creation_input_tokens", u.cache_write_tokens);
}

/// Appends one reply content block to the assistant turn; false for a tool_use without a name.
bool AppendBlock(const json& b, Message& m) {
  if (!b.is_object()) return true;
  const std::string type = StringField(b, "type");
  ContentBlock block;
  if (type == "text") {
    block.type = ContentBlock::Type::kText;
    block.text = StringField(b, "text");
    m.content += block.text;
  } else if (type == "thinking") {
    block.type = ContentBlock::Type::kThinking;
    block.text = StringField(b, "thinking");
    block.signature = StringField(b, "signature");
    if (!m.reasoning.empty() && !block.text.empty()) m.reasoning += "\n\n";
    m.reasoning += block.text;
  } else if (type == "redacted_thinking") {
    block.type = ContentBlock::Type::kRedactedThinking;
    block.data = StringField(b, "data");
  } else if (type == "tool_use") {
    if (!b.contains("name") || !b["name"].is_string()) return false;
    ToolCall call{StringField(b, "id"), b["name"].get<std::string>(),
                  b.contains("input") ? b["input"] : json::object()};
    block.type = ContentBlock::Type::kToolUse;
    block.tool_call_id = call.id;
    m.tool_calls.push_back(std::move(call));
  } else {
    return true;  // server tools, citations-only blocks and the like: not part of the canonical turn
  }
  m.blocks.push_back(std::move(block));
  return true;
}

/// Keeps `blocks` only when the turn has reasoning blocks to send back.
void SettleBlocks(Message& m) {
  for (const ContentBlock& b : m.blocks)
    if (b.type == ContentBlock::Type::kThinking || b.type == ContentBlock::Type::kRedactedThinking) return;
  m.blocks.clear();
}


class AnthropicStream : public StreamAssembler {
 public:
  Attempt Finish(const HttpResult& http, std::time_t now, const Secrets& secrets) override {
    Attempt a;
    ReadReplyHeaders(http, now, a);
    // A stream that ends early keeps the usage it gave; once message_start came the request was
    // billed, and its output (reported at the end) is not known.
    a.response.usage = usage_;
    if (error_) {
      HttpResult h = http;
      h.transport_error.clear();
      h.status = StatusOfApiError(*error_);
      a.response.error = ClassifyFailure(h, *error_, secrets);
      a.response.error.message = SanitizeMessage("stream: " + a.response.error.message, secrets);
      a.usage_missing = started_;
      return a;
    }
    if (!stopped_) {
      a.usage_missing = started_;
      if (!http.transport_error.empty()) {
        a.response.error = ClassifyFailure(http, {}, secrets);
      } else {
        a.response.error = {
            ErrorKind::kTransport, http.status,
            started_ ? "stream ended before message_stop" : "stream ended before message_start"};
      }
      return a;
    }
    if (!malformed_.empty()) {
      a.response.error = MalformedReply(http, malformed_, secrets);
      return a;
    }
    ChatResponse& r = a.response;
    r.message.role = Role::kAssistant;
    for (size_t i = 0; i < blocks_.size(); ++i) {
      json& b = blocks_[i];
      if (StringField(b, "type") == "tool_use") {
        const std::string& raw = inputs_[i];
        json input = raw.empty() ? json::object() : json::parse(raw, nullptr, false);
        b["input"] = input.is_discarded() ? json(raw) : input;
      }
      if (!AppendBlock(b, r.message)) {
        r.error = MalformedReply(http, "tool_use block without a name", secrets);
        return a;
      }
    }
    SettleBlocks(r.message);
    r.raw_stop_reason = stop_reason_;
    r.stop_reason = ToolCallsWin(AnthropicStopReason(stop_reason_), r.message);
    r.model = model_;
    r.id = id_;
    a.usage_missing = !usage_seen_;
    return a;
  }

 protected:
  void OnEvent(const SseEvent& e) override {
    if (e.event == "ping") return;
    json data = json::parse(e.data, nullptr, false);
    if (!data.is_object()) {
      if (malformed_.empty()) malformed_ = "event '" + e.event + "' has no JSON object";
      return;
    }
    const std::string type = data.contains("type") ? StringField(data, "type") : e.event;
    if (type == "error" || e.event == "error") {
      error_ = ParseApiError(data);
    } else if (type == "message_start" && data.contains("message") && data["message"].is_object()) {
      const json& m = data["message"];
      started_ = true;
      id_ = StringField(m, "id");
      model_ = StringField(m, "model");
      if (m.contains("usage") && m["usage"].is_object()) {
        ReadUsage(m["usage"], usage_);
        usage_seen_ = true;
      }
    } else if (type == "content_block_start") {
      const size_t i = Index(data);
      if (i < kMaxBlocks && data.contains("content_block") && data["content_block"].is_object())
        Block(i) = data["content_block"];
    } else if (type == "content_block_delta" && data.contains("delta") && data["delta"].is_object()) {
      const size_t i = Index(data);
      if (i >= kMaxBlocks) return;
      const json& d = data["delta"];
      json& b = Block(i);
      const std::string kind = StringField(d, "type");
      if (kind == "text_delta") {
        b["text"] = StringField(b, "text") + StringField(d, "text");
      } else if (kind == "thinking_delta") {
        b["thinking"] = StringField(b, "thinking") + StringField(d, "thinking");
      } else if (kind == "signature_delta") {
        b["signature"] = StringField(d, "signature");  // the whole signature, sent once at the end
      } else if (kind == "input_json_delta") {
        inputs_[i] += StringField(d, "partial_json");
      }
    } else if (type == "message_delta") {
      if (data.contains("delta") && data["delta"].is_object()) {
        const std::string stop = StringField(data["delta"], "stop_reason");
        if (!stop.empty()) stop_reason_ = stop;
      }
      if (data.contains("usage") && data["usage"].is_object()) {
        ReadUsage(data["usage"], usage_);
        usage_seen_ = true;
      }
    } else if (type == "message_stop") {
      stopped_ = true;
    }
  }

 private:
  static constexpr size_t kMaxBlocks = 4096;  // a broken index must not allocate without bound

  static size_t Index(const json& data) {
    return data.contains("index") && data["index"].is_number_unsigned() ? data["index"].get<size_t>()
                                                                        : kMaxBlocks;
  }
  json& Block(size_t i) {
    if (blocks_.size() <= i) {
      blocks_.resize(i + 1, json::object());
      inputs_.resize(i + 1);
    }
    return blocks_[i];
  }

  std::vector<json> blocks_;
  std::vector<std::string> inputs_;  // tool_use input, as JSON text in pieces
  std::string id_, model_, stop_reason_, malformed_;
  Usage usage_;
  std::optional<ApiError> error_;
  bool started_ = false;
  bool stopped_ = false;
  bool usage_seen_ = false;
};

}  // namespace

json AnthropicRequestBody(const ChatRequest& r, bool stream) {
  json body = {{"model", r.model}, {"max_tokens", r.max_tokens}};
  std::string system;
  json messages = json::array();
  for (const Message& m : r.messages) {
    if (m.role == Role::kSystem) {
      if (IsBlank(m.content)) continue;
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
  // A final assistant turn (a prefill) may not end in whitespace.
  if (!messages.empty() && messages.back()["role"] == "assistant") {
    json& last = messages.back()["content"].back();
    if (last.value("type", "") == "text") {
      std::string text = last["text"].get<std::string>();
      text.erase(text.find_last_not_of(" \t\n\r\f\v") + 1);
      last["text"] = text;
    }
  }
  if (!system.empty()) {
    json block = TextBlock(system);
    if (r.prompt_cache) block["cache_control"] = kEphemeral;
    body["system"] = json::array({std::move(block)});
  }
  if (r.prompt_cache && !messages.empty()) {
    json& content = messages.back()["content"];
    for (auto it = content.rbegin(); it != content.rend(); ++it)  // thinking blocks take no cache_control
      if (!IsReasoningBlock(*it)) {
        (*it)["cache_control"] = kEphemeral;
        break;
      }
  }
  body["messages"] = std::move(messages);
  if (!r.tools.empty()) {
    json tools = json::array();
    for (const ToolSpec& t : r.tools)
      tools.push_back(
          {{"name", t.name}, {"description", t.description}, {"input_schema", InputSchema(t.parameters)}});
    if (r.prompt_cache) tools.back()["cache_control"] = kEphemeral;
    body["tools"] = std::move(tools);
  }
  if (!r.effort.empty()) body["output_config"] = {{"effort", r.effort}};
  if (r.thinking_budget_tokens > 0 || r.adaptive_thinking) {
    body["thinking"] = r.adaptive_thinking
                           ? json{{"type", "adaptive"}}
                           : json{{"type", "enabled"}, {"budget_tokens", r.thinking_budget_tokens}};
    if (!r.thinking_display.empty()) body["thinking"]["display"] = r.thinking_display;
    // Thinking allows no temperature but 1 and top_p only in [0.95, 1].
    if (r.temperature && *r.temperature == 1) body["temperature"] = 1;
    if (r.top_p && *r.top_p >= 0.95 && *r.top_p <= 1 && !body.contains("temperature"))
      body["top_p"] = *r.top_p;
  } else {
    // Newer models reject temperature together with top_p; temperature wins.
    if (r.temperature) body["temperature"] = *r.temperature;
    if (r.top_p && !r.temperature) body["top_p"] = *r.top_p;
  }
  if (!r.stop.empty()) body["stop_sequences"] = r.stop;
  if (stream) body["stream"] = true;
  return body;
}

std::string AnthropicRequestProblem(const ChatRequest& r) {
  if (r.thinking_budget_tokens > 0 &&
      (r.thinking_budget_tokens < 1024 || r.thinking_budget_tokens >= r.max_tokens))
    return "thinking_budget_tokens " + std::to_string(r.thinking_budget_tokens) +
           " must be at least 1024 and below max_tokens " + std::to_string(r.max_tokens);
  return "";
}

Attempt AnthropicAttempt(const HttpResult& http, std::time_t now, const Secrets& secrets) {
  Attempt a;
  ReadReplyHeaders(http, now, a);
  json body = json::parse(http.body, nullptr, /*allow_exceptions=*/false);
  const bool is_error_body = StringField(body, "type") == "error";
  if (!http.transport_error.empty() || http.status < 200 || http.status >= 300 || is_error_body) {
    ApiError api = ParseApiError(body);
    HttpResult h = http;
    if (h.status >= 200 && h.status < 300) h.status = StatusOfApiError(api);
    a.response.error = ClassifyFailure(h, api, secrets);
    return a;
  }
  if (!body.is_object() || !body.contains("content") || !body["content"].is_array()) {
    a.response.error = MalformedReply(http, body.is_discarded() ? "body is not JSON" : "no content list", secrets);
    return a;
  }
  ChatResponse& r = a.response;
  r.message.role = Role::kAssistant;
  for (const json& b : body["content"]) {
    if (!AppendBlock(b, r.message)) {
      r.error = MalformedReply(http, "tool_use block without a name", secrets);
      return a;
    }
  }
  SettleBlocks(r.message);
  r.raw_stop_reason = StringField(body, "stop_reason");
  r.stop_reason = ToolCallsWin(AnthropicStopReason(r.raw_stop_reason), r.message);
  r.model = StringField(body, "model");
  r.id = StringField(body, "id");
  if (body.contains("usage") && body["usage"].is_object())
    ReadUsage(body["usage"], r.usage);
  else
    a.usage_missing = true;
  return a;
}

std::unique_ptr<StreamAssembler> MakeAnthropicStream() { return std::make_unique<AnthropicStream>(); }

namespace {

class AnthropicProvider : public Provider {
 public:
  AnthropicProvider(std::string base_url, std::string key, const ProviderOptions& o)
      : base_url_(std::move(base_url)), key_(std::move(key)), options_(o), transport_(o.max_in_flight) {
    while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
    secrets_ = ProviderSecrets(key_, options_, base_url_);
  }
  ProviderKind Kind() const override { return ProviderKind::kAnthropic; }
  std::string Identity() const override { return "anthropic " + base_url_; }
  std::string Redact(std::string text) const override { return RedactSecrets(std::move(text), secrets_); }
  std::optional<json> WireBody(const ChatRequest& request) const override {
    json body = AnthropicRequestBody(request, /*stream=*/false);
    body.merge_patch(options_.extra_body);
    return body;
  }

  void Send(const ChatRequest& request, AttemptCallback done) override {
    const Secrets& secrets = secrets_;
    if (std::string problem = AnthropicRequestProblem(request); !problem.empty()) {
      Attempt a;
      a.response.error = {ErrorKind::kInvalidRequest, 0, SanitizeMessage(problem, secrets)};
      done(std::move(a));
      return;
    }
    const bool stream = ShouldStream(options_, request, AnthropicNonStreamingCap(request.model));
    HttpRequest http;
    http.url = base_url_ + "/v1/messages";
    http.headers = WithExtraHeaders({{"content-type", "application/json"},
                                     {"x-api-key", key_},
                                     {"anthropic-version", options_.anthropic_version}},
                                    options_.extra_headers);
    json body = AnthropicRequestBody(request, stream);
    body.merge_patch(options_.extra_body);
    http.body = common::JsonText(body);
    SendAttempt(transport_, std::move(http), options_,
                stream ? std::shared_ptr<StreamAssembler>(MakeAnthropicStream()) : nullptr, AnthropicAttempt, secrets,
                request.model, kAnthropicBaseUrlRule, std::move(done));
  }

 private:
  std::string base_url_;
  std::string key_;
  ProviderOptions options_;
  Secrets secrets_;
  HttpTransport transport_;
};

}  // namespace

std::unique_ptr<Provider> MakeAnthropicProvider(std::string base_url, std::string api_key,
                                                const ProviderOptions& o) {
  return std::make_unique<AnthropicProvider>(std::move(base_url), std::move(api_key), o);
}

}  // namespace kforge::llm
