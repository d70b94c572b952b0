// CheckGenerateOptions: the checks that span several options, refused in one line naming the flag,
// without the command line.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kforge/generate/generate.h"

namespace kforge::generate {
namespace {

/// Options that pass: an HTTP teacher, a run folder, the defaults.
GenerateOptions Valid(llm::ProviderKind kind = llm::ProviderKind::kOpenAi) {
  GenerateOptions o;
  o.teacher = llm::ProviderSpec{kind, kind == llm::ProviderKind::kReplay ? "cassette.jsonl" : ""};
  o.model = "m";
  o.out = "run";
  return o;
}

TEST(GenerateOptionsTest, ValidOptionsPass) {
  for (llm::ProviderKind kind :
       {llm::ProviderKind::kOpenAi, llm::ProviderKind::kAnthropic, llm::ProviderKind::kReplay}) {
    Status s = CheckGenerateOptions(Valid(kind));
    EXPECT_TRUE(s.ok()) << llm::ProviderKindName(kind) << ": " << s.message();
  }
}

TEST(GenerateOptionsTest, EachCrossOptionCheckNamesItsFlag) {
  struct Case {
    const char* name;
    llm::ProviderKind teacher;
    std::function<void(GenerateOptions&)> change;
    std::string expect;  // the whole message
  };
  const llm::ProviderKind openai = llm::ProviderKind::kOpenAi, anthropic = llm::ProviderKind::kAnthropic,
                          replay = llm::ProviderKind::kReplay;
  const std::vector<Case> cases = {
      {"no teacher", openai, [](GenerateOptions& o) { o.teacher.reset(); },
       "--teacher is required (anthropic, openai, replay:FILE, exec:CMD)"},
      {"a view twice", openai,
       [](GenerateOptions& o) {
         o.views = {View::kCode, View::kNl, View::kCode};
       },
       "--views: code is named twice"},
      {"shard out of range", openai, [](GenerateOptions& o) { o.shard_index = 2, o.shard_count = 2; },
       "--shard i/n needs 0 <= i < n"},
      {"record in the run folder", openai, [](GenerateOptions& o) { o.client.record_path = "run/c.jsonl"; },
       "--record run/c.jsonl is inside the run folder run, which this run keeps; record to a file outside "
       "it"},
      {"max tokens field", openai, [](GenerateOptions& o) { o.provider.openai_max_tokens_field = "cap"; },
       "--max-tokens-field cap: expected max_tokens or max_completion_tokens"},
      {"reasoning field", openai, [](GenerateOptions& o) { o.provider.openai_reasoning_field = "thoughts"; },
       "--reasoning-field thoughts: expected reasoning_content or reasoning"},
      {"max tokens field, not openai", anthropic,
       [](GenerateOptions& o) { o.provider.openai_max_tokens_field = "max_tokens"; },
       "--max-tokens-field: only --teacher openai sends it"},
      {"reasoning model, not openai", anthropic,
       [](GenerateOptions& o) { o.provider.openai_reasoning_model = true; },
       "--reasoning-model: only --teacher openai sends it"},
      {"batch api, replay", replay, [](GenerateOptions& o) { o.provider.batch_api = true; },
       "--batch-api: only --teacher anthropic (Message Batches) or openai (Batch API)"},
      {"header, replay", replay,
       [](GenerateOptions& o) {
         o.provider.extra_headers = {{"X-A", "1"}};
       },
       "--header: only --teacher anthropic or openai sends it"},
      {"extra body, replay", replay,
       [](GenerateOptions& o) {
         o.provider.extra_body = {{"top_k", 20}};
       },
       "--extra-body: only --teacher anthropic or openai sends it"},
      {"thinking budget, openai", openai, [](GenerateOptions& o) { o.thinking_budget_tokens = 2048; },
       "--thinking-budget: --teacher openai does not send it; use --reasoning-effort (or --extra-body)"},
      {"thinking budget over max tokens", anthropic,
       [](GenerateOptions& o) { o.thinking_budget_tokens = 8192, o.max_tokens = 4096; },
       "--thinking-budget 8192 must be below --max-tokens 4096 (thinking is part of the output)"},
  };
  for (const Case& c : cases) {
    GenerateOptions o = Valid(c.teacher);
    c.change(o);
    Status s = CheckGenerateOptions(o);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.name;
    EXPECT_EQ(s.message(), c.expect) << c.name;
  }
}

}  // namespace
}  // namespace kforge::generate
