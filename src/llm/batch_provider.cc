// The batch dispatcher shared by the batch APIs: requests gathered into batches, state kept for a
// rerun after a crash, results handed to their requests.
#include "llm/batch_provider.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <future>

#include <spdlog/spdlog.h>

#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/jsonl.h"
#include "llm/exchange.h"

namespace kforge::llm {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

}  // namespace

BatchProvider::BatchProvider(std::string base_url, std::string key, const ProviderOptions& options)
    : base_url_(std::move(base_url)), key_(std::move(key)), options_(options), transport_(4) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  secrets_ = ProviderSecrets(key_, options_, base_url_);
}

BatchProvider::~BatchProvider() { Stop(); }

void BatchProvider::Start() {
  LoadState();  // here, not in the constructor: it asks the subclass for Name()
  dispatcher_ = std::thread([this] { Dispatch(); });
}

void BatchProvider::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (dispatcher_.joinable()) dispatcher_.join();
  // Collectors see stopping() and return (an HTTP call in progress ends first).
  std::map<std::string, std::thread> collectors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    collectors.swap(collectors_);
  }
  for (auto& [id, thread] : collectors) thread.join();
  JoinEnded();
  Deliveries closed;
  for (auto* waiting : {&pending_, &waiting_})
    for (auto& [id, waiters] : *waiting) closed.emplace_back(std::move(waiters), Failure(ErrorKind::kTransport, "provider closed"));
  pending_.clear();
  waiting_.clear();
  Deliver(closed);
}

void BatchProvider::Send(const ChatRequest& request, AttemptCallback done) {
  if (std::string problem = RequestProblem(request); !problem.empty())
    return done(Failure(ErrorKind::kInvalidRequest, problem));
  json params = *WireBody(request);
  // The id names the request's content: a rerun of the same request finds the batch that holds it.
  const std::string id =
      "k" + common::Sha256Hex(request.cache_scope + "\n" + common::JsonText(params)).substr(0, 60);
  {
    std::lock_guard<std::mutex> lock(mu_);
    Waiters& waiters = pending_[id];
    waiters.push_back(std::move(done));
    if (waiters.size() == 1) params_[id] = std::move(params);
    last_arrival_ = Clock::now();
  }
  cv_.notify_all();
}

HttpResult BatchProvider::Fetch(const std::string& url, std::string body, const std::string& content_type) {
  HttpRequest http;
  http.url = url;
  std::vector<std::pair<std::string, std::string>> headers = ApiHeaders();
  if (!body.empty()) headers.insert(headers.begin(), {"content-type", content_type});
  http.headers = WithExtraHeaders(std::move(headers), options_.extra_headers);
  http.body = std::move(body);
  http.timeout_s = options_.timeout_s;
  http.connect_timeout_s = options_.connect_timeout_s;
  http.max_body_bytes = size_t{1} << 30;  // a batch's results: every reply of a turn
  std::promise<HttpResult> promise;
  std::future<HttpResult> result = promise.get_future();
  transport_.Send(std::move(http), [&promise](HttpResult r) { promise.set_value(std::move(r)); });
  return result.get();
}

HttpResult BatchProvider::FetchPatiently(const std::string& url) {
  constexpr int kAttempts = 8;
  constexpr double kMaxWaitS = 600;
  HttpResult http;
  for (int attempt = 1;; ++attempt) {
    http = Fetch(url, "");
    const bool transient = !http.transport_error.empty() || http.status == 408 || http.status == 409 ||
                           http.status == 429 || http.status >= 500;
    if (!transient || attempt == kAttempts || stopping()) return http;
    double wait = std::min(kMaxWaitS, options_.batch_poll_s * std::pow(2.0, attempt - 1));
    if (std::optional<double> after = ParseRetryAfter(http.headers, std::time(nullptr)))
      wait = std::min(kMaxWaitS, std::max(wait, *after));
    spdlog::debug("llm: {} batch: GET {} failed ({}), again in {:.1f} s", Name(), url,
                  http.transport_error.empty() ? "HTTP " + std::to_string(http.status) : SanitizeMessage(http.transport_error, {key_}),
                  wait);
    Sleep(wait);
  }
}

