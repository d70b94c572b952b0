#include "kforge/export/filters.h"

#include <functional>

#include <gtest/gtest.h>

#include "export/record_builder.h"

namespace kforge::exporter {
namespace {

TEST(FiltersTest, RejectsWithAReason) {
  struct Case {
    const char* what;
    std::function<void(testing::RecordSpec&)> record;
    std::function<void(Filters&)> filters;
    std::optional<std::string> reason;
  };
  auto none = [](auto&) {};
  const Case cases[] = {
      {"correct passes", none, none, std::nullopt},
      {"incorrect", [](auto& r) { r.correct = false; }, none, "incorrect"},
      {"incorrect included", [](auto& r) { r.correct = false; }, [](auto& f) { f.include_incorrect = true; },
       std::nullopt},
      {"harness error never becomes a negative", [](auto& r) { r.harness_error = true; },
       [](auto& f) { f.include_incorrect = true; }, "harness_error"},
      {"min speedup met", none, [](auto& f) { f.min_speedup = 1.5; }, std::nullopt},
      {"min speedup missed", none, [](auto& f) { f.min_speedup = 1.6; }, "min_speedup"},
      {"untimed misses min speedup", [](auto& r) { r.speedup.reset(); }, [](auto& f) { f.min_speedup = 0.1; },
       "min_speedup"},
      {"max turns", [](auto& r) { r.turns = 3; }, [](auto& f) { f.max_turns = 2; }, "max_turns"},
      {"level", none,
       [](auto& f) {
         f.levels = {2, 3};
       },
       "level"},
      {"level kept", none, [](auto& f) { f.levels = {1}; }, std::nullopt},
      {"no level", [](auto& r) { r.level.reset(); }, [](auto& f) { f.levels = {1}; }, "level"},
      {"tag", none, [](auto& f) { f.tags = {"matmul"}; }, "tag"},
      {"tag kept", none,
       [](auto& f) {
         f.tags = {"matmul", "elementwise"};
       },
       std::nullopt},
      {"glob", none, [](auto& f) { f.task_glob = "kernelbench/level2/*"; }, "filter"},
      {"glob crosses /", none, [](auto& f) { f.task_glob = "kernelbench*ReLU"; }, std::nullopt},
  };
  for (const Case& c : cases) {
    testing::RecordSpec spec;
    c.record(spec);
    Filters filters;
    c.filters(filters);
    std::optional<std::string_view> got = Reject(testing::MakeRecord(spec), filters);
    EXPECT_EQ(got ? std::optional<std::string>(std::string(*got)) : std::nullopt, c.reason) << c.what;
  }
}

TEST(FiltersTest, ParsesLevels) {
  EXPECT_EQ(*ParseLevels("1,2,3"), (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(ParseLevels("1,x").ok());
  EXPECT_FALSE(ParseLevels("").ok());
  EXPECT_FALSE(ParseLevels("-1").ok());
}

}  // namespace
}  // namespace kforge::exporter
