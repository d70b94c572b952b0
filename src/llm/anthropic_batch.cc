// The Anthropic provider over the Message Batches API (half price): requests that arrive together
// (each turn of the episodes in flight) go out as one batch, which is polled until it ends; each
// result goes back to its request. Every batch created is appended to a state file with its
// requests' custom ids, so that after a crash a rerun collects the results of a batch already paid
// for instead of sending its requests again.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "kforge/common/hash.h"
#include "llm/http_transport.h"
#include "llm/providers.h"
#include "llm/wire.h"

namespace kforge::llm {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
constexpr auto kReplace = json::error_handler_t::replace;

/// The HTTP status an Anthropic error type stands for (a batch result carries the type only).
int StatusOfType(const std::string& type) {
  static const std::map<std::string, int> kStatus = {
      {"invalid_request_error", 400}, {"authentication_error", 401}, {"billing_error", 402},
      {"permission_error", 403},      {"not_found_error", 404},      {"request_too_large", 413},
      {"rate_limit_error", 429},      {"api_error", 500},            {"overloaded_error", 529}};
  auto it = kStatus.find(type);
  return it == kStatus.end() ? 500 : it->second;
}

class AnthropicBatchProvider : public Provider {
 public:
  AnthropicBatchProvider(std::string base_url, std::string key, const ProviderOptions& o)
      : base_url_(std::move(base_url)), key_(std::move(key)), options_(o), transport_(4) {
    while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
    LoadState();
    dispatcher_ = std::thread([this] { Dispatch(); });
  }
  ~AnthropicBatchProvider() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    dispatcher_.join();
    for (auto& [id, waiters] : pending_) Deliver(waiters, Failure(ErrorKind::kTransport, "provider closed"));
  }

  std::string Name() const override { return "anthropic"; }
  std::string Identity() const override { return "anthropic " + base_url_; }
  std::string Redact(std::string text) const override { return RedactSecrets(std::move(text), {key_}); }
  std::optional<json> WireBody(const ChatRequest& request) const override {
    json body = AnthropicRequestBody(request, /*stream=*/false);
    body.merge_patch(options_.extra_body);
    return body;
  }
  double PriceFactor() const override { return 0.5; }

