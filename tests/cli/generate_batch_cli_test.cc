// `kforge generate` as a batch against a real HTTP server on 127.0.0.1: an outage loses no episode,
// a storm of identical 400s stops the batch, options are checked before the first request, the
// dry run prints the first request, the spending cap holds across a resume, a reply cut at the
// token cap is named as such, and the response cache keeps samples apart. Compile-only feedback.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <chrono>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/http_server.h"
#include "fakes/task_root.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kBatchFixed =
    "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n";

std::string BatchTextReply() {
  return std::string("```cuda\n") + kBatchFixed +
         "```\n```json\n{\"launches\": [{\"kernel\": \"relu\", \"grid\": \"cdiv(numel(x), 256)\", "
         "\"block\": 256, \"args\": [\"x\", \"out0\", \"i64:numel(x)\"]}]}\n```\n";
}

json BatchOpenAiCompletion(const std::string& content, const std::string& finish = "stop", int completion = 50) {
  return {{"id", "c1"},
          {"object", "chat.completion"},
          {"model", "m"},
          {"choices",
           {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", finish}}}},
          {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", completion}}}};
}

fakes::FakeReply Ok() { return fakes::FakeReply::Json(200, BatchOpenAiCompletion(BatchTextReply()).dump()); }

struct BatchGenRun {
  int exit_code = -1;
  std::string out, err;
  std::vector<json> records;
};

class GenerateBatchCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("kforge-generate-batch-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(out_);
    fs::create_directories(out_.string() + ".d");
  }
  void TearDown() override {
    fs::remove_all(out_);
    fs::remove_all(out_.string() + ".d");
  }

  std::vector<json> Lines(const std::string& file) {
    std::vector<json> records;
    std::ifstream in(out_ / file);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) records.push_back(json::parse(line));
    return records;
  }

  BatchGenRun Generate(const std::string& args, const std::string& env = "", bool probe = false) {
    const std::string err = out_.string() + ".d/stderr";
    std::string command = env + " " + KFORGE_BINARY + " generate --tasks " + fakes::ShellQuote(tasks_.path()) +
                          " --compile-only --no-cache" + std::string(probe ? "" : " --no-probe") + " --out " + fakes::ShellQuote(out_) + " " + args + " 2>" +
                          fakes::ShellQuote(err);
    BatchGenRun run;
    fakes::CommandResult result = fakes::RunCommand(command);
    run.exit_code = result.exit_code;
    run.out = result.out;
    std::ifstream in(err);
    run.err.assign(std::istreambuf_iterator<char>(in), {});
    run.records = Lines("trajectories.jsonl");
    return run;
  }

  std::string OpenAi(const fakes::FakeHttpServer& server) {
    return " --teacher openai --model m --base-url " + server.url() + "/v1 --backoff-initial 0.01 --backoff-max 0.02 ";
  }

  fakes::TaskRoot tasks_{{"demo"}};
  fs::path out_;
};

TEST_F(GenerateBatchCliTest, AnOutageLosesNoEpisode) {
  std::atomic<bool> down{true};
  fakes::FakeHttpServer server([&](const fakes::HttpExchange&) {
    if (down) return fakes::FakeReply::Json(529, R"({"error":{"message":"Overloaded"}})");
    return Ok();
  });
  // The outage outlasts every retry: the episodes are kept apart, not written as final.
  BatchGenRun first = Generate("--filter 'demo/*' --samples 2 --max-attempts 3 --outage 0" + OpenAi(server));
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_TRUE(first.records.empty()) << first.records.size();
  EXPECT_NE(first.err.find("6 episodes ended on a transient teacher error"), std::string::npos) << first.err;
  std::vector<json> unfinished = Lines("unfinished.jsonl");
  ASSERT_EQ(unfinished.size(), 6u);
  EXPECT_NE(unfinished[0]["outcome"]["error"].get<std::string>().find("overloaded"), std::string::npos);
  // The provider is back: a rerun of the same command does every episode, once.
  down = false;
  BatchGenRun second = Generate("--filter 'demo/*' --samples 2 --max-attempts 3 --outage 0" + OpenAi(server));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  ASSERT_EQ(second.records.size(), 6u);
  std::set<std::string> ids;
  for (const json& r : second.records) {
    ids.insert(r["id"].get<std::string>());
    if (r["task"]["id"] == "demo/relu") {
      EXPECT_EQ(r["outcome"]["stop"], "compiled");
    }
    EXPECT_FALSE(r["attempts"].empty());
  }
  EXPECT_EQ(ids.size(), 6u);
}

TEST_F(GenerateBatchCliTest, ASustainedOutageStopsTheBatchWithExitTwo) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) {
    return fakes::FakeReply::Json(503, R"({"error":{"message":"upstream down"}})");
  });
  BatchGenRun run = Generate("--filter 'demo/*' --samples 4 --concurrency 2 --max-attempts 100 --outage 0.3" +
                        OpenAi(server));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(run.records.empty());
  EXPECT_NE(run.err.find("stopped: batch stopped: the teacher failed on transient errors"), std::string::npos)
      << run.err;
}

