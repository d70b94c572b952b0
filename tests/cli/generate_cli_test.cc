// `kforge generate` end to end against a real HTTP server on 127.0.0.1 that speaks the Anthropic and
// OpenAI APIs: a broken kernel, the compile error fed back, a fixed kernel; both protocols; thinking
// blocks echoed back; 429/529 on the way; streamed replies; kill -9 and resume; bad input. Feedback is
// compile-only, so the same tests run with and without a GPU.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/http_server.h"
#include "fakes/task_root.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kBroken =
    "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x\n"
    "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n";
const char* kFixed =
    "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n";
const json kPlan = {{"launches",
                     {{{"kernel", "relu"},
                       {"grid", {"cdiv(numel(x), 256)"}},
                       {"block", {256}},
                       {"args", {"x", "out0", "i64:numel(x)"}}}}}};
const char* kSignature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";

std::string TextReply(const char* source) {
  return std::string("Here it is.\n```cuda\n") + source + "```\n```json\n" + kPlan.dump() + "\n```\n";
}

json ToolInput(const char* source) {
  json input = kPlan;
  input["source"] = source;
  return input;
}

/// Assistant turns so far in an Anthropic or OpenAI request body: the turn being asked for is one more.
int AssistantTurns(const json& body) {
  int n = 0;
  for (const json& m : body["messages"])
    if (m.value("role", "") == "assistant") ++n;
  return n;
}

json AnthropicMessage(const json& content, const std::string& stop) {
  return {{"id", "msg_1"},
          {"type", "message"},
          {"role", "assistant"},
          {"model", "claude-test"},
          {"content", content},
          {"stop_reason", stop},
          {"usage", {{"input_tokens", 100}, {"output_tokens", 50}}}};
}

json OpenAiCompletion(const json& message, const std::string& finish) {
  return {{"id", "c1"},
          {"object", "chat.completion"},
          {"model", "gpt-test"},
          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish}}}},
          {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 50}}}};
}

struct GenRun {
  int exit_code = -1;
  std::string err;
  std::vector<json> records;
};

class GenerateCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("kforge-generate-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }

  std::vector<json> Records() {
    std::vector<json> records;
    std::ifstream in(out_ / "trajectories.jsonl");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) records.push_back(json::parse(line));
    return records;
  }

  GenRun Generate(const std::string& args, const std::string& env = "") {
    std::string err = (out_.string() + ".stderr");
    std::string command = env + " " + KFORGE_BINARY + " generate --tasks " +
                          fakes::ShellQuote(tasks_.path()) + " --compile-only --no-cache --no-probe --out " +
                          fakes::ShellQuote(out_) + " " + args + " 2>" + fakes::ShellQuote(err);
    GenRun run;
    run.exit_code = fakes::RunCommand(command).exit_code;
    std::ifstream in(err);
    run.err.assign(std::istreambuf_iterator<char>(in), {});
    run.records = Records();
    return run;
  }

  fakes::TaskRoot tasks_{{"demo"}};
  fs::path out_;
};

TEST_F(GenerateCliTest, AnthropicTextBrokenThenFixedWithRetriesOnTheWay) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    const char* source = AssistantTurns(body) == 0 ? kBroken : kFixed;
    return fakes::FakeReply::Json(
        200, AnthropicMessage({{{"type", "text"}, {"text", TextReply(source)}}}, "end_turn").dump());
  });
  server.Enqueue(fakes::FakeReply::Json(
      529, R"({"type":"error","error":{"type":"overloaded_error","message":"busy"}})"));
  server.Enqueue(
      fakes::FakeReply::Json(429, R"({"type":"error","error":{"type":"rate_limit_error","message":"slow"}})",
                             {{"retry-after-ms", "50"}}));
  GenRun run =
      Generate("--filter demo/relu --teacher anthropic --model claude-test --base-url " + server.url(),
               "ANTHROPIC_API_KEY=sk-test-0123456789");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 1u) << run.err;
  const json& r = run.records[0];
  EXPECT_EQ(r["schema"], "kforge.trajectory/1");
  EXPECT_EQ(r["task"]["id"], "demo/relu");
  EXPECT_EQ(r["teacher"]["provider"], "anthropic");
  ASSERT_EQ(r["attempts"].size(), 2u);
  EXPECT_EQ(r["attempts"][0]["status"], "compile_error");
  EXPECT_EQ(r["attempts"][1]["status"], "ok");
  EXPECT_EQ(r["outcome"]["stop"], "compiled");
  EXPECT_EQ(r["best"], 1);
  EXPECT_EQ(r["usage"]["requests"], 2);
  EXPECT_EQ(r["usage"]["input_tokens"], 200);
  // The second request carried the compile error, with the offending line quoted.
  std::vector<fakes::HttpExchange> requests = server.requests();
  ASSERT_EQ(requests.size(), 4u) << "529, 429, then two turns";
  json second = json::parse(requests.back().body);
  std::string feedback = second["messages"].back().dump();
  EXPECT_NE(feedback.find("expected a"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("line 3:"), std::string::npos) << feedback;
  EXPECT_EQ(requests.back().headers["x-api-key"], "sk-test-0123456789");
  // The key never reaches the run folder.
  for (const char* file : {"run.json", "trajectories.jsonl", "generate.log"}) {
    std::ifstream in(out_ / file);
    std::string text(std::istreambuf_iterator<char>(in), {});
    EXPECT_EQ(text.find("sk-test-0123456789"), std::string::npos) << file;
  }
  EXPECT_NE(run.err.find("generate: 1 episode written"), std::string::npos) << run.err;
}

