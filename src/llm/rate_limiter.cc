// Token-bucket pacing for requests and tokens.
#include "llm/rate_limiter.h"

#include <algorithm>

namespace kforge::llm {

RateLimiter::RateLimiter(double requests_per_minute, double tokens_per_minute, double max_reset_wait_s)
    : max_reset_wait_s_(max_reset_wait_s) {
  requests_.per_minute = requests_.level = std::max(0.0, requests_per_minute);
  tokens_.per_minute = tokens_.level = std::max(0.0, tokens_per_minute);
}

void RateLimiter::Bucket::Refill(double now) {
  if (now > last && per_minute > 0) level = std::min(per_minute, level + (now - last) * per_minute / 60);
  last = std::max(last, now);
}

double RateLimiter::Bucket::Wait(double now, double cost) const {
  double wait = std::max(0.0, blocked_until - now);
  if (per_minute <= 0) return wait;
  const double need = std::min(cost, per_minute);  // a request larger than the bucket waits for a full one
  if (level < need) wait = std::max(wait, (need - level) * 60 / per_minute);
  return wait;
}

void RateLimiter::Bucket::Observe(const std::optional<double>& limit, const std::optional<double>& remaining,
                                  const std::optional<double>& reset_s, double now,
                                  double max_reset_wait_s) {
  Refill(now);
  if (limit && *limit > 0 && (per_minute <= 0 || *limit < per_minute)) {
    if (per_minute <= 0) level = *limit;
    per_minute = *limit;
    level = std::min(level, per_minute);
  }
  if (remaining && per_minute > 0) level = std::min(level, *remaining);
  if (remaining && *remaining < 1 && reset_s && *reset_s > 0)
    blocked_until = std::max(blocked_until, now + std::min(*reset_s, max_reset_wait_s));
}

double RateLimiter::TryAcquire(double now, double tokens) {
  requests_.Refill(now);
  tokens_.Refill(now);
  double wait = std::max(requests_.Wait(now, 1), tokens_.Wait(now, tokens));
  if (wait > 0) return wait;
  if (requests_.per_minute > 0) requests_.level -= 1;
  if (tokens_.per_minute > 0) tokens_.level -= tokens;
  return 0;
}

void RateLimiter::Adjust(double now, double tokens) {
  tokens_.Refill(now);
  if (tokens_.per_minute > 0) tokens_.level = std::min(tokens_.per_minute, tokens_.level + tokens);
}

void RateLimiter::Observe(const RateLimitInfo& info, double now) {
  requests_.Observe(info.requests_limit, info.requests_remaining, info.requests_reset_s, now, max_reset_wait_s_);
  tokens_.Observe(info.tokens_limit, info.tokens_remaining, info.tokens_reset_s, now, max_reset_wait_s_);
}

void RateLimiter::BlockUntil(double until) {
  requests_.blocked_until = std::max(requests_.blocked_until, until);
}

}  // namespace kforge::llm
