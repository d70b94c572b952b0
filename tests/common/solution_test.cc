#include "kforge/common/solution.h"

#include <gtest/gtest.h>

#include "kforge/common/json_fields.h"

namespace kforge::common {
namespace {

constexpr const char* kGood = R"J({
  "schema": "kforge.solution/1",
  "task": "demo/relu",
  "source": "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {}",
  "launches": [
    {"memset": "out0", "value": 0},
    {"kernel": "relu", "grid": ["cdiv(numel(x), 256)"], "block": [256, 1, 1],
     "shared_bytes": 0, "args": ["x", "out0", "i64:numel(x)", "f32:1e-5"]}
  ],
  "scratch": [{"name": "tmp", "dtype": "float32", "shape": ["size(x, 0)"]}],
  "options": ["--use_fast_math"]
})J";

TEST(SolutionTest, ParsesJson) {
  auto solution = ParseSolutionText(kGood, "sol.json");
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->task, "demo/relu");
  ASSERT_EQ(solution->launches.size(), 2u);
  EXPECT_EQ(solution->launches[0].kind, LaunchStep::Kind::kMemset);
  EXPECT_EQ(solution->launches[0].memset_target, "out0");
  const LaunchStep& k = solution->launches[1];
  EXPECT_EQ(k.kernel, "relu");
  EXPECT_EQ(k.grid, (std::vector<std::string>{"cdiv(numel(x), 256)", "1", "1"}));
  EXPECT_EQ(k.block, (std::vector<std::string>{"256", "1", "1"}));
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.args[2].kind, LaunchArg::Kind::kI64);
  EXPECT_EQ(k.args[2].text, "numel(x)");
  EXPECT_EQ(k.args[3].kind, LaunchArg::Kind::kF32);
  EXPECT_FLOAT_EQ(k.args[3].number, 1e-5);
  ASSERT_EQ(solution->scratch.size(), 1u);
  EXPECT_EQ(solution->options, std::vector<std::string>{"--use_fast_math"});
}

TEST(SolutionTest, RoundTripsThroughCanonicalJson) {
  auto solution = ParseSolutionText(kGood, "sol.json");
  ASSERT_TRUE(solution.ok());
  auto again = SolutionFromJson(SolutionToJson(*solution), "again");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(SolutionHash(*solution), SolutionHash(*again));
  Solution changed = *again;
  changed.source += " ";
  EXPECT_NE(SolutionHash(*solution), SolutionHash(changed));
}

TEST(SolutionTest, ParsesModelReply) {
  const char* reply =
      "Here is a kernel.\n\n```cuda\nextern \"C\" __global__ void k(float* y) { y[0] = 1; }\n```\n"
      "And the plan:\n```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [1], "
      "\"args\": [\"out0\"]}]}\n```\nDone.";
  auto solution = ParseSolutionText(reply, "reply");
  ASSERT_TRUE(solution.ok()) << solution.status().ToString();
  EXPECT_EQ(solution->source, "extern \"C\" __global__ void k(float* y) { y[0] = 1; }\n");
  EXPECT_EQ(solution->launches[0].kernel, "k");
}

TEST(SolutionTest, AReplysJsonBlockMayNameTheSchema) {
  const std::string cuda = "```cuda\nextern \"C\" __global__ void k(float* y) { y[0] = 1; }\n```\n";
  const std::string plan =
      "\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [1], \"args\": [\"out0\"]}]";
  EXPECT_TRUE(
      ParseSolutionText(cuda + "```json\n{\"schema\": \"kforge.solution/2\", " + plan + "}\n```\n", "r")
          .ok());
  auto bad =
      ParseSolutionText(cuda + "```json\n{\"schema\": \"kforge.solution/9\", " + plan + "}\n```\n", "r");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("r: ```json block: schema: expected"), std::string::npos)
      << bad.status().message();
}

