// Prompt caching across episodes: the fake Messages API's cache (reads only what a completed
// response wrote, a minimum size, lookback from a breakpoint), and `kforge generate` over 5 tasks x 4
// samples, where the samples of a task read its prompt from the cache once the first one has its
// reply. Compile-only feedback.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/fake_anthropic.h"
#include "fakes/task_root.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json Text(const std::string& text, bool breakpoint = false) {
  json block = {{"type", "text"}, {"text", text}};
  if (breakpoint) block["cache_control"] = {{"type", "ephemeral"}};
  return block;
}

TEST(FakePromptCacheTest, ReadsOnlyWhatACompletedResponseWroteAboveTheMinimum) {
  fakes::FakePromptCache cache(100);
  const std::string task(800, 't');  // about 200 tokens
  json first = {{"system", {Text(std::string(200, 's'), true)}},  // about 50 tokens: below the minimum
                {"messages", {{{"role", "user"}, {"content", {Text(task, true)}}}}}};
  fakes::FakePromptCache::Priced written = cache.Price(first);
  EXPECT_EQ(written.usage.cache_read, 0);
  EXPECT_GT(written.usage.cache_write, 200);
  EXPECT_EQ(written.usage.input, 0);
  // The same prompt again before the first reply is complete: written again, nothing read.
  EXPECT_EQ(cache.Price(first).usage.cache_read, 0);
  cache.Complete(written);
  fakes::FakePromptCache::Priced again = cache.Price(first);
  EXPECT_EQ(again.usage.cache_read, written.usage.cache_write);
  EXPECT_EQ(again.usage.cache_write, 0);
  // The next turn: its breakpoint is new, the earlier prefix is found by looking back.
  json next = first;
  next["messages"][0]["content"][0].erase("cache_control");
  next["messages"].push_back({{"role", "assistant"}, {"content", {Text("a reply")}}});
  next["messages"].push_back({{"role", "user"}, {"content", {Text("feedback", true)}}});
  fakes::FakePromptCache::Priced turn2 = cache.Price(next);
  EXPECT_EQ(turn2.usage.cache_read, written.usage.cache_write);
  EXPECT_GT(turn2.usage.cache_write, 0);
  // Another task shares only the system prompt, which is below the minimum: nothing read.
  json other = first;
  other["messages"][0]["content"][0]["text"] = std::string(800, 'u');
  EXPECT_EQ(cache.Price(other).usage.cache_read, 0);
}

struct CacheRun {
  int exit_code = -1;
  std::string err;
  double share = -1;  ///< the summary's cache-read share, percent
  int first_turns = 0, first_turns_read = 0, first_turns_written = 0;
  std::map<std::string, int> reads_by_task;  ///< first turns that read, by task
  int64_t read = 0, written = 0, input = 0;  ///< over every request, as the server billed them
};

class PromptCacheCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("kforge-prompt-cache-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }

  /// 5 tasks x 4 samples, 2 turns each (replies without a solution), 20 in flight, a fresh cache.
  CacheRun Generate(const std::string& extra) {
    fs::remove_all(out_);
    // Each reply takes 400 ms: samples sent together all miss what another is still writing.
    fakes::FakeAnthropic server(
        [](const json&, int n) { return "Let me think about the layout first (reply " + std::to_string(n) + ")."; },
        1024, 400);
    const std::string err = out_.string() + ".stderr";
    const std::string command =
        "ANTHROPIC_API_KEY=sk-test-0123456789 " + std::string(KFORGE_BINARY) + " generate --tasks " +
        fakes::ShellQuote(tasks_.path()) +
        " --filter 'core/softmax,core/matmul,core/gelu,core/layernorm,core/rmsnorm' --samples 4 --max-turns 2"
        " --concurrency 20 --max-in-flight 20 --compile-only --no-cache --no-probe --teacher anthropic"
        " --model claude-test --base-url " +
        server.url() + " --out " + fakes::ShellQuote(out_) + " " + extra + " 2>" + fakes::ShellQuote(err);
    CacheRun run;
    run.exit_code = fakes::RunCommand(command).exit_code;
    std::ifstream in(err);
    run.err.assign(std::istreambuf_iterator<char>(in), {});
    fs::remove(err);
    std::smatch m;
    if (std::regex_search(run.err, m, std::regex(R"(prompt cache: (\d+)% of prompt tokens read from the cache)")))
      run.share = std::stod(m[1]);
    for (const fakes::FakeAnthropicExchange& e : server.exchanges()) {
      run.read += e.usage.cache_read;
      run.written += e.usage.cache_write;
      run.input += e.usage.input;
      if (e.request["messages"].size() != 1) continue;
      ++run.first_turns;
      const std::string prompt = e.request["messages"][0].dump();
      std::smatch task;
      std::regex_search(prompt, task, std::regex(R"(core/[a-z_]+)"));
      if (e.usage.cache_read > 0) {
        ++run.first_turns_read;
        ++run.reads_by_task[task[0]];
      }
      if (e.usage.cache_write > 0) ++run.first_turns_written;
    }
    return run;
  }

  fakes::TaskRoot tasks_{{"core"}};
  fs::path out_;
};

