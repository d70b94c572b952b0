#include "kforge/export/formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "export/record_builder.h"

namespace kforge::exporter {
namespace {

using nlohmann::json;

std::vector<std::string> Roles(const json& messages) {
  std::vector<std::string> roles;
  for (const json& m : messages) roles.push_back(m["role"]);
  return roles;
}

TEST(FormatsTest, MessagesOfTheTextProtocol) {
  testing::RecordSpec spec;
  spec.turns = 2;
  spec.reasoning = "think";
  json row = *MessagesRow(testing::MakeRecord(spec), {});
  EXPECT_EQ(Roles(row["messages"]),
            (std::vector<std::string>{"system", "user", "assistant", "user", "assistant"}));
  ASSERT_TRUE(row.contains("tools")) << "every row has every column";
  EXPECT_TRUE(row["tools"].is_null()) << "no tools offered: null";
  for (const json& m : row["messages"]) {
    EXPECT_FALSE(m.contains("blocks")) << "thinking blocks are never exported";
    EXPECT_FALSE(m.contains("reasoning_content")) << "reasoning is off by default";
    EXPECT_TRUE(m["content"].is_string());
  }
  EXPECT_NE(row["messages"][4]["content"].get<std::string>().find("```cuda"), std::string::npos);
  // Provenance columns.
  EXPECT_EQ(row["task"], "kernelbench/level1/19_ReLU");
  EXPECT_EQ(row["level"], 1);
  EXPECT_EQ(row["teacher_provider"], "replay");
  EXPECT_EQ(row["teacher_model"], "teacher-1");
  EXPECT_EQ(row["task_source"], "kernelbench");
  EXPECT_EQ(row["task_license"], "MIT");
  EXPECT_EQ(row["kforge_version"], "0.1.0");
  EXPECT_EQ(row["run_id"], "run1");
  EXPECT_EQ(row["speedup"], 1.5);
  EXPECT_EQ(row["correct"], true);

  json reasoning = *MessagesRow(testing::MakeRecord(spec), {.with_reasoning = true});
  EXPECT_EQ(reasoning["messages"][2]["reasoning_content"], "think");
  EXPECT_FALSE(reasoning["messages"][1].contains("reasoning_content"));
}

TEST(FormatsTest, MessagesOfTheToolsProtocolInTrlForm) {
  testing::RecordSpec spec;
  spec.protocol = "tools";
  spec.turns = 2;
  json row = *MessagesRow(testing::MakeRecord(spec), {});
  // The conversation ends with the assistant turn of the best attempt (the tool result after it is
  // not a training target).
  EXPECT_EQ(Roles(row["messages"]),
            (std::vector<std::string>{"system", "user", "assistant", "tool", "assistant"}));
  const json& call = row["messages"][2]["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["id"], "call_1");
  EXPECT_EQ(call["function"]["name"], "run");
  ASSERT_TRUE(call["function"]["arguments"].is_object())
      << "arguments are a JSON object, as Hugging Face chat templates take them";
  EXPECT_EQ(call["function"]["arguments"]["source"], testing::kReluSource);
  EXPECT_EQ(call["function"]["arguments"]["launches"], testing::ReluLaunches());

  json text = *MessagesRow(testing::MakeRecord(spec), {.arguments_as_text = true});
  const json& text_arguments = text["messages"][2]["tool_calls"][0]["function"]["arguments"];
  ASSERT_TRUE(text_arguments.is_string()) << "--tool-arguments text: OpenAI's JSON text";
  EXPECT_EQ(json::parse(text_arguments.get<std::string>()), call["function"]["arguments"]);
  const json& result = row["messages"][3];
  EXPECT_EQ(result["tool_call_id"], "call_1");
  EXPECT_EQ(result["name"], "run");
  ASSERT_TRUE(row.contains("tools"));
  EXPECT_EQ(row["tools"][0]["function"]["name"], "run");
}

TEST(FormatsTest, RepeatedToolCallIdsAreMadeUniqueWithTheirResults) {
  // A teacher that calls every tool "call_1": trainers refuse a row that repeats an id.
  testing::RecordSpec spec;
  spec.protocol = "tools";
  spec.turns = 3;
  dataset::Trajectory record = testing::MakeRecord(spec);
  for (common::Message& m : record.messages) {
    for (common::ToolCall& call : m.tool_calls) call.id = "call_1";
    if (m.role == common::Role::kTool) m.tool_call_id = "call_1";
  }
  StatusOr<json> made = MessagesRow(record, {});
  ASSERT_TRUE(made.ok()) << made.status().message();
  json row = *made;
  std::vector<std::string> calls, results;
  for (const json& m : row["messages"]) {
    if (m.contains("tool_calls")) calls.push_back(m["tool_calls"][0]["id"]);
    if (m["role"] == "tool") results.push_back(m["tool_call_id"]);
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"call_1", "call_1~2", "call_1~3"}));
  EXPECT_EQ(results, (std::vector<std::string>{"call_1", "call_1~2"})) << "each result answers its own call";
}

TEST(FormatsTest, MessagesStopAtTheBestAttempt) {
  testing::RecordSpec spec;
  spec.turns = 3;
  dataset::Trajectory t = testing::MakeRecord(spec);
  // Make turn 2 the best: correct and faster than turn 3.
  t.attempts[1].status = common::VerdictStatus::kOk;
  t.attempts[1].correct = t.attempts[1].compiled = true;
  t.attempts[1].speedup = 9.0;
  t.best = 1;
  json row = *MessagesRow(t, {});
  EXPECT_EQ(Roles(row["messages"]).size(), 5u) << "system, user, assistant, user, assistant (turn 2)";
  EXPECT_EQ(row["speedup"], 9.0);
}

TEST(FormatsTest, PairsFromTheTaskViewToTheFinalSolution) {
  // The prompt holds every message before the completion: the earlier attempts and the feedback on them,
  // which the completion answers.
  const std::map<std::string, std::vector<std::string>> prompts = {
      {"text", {"system", "user", "assistant", "user", "assistant", "user"}},
      {"tools", {"system", "user", "assistant", "tool", "assistant", "tool"}}};
  for (const char* protocol : {"text", "tools"}) {
    testing::RecordSpec spec;
    spec.protocol = protocol;
    spec.turns = 3;
    json row = *PairsRow(testing::MakeRecord(spec), {});
    EXPECT_EQ(Roles(row["prompt"]), prompts.at(protocol)) << protocol;
    ASSERT_EQ(row["completion"].size(), 1u);
    EXPECT_EQ(row["completion"][0]["role"], "assistant");
    ASSERT_TRUE(row.contains("tools"));
    EXPECT_EQ(!row["tools"].is_null(), std::string(protocol) == "tools");
    EXPECT_EQ(row["task"], "kernelbench/level1/19_ReLU");
  }
}

TEST(FormatsTest, TrajectoryKeepsTheRecordWithoutThinkingBlocks) {
  testing::RecordSpec spec;
  spec.reasoning = "think";
  dataset::Trajectory t = testing::MakeRecord(spec);
  json row = TrajectoryRow(t, {});
  EXPECT_EQ(row["schema"], "kforge.trajectory/1");
  EXPECT_EQ(row["attempts"].size(), 2u);
  for (const json& m : row["messages"]) {
    EXPECT_FALSE(m.contains("blocks"));
    EXPECT_FALSE(m.contains("reasoning_content"));
  }
  EXPECT_TRUE(dataset::TrajectoryFromJson(row, "row").ok()) << "still a valid record";
  EXPECT_EQ(TrajectoryRow(t, {.with_reasoning = true})["messages"][2]["reasoning_content"], "think");
}

TEST(FormatsTest, EveryRowHasTheSameColumnsWhateverTheProtocol) {
  for (Format format : {Format::kMessages, Format::kPairs}) {
    std::vector<std::string> names;
    for (const Column& c : RowColumns(format)) names.push_back(c.name);
    for (const char* protocol : {"text", "tools"}) {
      testing::RecordSpec spec;
      spec.protocol = protocol;
      spec.level.reset();
      spec.speedup.reset();
      dataset::Trajectory t = testing::MakeRecord(spec);
      json row = format == Format::kMessages ? *MessagesRow(t, {}) : *PairsRow(t, {});
      std::vector<std::string> keys;
      for (const auto& [key, value] : row.items()) keys.push_back(key);
      std::vector<std::string> sorted = names;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(keys, sorted) << FormatName(format) << " " << protocol << ": " << row.dump().substr(0, 300);
      EXPECT_TRUE(row["level"].is_null());
    }
  }
  EXPECT_TRUE(RowColumns(Format::kTrajectory).empty());
  EXPECT_TRUE(RowColumns(Format::kKernelBench).empty());
}

TEST(FormatsTest, FeaturesAsDatasetsWritesThem) {
  std::vector<Column> columns = {{"messages", "json_list"}, {"tags", "string_list"}, {"level", "int64"}};
  EXPECT_EQ(
      FeaturesPython(columns),
      R"(Features({"messages": List(Json()), "tags": List(Value("string")), "level": Value("int64")}))");
  EXPECT_EQ(FeaturesDict(columns),
            json::parse(R"({"messages": {"feature": {"_type": "Json"}, "_type": "List"},
                            "tags": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
                            "level": {"dtype": "int64", "_type": "Value"}})"));
}

TEST(FormatsTest, ARecordWithoutAnAssistantTurnMakesNoRow) {
  dataset::Trajectory t = testing::MakeRecord({});
  t.messages.erase(t.messages.begin() + 2, t.messages.end());  // a teacher error before any reply
  EXPECT_FALSE(HasAssistantTurn(t));
  EXPECT_TRUE(HasAssistantTurn(testing::MakeRecord({})));
  for (StatusOr<json> row : {MessagesRow(t, {}), PairsRow(t, {})}) {
    ASSERT_FALSE(row.ok());
    EXPECT_NE(row.status().message().find("no assistant turn"), std::string::npos) << row.status().message();
  }
}

// Which timings a preference pair never chooses: those kforge refused (suspect_timing), and an implausible
// speedup that was never timed again; one the re-timing confirmed is believed, as everywhere else.
TEST(FormatsTest, SuspectTimingFollowsTheRefusedFlagsAndTheRetiming) {
  dataset::Attempt a;
  EXPECT_FALSE(SuspectTiming(a)) << "nothing timed";
  a.bench.emplace();
  EXPECT_FALSE(SuspectTiming(a));
  a.suspect_timing = "timing_unconfirmed";
  EXPECT_TRUE(SuspectTiming(a));
  a.suspect_timing.clear();
  a.bench->flags = {"implausible_speedup"};
  EXPECT_TRUE(SuspectTiming(a)) << "a record from before the re-timing";
  a.bench->recheck_speedup = 14.5;
  EXPECT_FALSE(SuspectTiming(a)) << "confirmed by the re-timing";
}

}  // namespace
}  // namespace kforge::exporter
