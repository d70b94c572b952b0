// One dataset record against the TRL conversational and prompt/completion formats.
#include <set>
#include <string>
#include <string_view>

#include "finetune/dataset.h"
#include "kforge/common/chat.h"
#include "kforge/common/json_fields.h"

namespace kforge::finetune {
namespace {

using nlohmann::json;

int64_t Chars(std::string_view text) {
  int64_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

/// A field that is there and not null: exports from Arrow tables carry `"tool_calls": null` on every
/// message that has none.
bool Present(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && !it->is_null();
}

Status Error(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path + ": " + what);
}

Status ExpectType(const json& value, const std::string& path, bool ok, const char* expected) {
  return ok ? Status::Ok()
            : Error(path, std::string("expected ") + expected + ", got " + common::JsonTypeName(value));
}

/// The state of one record's conversation: the tool calls made so far, for tool results to answer.
struct Conversation {
  std::set<std::string> call_ids;
  RecordInfo info;
};

Status CheckToolCall(const json& call, const std::string& path, Conversation& c) {
  KFORGE_RETURN_IF_ERROR(common::JsonFields(call, path).CheckObject({"id", "type", "function"}));
  const auto id = call.find("id");
  if (id == call.end() || !id->is_string() || id->get<std::string>().empty())
    return Error(path + ".id", "expected the call's id, a non-empty string");
  if (!c.call_ids.insert(id->get<std::string>()).second)
    return Error(path + ".id", common::KeyText(id->get<std::string>()) + " is used twice in the record");
  const auto type = call.find("type");
  if (type == call.end() || *type != "function") return Error(path + ".type", "expected \"function\"");
  const auto function = call.find("function");
  if (function == call.end()) return Error(path + ".function", "missing");
  KFORGE_RETURN_IF_ERROR(
      common::JsonFields(*function, path + ".function").CheckObject({"name", "arguments"}));
  const auto name = function->find("name");
  if (name == function->end() || !name->is_string() || name->get<std::string>().empty())
    return Error(path + ".function.name", "expected the function's name, a non-empty string");
  const auto arguments = function->find("arguments");
  if (arguments == function->end()) return Error(path + ".function.arguments", "missing");
  if (!arguments->is_string() && !arguments->is_object())
    return Error(path + ".function.arguments",
                 "expected a JSON object or a string holding one, got " + common::JsonTypeName(*arguments));
  c.info.chars += Chars(name->get<std::string>()) +
                  Chars(arguments->is_string() ? arguments->get<std::string>() : arguments->dump());
  ++c.info.tool_calls;
  return Status::Ok();
}

Status CheckMessage(const json& message, const std::string& path, Conversation& c) {
  // The keys kforge export writes (common::TrlMessagesToJson), and no others.
  KFORGE_RETURN_IF_ERROR(common::JsonFields(message, path).CheckObject(common::kTrlMessageKeys));
  const auto role_it = message.find("role");
  if (role_it == message.end()) return Error(path + ".role", "missing");
  KFORGE_RETURN_IF_ERROR(ExpectType(*role_it, path + ".role", role_it->is_string(), "a string"));
  const std::string role = role_it->get<std::string>();
  if (role != "system" && role != "user" && role != "assistant" && role != "tool")
    return Error(path + ".role", common::KeyText(role) + " is not system, user, assistant or tool");
  const bool assistant = role == "assistant";
  for (const char* key : {"tool_calls", "reasoning_content"})
    if (!assistant && Present(message, key))
      return Error(path + "." + key, "only assistant messages have it");
  if (role != "tool" && Present(message, "tool_call_id"))
    return Error(path + ".tool_call_id", "only tool messages have it");
  if (const auto name = message.find("name"); Present(message, "name"))
    KFORGE_RETURN_IF_ERROR(ExpectType(*name, path + ".name", name->is_string(), "a string"));

  bool calls = false;
  if (const auto list = message.find("tool_calls"); list != message.end() && !list->is_null()) {
    KFORGE_RETURN_IF_ERROR(ExpectType(*list, path + ".tool_calls", list->is_array(), "an array"));
    for (size_t i = 0; i < list->size(); ++i)
      KFORGE_RETURN_IF_ERROR(CheckToolCall((*list)[i], path + ".tool_calls[" + std::to_string(i) + "]", c));
    calls = !list->empty();
  }
  if (const auto reasoning = message.find("reasoning_content");
      reasoning != message.end() && !reasoning->is_null()) {
    KFORGE_RETURN_IF_ERROR(
        ExpectType(*reasoning, path + ".reasoning_content", reasoning->is_string(), "a string"));
    c.info.chars += Chars(reasoning->get<std::string>());
    c.info.has_reasoning = c.info.has_reasoning || !reasoning->get<std::string>().empty();
  }
  const auto content = message.find("content");
  bool has_text = false;
  if (content == message.end() || content->is_null()) {
    if (!(assistant && calls))
      return Error(path + ".content", "missing (only an assistant's tool calls may stand alone)");
  } else {
    KFORGE_RETURN_IF_ERROR(ExpectType(*content, path + ".content", content->is_string(), "a string"));
    c.info.chars += Chars(content->get<std::string>());
    has_text = !content->get<std::string>().empty();
  }
  if (assistant) {
    if (!has_text && !calls) return Error(path, "an assistant message without content or tool calls");
    ++c.info.assistant_turns;
  }
  if (role == "tool") {
    const auto id = message.find("tool_call_id");
    if (id == message.end())
      return Error(path + ".tool_call_id", "missing (which tool call does this answer?)");
    KFORGE_RETURN_IF_ERROR(ExpectType(*id, path + ".tool_call_id", id->is_string(), "a string"));
    if (!c.call_ids.count(id->get<std::string>()))
      return Error(path + ".tool_call_id",
                   common::KeyText(id->get<std::string>()) + " answers no earlier tool call");
    ++c.info.tool_results;
  }
  ++c.info.messages;
  return Status::Ok();
}

Status CheckMessages(const json& list, const std::string& path, Conversation& c) {
  KFORGE_RETURN_IF_ERROR(ExpectType(list, path, list.is_array(), "an array of messages"));
  if (list.empty()) return Error(path, "no messages");
  for (size_t i = 0; i < list.size(); ++i)
    KFORGE_RETURN_IF_ERROR(CheckMessage(list[i], path + "[" + std::to_string(i) + "]", c));
  return Status::Ok();
}

Status CheckTools(const json& tools, Conversation& c) {
  KFORGE_RETURN_IF_ERROR(ExpectType(tools, "tools", tools.is_array(), "an array of tools"));
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string path = "tools[" + std::to_string(i) + "]";
    KFORGE_RETURN_IF_ERROR(common::JsonFields(tools[i], path).CheckObject({"type", "function"}));
    if (tools[i].value("type", json()) != "function") return Error(path + ".type", "expected \"function\"");
    const auto function = tools[i].find("function");
    if (function == tools[i].end()) return Error(path + ".function", "missing");
    KFORGE_RETURN_IF_ERROR(ExpectType(*function, path + ".function", function->is_object(), "an object"));
    const auto name = function->find("name");
    if (name == function->end() || !name->is_string() || name->get<std::string>().empty())
      return Error(path + ".function.name", "expected the tool's name, a non-empty string");
    if (const auto parameters = function->find("parameters"); parameters != function->end())
      KFORGE_RETURN_IF_ERROR(ExpectType(*parameters, path + ".function.parameters", parameters->is_object(),
                                        "a JSON schema object"));
  }
  c.info.has_tools = !tools.empty();
  c.info.chars += Chars(tools.dump());
  return Status::Ok();
}

Status CheckPromptCompletion(const json& record, Conversation& c) {
  const auto prompt = record.find("prompt");
  const auto completion = record.find("completion");
  if (completion == record.end()) return Error("completion", "missing (a prompt needs its completion)");
  if (prompt == record.end()) return Error("prompt", "missing (a completion needs its prompt)");
  c.info.format = DatasetFormat::kPromptCompletion;
  if (prompt->is_string() && completion->is_string()) {
    if (completion->get<std::string>().empty()) return Error("completion", "empty");
    c.info.plain_text = true;
    c.info.chars = Chars(prompt->get<std::string>()) + Chars(completion->get<std::string>());
    c.info.assistant_turns = 1;
    return Status::Ok();
  }
  if (prompt->is_string() || completion->is_string())
    return Error("completion", "prompt and completion must both be strings or both be lists of messages");
  KFORGE_RETURN_IF_ERROR(CheckMessages(*prompt, "prompt", c));
  int64_t before = c.info.assistant_turns;
  KFORGE_RETURN_IF_ERROR(CheckMessages(*completion, "completion", c));
  if (c.info.assistant_turns == before) return Error("completion", "no assistant message");
  return Status::Ok();
}

}  // namespace

StatusOr<RecordInfo> CheckRecord(const json& record) {
  if (!record.is_object())
    return Error("top level", "expected an object, got " + common::JsonTypeName(record));
  Conversation c;
  const bool messages = record.contains("messages");
  if (messages && (record.contains("prompt") || record.contains("completion")))
    return Error("messages", "a record is either messages or prompt/completion, not both");
  if (messages) {
    KFORGE_RETURN_IF_ERROR(CheckMessages(record["messages"], "messages", c));
    if (c.info.assistant_turns == 0) return Error("messages", "no assistant message (nothing to learn from)");
  } else if (record.contains("prompt") || record.contains("completion")) {
    KFORGE_RETURN_IF_ERROR(CheckPromptCompletion(record, c));
  } else {
    return Error("top level", "no \"messages\" (or \"prompt\" and \"completion\") field");
  }
  if (const auto tools = record.find("tools"); tools != record.end() && !tools->is_null())
    KFORGE_RETURN_IF_ERROR(CheckTools(*tools, c));
  return c.info;
}

}  // namespace kforge::finetune
