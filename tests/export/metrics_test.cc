#include "kforge/export/metrics.h"

#include <cmath>

#include <gtest/gtest.h>

#include "export/episode.h"
#include "export/record_builder.h"

namespace kforge::exporter {
namespace {

TEST(MetricsTest, PassAtKIsTheUnbiasedEstimator) {
  struct Case {
    int64_t n, c, k;
    double want;
  };
  const Case cases[] = {
      {10, 0, 1, 0.0},          {10, 10, 1, 1.0},
      {10, 3, 1, 0.3},          {10, 3, 5, 1.0 - 21.0 / 252.0},  // 1 - C(7,5)/C(10,5)
      {5, 2, 5, 1.0},                                            // n - c < k
      {3, 1, 2, 1.0 - 1.0 / 3},                                  // 1 - C(2,2)/C(3,2)
      {1, 1, 1, 1.0},           {1, 0, 1, 0.0},
  };
  for (const Case& c : cases)
    EXPECT_NEAR(PassAtK(c.n, c.c, c.k), c.want, 1e-12) << "n=" << c.n << " c=" << c.c << " k=" << c.k;
}

Episode Make(const std::string& task, std::optional<int> level, bool correct, std::optional<double> speedup,
             bool unjudged = false) {
  Episode e;
  e.task_id = task;
  e.level = level;
  e.correct = correct;
  e.speedup = speedup;
  e.unjudged = unjudged;
  e.turns = 2;
  return e;
}

// Task A (level 1): correct at 2.0x and 0.5x, one incorrect, one harness error (not counted).
// Task B (level 2): correct at 1.2x, one incorrect.
MetricsBuilder HandExample() {
  MetricsBuilder b;
  b.Add(Make("A", 1, true, 2.0));
  b.Add(Make("A", 1, true, 0.5));
  b.Add(Make("A", 1, false, std::nullopt));
  b.Add(Make("A", 1, false, std::nullopt, /*unjudged=*/true));
  b.Add(Make("B", 2, true, 1.2));
  b.Add(Make("B", 2, false, std::nullopt));
  return b;
}

TEST(MetricsTest, KernelBenchMetricsMatchHandComputedValues) {
  std::vector<GroupMetrics> groups = HandExample().Groups();
  ASSERT_EQ(groups.size(), 3u);
  const GroupMetrics& all = groups[0];
  EXPECT_EQ(all.name, "all");
  EXPECT_EQ(all.episodes, 5);
  EXPECT_EQ(all.correct, 3);
  EXPECT_EQ(all.unjudged, 1);
  EXPECT_EQ(all.tasks, 2);
  EXPECT_DOUBLE_EQ(*all.correctness, 0.6);
  // fast_p = correct and speedup > p, over all 5 judged episodes; 2.0 is not > 2.
  const double want_fast[] = {0.6, 0.4, 0.2, 0.0};
  for (size_t i = 0; i < kFastP.size(); ++i)
    EXPECT_DOUBLE_EQ(*all.fast_p[i], want_fast[i]) << "p=" << kFastP[i];
  EXPECT_NEAR(*all.geomean_speedup, std::cbrt(2.0 * 0.5 * 1.2), 1e-12);
  // pass@1 = mean over tasks of 1 - C(n-c,1)/C(n,1): A (3, 2) -> 2/3, B (2, 1) -> 1/2.
  ASSERT_EQ(all.pass_at_k.size(), 1u) << "k = 5 needs a task with 5 episodes";
  EXPECT_EQ(all.pass_at_k[0].first, 1);
  EXPECT_NEAR(all.pass_at_k[0].second, (2.0 / 3 + 0.5) / 2, 1e-12);
  ASSERT_TRUE(all.speedup_quantiles);
  EXPECT_NEAR(all.speedup_quantiles->p50, 1.2, 1e-6);
  EXPECT_NEAR(all.speedup_quantiles->p10, 0.5 + 0.2 * 0.7, 1e-6);
  EXPECT_NEAR(all.speedup_quantiles->p90, 1.2 + 0.8 * 0.8, 1e-6);

  const GroupMetrics& level1 = groups[1];
  EXPECT_EQ(level1.name, "level 1");
  EXPECT_EQ(level1.episodes, 3);
  EXPECT_EQ(level1.unjudged, 1);
  EXPECT_NEAR(*level1.correctness, 2.0 / 3, 1e-12);
  EXPECT_NEAR(*level1.fast_p[1], 1.0 / 3, 1e-12);
  EXPECT_NEAR(*level1.geomean_speedup, 1.0, 1e-12);
  const GroupMetrics& level2 = groups[2];
  EXPECT_EQ(level2.name, "level 2");
  EXPECT_DOUBLE_EQ(*level2.correctness, 0.5);
  EXPECT_DOUBLE_EQ(*level2.fast_p[1], 0.5);
}

TEST(MetricsTest, KForgeMetrics) {
  MetricsBuilder b;
  for (int i = 0; i < 4; ++i) {
    Episode e = Make("T", std::nullopt, i < 2, i < 2 ? std::optional<double>(1.0 + i) : std::nullopt);
    e.first_turn_compiled = i != 3;
    e.first_turn_correct = i == 0;
    if (i < 2) e.first_correct_turn = i + 1;  // repairs: 0 and 1
    if (i == 0) e.sol_pct = 40;
    if (i == 1) e.sol_pct = 60;
    if (i == 1) e.reference_sol_pct = 12;  // the other reference was not timed beside its kernel
    e.tokens = 1000;
    e.cost_usd = 0.5;
    e.cost_known = i != 3;
    b.Add(e);
  }
  std::vector<GroupMetrics> groups = b.Groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].name, "no level");
  const GroupMetrics& all = groups[0];
  EXPECT_DOUBLE_EQ(*all.first_turn_compile_rate, 0.75);
  EXPECT_DOUBLE_EQ(*all.first_turn_correct_rate, 0.25);
  EXPECT_DOUBLE_EQ(*all.mean_repair_turns, 0.5);
  EXPECT_DOUBLE_EQ(*all.median_sol_pct, 50);
  EXPECT_DOUBLE_EQ(*all.median_reference_sol_pct, 12);
  EXPECT_DOUBLE_EQ(*all.tokens_per_correct, 2000);
  EXPECT_DOUBLE_EQ(*all.cost_per_correct, 1.0);
  EXPECT_FALSE(all.cost_known);
  ASSERT_EQ(all.first_correct_turns.size(), 3u);
  EXPECT_EQ(all.first_correct_turns[1], 1);
  EXPECT_EQ(all.first_correct_turns[2], 1);
  ASSERT_EQ(all.pass_at_k.size(), 1u);  // 4 episodes: k = 1 only
  EXPECT_DOUBLE_EQ(all.pass_at_k[0].second, 0.5);
}