TEST_F(GenerateBatchCliTest, IdenticalBadRequestsStopTheBatchAndRetryErrorsRunsThemAgain) {
  std::atomic<bool> broken{true};
  fakes::FakeHttpServer server([&](const fakes::HttpExchange&) {
    if (broken)
      return fakes::FakeReply::Json(400, R"({"error":{"message":"Unsupported parameter: 'max_tokens'"}})");
    return Ok();
  });
  BatchGenRun run = Generate("--filter 'demo/*' --samples 4 --concurrency 1" + OpenAi(server));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(server.request_count(), 5);
  EXPECT_NE(run.err.find("stopped: batch stopped: 5 requests in a row failed with the same error "
                         "(invalid_request 400: HTTP 400: Unsupported parameter: 'max_tokens')"),
            std::string::npos)
      << run.err;
  // The four episodes before the fifth error were final llm_error records; --retry-errors runs them
  // again once the cause is fixed, and nothing is written twice.
  ASSERT_EQ(run.records.size(), 4u);
  for (const json& r : run.records) EXPECT_EQ(r["outcome"]["stop"], "llm_error");
  broken = false;
  // A plain rerun does the rest and says that the errors stay final.
  BatchGenRun rest = Generate("--filter 'demo/*' --samples 4 --concurrency 1" + OpenAi(server));
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_NE(rest.err.find("4 episodes written earlier ended in llm_error and stay final (not counted below); "
                          "--retry-errors runs them again"),
            std::string::npos)
      << rest.err;
  BatchGenRun again = Generate("--filter 'demo/*' --samples 4 --concurrency 1 --retry-errors" + OpenAi(server));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("--retry-errors: 4 episodes that ended in llm_error run again"), std::string::npos)
      << again.err;
  ASSERT_EQ(again.records.size(), 12u);
  std::set<std::string> ids;
  for (const json& r : again.records) {
    ids.insert(r["id"].get<std::string>());
    EXPECT_NE(r["outcome"]["stop"], "llm_error");
  }
  EXPECT_EQ(ids.size(), 12u);
  EXPECT_EQ(Lines("unfinished.jsonl").size(), 4u) << "the four moved records";
}

TEST_F(GenerateBatchCliTest, OptionsAreCheckedBeforeTheFirstRequest) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return Ok(); });
  const std::string anthropic = " --teacher anthropic --base-url " + server.url();
  struct Case {
    std::string args;
    std::string expect;
  };
  const Case cases[] = {
      {anthropic + " --model claude-x --thinking-budget 8192", "--thinking-budget 8192 must be below --max-tokens 8192"},
      {anthropic + " --model claude-x --thinking-budget 512 --max-tokens 4096", "--thinking-budget 512: at least 1024"},
      {anthropic + " --model ''", "--model is required with --teacher anthropic"},
      {anthropic + " --model claude-x --reasoning-effort high", "--reasoning-effort: --teacher anthropic does not send it"},
      {anthropic + " --model claude-x --max-tokens-field max_tokens", "--max-tokens-field: only --teacher openai"},
      {" --teacher openai --model m --thinking-budget 2048 --base-url " + server.url(),
       "--thinking-budget: --teacher openai does not send it"},
      {" --teacher openai --model m --extra-body '[1]' --base-url " + server.url(), "--extra-body: expected a JSON object"},
      {" --teacher openai --model m --header 'no colon' --base-url " + server.url(), "--header no colon: expected NAME:VALUE"},
      {" --teacher openai --model m --max-cost 1 --base-url " + server.url(), "--max-cost: no price for model \"m\""},
      {anthropic + " --model claude-x --effort extreme", "--effort extreme: expected low, medium, high, xhigh or max"},
      {anthropic + " --model claude-sonnet-4-6 --effort xhigh", "--effort xhigh: only Claude Opus 4.7 takes it"},
      {anthropic + " --model claude-opus-4-7 --adaptive-thinking --thinking-display full",
       "--thinking-display full: expected summarized or omitted"},
      {anthropic + " --model claude-opus-4-7 --thinking-display summarized",
       "--thinking-display: thinking is off (--adaptive-thinking or --thinking-budget)"},
  };
  for (const Case& c : cases) {
    BatchGenRun run = Generate("--filter demo/relu" + c.args, "ANTHROPIC_API_KEY=sk-test-0123456789");
    EXPECT_EQ(run.exit_code, 2) << c.args << ": " << run.err;
    EXPECT_NE(run.err.find(c.expect), std::string::npos) << c.args << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << c.args << ": " << run.err;
  }
  EXPECT_EQ(server.request_count(), 0);
}

TEST_F(GenerateBatchCliTest, AOneTokenProbeStopsARunWhoseModelDoesNotExist) {
  std::atomic<int> n{0};
  fakes::FakeHttpServer server([&](const fakes::HttpExchange& ex) {
    ++n;
    json body = json::parse(ex.body);
    if (body["model"] != "m") return fakes::FakeReply::Json(404, R"({"error":{"message":"The model does not exist"}})");
    return Ok();
  });
  BatchGenRun run =
      Generate("--filter demo/relu --teacher openai --model nope --base-url " + server.url() + "/v1", "", true);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("model probe (--no-probe skips it): not_found"), std::string::npos) << run.err;
  EXPECT_EQ(n.load(), 1);
  EXPECT_TRUE(run.records.empty());
  EXPECT_FALSE(fs::exists(out_ / "trajectories.jsonl")) << "stopped before the run folder";
  BatchGenRun good = Generate("--filter demo/relu" + OpenAi(server), "", true);
  ASSERT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(n.load(), 3) << "the probe and one turn";
  EXPECT_EQ(json::parse(server.requests()[1].body)["max_tokens"], 16);
}

