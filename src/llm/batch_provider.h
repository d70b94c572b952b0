// A provider over a batch API (half price, results within hours): requests that arrive together (each
// turn of the episodes in flight) go out as one batch as soon as their window closes; every batch in
// flight is polled by a thread of its own until it ends, and each result goes back to its request.
// A batch is never paid twice: polls and result downloads are retried on their own, a request whose
// batch is still in flight (created here, or listed in the state file by an earlier run) waits for
// that batch, and only a request the API never ran (expired, canceled) goes in a new batch. Every batch
// created is appended to the state file with its requests' custom ids. The provider-specific part
// (creating a batch, reading its results) is a subclass.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "kforge/llm/provider.h"
#include "llm/http_transport.h"
#include "llm/wire.h"

namespace kforge::llm {

class BatchProvider : public Provider {
 public:
  ~BatchProvider() override;
  std::string Redact(std::string text) const override { return RedactSecrets(std::move(text), secrets_); }
  double PriceFactor() const override { return 0.5; }
  void Send(const ChatRequest& request, AttemptCallback done) override;

 protected:
  /// One request of a batch: its custom id and wire body.
  using BatchRequest = std::pair<std::string, nlohmann::json>;
  /// A batch's outcome: an attempt per custom id, or `failure` for every request of it (a retryable
  /// failure, such as polls that kept failing, leaves the batch in flight: the next request polls it).
  struct BatchResults {
    std::map<std::string, Attempt> by_id;
    /// Requests the API never ran, not billed: custom id -> "expired" or "canceled".
    std::map<std::string, std::string> not_run;
    std::optional<Attempt> failure;
  };
  /// A batch whose every request fails with `failure`.
  static BatchResults FailedBatch(Attempt failure) {
    BatchResults results;
    results.failure = std::move(failure);
    return results;
  }

  BatchProvider(std::string base_url, std::string key, const ProviderOptions& options);
  /// Reads the state file and starts the dispatcher; the last line of a subclass's constructor.
  void Start();
  /// Stops and joins the dispatcher; the first line of a subclass's destructor (its virtuals stay
  /// callable until then).
  void Stop();

  /// A one-line reason why the API would refuse `request` before it is sent, or "".
  virtual std::string RequestProblem(const ChatRequest& request) const = 0;
  /// The headers of every call to the API (key included).
  virtual std::vector<std::pair<std::string, std::string>> ApiHeaders() const = 0;
  /// Creates a batch of `requests`: its id, or the attempt every request of it fails with.
  virtual std::variant<std::string, Attempt> Create(const std::vector<BatchRequest>& requests) = 0;
  /// Polls `batch_id` (Sleep between polls, giving up when stopping()) and reads its results.
  virtual BatchResults Collect(const std::string& batch_id) = 0;

  /// A synchronous call to the API: GET when `body` is empty; `content_type` for a POST.
  HttpResult Fetch(const std::string& url, std::string body, const std::string& content_type = "application/json");
  /// A GET of a batch already paid for (a poll, a result file), retried on transient failures
  /// (connection, timeout, 408, 409, 429, 5xx, 529) with a backoff from batch_poll_s, honouring
  /// retry-after; the last reply when they persist or the provider stops.
  HttpResult FetchPatiently(const std::string& url);
  /// An attempt failed with `kind` and `message` (masked of the key).
  Attempt Failure(ErrorKind kind, const std::string& message) const;
  /// Calls `each` with every line of a JSON-lines body that is an object with a string custom_id.
  static void ForEachResultLine(const std::string& body, const std::function<void(const nlohmann::json&)>& each);
  /// Waits `seconds` or until the provider stops.
  void Sleep(double seconds);
  bool stopping() const { return stop_.load(); }

  const std::string& base_url() const { return base_url_; }
  const std::string& key() const { return key_; }
  /// The key and the other credentials of the options (ProviderSecrets).
  const Secrets& secrets() const { return secrets_; }
  const ProviderOptions& options() const { return options_; }

 private:
  using Waiters = std::vector<AttemptCallback>;
  /// Requests to answer once mu_ is released: each waiter and its attempt.
  using Deliveries = std::vector<std::pair<Waiters, Attempt>>;
  static void Deliver(Deliveries& deliveries);
  /// Under mu_: `waiters` of `id` wait for `batch_id`, whose collector starts if none runs.
  void AwaitBatch(const std::string& batch_id, const std::string& id, Waiters waiters);
  /// The thread of one batch in flight: polls it, then hands its results out.
  void CollectBatch(const std::string& batch_id);
  void LoadState();
  void SaveState(const std::string& batch_id, const std::vector<std::string>& ids);
  void Dispatch();
  /// Joins the collectors that have returned.
  void JoinEnded();

  std::string base_url_;
  std::string key_;
  ProviderOptions options_;
  Secrets secrets_;
  HttpTransport transport_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Waiters> pending_;  // custom id -> requests not yet in a batch
  std::map<std::string, nlohmann::json> params_;  // custom id -> the request body
  std::chrono::steady_clock::time_point last_arrival_;
  std::atomic<bool> stop_{false};
  // custom id -> the batch that holds it and has not handed its result out (created here or by an
  // earlier run): the answer for that id, whatever happens to the polls.
  std::map<std::string, std::string> batch_of_;
  std::map<std::string, std::set<std::string>> ids_of_;  // batch id -> its custom ids in batch_of_
  std::map<std::string, Waiters> waiting_;                // custom id -> requests waiting on its batch
  std::map<std::string, Attempt> results_;  // results read while no request waited for them
  std::map<std::string, std::thread> collectors_;  // batch id -> the thread polling it
  std::vector<std::thread> ended_;                  // collectors that have returned, to join
  std::thread dispatcher_;
};

}  // namespace kforge::llm