TEST_F(GenerateCliTest, AnthropicToolsEchoThinkingBlocksAndEndOnSubmit) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    int turn = AssistantTurns(body) + 1;
    json content = {{{"type", "thinking"},
                     {"thinking", "Turn " + std::to_string(turn) + " plan."},
                     {"signature", kSignature}},
                    {{"type", "tool_use"},
                     {"id", "toolu_" + std::to_string(turn)},
                     {"name", turn == 1 ? "run" : "submit"},
                     {"input", ToolInput(turn == 1 ? kBroken : kFixed)}}};
    return fakes::FakeReply::Json(200, AnthropicMessage(content, "tool_use").dump());
  });
  GenRun run = Generate(
      "--filter demo/relu --protocol tools --teacher anthropic --model claude-test --max-tokens 4096 "
      "--thinking-budget 1024 --base-url " +
          server.url(),
      "ANTHROPIC_API_KEY=sk-test-0123456789");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 1u);
  const json& r = run.records[0];
  EXPECT_EQ(r["outcome"]["stop"], "submitted");
  ASSERT_EQ(r["attempts"].size(), 2u);
  EXPECT_EQ(r["attempts"][0]["tool_call_id"], "toolu_1");
  EXPECT_EQ(r["attempts"][0]["status"], "compile_error");
  EXPECT_EQ(r["attempts"][1]["status"], "ok");
  ASSERT_EQ(r["tools"].size(), 2u);
  // The second request sent turn 1's thinking block back byte for byte, then the tool result.
  json second = json::parse(server.requests().back().body);
  const json& assistant = second["messages"][1];
  ASSERT_EQ(assistant["role"], "assistant");
  EXPECT_EQ(assistant["content"][0]["type"], "thinking");
  EXPECT_EQ(assistant["content"][0]["signature"], kSignature);
  EXPECT_EQ(assistant["content"][1]["type"], "tool_use");
  const json& result = second["messages"][2]["content"][0];
  EXPECT_EQ(result["type"], "tool_result");
  EXPECT_EQ(result["tool_use_id"], "toolu_1");
  EXPECT_NE(result.dump().find("Compile error"), std::string::npos);
  // The record keeps the reasoning and the blocks.
  EXPECT_EQ(r["messages"][2]["reasoning_content"], "Turn 1 plan.");
  EXPECT_EQ(r["messages"][2]["blocks"][0]["signature"], kSignature);
}

TEST_F(GenerateCliTest, OpenAiToolsWithReasoningAndAStreamedSecondTurn) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    int turn = AssistantTurns(body) + 1;
    json call = {{"id", "call_" + std::to_string(turn)},
                 {"type", "function"},
                 {"function",
                  {{"name", turn == 1 ? "run" : "submit"},
                   {"arguments", ToolInput(turn == 1 ? kBroken : kFixed).dump()}}}};
    if (turn == 1) {
      json message = {{"role", "assistant"},
                      {"content", nullptr},
                      {"reasoning_content", "think first"},
                      {"tool_calls", {call}}};
      return fakes::FakeReply::Json(200,
                                    OpenAiCompletion(message, "stop").dump());  // a tool call with "stop"
    }
    json delta_call = call;
    delta_call["index"] = 0;
    json first = {
        {"id", "c2"},
        {"model", "gpt-test"},
        {"choices", {{{"index", 0}, {"delta", {{"role", "assistant"}, {"tool_calls", {delta_call}}}}}}}};
    json last = {{"id", "c2"},
                 {"model", "gpt-test"},
                 {"choices", {{{"index", 0}, {"delta", json::object()}, {"finish_reason", "tool_calls"}}}},
                 {"usage", {{"prompt_tokens", 300}, {"completion_tokens", 70}}}};
    return fakes::FakeReply::Sse(
        {"data: " + first.dump() + "\n\n", "data: " + last.dump() + "\n\n", "data: [DONE]\n\n"}, 5);
  });
  GenRun run = Generate(
      "--filter demo/relu --protocol tools --teacher openai --model qwen-test --stream always "
      "--base-url " +
      server.url() + "/v1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 1u);
  const json& r = run.records[0];
  EXPECT_EQ(r["outcome"]["stop"], "submitted");
  EXPECT_EQ(r["attempts"][0]["status"], "compile_error");
  EXPECT_EQ(r["attempts"][1]["status"], "ok");
  EXPECT_EQ(r["messages"][2]["reasoning_content"], "think first");
  EXPECT_EQ(r["usage"]["output_tokens"], 120);
  json second = json::parse(server.requests().back().body);
  EXPECT_EQ(second["messages"].back()["role"], "tool");
  EXPECT_EQ(second["messages"].back()["tool_call_id"], "call_1");
  EXPECT_EQ(second["tools"].size(), 2u);
}

TEST_F(GenerateCliTest, OpenAiTextWithA500OnTheWay) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    const char* source = AssistantTurns(body) == 0 ? kBroken : kFixed;
    return fakes::FakeReply::Json(
        200, OpenAiCompletion({{"role", "assistant"}, {"content", TextReply(source)}}, "stop").dump());
  });
  server.Enqueue(fakes::FakeReply::Json(503, R"({"error":{"message":"down"}})"));
  GenRun run = Generate(
      "--filter 'demo/*' --samples 2 --concurrency 3 --teacher openai --model qwen-test --base-url " +
      server.url() + "/v1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 6u);
  std::set<std::string> ids;
  for (const json& r : run.records) ids.insert(r["id"].get<std::string>());
  EXPECT_EQ(ids.size(), 6u);
}

