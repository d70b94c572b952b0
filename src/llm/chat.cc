// Canonical chat form: constructors, names and JSON conversion.
#include <cstdint>

#include "kforge/llm/chat.h"

#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"

namespace kforge::llm {

using nlohmann::json;

namespace {

Message Make(Role role, std::string text) {
  Message m;
  m.role = role;
  m.content = std::move(text);
  return m;
}

}  // namespace

Message Message::System(std::string text) { return Make(Role::kSystem, std::move(text)); }
Message Message::User(std::string text) { return Make(Role::kUser, std::move(text)); }
Message Message::Assistant(std::string text, std::vector<ToolCall> calls) {
  Message m = Make(Role::kAssistant, std::move(text));
  m.tool_calls = std::move(calls);
  return m;
}
Message Message::ToolResult(std::string tool_call_id, std::string text, bool is_error) {
  Message m = Make(Role::kTool, std::move(text));
  m.tool_call_id = std::move(tool_call_id);
  m.is_error = is_error;
  return m;
}

Usage& Usage::operator+=(const Usage& o) {
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  cache_read_tokens += o.cache_read_tokens;
  cache_write_tokens += o.cache_write_tokens;
  reasoning_tokens += o.reasoning_tokens;
  return *this;
}

bool IsRetryable(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kTransport:
    case ErrorKind::kTimeout:
    case ErrorKind::kRateLimited:
    case ErrorKind::kOverloaded:
    case ErrorKind::kServer:
      return true;
    default:
      return false;
  }
}

bool IsFatal(ErrorKind kind) {
  return kind == ErrorKind::kAuth || kind == ErrorKind::kQuota || kind == ErrorKind::kBilling ||
         kind == ErrorKind::kNotFound;
}

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return "none";
    case ErrorKind::kTransport:
      return "transport";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kRateLimited:
      return "rate_limited";
    case ErrorKind::kOverloaded:
      return "overloaded";
    case ErrorKind::kServer:
      return "server";
    case ErrorKind::kMalformedResponse:
      return "malformed_response";
    case ErrorKind::kInvalidRequest:
      return "invalid_request";
    case ErrorKind::kModeration:
      return "moderation";
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kAuth:
      return "auth";
    case ErrorKind::kQuota:
      return "quota";
    case ErrorKind::kBilling:
      return "billing";
    case ErrorKind::kReplayMiss:
      return "replay_miss";
    case ErrorKind::kExecFailed:
      return "exec_failed";
    case ErrorKind::kAborted:
      return "aborted";
  }
  return "unknown";
}

namespace {

constexpr ErrorKind kAllErrorKinds[] = {ErrorKind::kNone,
                                        ErrorKind::kTransport,
                                        ErrorKind::kTimeout,
                                        ErrorKind::kRateLimited,
                                        ErrorKind::kOverloaded,
                                        ErrorKind::kServer,
                                        ErrorKind::kMalformedResponse,
                                        ErrorKind::kInvalidRequest,
                                        ErrorKind::kModeration,
                                        ErrorKind::kNotFound,
                                        ErrorKind::kAuth,
                                        ErrorKind::kQuota,
                                        ErrorKind::kBilling,
                                        ErrorKind::kReplayMiss,
                                        ErrorKind::kExecFailed,
                                        ErrorKind::kAborted};

constexpr std::pair<ContentBlock::Type, const char*> kBlockTypes[] = {
    {ContentBlock::Type::kText, "text"},
    {ContentBlock::Type::kThinking, "thinking"},
    {ContentBlock::Type::kRedactedThinking, "redacted_thinking"},
    {ContentBlock::Type::kToolUse, "tool_use"}};

constexpr StopReason kAllStopReasons[] = {StopReason::kEndTurn, StopReason::kMaxTokens,
                                          StopReason::kToolUse, StopReason::kStopSequence,
                                          StopReason::kRefusal, StopReason::kOther};

}  // namespace

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kEndTurn:
      return "end_turn";
    case StopReason::kMaxTokens:
      return "max_tokens";
    case StopReason::kToolUse:
      return "tool_use";
    case StopReason::kStopSequence:
      return "stop_sequence";
    case StopReason::kRefusal:
      return "refusal";
    case StopReason::kOther:
      return "other";
  }
  return "other";
}

