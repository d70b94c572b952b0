// The completion judge's parts that need no compile: the shaped reward, and the requests answered
// before anything is judged (the task list, prompts, malformed requests, the caps, unknown tasks).
#include "kforge/generate/completion_judge.h"

#include <gtest/gtest.h>

#include <string>

namespace kforge::generate {
namespace {

using nlohmann::json;

TEST(ShapedRewardTest, FollowsTheFormulaInDocsRl) {
  struct Row {
    bool compiled, correct;
    std::optional<double> speedup;
    double reward;
  };
  const Row rows[] = {
      {false, false, std::nullopt, 0.0},
      {false, true, 2.0, 0.0},  // nothing counts without a compile
      {true, false, std::nullopt, 0.1},
      {true, false, 3.0, 0.1},  // a speedup of a wrong kernel counts for nothing
      {true, true, std::nullopt, 0.4},
      {true, true, 1.0, 0.55},
      {true, true, 2.0, 0.7},
      {true, true, 4.0, 1.0},
      {true, true, 40.0, 1.0},
      {true, true, 0.5, 0.475},
  };
  for (const Row& r : rows)
    EXPECT_NEAR(ShapedReward(r.compiled, r.correct, r.speedup), r.reward, 1e-12)
        << r.compiled << " " << r.correct << " " << r.speedup.value_or(-1);
}

class CompletionJudgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CompletionJudgeOptions options;
    options.tasks_root = std::string(KFORGE_SOURCE_DIR) + "/tasks";
    options.prompts_dir = std::string(KFORGE_SOURCE_DIR) + "/prompts";
    options.judge.verify.compile_only = true;
    options.max_batch = 3;
    options.max_completion_bytes = 64;
    auto made = CompletionJudge::Create(options);
    ASSERT_TRUE(made.ok()) << made.status().message();
    judge_ = std::move(*made);
  }
  json Ask(const json& request) {
    return judge_->Answer(request, [] { return false; });
  }

  std::unique_ptr<CompletionJudge> judge_;
};

TEST_F(CompletionJudgeTest, ListsTasksAndGivesGeneratesPrompt) {
  EXPECT_EQ(judge_->Name(), "kforge.rl/1");
  EXPECT_EQ(judge_->About()["max_batch"], 3);
  json tasks = Ask({{"op", "tasks"}});
  ASSERT_TRUE(tasks["tasks"].is_array());
  EXPECT_EQ(judge_->About()["tasks"], tasks["tasks"].size());
  json prompt = Ask({{"op", "prompt"}, {"task", "demo/vector_add"}, {"protocol", "tools"}});
  ASSERT_EQ(prompt["messages"].size(), 2u) << prompt;
  EXPECT_NE(prompt["messages"][1]["content"].get<std::string>().find("## Task `demo/vector_add`"),
            std::string::npos);
  EXPECT_EQ(prompt["tools"].size(), 2u);
  EXPECT_EQ(Ask({{"op", "prompt"}, {"task", "demo/relu"}})["tools"].size(), 0u);
}

TEST_F(CompletionJudgeTest, BadRequestsGetOneLineErrors) {
  struct Case {
    json request;
    std::string error;
  };
  const Case cases[] = {
      {json::array(), "request: expected an object, got array"},
      {{{"op", "fly"}}, "request.op: expected judge, prompt, tasks or stats, got \"fly\""},
      {{{"op", "prompt"}, {"task", "../../etc"}}, "request.task: no task \"../../etc\" on this server"},
      {{{"op", "prompt"}, {"task", "demo/relu"}, {"protocol", "smoke"}},
       "request.protocol: expected text or tools"},
      {{{"op", "judge"}}, "request.batch: expected a list of {task, completion}"},
      {{{"op", "judge"}, {"batch", json::array({1, 2, 3, 4})}},
       "4 completions, over the server's limit of 3"},
      {{{"op", "judge"}, {"batch", json::array()}, {"path", "/etc"}}, "path"},
  };
  for (const Case& c : cases) {
    json reply = Ask(c.request);
    ASSERT_TRUE(reply.contains("error")) << c.request << " -> " << reply;
    EXPECT_NE(reply["error"].get<std::string>().find(c.error), std::string::npos) << reply["error"];
    EXPECT_EQ(reply["error"].get<std::string>().find('\n'), std::string::npos);
  }
}

TEST_F(CompletionJudgeTest, EntriesThatCannotBeJudgedAreRefusedOneByOne) {
  json reply = Ask({{"op", "judge"},
                    {"batch",
                     {{{"task", "no/such"}, {"completion", "x"}},
                      {{"task", "demo/relu"}, {"completion", std::string(65, 'x')}},
                      {{"task", "demo/relu"}, {"completion", 42}}}}});
  ASSERT_EQ(reply["results"].size(), 3u) << reply;
  for (const json& r : reply["results"]) {
    EXPECT_EQ(r["status"], "refused") << r;
    EXPECT_TRUE(r["reward"].is_null());
  }
  EXPECT_NE(reply["results"][0]["error"].get<std::string>().find("no task \"no/such\""), std::string::npos);
  EXPECT_NE(reply["results"][1]["error"].get<std::string>().find("65 bytes, over the server's limit of 64"),
            std::string::npos);
  EXPECT_NE(reply["results"][2]["error"].get<std::string>().find("expected a string, a message object"),
            std::string::npos);
}

}  // namespace
}  // namespace kforge::generate