TEST_F(GenerateBatchCliTest, TheStartupLineAndTheRecordSayWhatWasSent) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return Ok(); });
  BatchGenRun run = Generate("--filter demo/relu --teacher openai --model gpt-5-mini --temperature 0.7 --base-url " +
                        server.url() + "/v1 --header 'OpenAI-Organization: org-1' --extra-body '{\"service_tier\": \"flex\"}'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("generate: sending gpt-5-mini max_completion_tokens 8192; not sent (the model or provider "
                         "takes no other value): temperature"),
            std::string::npos)
      << run.err;
  ASSERT_EQ(run.records.size(), 1u);
  const json& params = run.records[0]["teacher"]["params"];
  EXPECT_TRUE(params["temperature"].is_null()) << params.dump();
  EXPECT_EQ(params["max_tokens"], 8192);
  EXPECT_EQ(params["max_tokens_field"], "max_completion_tokens");
  fakes::HttpExchange sent = server.requests().front();
  json body = json::parse(sent.body);
  EXPECT_FALSE(body.contains("temperature"));
  EXPECT_EQ(body["service_tier"], "flex");
  EXPECT_EQ(sent.headers["openai-organization"], "org-1");
}

TEST_F(GenerateBatchCliTest, DryRunPrintsTheFirstRequestAndSendsNothing) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return Ok(); });
  BatchGenRun run = Generate("--filter demo/relu --dry-run --teacher anthropic --model claude-x --temperature 0.2 "
                        "--extra-body '{\"top_k\": 5, \"metadata\": {\"user_id\": \"sk-secret-0123456789\"}}' --base-url " +
                            server.url(),
                        "ANTHROPIC_API_KEY=sk-secret-0123456789");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(server.request_count(), 0);
  EXPECT_FALSE(fs::exists(out_ / "trajectories.jsonl"));
  json body = json::parse(run.out);
  EXPECT_EQ(body["model"], "claude-x");
  EXPECT_EQ(body["temperature"], 0.2);
  EXPECT_EQ(body["top_k"], 5);
  EXPECT_EQ(body["metadata"]["user_id"], "***") << "the key is masked";
  EXPECT_NE(body["messages"][0]["content"].dump().find("demo/relu"), std::string::npos);
  EXPECT_EQ(run.out.find("sk-secret-0123456789"), std::string::npos);
  // A deployment whose name hides a reasoning model: the overrides say how to write its request.
  BatchGenRun azure = Generate("--filter demo/relu --dry-run --teacher openai --model my-deployment --temperature 0.5 "
                          "--max-tokens-field max_completion_tokens --reasoning-model yes --base-url " +
                          server.url() + "/v1");
  ASSERT_EQ(azure.exit_code, 0) << azure.err;
  json azure_body = json::parse(azure.out);
  EXPECT_EQ(azure_body["max_completion_tokens"], 8192);
  EXPECT_FALSE(azure_body.contains("max_tokens"));
  EXPECT_FALSE(azure_body.contains("temperature"));
  // Newer Claude models: adaptive thinking and an effort, and then no temperature but 1.
  BatchGenRun adaptive = Generate("--filter demo/relu --dry-run --teacher anthropic --model claude-opus-4-7 "
                             "--temperature 0.2 --adaptive-thinking --effort high --base-url " + server.url(),
                             "ANTHROPIC_API_KEY=sk-secret-0123456789");
  ASSERT_EQ(adaptive.exit_code, 0) << adaptive.err;
  json wire = json::parse(adaptive.out);
  EXPECT_EQ(wire["thinking"], json({{"type", "adaptive"}, {"display", "summarized"}}))
      << "Opus 4.7 returns its thinking text only when asked: the trajectories record it";
  EXPECT_EQ(wire["output_config"], json({{"effort", "high"}}));
  EXPECT_FALSE(wire.contains("temperature"));
  EXPECT_NE(adaptive.err.find("effort \"high\"; not sent (the model or provider takes no other value): temperature"),
            std::string::npos)
      << adaptive.err;
  EXPECT_EQ(server.request_count(), 0);
}

TEST_F(GenerateBatchCliTest, AUsersPriceFileIsMergedOverTheInstalledTable) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return Ok(); });
  const std::string prices = out_.string() + ".d/prices.json";
  std::ofstream(prices) << R"({"schema": "kforge.prices/1", "models": {"my-model": {"input": 1, "output": 2}}})";
  // The installed table prices the current models; the user's adds one without replacing it.
  for (const std::string model : {"claude-opus-4-7", "claude-sonnet-4-6", "claude-opus-4-6"}) {
    BatchGenRun run = Generate("--filter demo/relu --dry-run --teacher anthropic --model " + model +
                                   " --max-cost 1 --prices " + prices + " --base-url " + server.url(),
                               "ANTHROPIC_API_KEY=sk-test-0123456789");
    EXPECT_EQ(run.exit_code, 0) << model << ": " << run.err;
  }
  BatchGenRun own = Generate("--filter demo/relu --dry-run --teacher openai --model my-model --max-cost 1 --prices " +
                             prices + " --base-url " + server.url() + "/v1");
  EXPECT_EQ(own.exit_code, 0) << own.err;
  BatchGenRun gpt = Generate("--filter demo/relu --dry-run --teacher openai --model gpt-5.1 --max-cost 1 --base-url " +
                             server.url() + "/v1");
  EXPECT_EQ(gpt.exit_code, 0) << gpt.err;
}

