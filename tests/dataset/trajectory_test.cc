#include "kforge/dataset/trajectory.h"

#include <gtest/gtest.h>

namespace kforge::dataset {
namespace {

Trajectory Sample() {
  Trajectory t;
  t.id = "r1/demo/relu/0";
  t.run_id = "r1";
  t.task.id = "demo/relu";
  t.task.level = 1;
  t.task.tags = {"elementwise"};
  t.task.view = "code";
  t.teacher = {"replay", "m", {{"temperature", 0.0}}};
  t.messages = {common::Message::User("write"), common::Message::Assistant("a"), common::Message::User("fix"),
                common::Message::Assistant("b")};
  Attempt broken;
  broken.turn = 1;
  broken.status = common::VerdictStatus::kCompileError;
  Attempt fixed;
  fixed.turn = 2;
  fixed.status = common::VerdictStatus::kOk;
  fixed.compiled = fixed.correct = true;
  fixed.speedup = 1.5;
  t.attempts = {broken, fixed};
  t.best = 1;
  t.stop = StopReason::kTargetReached;
  t.usage.input_tokens = 10;
  t.usage.cost_usd = 0.25;
  return t;
}

TEST(TrajectoryTest, RoundTripsAndDerivesTheOutcome) {
  Trajectory t = Sample();
  EXPECT_TRUE(t.correct());
  EXPECT_EQ(t.speedup(), 1.5);
  EXPECT_EQ(t.first_correct_turn(), 2);
  EXPECT_EQ(t.turns(), 2);
  nlohmann::json j = ToJson(t);
  EXPECT_EQ(j["schema"], "kforge.trajectory/1");
  EXPECT_EQ(j["outcome"]["correct"], true);
  EXPECT_EQ(j["outcome"]["first_correct_turn"], 2);
  auto back = TrajectoryFromJson(j, "t");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ToJson(*back), j);
}

// A verdict read from a record is typed; a record written before some of its keys existed (judge, say)
// is written back with the same keys and bytes, while the verdict says what they mean (judge 1).
TEST(TrajectoryTest, OldVerdictsAreReadTypedAndWrittenBackByteForByte) {
  nlohmann::json before_judge = {
      {"schema", "kforge.verdict/1"}, {"task", "demo/relu"},  {"solution", "r1 turn 2"},
      {"solution_hash", "sha256:ab"}, {"status", "mismatch"}, {"message", "out0: 7 of 100 elements differ"},
      {"compile", {{"ms", 12.5}, {"cached", false}, {"log", ""}}},
      {"seed", 18446744073709551615ull}, {"trials", nlohmann::json::array({{{"trial", 0}}})},
      {"checks", {{"guard_regions", "pass"}}}, {"device", nullptr}, {"toolchain", {{"arch", "sm_90a"}}},
      {"timing", {{"gpu_ms", 40.0}}}, {"memory", nullptr}};
  nlohmann::json fewer_keys = {{"schema", "kforge.verdict/1"}, {"task", "demo/relu"}, {"status", "ok"},
                               {"timing", {{"gpu_ms", 40.0}, {"reference_load_ms", 0.0}}}};
  nlohmann::json record = ToJson(Sample());
  record["attempts"][0]["verdict"] = before_judge;
  record["attempts"][1]["verdict"] = fewer_keys;
  const std::string line = record.dump();

  auto read = TrajectoryFromJson(nlohmann::json::parse(line), "t");
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_TRUE(read->attempts[0].verdict);
  const common::Verdict& old = *read->attempts[0].verdict;
  EXPECT_EQ(old.status, common::VerdictStatus::kMismatch);
  EXPECT_EQ(old.message, "out0: 7 of 100 elements differ");
  EXPECT_EQ(old.seed, 18446744073709551615ull);
  EXPECT_EQ(old.judge, 1) << "judged before the field: version 1";
  EXPECT_EQ(old.absent_keys, std::vector<std::string>{"judge"});
  EXPECT_EQ(read->attempts[1].verdict->status, common::VerdictStatus::kOk);
  EXPECT_FALSE(read->attempts[1].verdict->ToJson().contains("judge"));
  EXPECT_EQ(ToJson(*read).dump(), line);

  read->attempts[1].verdict = common::Verdict{};  // judged now: every key, this judge's version
  nlohmann::json now = ToJson(*read)["attempts"][1]["verdict"];
  EXPECT_EQ(now["judge"], common::kJudgeVersion);
  EXPECT_EQ(now.size(), before_judge.size() + 1);
}

// An attempt's solution is read typed. A record in an older plan form (`"block": [256]`) keeps its bytes
// while the solution is unchanged; a solution this kforge does not read keeps its JSON, with no typed value.
TEST(TrajectoryTest, SolutionsAreReadTypedAndWrittenBackByteForByte) {
  const nlohmann::json older_plan = {
      {"schema", "kforge.solution/1"}, {"task", "demo/relu"}, {"source", "__global__ void k(float* y) {}"},
      {"launches", {{{"kernel", "k"}, {"grid", {"cdiv(N, 256)"}}, {"block", {256}}, {"args", {"out0"}}}}}};
  const nlohmann::json unreadable = {{"schema", "kforge.solution/1"}, {"source", 7}};
  nlohmann::json record = ToJson(Sample());
  record["attempts"][0]["solution"] = unreadable;
  record["attempts"][1]["solution"] = older_plan;
  const std::string line = record.dump();

  auto read = TrajectoryFromJson(nlohmann::json::parse(line), "t");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_FALSE(read->attempts[0].solution) << "not a solution this kforge reads";
  ASSERT_TRUE(read->attempts[1].solution);
  const common::Solution& typed = *read->attempts[1].solution;
  EXPECT_EQ(typed.task, "demo/relu");
  ASSERT_EQ(typed.launches.size(), 1u);
  EXPECT_EQ(typed.launches[0].block, (std::vector<std::string>{"256", "1", "1"}));
  EXPECT_EQ(ToJson(*read).dump(), line);

  read->attempts[1].solution->source += "// changed\n";  // written in the canonical form once changed
  nlohmann::json now = SolutionToRecord(read->attempts[1]);
  EXPECT_EQ(now, common::SolutionToJson(*read->attempts[1].solution));
  EXPECT_EQ(now["launches"][0]["block"], (nlohmann::json{"256", "1", "1"}));
  EXPECT_TRUE(SolutionToRecord(Sample().attempts[0]).is_null()) << "no solution: null";
}

TEST(TrajectoryTest, SkillsAreWrittenOnlyWhenSetAndReadBack) {
  Trajectory t = Sample();
  EXPECT_FALSE(ToJson(t).contains("skills")) << "records without skills stay as they were";
  t.skills = {{"softmax-rows", "sha256:ab"}, {"gemm", "sha256:cd"}};
  nlohmann::json j = ToJson(t);
  ASSERT_EQ(j["skills"].size(), 2u);
  EXPECT_EQ(j["skills"][1]["hash"], "sha256:cd");
  auto back = TrajectoryFromJson(j, "t");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->skills, t.skills);
  j["skills"][0].erase("hash");
  EXPECT_EQ(TrajectoryFromJson(j, "t").status().message(), "t.skills[0].hash: missing");
}