Attempt BatchProvider::Failure(ErrorKind kind, const std::string& message) const {
  Attempt a;
  a.response.error = {kind, 0, SanitizeMessage(message, secrets_)};
  return a;
}

void BatchProvider::ForEachResultLine(const std::string& body, const std::function<void(const json&)>& each) {
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string::npos) end = body.size();
    json line = json::parse(body.substr(pos, end - pos), nullptr, false);
    pos = end + 1;
    if (line.is_object() && line.contains("custom_id") && line["custom_id"].is_string()) each(line);
  }
}

void BatchProvider::Sleep(double seconds) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stop_.load(); });
}

void BatchProvider::Deliver(Deliveries& deliveries) {
  for (auto& [waiters, attempt] : deliveries)
    for (AttemptCallback& done : waiters) done(attempt);
  deliveries.clear();
}

void BatchProvider::LoadState() {
  if (options_.batch_state_path.empty()) return;
  StatusOr<std::unique_ptr<common::JsonlReader>> reader = common::JsonlReader::Open(options_.batch_state_path);
  if (!reader.ok()) return;  // no batch sent yet
  while (std::optional<common::JsonlReader::Line> line = (*reader)->NextText()) {
    json j = json::parse(line->text, nullptr, false);
    if (!j.is_object() || !j.contains("batch_id") || !j["batch_id"].is_string() || !j.contains("custom_ids"))
      continue;
    // Lines without "api" were written by the Anthropic provider, the only one that had batches.
    if (j.value("api", ProviderKindName(ProviderKind::kAnthropic)) != Name()) continue;
    const std::string batch_id = j["batch_id"].get<std::string>();
    for (const json& id : j["custom_ids"])
      if (id.is_string()) {
        if (auto it = batch_of_.find(id.get<std::string>()); it != batch_of_.end()) ids_of_[it->second].erase(it->first);
        batch_of_[id.get<std::string>()] = batch_id;
        ids_of_[batch_id].insert(id.get<std::string>());
      }
  }
}

void BatchProvider::SaveState(const std::string& batch_id, const std::vector<std::string>& ids) {
  if (options_.batch_state_path.empty()) return;
  std::ofstream out(options_.batch_state_path, std::ios::app);
  out << json{{"api", Name()}, {"batch_id", batch_id}, {"custom_ids", ids}}.dump() << "\n";
  out.flush();
}

void BatchProvider::AwaitBatch(const std::string& batch_id, const std::string& id, Waiters waiters) {
  Waiters& waiting = waiting_[id];
  for (AttemptCallback& done : waiters) waiting.push_back(std::move(done));
  if (!collectors_.count(batch_id) && !stop_)
    collectors_.emplace(batch_id, std::thread([this, batch_id] { CollectBatch(batch_id); }));
}

void BatchProvider::JoinEnded() {
  std::vector<std::thread> ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended.swap(ended_);
  }
  for (std::thread& thread : ended) thread.join();
}