TEST_F(GenerateBatchCliTest, TheSpendingCapCountsTheRunFolderAcrossAResume) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return Ok(); });
  const std::string prices = out_.string() + ".d/prices.json";
  // $1 per million input tokens, $10 per million output: a reply of 1000 in + 50 out costs $0.0015;
  // the worst case of a request (its prompt, 256 output tokens) is a little over $0.0026 + input.
  std::ofstream(prices) << R"({"schema": "kforge.prices/1", "models": {"m": {"input": 1, "output": 10}}})";
  const std::string args = "--filter 'demo/*' --samples 4 --concurrency 1 --max-tokens 256 --prices " + prices +
                           OpenAi(server);
  auto spent = [&] {
    double total = 0;
    for (const char* file : {"trajectories.jsonl", "unfinished.jsonl"})
      for (const json& r : Lines(file)) total += r["usage"]["cost_usd"].get<double>();
    return total;
  };
  BatchGenRun first = Generate(args + " --max-cost 0.006");
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_NE(first.err.find("--max-cost reached"), std::string::npos) << first.err;
  size_t written = first.records.size();
  EXPECT_GE(written, 1u);
  EXPECT_LT(written, 12u);
  EXPECT_LE(spent(), 0.006);
  // The same budget again: what was spent counts, so little or nothing more runs.
  int requests = server.request_count();
  BatchGenRun same = Generate(args + " --max-cost 0.006");
  EXPECT_EQ(same.exit_code, 1) << same.err;
  EXPECT_LE(spent(), 0.006);
  EXPECT_LE(server.request_count() - requests, 1);
  // A higher budget finishes the run.
  BatchGenRun more = Generate(args + " --max-cost 1");
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_EQ(more.records.size(), 12u);
  EXPECT_NEAR(spent(), server.request_count() * 0.0015, 1e-9) << "every request paid for is counted once";
}

TEST_F(GenerateBatchCliTest, AReplyCutAtTheTokenCapIsNamedInTheFeedback) {
  std::atomic<int> n{0};
  fakes::FakeHttpServer server([&](const fakes::HttpExchange&) {
    if (n++ == 0) {
      std::string cut = BatchTextReply().substr(0, 120);  // inside the cuda block
      return fakes::FakeReply::Json(200, BatchOpenAiCompletion(cut, "length", 300).dump());
    }
    return Ok();
  });
  BatchGenRun run = Generate("--filter demo/relu --max-tokens 300" + OpenAi(server));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 1u);
  const json& r = run.records[0];
  EXPECT_EQ(r["attempts"][0]["status"], "no_solution");
  EXPECT_NE(r["attempts"][0]["parse_error"].get<std::string>().find("your reply was cut at 300 tokens"),
            std::string::npos)
      << r["attempts"][0].dump();
  json second = json::parse(server.requests().back().body);
  EXPECT_NE(second["messages"].back()["content"].get<std::string>().find("cut at 300 tokens"), std::string::npos);
}

TEST_F(GenerateBatchCliTest, TheSummarySaysHowMuchOfThePromptCameFromTheCache) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) {
    json message = {{"id", "msg_1"},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", "claude-test"},
                    {"content", {{{"type", "text"}, {"text", BatchTextReply()}}}},
                    {"stop_reason", "end_turn"},
                    {"usage",
                     {{"input_tokens", 100},
                      {"output_tokens", 50},
                      {"cache_read_input_tokens", 800},
                      {"cache_creation_input_tokens", 100}}}};
    return fakes::FakeReply::Json(200, message.dump());
  });
  BatchGenRun run = Generate("--filter demo/relu --samples 4 --teacher anthropic --model claude-test --base-url " +
                            server.url(),
                        "ANTHROPIC_API_KEY=sk-test-0123456789");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("generate: prompt cache: 80% of prompt tokens read from the cache (3200 read, 400 "
                         "written, 400 not cached)"),
            std::string::npos)
      << run.err;
}

TEST_F(GenerateBatchCliTest, TheCacheWarmUpIsSkippedWhenThePrefixIsBelowTheModelsMinimum) {
  std::atomic<int> in_flight{0}, most{0};
  fakes::FakeHttpServer server([&](const fakes::HttpExchange&) {
    const int now = ++in_flight;
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    --in_flight;
    json message = {{"id", "msg_1"},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", "claude-opus-4-7"},
                    {"content", {{{"type", "text"}, {"text", BatchTextReply()}}}},
                    {"stop_reason", "end_turn"},
                    {"usage", {{"input_tokens", 1000}, {"output_tokens", 50}}}};
    return fakes::FakeReply::Json(200, message.dump());
  });
  BatchGenRun run = Generate("--filter demo/relu --samples 3 --teacher anthropic --model claude-opus-4-7 --base-url " +
                                 server.url(),
                             "ANTHROPIC_API_KEY=sk-test-0123456789");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("--cache-warmup skipped for 1 of 1 prompts"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("below claude-opus-4-7's cache minimum of 4096 tokens"), std::string::npos) << run.err;
  EXPECT_EQ(most.load(), 3) << "the samples started together, none held back for a cache it cannot write";
}

/// A Message Batches server: each batch's results are an Anthropic message per request (a kernel that
/// does not compile on turn 1, the fixed one after), ended once `ended` is set.
struct FakeBatchServer {
  std::atomic<bool> ended{true};
  std::atomic<int> created{0}, polls{0}, messages{0};
  std::atomic<int> failing_polls{0};   // the next polls that answer 500
  std::atomic<bool> expire_one{false};  // the first request of the next batch expires
  std::mutex mu;
  std::map<std::string, std::string> results;
  std::string url;
  fakes::FakeHttpServer server{[this](const fakes::HttpExchange& ex) { return Answer(ex); }};

  FakeBatchServer() { url = server.url(); }

