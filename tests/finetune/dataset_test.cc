// The dataset check: good records of both formats pass with their counts, and each malformed
// record is refused with its line number and what is wrong.
#include "finetune/dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kforge/common/hash.h"

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kToolConversation =
    R"({"messages": [{"role": "system", "content": "You write CUDA."},)"
    R"( {"role": "user", "content": "relu please"},)"
    R"( {"role": "assistant", "content": "Compiling.", "reasoning_content": "Try a grid-stride loop.",)"
    R"(  "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "compile", "arguments": {"src": "x"}}}]},)"
    R"( {"role": "tool", "tool_call_id": "c1", "content": "ok"},)"
    R"( {"role": "assistant", "content": "Done."}],)"
    R"( "tools": [{"type": "function", "function": {"name": "compile", "parameters": {"type": "object"}}}]})";

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_dataset_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& text) {
    fs::path path = dir_ / ("data" + std::to_string(++files_) + ".jsonl");
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  fs::path dir_;
  int files_ = 0;
};

TEST_F(DatasetTest, GoodMessagesPassWithTheirCounts) {
  const std::string text =
      std::string(kToolConversation) + "\n\n" +
      R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})" +
      "\r\n" + R"({"messages": [{"role": "user", "content": "x", "tool_calls": null},)" +
      R"( {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function",)" +
      R"( "function": {"name": "f", "arguments": "{\"n\": 1}"}}]}]})";  // no final newline
  fs::path path = Write(text);
  auto stats = CheckDataset(path);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->format, DatasetFormat::kMessages);
  EXPECT_EQ(stats->records, 3);
  EXPECT_EQ(stats->messages, 5 + 2 + 2);
  EXPECT_EQ(stats->assistant_turns, 2 + 1 + 1);
  EXPECT_EQ(stats->tool_calls, 2);
  EXPECT_EQ(stats->tool_results, 1);
  EXPECT_EQ(stats->records_with_tools, 1);
  EXPECT_EQ(stats->records_with_reasoning, 1);
  EXPECT_EQ(stats->bytes, static_cast<int64_t>(text.size()));
  EXPECT_EQ(stats->sha256, common::Sha256Hex(text));
  int64_t in_histogram = 0;
  for (int64_t n : stats->histogram) in_histogram += n;
  EXPECT_EQ(in_histogram, 3);
}

TEST_F(DatasetTest, PromptCompletionPairsPass) {
  auto text_pairs = CheckDataset(Write(R"J({"prompt": "Write relu", "completion": "__global__ void relu()"})J"
                                       "\n"
                                       R"({"prompt": "a", "completion": "b", "tools": []})"
                                       "\n"));
  ASSERT_TRUE(text_pairs.ok()) << text_pairs.status().message();
  EXPECT_EQ(text_pairs->format, DatasetFormat::kPromptCompletion);
  EXPECT_TRUE(text_pairs->plain_text);
  EXPECT_EQ(text_pairs->records, 2);

  auto conversational = CheckDataset(Write(
      R"({"prompt": [{"role": "user", "content": "relu"}], "completion": [{"role": "assistant", "content": "ok"}]})"
      "\n"));
  ASSERT_TRUE(conversational.ok()) << conversational.status().message();
  EXPECT_FALSE(conversational->plain_text);
  EXPECT_EQ(conversational->assistant_turns, 1);
}

