// Export rows: TRL conversational messages, prompt/completion pairs, whole trajectories.
#include "kforge/export/formats.h"

#include <deque>
#include <map>
#include <set>

#include "kforge/common/json_fields.h"
#include "kforge/llm/chat.h"

namespace kforge::exporter {
namespace {

using nlohmann::json;

std::string ArgumentsText(const json& arguments) {
  return arguments.is_string() ? arguments.get<std::string>() : common::JsonText(arguments);
}

/// Arguments as a JSON value: text that holds a JSON object is parsed; other text (a model's
/// malformed call) stays the text it was.
json ArgumentsObject(const json& arguments) {
  if (!arguments.is_string()) return arguments;
  json parsed = json::parse(arguments.get<std::string>(), nullptr, false);
  return parsed.is_object() ? parsed : arguments;
}

/// One message in OpenAI/TRL form. `call_names` maps tool call ids to tool names, for tool results.
json TrlMessage(const llm::Message& m, const FormatOptions& options,
                const std::map<std::string, std::string>& call_names) {
  json out{{"role", llm::RoleName(m.role)}, {"content", m.content}};
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const llm::ToolCall& call : m.tool_calls) {
      json arguments =
          options.arguments_as_text ? json(ArgumentsText(call.arguments)) : ArgumentsObject(call.arguments);
      calls.push_back({{"id", call.id},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", std::move(arguments)}}}});
    }
    out["tool_calls"] = std::move(calls);
  }
  if (options.with_reasoning && !m.reasoning.empty()) out["reasoning_content"] = m.reasoning;
  if (m.role == llm::Role::kTool) {
    out["tool_call_id"] = m.tool_call_id;
    auto it = call_names.find(m.tool_call_id);
    if (it != call_names.end()) out["name"] = it->second;
  }
  return out;
}

/// Gives every tool call of a conversation an id of its own (a teacher may repeat ids, which trainers
/// refuse): a repeated id becomes "ID~N", and the tool results that answer it, in order, take the new
/// id.
void UniqueToolCallIds(std::vector<llm::Message>& messages) {
  std::set<std::string> used;
  for (const llm::Message& m : messages)
    for (const llm::ToolCall& call : m.tool_calls) used.insert(call.id);
  std::set<std::string> seen;
  std::map<std::string, std::deque<std::string>> answers;  // a call's id as sent -> ids its results take
  for (llm::Message& m : messages) {
    for (llm::ToolCall& call : m.tool_calls) {
      std::string id = call.id;
      for (int n = 2; id.empty() || seen.count(id); ++n) {
        id = call.id + "~" + std::to_string(n);
        if (used.count(id)) id.clear();
      }
      seen.insert(id);
      answers[call.id].push_back(id);
      call.id = id;
    }
    if (m.role == llm::Role::kTool) {
      auto it = answers.find(m.tool_call_id);
      if (it != answers.end() && !it->second.empty()) {
        m.tool_call_id = it->second.front();
        it->second.pop_front();
      }
    }
  }
}

StatusOr<std::vector<llm::Message>> Messages(const dataset::Trajectory& t) {
  std::vector<llm::Message> messages;
  for (size_t i = 0; i < t.messages.size(); ++i) {
    StatusOr<llm::Message> m = llm::MessageFromJson(t.messages[i]);
    if (!m.ok())
      return Status::InvalidArgument("record " + t.id + ": messages[" + std::to_string(i) +
                                     "]: " + m.status().message());
    messages.push_back(std::move(*m));
  }
  UniqueToolCallIds(messages);
  return messages;
}

/// Index of the assistant message that produced the best attempt (or, without one, the last
/// assistant message); -1 when there is none.
int BestAssistant(const dataset::Trajectory& t, const std::vector<llm::Message>& messages) {
  int last = -1, turn = 0;
  int wanted = t.best ? t.attempts[*t.best].turn : -1;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role != llm::Role::kAssistant) continue;
    last = static_cast<int>(i);
    if (++turn == wanted) return last;
  }
  return last;
}

