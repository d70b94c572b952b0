// A provider over a batch API (half price, results within hours): requests that arrive together (each
// turn of the episodes in flight) go out as one batch, which is polled until it ends; each result goes
// back to its request. Every batch created is appended to a state file with its requests' custom ids,
// so that after a crash a rerun collects the results of a batch already paid for instead of sending
// its requests again. The provider-specific part (creating a batch, reading its results) is a subclass.
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
  /// A batch's outcome: an attempt per custom id, or `failure` for every request of it.
  struct BatchResults {
    std::map<std::string, Attempt> by_id;
    std::optional<Attempt> failure;
  };

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
  static void Deliver(Waiters& waiters, const Attempt& a);
  void CollectInto(const std::string& batch_id, std::map<std::string, Waiters>& group);
  void LoadState();
  void SaveState(const std::string& batch_id, const std::vector<std::string>& ids);
  void Dispatch();

  std::string base_url_;
  std::string key_;
  ProviderOptions options_;
  Secrets secrets_;
  HttpTransport transport_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Waiters> pending_;  // custom id -> requests waiting for its result
  std::map<std::string, nlohmann::json> params_;  // custom id -> the request body
  std::chrono::steady_clock::time_point last_arrival_;
  std::atomic<bool> stop_{false};
  std::map<std::string, std::string> earlier_;  // custom id -> batch created by an earlier run
  std::set<std::string> collected_;              // batches whose results were handed out
  std::thread dispatcher_;
};

}  // namespace kforge::llm