TEST_F(GenerateCliTest, AnExecTeacherIsACommandThatReadsTheRequestAndPrintsTheReply) {
  fs::create_directories(out_.string() + ".d");
  const fs::path script = out_.string() + ".d/teacher.sh";
  {
    std::ofstream sh(script);
    // The request arrives on stdin as canonical JSON: answer the broken kernel first, the fix after.
    sh << "request=$(cat)\n"
          "case \"$request\" in *'Compile error'*) cat <<'EOF'\n"
       << TextReply(kFixed)
       << "EOF\n;;\n"
          "*) cat <<'EOF'\n"
       << TextReply(kBroken) << "EOF\n;;\nesac\n";
  }
  GenRun run = Generate("--filter demo/relu --teacher " + fakes::ShellQuote("exec:sh " + script.string()));
  fs::remove_all(out_.string() + ".d");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 1u);
  const json& r = run.records[0];
  EXPECT_EQ(r["teacher"]["provider"], "exec");
  ASSERT_EQ(r["attempts"].size(), 2u) << r["attempts"].dump();
  EXPECT_EQ(r["attempts"][0]["status"], "compile_error");
  EXPECT_EQ(r["attempts"][1]["status"], "ok");
}

TEST_F(GenerateCliTest, TheRecordCarriesTheTasksLicenceAndOldKernelBenchImportsStayMit) {
  // Three copies of demo/relu: a KernelBench import made before task.json had a licence (no field), one
  // that names its licence, and a task of another source without one.
  const fs::path root = out_.string() + ".tasks";
  struct Copy {
    std::string id;
    std::optional<std::string> license;
    std::string recorded;
  };
  const std::vector<Copy> copies = {{"kernelbench/level1/1_Relu", std::nullopt, "MIT"},
                                    {"kernelbench/level1/2_Relu", "BSD-3-Clause", "BSD-3-Clause"},
                                    {"mine/relu", std::nullopt, ""}};
  for (const Copy& c : copies) {
    fs::create_directories(root / c.id);
    fs::copy_file(std::string(KFORGE_SOURCE_DIR) + "/tasks/demo/relu/reference.py", root / c.id / "reference.py");
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/tasks/demo/relu/task.json");
    json task = json::parse(in);
    task["id"] = c.id;
    task.erase("artifacts");
    if (c.license) task["license"] = *c.license;
    else task.erase("license");
    std::ofstream(root / c.id / "task.json") << task.dump(2);
  }
  const fs::path script = out_.string() + ".teacher.sh";
  std::ofstream(script) << "cat >/dev/null\ncat <<'EOF'\n" << TextReply(kFixed) << "EOF\n";
  const std::string err = out_.string() + ".stderr";
  const int code = fakes::RunCommand(std::string(KFORGE_BINARY) + " generate --tasks " + fakes::ShellQuote(root) +
                                     " --compile-only --no-cache --no-probe --out " + fakes::ShellQuote(out_) +
                                     " --teacher " + fakes::ShellQuote("exec:sh " + script.string()) + " 2>" +
                                     fakes::ShellQuote(err))
                       .exit_code;
  std::ifstream err_in(err);
  const std::string err_text((std::istreambuf_iterator<char>(err_in)), {});
  fs::remove_all(root);
  fs::remove(script);
  ASSERT_EQ(code, 0) << err_text;
  std::map<std::string, std::string> recorded;
  for (const json& r : Records()) recorded[r["task"]["id"]] = r["task"]["license"];
  ASSERT_EQ(recorded.size(), copies.size()) << err_text;
  for (const Copy& c : copies) EXPECT_EQ(recorded[c.id], c.recorded) << c.id;
}

TEST_F(GenerateCliTest, SeveralViewsRunEveryTaskUnderEach) {
  const std::string cassette = std::string(KFORGE_SOURCE_DIR) + "/examples/teacher/demo.jsonl";
  GenRun run = Generate("--filter demo/relu --views code,nl+spec,kernelbench --teacher replay:" + cassette);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 3u);
  std::set<std::string> views;
  for (const json& r : run.records) {
    views.insert(r["task"]["view"].get<std::string>());
    std::string id = r["id"];
    EXPECT_NE(id.find("/demo/relu/" + r["task"]["view"].get<std::string>() + "/0"), std::string::npos) << id;
  }
  EXPECT_EQ(views, (std::set<std::string>{"code", "nl+spec", "kernelbench"}));
  for (const json& r : run.records) {
    std::string prompt = r["messages"][1]["content"];
    if (r["task"]["view"] == "nl+spec") {
      EXPECT_EQ(prompt.find("```python"), std::string::npos) << "the nl+spec view hides the program";
      EXPECT_NE(prompt.find("out0 = max(x, 0)"), std::string::npos);
    } else {
      EXPECT_NE(prompt.find("torch.relu(x)"), std::string::npos);
    }
  }
}