  fakes::FakeReply Answer(const fakes::HttpExchange& ex) {
    const std::string batches = "/v1/messages/batches";
    if (ex.method == "POST" && ex.path == "/v1/messages") {  // the interactive API, for comparison
      ++messages;
      return fakes::FakeReply::Json(200, Message(json::parse(ex.body)).dump());
    }
    if (ex.method == "POST" && ex.path == batches) {
      std::string id = "msgbatch_" + std::to_string(++created);
      std::string lines;
      const json body = json::parse(ex.body);
      for (const json& r : body["requests"]) {
        json result = {{"type", "succeeded"}, {"message", Message(r["params"])}};
        if (expire_one.exchange(false)) result = {{"type", "expired"}};
        lines += json{{"custom_id", r["custom_id"]}, {"result", result}}.dump() + "\n";
      }
      std::lock_guard<std::mutex> lock(mu);
      results[id] = lines;
      return fakes::FakeReply::Json(200, json{{"id", id}, {"processing_status", "in_progress"}}.dump());
    }
    if (ex.method == "GET" && ex.path.rfind(batches + "/", 0) == 0) {
      std::string rest = ex.path.substr(batches.size() + 1);
      std::lock_guard<std::mutex> lock(mu);
      if (size_t slash = rest.find('/'); slash != std::string::npos)
        return fakes::FakeReply::Json(200, results[rest.substr(0, slash)]);
      ++polls;
      if (failing_polls > 0 && failing_polls-- > 0)
        return fakes::FakeReply::Json(500, R"({"type":"error","error":{"type":"api_error","message":"Internal server error"}})");
      json status = {{"id", rest}, {"processing_status", ended ? "ended" : "in_progress"}};
      if (ended) status["results_url"] = url + batches + "/" + rest + "/results";
      return fakes::FakeReply::Json(200, status.dump());
    }
    return fakes::FakeReply::Json(404, R"({"type":"error","error":{"type":"not_found_error","message":"no"}})");
  }

  static json Message(const json& params) {
    int turns = 0;
    for (const json& m : params["messages"]) turns += m["role"] == "assistant";
    std::string text = BatchTextReply();
    if (turns == 0) text.replace(text.find("threadIdx.x;"), 12, "threadIdx.x");  // a compile error first
    return {{"id", "msg"},
            {"type", "message"},
            {"role", "assistant"},
            {"model", "claude-test"},
            {"content", {{{"type", "text"}, {"text", text}}}},
            {"stop_reason", "end_turn"},
            {"usage", {{"input_tokens", 1000}, {"output_tokens", 100}}}};
  }
};

TEST_F(GenerateBatchCliTest, BatchApiSendsEachTurnAsOneBatchAtHalfThePrice) {
  FakeBatchServer batch;
  const std::string prices = out_.string() + ".d/prices.json";
  std::ofstream(prices) << R"({"schema": "kforge.prices/1", "models": {"claude-test": {"input": 1, "output": 10}}})";
  const std::string args = "--filter demo/relu --samples 4 --teacher anthropic --model claude-test --prices " +
                           prices + " --base-url " + batch.url;
  const std::string env = "ANTHROPIC_API_KEY=sk-test-0123456789";
  // (a failure shows in seconds, not after the batch retries)
  const std::string fast = " --max-attempts 2 --backoff-initial 0.01 --backoff-max 0.02";
  BatchGenRun interactive = Generate(args, env);
  ASSERT_EQ(interactive.exit_code, 0) << interactive.err;
  ASSERT_EQ(interactive.records.size(), 4u);
  const int interactive_requests = batch.server.request_count();
  EXPECT_EQ(interactive_requests, 8) << "4 episodes, 2 turns each";
  double interactive_cost = 0;
  for (const json& r : interactive.records) interactive_cost += r["usage"]["cost_usd"].get<double>();
  fs::remove_all(out_);

  BatchGenRun batched = Generate(args + fast + " --batch-api --batch-window 0.2 --batch-poll 0.05", env);
  ASSERT_EQ(batched.exit_code, 0) << batched.err << (Lines("unfinished.jsonl").empty() ? "" : Lines("unfinished.jsonl")[0]["outcome"].dump());
  ASSERT_EQ(batched.records.size(), 4u);
  EXPECT_EQ(batch.created.load(), 2) << "one batch per turn";
  EXPECT_EQ(batch.messages.load(), 8) << "no interactive request in batch mode";
  double batched_cost = 0;
  for (const json& r : batched.records) {
    EXPECT_EQ(r["outcome"]["stop"], "compiled");
    ASSERT_EQ(r["attempts"].size(), 2u);
    EXPECT_EQ(r["attempts"][0]["status"], "compile_error");
    batched_cost += r["usage"]["cost_usd"].get<double>();
  }
  EXPECT_NEAR(batched_cost, interactive_cost / 2, 1e-12);
  std::fprintf(stderr, "batch api: %d HTTP requests (%d batches, %d polls) against %d interactive\n",
               batch.server.request_count() - interactive_requests, batch.created.load(), batch.polls.load(),
               interactive_requests);
}

/// An OpenAI Batch API server: a file uploaded as multipart/form-data, a batch created on it, polled,
/// and its output file read; each request answered as FakeBatchServer's (a compile error on turn 1),
/// except requests whose last user message holds `refuse`, which go to the error file as 400s.
struct FakeOpenAiBatchServer {
  std::atomic<int> uploads{0}, created{0}, polls{0};
  std::mutex mu;
  std::map<std::string, std::string> files;    // file id -> content
  std::map<std::string, std::string> outputs;  // batch id -> [output file id, error file id] as "o e"
  std::string refuse = "\x01";
  std::string boundary_error;
  fakes::FakeHttpServer server{[this](const fakes::HttpExchange& ex) { return Answer(ex); }};

