// The batch dispatcher shared by the batch APIs: requests gathered into batches, state kept for a
// rerun after a crash, results handed to their requests.
#include "llm/batch_provider.h"

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
  for (auto& [id, waiters] : pending_) Deliver(waiters, Failure(ErrorKind::kTransport, "provider closed"));
  pending_.clear();
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

void BatchProvider::Deliver(Waiters& waiters, const Attempt& a) {
  for (AttemptCallback& done : waiters) done(a);
  waiters.clear();
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
    for (const json& id : j["custom_ids"])
      if (id.is_string()) earlier_[id.get<std::string>()] = j["batch_id"].get<std::string>();
  }
}

void BatchProvider::SaveState(const std::string& batch_id, const std::vector<std::string>& ids) {
  if (options_.batch_state_path.empty()) return;
  std::ofstream out(options_.batch_state_path, std::ios::app);
  out << json{{"api", Name()}, {"batch_id", batch_id}, {"custom_ids", ids}}.dump() << "\n";
  out.flush();
}

void BatchProvider::CollectInto(const std::string& batch_id, std::map<std::string, Waiters>& group) {
  const auto start = Clock::now();
  BatchResults results = Collect(batch_id);
  if (stopping() && !results.failure && results.by_id.empty())
    results.failure = Failure(ErrorKind::kTransport, "provider closed");
  if (results.failure) {
    for (auto& [id, waiters] : group) Deliver(waiters, *results.failure);
    return;
  }
  spdlog::info("llm: {} batch {}: {} requests, ended after {:.0f} s", Name(), batch_id, group.size(),
               std::chrono::duration<double>(Clock::now() - start).count());
  for (auto& [id, waiters] : group) {
    auto it = results.by_id.find(id);
    Deliver(waiters, it != results.by_id.end()
                         ? it->second
                         : Failure(ErrorKind::kServer, Name() + " batch " + batch_id + ": no result"));
  }
}

void BatchProvider::Dispatch() {
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
      CollectInto(batch_id, group);
    }
    if (taken.empty()) continue;
    std::vector<BatchRequest> requests;
    std::vector<std::string> ids;
    for (auto& [id, waiters] : taken) {
      requests.emplace_back(id, std::move(params[id]));
      ids.push_back(id);
    }
    std::variant<std::string, Attempt> created = Create(requests);
    if (const Attempt* failed = std::get_if<Attempt>(&created)) {
      for (auto& [id, waiters] : taken) Deliver(waiters, *failed);
      continue;
    }
    const std::string batch_id = std::get<std::string>(created);
    SaveState(batch_id, ids);
    collected_.insert(batch_id);
    CollectInto(batch_id, taken);
  }
}

}  // namespace kforge::llm