TEST_F(GenerateCliTest, KillNineThenResumeLosesNothingAndWritesNothingTwice) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    const char* source = AssistantTurns(body) == 0 ? kBroken : kFixed;
    fakes::FakeReply reply = fakes::FakeReply::Json(
        200, OpenAiCompletion({{"role", "assistant"}, {"content", TextReply(source)}}, "stop").dump());
    reply.delay_ms = 150;
    return reply;
  });
  const std::string args =
      "--filter 'demo/*' --samples 4 --concurrency 2 --teacher openai --model m --base-url " + server.url() +
      "/v1";
  // Start, wait for a few records, kill -9.
  std::string command = std::string("exec ") + KFORGE_BINARY + " generate --tasks " +
                        fakes::ShellQuote(tasks_.path()) + " --compile-only --no-cache --no-probe --out " +
                        fakes::ShellQuote(out_) + " " + args + " >/dev/null 2>&1";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Counts whole lines only: a poll can land in the middle of a record being written.
  auto finished_lines = [&] {
    std::ifstream in(out_ / "trajectories.jsonl", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return static_cast<size_t>(std::count(bytes.begin(), bytes.end(), '\n'));
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (finished_lines() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  size_t before = finished_lines();
  ASSERT_GE(before, 3u);
  ASSERT_LT(before, 12u) << "killed too late to test resuming";
  // A write torn by a crash: a partial line at the end.
  {
    std::ofstream(out_ / "trajectories.jsonl", std::ios::app)
        << "{\"schema\":\"kforge.trajectory/1\",\"id\":\"x";
  }

  GenRun run = Generate(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("torn last line"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("(" + std::to_string(before) + " already done)"), std::string::npos) << run.err;
  ASSERT_EQ(run.records.size(), 12u);
  std::set<std::string> ids;
  for (const json& r : run.records) ids.insert(r["id"].get<std::string>());
  EXPECT_EQ(ids.size(), 12u) << "no episode written twice";
  // A third run has nothing to do.
  GenRun again = Generate(args);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.records.size(), 12u);
  EXPECT_NE(again.err.find("0 episodes to run (12 already done)"), std::string::npos) << again.err;
}

TEST_F(GenerateCliTest, ReplayDemoTeacherAndAChangedConfigurationIsRefused) {
  const std::string cassette = std::string(KFORGE_SOURCE_DIR) + "/examples/teacher/demo.jsonl";
  GenRun run = Generate("--filter 'demo/*' --teacher replay:" + cassette);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.records.size(), 3u);
  for (const json& record : run.records)
    EXPECT_EQ(record["task"]["license"], "Apache-2.0") << "the licence field of the task's task.json";
  GenRun changed = Generate("--filter 'demo/*' --max-turns 2 --teacher replay:" + cassette);
  EXPECT_EQ(changed.exit_code, 2);
  EXPECT_NE(changed.err.find("max_turns changed"), std::string::npos) << changed.err;
  EXPECT_EQ(changed.records.size(), 3u) << "nothing already written is lost";
  GenRun forced = Generate("--filter 'demo/*' --max-turns 2 --force --teacher replay:" + cassette);
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.records.size(), 6u);
  // Which library ops a plan may call changes the prompt and the judge: another configuration.
  GenRun no_ops = Generate("--filter 'demo/*' --max-turns 2 --allow-ops none --teacher replay:" + cassette);
  EXPECT_EQ(no_ops.exit_code, 2);
  EXPECT_NE(no_ops.err.find("allow_ops changed"), std::string::npos) << no_ops.err;
  // So do the judge's timeouts: verdicts judged two ways are not mixed in one run.
  GenRun timeout =
      Generate("--filter 'demo/*' --max-turns 2 --kernel-timeout 5 --teacher replay:" + cassette);
  EXPECT_EQ(timeout.exit_code, 2);
  EXPECT_NE(timeout.err.find("kernel_timeout_ms changed"), std::string::npos) << timeout.err;
  GenRun compile =
      Generate("--filter 'demo/*' --max-turns 2 --compile-timeout 7 --teacher replay:" + cassette);
  EXPECT_EQ(compile.exit_code, 2);
  EXPECT_NE(compile.err.find("compile_timeout_ms changed"), std::string::npos) << compile.err;
}

TEST_F(GenerateCliTest, AFatalTeacherErrorStopsTheBatchAndWritesNoHalfEpisodes) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) {
    return fakes::FakeReply::Json(
        401, R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})");
  });
  GenRun run = Generate("--filter 'demo/*' --teacher anthropic --model m --base-url " + server.url(),
                        "ANTHROPIC_API_KEY=sk-wrong-0123456789");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.records.empty());
  EXPECT_NE(run.err.find("stopped:"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("sk-wrong-0123456789"), std::string::npos) << run.err;
}

TEST_F(GenerateCliTest, BadInputIsOneLineAndExitTwo) {
  struct Case {
    std::string args;
    std::string expect;
  };
  const std::string replay =
      std::string(" --teacher replay:") + KFORGE_SOURCE_DIR + "/examples/teacher/demo.jsonl";
  const Case cases[] = {
      {"--protocol bogus" + replay, "--protocol bogus"},
      {"--views pictures" + replay, "view \"pictures\""},
      {"--shard 3/2" + replay, "--shard 3/2"},
      {"--shard 1/123456789012345678901234567890" + replay,
       "--shard 1/123456789012345678901234567890: expected"},
      {"--filter ''" + replay, "--filter: empty: name at least one glob"},
      {"--filter 'nothing/*'" + replay, "no task under"},
      {"--teacher replay:/nonexistent/cassette.jsonl", "cassette /nonexistent/cassette.jsonl"},
      {"--teacher anthropic", "ANTHROPIC_API_KEY"},
      {"--prompts /nonexistent" + replay, "prompt template /nonexistent/system.md"},
      {"--views code,nl,code" + replay, "--views: code is named twice"},
  };
  for (const Case& c : cases) {
    GenRun run = Generate(c.args, "env -u ANTHROPIC_API_KEY");
    EXPECT_EQ(run.exit_code, 2) << c.args << ": " << run.err;
    EXPECT_NE(run.err.find(c.expect), std::string::npos) << c.args << ": " << run.err;
    EXPECT_LE(std::count(run.err.begin(), run.err.end(), '\n'), 1) << c.args << ": " << run.err;
  }
}