  fakes::FakeReply Answer(const fakes::HttpExchange& ex) {
    std::lock_guard<std::mutex> lock(mu);
    if (ex.method == "POST" && ex.path == "/v1/files") {
      const std::string type = ex.headers.count("content-type") ? ex.headers.at("content-type") : "";
      const std::string marker = "boundary=";
      if (type.rfind("multipart/form-data; ", 0) != 0 || type.find(marker) == std::string::npos) {
        boundary_error = "content-type " + type;
        return fakes::FakeReply::Json(400, R"({"error":{"message":"not multipart"}})");
      }
      const std::string boundary = "--" + type.substr(type.find(marker) + marker.size());
      size_t part = ex.body.find("name=\"file\"");
      size_t start = ex.body.find("\r\n\r\n", part) + 4;
      size_t end = ex.body.find("\r\n" + boundary + "--", start);
      if (part == std::string::npos || end == std::string::npos || ex.body.find("name=\"purpose\"") == std::string::npos) {
        boundary_error = "body";
        return fakes::FakeReply::Json(400, R"({"error":{"message":"no file part"}})");
      }
      const std::string id = "file-in" + std::to_string(++uploads);
      files[id] = ex.body.substr(start, end - start);
      return fakes::FakeReply::Json(200, json{{"id", id}, {"object", "file"}, {"purpose", "batch"}}.dump());
    }
    if (ex.method == "POST" && ex.path == "/v1/batches") {
      const json body = json::parse(ex.body);
      const std::string id = "batch_" + std::to_string(++created);
      std::string out, err;
      std::istringstream in(files.at(body["input_file_id"].get<std::string>()));
      for (std::string line; std::getline(in, line);) {
        const json request = json::parse(line);
        EXPECT_EQ(request["url"], "/v1/chat/completions");
        const json& messages = request["body"]["messages"];
        int turns = 0;
        for (const json& m : messages) turns += m["role"] == "assistant";
        if (messages.back()["content"].dump().find(refuse) != std::string::npos) {
          err += json{{"custom_id", request["custom_id"]},
                      {"response", {{"status_code", 400}, {"body", {{"error", {{"message", "prompt refused"}}}}}}}}
                     .dump() + "\n";
          continue;
        }
        std::string text = BatchTextReply();
        if (turns == 0) text.replace(text.find("threadIdx.x;"), 12, "threadIdx.x");
        out += json{{"custom_id", request["custom_id"]},
                    {"response", {{"status_code", 200}, {"body", BatchOpenAiCompletion(text)}}},
                    {"error", nullptr}}
                   .dump() + "\n";
      }
      files["file-out-" + id] = out;
      files["file-err-" + id] = err;
      return fakes::FakeReply::Json(200, json{{"id", id}, {"status", "validating"}}.dump());
    }
    const std::string batches = "/v1/batches/";
    if (ex.method == "GET" && ex.path.rfind(batches, 0) == 0) {
      ++polls;
      const std::string id = ex.path.substr(batches.size());
      return fakes::FakeReply::Json(200, json{{"id", id},
                                              {"status", "completed"},
                                              {"output_file_id", "file-out-" + id},
                                              {"error_file_id", "file-err-" + id}}
                                             .dump());
    }
    const std::string file_prefix = "/v1/files/";
    if (ex.method == "GET" && ex.path.rfind(file_prefix, 0) == 0) {
      const std::string id = ex.path.substr(file_prefix.size(), ex.path.size() - file_prefix.size() - 8);
      if (files.count(id)) return fakes::FakeReply::Json(200, files[id]);
    }
    return fakes::FakeReply::Json(404, R"({"error":{"message":"no such route"}})");
  }
};

TEST_F(GenerateBatchCliTest, OpenAiBatchApiUploadsEachTurnAsOneFileAtHalfThePrice) {
  FakeOpenAiBatchServer batch;
  const std::string prices = out_.string() + ".d/prices.json";
  std::ofstream(prices) << R"({"schema": "kforge.prices/1", "models": {"m": {"input": 1, "output": 10}}})";
  const std::string args = "--filter demo/relu --samples 3 --teacher openai --model m --prices " + prices +
                           " --base-url " + batch.server.url() + "/v1 --max-attempts 2 --backoff-initial 0.01 "
                           "--backoff-max 0.02 --batch-api --batch-window 0.2 --batch-poll 0.05";
  BatchGenRun run = Generate(args, "OPENAI_API_KEY=sk-test-0123456789");
  ASSERT_EQ(run.exit_code, 0) << run.err << batch.boundary_error;
  ASSERT_EQ(run.records.size(), 3u);
  EXPECT_EQ(batch.uploads.load(), 2) << "one file per turn";
  EXPECT_EQ(batch.created.load(), 2);
  for (const json& r : run.records) {
    EXPECT_EQ(r["outcome"]["stop"], "compiled");
    ASSERT_EQ(r["attempts"].size(), 2u);
    EXPECT_EQ(r["attempts"][0]["status"], "compile_error");
    // 1000 prompt and 50 completion tokens a turn at $1 and $10 per million, halved.
    EXPECT_NEAR(r["usage"]["cost_usd"].get<double>(), 2 * (1000 * 1e-6 + 50 * 1e-5) / 2, 1e-12);
  }
  std::vector<json> state = Lines("batches.jsonl");
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0]["api"], "openai");
  EXPECT_EQ(state[0]["custom_ids"].size(), 3u);
  for (const fakes::HttpExchange& ex : batch.server.requests())
    if (ex.path == "/v1/files" || ex.path == "/v1/batches") {
      EXPECT_EQ(ex.headers.at("authorization"), "Bearer sk-test-0123456789");
    }
}

