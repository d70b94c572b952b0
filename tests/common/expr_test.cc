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
    ASSERT_FALSE(v.ok()) << c.text;
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

}  // namespace
}  // namespace kforge::common
