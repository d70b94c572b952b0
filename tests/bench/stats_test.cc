#include "kforge/bench/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace kforge::bench {
namespace {

std::vector<double> OneTo(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(BenchSummarizeTest, KnownArray) {
  std::vector<double> ms = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6};
  const SampleStats s = Summarize(ms);
  EXPECT_EQ(s.count, 10);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.9);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.noise, std::sqrt(82.5 / 9) / 5.5);
  EXPECT_DOUBLE_EQ(s.median_lo, 2);
  EXPECT_DOUBLE_EQ(s.median_hi, 9);
}

TEST(BenchSummarizeTest, OddCountAndPercentileInterpolation) {
  const SampleStats s = Summarize({0.5, 0.1, 0.3, 0.2, 0.4});
  EXPECT_DOUBLE_EQ(s.median, 0.3);
  EXPECT_DOUBLE_EQ(s.p10, 0.14);
  EXPECT_DOUBLE_EQ(s.p90, 0.46);
  EXPECT_TRUE(std::isnan(s.median_lo)) << "five samples cannot give a 95% interval";
  EXPECT_TRUE(std::isnan(s.median_hi));
}

// Ranks of the distribution-free 95% interval of the median, from binomial tables.
TEST(BenchSummarizeTest, MedianIntervalRanks) {
  struct Case {
    int n, lo, hi;
  };
  const Case cases[] = {{6, 1, 6},   {7, 1, 7},    {8, 1, 8},     {9, 2, 8},       {10, 2, 9},
                        {20, 6, 15}, {50, 18, 33}, {100, 40, 61}, {1000, 469, 532}};
  for (const Case& c : cases) {
    std::vector<double> ms = OneTo(c.n);
    std::reverse(ms.begin(), ms.end());
    const SampleStats s = Summarize(ms);
    EXPECT_DOUBLE_EQ(s.median_lo, c.lo) << "n=" << c.n;
    EXPECT_DOUBLE_EQ(s.median_hi, c.hi) << "n=" << c.n;
  }
}

TEST(BenchSummarizeTest, DegenerateInputs) {
  const SampleStats empty = Summarize({});
  EXPECT_EQ(empty.count, 0);
  EXPECT_TRUE(std::isnan(empty.median));
  EXPECT_TRUE(std::isnan(empty.noise));
  const SampleStats one = Summarize({2.5});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.median, 2.5);
  EXPECT_DOUBLE_EQ(one.p10, 2.5);
  EXPECT_DOUBLE_EQ(one.p90, 2.5);
  EXPECT_TRUE(std::isnan(one.noise));
  const SampleStats flat = Summarize(std::vector<double>(20, 1.0));
  EXPECT_DOUBLE_EQ(flat.noise, 0);
  EXPECT_DOUBLE_EQ(flat.median_lo, 1);
  EXPECT_DOUBLE_EQ(flat.median_hi, 1);
}

// Lognormal samples whose median is exactly `median`.
std::vector<double> Lognormal(std::mt19937_64& engine, int n, double median, double sigma) {
  std::normal_distribution<double> normal(0, sigma);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = median * std::exp(normal(engine));
  return v;
}

TEST(BenchBootstrapTest, RatioOfMedians) {
  const SpeedupEstimate e = BootstrapSpeedup({4, 6, 5}, {1, 3, 2, 2.5}, 1);
  EXPECT_DOUBLE_EQ(e.ratio, 5 / 2.25);
  EXPECT_EQ(e.iterations, 2000);
  EXPECT_DOUBLE_EQ(e.confidence, 0.95);
  EXPECT_LE(e.lo, e.hi);
}

TEST(BenchBootstrapTest, DeterministicForASeed) {
  std::mt19937_64 engine(7);
  const std::vector<double> ref = Lognormal(engine, 60, 2.0, 0.05), cand = Lognormal(engine, 60, 1.0, 0.05);
  const SpeedupEstimate a = BootstrapSpeedup(ref, cand, 42), b = BootstrapSpeedup(ref, cand, 42);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  const SpeedupEstimate c = BootstrapSpeedup(ref, cand, 43);
  EXPECT_EQ(a.ratio, c.ratio);
  EXPECT_TRUE(a.lo != c.lo || a.hi != c.hi) << "another seed resamples differently";
}

TEST(BenchBootstrapTest, IntervalCoversTheTrueRatio) {
  std::mt19937_64 engine(2024);
  int covered = 0;
  constexpr int kDatasets = 200;
  for (int d = 0; d < kDatasets; ++d) {
    const std::vector<double> ref = Lognormal(engine, 50, 2.0, 0.1), cand = Lognormal(engine, 50, 1.0, 0.1);
    const SpeedupEstimate e = BootstrapSpeedup(ref, cand, static_cast<uint64_t>(d), 500);
    ASSERT_LE(e.lo, e.ratio);
    ASSERT_GE(e.hi, e.ratio);
    if (e.lo <= 2.0 && 2.0 <= e.hi) ++covered;
  }
  EXPECT_GE(covered, kDatasets * 85 / 100) << "nominal coverage is 95%";
  EXPECT_LT(covered, kDatasets) << "an interval that always covers is too wide to be useful";
}

TEST(BenchBootstrapTest, NarrowsWithMoreSamples) {
  std::mt19937_64 engine(5);
  const SpeedupEstimate few =
      BootstrapSpeedup(Lognormal(engine, 20, 2, 0.1), Lognormal(engine, 20, 1, 0.1), 1);
  const SpeedupEstimate many =
      BootstrapSpeedup(Lognormal(engine, 2000, 2, 0.1), Lognormal(engine, 2000, 1, 0.1), 1);
  EXPECT_LT(many.hi - many.lo, (few.hi - few.lo) / 3);
  EXPECT_NEAR(many.ratio, 2.0, 0.02);
}

TEST(BenchBootstrapTest, EmptyInputsGiveNaN) {
  const SpeedupEstimate e = BootstrapSpeedup({}, {1.0}, 1);
  EXPECT_TRUE(std::isnan(e.ratio));
  EXPECT_TRUE(std::isnan(e.lo));
  EXPECT_TRUE(std::isnan(e.hi));
}

}  // namespace
}  // namespace kforge::bench