TEST_F(GenerateBatchCliTest, OpenAiBatchApiHandsARefusedRequestItsOwnError) {
  FakeOpenAiBatchServer batch;
  batch.refuse = "relu";  // every task prompt names its task: all are refused, each with its own 400
  BatchGenRun run = Generate("--filter demo/relu --samples 2 --teacher openai --model m --base-url " + batch.server.url() +
                            "/v1 --max-attempts 1 --batch-api --batch-window 0.1 --batch-poll 0.05 --max-identical-errors 0",
                        "OPENAI_API_KEY=sk-test-0123456789");
  ASSERT_EQ(run.records.size(), 2u) << run.err;
  EXPECT_EQ(run.exit_code, 1) << "every episode is a teacher error: " << run.err;
  for (const json& r : run.records) {
    EXPECT_EQ(r["outcome"]["stop"], "llm_error");
    EXPECT_NE(r["outcome"]["error"].get<std::string>().find("prompt refused"), std::string::npos) << r["outcome"];
  }
}

TEST_F(GenerateBatchCliTest, BatchApiAfterACrashCollectsTheBatchItAlreadyCreated) {
  FakeBatchServer batch;
  batch.ended = false;
  const std::string args = "--filter demo/relu --samples 3 --teacher anthropic --model claude-test --batch-api "
                           "--batch-window 0.1 --batch-poll 0.05 --base-url " + batch.url;
  // Killed while its first batch is being processed.
  BatchGenRun killed = Generate(args, "ANTHROPIC_API_KEY=sk-test-0123456789 timeout -s KILL 1.5");
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_TRUE(killed.records.empty());
  ASSERT_EQ(batch.created.load(), 1);
  EXPECT_TRUE(fs::exists(out_ / "batches.jsonl"));
  batch.ended = true;
  BatchGenRun resumed = Generate(args, "ANTHROPIC_API_KEY=sk-test-0123456789");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.records.size(), 3u);
  EXPECT_EQ(batch.created.load(), 2) << "turn 1 came from the batch made before the crash; turn 2 is a new one";
}

TEST_F(GenerateBatchCliTest, APollGlitchNeverPaysForABatchTwice) {
  // One 500 while polling (retried by the poll itself), then polls failing for longer than a poll's
  // own retries (the requests' retries wait for the batch in flight): one batch per turn either way.
  for (int failing : {1, 12}) {
    FakeBatchServer batch;
    batch.failing_polls = failing;
    fs::remove_all(out_);
    BatchGenRun run = Generate("--filter demo/relu --samples 3 --teacher anthropic --model claude-test --batch-api "
                               "--batch-window 0.1 --batch-poll 0.01 --max-attempts 8 --backoff-initial 0.01 "
                               "--backoff-max 0.02 --base-url " + batch.url,
                               "ANTHROPIC_API_KEY=sk-test-0123456789");
    ASSERT_EQ(run.exit_code, 0) << failing << ": " << run.err;
    EXPECT_EQ(run.records.size(), 3u) << failing;
    EXPECT_EQ(batch.created.load(), 2) << failing << " failing polls: one batch per turn";
    std::fprintf(stderr, "poll glitch (%d failing polls): %d batches created for 2 windows, %d polls\n", failing,
                 batch.created.load(), batch.polls.load());
  }
}

TEST_F(GenerateBatchCliTest, AnExpiredRequestGoesInANewBatchAndTheLogSaysSo) {
  FakeBatchServer batch;
  batch.expire_one = true;
  BatchGenRun run = Generate("--filter demo/relu --samples 3 --teacher anthropic --model claude-test --batch-api "
                             "--batch-window 0.1 --batch-poll 0.01 --backoff-initial 0.01 --backoff-max 0.02 "
                             "--base-url " + batch.url,
                             "ANTHROPIC_API_KEY=sk-test-0123456789");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.records.size(), 3u);
  EXPECT_NE(run.err.find("1 request expired (not run, not billed); a retry sends it in a new batch"), std::string::npos)
      << run.err;
  EXPECT_GE(batch.created.load(), 3) << "the expired request was sent again";
  std::map<std::string, int> batches_of;  // custom id -> batches that held it
  for (const json& line : Lines("batches.jsonl"))
    for (const json& id : line["custom_ids"]) ++batches_of[id.get<std::string>()];
  int twice = 0;
  for (const auto& [id, n] : batches_of) twice += n == 2;
  EXPECT_EQ(twice, 1) << "only the expired request is in two batches";
}

