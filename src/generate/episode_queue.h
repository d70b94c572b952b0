// The order in which a batch starts its episodes. With prompt caching, the other samples of a task
// start once its first sample has its first reply, so that they read the shared prompt from the
// provider's cache instead of each writing it; meanwhile the batch starts other tasks' episodes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kforge::generate {

class EpisodeQueue {
 public:
  using Clock = std::chrono::steady_clock;

  /// `prompts[i]`: what episode i's first request shares with others (its task and view), in the
  /// order episodes should start. With `hold` zero every episode starts in order, none waits;
  /// otherwise an episode whose prompt another one opened waits for that one's first reply, at
  /// most `hold`.
  EpisodeQueue(const std::vector<std::string>& prompts, Clock::duration hold);

  /// The next episode to start: the first in order that opens its prompt or whose prompt is open
  /// (replied to, or held for `hold` already). Blocks only while every episode left is held.
  /// nullopt once every episode is taken or the queue is closed.
  std::optional<size_t> Take();
  /// Episode `index` has its first reply, or failed, or ended: its prompt's other episodes may start.
  void FirstReply(size_t index);
  /// Take returns nullopt from now on, waking those waiting in it (the batch stops starting episodes).
  void Close();

 private:
  struct Prompt {
    bool opened = false;  ///< an episode of it was started
    bool open = false;    ///< its other episodes may start
    Clock::time_point held_until;
  };

  const Clock::duration hold_;
  std::vector<size_t> prompt_of_;  ///< by episode
  std::vector<Prompt> prompts_;
  std::vector<bool> taken_;
  size_t first_untaken_ = 0;
  bool closed_ = false;
  std::mutex mu_;
  std::condition_variable changed_;
};

}  // namespace kforge::generate
