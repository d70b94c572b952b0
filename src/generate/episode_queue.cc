// Episodes started in order, the later samples of a prompt held until its first reply.
#include "generate/episode_queue.h"

#include <algorithm>
#include <map>

namespace kforge::generate {

EpisodeQueue::EpisodeQueue(const std::vector<std::string>& prompts, Clock::duration hold)
    : hold_(hold), taken_(prompts.size(), false) {
  std::map<std::string, size_t> index;
  prompt_of_.reserve(prompts.size());
  for (const std::string& prompt : prompts) {
    auto [it, added] = index.emplace(prompt, prompts_.size());
    if (added) prompts_.emplace_back();
    prompt_of_.push_back(it->second);
  }
}

std::optional<size_t> EpisodeQueue::Take() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (closed_) return std::nullopt;
    while (first_untaken_ < taken_.size() && taken_[first_untaken_]) ++first_untaken_;
    if (first_untaken_ == taken_.size()) return std::nullopt;
    const Clock::time_point now = Clock::now();
    std::optional<Clock::time_point> wake;  // the earliest end of a hold
    for (size_t i = first_untaken_; i < taken_.size(); ++i) {
      if (taken_[i]) continue;
      Prompt& prompt = prompts_[prompt_of_[i]];
      if (!prompt.opened) {
        prompt.opened = true;
        prompt.open = hold_ <= Clock::duration::zero();
        prompt.held_until = now + hold_;
      } else if (!prompt.open && now < prompt.held_until) {
        wake = wake ? std::min(*wake, prompt.held_until) : prompt.held_until;
        continue;
      }
      taken_[i] = true;
      return i;
    }
    changed_.wait_until(lock, *wake);  // every episode left is held: until a reply or a hold's end
  }
}

void EpisodeQueue::FirstReply(size_t index) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Prompt& prompt = prompts_[prompt_of_.at(index)];
    if (prompt.open) return;
    prompt.open = true;
  }
  changed_.notify_all();
}

void EpisodeQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  changed_.notify_all();
}

}  // namespace kforge::generate