TEST_F(GenerateBatchCliTest, TheSpendingCapWaitsForReservationsInsteadOfStopping) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) {
    fakes::FakeReply reply = Ok();
    reply.delay_ms = 50;
    return reply;
  });
  const std::string prices = out_.string() + ".d/prices.json";
  // Claude Sonnet's prices: a reply (1000 in, 50 out) costs $0.00375; a request at the default 8192
  // max tokens reserves about $0.13, so that $0.5 holds three of them at once.
  std::ofstream(prices) << R"({"schema": "kforge.prices/1", "models": {"m": {"input": 3, "output": 15}}})";
  BatchGenRun run = Generate("--filter demo/relu --samples 8 --concurrency 8 --max-cost 0.5 --prices " + prices +
                             OpenAi(server));
  double spent = 0;
  for (const json& r : run.records) spent += r["usage"]["cost_usd"].get<double>();
  std::fprintf(stderr, "--max-cost 0.5, 8 episodes: %zu done, $%.4f spent, exit %d\n", run.records.size(), spent,
               run.exit_code);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.records.size(), 8u);
  EXPECT_NEAR(spent, 8 * 0.00375, 1e-9);
  // A cap below one request's worst case: nothing is in flight, and the message names the reservation.
  fs::remove_all(out_);
  BatchGenRun small = Generate("--filter demo/relu --samples 2 --max-cost 0.1 --prices " + prices + OpenAi(server));
  EXPECT_EQ(small.exit_code, 1) << small.err;
  EXPECT_TRUE(small.records.empty());
  EXPECT_NE(small.err.find("--max-cost reached"), std::string::npos) << small.err;
}

TEST_F(GenerateBatchCliTest, TheProbeSendsTheRunsOwnParametersAndItsCostCounts) {
  // A model that refuses any temperature (as newer Claude models do) and wants max_tokens above a
  // thinking budget: the probe finds the first before any episode is written, and passes the second.
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    const json body = json::parse(ex.body);
    if (body.contains("temperature"))
      return fakes::FakeReply::Json(400, R"({"type":"error","error":{"type":"invalid_request_error",)"
                                         R"("message":"temperature is deprecated for this model."}})");
    if (body.contains("thinking") && body["max_tokens"] <= body["thinking"]["budget_tokens"])
      return fakes::FakeReply::Json(400, R"({"type":"error","error":{"type":"invalid_request_error",)"
                                         R"("message":"max_tokens must be greater than thinking.budget_tokens"}})");
    json message = {{"id", "msg"},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", "claude-test"},
                    {"content", {{{"type", "text"}, {"text", BatchTextReply()}}}},
                    {"stop_reason", "end_turn"},
                    {"usage", {{"input_tokens", 1000}, {"output_tokens", 10}}}};
    return fakes::FakeReply::Json(200, message.dump());
  });
  const std::string prices = out_.string() + ".d/prices.json";
  std::ofstream(prices) << R"({"schema": "kforge.prices/1", "models": {"claude-test": {"input": 1, "output": 10}}})";
  const std::string args = "--filter demo/relu --samples 3 --teacher anthropic --model claude-test --prices " + prices +
                           " --base-url " + server.url();
  const std::string env = "ANTHROPIC_API_KEY=sk-test-0123456789";
  BatchGenRun hot = Generate(args + " --temperature 0.5", env, /*probe=*/true);
  EXPECT_EQ(hot.exit_code, 2) << hot.err;
  EXPECT_NE(hot.err.find("model probe (--no-probe skips it): invalid_request: HTTP 400 invalid_request_error: "
                         "temperature is deprecated"),
            std::string::npos)
      << hot.err;
  EXPECT_TRUE(hot.records.empty());
  EXPECT_EQ(server.request_count(), 1) << "stopped before any episode";
  BatchGenRun thinking =
      Generate(args + R"( --extra-body '{"thinking": {"type": "enabled", "budget_tokens": 2048}}')", env, true);
  ASSERT_EQ(thinking.exit_code, 0) << thinking.err;
  ASSERT_EQ(thinking.records.size(), 3u);
  const json probe = json::parse(server.requests()[1].body);
  EXPECT_EQ(probe["max_tokens"], 2048 + 16);
  EXPECT_EQ(probe["thinking"]["budget_tokens"], 2048);
  // The probe was billed (1000 in, 10 out at $1 and $10 per million): the run folder keeps it.
  std::vector<json> kept = Lines("unfinished.jsonl");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0]["probe"], true);
  EXPECT_NEAR(kept[0]["usage"]["cost_usd"].get<double>(), 0.0011, 1e-12);
  EXPECT_NE(thinking.err.find("$0.0044"), std::string::npos) << "the summary counts the probe: " << thinking.err;
}

TEST_F(GenerateBatchCliTest, TheResponseCacheKeepsSamplesApart) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) { return Ok(); });
  const std::string cache = out_.string() + ".d/cache";
  const std::string prices = out_.string() + ".d/prices.json";
  std::ofstream(prices) << R"({"schema": "kforge.prices/1", "models": {"m": {"input": 3, "output": 15}}})";
  const std::string priced = " --prices " + prices + " --max-cost 1";
  BatchGenRun run =
      Generate("--filter demo/relu --samples 3 --temperature 0.8 --llm-cache " + cache + priced + OpenAi(server));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(server.request_count(), 3) << "one request per sample, none served from another sample's reply";
  // Again in a fresh run folder: every sample comes from the cache.
  fs::remove_all(out_);
  BatchGenRun cached =
      Generate("--filter demo/relu --samples 3 --temperature 0.8 --llm-cache " + cache + priced + OpenAi(server));
  ASSERT_EQ(cached.exit_code, 0) << cached.err;
  EXPECT_EQ(server.request_count(), 3);
  EXPECT_EQ(cached.records.size(), 3u);
  double spent = 0;
  for (const json& r : cached.records) spent += r["usage"]["cost_usd"].get<double>();
  EXPECT_EQ(spent, 0) << "replies from the cache are not spend";
  EXPECT_NE(cached.err.find("0 harness errors, $0.0000"), std::string::npos) << cached.err;
}

}  // namespace
}  // namespace kforge