TEST(TrajectoryTest, StopReasonsAndProtocolsAreReadByTheirNames) {
  for (const auto& [stop, name] : kStopReasonNames.rows) {
    Trajectory t = Sample();
    t.stop = stop;
    t.protocol = Protocol::kTools;
    nlohmann::json j = ToJson(t);
    EXPECT_EQ(j["outcome"]["stop"], std::string(name));
    EXPECT_EQ(j["protocol"], "tools");
    auto back = TrajectoryFromJson(j, "t");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->stop, stop) << name;
    EXPECT_EQ(back->protocol, Protocol::kTools);
  }
  nlohmann::json j = ToJson(Sample());
  j["outcome"]["stop"] = "gave_up";
  auto bad_stop = TrajectoryFromJson(j, "line 3");
  ASSERT_FALSE(bad_stop.ok());
  EXPECT_EQ(bad_stop.status().message(),
            "line 3.outcome.stop: \"gave_up\", expected target_reached, compiled, submitted, max_turns, "
            "no_solution, llm_error, harness_error, budget or refused");
  j = ToJson(Sample());
  j["protocol"] = "voice";
  auto bad_protocol = TrajectoryFromJson(j, "line 4");
  ASSERT_FALSE(bad_protocol.ok());
  EXPECT_EQ(bad_protocol.status().message(), "line 4.protocol: \"voice\", expected text or tools");
}

TEST(TrajectoryTest, AnIncorrectBestHasNoSpeedup) {
  Trajectory t = Sample();
  t.attempts[1].correct = false;
  EXPECT_FALSE(t.correct());
  EXPECT_FALSE(t.speedup());
  EXPECT_FALSE(t.first_correct_turn());
}

// A record written before `suspect_timing` existed, whose bench record was flagged faster than light:
// read back, its speedup counts nowhere.
TEST(TrajectoryTest, AnOlderRecordFlaggedFasterThanLightHasNoSpeedup) {
  nlohmann::json j = ToJson(Sample());
  j["attempts"][1]["bench"] = {{"schema", "kforge.bench/1"},
                               {"status", "ok"},
                               {"speedup", {{"ratio", 201.7}}},
                               {"flags", {"implausible_speedup", "faster_than_light"}}};
  j["attempts"][1]["speedup"] = 201.7;
  StatusOr<Trajectory> read = TrajectoryFromJson(j, "line 1");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(read->correct());
  EXPECT_FALSE(read->speedup());
  EXPECT_EQ(read->attempts[1].suspect_timing, "faster_than_light");
  EXPECT_EQ(ToJson(*read)["outcome"]["speedup"], nullptr);
  // An implausible speedup alone is believed.
  j["attempts"][1]["bench"]["flags"] = {"implausible_speedup"};
  read = TrajectoryFromJson(j, "line 1");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_DOUBLE_EQ(read->speedup().value_or(0), 201.7);
  EXPECT_FALSE(ToJson(*read)["attempts"][1].contains("suspect_timing"));
}

