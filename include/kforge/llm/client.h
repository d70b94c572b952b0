// Client: runs many chat requests through one Provider with retries (as the official SDKs:
// x-should-retry, capped retry-after, jittered exponential backoff), request/token pacing, an
// on-disk response cache, an optional cassette recording, usage/cost accounting and a spending
// cap that reserves each request's worst case. A fatal error (auth, quota, billing, not found)
// stops the batch, and so do two circuit breakers: the same non-retryable error N times in a row,
// and an outage (no success for a set time while requests keep failing on transient errors).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/llm/chat.h"
#include "kforge/llm/prices.h"
#include "kforge/llm/provider.h"

namespace kforge::llm {

struct ClientOptions {
  /// Requests sent and not yet answered, at most.
  int max_in_flight = 16;
  /// Attempts per request, first one included (the SDKs' default of 2 retries).
  int max_attempts = 3;
  /// Backoff before retry n (n = 1, 2, ...) is uniform in [0.75, 1] * min(max, initial * 2^(n-1)),
  /// as the SDKs do.
  double initial_backoff_s = 0.5;
  double max_backoff_s = 8.0;
  /// A retry-after (or retry-after-ms) in (0, max] is waited for; a longer one is not: the request
  /// fails with its error (openai-python's rule; a broken server cannot park the batch).
  double max_retry_after_s = 120.0;
  /// Pacing; 0 = no limit until the server's rate-limit headers set one.
  double requests_per_minute = 0;
  double tokens_per_minute = 0;
  /// Response cache directory; empty disables the cache (--no-cache).
  std::string cache_dir;
  /// Cassette to append every successful reply to (--record FILE); empty = none.
  std::string record_path;
  /// Prices for cost accounting; models not in it cost 0 with cost_known = false.
  PriceTable prices;
  /// Seed of the backoff jitter.
  uint64_t seed = 0x6b666f726765;
  /// Circuit breaker: this many requests in a row ending in the same non-retryable error (kind,
  /// status and message) stop the batch. 0 = off.
  int max_identical_errors = 0;
  /// Circuit breaker: once attempts have failed on transient errors (429, 529, 5xx, timeouts,
  /// connection) for this many seconds with no success in between, the batch stops. 0 = off.
  double outage_s = 0;
  /// Multiplies every wait and window of the client (backoff, retry-after, outage_s); < 1 in tests.
  double time_scale = 1;
  /// Spending cap, USD: each request reserves its worst case (its input at ~3 bytes a token, at the
  /// input or cache-write price, whichever is higher, plus max_tokens of output) before it is sent. A
  /// request that would take the spend plus the reservations past the cap waits for requests in
  /// flight to finish and give theirs back; it is refused (kAborted; budget_reached()) only when
  /// nothing is in flight and it still does not fit. Unset = none.
  std::optional<double> max_cost_usd;
  /// Spent before this client (earlier invocations on the same run folder), USD; counts toward
  /// max_cost_usd.
  double spent_before_usd = 0;
};

/// Totals over every request that finished in this Client.
struct ClientStats {
  int64_t requests = 0;  ///< finished requests (ok or not)
  int64_t succeeded = 0;
  int64_t failed = 0;
  int64_t cache_hits = 0;
  int64_t attempts = 0;  ///< provider attempts, retries included
  int64_t retries = 0;
  Usage usage;          ///< paid this run (cache hits excluded; billed failures included)
  double cost_usd = 0;  ///< paid this run (cache hits excluded; billed failures included)
  /// Attempts billed without a reported usage (Attempt::usage_missing), and the worst cases of their
  /// requests, which count against max_cost_usd on top of cost_usd.
  int64_t usage_missing = 0;
  double usage_missing_worst_usd = 0;
};

using ResponseCallback = std::function<void(ChatResponse)>;

class Client {
 public:
  /// Opens the cache directory and the record file; errors name the path.
  static StatusOr<std::unique_ptr<Client>> Create(std::unique_ptr<Provider> provider, ClientOptions options);
  /// Waits for every submitted request to finish.
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Queues a request; `done` runs exactly once, on an internal thread, with the final response
  /// (after retries). After a fatal error, queued and new requests finish with kAborted.
  void Submit(ChatRequest request, ResponseCallback done);
  std::future<ChatResponse> Complete(ChatRequest request);
  /// Runs a batch with up to max_in_flight in flight; responses in request order.
  std::vector<ChatResponse> CompleteAll(std::vector<ChatRequest> requests);
  /// Blocks until nothing is queued or in flight.
  void Wait();

  /// Non-ok once a fatal error or a circuit breaker stopped the batch; the message says what to fix.
  Status fatal_status() const;
  /// Whether a request was refused because max_cost_usd would have been exceeded.
  bool budget_reached() const;
  ClientStats stats() const;
  /// `text` with the provider's secrets (its API key; the keys an exec teacher inherits) masked, as
  /// errors, logs and cassettes are: for whatever else is recorded.
  std::string Redact(std::string text) const;

 private:
  class Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kforge::llm
