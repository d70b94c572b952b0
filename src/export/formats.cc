// Export rows: TRL conversational messages, prompt/completion pairs, whole trajectories.
#include "kforge/export/formats.h"

#include <map>

#include "kforge/llm/chat.h"

namespace kforge::exporter {
namespace {

using nlohmann::json;

/// One message in OpenAI/TRL form. `call_names` maps tool call ids to tool names, for tool results.
json TrlMessage(const llm::Message& m, const FormatOptions& options,
                const std::map<std::string, std::string>& call_names) {
  json out{{"role", llm::RoleName(m.role)}, {"content", m.content}};
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const llm::ToolCall& call : m.tool_calls) {
      std::string arguments = call.arguments.is_string()
                                  ? call.arguments.get<std::string>()
                                  : call.arguments.dump(-1, ' ', false, json::error_handler_t::replace);
      calls.push_back({{"id", call.id},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", arguments}}}});
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

StatusOr<std::vector<llm::Message>> Messages(const dataset::Trajectory& t) {
  std::vector<llm::Message> messages;
  for (size_t i = 0; i < t.messages.size(); ++i) {
    StatusOr<llm::Message> m = llm::MessageFromJson(t.messages[i]);
    if (!m.ok())
      return Status::InvalidArgument("record " + t.id + ": messages[" + std::to_string(i) +
                                     "]: " + m.status().message());
    messages.push_back(std::move(*m));
  }
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
  if (t.tools.is_array() && !t.tools.empty()) row["tools"] = t.tools;
  json provenance = Provenance(t);
  for (auto& [key, value] : provenance.items()) row[key] = value;
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
          {"protocol", t.protocol},
          {"correct", t.correct()},
          {"speedup", speedup ? json(*speedup) : json(nullptr)},
          {"turns", t.turns()}};
}

StatusOr<json> MessagesRow(const dataset::Trajectory& t, const FormatOptions& options) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<llm::Message> messages, Messages(t));
  int end = BestAssistant(t, messages);
  size_t count = end < 0 ? messages.size() : static_cast<size_t>(end) + 1;
  std::map<std::string, std::string> names = CallNames(messages);
  json rows = json::array();
  for (size_t i = 0; i < count; ++i) rows.push_back(TrlMessage(messages[i], options, names));
  json row{{"messages", std::move(rows)}};
  AddColumns(row, t);
  return row;
}

StatusOr<json> PairsRow(const dataset::Trajectory& t, const FormatOptions& options) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<llm::Message> messages, Messages(t));
  int best = BestAssistant(t, messages);
  if (best < 0) return Status::InvalidArgument("record " + t.id + ": no assistant turn");
  std::map<std::string, std::string> names = CallNames(messages);
  json prompt = json::array();
  for (const llm::Message& m : messages) {
    if (m.role == llm::Role::kAssistant) break;
    prompt.push_back(TrlMessage(m, options, names));
  }
  json row{{"prompt", std::move(prompt)},
           {"completion", json::array({TrlMessage(messages[best], options, names)})}};
  AddColumns(row, t);
  return row;
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
