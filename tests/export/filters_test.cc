#include "kforge/export/filters.h"

#include <functional>

#include <gtest/gtest.h>

#include "export/episode.h"
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
      {"timing refused", [](auto& r) { r.suspect_timing = "faster_than_light"; }, none, "suspect_timing"},
      {"timing refused, included", [](auto& r) { r.suspect_timing = "timing_unconfirmed"; },
       [](auto& f) { f.include_suspect_timing = true; }, std::nullopt},
      {"refused timing is no speedup", [](auto& r) { r.suspect_timing = "faster_than_light"; },
       [](auto& f) {
         f.include_suspect_timing = true;
         f.min_speedup = 1.0;
       },
       "min_speedup"},
      {"shape-specialised is correct", [](auto& r) { r.shape_general = "fail"; }, none, std::nullopt},
      {"shape-specialised, general required", [](auto& r) { r.shape_general = "fail"; },
       [](auto& f) { f.require_general = true; }, "not_general"},
      {"general, general required", [](auto& r) { r.shape_general = "pass"; },
       [](auto& f) { f.require_general = true; }, std::nullopt},
      {"min speedup met", none, [](auto& f) { f.min_speedup = 1.5; }, std::nullopt},
      {"min speedup missed", none, [](auto& f) { f.min_speedup = 1.6; }, "min_speedup"},
      {"untimed misses min speedup", [](auto& r) { r.speedup.reset(); }, [](auto& f) { f.min_speedup = 0.1; },
       "min_speedup"},
      {"max turns", [](auto& r) { r.turns = 3; }, [](auto& f) { f.max_turns = 2; }, "max_turns"},
      {"mostly library ops", [](auto& r) { r.ops_fraction = 0.95; },
       [](auto& f) { f.max_ops_fraction = 0.9; }, "max_ops_fraction"},
      {"library ops at the bound", [](auto& r) { r.ops_fraction = 0.9; },
       [](auto& f) { f.max_ops_fraction = 0.9; }, std::nullopt},
      {"no library ops pass any bound", none, [](auto& f) { f.max_ops_fraction = 0; }, std::nullopt},
      {"untimed: the verdict's split",
       [](auto& r) {
         r.ops_fraction = 0.6;
         r.speedup.reset();
       },
       [](auto& f) { f.max_ops_fraction = 0.5; }, "max_ops_fraction"},
      {"min sol met", [](auto& r) { r.sol_pct = 40; }, [](auto& f) { f.min_sol_pct = 40; }, std::nullopt},
      {"min sol missed", [](auto& r) { r.sol_pct = 39.9; }, [](auto& f) { f.min_sol_pct = 40; }, "min_sol"},
      {"no roofline misses min sol", none, [](auto& f) { f.min_sol_pct = 0.1; }, "min_sol"},
      {"incorrect misses min sol first",
       [](auto& r) {
         r.correct = false;
         r.sol_pct = 90;
       },
       [](auto& f) { f.min_sol_pct = 10; }, "incorrect"},
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

TEST(FiltersTest, LibraryOpsFractionIsTheBestAttemptsBenchElseItsVerdict) {
  testing::RecordSpec spec;
  EXPECT_EQ(LibraryOpsFraction(testing::MakeRecord(spec)), std::nullopt) << "a plan without library ops";
  spec.ops_fraction = 0.95;
  dataset::Trajectory t = testing::MakeRecord(spec);
  EXPECT_EQ(LibraryOpsFraction(t), 0.95);
  t.attempts.back().verdict->timing.plan_split->ops_fraction = 0.5;
  EXPECT_EQ(LibraryOpsFraction(t), 0.95) << "the bench record's split, measured after the timed runs";
  t.attempts.back().bench = std::nullopt;
  EXPECT_EQ(LibraryOpsFraction(t), 0.5) << "untimed: the verdict's";
  t.best = 0;
  EXPECT_EQ(LibraryOpsFraction(t), std::nullopt) << "only the best attempt counts";
  t.best.reset();
  EXPECT_EQ(LibraryOpsFraction(t), std::nullopt);

  auto back = dataset::TrajectoryFromJson(dataset::ToJson(testing::MakeRecord(spec)), "record");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(LibraryOpsFraction(*back), 0.95) << "read back from its JSON line";
}

TEST(FiltersTest, ParsesLevels) {
  EXPECT_EQ(*ParseLevels("1,2,3"), (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(ParseLevels("1,x").ok());
  EXPECT_FALSE(ParseLevels("").ok());
  EXPECT_FALSE(ParseLevels("-1").ok());
}

}  // namespace
}  // namespace kforge::exporter
