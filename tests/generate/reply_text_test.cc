// Text replies as models write them, one file each under tests/generate/replies/: what the parser
// accepts becomes the normal solution that is judged and recorded; what it refuses says why.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "fakes/fuzz.h"
#include "generate/reply_text.h"
#include "kforge/common/files.h"
#include "kforge/common/solution.h"

namespace kforge::generate {
namespace {

using nlohmann::json;

std::string Reply(const std::string& name) {
  auto text = common::ReadFile(std::string(KFORGE_SOURCE_DIR) + "/tests/generate/replies/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

TEST(ReplyTextTest, RepliesModelsWriteGiveTheSolutionTheyMean) {
  struct Case {
    const char* file;
    const char* kernel;       // the first launch's kernel
    const char* source_has;   // a piece of the judged source
    const char* source_lacks; // a piece that must not be in it (a draft, an indent, an old version)
  };
  const Case cases[] = {
      {"inline_mention.md", "relu", "fmaxf(x[i], 0.0f)", "```"},
      {"indented_list.md", "relu", "\n  long long i =", "   extern"},
      {"think_section.md", "relu", "fmaxf", "DRAFT"},
      {"lang_c.md", "relu", "fmaxf", "```"},
      {"lang_cpp.md", "relu", "fmaxf", "```"},
      {"lang_cplusplus.md", "relu", "fmaxf", "```"},
      {"lang_cu.md", "relu", "fmaxf", "```"},
      {"cuda_title.md", "relu", "fmaxf", "title="},
      {"unlabelled_plan.md", "relu", "fmaxf", "launches"},
      {"json_comments.md", "relu", "fmaxf", "//"},
      {"scalar_grid_block.md", "relu", "fmaxf", "```"},
      {"number_argument.md", "scale", "factor", "```"},
      {"earlier_attempt_quoted.md", "relu", "fmaxf", "OLD"},
      {"whole_solution_object.md", "relu", "fmaxf", "trailing"},
  };
  for (const Case& c : cases) {
    StatusOr<common::Solution> solution = ParseReplyText(Reply(c.file));
    ASSERT_TRUE(solution.ok()) << c.file << ": " << solution.status().message();
    ASSERT_EQ(solution->launches.size(), 1u) << c.file;
    EXPECT_EQ(solution->launches[0].kernel, c.kernel) << c.file;
    EXPECT_NE(solution->source.find(c.source_has), std::string::npos) << c.file << ":\n" << solution->source;
    EXPECT_EQ(solution->source.find(c.source_lacks), std::string::npos) << c.file << ":\n" << solution->source;
  }
}

TEST(ReplyTextTest, TheRecordedSolutionIsTheNormalisedOne) {
  // A scalar grid and block are read as one dimension (the canonical form pads to three).
  auto scalar = ParseReplyText(Reply("scalar_grid_block.md"));
  ASSERT_TRUE(scalar.ok()) << scalar.status().message();
  json plan = common::SolutionToJson(*scalar);
  EXPECT_EQ(plan["launches"][0]["grid"], json::array({"cdiv(numel(x), 256)", "1", "1"})) << plan.dump();
  EXPECT_EQ(plan["launches"][0]["block"], json::array({"256", "1", "1"})) << plan.dump();
  // Numbers as arguments take the type of the kernel's parameter: long long, float, int.
  auto numbers = ParseReplyText(Reply("number_argument.md"));
  ASSERT_TRUE(numbers.ok()) << numbers.status().message();
  json args = common::SolutionToJson(*numbers)["launches"][0]["args"];
  EXPECT_EQ(args, json::array({"x", "out0", "i64:16384", "f32:2.5", "i32:7"})) << args.dump();
  // The same solution written strictly and written loosely is one solution.
  auto strict = ParseReplyText(Reply("lang_cu.md"));
  auto loose = ParseReplyText(Reply("json_comments.md"));
  ASSERT_TRUE(strict.ok() && loose.ok());
  EXPECT_EQ(common::SolutionHash(*strict), common::SolutionHash(*loose));
}

TEST(ReplyTextTest, WhatCannotBeReadSaysWhy) {
  struct Case {
    const char* file;
    const char* expect;
  };
  const Case cases[] = {
      {"cut_at_limit.md", "found 0 and 0"},
      {"bad_json.md", "```json block: not a JSON object"},
  };
  for (const Case& c : cases) {
    StatusOr<common::Solution> solution = ParseReplyText(Reply(c.file));
    ASSERT_FALSE(solution.ok()) << c.file;
    EXPECT_NE(solution.status().message().find(c.expect), std::string::npos)
        << c.file << ": " << solution.status().message();
  }
  // A number for a pointer parameter is not guessed at.
  auto pointer = ParseReplyText(
      "```cuda\n__global__ void k(float* p) {}\n```\n```json\n"
      "{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [1], \"args\": [0]}]}\n```\n");
  ASSERT_FALSE(pointer.ok());
  EXPECT_NE(pointer.status().message().find("args[0]"), std::string::npos) << pointer.status().message();
}

TEST(ReplyTextTest, ThinkingAndRelaxedJsonHelpers) {
  EXPECT_EQ(WithoutThinking("a<think>b</think>c<think>d"), "ac");
  EXPECT_EQ(json::parse(RelaxedJson("{\"a\": \"//not a comment\", /* x */ \"b\": [1, 2,], }")),
            json({{"a", "//not a comment"}, {"b", {1, 2}}}));
}

// A plan naming the kernel "" with untyped scalar arguments: the search for the kernel's parameters
// once found "" at the same place forever, and the reply never parsed (found by the fuzz target, seed 7).
TEST(ReplyTextTest, AnEmptyKernelNameEndsTheParse) {
  const std::string reply =
      "```cuda\nextern \"C\" __global__ void relu(const float* x, float* y, long long n) {}\n```\n"
      "```json\n{\"launches\": [{\"kernel\": \"\", \"grid\": [64], \"block\": [256], "
      "\"args\": [\"x\", \"out0\", 16384, 2.5, 7]}]}\n```\n";
  StatusOr<common::Solution> solution = ParseReplyText(reply);
  if (!solution.ok()) EXPECT_EQ(solution.status().message().find('\n'), std::string::npos);
}

TEST(ReplyTextFuzzTest, EveryReplyGivesASolutionThatRoundTripsOrOneLine) {
  fakes::FuzzTarget target;
  target.name = "reply text";
  target.seeds = fakes::ReadFilesUnder(std::string(KFORGE_SOURCE_DIR) + "/tests/generate/replies", ".md");
  ASSERT_GE(target.seeds.size(), 10u);
  target.dictionary = {"```", "```cuda", "```json", "   ```", "<think>", "</think>", "//", "/*", "*/", ",]", ",}",
                       "\"block\": 256", "\"args\": [1, 2.5]", "__global__", "long long", "float* p", "{", "}",
                       "\"", "\\", "\n", "\r\n", "\xff", "-1", "1e400", "9223372036854775808"};
  target.max_bytes = 8192;
  target.property = [](const std::string& input) -> fakes::FuzzOutcome {
    StatusOr<common::Solution> solution = ParseReplyText(input);
    if (!solution.ok()) {
      const std::string& m = solution.status().message();
      if (m.empty() || m.find('\n') != std::string::npos) return {"error not one line: " + m.substr(0, 80), ""};
      return {"", fakes::MessageLabel(m)};
    }
    // What is recorded (the canonical form) reads back as the same solution.
    StatusOr<common::Solution> again = common::SolutionFromJson(common::SolutionToJson(*solution), "record");
    if (!again.ok()) return {"recorded form does not read back: " + again.status().message().substr(0, 80), ""};
    if (common::SolutionHash(*again) != common::SolutionHash(*solution)) return {"recorded form differs", ""};
    return {"", "ok"};
  };
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::generate
