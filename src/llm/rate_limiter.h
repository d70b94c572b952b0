// RateLimiter: request and token pacing (token buckets refilled per minute) that tightens to the
// limits and remaining budgets the server reports. Time is passed in, so tests need no clock.
#pragma once

#include "kforge/llm/provider.h"

namespace kforge::llm {

class RateLimiter {
 public:
  /// Limits per minute; 0 = none until the server reports one. A reset the server reports is waited
  /// for `max_reset_wait_s` at most (a reset date years ahead must not park the batch).
  RateLimiter(double requests_per_minute, double tokens_per_minute, double max_reset_wait_s = 120);

  /// 0 when a request estimated at `tokens` may start at `now` (and charges it); otherwise the
  /// seconds to wait before asking again.
  double TryAcquire(double now, double tokens);
  /// Corrects a charge once the real count is known (positive = tokens given back).
  void Adjust(double now, double tokens);
  /// Adopts server limits lower than ours, remaining budgets and resets.
  void Observe(const RateLimitInfo& info, double now);
  /// Nothing starts before `until` (after a 429 with retry-after).
  void BlockUntil(double until);

  double requests_per_minute() const { return requests_.per_minute; }
  double tokens_per_minute() const { return tokens_.per_minute; }

 private:
  struct Bucket {
    double per_minute = 0;  // 0 = unlimited
    double level = 0;
    double last = 0;
    double blocked_until = 0;
    void Refill(double now);
    double Wait(double now, double cost) const;
    void Observe(const std::optional<double>& limit, const std::optional<double>& remaining,
                 const std::optional<double>& reset_s, double now, double max_reset_wait_s);
  };
  double max_reset_wait_s_;
  Bucket requests_, tokens_;
};

}  // namespace kforge::llm
