// Export rows: TRL conversational messages, prompt/completion pairs, whole trajectories.
#include "kforge/export/formats.h"

#include "kforge/common/json_fields.h"

namespace kforge::exporter {
namespace {

using nlohmann::json;

/// Index of the assistant message that produced the best attempt (or, without one, the last
/// assistant message); -1 when there is none.
int BestAssistant(const dataset::Trajectory& t) {
  int last = -1, turn = 0;
  int wanted = t.best ? t.attempts[*t.best].turn : -1;
  for (size_t i = 0; i < t.messages.size(); ++i) {
    if (t.messages[i].role != common::Role::kAssistant) continue;
    last = static_cast<int>(i);
    if (++turn == wanted) return last;
  }
  return last;
}

void AddColumns(json& row, const dataset::Trajectory& t) {
  row["tools"] = common::TrlToolsToJson(t.tools);
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

bool HasAssistantTurn(const dataset::Trajectory& t) { return t.turns() > 0; }

StatusOr<json> MessagesRow(const dataset::Trajectory& t, const FormatOptions& options) {
  const int end = BestAssistant(t);
  if (end < 0) return Status::InvalidArgument("record " + t.id + ": no assistant turn");
  std::vector<json> messages = TrlMessages(t, options);
  messages.resize(static_cast<size_t>(end) + 1);
  json row{{"messages", std::move(messages)}};
  AddColumns(row, t);
  return row;
}

std::vector<json> TrlMessages(const dataset::Trajectory& t, const FormatOptions& options) {
  return common::TrlMessagesToJson(t.messages, options);
}

std::optional<size_t> AssistantMessageOf(const std::vector<json>& messages, int turn) {
  int seen = 0;
  for (size_t i = 0; i < messages.size(); ++i)
    if (messages[i].value("role", "") == "assistant" && ++seen == turn) return i;
  return std::nullopt;
}

StatusOr<json> PairsRow(const dataset::Trajectory& t, const FormatOptions& options) {
  const int best = BestAssistant(t);
  if (best < 0) return Status::InvalidArgument("record " + t.id + ": no assistant turn");
  std::vector<json> messages = TrlMessages(t, options);
  json row{{"prompt", std::vector<json>(messages.begin(), messages.begin() + best)},
           {"completion", json::array({std::move(messages[best])})}};
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