TEST(SolutionTest, RejectsBadInputWithPath) {
  struct Case {
    std::string text;
    std::string message;
  };
  auto with = [](const std::string& from, const std::string& to) {
    std::string s = kGood;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  const Case cases[] = {
      {"{\"source\": ", "sol.json: line 1, column 12: malformed JSON"},
      {with("\"options\"", "\"optoins\""), "sol.json: optoins: unknown field"},
      {with("kforge.solution/1", "kforge.solution/3"),
       "sol.json: schema: expected \"kforge.solution/1\" or \"kforge.solution/2\""},
      {with("\"cdiv(numel(x), 256)\"", "\"cdiv(numel(x), \""),
       "sol.json: launches[1].grid[0]: in \"cdiv(numel(x), \""},
      {with("[256, 1, 1]", "[256, 1, 1, 1]"), "launches[1].block: expected 1 to 3 sizes"},
      {with("\"i64:numel(x)\"", "\"q8:1\""), "launches[1].args[2]: \"q8:1\" is neither a tensor name"},
      {with("\"f32:1e-5\"", "\"f32:nan\""), "launches[1].args[3]: \"nan\" is not a finite number"},
      {with("\"float32\"", "\"float33\""), "scratch[0].dtype: unknown dtype \"float33\""},
      {with("\"kernel\": \"relu\"", "\"kernel\": \"a/b\""), "launches[1].kernel: expected a kernel name"},
      {with("\"kernel\": \"relu\"", "\"kernel\": \"k<1>\\n#include </etc/passwd>\""),
       "launches[1].kernel: expected a kernel name"},
      {with("\"kernel\": \"relu\", ", ""), "sol.json: launches[1].kernel: missing"},
      {"[1, 2]", "reply: expected one ```cuda block and one ```json block, found 0 and 0"},
      {"```cuda\nx\n```\n", "expected one ```cuda block and one ```json block, found 1 and 0"},
      {"{\"source\": \"x\", \"launches\": []}", "sol.json: launches: expected a non-empty array"},
      {"{\"source\": 5, \"launches\": []}", "sol.json: source: expected a string, got integer"},
  };
  for (const Case& c : cases) {
    std::string where = c.text[0] == '[' ? "reply" : "sol.json";
    auto solution = ParseSolutionText(c.text, where);
    ASSERT_FALSE(solution.ok()) << c.text;
    EXPECT_NE(solution.status().message().find(c.message), std::string::npos)
        << "got: " << solution.status().message() << "\nwant: " << c.message;
  }
}

TEST(SolutionTest, KernelNames) {
  struct Row {
    std::string name;
    bool valid;
  };
  const Row rows[] = {
      {"relu", true},
      {"_Z7softmaxIfLi256EEvPKT_PS0_", true},
      {"softmax<float, 256>", true},
      {"ns::scale", true},
      {"::scale", true},
      {"gemm<__half, 128, -1>", true},
      {"k<const float*>", true},
      {std::string(1024, 'k'), true},  // a long mangled symbol
      {std::string(1025, 'k'), false},
      {"k<" + std::string(300, '1') + ">", false},  // a name expression is at most 256 characters
      {"", false},
      {"1k", false},
      {"a.b", false},
      {"k<\"x\">", false},
      {"k<1>\n#include </etc/passwd>", false},
      {"k<1> /* c */", false},
      {"k(1)", false},
      {"k#1", false},
  };
  for (const Row& row : rows) EXPECT_EQ(IsKernelName(row.name), row.valid) << row.name.substr(0, 40);
}

// Inputs that aborted a whole batch (an exception escaped the parser or the hash) or were misread.
TEST(SolutionTest, HostileInputsGetAnErrorOrASolutionThatHashes) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string s = kGood;
    return s.replace(s.find(from), from.size(), to);
  };
  const std::string bad_utf8_reply =
      "```cuda\nextern \"C\" __global__ void k(float* y) { y[0] = 1; } // \xff\xfe\n```\n"
      "```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [1], \"args\": "
      "[\"out0\"]}]}\n```\n";
  struct Case {
    std::string text;
    std::string message;  ///< Empty: the input parses.
  } cases[] = {
      {with("\"value\": 0", "\"value\": 1e400"), "sol.json: line 6, column 37: number out of range"},
      {with("\"value\": 0", "\"value\": -1e400"), "number out of range"},
      {with("[256, 1, 1]", "[18446744073709551615]"), "launches[1].block[0]: in \"18446744073709551615\""},
      {with("[256, 1, 1]", "[18446744073709551615]"), "integer literal too large"},
      {with("\"task\": \"demo/relu\",", "\"task\": \"demo/relu\", \"task\": \"demo/gelu\","),
       "sol.json: task: duplicate key"},
      {with("{\"memset\": \"out0\", \"value\": 0}", "{\"memset\": \"out0\", \"memset\": \"x\"}"),
       "sol.json: launches[0].memset: duplicate key"},
      {bad_utf8_reply, "sol.json: ```cuda block: invalid UTF-8 at byte 56 of the block"},
      {"\xEF\xBB\xBF" + std::string(kGood), ""},
      {"\xEF\xBB\xBF" + bad_utf8_reply.substr(0, 8) + "// ok\n" +
           bad_utf8_reply.substr(bad_utf8_reply.find("```\n")),
       ""},
      {with("\"options\": [\"--use_fast_math\"]", "\"options\": " + std::string(100000, '[')),
       "sol.json: options[0][0][0]"},
      {with("\"options\": [\"--use_fast_math\"]", "\"options\": " + std::string(100000, '[')),
       "[0]: nested deeper than 64 levels"},
      {with("\"schema\": \"kforge.solution/1\"", "\"schema\": \"a\\nb\""), "got \"a\\nb\""},
      {with("\"f32:1e-5\"", "\"f32:1e39\""), "launches[1].args[3]: \"1e39\" does not fit a float"},
      {with("\"f32:1e-5\"", "\"f64:1e39\""), ""},
  };
  for (const Case& c : cases) {
    StatusOr<Solution> solution = ParseSolutionText(c.text, "sol.json");
    if (c.message.empty()) {
      ASSERT_TRUE(solution.ok()) << solution.status().ToString();
      EXPECT_EQ(SolutionHash(*solution).rfind("sha256:", 0), 0u);
      continue;
    }
    ASSERT_FALSE(solution.ok()) << c.text.substr(0, 200);
    const std::string& m = solution.status().message();
    EXPECT_NE(m.find(c.message), std::string::npos) << "got: " << m << "\nwant: " << c.message;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_LE(m.size(), 300u) << m;
  }
}

TEST(SolutionTest, RejectsOversizedSourceWithoutEchoingIt) {
  nlohmann::json json = nlohmann::json::parse(kGood);
  json["source"] = std::string(50 * 1024 * 1024, 'Z');
  auto solution = SolutionFromJson(json, "big.json");
  ASSERT_FALSE(solution.ok());
  EXPECT_EQ(solution.status().message(), "big.json: source: 52428800 bytes, over the 256 KiB limit");
}

TEST(SolutionTest, MalformedJsonErrorDoesNotQuoteInput) {
  auto solution = ParseSolutionText("{\"secret-ish\": \x01\x02 garbage", "bin.json");
  ASSERT_FALSE(solution.ok());
  EXPECT_EQ(solution.status().message().find("secret-ish"), std::string::npos);
  EXPECT_NE(solution.status().message().find("bin.json: line 1"), std::string::npos);
}

}  // namespace
}  // namespace kforge::common
