// The statistics of a skill's lift against values computed by hand (and by R: binom.test, p.adjust).
#include "skill/stats.h"

#include <cmath>

#include <gtest/gtest.h>

namespace kforge::skill {
namespace {

TEST(StatsTest, McNemarExactMatchesTheBinomialTail) {
  // b = 10, c = 2: 2 * P(X <= 2), X ~ B(12, 1/2) = 2 * (1 + 12 + 66) / 4096 = 0.0385742...
  EXPECT_NEAR(McNemarExactP(10, 2), 79.0 / 2048, 1e-12);
  EXPECT_NEAR(McNemarExactP(2, 10), 79.0 / 2048, 1e-12) << "symmetric";
  EXPECT_NEAR(McNemarExactP(0, 5), 2.0 / 32, 1e-12);
  EXPECT_NEAR(McNemarExactP(25, 5), 0.000324914231896, 1e-12);
  EXPECT_EQ(McNemarExactP(3, 3), 1.0);
  EXPECT_EQ(McNemarExactP(1, 0), 1.0);
  EXPECT_EQ(McNemarExactP(0, 0), 1.0) << "no discordant pair: no evidence";
  EXPECT_GT(McNemarExactP(3000, 2900), 0.1) << "large n stays finite";
  EXPECT_LT(McNemarExactP(3000, 2000), 1e-40);
}

TEST(StatsTest, HolmMatchesRsPAdjust) {
  // p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02
  std::vector<double> adjusted = HolmAdjust({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(adjusted.size(), 4u);
  EXPECT_NEAR(adjusted[0], 0.03, 1e-12);
  EXPECT_NEAR(adjusted[1], 0.06, 1e-12);
  EXPECT_NEAR(adjusted[2], 0.06, 1e-12);
  EXPECT_NEAR(adjusted[3], 0.02, 1e-12);
  EXPECT_EQ(HolmAdjust({0.6, 0.5}), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(HolmAdjust({0.02}), std::vector<double>{0.02});
  EXPECT_TRUE(HolmAdjust({}).empty());
}

TEST(StatsTest, BootstrapIsSeededAndBracketsTheMean) {
  const std::vector<double> d = {0.5, 0.25, 0.75, 0.5, 0.25, 0.5, 1.0, 0.0, 0.5, 0.75};
  Interval a = PairedBootstrap(d, 5000, 7);
  EXPECT_NEAR(a.mean, 0.5, 1e-12);
  EXPECT_LT(a.low, 0.5);
  EXPECT_GT(a.high, 0.5);
  EXPECT_GT(a.low, 0.3);  // se = 0.274 / sqrt(10) = 0.087: about mean -+ 1.96 se
  EXPECT_LT(a.high, 0.7);
  Interval b = PairedBootstrap(d, 5000, 7);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  Interval same = PairedBootstrap({0.25, 0.25, 0.25}, 1000, 1);
  EXPECT_EQ(same.low, 0.25);
  EXPECT_EQ(same.high, 0.25);
  Interval zero = PairedBootstrap({0.25, -0.25, 0.25, -0.25, 0.0, 0.0}, 2000, 3);
  EXPECT_LT(zero.low, 0);
  EXPECT_GT(zero.high, 0);
  Interval none = PairedBootstrap({}, 100, 0);
  EXPECT_EQ(none.mean, 0);
}

TEST(StatsTest, MinimumDetectableEffect) {
  // sd of {0, 0.5} = 0.35355; 2.8 * 0.35355 / sqrt(2) = 0.7
  EXPECT_NEAR(MinimumDetectableEffect({0, 0.5}, 100), 0.7, 1e-9);
  // No spread: the noise of K = 8 samples, sqrt(0.5 / 8) = 0.25; 2.8 * 0.25 / sqrt(4) = 0.35
  EXPECT_NEAR(MinimumDetectableEffect({0.1, 0.1, 0.1, 0.1}, 8), 0.35, 1e-9);
  EXPECT_TRUE(std::isinf(MinimumDetectableEffect({0.1}, 8)));
}

}  // namespace
}  // namespace kforge::skill