TEST_F(DatasetTest, EachMalformedRecordIsRefusedWithItsLine) {
  const std::string good =
      R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]})";
  struct Case {
    std::string line;
    std::string want;
  };
  const Case cases[] = {
      {R"({"messages": [{"role": "user", "content": "u"})", "column"},
      {R"([1, 2])", "top level: expected an object, got array"},
      {R"({"mesages": []})", "no \"messages\" (or \"prompt\" and \"completion\") field"},
      {R"({"messages": []})", "messages: no messages"},
      {R"({"messages": {"role": "user"}})", "messages: expected an array of messages, got object"},
      {R"({"messages": [{"role": "user", "content": "u"}]})", "messages: no assistant message"},
      {R"({"messages": [{"role": "bot", "content": "u"}, {"role": "assistant", "content": "a"}]})",
       "messages[0].role: bot is not system, user, assistant or tool"},
      {R"({"messages": [{"content": "u"}, {"role": "assistant", "content": "a"}]})",
       "messages[0].role: missing"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text"}]}, {"role": "assistant", "content": "a"}]})",
       "messages[0].content: expected a string, got array"},
      {R"({"messages": [{"role": "user"}, {"role": "assistant", "content": "a"}]})",
       "messages[0].content: missing"},
      {R"({"messages": [{"role": "user", "content": "u", "colour": 1}, {"role": "assistant", "content": "a"}]})",
       "messages[0].colour: unknown field"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": ""}]})",
       "messages[1]: an assistant message without content or tool calls"},
      {R"({"messages": [{"role": "user", "content": "u", "tool_calls": []}, {"role": "assistant", "content": "a"}]})",
       "messages[0].tool_calls: only assistant messages have it"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}]})",
       "messages[1].tool_calls[0].id: expected the call's id"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a", "tool_calls": [{"id": "1", "type": "tool", "function": {"name": "f", "arguments": "{}"}}]}]})",
       "messages[1].tool_calls[0].type: expected \"function\""},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "", "arguments": "{}"}}]}]})",
       "messages[1].tool_calls[0].function.name: expected the function's name"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": 3}}]}]})",
       "messages[1].tool_calls[0].function.arguments: expected a JSON object or a string holding one, got "
       "integer"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f"}}]}]})",
       "messages[1].tool_calls[0].function.arguments: missing"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": {}}}, {"id": "1", "type": "function", "function": {"name": "g", "arguments": {}}}]}]})",
       "messages[1].tool_calls[1].id: 1 is used twice in the record"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}, {"role": "tool", "content": "r"}]})",
       "messages[2].tool_call_id: missing"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}, {"role": "tool", "tool_call_id": "c9", "content": "r"}]})",
       "messages[2].tool_call_id: c9 answers no earlier tool call"},
      {R"({"messages": [{"role": "user", "content": "u", "tool_call_id": "c"}, {"role": "assistant", "content": "a"}]})",
       "messages[0].tool_call_id: only tool messages have it"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a", "reasoning_content": 1}]})",
       "messages[1].reasoning_content: expected a string, got integer"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}], "tools": {}})",
       "tools: expected an array of tools, got object"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}], "tools": [{"type": "function", "function": {"description": "d"}}]})",
       "tools[0].function.name: expected the tool's name"},
      {R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}], "prompt": "p"})",
       "messages: a record is either messages or prompt/completion, not both"},
      {R"({"prompt": "p", "completion": "c"})",
       "a plain-text prompt/completion record in a dataset of messages records (line 1 set the format)"},
      {R"({"messages": [{"role": "user", "content": "u", "role": "assistant"}]})", "duplicate key"},
      {R"({"x": 1e999})", "number out of range"},
  };
  for (const Case& c : cases) {
    for (int before : {0, 2}) {
      std::string text;
      for (int i = 0; i < before; ++i) text += good + "\n";
      if (before == 0 && c.want.find("line 1 set the format") != std::string::npos) continue;
      fs::path path = Write(text + "\n" + c.line + "\n" + good + "\n");
      auto stats = CheckDataset(path);
      ASSERT_FALSE(stats.ok()) << c.line;
      const std::string& message = stats.status().message();
      const std::string where = path.string() + ":" + std::to_string(before + 2) + ": ";
      EXPECT_EQ(message.rfind(where, 0), 0u) << "got: " << message << "\nwant it to start with: " << where;
      EXPECT_NE(message.find(c.want), std::string::npos) << "got: " << message << "\nwant: " << c.want;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST_F(DatasetTest, PromptCompletionMistakesAreRefused) {
  const struct {
    std::string line, want;
  } cases[] = {
      {R"({"prompt": "p"})", ":1: completion: missing"},
      {R"({"completion": "c"})", ":1: prompt: missing"},
      {R"({"prompt": "p", "completion": ""})", ":1: completion: empty"},
      {R"({"prompt": "p", "completion": [{"role": "assistant", "content": "a"}]})",
       ":1: completion: prompt and completion must both be strings or both be lists of messages"},
      {R"({"prompt": [{"role": "user", "content": "u"}], "completion": [{"role": "user", "content": "a"}]})",
       ":1: completion: no assistant message"},
  };
  for (const auto& c : cases) {
    auto stats = CheckDataset(Write(c.line + "\n"));
    ASSERT_FALSE(stats.ok()) << c.line;
    EXPECT_NE(stats.status().message().find(c.want), std::string::npos) << stats.status().message();
  }
}

TEST_F(DatasetTest, FilesThatHoldNoRecordsAreRefused) {
  EXPECT_NE(CheckDataset(Write("")).status().message().find("no records"), std::string::npos);
  EXPECT_NE(CheckDataset(Write("\n \n")).status().message().find("no records"), std::string::npos);
  EXPECT_EQ(CheckDataset(dir_ / "missing.jsonl").status().code(), Status::Code::kNotFound);
  EXPECT_NE(CheckDataset(dir_).status().message().find("a folder, not a file"), std::string::npos);
}

TEST_F(DatasetTest, ALineLongerThanTheLimitIsRefusedWithoutReadingItWhole) {
  DatasetCheckOptions options;
  options.max_line_bytes = 1000;
  const std::string good =
      R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]})";
  auto stats = CheckDataset(Write(good + "\n" + std::string(3 << 20, 'x') + "\n"), options);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find(":2: longer than 1000 bytes"), std::string::npos)
      << stats.status().message();
}

TEST_F(DatasetTest, HistogramAndCutCountApproximateTokens) {
  auto record = [](size_t chars) {
    return R"({"messages": [{"role": "user", "content": ""}, {"role": "assistant", "content": ")" +
           std::string(chars, 'a') + "\"}]}\n";
  };
  // 350 chars -> 100 tokens, 1750 -> 500, 7000 -> 2000 (ceil(chars / 3.5)).
  DatasetCheckOptions options;
  options.cut_at = 400;
  auto stats = CheckDataset(Write(record(350) + record(1750) + record(7000) + record(7000)), options);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(ApproxTokens(350), 100);
  EXPECT_EQ(ApproxTokens(351), 101);
  EXPECT_EQ(stats->histogram[0], 1);  // <= 128
  EXPECT_EQ(stats->histogram[2], 1);  // <= 512
  EXPECT_EQ(stats->histogram[4], 2);  // <= 2048
  EXPECT_EQ(stats->cut, 3);
  EXPECT_EQ(stats->LongerThan(512), 2);
  EXPECT_EQ(stats->LongerThan(2048), 0);
  EXPECT_EQ(stats->max_chars, 7000);
  nlohmann::json j = stats->ToJson();
  EXPECT_EQ(j["records"], 4);
  EXPECT_EQ(j["approx_tokens"]["max"], 2000);
  EXPECT_EQ(j["histogram"].size(), 3u);
  EXPECT_EQ(j["histogram"][2]["max_tokens"], 2048);
}

}  // namespace
}  // namespace kforge::finetune