TEST(TrajectoryTest, BadRecordsNameThePath) {
  nlohmann::json j = ToJson(Sample());
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> edit;
    const char* expect;
  };
  const Case cases[] = {
      {"schema", [](nlohmann::json& r) { r["schema"] = "kforge.verdict/1"; }, "t.schema"},
      {"no id", [](nlohmann::json& r) { r.erase("id"); }, "t.id: missing"},
      {"task type", [](nlohmann::json& r) { r["task"]["level"] = "one"; },
       "t.task.level: expected an integer, got string"},
      {"attempt", [](nlohmann::json& r) { r["attempts"][1].erase("status"); },
       "t.attempts[1].status: missing"},
      {"best", [](nlohmann::json& r) { r["best"] = 7; }, "t.best"},
      {"verdict status",
       [](nlohmann::json& r) {
         r["attempts"][1]["verdict"] = {{"schema", "kforge.verdict/1"}, {"task", "demo/relu"}, {"status", "fine"}};
       },
       "t.attempts[1].verdict.status: unknown verdict status \"fine\""},
      {"verdict key",
       [](nlohmann::json& r) {
         r["attempts"][0]["verdict"] = {{"verdit", 1}};
       },
       "t.attempts[0].verdict.verdit: unknown field"},
      {"messages", [](nlohmann::json& r) { r["messages"] = 3; }, "t.messages: expected an array"},
      {"message role", [](nlohmann::json& r) { r["messages"][1]["role"] = "narrator"; },
       "t.messages[1]: role: unknown role \"narrator\""},
      {"tool message",
       [](nlohmann::json& r) {
         r["messages"][2] = {{"role", "tool"}, {"content", "x"}};
       },
       "t.messages[2]: tool_call_id: a tool message needs one"},
      {"tool spec",
       [](nlohmann::json& r) {
         r["tools"] = {{{"type", "function"}}};
       },
       "t.tools[0]: tool: missing name"},
  };
  for (const Case& c : cases) {
    nlohmann::json bad = j;
    c.edit(bad);
    auto parsed = TrajectoryFromJson(bad, "t");
    ASSERT_FALSE(parsed.ok()) << c.what;
    EXPECT_NE(parsed.status().message().find(c.expect), std::string::npos)
        << c.what << ": " << parsed.status().message();
  }
}

TEST(TrajectoryTest, FitRecordCutsTheLongestStringsAndFlagsTheRecord) {
  Trajectory t = Sample();
  t.messages[1].content = std::string(200000, 'a');
  t.messages[3].content = "line\n" + std::string(100000, '\n');  // escaped twice as long
  nlohmann::json record = ToJson(t);
  const size_t cap = 256 * 1024;
  ASSERT_GT(record.dump().size(), cap);
  EXPECT_TRUE(FitRecord(record, cap));
  EXPECT_LE(record.dump().size() + 1, cap);
  EXPECT_EQ(record["truncated"], true);
  std::string first = record["messages"][1]["content"];
  EXPECT_EQ(first.substr(0, 4096), std::string(4096, 'a'));
  EXPECT_NE(first.find("bytes cut]"), std::string::npos);
  EXPECT_EQ(record["messages"][0]["content"], "write") << "short strings are kept";
  StatusOr<Trajectory> back = TrajectoryFromJson(record, "r");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->truncated);
  EXPECT_TRUE(back->correct());
  // A record that fits is left as it is, and says nothing of truncation.
  nlohmann::json small = ToJson(Sample());
  EXPECT_FALSE(FitRecord(small, cap));
  EXPECT_FALSE(small.contains("truncated"));
  // Many short strings that cannot be cut: the header and outcome are kept.
  Trajectory many = Sample();
  for (int i = 0; i < 20000; ++i) many.messages.push_back(common::Message::User("x"));
  nlohmann::json crowded = ToJson(many);
  EXPECT_TRUE(FitRecord(crowded, cap));
  EXPECT_LE(crowded.dump().size() + 1, cap);
  EXPECT_EQ(crowded["id"], "r1/demo/relu/0");
  EXPECT_TRUE(TrajectoryFromJson(crowded, "r").ok());
}

}  // namespace
}  // namespace kforge::dataset