TEST_F(GenerateCliTest, TwoGeneratesOnOneFolderOneRefusesAndNothingIsLost) {
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    const char* source = AssistantTurns(body) == 0 ? kBroken : kFixed;
    fakes::FakeReply reply = fakes::FakeReply::Json(
        200, OpenAiCompletion({{"role", "assistant"}, {"content", TextReply(source)}}, "stop").dump());
    reply.delay_ms = 100;
    return reply;
  });
  const std::string args =
      "--filter 'demo/*' --samples 4 --concurrency 2 --teacher openai --model m --base-url " + server.url() +
      "/v1";
  std::string command = std::string("exec ") + KFORGE_BINARY + " generate --tasks " +
                        fakes::ShellQuote(tasks_.path()) + " --compile-only --no-cache --out " +
                        fakes::ShellQuote(out_) + " " + args + " >/dev/null 2>&1";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the first process holds the folder (its pid in run.lock), then start a second.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string holder;
  while (holder != std::to_string(pid) + "\n" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream in(out_ / "run.lock");
    holder.assign(std::istreambuf_iterator<char>(in), {});
  }
  GenRun second = Generate(args);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("is in use: "), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("held by pid " + std::to_string(pid)), std::string::npos) << second.err;
  EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << second.err;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::vector<json> records = Records();  // every line parses
  ASSERT_EQ(records.size(), 12u);
  std::set<std::string> ids;
  for (const json& r : records) ids.insert(r["id"].get<std::string>());
  EXPECT_EQ(ids.size(), 12u);
  // Once the first has ended the folder is free again, and complete.
  GenRun again = Generate(args);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("0 episodes to run (12 already done)"), std::string::npos) << again.err;
}

TEST_F(GenerateCliTest, AKeyTheTeacherEchoesIsMaskedInTheRecordAndTheExport) {
  const std::string key = "sk-ant-echoed-0123456789abcdef";
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    const char* source = AssistantTurns(body) == 0 ? kBroken : kFixed;
    // A teacher that repeats the key it was sent: in its text, its thinking and a code comment.
    std::string echoed = ex.headers.count("x-api-key") ? ex.headers.at("x-api-key") : "";
    std::string text = "Your key is " + echoed + ".\n" + TextReply(source);
    size_t code = text.find("extern");
    text.insert(code, "// " + echoed + "\n");
    return fakes::FakeReply::Json(200, AnthropicMessage({{{"type", "thinking"},
                                                          {"thinking", "the key " + echoed},
                                                          {"signature", kSignature}},
                                                         {{"type", "text"}, {"text", text}}},
                                                        "end_turn")
                                           .dump());
  });
  GenRun run = Generate("--filter demo/relu --teacher anthropic --model claude-test --base-url " + server.url(),
                        "ANTHROPIC_API_KEY=" + key);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 1u);
  std::ifstream in(out_ / "trajectories.jsonl");
  std::string text(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(text.find(key), std::string::npos);
  EXPECT_EQ(text.find("sk-ant-echoed"), std::string::npos);
  EXPECT_NE(run.records[0]["messages"].dump().find("Your key is ***"), std::string::npos)
      << run.records[0]["messages"].dump();
  const fs::path exported = out_.string() + ".export";
  fs::remove_all(exported);
  int code = fakes::RunCommand(std::string(KFORGE_BINARY) + " export " + fakes::ShellQuote(out_) +
                               " --format trajectory --include-incorrect --out " + fakes::ShellQuote(exported) +
                               " 2>/dev/null")
                 .exit_code;
  EXPECT_EQ(code, 0);
  std::ifstream rows(exported / "train.jsonl");
  std::string data(std::istreambuf_iterator<char>(rows), {});
  fs::remove_all(exported);
  EXPECT_FALSE(data.empty());
  EXPECT_EQ(data.find(key), std::string::npos);
}

TEST_F(GenerateCliTest, AHeaderSecretEchoedInA401IsMaskedEverywhereAndUrlCredentialsAreNotStored) {
  // A gateway that echoes every header and the URL it got in a 401.
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    std::string all = ex.path + " ";
    for (const auto& [name, value] : ex.headers) all += name + ": " + value + "; ";
    return fakes::FakeReply::Json(401,
                                  json{{"error", {{"message", all}, {"code", "invalid_api_key"}}}}.dump());
  });
  const std::string token = "cfut_AbCdEf0123456789XyZ", password = "pw-0123456789",
                    query_key = "qk-9876543210abc";
  std::string url = server.url();
  url.insert(url.find("//") + 2, "me:" + password + "@");
  url += "/v1?api_key=" + query_key;
  GenRun run = Generate("--filter demo/relu --teacher openai --model m --header " +
                        fakes::ShellQuote("cf-aig-authorization: Bearer " + token) + " --base-url " +
                        fakes::ShellQuote(url));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  ASSERT_NE(run.err.find("stopped:"), std::string::npos) << run.err;
  ASSERT_NE(run.err.find("cf-aig-authorization: Bearer ***"), std::string::npos)
      << "the echo was shown: " << run.err;
  std::ifstream log_in(out_ / "generate.log"), run_in(out_ / "run.json");
  const std::string log(std::istreambuf_iterator<char>(log_in), {}),
      run_json(std::istreambuf_iterator<char>(run_in), {});
  ASSERT_NE(log.find("stopped"), std::string::npos) << log;
  for (const std::string& secret : {token, password, query_key})
    for (size_t j = 0; j + 8 <= secret.size(); ++j)
      for (const std::string* where : {static_cast<const std::string*>(&run.err), &log, &run_json})
        ASSERT_EQ(where->find(secret.substr(j, 8)), std::string::npos) << secret << " leaked in " << *where;
  EXPECT_EQ(json::parse(run_json)["config"]["base_url"], server.url() + "/v1?api_key=***");
}