std::map<std::string, std::string> CallNames(const std::vector<llm::Message>& messages) {
  std::map<std::string, std::string> names;
  for (const llm::Message& m : messages)
    for (const llm::ToolCall& call : m.tool_calls) names[call.id] = call.name;
  return names;
}

void AddColumns(json& row, const dataset::Trajectory& t) {
  row["tools"] = t.tools.is_array() && !t.tools.empty() ? t.tools : json(nullptr);
  json provenance = Provenance(t);
  for (auto& [key, value] : provenance.items()) row[key] = value;
  json measured = Measurements(t, t.best ? &t.attempts[*t.best] : nullptr);
  for (auto& [key, value] : measured.items()) row[key] = value;
}

}  // namespace

json Provenance(const dataset::Trajectory& t) {
  std::optional<double> speedup = t.speedup();
  return {{"id", t.id},
          {"run_id", t.run_id},
          {"task", t.task.id},
          {"level", t.task.level ? json(*t.task.level) : json(nullptr)},
          {"tags", t.task.tags},
          {"task_source", t.task.source},
          {"task_license", t.task.license},
          {"teacher_provider", t.teacher.provider},
          {"teacher_model", t.teacher.model},
          {"kforge_version", t.kforge_version},
          {"protocol", dataset::ProtocolName(t.protocol)},
          {"compile_only", t.compile_only},
          {"correct", t.correct()},
          {"speedup", speedup ? json(*speedup) : json(nullptr)},
          {"turns", t.turns()}};
}

bool HasAssistantTurn(const dataset::Trajectory& t) {
  for (const json& m : t.messages)
    if (m.is_object() && m.value("role", "") == "assistant") return true;
  return false;
}

StatusOr<json> MessagesRow(const dataset::Trajectory& t, const FormatOptions& options) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<llm::Message> messages, Messages(t));
  int end = BestAssistant(t, messages);
  if (end < 0) return Status::InvalidArgument("record " + t.id + ": no assistant turn");
  size_t count = static_cast<size_t>(end) + 1;
  std::map<std::string, std::string> names = CallNames(messages);
  json rows = json::array();
  for (size_t i = 0; i < count; ++i) rows.push_back(TrlMessage(messages[i], options, names));
  json row{{"messages", std::move(rows)}};
  AddColumns(row, t);
  return row;
}

StatusOr<std::vector<json>> TrlMessages(const dataset::Trajectory& t, const FormatOptions& options) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<llm::Message> messages, Messages(t));
  std::map<std::string, std::string> names = CallNames(messages);
  std::vector<json> rows;
  rows.reserve(messages.size());
  for (const llm::Message& m : messages) rows.push_back(TrlMessage(m, options, names));
  return rows;
}

std::optional<size_t> AssistantMessageOf(const std::vector<json>& messages, int turn) {
  int seen = 0;
  for (size_t i = 0; i < messages.size(); ++i)
    if (messages[i].value("role", "") == "assistant" && ++seen == turn) return i;
  return std::nullopt;
}

StatusOr<json> PairsRow(const dataset::Trajectory& t, const FormatOptions& options) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<llm::Message> messages, Messages(t));
  int best = BestAssistant(t, messages);
  if (best < 0) return Status::InvalidArgument("record " + t.id + ": no assistant turn");
  std::map<std::string, std::string> names = CallNames(messages);
  json prompt = json::array();
  for (int i = 0; i < best; ++i) prompt.push_back(TrlMessage(messages[i], options, names));
  json row{{"prompt", std::move(prompt)},
           {"completion", json::array({TrlMessage(messages[best], options, names)})}};
  AddColumns(row, t);
  return row;
}

bool IsConversation(Format format) {
  switch (format) {
    case Format::kMessages:
    case Format::kPairs:
    case Format::kTurns:
    case Format::kPreference:
      return true;
    case Format::kTrajectory:
    case Format::kKernelBench:
      return false;
  }
  return false;  // not reached: the switch names every format
}