std::optional<StopReason> ParseStopReason(std::string_view name) {
  for (StopReason r : kAllStopReasons)
    if (name == StopReasonName(r)) return r;
  return std::nullopt;
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
    case Role::kTool:
      return "tool";
  }
  return "user";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kSystem, Role::kUser, Role::kAssistant, Role::kTool})
    if (name == RoleName(r)) return r;
  return std::nullopt;
}

json ToJson(const ToolCall& call) {
  return json{{"id", call.id},
              {"type", "function"},
              {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

json ToJson(const ContentBlock& b) {
  switch (b.type) {
    case ContentBlock::Type::kText:
      return json{{"type", "text"}, {"text", b.text}};
    case ContentBlock::Type::kThinking:
      return json{{"type", "thinking"}, {"thinking", b.text}, {"signature", b.signature}};
    case ContentBlock::Type::kRedactedThinking:
      return json{{"type", "redacted_thinking"}, {"data", b.data}};
    case ContentBlock::Type::kToolUse:
      return json{{"type", "tool_use"}, {"id", b.tool_call_id}};
  }
  return json::object();
}

json ToJson(const Message& m) {
  json j{{"role", RoleName(m.role)}, {"content", m.content}};
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const ToolCall& c : m.tool_calls) calls.push_back(ToJson(c));
    j["tool_calls"] = std::move(calls);
  }
  // Written only when present, so that requests without reasoning keep their keys.
  if (!m.reasoning.empty()) j["reasoning_content"] = m.reasoning;
  if (!m.blocks.empty()) {
    json blocks = json::array();
    for (const ContentBlock& b : m.blocks) blocks.push_back(ToJson(b));
    j["blocks"] = std::move(blocks);
  }
  if (m.role == Role::kTool) {
    j["tool_call_id"] = m.tool_call_id;
    if (m.is_error) j["is_error"] = true;
  }
  return j;
}

json ToJson(const ToolSpec& t) {
  return json{{"type", "function"},
              {"function", {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}};
}

json ToJson(const Usage& u) {
  return json{{"input_tokens", u.input_tokens},
              {"output_tokens", u.output_tokens},
              {"cache_read_tokens", u.cache_read_tokens},
              {"cache_write_tokens", u.cache_write_tokens},
              {"reasoning_tokens", u.reasoning_tokens}};
}

json ToJson(const ChatRequest& r) {
  json messages = json::array();
  for (const Message& m : r.messages) messages.push_back(ToJson(m));
  json tools = json::array();
  for (const ToolSpec& t : r.tools) tools.push_back(ToJson(t));
  json j{{"model", r.model},
         {"messages", std::move(messages)},
         {"tools", std::move(tools)},
         {"max_tokens", r.max_tokens},
         {"stop", r.stop},
         {"prompt_cache", r.prompt_cache}};
  if (r.temperature) j["temperature"] = *r.temperature;
  if (r.top_p) j["top_p"] = *r.top_p;
  if (r.thinking_budget_tokens > 0) j["thinking_budget_tokens"] = r.thinking_budget_tokens;
  if (!r.reasoning_effort.empty()) j["reasoning_effort"] = r.reasoning_effort;
  if (r.adaptive_thinking) j["adaptive_thinking"] = true;
  if (!r.effort.empty()) j["effort"] = r.effort;
  if (!r.thinking_display.empty()) j["thinking_display"] = r.thinking_display;
  if (!r.tag.empty()) j["tag"] = r.tag;
  return j;
}

json ToJson(const ChatResponse& r) {
  json j{{"message", ToJson(r.message)},
         {"stop_reason", StopReasonName(r.stop_reason)},
         {"raw_stop_reason", r.raw_stop_reason},
         {"model", r.model},
         {"id", r.id},
         {"usage", ToJson(r.usage)},
         {"cost_usd", r.cost_usd},
         {"cost_known", r.cost_known},
         {"attempts", r.attempts},
         {"from_cache", r.from_cache},
         {"latency_s", r.latency_s}};
  if (!r.error.ok())
    j["error"] = {{"kind", ErrorKindName(r.error.kind)},
                  {"http_status", r.error.http_status},
                  {"message", r.error.message}};
  return j;
}

namespace {

Status Bad(const std::string& path, const std::string& what) {
  return Status::ParseError(path + ": " + what);
}

StatusOr<std::string> ContentText(const json& c, const std::string& path) {
  if (c.is_null()) return std::string();
  if (c.is_string()) return c.get<std::string>();
  if (c.is_array()) {  // OpenAI content parts: keep text parts
    std::string text;
    for (size_t i = 0; i < c.size(); ++i) {
      const json& part = c[i];
      if (!part.is_object() || !part.contains("text") || !part["text"].is_string())
        return Bad(path + "[" + std::to_string(i) + "]", "only text content parts are supported");
      text += part["text"].get<std::string>();
    }
    return text;
  }
  return Bad(path, "content must be a string, null or a list of text parts");
}

StatusOr<ToolCall> ToolCallFromJson(const json& j, const std::string& path) {
  if (!j.is_object()) return Bad(path, "tool call must be an object");
  ToolCall call;
  if (j.contains("id") && j["id"].is_string()) call.id = j["id"].get<std::string>();
  const json* fn = j.contains("function") ? &j["function"] : &j;
  if (!fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string())
    return Bad(path + ".function.name", "missing tool name");
  call.name = (*fn)["name"].get<std::string>();
  if (fn->contains("arguments")) {
    const json& a = (*fn)["arguments"];
    if (a.is_string()) {
      json parsed = json::parse(a.get<std::string>(), nullptr, /*allow_exceptions=*/false);
      call.arguments = parsed.is_discarded() ? a : parsed;
    } else {
      call.arguments = a;
    }
  }
  return call;
}

StatusOr<ContentBlock> BlockFromJson(const json& j, const std::string& path) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    return Bad(path + ".type", "missing or not a string");
  const std::string type = j["type"].get<std::string>();
  ContentBlock b;
  bool known = false;
  for (const auto& [t, name] : kBlockTypes)
    if (type == name) b.type = t, known = true;
  if (!known) return Bad(path + ".type", "unknown block type '" + type + "'");
  auto text = [&](const char* key, std::string& out) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_string()) return Bad(path + "." + key, "must be a string");
    out = j[key].get<std::string>();
    return Status::Ok();
  };
  KFORGE_RETURN_IF_ERROR(text(b.type == ContentBlock::Type::kThinking ? "thinking" : "text", b.text));
  KFORGE_RETURN_IF_ERROR(text("signature", b.signature));
  KFORGE_RETURN_IF_ERROR(text("data", b.data));
  KFORGE_RETURN_IF_ERROR(text("id", b.tool_call_id));
  return b;
}

}  // namespace

