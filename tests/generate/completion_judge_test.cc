// The completion judge's parts that need no compile: the shaped reward, the requests answered
// before anything is judged (the task list, prompts, malformed requests, the caps, unknown tasks), and
// what a timed judgment becomes (speedup, %SOL, a refused timing, the reward) with a scripted judge.
#include "kforge/generate/completion_judge.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <string>
#include <vector>

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
    options.bench.verify.compile_only = true;
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

/// Judgments in submission order, as a GPU judge would give them.
class ScriptedCompletionJudge : public bench::Judge {
 public:
  explicit ScriptedCompletionJudge(std::vector<bench::Judgment> script) : script_(std::move(script)) {}
  std::future<bench::Judgment> Submit(verify::SolutionInput input) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::promise<bench::Judgment> answer;
    answer.set_value(script_.at(next_++));
    return answer.get_future();
  }

 private:
  std::mutex mu_;
  std::vector<bench::Judgment> script_;
  size_t next_ = 0;
};

/// A judgment of `status`; timed (ok, `speedup`, %SOL `sol_pct`, `flag`) when a speedup is given.
bench::Judgment RlJudgment(common::VerdictStatus status, std::optional<double> speedup = std::nullopt,
                           double sol_pct = 0, const std::string& flag = "") {
  bench::Judgment j;
  j.verdict.task = "demo/relu";
  j.verdict.status = status;
  j.verdict.message = status == common::VerdictStatus::kOk ? "" : "output y differs";
  j.verdict.compile = common::CompileFacts{};
  j.verdict.compile->ms = 12.5;
  j.verdict.timing.gpu_ms = 40.0;
  if (speedup) {
    bench::BenchResult timed;
    timed.task = "demo/relu";
    timed.status = common::VerdictStatus::kOk;
    timed.speedup.ratio = *speedup;
    timed.wall_seconds = 0.25;
    if (sol_pct > 0) {
      common::Roofline roof;
      roof.sol_pct = sol_pct;
      timed.roofline = roof;
    }
    if (!flag.empty()) timed.flags.push_back(flag);
    j.bench = timed;
  }
  return j;
}

constexpr const char kRlRelu[] =
    "```cuda\nextern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n```\n"
    "```json\n{\"launches\": [{\"kernel\": \"relu\", \"grid\": [\"cdiv(numel(x), 256)\"], \"block\": [256], "
    "\"args\": [\"x\", \"out0\", \"i64:numel(x)\"]}]}\n```\n";

TEST(CompletionJudgeTimedTest, TimedJudgmentsGiveSpeedupSolAndTheShapedReward) {
  using common::VerdictStatus;
  ScriptedCompletionJudge scripted({
      RlJudgment(VerdictStatus::kOk, 2.0, 42.0),                       // correct, twice as fast
      RlJudgment(VerdictStatus::kOk, 0.5),                             // correct, slower
      RlJudgment(VerdictStatus::kOk, 9.0, 300.0, "faster_than_light"),  // a timing kforge refuses
      RlJudgment(VerdictStatus::kMismatch),
      RlJudgment(VerdictStatus::kHarnessError),
  });
  CompletionJudgeOptions options;
  options.tasks_root = std::string(KFORGE_SOURCE_DIR) + "/tasks";
  options.prompts_dir = std::string(KFORGE_SOURCE_DIR) + "/prompts";
  auto made = CompletionJudge::Create(options, &scripted);
  ASSERT_TRUE(made.ok()) << made.status().message();
  json batch = json::array();
  for (int i = 0; i < 5; ++i) batch.push_back({{"task", "demo/relu"}, {"completion", kRlRelu}});
  json reply = (*made)->Answer({{"op", "judge"}, {"batch", batch}}, [] { return false; });
  ASSERT_EQ(reply["results"].size(), 5u) << reply;
  const json& r = reply["results"];

  EXPECT_EQ(r[0]["status"], "ok");
  EXPECT_EQ(r[0]["correct"], true);
  EXPECT_DOUBLE_EQ(r[0]["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r[0]["sol_pct"].get<double>(), 42.0);
  EXPECT_NEAR(r[0]["reward"].get<double>(), 0.7, 1e-12);
  EXPECT_EQ(r[0]["done"], true);  // the default target: faster than the reference
  EXPECT_NE(r[0]["feedback"].get<std::string>().find("Correct: matches the reference on every trial."),
            std::string::npos);
  EXPECT_DOUBLE_EQ(r[0]["timing"]["compile_ms"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(r[0]["timing"]["gpu_check_ms"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(r[0]["timing"]["bench_ms"].get<double>(), 250.0);

  EXPECT_NEAR(r[1]["reward"].get<double>(), 0.475, 1e-12);
  EXPECT_EQ(r[1]["done"], false);
  EXPECT_NE(r[1]["feedback"].get<std::string>().find("It is correct but not yet faster than"), std::string::npos);

  EXPECT_TRUE(r[2]["speedup"].is_null());
  EXPECT_EQ(r[2]["suspect_timing"], "faster_than_light");
  EXPECT_EQ(r[2]["components"]["suspect_timing"], 1);
  EXPECT_NEAR(r[2]["reward"].get<double>(), 0.4, 1e-12);  // correct, but the speed term counts for nothing
  EXPECT_NE(r[2]["feedback"].get<std::string>().find("Timing refused (faster_than_light)"), std::string::npos);

  EXPECT_EQ(r[3]["status"], "mismatch");
  EXPECT_EQ(r[3]["correct"], false);
  EXPECT_NEAR(r[3]["reward"].get<double>(), 0.1, 1e-12);

  EXPECT_EQ(r[4]["status"], "harness_error");
  EXPECT_TRUE(r[4]["reward"].is_null());  // kforge's failure is no reward for the model
}

}  // namespace
}  // namespace kforge::generate