TEST_F(GenerateCliTest, ARecordLargerThanALineIsWrittenCutAndTheBatchEnds) {
  // A teacher whose every reply is 30 MB of text with no kernel: three turns make a record of more
  // than 64 MiB, which is written with its longest strings cut.
  fs::create_directories(out_.string() + ".d");
  const fs::path script = out_.string() + ".d/teacher.sh";
  std::ofstream(script) << "cat >/dev/null; head -c 30000000 /dev/zero | tr '\\0' a\n";
  const std::string args =
      "--filter demo/relu --max-turns 3 --timeout 120 --teacher " + fakes::ShellQuote("exec:sh " + script.string());
  GenRun run = Generate(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 1u) << run.err;
  const json& r = run.records[0];
  EXPECT_EQ(r["truncated"], true);
  EXPECT_EQ(r["attempts"].size(), 3u);
  EXPECT_NE(run.err.find("written with its longest strings cut"), std::string::npos) << run.err;
  EXPECT_LE(fs::file_size(out_ / "trajectories.jsonl"), size_t{64} << 20);
  GenRun again = Generate(args);
  fs::remove_all(out_.string() + ".d");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("0 episodes to run (1 already done)"), std::string::npos) << again.err;
}

/// Whether `pid` is gone (or a zombie no one has reaped yet).
bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text(std::istreambuf_iterator<char>(stat), {});
  size_t paren = text.rfind(')');
  return paren == std::string::npos || text.substr(paren + 2, 1) == "Z";
}

pid_t ReadPid(const fs::path& file, std::chrono::seconds wait) {
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(file);
    long pid = 0;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

TEST_F(GenerateCliTest, AnExecTeacherThatTimesOutIsKilledWithEverythingItStarted) {
  fs::create_directories(out_.string() + ".d");
  const fs::path script = out_.string() + ".d/teacher.sh";
  const fs::path pidfile = out_.string() + ".d/child.pid";
  // The teacher starts a grandchild and waits for it: killing only /bin/sh would leave it running.
  std::ofstream(script) << "cat >/dev/null; sleep 300 & echo $! > " << pidfile.string() << "; wait\n";
  GenRun run = Generate("--filter demo/relu --max-attempts 1 --timeout 1 --teacher " +
                        fakes::ShellQuote("exec:sh " + script.string()));
  pid_t child = ReadPid(pidfile, std::chrono::seconds(1));
  fs::remove_all(out_.string() + ".d");
  ASSERT_EQ(run.exit_code, 1) << run.err;  // every episode written is a teacher error
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.records[0]["outcome"]["stop"], "llm_error");
  ASSERT_GT(child, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ProcessGone(child) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(ProcessGone(child)) << "the teacher's child " << child << " outlived the timeout";
  if (!ProcessGone(child)) kill(child, SIGKILL);
}

TEST_F(GenerateCliTest, SigtermEndsTheExecTeacherAndEverythingItStarted) {
  fs::create_directories(out_.string() + ".d");
  const fs::path script = out_.string() + ".d/teacher.sh";
  const fs::path pidfile = out_.string() + ".d/child.pid";
  std::ofstream(script) << "cat >/dev/null; sleep 300 & echo $! > " << pidfile.string() << "; wait\n";
  std::string command = std::string("exec ") + KFORGE_BINARY + " generate --tasks " +
                        fakes::ShellQuote(tasks_.path()) + " --compile-only --no-cache --out " +
                        fakes::ShellQuote(out_) + " --filter demo/relu --teacher " +
                        fakes::ShellQuote("exec:sh " + script.string()) + " 2>/dev/null";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t child = ReadPid(pidfile, std::chrono::seconds(30));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  fs::remove_all(out_.string() + ".d");
  ASSERT_GT(child, 0) << "the teacher never started";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "kforge still ends as SIGTERM says";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ProcessGone(child) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(ProcessGone(child)) << "the teacher's child " << child << " outlived kforge";
  if (!ProcessGone(child)) kill(child, SIGKILL);
}

TEST_F(GenerateCliTest, KillNineOfGenerateLeavesNoExecTeacherRunning) {
  fs::create_directories(out_.string() + ".d");
  const fs::path script = out_.string() + ".d/teacher.sh";
  const fs::path pidfile = out_.string() + ".d/teacher.pid";
  std::ofstream(script) << "echo $$ > " << pidfile.string() << "; exec sleep 300\n";
  std::string command = std::string("exec ") + KFORGE_BINARY + " generate --tasks " +
                        fakes::ShellQuote(tasks_.path()) + " --compile-only --no-cache --out " +
                        fakes::ShellQuote(out_) + " --filter demo/relu --teacher " +
                        fakes::ShellQuote("exec:exec sh " + script.string()) + " 2>/dev/null";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t teacher = ReadPid(pidfile, std::chrono::seconds(30));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  fs::remove_all(out_.string() + ".d");
  ASSERT_GT(teacher, 0) << "the teacher never started";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ProcessGone(teacher) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(ProcessGone(teacher)) << "the exec teacher " << teacher << " outlived kforge's kill -9";
  if (!ProcessGone(teacher)) kill(teacher, SIGKILL);
}

TEST_F(GenerateCliTest, AnExecTeacherThatPrintsWithoutEndIsKilledAtTheOutputCap) {
  auto start = std::chrono::steady_clock::now();
  GenRun run = Generate("--filter demo/relu --max-attempts 1 --teacher " +
                        fakes::ShellQuote("exec:cat >/dev/null; yes kernel"));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.exit_code, 1) << run.err;  // every episode written is a teacher error
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.records[0]["outcome"]["stop"], "llm_error");
  const std::string error = run.records[0].dump();
  EXPECT_NE(error.find("printed more than 64 MiB on stdout: killed"), std::string::npos) << error;
  EXPECT_EQ(error.find("timed out"), std::string::npos) << error;
  EXPECT_LT(took, 60) << "stopped at the cap, not at --timeout";
}

