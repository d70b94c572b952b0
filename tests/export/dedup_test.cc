#include "export/dedup.h"

#include <gtest/gtest.h>

#include "export/record_builder.h"

namespace kforge::exporter {
namespace {

TEST(DedupTest, NormalizationIgnoresCommentsAndWhitespaceOnly) {
  struct Case {
    const char* a;
    const char* b;
    bool same;
  };
  const Case cases[] = {
      {"int a=b+c;", "int a = b + c ;", true},
      {"int a = b; // note", "int a = b;", true},
      {"/* header */\nint\ta = b;\n\n", "int a = b;", true},
      {"int a = b;", "int a = c;", false},
      {"s = \"a  b\";", "s = \"a b\";", false},  // string contents are kept
      {"s = \"// not a comment\";", "s = \"\";", false},
      {"#include <math.h>\nx", "#include <math.h> x", true},
  };
  for (const Case& c : cases)
    EXPECT_EQ(NormalizeSource(c.a) == NormalizeSource(c.b), c.same) << c.a << " | " << c.b;
  EXPECT_EQ(NormalizeSource("a+b // c\n"), "a + b");
}

TEST(DedupTest, SolutionKeyCoversSourceAndPlan) {
  testing::RecordSpec spec;
  nlohmann::json a = testing::SolutionJson(spec);
  nlohmann::json b = a;
  b["source"] = "// same kernel, reformatted\n" + b["source"].get<std::string>() + "\n\n";
  EXPECT_EQ(SolutionKey(a), SolutionKey(b));
  nlohmann::json c = a;
  c["launches"][0]["block"] = {512};
  EXPECT_NE(SolutionKey(a), SolutionKey(c)) << "a different launch is a different solution";
  nlohmann::json d = a;
  d["options"] = {"--use_fast_math"};
  EXPECT_NE(SolutionKey(a), SolutionKey(d));
}

std::string Kernel(int variant) {
  std::string body;
  for (int i = 0; i < 40; ++i)
    body += "  acc += x[i * " + std::to_string(i) + "] * w" + std::to_string(i % 7) + ";\n";
  if (variant == 1) body += "  acc = acc * 2.0f;\n";  // one more line
  return "__global__ void k(const float* x, float* y) {\n  float acc = 0;\n" + body + "  y[0] = acc;\n}\n";
}

TEST(DedupTest, MinHashEstimatesSimilarity) {
  auto sig = [](const std::string& text) { return MinHashOf(Tokenize(text, CommentStyle::kC)); };
  MinHash a = sig(Kernel(0)), near = sig(Kernel(1)), far = sig(testing::kReluSource);
  EXPECT_DOUBLE_EQ(Similarity(a, a), 1.0);
  EXPECT_GT(Similarity(a, near), 0.8) << "one added line in a long kernel";
  EXPECT_LT(Similarity(a, far), 0.2);
  EXPECT_DOUBLE_EQ(Similarity(Compact(a), Compact(a)), 1.0);
  EXPECT_NEAR(Similarity(Compact(a), Compact(near)), Similarity(a, near), 0.1);
  EXPECT_LT(Similarity(Compact(a), Compact(far)), 0.25);
}

TEST(DedupTest, PythonCommentsAreDropped) {
  std::vector<std::string_view> tokens = Tokenize("x = 1  # set x\ny = '#'\n", CommentStyle::kPython);
  std::vector<std::string> got(tokens.begin(), tokens.end());
  EXPECT_EQ(got, (std::vector<std::string>{"x", "=", "1", "y", "=", "'#'"}));
  tokens = Tokenize("def f():\n    \"\"\"Doc \"quoted\" # not a comment\n    \"\"\"\n    return 1\n",
                    CommentStyle::kPython);
  got.assign(tokens.begin(), tokens.end());
  EXPECT_EQ(got,
            (std::vector<std::string>{"def", "f", "(", ")", ":",
                                      "\"\"\"Doc \"quoted\" # not a comment\n    \"\"\"", "return", "1"}));
}

}  // namespace
}  // namespace kforge::exporter
