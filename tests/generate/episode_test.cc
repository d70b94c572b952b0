// RunEpisode on the CPU: a teacher on 127.0.0.1 (the OpenAI-compatible provider against a fake
// server) and a judge that answers from a script, no worker process. Each case checks the turns,
// what the teacher was told and why the episode stopped.
#include <gtest/gtest.h>

#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/http_server.h"
#include "generate/episode.h"
#include "generate/prompts.h"
#include "generate/reply.h"
#include "kforge/bench/judge.h"
#include "kforge/common/task.h"
#include "kforge/llm/client.h"

namespace kforge::generate {
namespace {

using nlohmann::json;

/// Judgments in the order of the script; the last one repeats. Keeps what it was given.
class ScriptedJudge : public bench::Judge {
 public:
  explicit ScriptedJudge(std::vector<bench::Judgment> script) : script_(std::move(script)) {}

  std::future<bench::Judgment> Submit(verify::SolutionInput input) override {
    std::lock_guard<std::mutex> lock(mu_);
    labels_.push_back(input.label);
    sources_.push_back(input.solution.ok() ? input.solution->source : "");
    std::promise<bench::Judgment> answer;
    answer.set_value(script_.at(std::min(next_++, script_.size() - 1)));
    return answer.get_future();
  }

  std::vector<std::string> labels() const {
    std::lock_guard<std::mutex> lock(mu_);
    return labels_;
  }
  std::vector<std::string> sources() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sources_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<bench::Judgment> script_;
  size_t next_ = 0;
  std::vector<std::string> labels_, sources_;
};

bench::Judgment Judged(common::VerdictStatus status, std::string message = "",
                       std::optional<double> speedup = std::nullopt) {
  bench::Judgment j;
  j.verdict.task = "demo/relu";
  j.verdict.status = status;
  j.verdict.message = std::move(message);
  if (status != common::VerdictStatus::kCompileError && status != common::VerdictStatus::kHarnessError)
    j.verdict.compile = common::CompileFacts{};
  if (speedup) {
    bench::BenchResult timed;
    timed.task = "demo/relu";
    timed.status = common::VerdictStatus::kOk;
    timed.speedup.ratio = *speedup;
    j.bench = timed;
  }
  return j;
}

const char kKernel[] =
    "```cuda\nextern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n```\n"
    "```json\n{\"launches\": [{\"kernel\": \"relu\", \"grid\": [\"cdiv(numel(x), 256)\"], \"block\": [256], "
    "\"args\": [\"x\", \"out0\", \"i64:numel(x)\"]}]}\n```\n";

fakes::FakeReply Completion(json message) {
  json body = {{"id", "c"},
               {"object", "chat.completion"},
               {"model", "m"},
               {"choices", {{{"index", 0}, {"message", std::move(message)}, {"finish_reason", "stop"}}}},
               {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 20}}}};
  return fakes::FakeReply::Json(200, body.dump());
}

fakes::FakeReply TextReply(const std::string& text) { return Completion({{"role", "assistant"}, {"content", text}}); }

fakes::FakeReply ToolReply(const std::string& tool) {
  json arguments = {{"source", "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {}\n"},
                    {"launches",
                     {{{"kernel", "relu"}, {"grid", {"cdiv(numel(x), 256)"}}, {"block", {256}},
                       {"args", {"x", "out0", "i64:numel(x)"}}}}}};
  json call = {{"id", "call_1"}, {"type", "function"},
               {"function", {{"name", tool}, {"arguments", arguments.dump()}}}};
  return Completion({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call}}});
}

class RunEpisodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = common::LoadTask(std::string(KFORGE_SOURCE_DIR) + "/tasks/demo/relu");
    ASSERT_TRUE(task.ok()) << task.status().message();
    task_ = std::move(*task);
    auto prompts = PromptSet::Load(std::string(KFORGE_SOURCE_DIR) + "/prompts");
    ASSERT_TRUE(prompts.ok()) << prompts.status().message();
    prompts_ = std::move(*prompts);
    options_.teacher = llm::ProviderSpec{llm::ProviderKind::kOpenAi, ""};
    options_.model = "m";
    options_.max_turns = 3;
    options_.target_speedup = 1.5;
  }

  /// Runs one episode against `server` and `judge`.
  dataset::Trajectory Run(fakes::FakeHttpServer& server, bench::Judge& judge, EpisodeEnd& end,
                          bool compile_only = false) {
    llm::ProviderOptions provider;
    provider.base_url = server.url() + "/v1";
    llm::ClientOptions client_options;
    client_options.max_attempts = 1;
    auto made = llm::MakeProvider(*options_.teacher, provider);
    EXPECT_TRUE(made.ok());
    auto client = llm::Client::Create(std::move(*made), client_options);
    EXPECT_TRUE(client.ok());
    std::vector<common::ToolSpec> tools =
        options_.protocol == dataset::Protocol::kTools ? SolutionTools() : std::vector<common::ToolSpec>{};
    EpisodeContext context{options_, prompts_, **client, judge, "system", tools, compile_only, std::nullopt, "run"};
    return RunEpisode(context, {&task_, View::kCode, 0, "class Model: pass\n", "run/demo/relu/0"}, end);
  }

  /// The text of every message the teacher was sent in request `i`.
  static std::string Sent(const fakes::FakeHttpServer& server, size_t i) {
    return json::parse(server.requests().at(i).body)["messages"].dump();
  }

  common::Task task_;
  PromptSet prompts_;
  GenerateOptions options_;
};

