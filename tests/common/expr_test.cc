#include "kforge/common/expr.h"

#include <gtest/gtest.h>
#include <cstdint>

#include <map>

namespace kforge::common {
namespace {

ExprEnv TestEnv() {
  static const std::map<std::string, int64_t> symbols = {{"N", 1000}, {"B", 16}, {"D", 4096}};
  static const std::map<std::string, std::vector<int64_t>> shapes = {{"x", {16, 4096}},
                                                                     {"conv.weight", {8, 3, 3, 3}}};
  ExprEnv env;
  env.symbol = [](std::string_view name) -> std::optional<int64_t> {
    auto it = symbols.find(std::string(name));
    if (it == symbols.end()) return std::nullopt;
    return it->second;
  };
  env.shape = [](std::string_view name) -> std::optional<std::vector<int64_t>> {
    auto it = shapes.find(std::string(name));
    if (it == shapes.end()) return std::nullopt;
    return it->second;
  };
  return env;
}

TEST(ExprTest, Evaluates) {
  struct Case {
    const char* text;
    int64_t value;
  };
  const Case cases[] = {
      {"42", 42},
      {"1 + 2 * 3", 7},
      {"(1 + 2) * 3", 9},
      {"-7 / 2", -3},
      {"-7 % 3", -1},
      {"--3", 3},
      {"cdiv(N, 256)", 4},
      {"cdiv(1024, 256)", 4},
      {"cdiv(0, 256)", 0},
      {"min(B, 8) + max(B, 8)", 24},
      {"numel(x)", 16 * 4096},
      {"size(x, 1)", 4096},
      {"size(x, -2)", 16},
      {"numel(conv.weight)", 216},
      {"cdiv(numel(x), 4 * 256)", 64},
      {"B*D/ 32", 2048},
      {"9223372036854775807", INT64_MAX},
      {"(-9223372036854775807-1) % -1", 0},
      {"cdiv(-9223372036854775807-1, 1)", INT64_MIN},
      {"cdiv(9223372036854775807, -1)", -INT64_MAX},
  };
  ExprEnv env = TestEnv();
  for (const Case& c : cases) {
    auto v = EvalExpr(c.text, env);
    ASSERT_TRUE(v.ok()) << c.text << ": " << v.status().ToString();
    EXPECT_EQ(*v, c.value) << c.text;
  }
}

TEST(ExprTest, RejectsWithPosition) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"N / 0", "in \"N / 0\" at 3: division by zero"},
      {"N % (B - 16)", "modulo by zero"},
      {"cdiv(N, 0)", "cdiv by zero"},
      {"9223372036854775807 + 1", "integer overflow"},
      {"99999999999999999999", "integer literal too large"},
      {"4611686018427387904 * 4", "integer overflow"},
      {"-(-9223372036854775807 - 1)", "integer overflow"},
      {"M + 1", "unknown symbol \"M\""},
      {"numel(y)", "unknown tensor \"y\""},
      {"size(x, 2)", "tensor has rank 2"},
      {"size(x, -9223372036854775807-1)", "tensor has rank 2"},
      {"cdiv(-9223372036854775807-1, -1)", "at 33: integer overflow"},
      {"min(1, cdiv(-9223372036854775807 - 1, max(-1, -2)))", "integer overflow"},
      {"(-9223372036854775807-1) / -1", "integer overflow"},
      {"pow(2, 3)", "unknown function \"pow\""},
      {"(1 + 2", "expected ')'"},
      {"1 +", "unexpected end of expression"},
      {"1 2", "unexpected '2'"},
      {"", "unexpected end of expression"},
      {"$", "unexpected '$'"},
      {"cdiv(1)", "expected ','"},
  };
  ExprEnv env = TestEnv();
  for (const Case& c : cases) {
    auto v = EvalExpr(c.text, env);
    ASSERT_FALSE(v.ok()) << c.text << " = " << *v;
    EXPECT_NE(v.status().message().find(c.message), std::string::npos)
        << c.text << " -> " << v.status().message();
  }
}

TEST(ExprTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(500, '(');
  deep += "1" + std::string(500, ')');
  EXPECT_FALSE(EvalExpr(deep, TestEnv()).ok());
  EXPECT_FALSE(EvalExpr(std::string(2000, '1'), TestEnv()).ok());
}

TEST(ExprTest, ParseChecksSyntaxWithoutNames) {
  EXPECT_TRUE(ParseExpr("cdiv(numel(anything), BLOCK) * 2").ok());
  EXPECT_FALSE(ParseExpr("cdiv(N,").ok());
}

// Without names only what every value of the names would give is an error: sizes are not 1.
TEST(ExprTest, SyntaxCheckRejectsOnlyWhatNamesCannotChange) {
  struct Case {
    const char* text;
    bool ok;
  } cases[] = {
      {"cdiv(numel(x), size(x, 1) - 1)", true},  // cdiv by zero only if size(x, 1) == 1
      {"N / (B - 1)", true},
      {"N % (1 - B)", true},
      {"(H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * "
       "(H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * (H - 8) * "
       "(H - 8) * (H - 8) * (H - 8) * (H - 8)",
       true},  // overflows only for large H
      {"N / 0", false},
      {"cdiv(numel(x), 0)", false},
      {"N % (2 - 2)", false},
      {"9223372036854775807 + 1 + N", false},
      {"99999999999999999999", false},
  };
  for (const Case& c : cases)
    EXPECT_EQ(ParseExpr(c.text).ok(), c.ok) << c.text << ": " << ParseExpr(c.text).message();
}

// Errors are one line and quote at most the start of the expression, whatever its length.
TEST(ExprTest, ErrorsQuoteTheExpressionShortAndOnOneLine) {
  const std::string cases[] = {std::string(10 << 20, '1'), "N +\n", "M\n+ 1", std::string(1000, '(') + "\x01",
                               "N + " + std::string(900, 'a') + " $"};
  for (const std::string& text : cases) {
    auto v = EvalExpr(text, TestEnv());
    ASSERT_FALSE(v.ok());
    const std::string& m = v.status().message();
    EXPECT_LE(m.size(), 200u) << m.substr(0, 300);
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find('\x01'), std::string::npos) << m;
  }
  EXPECT_NE(EvalExpr(std::string(2000, '1'), TestEnv()).status().message().find("2000 characters"),
            std::string::npos);
}

}  // namespace
}  // namespace kforge::common
