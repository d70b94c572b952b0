#include "kforge/common/thread_pool.h"

#include <atomic>
#include <stdexcept>

#include <gtest/gtest.h>

namespace kforge::common {
namespace {

TEST(ThreadPoolTest, RunsEveryQueuedJobBeforeJoining) {
  std::atomic<int> ran{0}, started{0};
  {
    ThreadPool pool(3, [&] { ++started; });
    EXPECT_EQ(pool.size(), 3u);
    for (int i = 0; i < 100; ++i) pool.Post([&] { ++ran; });
  }
  EXPECT_EQ(ran, 100);
  EXPECT_EQ(started, 3);
}

TEST(ThreadPoolTest, SubmitKeepsResultsAndExceptions) {
  ThreadPool pool(2);
  std::future<int> answer = pool.Submit([] { return 42; });
  std::future<void> thrown = pool.Submit([]() -> void { throw std::runtime_error("job failed"); });
  EXPECT_EQ(answer.get(), 42);
  EXPECT_THROW(thrown.get(), std::runtime_error);
  EXPECT_EQ(pool.Submit([] { return std::string("after"); }).get(), "after") << "the pool survives a throw";
}

TEST(ThreadPoolTest, ZeroThreadsMeansOnePerCore) {
  ThreadPool pool(0);
  EXPECT_GE(pool.size(), 1u);
}

}  // namespace
}  // namespace kforge::common
