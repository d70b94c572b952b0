// The chat form: constructors, names, and its JSON forms (chat, record, TRL row).
#include "kforge/common/chat.h"

#include <deque>
#include <map>
#include <set>
#include <utility>

#include "kforge/common/json_fields.h"
#include "kforge/common/text.h"

namespace kforge::common {

using nlohmann::json;

namespace {

Message Make(Role role, std::string text) {
  Message m;
  m.role = role;
  m.content = std::move(text);
  return m;
}

constexpr std::pair<ContentBlock::Type, const char*> kBlockTypes[] = {
    {ContentBlock::Type::kText, "text"},
    {ContentBlock::Type::kThinking, "thinking"},
    {ContentBlock::Type::kRedactedThinking, "redacted_thinking"},
    {ContentBlock::Type::kToolUse, "tool_use"}};

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

bool Message::operator==(const Message& o) const {
  return role == o.role && content == o.content && tool_calls == o.tool_calls && reasoning == o.reasoning &&
         blocks == o.blocks && tool_call_id == o.tool_call_id && is_error == o.is_error;
}

bool ToolSpec::operator==(const ToolSpec& o) const {
  return name == o.name && description == o.description && parameters == o.parameters;
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

json ToolCallToJson(const ToolCall& call) {
  return json{{"id", call.id},
              {"type", "function"},
              {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

json ContentBlockToJson(const ContentBlock& b) {
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

json MessageToJson(const Message& m) {
  json j{{"role", RoleName(m.role)}, {"content", m.content}};
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const ToolCall& c : m.tool_calls) calls.push_back(ToolCallToJson(c));
    j["tool_calls"] = std::move(calls);
  }
  // Written only when present, so that requests without reasoning keep their keys.
  if (!m.reasoning.empty()) j["reasoning_content"] = m.reasoning;
  if (!m.blocks.empty()) {
    json blocks = json::array();
    for (const ContentBlock& b : m.blocks) blocks.push_back(ContentBlockToJson(b));
    j["blocks"] = std::move(blocks);
  }
  if (m.role == Role::kTool) {
    j["tool_call_id"] = m.tool_call_id;
    if (m.is_error) j["is_error"] = true;
  }
  return j;
}

json ToolSpecToJson(const ToolSpec& t) {
  return json{{"type", "function"},
              {"function", {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}};
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
  if (!known) return Bad(path + ".type", "unknown block type " + Quote(type));
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
  if (!role) return Bad("role", "unknown role " + Quote(j["role"].get<std::string>()));
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
  if (fn->contains("description") && !(*fn)["description"].is_string())
    return Bad("tool.function.description", "must be a string");
  t.description = fn->value("description", "");
  if (fn->contains("parameters")) t.parameters = (*fn)["parameters"];
  return t;
}

namespace {

/// The record form of a message or tool read from a record: the JSON it was read from, while the
/// value still reads as it did.
template <typename T, typename Read, typename Write>
json ToRecord(const T& value, Read read, Write write) {
  if (value.as_read) {
    StatusOr<T> again = read(*value.as_read);
    if (again.ok() && *again == value) return *value.as_read;
  }
  return write(value);
}

/// `read` of `j`, keeping `j` when `write` would give other JSON.
template <typename Read, typename Write>
auto FromRecord(const json& j, Read read, Write write) -> decltype(read(j)) {
  auto value = read(j);
  if (value.ok() && write(*value) != j) value->as_read = std::make_shared<const json>(j);
  return value;
}

}  // namespace

json MessageToRecord(const Message& message) { return ToRecord(message, MessageFromJson, MessageToJson); }
json ToolSpecToRecord(const ToolSpec& tool) { return ToRecord(tool, ToolSpecFromJson, ToolSpecToJson); }
StatusOr<Message> MessageFromRecord(const json& j) { return FromRecord(j, MessageFromJson, MessageToJson); }
StatusOr<ToolSpec> ToolSpecFromRecord(const json& j) {
  return FromRecord(j, ToolSpecFromJson, ToolSpecToJson);
}

namespace {

std::string ArgumentsText(const json& arguments) {
  return arguments.is_string() ? arguments.get<std::string>() : JsonText(arguments);
}

/// Arguments as a JSON value: text that holds a JSON object is parsed; other text (a model's
/// malformed call) stays the text it was.
json ArgumentsObject(const json& arguments) {
  if (!arguments.is_string()) return arguments;
  json parsed = json::parse(arguments.get<std::string>(), nullptr, false);
  return parsed.is_object() ? parsed : arguments;
}

/// Gives every tool call of a conversation an id of its own: a repeated id becomes "ID~N", and the
/// tool results that answer it, in order, take the new id.
void UniqueToolCallIds(std::vector<Message>& messages) {
  std::set<std::string> used;
  for (const Message& m : messages)
    for (const ToolCall& call : m.tool_calls) used.insert(call.id);
  std::set<std::string> seen;
  std::map<std::string, std::deque<std::string>> answers;  // a call's id as sent -> ids its results take
  for (Message& m : messages) {
    for (ToolCall& call : m.tool_calls) {
      std::string id = call.id;
      for (int n = 2; id.empty() || seen.count(id); ++n) {
        id = call.id + "~" + std::to_string(n);
        if (used.count(id)) id.clear();
      }
      seen.insert(id);
      answers[call.id].push_back(id);
      call.id = id;
    }
    if (m.role == Role::kTool) {
      auto it = answers.find(m.tool_call_id);
      if (it != answers.end() && !it->second.empty()) {
        m.tool_call_id = it->second.front();
        it->second.pop_front();
      }
    }
  }
}

/// One message of a TRL row. `call_names` maps tool call ids to tool names, for tool results.
json TrlMessageToJson(const Message& m, const TrlOptions& options,
                      const std::map<std::string, std::string>& call_names) {
  json out{{"role", RoleName(m.role)}, {"content", m.content}};
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const ToolCall& call : m.tool_calls) {
      json arguments =
          options.arguments_as_text ? json(ArgumentsText(call.arguments)) : ArgumentsObject(call.arguments);
      calls.push_back({{"id", call.id},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", std::move(arguments)}}}});
    }
    out["tool_calls"] = std::move(calls);
  }
  if (options.with_reasoning && !m.reasoning.empty()) out["reasoning_content"] = m.reasoning;
  if (m.role == Role::kTool) {
    out["tool_call_id"] = m.tool_call_id;
    auto it = call_names.find(m.tool_call_id);
    if (it != call_names.end()) out["name"] = it->second;
  }
  return out;
}

}  // namespace

std::vector<json> TrlMessagesToJson(std::vector<Message> messages, const TrlOptions& options) {
  UniqueToolCallIds(messages);
  std::map<std::string, std::string> names;
  for (const Message& m : messages)
    for (const ToolCall& call : m.tool_calls) names[call.id] = call.name;
  std::vector<json> rows;
  rows.reserve(messages.size());
  for (const Message& m : messages) rows.push_back(TrlMessageToJson(m, options, names));
  return rows;
}

json TrlToolsToJson(const std::vector<ToolSpec>& tools) {
  if (tools.empty()) return nullptr;
  json out = json::array();
  for (const ToolSpec& tool : tools) out.push_back(ToolSpecToRecord(tool));
  return out;
}

}  // namespace kforge::common