TEST_F(PromptCacheCliTest, SamplesOfATaskReadItsPromptFromTheCache) {
  // Every sample sent at once (the behaviour before --cache-warmup): each writes the task's prompt.
  CacheRun together = Generate("--cache-warmup 0");
  ASSERT_EQ(together.exit_code, 0) << together.err;
  EXPECT_EQ(together.first_turns, 20);
  EXPECT_EQ(together.first_turns_read, 0);
  EXPECT_EQ(together.first_turns_written, 20);

  // The default: a task's first sample goes alone, the other three read what it wrote.
  CacheRun warmed = Generate("");
  ASSERT_EQ(warmed.exit_code, 0) << warmed.err;
  EXPECT_EQ(warmed.first_turns, 20);
  EXPECT_EQ(warmed.first_turns_read, 15);
  EXPECT_EQ(warmed.first_turns_written, 5);
  ASSERT_EQ(warmed.reads_by_task.size(), 5u);
  for (const auto& [task, reads] : warmed.reads_by_task) EXPECT_EQ(reads, 3) << task;

  // The summary counts exactly what the server billed.
  for (const CacheRun* run : {&together, &warmed}) {
    const std::string line = "(" + std::to_string(run->read) + " read, " + std::to_string(run->written) +
                             " written, " + std::to_string(run->input) + " not cached)";
    EXPECT_NE(run->err.find(line), std::string::npos) << line << "\n" << run->err;
    const double share = 100.0 * run->read / (run->read + run->written + run->input);
    EXPECT_NEAR(run->share, share, 0.5) << run->err;
  }
  EXPECT_GT(warmed.share, together.share + 20);
  std::printf("cache-read share, 20 episodes x 2 turns: %.0f%% with samples sent together (--cache-warmup 0), "
              "%.0f%% with the first sample warming the cache\n",
              together.share, warmed.share);
}

TEST_F(PromptCacheCliTest, OpenAiRequestsCarryTheTaskAsPromptCacheKeyOnApiOpenAiComOnly) {
  auto dry_run = [&](const std::string& base_url) {
    const std::string command = "OPENAI_API_KEY=sk-test-0123456789 " + std::string(KFORGE_BINARY) +
                                " generate --tasks " + fakes::ShellQuote(tasks_.path()) +
                                " --filter core/softmax --dry-run --teacher openai --model gpt-4o --base-url " +
                                base_url + " --out " + fakes::ShellQuote(out_) + " 2>/dev/null";
    fakes::CommandResult result = fakes::RunCommand(command);
    EXPECT_EQ(result.exit_code, 0) << result.out;
    return json::parse(result.out, nullptr, false);
  };
  EXPECT_EQ(dry_run("https://api.openai.com/v1").value("prompt_cache_key", ""), "core/softmax");
  // A vLLM or other OpenAI-compatible server does not get a field it may not know.
  EXPECT_FALSE(dry_run("http://127.0.0.1:9/v1").contains("prompt_cache_key"));
}

}  // namespace
}  // namespace kforge