TEST_F(GenerateCliTest, CtrlCSaysThatARerunResumes) {
  fs::create_directories(out_.string() + ".d");
  const fs::path script = out_.string() + ".d/teacher.sh";
  const fs::path pidfile = out_.string() + ".d/teacher.pid";
  const fs::path err = out_.string() + ".d/stderr";
  std::ofstream(script) << "echo $$ > " << pidfile.string() << "; exec sleep 300\n";
  std::string command = std::string("exec ") + KFORGE_BINARY + " generate --tasks " +
                        fakes::ShellQuote(tasks_.path()) + " --compile-only --no-cache --out " +
                        fakes::ShellQuote(out_) + " --filter demo/relu --teacher " +
                        fakes::ShellQuote("exec:exec sh " + script.string()) + " 2>" + fakes::ShellQuote(err);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t teacher = ReadPid(pidfile, std::chrono::seconds(30));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(err);
  const std::string said(std::istreambuf_iterator<char>(in), {});
  fs::remove_all(out_.string() + ".d");
  ASSERT_GT(teacher, 0) << "the teacher never started";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "kforge still ends as SIGINT says";
  EXPECT_NE(said.find("interrupted; the episodes finished so far are kept in"), std::string::npos) << said;
  EXPECT_NE(said.find("the same command resumes the run"), std::string::npos) << said;
}

TEST_F(GenerateCliTest, AMistypedCommandGetsADidYouMean) {
  fakes::CommandResult typo = fakes::RunCommand(std::string(KFORGE_BINARY) + " genrate --out x 2>&1");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.out.find("unknown command 'genrate'; did you mean 'generate'?"), std::string::npos) << typo.out;
  fakes::CommandResult nested = fakes::RunCommand(std::string(KFORGE_BINARY) + " tasks lsit 2>&1");
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_NE(nested.out.find("unknown command 'lsit' of 'tasks'; did you mean 'list'?"), std::string::npos)
      << nested.out;
  fakes::CommandResult far = fakes::RunCommand(std::string(KFORGE_BINARY) + " zzzzzzzz 2>&1");
  EXPECT_NE(far.out.find("unknown command 'zzzzzzzz'"), std::string::npos) << far.out;
  EXPECT_EQ(far.out.find("did you mean"), std::string::npos) << far.out;
}

TEST_F(GenerateCliTest, ToolCallsPerReplyAreCappedAndStopOnceTheTargetIsReached) {
  // Turn 1: twenty `run` calls of a broken kernel; turn 2: five of the fixed one.
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    int turn = AssistantTurns(body) + 1;
    json content = json::array();
    for (int i = 0; i < (turn == 1 ? 20 : 5); ++i)
      content.push_back({{"type", "tool_use"},
                         {"id", "toolu_" + std::to_string(turn) + "_" + std::to_string(i)},
                         {"name", "run"},
                         {"input", ToolInput(turn == 1 ? kBroken : kFixed)}});
    return fakes::FakeReply::Json(200, AnthropicMessage(content, "tool_use").dump());
  });
  GenRun run = Generate("--filter demo/relu --protocol tools --max-turns 2 --teacher anthropic --model m "
                        "--base-url " + server.url(),
                        "ANTHROPIC_API_KEY=sk-test-0123456789");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.records.size(), 1u);
  const json& r = run.records[0];
  ASSERT_EQ(r["attempts"].size(), 9u) << "8 of turn 1, then 1 of turn 2 that reached the target";
  EXPECT_EQ(r["attempts"][8]["status"], "ok");
  EXPECT_EQ(r["outcome"]["stop"], "compiled");
  // Every call of turn 1 got a result in the second request, the twelve not run said so.
  json second = json::parse(server.requests().back().body);
  const json& results = second["messages"][2]["content"];
  ASSERT_EQ(results.size(), 20u) << results.dump();
  EXPECT_NE(results[19].dump().find("Not run: at most 8 tool calls"), std::string::npos) << results[19].dump();
}

TEST_F(GenerateCliTest, ALinkedReferenceIsRefusedBeforeAnythingIsSent) {
  // A task whose reference.py is a link to a file outside: it would be sent to the teacher.
  const fs::path root = out_.string() + ".tasks";
  fs::remove_all(root);
  fs::create_directories(root / "demo");
  fs::copy(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu", root / "demo/relu", fs::copy_options::recursive);
  std::ofstream(root / "secret.txt") << "not for the teacher";
  fs::remove(root / "demo/relu/reference.py");
  fs::create_symlink(root / "secret.txt", root / "demo/relu/reference.py");
  const std::string replay =
      std::string(" --teacher replay:") + KFORGE_SOURCE_DIR + "/examples/teacher/demo.jsonl";
  fakes::CommandResult run = fakes::RunCommand(std::string(KFORGE_BINARY) + " generate --tasks " +
                                               fakes::ShellQuote(root) + " --compile-only --out " +
                                               fakes::ShellQuote(out_) + replay + " 2>&1");
  fs::remove_all(root);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("reference.py: a symbolic link"), std::string::npos) << run.out;
  EXPECT_TRUE(Records().empty());
}