TEST_F(RunEpisodeTest, TargetReachedOnTheFirstFastEnoughKernel) {
  fakes::FakeHttpServer server;
  server.Enqueue(TextReply(kKernel));
  server.Enqueue(TextReply(kKernel));
  ScriptedJudge judge({Judged(common::VerdictStatus::kOk, "", 1.2), Judged(common::VerdictStatus::kOk, "", 2.0)});
  EpisodeEnd end;
  dataset::Trajectory t = Run(server, judge, end);
  EXPECT_EQ(end, EpisodeEnd::kFinished);
  EXPECT_EQ(t.stop, dataset::StopReason::kTargetReached);
  ASSERT_EQ(t.attempts.size(), 2u);
  EXPECT_EQ(server.request_count(), 2) << "the second kernel reached 1.5x: no third turn";
  EXPECT_EQ(t.attempts[0].turn, 1);
  EXPECT_TRUE(t.attempts[0].correct);
  EXPECT_DOUBLE_EQ(t.attempts[0].speedup.value_or(0), 1.2);
  EXPECT_DOUBLE_EQ(t.attempts[1].speedup.value_or(0), 2.0);
  EXPECT_EQ(t.best, 1) << "the fastest correct attempt";
  EXPECT_EQ(judge.labels(), (std::vector<std::string>{"run/demo/relu/0 turn 1", "run/demo/relu/0 turn 2"}));
  EXPECT_NE(judge.sources().at(0).find("fmaxf"), std::string::npos) << "the kernel of the reply was judged";
  // The teacher heard its speedup and the target it missed.
  const std::string second = Sent(server, 1);
  EXPECT_NE(second.find("1.20"), std::string::npos) << second;
  EXPECT_NE(second.find("1.5"), std::string::npos) << second;
}

// A timing flagged faster than light is no speedup: the episode goes on, the teacher hears that the
// timing was refused, and the record keeps the measurement but counts no speedup.
TEST_F(RunEpisodeTest, ATimingFasterThanLightIsRefused) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return TextReply(kKernel); });
  bench::Judgment cached = Judged(common::VerdictStatus::kOk, "", 201.7);
  cached.bench->flags = {"implausible_speedup", "faster_than_light"};
  ScriptedJudge judge({cached, Judged(common::VerdictStatus::kOk, "", 1.6)});
  EpisodeEnd end;
  dataset::Trajectory t = Run(server, judge, end);
  EXPECT_EQ(t.stop, dataset::StopReason::kTargetReached);
  ASSERT_EQ(t.attempts.size(), 2u) << "201x faster than light did not reach the 1.5x target";
  EXPECT_TRUE(t.attempts[0].correct);
  EXPECT_FALSE(t.attempts[0].speedup);
  EXPECT_EQ(t.attempts[0].suspect_timing, "faster_than_light");
  EXPECT_EQ(t.best, 1) << "the honest 1.6x kernel is the best";
  const std::string second = Sent(server, 1);
  EXPECT_NE(second.find("Timing refused (faster_than_light)"), std::string::npos) << second;
  // Written and read back: the flag stays, the speedup stays null.
  json record = dataset::ToJson(t);
  EXPECT_EQ(record["attempts"][0]["suspect_timing"], "faster_than_light");
  EXPECT_TRUE(record["attempts"][0]["speedup"].is_null());
  EXPECT_DOUBLE_EQ(record["attempts"][0]["bench"]["speedup"]["ratio"].get<double>(), 201.7);
  EXPECT_FALSE(record["attempts"][1].contains("suspect_timing"));
}

TEST_F(RunEpisodeTest, MaxTurnsWhenEveryKernelIsWrongAndTheTeacherHearsWhy) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return TextReply(kKernel); });
  ScriptedJudge judge({Judged(common::VerdictStatus::kMismatch, "output 0: 12 of 4096 elements differ")});
  EpisodeEnd end;
  dataset::Trajectory t = Run(server, judge, end);
  EXPECT_EQ(t.stop, dataset::StopReason::kMaxTurns);
  ASSERT_EQ(t.attempts.size(), 3u);
  EXPECT_EQ(server.request_count(), 3);
  for (const dataset::Attempt& a : t.attempts) {
    EXPECT_EQ(a.status, common::VerdictStatus::kMismatch);
    EXPECT_TRUE(a.compiled);
    EXPECT_FALSE(a.correct);
  }
  EXPECT_EQ(t.attempts[2].turn, 3);
  EXPECT_EQ(Sent(server, 0).find("12 of 4096 elements differ"), std::string::npos);
  EXPECT_NE(Sent(server, 1).find("12 of 4096 elements differ"), std::string::npos) << Sent(server, 1);
  EXPECT_EQ(t.best, 2) << "no correct attempt: the last that compiled";
}