  void Send(const ChatRequest& request, AttemptCallback done) override {
    if (std::string problem = AnthropicRequestProblem(request); !problem.empty())
      return done(Failure(ErrorKind::kInvalidRequest, problem));
    json params = *WireBody(request);
    const std::string id =
        "k" + common::Sha256Hex(request.cache_scope + "\n" + params.dump(-1, ' ', false, kReplace)).substr(0, 60);
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<AttemptCallback>& waiters = pending_[id];
      waiters.push_back(std::move(done));
      if (waiters.size() == 1) params_[id] = std::move(params);
      last_arrival_ = Clock::now();
    }
    cv_.notify_all();
  }

 private:
  using Waiters = std::vector<AttemptCallback>;

  Attempt Failure(ErrorKind kind, const std::string& message) const {
    Attempt a;
    a.response.error = {kind, 0, SanitizeMessage(message, {key_})};
    return a;
  }

  static void Deliver(Waiters& waiters, const Attempt& a) {
    for (AttemptCallback& done : waiters) done(a);
    waiters.clear();
  }

  HttpResult Fetch(const std::string& url, std::string body) {
    HttpRequest http;
    http.url = url;
    http.headers = {{"content-type", "application/json"},
                    {"x-api-key", key_},
                    {"anthropic-version", options_.anthropic_version}};
    for (const auto& [name, value] : options_.extra_headers) http.headers.emplace_back(name, value);
    http.body = std::move(body);
    http.timeout_s = options_.timeout_s;
    http.connect_timeout_s = options_.connect_timeout_s;
    std::promise<HttpResult> promise;
    std::future<HttpResult> result = promise.get_future();
    transport_.Send(std::move(http), [&promise](HttpResult r) { promise.set_value(std::move(r)); });
    return result.get();
  }

  /// The error of a failed exchange with the batches API, as an attempt every request of it gets.
  Attempt ExchangeFailure(const HttpResult& http, const std::string& what) const {
    Attempt a = AnthropicAttempt(http, std::time(nullptr), {key_});
    if (a.response.ok()) a.response.error = {ErrorKind::kMalformedResponse, http.status, what + ": unexpected reply"};
    a.response.error.message = SanitizeMessage("message batch: " + what + ": " + a.response.error.message, {key_});
    return a;
  }

  void LoadState() {
    if (options_.batch_state_path.empty()) return;
    std::ifstream in(options_.batch_state_path);
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_object() || !j.contains("batch_id") || !j.contains("custom_ids")) continue;
      for (const json& id : j["custom_ids"])
        if (id.is_string()) earlier_[id.get<std::string>()] = j["batch_id"].get<std::string>();
    }
  }

  void SaveState(const std::string& batch_id, const std::vector<std::string>& ids) {
    if (options_.batch_state_path.empty()) return;
    std::ofstream out(options_.batch_state_path, std::ios::app);
    out << json{{"batch_id", batch_id}, {"custom_ids", ids}}.dump() << "\n";
    out.flush();
  }

  void Sleep(double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stop_.load(); });
  }

  /// Polls `batch_id` until it ends, then hands every result to its waiters (removed from `group`).
  void Collect(const std::string& batch_id, std::map<std::string, Waiters>& group) {
    const std::string url = base_url_ + "/v1/messages/batches/" + batch_id;
    json status;
    const auto start = Clock::now();
    while (true) {
      HttpResult http = Fetch(url, "");
      status = json::parse(http.body, nullptr, false);
      if (http.status != 200 || !status.is_object()) {
        Attempt failed = ExchangeFailure(http, "polling " + batch_id);
        for (auto& [id, waiters] : group) Deliver(waiters, failed);
        return;
      }
      if (status.value("processing_status", "") == "ended") break;
      if (stop_) return;
      Sleep(options_.batch_poll_s);
    }
    const std::string results_url = status.value("results_url", url + "/results");
    HttpResult http = Fetch(results_url, "");
    if (http.status != 200) {
      Attempt failed = ExchangeFailure(http, "results of " + batch_id);
      for (auto& [id, waiters] : group) Deliver(waiters, failed);
      return;
    }
    spdlog::info("llm: message batch {}: {} requests, ended after {:.0f} s", batch_id, group.size(),
                 std::chrono::duration<double>(Clock::now() - start).count());
    size_t pos = 0;
    while (pos < http.body.size()) {
      size_t end = http.body.find('\n', pos);
      if (end == std::string::npos) end = http.body.size();
      json line = json::parse(http.body.substr(pos, end - pos), nullptr, false);
      pos = end + 1;
      if (!line.is_object() || !line.contains("custom_id") || !line.contains("result")) continue;
      auto it = group.find(line.value("custom_id", ""));
      if (it == group.end()) continue;
      const json& result = line["result"];
      const std::string type = result.value("type", "");
      HttpResult one;
      if (type == "succeeded") {
        one.status = 200;
        one.body = result.value("message", json()).dump(-1, ' ', false, kReplace);
      } else if (type == "errored") {
        json error = result.value("error", json());
        one.status = StatusOfType(error.value("error", json::object()).value("type", ""));
        one.body = error.dump(-1, ' ', false, kReplace);
      } else {  // canceled, expired: not this request's fault
        Deliver(it->second, Failure(ErrorKind::kServer, "message batch " + batch_id + ": request " + type));
        continue;
      }
      Deliver(it->second, AnthropicAttempt(one, std::time(nullptr), {key_}));
    }
    for (auto& [id, waiters] : group)
      if (!waiters.empty()) Deliver(waiters, Failure(ErrorKind::kServer, "message batch " + batch_id + ": no result"));
  }

  void Dispatch() {
    while (true) {
      std::map<std::string, Waiters> taken;
      std::map<std::string, json> params;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_.load() || !pending_.empty(); });
        if (stop_) return;
        // Requests that arrive together make one batch: wait until none came for a window.
        const auto window = std::chrono::duration<double>(options_.batch_window_s);
        while (!stop_ && Clock::now() - last_arrival_ < window)
          cv_.wait_for(lock, window - (Clock::now() - last_arrival_));
        if (stop_) return;
        taken.swap(pending_);
        params.swap(params_);
      }
      // Requests of a batch created before a crash: their results, not a second payment.
      std::map<std::string, std::map<std::string, Waiters>> earlier;
      for (auto it = taken.begin(); it != taken.end();) {
        auto known = earlier_.find(it->first);
        if (known == earlier_.end() || collected_.count(known->second)) {
          ++it;
          continue;
        }
        earlier[known->second][it->first] = std::move(it->second);
        it = taken.erase(it);
      }
      for (auto& [batch_id, group] : earlier) {
        collected_.insert(batch_id);
        Collect(batch_id, group);
      }
      if (taken.empty()) continue;
      json requests = json::array();
      std::vector<std::string> ids;
      for (auto& [id, waiters] : taken) {
        requests.push_back({{"custom_id", id}, {"params", params[id]}});
        ids.push_back(id);
      }
      HttpResult created = Fetch(base_url_ + "/v1/messages/batches",
                                 json{{"requests", requests}}.dump(-1, ' ', false, kReplace));
      json batch = json::parse(created.body, nullptr, false);
      if (created.status != 200 || !batch.is_object() || !batch.contains("id") || !batch["id"].is_string()) {
        Attempt failed = ExchangeFailure(created, "creating a batch of " + std::to_string(ids.size()));
        for (auto& [id, waiters] : taken) Deliver(waiters, failed);
        continue;
      }
      const std::string batch_id = batch["id"].get<std::string>();
      SaveState(batch_id, ids);
      collected_.insert(batch_id);
      Collect(batch_id, taken);
    }
  }

  std::string base_url_;
  std::string key_;
  ProviderOptions options_;
  HttpTransport transport_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Waiters> pending_;  // custom id -> requests waiting for its result
  std::map<std::string, json> params_;      // custom id -> the request body
  Clock::time_point last_arrival_;
  std::atomic<bool> stop_{false};
  std::map<std::string, std::string> earlier_;  // custom id -> batch created by an earlier run
  std::set<std::string> collected_;              // batches whose results were handed out
  std::thread dispatcher_;
};

}  // namespace

std::unique_ptr<Provider> MakeAnthropicBatchProvider(std::string base_url, std::string api_key,
                                                     const ProviderOptions& o) {
  return std::make_unique<AnthropicBatchProvider>(std::move(base_url), std::move(api_key), o);
}

}  // namespace kforge::llm