TEST_F(GenerateCliTest, AReferenceBehindALinkedFolderIsRefusedBeforeAnythingIsSent) {
  // The task's reference lies in a folder of the task that is a link to one outside it.
  const fs::path root = out_.string() + ".tasks";
  fs::remove_all(root);
  fs::create_directories(root / "demo");
  fs::copy(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu", root / "demo/relu", fs::copy_options::recursive);
  fs::create_directories(root / "outside");
  std::ofstream(root / "outside/reference.py") << "# not for the teacher\n";
  fs::create_directory_symlink(root / "outside", root / "demo/relu/src");
  json task = json::parse(std::ifstream(root / "demo/relu/task.json"));
  task["reference"] = "src/reference.py";
  std::ofstream(root / "demo/relu/task.json") << task.dump();
  const std::string replay =
      std::string(" --teacher replay:") + KFORGE_SOURCE_DIR + "/examples/teacher/demo.jsonl";
  fakes::CommandResult run =
      fakes::RunCommand(std::string(KFORGE_BINARY) + " generate --tasks " + fakes::ShellQuote(root) +
                        " --compile-only --out " + fakes::ShellQuote(out_) + replay + " 2>&1");
  fs::remove_all(root);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("relu/src: a symbolic link"), std::string::npos) << run.out;
  EXPECT_TRUE(Records().empty());
}

TEST_F(GenerateCliTest, A50MbReferenceIsCutWithANoteBeforeItIsSent) {
  const fs::path root = out_.string() + ".tasks";
  fs::remove_all(root);
  fs::create_directories(root / "demo");
  fs::copy(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu", root / "demo/relu", fs::copy_options::recursive);
  {
    std::ofstream reference(root / "demo/relu/reference.py", std::ios::app);
    const std::string line = "# " + std::string(97, 'x') + "\n";
    for (int i = 0; i < 500000; ++i) reference << line;  // 50 MB
  }
  const fs::path sent = out_.string() + ".sent.json";
  fakes::CommandResult run = fakes::RunCommand(
      std::string(KFORGE_BINARY) + " generate --tasks " + fakes::ShellQuote(root) +
      " --compile-only --no-cache --out " + fakes::ShellQuote(out_) + " --max-turns 1 --teacher " +
      fakes::ShellQuote("exec:cat > " + sent.string() + "; echo no kernel today") + " 2>&1");
  fs::remove_all(root);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("demo/relu: its reference is 50"), std::string::npos) << run.out;
  std::ifstream in(sent);
  const std::string request(std::istreambuf_iterator<char>(in), {});
  fs::remove(sent);
  EXPECT_LT(request.size(), size_t{1} << 20) << "the whole reference was sent";
  EXPECT_NE(request.find("the reference is cut here"), std::string::npos);
}

TEST_F(GenerateCliTest, AForeignTrajectoriesFileWithoutRunJsonIsNotAppendedTo) {
  fs::create_directories(out_);
  const std::string foreign = "{\"id\": \"someone-else\"}\n";
  std::ofstream(out_ / "trajectories.jsonl") << foreign;
  GenRun run = Generate("--filter demo/relu --teacher replay:" + std::string(KFORGE_SOURCE_DIR) +
                        "/examples/teacher/demo.jsonl");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("holds a trajectories.jsonl but no run.json"), std::string::npos) << run.err;
  std::ifstream in(out_ / "trajectories.jsonl");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), foreign);
  EXPECT_FALSE(fs::exists(out_ / "run.json"));
}

TEST_F(GenerateCliTest, RecordNeverAppendsToWhatTheRunReadsOrKeeps) {
  const fs::path cassette = out_.string() + ".cassette.jsonl";
  fs::copy_file(std::string(KFORGE_SOURCE_DIR) + "/examples/teacher/demo.jsonl", cassette,
                fs::copy_options::overwrite_existing);
  const auto size = fs::file_size(cassette);
  GenRun replayed = Generate("--filter demo/relu --teacher replay:" + cassette.string() + " --record " +
                             cassette.string());
  EXPECT_EQ(replayed.exit_code, 2) << replayed.err;
  EXPECT_NE(replayed.err.find("which this run reads; record to another file"), std::string::npos) << replayed.err;
  EXPECT_EQ(fs::file_size(cassette), size);
  // A new run: its log does not exist yet, so only its name tells that it is the run's.
  ASSERT_FALSE(fs::exists(out_ / "trajectories.jsonl"));
  GenRun fresh = Generate("--filter demo/relu --teacher replay:" + cassette.string() + " --record " +
                          (out_ / "trajectories.jsonl").string());
  EXPECT_EQ(fresh.exit_code, 2) << fresh.err;
  EXPECT_NE(fresh.err.find("is inside the run folder"), std::string::npos) << fresh.err;
  EXPECT_TRUE(fresh.records.empty());
  GenRun first = Generate("--filter demo/relu --teacher replay:" + cassette.string());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  GenRun kept = Generate("--filter 'demo/*' --teacher replay:" + cassette.string() + " --record " +
                         (out_ / "trajectories.jsonl").string());
  EXPECT_EQ(kept.exit_code, 2) << kept.err;
  EXPECT_EQ(kept.records.size(), 1u) << "the log is untouched";
  fs::remove(cassette);
}

}  // namespace
}  // namespace kforge