StatusOr<Message> MessageFromJson(const json& j) {
  if (!j.is_object()) return Bad("message", "must be an object");
  if (!j.contains("role") || !j["role"].is_string()) return Bad("role", "missing or not a string");
  std::optional<Role> role = ParseRole(j["role"].get<std::string>());
  if (!role) return Bad("role", "unknown role '" + j["role"].get<std::string>() + "'");
  Message m;
  m.role = *role;
  if (j.contains("content")) {
    KFORGE_ASSIGN_OR_RETURN(m.content, ContentText(j["content"], "content"));
  }
  if (j.contains("tool_calls") && !j["tool_calls"].is_null()) {
    if (!j["tool_calls"].is_array()) return Bad("tool_calls", "must be a list");
    for (size_t i = 0; i < j["tool_calls"].size(); ++i) {
      KFORGE_ASSIGN_OR_RETURN(ToolCall c,
                              ToolCallFromJson(j["tool_calls"][i], "tool_calls[" + std::to_string(i) + "]"));
      m.tool_calls.push_back(std::move(c));
    }
  }
  for (const char* key : {"reasoning_content", "reasoning"})
    if (m.reasoning.empty() && j.contains(key) && j[key].is_string()) m.reasoning = j[key].get<std::string>();
  if (j.contains("blocks") && !j["blocks"].is_null()) {
    if (!j["blocks"].is_array()) return Bad("blocks", "must be a list");
    for (size_t i = 0; i < j["blocks"].size(); ++i) {
      KFORGE_ASSIGN_OR_RETURN(ContentBlock b,
                              BlockFromJson(j["blocks"][i], "blocks[" + std::to_string(i) + "]"));
      m.blocks.push_back(std::move(b));
    }
  }
  if (j.contains("tool_call_id") && j["tool_call_id"].is_string())
    m.tool_call_id = j["tool_call_id"].get<std::string>();
  if (m.role == Role::kTool && m.tool_call_id.empty()) return Bad("tool_call_id", "a tool message needs one");
  if (j.contains("is_error") && j["is_error"].is_boolean()) m.is_error = j["is_error"].get<bool>();
  return m;
}

