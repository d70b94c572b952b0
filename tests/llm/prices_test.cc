#include "kforge/llm/prices.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kforge::llm {
namespace {

using nlohmann::json;

TEST(PriceTableTest, CostAndPrefixMatch) {
  StatusOr<PriceTable> t = PriceTable::FromJson(json::parse(R"({
    "schema": "kforge.prices/1",
    "models": {"claude-sonnet-4-5": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75},
               "claude-sonnet-4": {"input": 100, "output": 100},
               "gpt-4o-mini": {"input": 0.15, "output": 0.6}}})"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Usage u{1000000, 2000000, 1000000, 1000000};
  EXPECT_DOUBLE_EQ(*t->Cost("anthropic", "claude-sonnet-4-5", u), 3 + 30 + 0.3 + 3.75);
  EXPECT_DOUBLE_EQ(*t->Cost("anthropic", "claude-sonnet-4-5-20250929", u),
                   3 + 30 + 0.3 + 3.75);  // a dated id
  EXPECT_FALSE(t->Cost("anthropic", "claude-sonnet-4.5x", u).has_value());
  EXPECT_FALSE(t->Cost("openai", "llama-3-8b", u).has_value());
}

TEST(PriceTableTest, ExactIdsDatedIdsAndAliasesButNeverAPrefix) {
  StatusOr<PriceTable> t = PriceTable::FromJson(json::parse(R"({
    "schema": "kforge.prices/1",
    "models": {"claude-opus-4": {"input": 15, "output": 75},
               "claude-opus-4-5": {"input": 5, "output": 25, "aliases": ["claude-opus-4-5-thinking"]},
               "gpt-4o": {"input": 2.5, "output": 10}}})"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  struct Case {
    const char* model;
    std::optional<double> input;
  };
  const Case cases[] = {
      {"claude-opus-4-5", 5},
      {"claude-opus-4-5-20251101", 5},
      {"claude-opus-4-5@20251101", 5},
      {"claude-opus-4-5-thinking", 5},
      {"anthropic/claude-opus-4-5", 5},
      {"claude-opus-4-20250514", 15},
      {"claude-opus-4-6", std::nullopt},  // a newer model is not priced as an older one
      {"claude-opus-4-1", std::nullopt},
      {"gpt-4o-2024-08-06", 2.5},
      {"gpt-4o-mini", std::nullopt},
      {"gpt-4o-latest", 2.5},
  };
  for (const Case& c : cases) {
    std::optional<ModelPrice> p = t->Find(c.model);
    ASSERT_EQ(p.has_value(), c.input.has_value()) << c.model;
    if (p) {
      EXPECT_EQ(p->input, *c.input) << c.model;
    }
  }
  StatusOr<PriceTable> bad = PriceTable::FromJson(
      json::parse(R"({"schema": "kforge.prices/1", "models": {"m": {"input": 1, "output": 2, "aliases": "x"}}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("prices.models.m.aliases"), std::string::npos) << bad.status().message();
}

TEST(PriceTableTest, RejectsBadTables) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"models": {}})", "prices.schema"},
      {R"({"schema": "kforge.prices/1", "models": {"m": {"input": 1}}})",
       "prices.models.m: needs input and output"},
      {R"({"schema": "kforge.prices/1", "models": {"m": {"input": 1, "output": -2}}})",
       "prices.models.m.output"},
      {R"({"schema": "kforge.prices/1", "models": {"m": {"input": 1, "output": 2, "ouput": 2}}})",
       "prices.models.m.ouput: unknown field"},
  };
  for (const Case& c : cases) {
    StatusOr<PriceTable> t = PriceTable::FromJson(json::parse(c.json));
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_NE(t.status().message().find(c.expected), std::string::npos) << t.status().message();
  }
}

TEST(PriceTableTest, ShippedTableLoads) {
  StatusOr<PriceTable> t = PriceTable::Load(std::string(KFORGE_SOURCE_DIR) + "/prompts/prices.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->Find("claude-sonnet-4-5").has_value());
  EXPECT_TRUE(t->Find("gpt-4o").has_value());
}

}  // namespace
}  // namespace kforge::llm
