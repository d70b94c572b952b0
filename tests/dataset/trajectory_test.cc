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
  t.messages = nlohmann::json::array({{{"role", "user"}, {"content", "write"}},
                                      {{"role", "assistant"}, {"content", "a"}},
                                      {{"role", "user"}, {"content", "fix"}},
                                      {{"role", "assistant"}, {"content", "b"}}});
  Attempt broken;
  broken.turn = 1;
  broken.status = "compile_error";
  Attempt fixed;
  fixed.turn = 2;
  fixed.status = "ok";
  fixed.compiled = fixed.correct = true;
  fixed.speedup = 1.5;
  t.attempts = {broken, fixed};
  t.best = 1;
  t.stop = "target_reached";
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

TEST(TrajectoryTest, AnIncorrectBestHasNoSpeedup) {
  Trajectory t = Sample();
  t.attempts[1].correct = false;
  EXPECT_FALSE(t.correct());
  EXPECT_FALSE(t.speedup());
  EXPECT_FALSE(t.first_correct_turn());
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
      {"task type", [](nlohmann::json& r) { r["task"]["level"] = "one"; }, "t.task.level: wrong type"},
      {"attempt", [](nlohmann::json& r) { r["attempts"][1].erase("status"); },
       "t.attempts[1].status: missing"},
      {"best", [](nlohmann::json& r) { r["best"] = 7; }, "t.best"},
      {"messages", [](nlohmann::json& r) { r["messages"] = 3; }, "t.messages"},
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

}  // namespace
}  // namespace kforge::dataset