TEST_F(RunEpisodeTest, CompiledEndsACompileOnlyEpisode) {
  fakes::FakeHttpServer server;
  server.Enqueue(TextReply(kKernel));
  ScriptedJudge judge({Judged(common::VerdictStatus::kOk)});
  EpisodeEnd end;
  dataset::Trajectory t = Run(server, judge, end, /*compile_only=*/true);
  EXPECT_EQ(t.stop, dataset::StopReason::kCompiled);
  ASSERT_EQ(t.attempts.size(), 1u);
  EXPECT_FALSE(t.attempts[0].correct) << "compile-only never says correct";
  EXPECT_TRUE(t.compile_only);
}

TEST_F(RunEpisodeTest, HarnessErrorWhenTheJudgeNeverJudged) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return TextReply(kKernel); });
  ScriptedJudge judge({Judged(common::VerdictStatus::kHarnessError, "worker exited")});
  EpisodeEnd end;
  dataset::Trajectory t = Run(server, judge, end);
  EXPECT_EQ(t.stop, dataset::StopReason::kHarnessError);
  EXPECT_EQ(t.attempts.size(), 3u);
  EXPECT_EQ(t.error, "worker exited");
}

TEST_F(RunEpisodeTest, LlmErrorEndsTheEpisodeWithoutJudging) {
  fakes::FakeHttpServer server;
  server.Enqueue(fakes::FakeReply::Json(400, R"({"error": {"message": "bad request", "type": "invalid_request_error"}})"));
  ScriptedJudge judge({Judged(common::VerdictStatus::kOk)});
  EpisodeEnd end;
  dataset::Trajectory t = Run(server, judge, end);
  EXPECT_EQ(t.stop, dataset::StopReason::kLlmError);
  EXPECT_TRUE(t.attempts.empty());
  EXPECT_TRUE(judge.labels().empty());
  EXPECT_NE(t.error.find("bad request"), std::string::npos) << t.error;
}

TEST_F(RunEpisodeTest, ARefusalEndsTheEpisodeWithItsTextAndIsNotAskedAgain) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) {
    return Completion({{"role", "assistant"}, {"content", nullptr}, {"refusal", "I can't help with that."}});
  });
  ScriptedJudge judge({Judged(common::VerdictStatus::kOk)});
  EpisodeEnd end;
  dataset::Trajectory t = Run(server, judge, end);
  EXPECT_EQ(t.stop, dataset::StopReason::kRefused);
  EXPECT_EQ(server.request_count(), 1) << "a refusal is not asked again";
  EXPECT_TRUE(judge.labels().empty());
  EXPECT_NE(t.error.find("I can't help with that."), std::string::npos) << t.error;
  ASSERT_FALSE(t.messages.empty());
  EXPECT_EQ(t.messages.back().role, common::Role::kAssistant) << "the refused turn stays in the history";
  EXPECT_EQ(t.messages.back().content, "I can't help with that.");
}

TEST_F(RunEpisodeTest, SubmittedAndNoSolutionWithTools) {
  options_.protocol = dataset::Protocol::kTools;
  {
    fakes::FakeHttpServer server;
    server.Enqueue(ToolReply("run"));
    server.Enqueue(ToolReply("submit"));
    ScriptedJudge judge({Judged(common::VerdictStatus::kMismatch, "output 0 differs"),
                         Judged(common::VerdictStatus::kOk, "", 1.1)});
    EpisodeEnd end;
    dataset::Trajectory t = Run(server, judge, end);
    EXPECT_EQ(t.stop, dataset::StopReason::kSubmitted);
    ASSERT_EQ(t.attempts.size(), 2u);
    EXPECT_EQ(t.attempts[0].tool_call_id, "call_1");
    EXPECT_NE(Sent(server, 1).find("output 0 differs"), std::string::npos) << "the run call's result";
  }
  {
    fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return TextReply("I cannot."); });
    ScriptedJudge judge({Judged(common::VerdictStatus::kOk)});
    EpisodeEnd end;
    dataset::Trajectory t = Run(server, judge, end);
    EXPECT_EQ(t.stop, dataset::StopReason::kNoSolution);
    EXPECT_EQ(server.request_count(), 3) << "a reply without a call is asked again, until the last turn";
    EXPECT_NE(Sent(server, 1).find("Call `run`"), std::string::npos);
    EXPECT_TRUE(judge.labels().empty());
  }
}

}  // namespace
}  // namespace kforge::generate