TEST(MetricsTest, NoEpisodesGiveNoRates) {
  MetricsBuilder b;
  b.Add(Make("A", 1, false, std::nullopt, /*unjudged=*/true));
  GroupMetrics all = b.Groups()[0];
  EXPECT_EQ(all.episodes, 0);
  EXPECT_EQ(all.unjudged, 1);
  EXPECT_FALSE(all.correctness);
  EXPECT_FALSE(all.fast_p[0]);
  EXPECT_FALSE(all.geomean_speedup);
  EXPECT_TRUE(all.pass_at_k.empty());
}

TEST(MetricsTest, SummarizeReadsARecord) {
  testing::RecordSpec spec;
  spec.turns = 3;
  spec.speedup = 2.5;
  spec.sol_pct = 33;
  Episode e = Summarize(testing::MakeRecord(spec));
  EXPECT_EQ(e.task_id, "kernelbench/level1/19_ReLU");
  EXPECT_EQ(e.level, 1);
  EXPECT_TRUE(e.correct);
  EXPECT_EQ(e.speedup, 2.5);
  EXPECT_EQ(e.first_correct_turn, 3);
  EXPECT_EQ(e.turns, 3);
  EXPECT_FALSE(e.first_turn_compiled) << "turn 1 failed to compile";
  EXPECT_EQ(e.sol_pct, 33);
  EXPECT_FALSE(e.unjudged);

  spec.harness_error = true;
  e = Summarize(testing::MakeRecord(spec));
  EXPECT_TRUE(e.unjudged);
  EXPECT_FALSE(e.correct);
}

