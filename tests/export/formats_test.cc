#include "kforge/export/formats.h"

#include <gtest/gtest.h>

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
  EXPECT_FALSE(row.contains("tools")) << "no tools offered: no tools column";
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
  ASSERT_TRUE(call["function"]["arguments"].is_string())
      << "arguments are JSON text, as OpenAI and TRL write them";
  json arguments = json::parse(call["function"]["arguments"].get<std::string>());
  EXPECT_EQ(arguments["source"], testing::kReluSource);
  const json& result = row["messages"][3];
  EXPECT_EQ(result["tool_call_id"], "call_1");
  EXPECT_EQ(result["name"], "run");
  ASSERT_TRUE(row.contains("tools"));
  EXPECT_EQ(row["tools"][0]["function"]["name"], "run");
}

TEST(FormatsTest, MessagesStopAtTheBestAttempt) {
  testing::RecordSpec spec;
  spec.turns = 3;
  dataset::Trajectory t = testing::MakeRecord(spec);
  // Make turn 2 the best: correct and faster than turn 3.
  t.attempts[1].status = "ok";
  t.attempts[1].correct = t.attempts[1].compiled = true;
  t.attempts[1].speedup = 9.0;
  t.best = 1;
  json row = *MessagesRow(t, {});
  EXPECT_EQ(Roles(row["messages"]).size(), 5u) << "system, user, assistant, user, assistant (turn 2)";
  EXPECT_EQ(row["speedup"], 9.0);
}

TEST(FormatsTest, PairsFromTheTaskViewToTheFinalSolution) {
  for (const char* protocol : {"text", "tools"}) {
    testing::RecordSpec spec;
    spec.protocol = protocol;
    spec.turns = 3;
    json row = *PairsRow(testing::MakeRecord(spec), {});
    EXPECT_EQ(Roles(row["prompt"]), (std::vector<std::string>{"system", "user"})) << protocol;
    ASSERT_EQ(row["completion"].size(), 1u);
    EXPECT_EQ(row["completion"][0]["role"], "assistant");
    EXPECT_EQ(row.contains("tools"), std::string(protocol) == "tools");
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

TEST(FormatsTest, AMalformedMessageNamesTheRecord) {
  dataset::Trajectory t = testing::MakeRecord({});
  t.messages[1]["role"] = "narrator";
  StatusOr<json> row = MessagesRow(t, {});
  ASSERT_FALSE(row.ok());
  EXPECT_NE(row.status().message().find("messages[1]"), std::string::npos) << row.status().message();
}

}  // namespace
}  // namespace kforge::exporter
