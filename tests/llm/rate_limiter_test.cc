#include "llm/rate_limiter.h"

#include <gtest/gtest.h>

namespace kforge::llm {
namespace {

TEST(RateLimiterTest, UnlimitedByDefault) {
  RateLimiter l(0, 0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(l.TryAcquire(0, 1e6), 0);
}

TEST(RateLimiterTest, RequestsPerMinute) {
  RateLimiter l(60, 0);  // one per second, burst of 60
  for (int i = 0; i < 60; ++i) ASSERT_EQ(l.TryAcquire(0, 0), 0) << i;
  EXPECT_DOUBLE_EQ(l.TryAcquire(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(l.TryAcquire(0.5, 0), 0.5);
  EXPECT_EQ(l.TryAcquire(1.0, 0), 0);
}

TEST(RateLimiterTest, TokensPerMinuteWithAdjustment) {
  RateLimiter l(0, 6000);  // 100 tokens/s
  EXPECT_EQ(l.TryAcquire(0, 5000), 0);
  EXPECT_DOUBLE_EQ(l.TryAcquire(0, 2000), 10.0);  // 1000 left, needs 2000
  l.Adjust(0, 4000);                              // the reply used 1000, not 5000
  EXPECT_EQ(l.TryAcquire(0, 2000), 0);
  EXPECT_EQ(l.TryAcquire(100, 1e9), 0);  // bigger than the bucket: goes once the bucket is full
}

TEST(RateLimiterTest, AdoptsServerLimitsAndResets) {
  RateLimiter l(1000, 0);
  RateLimitInfo info;
  info.requests_limit = 50;
  info.requests_remaining = 2;
  info.tokens_limit = 40000;
  l.Observe(info, 0);
  EXPECT_EQ(l.requests_per_minute(), 50);
  EXPECT_EQ(l.tokens_per_minute(), 40000);
  EXPECT_EQ(l.TryAcquire(0, 100), 0);
  EXPECT_EQ(l.TryAcquire(0, 100), 0);
  EXPECT_GT(l.TryAcquire(0, 100), 0);

  RateLimiter higher(10, 0);
  RateLimitInfo loose;
  loose.requests_limit = 1000;
  higher.Observe(loose, 0);
  EXPECT_EQ(higher.requests_per_minute(), 10);  // ours is tighter: kept

  RateLimiter exhausted(0, 0);
  RateLimitInfo none_left;
  none_left.tokens_limit = 1000;
  none_left.tokens_remaining = 0;
  none_left.tokens_reset_s = 30;
  exhausted.Observe(none_left, 0);
  EXPECT_DOUBLE_EQ(exhausted.TryAcquire(0, 10), 30);
}

TEST(RateLimiterTest, AResetFarAheadIsWaitedForAtMostTheCap) {
  RateLimiter limiter(0, 0, /*max_reset_wait_s=*/120);
  RateLimitInfo info;
  info.requests_limit = 50;
  info.requests_remaining = 0;
  info.requests_reset_s = 2.3e9;  // a reset date in 2099
  limiter.Observe(info, 0);
  EXPECT_DOUBLE_EQ(limiter.TryAcquire(0, 1), 120);
}

TEST(RateLimiterTest, BlockUntil) {
  RateLimiter l(0, 0);
  l.BlockUntil(5);
  EXPECT_DOUBLE_EQ(l.TryAcquire(2, 1), 3);
  EXPECT_EQ(l.TryAcquire(5, 1), 0);
}

}  // namespace
}  // namespace kforge::llm