TEST(MetricsTest, KernelsMostlyInLibraryOpsAreCountedAndLeftOutOfFastPWithoutThem) {
  MetricsBuilder b;
  Episode library = Make("A", 1, true, 3.0);
  library.mostly_library_ops = true;
  b.Add(library);
  b.Add(Make("A", 1, true, 1.2));
  b.Add(Make("B", 2, true, 0.8));
  b.Add(Make("B", 2, false, std::nullopt));
  std::vector<GroupMetrics> groups = b.Groups();
  const GroupMetrics& all = groups[0];
  EXPECT_EQ(all.mostly_library_ops, 1);
  const double want_fast[] = {0.75, 0.5, 0.25, 0.25};
  const double want_without[] = {0.5, 0.25, 0, 0};  // 3.0x is the library's: not fast, still an episode
  for (size_t i = 0; i < kFastP.size(); ++i) {
    EXPECT_DOUBLE_EQ(*all.fast_p[i], want_fast[i]) << "p=" << kFastP[i];
    EXPECT_DOUBLE_EQ(*all.fast_p_without_library_ops[i], want_without[i]) << "p=" << kFastP[i];
  }
  EXPECT_EQ(groups[1].mostly_library_ops, 1);
  EXPECT_EQ(groups[2].mostly_library_ops, 0);
  EXPECT_EQ(groups[2].fast_p_without_library_ops, groups[2].fast_p);
  EXPECT_EQ(b.tasks().at("A").mostly_library_ops, 1);
}

TEST(MetricsTest, SummarizeSaysWhenTheBestAttemptIsMostlyLibraryOps) {
  testing::RecordSpec spec;
  EXPECT_FALSE(Summarize(testing::MakeRecord(spec)).mostly_library_ops);
  spec.ops_fraction = 0.9;
  EXPECT_FALSE(Summarize(testing::MakeRecord(spec)).mostly_library_ops) << "90% is not more than 90%";
  spec.ops_fraction = 0.97;
  EXPECT_TRUE(Summarize(testing::MakeRecord(spec)).mostly_library_ops);
  spec.correct = false;
  EXPECT_FALSE(Summarize(testing::MakeRecord(spec)).mostly_library_ops) << "only correct kernels count";
}

TEST(MetricsTest, FromTalliesAgreesWithTheGroups) {
  MetricsBuilder b = HandExample();
  std::vector<const TaskTally*> tallies;
  for (const auto& [id, t] : b.tasks()) tallies.push_back(&t);
  TallyMetrics m = FromTallies(tallies);
  GroupMetrics all = b.Groups()[0];
  EXPECT_EQ(m.episodes, all.episodes);
  EXPECT_DOUBLE_EQ(*m.correctness, *all.correctness);
  for (size_t i = 0; i < kFastP.size(); ++i) EXPECT_DOUBLE_EQ(*m.fast_p[i], *all.fast_p[i]);
  EXPECT_NEAR(*m.geomean_speedup, *all.geomean_speedup, 1e-12);
}

// A correct kernel whose timing kforge refused counts as correct, never as fast; a kernel that fails
// the derived sizes is correct in KernelBench's meaning and not general.
TEST(MetricsTest, RefusedTimingsAndShapeSpecialisedKernelsAreCountedApart) {
  testing::RecordSpec honest;
  honest.speedup = 1.2;
  honest.shape_general = "pass";
  testing::RecordSpec memo = honest;
  memo.speedup = 201.7;
  memo.suspect_timing = "faster_than_light";
  memo.sol_pct = 400;
  testing::RecordSpec specialised = honest;
  specialised.speedup = 2.5;
  specialised.shape_general = "fail";
  testing::RecordSpec wrong = honest;
  wrong.correct = false;
  MetricsBuilder b;
  for (const testing::RecordSpec& s : {honest, memo, specialised, wrong}) b.Add(Summarize(testing::MakeRecord(s)));
  const GroupMetrics all = b.Groups().front();
  EXPECT_EQ(all.episodes, 4);
  EXPECT_EQ(all.correct, 3);
  EXPECT_DOUBLE_EQ(*all.correctness, 0.75);
  EXPECT_EQ(all.correct_general, 2) << "the honest and the memoising kernel pass the derived sizes";
  EXPECT_DOUBLE_EQ(*all.general_correctness, 0.5);
  EXPECT_EQ(all.suspect_timing, 1);
  EXPECT_EQ(all.timed, 2) << "the refused timing is not a speedup";
  EXPECT_DOUBLE_EQ(*all.fast_p[1], 0.5) << "1.2x and 2.5x; not 201.7x";
  EXPECT_NEAR(*all.geomean_speedup, std::sqrt(1.2 * 2.5), 1e-12);
  EXPECT_FALSE(all.median_sol_pct) << "the only %SOL was the refused one";
}

}  // namespace
}  // namespace kforge::exporter