std::vector<Column> RowColumns(Format format) {
  std::vector<Column> columns;
  // What the record's conversation columns are followed by, per format.
  std::vector<Column> outcome = {{"compile_only", "bool"}, {"correct", "bool"}, {"speedup", "float64"},
                                 {"turns", "int64"}};
  switch (format) {
    case Format::kMessages:
      columns = {{"messages", "json_list"}};
      break;
    case Format::kPairs:
      columns = {{"prompt", "json_list"}, {"completion", "json_list"}};
      break;
    case Format::kTurns:
      columns = {{"prompt", "json_list"}, {"completion", "json_list"}};
      outcome = {{"compile_only", "bool"}, {"turn", "int64"},     {"status", "string"},
                 {"correct", "bool"},      {"speedup", "float64"}, {"turns", "int64"}};
      break;
    case Format::kPreference:
      columns = {{"prompt", "json_list"}, {"chosen", "json_list"}, {"rejected", "json_list"}};
      outcome = {{"rule", "string"},           {"chosen_id", "string"},        {"chosen_turn", "int64"},
                 {"chosen_speedup", "float64"}, {"chosen_kernel_ms", "float64"}, {"rejected_id", "string"},
                 {"rejected_turn", "int64"},    {"rejected_status", "string"},  {"rejected_speedup", "float64"},
                 {"rejected_kernel_ms", "float64"}};
      break;
    case Format::kTrajectory:
    case Format::kKernelBench:
      return columns;
  }
  std::vector<Column> provenance = {{"tools", "json_list"},
                                    {"id", "string"},
                                    {"run_id", "string"},
                                    {"task", "string"},
                                    {"level", "int64"},
                                    {"tags", "string_list"},
                                    {"task_source", "string"},
                                    {"task_license", "string"},
                                    {"teacher_provider", "string"},
                                    {"teacher_model", "string"},
                                    {"kforge_version", "string"},
                                    {"protocol", "string"}};
  std::vector<Column> measurements = {{"kernel_ms", "float64"},
                                      {"reference_ms", "float64"},
                                      {"bench_mode", "string"},
                                      {"gpu", "string"},
                                      {"judge_version", "int64"},
                                      {"torch_compile_ms", "float64"}};
  if (format == Format::kPreference) measurements.erase(measurements.begin());  // chosen_kernel_ms
  for (const std::vector<Column>* part : {&provenance, &outcome, &measurements})
    columns.insert(columns.end(), part->begin(), part->end());
  return columns;
}

json FeaturesDict(const std::vector<Column>& columns) {
  auto value = [](const char* dtype) { return json{{"dtype", dtype}, {"_type", "Value"}}; };
  json features = json::object();
  for (const Column& c : columns) {
    if (c.type == "json_list") {
      features[c.name] = {{"feature", {{"_type", "Json"}}}, {"_type", "List"}};
    } else if (c.type == "string_list") {
      features[c.name] = {{"feature", value("string")}, {"_type", "List"}};
    } else {
      features[c.name] = value(c.type.c_str());
    }
  }
  return features;
}

std::string FeaturesPython(const std::vector<Column>& columns) {
  std::string text = "Features({";
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column& c = columns[i];
    std::string type = c.type == "json_list"     ? "List(Json())"
                       : c.type == "string_list" ? "List(Value(\"string\"))"
                                                 : "Value(\"" + c.type + "\")";
    text += (i ? ", " : "") + json(c.name).dump() + ": " + type;
  }
  return text + "})";
}

json TrajectoryRow(const dataset::Trajectory& t, const FormatOptions& options) {
  json row = dataset::ToJson(t);
  for (json& m : row["messages"]) {
    if (!m.is_object()) continue;
    m.erase("blocks");
    if (!options.with_reasoning) {
      m.erase("reasoning_content");
      m.erase("reasoning");
    }
  }
  return row;
}

}  // namespace kforge::exporter