void BatchProvider::CollectBatch(const std::string& batch_id) {
  const auto start = Clock::now();
  BatchResults results = Collect(batch_id);
  if (stopping() && !results.failure && results.by_id.empty() && results.not_run.empty())
    results.failure = Failure(ErrorKind::kTransport, "provider closed");
  Deliveries deliveries;
  std::map<std::string, int> not_run;  // "expired" -> requests
  size_t handed = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::set<std::string> ids = ids_of_[batch_id];
    // A retryable failure (polls that kept failing) leaves the batch in flight: its requests' retries
    // wait for it again; any other outcome ends it, and a retry of its requests makes a new batch.
    const bool in_flight = results.failure && IsRetryable(results.failure->response.error.kind);
    for (const std::string& id : ids) {
      std::optional<Attempt> answer;
      if (results.failure) {
        answer = *results.failure;
      } else if (auto it = results.by_id.find(id); it != results.by_id.end()) {
        answer = std::move(it->second);
      } else if (auto why = results.not_run.find(id); why != results.not_run.end()) {
        ++not_run[why->second];
        answer = Failure(ErrorKind::kServer, Name() + " batch " + batch_id + ": request " + why->second +
                                                 " (not run); a retry sends it in a new batch");
      } else {
        answer = Failure(ErrorKind::kServer, Name() + " batch " + batch_id + ": no result");
      }
      if (!in_flight) {
        batch_of_.erase(id);
        ++handed;
      }
      auto waiting = waiting_.find(id);
      if (waiting != waiting_.end()) {
        deliveries.emplace_back(std::move(waiting->second), std::move(*answer));
        waiting_.erase(waiting);
      } else if (!in_flight && !results.failure) {
        results_[id] = std::move(*answer);  // for the request's retry
      }
    }
    if (!in_flight) ids_of_.erase(batch_id);
    // Out of collectors_ now, so that a request that comes for this batch starts another one.
    if (auto self = collectors_.find(batch_id); self != collectors_.end()) {
      ended_.push_back(std::move(self->second));
      collectors_.erase(self);
    }
  }
  cv_.notify_all();
  if (!results.failure)
    spdlog::info("llm: {} batch {}: {} requests, ended after {:.0f} s", Name(), batch_id, handed,
                 std::chrono::duration<double>(Clock::now() - start).count());
  for (const auto& [why, n] : not_run)
    spdlog::warn("llm: {} batch {}: {} request{} {} (not run, not billed); a retry sends {} in a new batch", Name(),
                 batch_id, n, n == 1 ? "" : "s", why, n == 1 ? "it" : "them");
  Deliver(deliveries);
}

void BatchProvider::Dispatch() {
  while (true) {
    JoinEnded();
    std::map<std::string, Waiters> fresh;  // requests no batch holds
    std::map<std::string, json> params;
    Deliveries deliveries;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_.load() || !pending_.empty() || !ended_.empty(); });
      if (stop_) return;
      if (pending_.empty()) continue;
      // Requests that arrive together make one batch: wait until none came for a window.
      const auto window = std::chrono::duration<double>(options_.batch_window_s);
      while (!stop_ && Clock::now() - last_arrival_ < window)
        cv_.wait_for(lock, window - (Clock::now() - last_arrival_));
      if (stop_) return;
      std::map<std::string, Waiters> taken;
      taken.swap(pending_);
      for (auto& [id, waiters] : taken) {
        if (auto result = results_.find(id); result != results_.end()) {  // read while it was away
          deliveries.emplace_back(std::move(waiters), std::move(result->second));
          results_.erase(result);
        } else if (auto batch = batch_of_.find(id); batch != batch_of_.end()) {  // its batch is the answer
          AwaitBatch(batch->second, id, std::move(waiters));
        } else {
          params[id] = std::move(params_[id]);
          fresh[id] = std::move(waiters);
        }
      }
      params_.clear();
    }
    Deliver(deliveries);
    if (fresh.empty()) continue;
    std::vector<BatchRequest> requests;
    std::vector<std::string> ids;
    for (auto& [id, waiters] : fresh) {
      requests.emplace_back(id, std::move(params[id]));
      ids.push_back(id);
    }
    std::variant<std::string, Attempt> created = Create(requests);
    if (const Attempt* failed = std::get_if<Attempt>(&created)) {
      for (auto& [id, waiters] : fresh) deliveries.emplace_back(std::move(waiters), *failed);
      Deliver(deliveries);
      continue;
    }
    const std::string batch_id = std::get<std::string>(created);
    SaveState(batch_id, ids);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, waiters] : fresh) {
      batch_of_[id] = batch_id;
      ids_of_[batch_id].insert(id);
      AwaitBatch(batch_id, id, std::move(waiters));
    }
  }
}

}  // namespace kforge::llm
