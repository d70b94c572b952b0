// The canonical chat form shared by the providers (llm), the trajectory record (dataset) and the
// datasets exported from it. A Message maps 1:1 to an OpenAI/TRL chat message (role, content,
// tool_calls, tool_call_id, reasoning_content), plus the ordered blocks an Anthropic reply needs back
// unchanged (thinking with its signature). Three JSON forms, each written in one place:
// - the chat form (MessageToJson): requests, cassettes, the exec provider, request keys;
// - the record form (MessageToRecord): the trajectory record's messages, which are the chat form
//   unless a record held other JSON for a message (see Message::as_read);
// - the TRL row form (TrlMessagesToJson, TrlToolsToJson): the rows TRL's trainers read, which
//   `kforge export` writes and `kforge finetune-launch` checks.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"

namespace kforge::common {

enum class Role { kSystem, kUser, kAssistant, kTool };

/// A tool invocation requested by the assistant. `arguments` is a JSON value (normally an object);
/// when a model emits arguments that are not valid JSON they are kept as a JSON string.
struct ToolCall {
  std::string id;
  std::string name;
  nlohmann::json arguments = nlohmann::json::object();

  bool operator==(const ToolCall&) const = default;
};

/// One part of an assistant turn, in the order the model produced it. Kept for the reasoning that
/// a provider checks when it comes back: Anthropic `thinking` (text + `signature`) and
/// `redacted_thinking` (`data`) blocks are sent back byte for byte.
struct ContentBlock {
  enum class Type { kText, kThinking, kRedactedThinking, kToolUse };
  Type type = Type::kText;
  std::string text;          ///< kText: the text; kThinking: the thinking text
  std::string signature;     ///< kThinking: the signature the API checks
  std::string data;          ///< kRedactedThinking: the encrypted reasoning
  std::string tool_call_id;  ///< kToolUse: the ToolCall::id this block stands for

  bool operator==(const ContentBlock&) const = default;
};

struct Message {
  Role role = Role::kUser;
  /// Text content; empty for an assistant turn that only calls tools.
  std::string content;
  /// Assistant only.
  std::vector<ToolCall> tool_calls;
  /// Assistant only: the reasoning text the model showed (OpenAI-compatible `reasoning_content` or
  /// `reasoning`; the text of Anthropic thinking blocks). For reading, records and datasets.
  std::string reasoning;
  /// Assistant only; empty unless the turn has reasoning blocks. The turn's parts in order: its
  /// text blocks (whose concatenation is `content`), thinking blocks and tool uses (which refer to
  /// `tool_calls` by id). The Anthropic provider sends these instead of content + tool_calls.
  std::vector<ContentBlock> blocks;
  /// Tool only: the ToolCall::id this message answers.
  std::string tool_call_id;
  /// Tool only: true when the content reports a failure of the tool (Anthropic `is_error`).
  bool is_error = false;
  /// Set by MessageFromRecord when the record held other JSON for this message than MessageToJson
  /// writes (keys the chat form does not read, a tool call without its `function` object): that
  /// JSON, which MessageToRecord writes back as long as the fields above are still what it reads
  /// as. Null otherwise. Not part of the message's value (operator==).
  std::shared_ptr<const nlohmann::json> as_read;

  static Message System(std::string text);
  static Message User(std::string text);
  static Message Assistant(std::string text, std::vector<ToolCall> calls = {});
  static Message ToolResult(std::string tool_call_id, std::string text, bool is_error = false);

  /// The chat fields; `as_read` is left out.
  bool operator==(const Message& other) const;
};

/// A function the model may call; `parameters` is a JSON Schema object.
struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json parameters = nlohmann::json::object();
  /// As Message::as_read, set by ToolSpecFromRecord and written by ToolSpecToRecord.
  std::shared_ptr<const nlohmann::json> as_read;

  /// name, description and parameters; `as_read` is left out.
  bool operator==(const ToolSpec& other) const;
};

const char* RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);

/// The chat form. A message: `role`, `content`, then when set `tool_calls` (`{id, type: "function",
/// function: {name, arguments}}`), `reasoning_content`, `blocks`, and for a tool result
/// `tool_call_id` (and `is_error` when true). A tool: `{type: "function", function: {name,
/// description, parameters}}`.
nlohmann::json ToolCallToJson(const ToolCall& call);
nlohmann::json ContentBlockToJson(const ContentBlock& block);
nlohmann::json MessageToJson(const Message& message);
nlohmann::json ToolSpecToJson(const ToolSpec& tool);

/// Accepts what MessageToJson writes and OpenAI/TRL messages (arguments as a JSON string or object,
/// content null or a list of text parts, `reasoning_content` or `reasoning`). Errors name the
/// JSON path inside the message ("tool_calls[0].function.name: ...").
StatusOr<Message> MessageFromJson(const nlohmann::json& j);
StatusOr<std::vector<Message>> MessagesFromJson(const nlohmann::json& j);
/// Accepts `{type, function: {name, description?, parameters?}}` and the bare function object.
StatusOr<ToolSpec> ToolSpecFromJson(const nlohmann::json& j);

/// The record form: MessageToJson, or the JSON the message was read from (Message::as_read) while
/// its fields are unchanged, so that a record read and written again keeps its bytes.
nlohmann::json MessageToRecord(const Message& message);
nlohmann::json ToolSpecToRecord(const ToolSpec& tool);
/// MessageFromJson and ToolSpecFromJson, keeping `j` in `as_read` when the record form of what
/// was read would be other JSON.
StatusOr<Message> MessageFromRecord(const nlohmann::json& j);
StatusOr<ToolSpec> ToolSpecFromRecord(const nlohmann::json& j);

/// How messages are written in a TRL row.
struct TrlOptions {
  /// Keep the recorded reasoning of assistant turns as `reasoning_content`. Default off.
  bool with_reasoning = false;
  /// Tool-call arguments as JSON text (OpenAI's wire form) instead of JSON objects (Hugging Face's
  /// chat-template convention, which templates serialise themselves). Default off: objects.
  bool arguments_as_text = false;
};

/// The keys a message of a TRL row may have; TrlMessagesToJson writes no others.
inline constexpr std::string_view kTrlMessageKeys[] = {"role",       "content",      "name",
                                                       "tool_calls", "tool_call_id", "reasoning_content"};

/// A conversation as the messages of a TRL row (OpenAI's chat form, which TRL's trainers read), one
/// JSON object per message: `role`, `content`, `tool_calls` (arguments an object, or text with
/// arguments_as_text; text that is not a JSON object stays text), `reasoning_content` (with
/// with_reasoning), and on a tool result `tool_call_id` and the called tool's `name`. No blocks.
/// Every tool call gets an id of its own (a teacher may repeat ids, which trainers refuse): a
/// repeated id becomes "ID~N", and the tool results that answer it, in order, take the new id.
std::vector<nlohmann::json> TrlMessagesToJson(std::vector<Message> messages, const TrlOptions& options);
/// The `tools` column of a TRL row: the specs as recorded (ToolSpecToRecord), or null when there are
/// none.
nlohmann::json TrlToolsToJson(const std::vector<ToolSpec>& tools);

}  // namespace kforge::common
