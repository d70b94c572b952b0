// EpisodeQueue: episodes start in order; with a hold, a prompt's later episodes wait for its first
// reply (or the hold's end) while other prompts' episodes start, and closing wakes the waiters.
#include "generate/episode_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

namespace kforge::generate {
namespace {

using namespace std::chrono_literals;

TEST(EpisodeQueueTest, WithoutAHoldEpisodesStartInOrder) {
  EpisodeQueue queue({"a", "a", "b", "b"}, EpisodeQueue::Clock::duration::zero());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(queue.Take(), i);
  EXPECT_EQ(queue.Take(), std::nullopt);
}

TEST(EpisodeQueueTest, LaterSamplesWaitForTheFirstReplyWhileOtherPromptsStart) {
  EpisodeQueue queue({"a", "a", "a", "b", "b"}, 60s);
  EXPECT_EQ(queue.Take(), 0u);  // opens a
  EXPECT_EQ(queue.Take(), 3u);  // a's others are held: b opens
  auto waiting = std::async(std::launch::async, [&] { return queue.Take(); });
  EXPECT_EQ(waiting.wait_for(100ms), std::future_status::timeout) << "only held episodes are left";
  queue.FirstReply(3);  // b's first reply
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(waiting.get(), 4u);
  queue.FirstReply(0);
  queue.FirstReply(0);  // again: nothing changes
  EXPECT_EQ(queue.Take(), 1u);
  EXPECT_EQ(queue.Take(), 2u);
  EXPECT_EQ(queue.Take(), std::nullopt);
}

TEST(EpisodeQueueTest, AHoldEndsAfterItsTimeWithoutAReply) {
  EpisodeQueue queue({"a", "a"}, 200ms);
  EXPECT_EQ(queue.Take(), 0u);
  auto start = EpisodeQueue::Clock::now();
  EXPECT_EQ(queue.Take(), 1u);
  EXPECT_GE(EpisodeQueue::Clock::now() - start, 190ms);
}

TEST(EpisodeQueueTest, ClosingWakesTheWaiters) {
  EpisodeQueue queue({"a", "a"}, 60s);
  EXPECT_EQ(queue.Take(), 0u);
  auto waiting = std::async(std::launch::async, [&] { return queue.Take(); });
  EXPECT_EQ(waiting.wait_for(50ms), std::future_status::timeout);
  queue.Close();
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(waiting.get(), std::nullopt);
}

}  // namespace
}  // namespace kforge::generate