StatusOr<std::vector<Message>> MessagesFromJson(const json& j) {
  if (!j.is_array()) return Bad("messages", "must be a list");
  std::vector<Message> out;
  for (size_t i = 0; i < j.size(); ++i) {
    StatusOr<Message> m = MessageFromJson(j[i]);
    if (!m.ok()) return m.status().WithContext("messages[" + std::to_string(i) + "]");
    out.push_back(std::move(*m));
  }
  return out;
}

StatusOr<ToolSpec> ToolSpecFromJson(const json& j) {
  const json* fn = (j.is_object() && j.contains("function")) ? &j["function"] : &j;
  if (!fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string())
    return Bad("tool", "missing name");
  ToolSpec t;
  t.name = (*fn)["name"].get<std::string>();
  t.description = fn->value("description", "");
  if (fn->contains("parameters")) t.parameters = (*fn)["parameters"];
  return t;
}

StatusOr<ChatRequest> ChatRequestFromJson(const json& j) {
  if (!j.is_object()) return Bad("request", "must be an object");
  ChatRequest r;
  try {
    r.model = j.value("model", "");
    if (j.contains("messages")) {
      KFORGE_ASSIGN_OR_RETURN(r.messages, MessagesFromJson(j["messages"]));
    }
    if (j.contains("tools")) {
      for (size_t i = 0; i < j["tools"].size(); ++i) {
        StatusOr<ToolSpec> t = ToolSpecFromJson(j["tools"][i]);
        if (!t.ok()) return t.status().WithContext("tools[" + std::to_string(i) + "]");
        r.tools.push_back(std::move(*t));
      }
    }
    r.max_tokens = j.value("max_tokens", 4096);
    if (j.contains("temperature") && !j["temperature"].is_null())
      r.temperature = j["temperature"].get<double>();
    if (j.contains("top_p") && !j["top_p"].is_null()) r.top_p = j["top_p"].get<double>();
    if (j.contains("stop")) r.stop = j["stop"].get<std::vector<std::string>>();
    r.prompt_cache = j.value("prompt_cache", true);
    r.thinking_budget_tokens = j.value("thinking_budget_tokens", 0);
    r.reasoning_effort = j.value("reasoning_effort", "");
    r.adaptive_thinking = j.value("adaptive_thinking", false);
    r.effort = j.value("effort", "");
    r.thinking_display = j.value("thinking_display", "");
    r.tag = j.value("tag", "");
  } catch (const json::exception& e) {
    return Bad("request", e.what());
  }
  return r;
}

StatusOr<ChatResponse> ChatResponseFromJson(const json& j) {
  if (!j.is_object() || !j.contains("message")) return Bad("response", "must be an object with a message");
  ChatResponse r;
  StatusOr<Message> m = MessageFromJson(j["message"]);
  if (!m.ok()) return m.status().WithContext("response.message");
  r.message = std::move(*m);
  try {
    r.stop_reason = ParseStopReason(j.value("stop_reason", "other")).value_or(StopReason::kOther);
    r.raw_stop_reason = j.value("raw_stop_reason", "");
    r.model = j.value("model", "");
    r.id = j.value("id", "");
    if (j.contains("usage")) {
      const json& u = j["usage"];
      r.usage.input_tokens = u.value("input_tokens", int64_t{0});
      r.usage.output_tokens = u.value("output_tokens", int64_t{0});
      r.usage.cache_read_tokens = u.value("cache_read_tokens", int64_t{0});
      r.usage.cache_write_tokens = u.value("cache_write_tokens", int64_t{0});
      r.usage.reasoning_tokens = u.value("reasoning_tokens", int64_t{0});
    }
    r.cost_usd = j.value("cost_usd", 0.0);
    r.cost_known = j.value("cost_known", false);
    r.attempts = j.value("attempts", 0);
    r.from_cache = j.value("from_cache", false);
    r.latency_s = j.value("latency_s", 0.0);
    if (j.contains("error")) {
      const json& e = j["error"];
      std::string kind = e.value("kind", "");
      r.error.kind = ErrorKind::kMalformedResponse;
      for (ErrorKind k : kAllErrorKinds)
        if (kind == ErrorKindName(k)) r.error.kind = k;
      r.error.http_status = e.value("http_status", 0);
      r.error.message = e.value("message", "");
    }
  } catch (const json::exception& e) {
    return Bad("response", e.what());
  }
  return r;
}

std::string RequestKey(const ChatRequest& request) {
  json j = ToJson(request);
  j.erase("tag");
  return common::Sha256Hex(common::JsonText(j));
}

}  // namespace kforge::llm
