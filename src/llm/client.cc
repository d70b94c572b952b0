// Client: scheduling (in-flight cap, pacing, backoff), cache, cassette recording and accounting.
#include "kforge/llm/client.h"
#include "kforge/common/json_fields.h"

#include <spdlog/spdlog.h>
#include <cstdint>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "llm/rate_limiter.h"
#include "llm/response_cache.h"

namespace kforge::llm {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Bytes of the request's text: messages, tool calls and tool specs.
double RequestBytes(const ChatRequest& r) {
  size_t bytes = 0;
  for (const Message& m : r.messages) {
    bytes += m.content.size() + m.reasoning.size();
    for (const ContentBlock& b : m.blocks) bytes += b.signature.size() + b.data.size();
    for (const ToolCall& c : m.tool_calls) bytes += c.name.size() + c.arguments.dump().size();
  }
  for (const ToolSpec& t : r.tools)
    bytes += t.name.size() + t.description.size() + t.parameters.dump().size();
  return static_cast<double>(bytes);
}

/// Rough pre-flight token count (4 bytes per token) plus the output cap, for pacing only.
double EstimateTokens(const ChatRequest& r) { return RequestBytes(r) / 4 + r.max_tokens; }

bool HasUsage(const Usage& u) {
  return u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens > 0;
}

const char* FatalHint(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kAuth:
      return "check the API key in the environment and its permissions";
    case ErrorKind::kQuota:
      return "the account's quota is exhausted";
    case ErrorKind::kBilling:
      return "the account needs credits or a payment method";
    case ErrorKind::kNotFound:  // the message has the hint, with the URL
    default:
      return "";
  }
}

ChatResponse Aborted(const Status& why) {
  ChatResponse r;
  r.error = ErrorInfo{ErrorKind::kAborted, 0, "not sent: " + why.message()};
  return r;
}

/// A server's token counts are input: negative or absurd ones (more than 100M tokens in one reply)
/// are clamped, so that costs stay sums of non-negative prices and --max-cost trips.
void ClampUsage(Usage& u) {
  constexpr int64_t kMaxTokens = 100'000'000;
  for (int64_t* n : {&u.input_tokens, &u.output_tokens, &u.cache_read_tokens, &u.cache_write_tokens,
                     &u.reasoning_tokens})
    *n = std::clamp<int64_t>(*n, 0, kMaxTokens);
}

}  // namespace

class Client::Impl {
 public:
  Impl(std::unique_ptr<Provider> provider, ClientOptions options, std::optional<ResponseCache> cache,
       std::unique_ptr<std::ofstream> record)
      : provider_(std::move(provider)),
        options_(std::move(options)),
        cache_(std::move(cache)),
        record_(std::move(record)),
        limiter_(options_.requests_per_minute, options_.tokens_per_minute, options_.max_retry_after_s),
        rng_(options_.seed) {
    scheduler_ = std::thread([this] { Schedule(); });
  }

  ~Impl() {
    Wait();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    scheduler_.join();
    provider_.reset();
  }

  void Submit(ChatRequest request, ResponseCallback done) {
    auto job = std::make_shared<Job>();
    job->submitted = Now();
    job->estimate = EstimateTokens(request);
    if (cache_) job->cache_key = ResponseCache::Key(provider_->Identity(), request);
    job->request = std::move(request);
    job->done = std::move(done);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++outstanding_;
    }
    Status fatal = fatal_status();
    if (!fatal.ok()) return Finish(job, Aborted(fatal), /*paid=*/false);
    if (cache_) {
      if (std::optional<ChatResponse> hit = cache_->Get(job->cache_key)) {
        hit->from_cache = true;
        hit->attempts = 0;
        hit->latency_s = Now() - job->submitted;
        return Finish(job, std::move(*hit), /*paid=*/false);
      }
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (options_.max_cost_usd) {
        const double worst = WorstCaseCost(job->request);
        const double committed = options_.spent_before_usd + stats_.cost_usd + reserved_;
        if (committed + worst > *options_.max_cost_usd) {
          budget_reached_ = true;
          char why[200];
          std::snprintf(why, sizeof why,
                        "the spending cap of $%.4f: $%.4f spent or reserved, this request may cost $%.4f",
                        *options_.max_cost_usd, committed, worst);
          lock.unlock();
          return Finish(job, Aborted(Status::ResourceExhausted(why)), /*paid=*/false);
        }
        job->reserved = worst;
        reserved_ += worst;
      }
      job->ready_at = job->submitted;
      job->seq = next_seq_++;
      queue_.emplace(std::make_pair(job->ready_at, job->seq), job);
    }
    cv_.notify_all();
  }

  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [this] { return outstanding_ == 0; });
  }

  std::string Redact(std::string text) const { return provider_->Redact(std::move(text)); }

  Status fatal_status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return fatal_;
  }

  bool budget_reached() const {
    std::lock_guard<std::mutex> lock(mu_);
    return budget_reached_;
  }

  ClientStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  struct Job {
    ChatRequest request;
    ResponseCallback done;
    std::string cache_key;
    double submitted = 0, ready_at = 0, estimate = 0;
    double reserved = 0;  ///< USD held against max_cost_usd until the request finishes
    uint64_t seq = 0;
    int attempts = 0;
  };
  using QueueKey = std::pair<double, uint64_t>;  // (ready_at, seq): earliest first, FIFO on ties

  void Schedule() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (queue_.empty() || in_flight_ >= options_.max_in_flight) {
        cv_.wait(lock);
        continue;
      }
      auto it = queue_.begin();
      const double now = Now();
      if (it->first.first > now) {
        cv_.wait_for(lock, std::chrono::duration<double>(it->first.first - now));
        continue;
      }
      std::shared_ptr<Job> job = it->second;
      if (double wait = limiter_.TryAcquire(now, job->estimate); wait > 0) {
        if (wait >= 5 && now >= next_pacing_note_) {  // a long pause is said, once per pause
          spdlog::warn("llm: rate limit reached; waiting {:.0f} s before the next request", wait);
          next_pacing_note_ = now + wait;
        }
        cv_.wait_for(lock, std::chrono::duration<double>(wait));
        continue;
      }
      queue_.erase(it);
      ++in_flight_;
      ++job->attempts;
      lock.unlock();
      provider_->Send(job->request, [this, job](Attempt a) { OnAttempt(job, std::move(a)); });
      lock.lock();
    }
  }

  /// The most `request` can cost: its input at 3 bytes a token at the dearer of the input and
  /// cache-write prices, plus max_tokens of output. 0 for a model without a price.
  double WorstCaseCost(const ChatRequest& request) const {
    std::optional<ModelPrice> p = options_.prices.Find(provider_->Name(), request.model);
    if (!p) return 0;
    const double input_price = std::max(p->input, p->cache_write.value_or(p->input));
    return provider_->PriceFactor() *
           (RequestBytes(request) / 3 * input_price + static_cast<double>(request.max_tokens) * p->output) / 1e6;
  }

  /// Stops the batch (under mu_): sets fatal_ and takes every queued job out, to be aborted.
  void Trip(Status why, std::vector<std::shared_ptr<Job>>& aborted) {
    if (!fatal_.ok()) return;
    fatal_ = std::move(why);
    for (auto& [key, queued] : queue_) aborted.push_back(queued);
    queue_.clear();
  }

  double Backoff(int attempt) {
    const double cap = std::min(options_.max_backoff_s,
                                options_.initial_backoff_s * std::pow(2.0, std::min(attempt - 1, 60)));
    return cap * std::uniform_real_distribution<double>(0.75, 1.0)(rng_);
  }

  /// Whether a failed attempt is tried again, as the official SDKs decide: the server's
  /// x-should-retry first, then the kind; a retry-after longer than the cap is not waited for.
  bool WantsRetry(const Attempt& a, std::string& why_not) const {
    const ErrorKind kind = a.response.error.kind;
    if (a.should_retry) {
      if (!*a.should_retry && IsRetryable(kind)) why_not = " (x-should-retry: false)";
      if (!*a.should_retry) return false;
    } else if (!IsRetryable(kind)) {
      return false;
    }
    if (a.retry_after_s && *a.retry_after_s > options_.max_retry_after_s) {
      char text[160];
      std::snprintf(text, sizeof text,
                    " (the server asked to wait %.0f s, more than max_retry_after_s %.0f s)",
                    *a.retry_after_s, options_.max_retry_after_s);
      why_not = text;
      return false;
    }
    return true;
  }

  void OnAttempt(const std::shared_ptr<Job>& job, Attempt a) {
    ChatResponse r = std::move(a.response);
    ClampUsage(r.usage);
    std::vector<std::shared_ptr<Job>> aborted;
    Status fatal;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const double now = Now();
      --in_flight_;
      ++stats_.attempts;
      limiter_.Observe(a.limits, now);
      const ErrorKind kind = r.error.kind;
      if (r.ok()) {
        identical_errors_ = 0;
        outage_since_.reset();
      } else if (IsRetryable(kind)) {
        if (!outage_since_) outage_since_ = now;
        if (options_.outage_s > 0 && now - *outage_since_ >= options_.outage_s * options_.time_scale) {
          char text[120];
          std::snprintf(text, sizeof text,
                        "batch stopped: the teacher failed on transient errors for %.0f s without a success (",
                        (now - *outage_since_) / options_.time_scale);
          Trip(Status::Unavailable(provider_->Redact(text + std::string(ErrorKindName(kind)) + ": " +
                                                     r.error.message +
                                                     "); rerun the same command once it answers again")),
               aborted);
        }
      }
      if (r.ok()) {
        const Usage& u = r.usage;
        limiter_.Adjust(now, job->estimate - static_cast<double>(u.input_tokens + u.output_tokens +
                                                                 u.cache_write_tokens));
      } else if (std::string why_not;
                 WantsRetry(a, why_not) && job->attempts < options_.max_attempts && fatal_.ok()) {
        double delay = Backoff(job->attempts);
        if (a.retry_after_s && *a.retry_after_s > 0) {
          delay = *a.retry_after_s * std::uniform_real_distribution<double>(1.0, 1.1)(rng_);
          delay *= options_.time_scale;
          if (kind == ErrorKind::kRateLimited) limiter_.BlockUntil(now + delay);  // the limit is per key
        } else {
          delay *= options_.time_scale;
        }
        spdlog::debug("llm: {} (attempt {}/{}), retrying in {:.2f} s", provider_->Redact(r.error.message),
                      job->attempts, options_.max_attempts, delay);
        ++stats_.retries;
        job->ready_at = now + delay;
        job->seq = next_seq_++;
        queue_.emplace(std::make_pair(job->ready_at, job->seq), job);
        cv_.notify_all();
        return;
      } else {
        if (!why_not.empty()) {
          r.error.message += why_not;
        } else if (job->attempts > 1 && (a.should_retry.value_or(IsRetryable(kind)))) {
          r.error.message =
              "gave up after " + std::to_string(job->attempts) + " attempts: " + r.error.message;
        }
        if (IsFatal(kind) && fatal_.ok()) {
          const std::string hint = FatalHint(kind);
          Trip(Status::Unavailable(provider_->Redact("batch stopped: " + provider_->Name() + " " +
                                                     ErrorKindName(kind) + " error (" + r.error.message +
                                                     ")" + (hint.empty() ? "" : "; " + hint))),
               aborted);
        } else if (!IsRetryable(kind) && kind != ErrorKind::kAborted && options_.max_identical_errors > 0) {
          std::string signature = std::string(ErrorKindName(kind)) + " " + std::to_string(r.error.http_status) +
                                  ": " + r.error.message;
          identical_errors_ = signature == last_error_ ? identical_errors_ + 1 : 1;
          last_error_ = std::move(signature);
          if (identical_errors_ >= options_.max_identical_errors)
            Trip(Status::Unavailable(provider_->Redact(
                     "batch stopped: " + std::to_string(identical_errors_) +
                     " requests in a row failed with the same error (" + last_error_ + ")")),
                 aborted);
        }
      }
      fatal = fatal_;
      cv_.notify_all();
    }
    if (!fatal.ok() && !aborted.empty()) spdlog::error("llm: {}", fatal.message());  // redacted above
    r.attempts = job->attempts;
    r.latency_s = Now() - job->submitted;
    Finish(job, std::move(r), /*paid=*/true);
    for (auto& j : aborted) Finish(j, Aborted(fatal), /*paid=*/false);
  }

  /// Prices, caches, records and delivers a final response, then counts the request done.
  void Finish(const std::shared_ptr<Job>& job, ChatResponse r, bool paid) {
    // A failure that reports usage (a stream cut after tokens came) was billed: it is priced too.
    if (!r.from_cache && (r.ok() || HasUsage(r.usage))) {
      const std::string provider = provider_->Name();
      std::optional<double> cost = options_.prices.Cost(provider, job->request.model, r.usage);
      if (!cost && !r.model.empty()) cost = options_.prices.Cost(provider, r.model, r.usage);
      r.cost_usd = cost.value_or(0) * provider_->PriceFactor();
      r.cost_known = cost.has_value();
    }
    if (r.ok() && !r.from_cache && cache_)
      if (Status s = cache_->Put(job->cache_key, r); !s.ok()) spdlog::warn("llm: {}", s.ToString());
    if (r.ok() && record_) Record(job->request, r);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.requests;
      ++(r.ok() ? stats_.succeeded : stats_.failed);
      if (r.from_cache) ++stats_.cache_hits;
      if (paid && (r.ok() || HasUsage(r.usage))) {
        stats_.usage += r.usage;
        stats_.cost_usd += r.cost_usd;
      }
      reserved_ -= job->reserved;
      job->reserved = 0;
    }
    if (job->done) job->done(std::move(r));
    {
      std::lock_guard<std::mutex> lock(mu_);
      --outstanding_;
    }
    idle_cv_.notify_all();
  }

  void Record(const ChatRequest& request, const ChatResponse& r) {
    nlohmann::json line = {{"schema", "kforge.cassette/1"},
                           {"key", RequestKey(request)},
                           {"request", ToJson(request)},
                           {"response", ToJson(r)}};
    line["response"]["from_cache"] = false;
    const std::string text = provider_->Redact(common::JsonText(line));
    std::lock_guard<std::mutex> lock(record_mu_);
    *record_ << text << "\n";
    record_->flush();
  }

  std::unique_ptr<Provider> provider_;
  const ClientOptions options_;
  const std::optional<ResponseCache> cache_;
  std::unique_ptr<std::ofstream> record_;
  std::mutex record_mu_;

  mutable std::mutex mu_;
  std::condition_variable cv_;       // scheduler: queue, in-flight count, stop
  std::condition_variable idle_cv_;  // Wait(): outstanding count
  std::multimap<QueueKey, std::shared_ptr<Job>> queue_;
  RateLimiter limiter_;
  std::mt19937_64 rng_;
  uint64_t next_seq_ = 0;
  double next_pacing_note_ = 0;  // no pacing warning before this time (Now())
  int in_flight_ = 0;
  int64_t outstanding_ = 0;
  bool stop_ = false;
  Status fatal_;
  double reserved_ = 0;  // USD reserved by requests queued or in flight
  bool budget_reached_ = false;
  int identical_errors_ = 0;            // requests in a row that failed with last_error_
  std::string last_error_;
  std::optional<double> outage_since_;  // first transient failure since the last success
  ClientStats stats_;
  std::thread scheduler_;
};

StatusOr<std::unique_ptr<Client>> Client::Create(std::unique_ptr<Provider> provider, ClientOptions options) {
  if (!provider) return Status::InvalidArgument("llm client: no provider");
  if (options.max_in_flight < 1)
    return Status::InvalidArgument("llm client: max_in_flight must be at least 1");
  if (options.max_attempts < 1) return Status::InvalidArgument("llm client: max_attempts must be at least 1");
  if (!(options.time_scale > 0)) return Status::InvalidArgument("llm client: time_scale must be positive");
  std::optional<ResponseCache> cache;
  if (!options.cache_dir.empty()) {
    const Provider* p = provider.get();
    KFORGE_ASSIGN_OR_RETURN(ResponseCache c, ResponseCache::Open(options.cache_dir, [p](std::string text) {
                              return p->Redact(std::move(text));
                            }));
    cache.emplace(std::move(c));
  }
  std::unique_ptr<std::ofstream> record;
  if (!options.record_path.empty()) {
    record = std::make_unique<std::ofstream>(options.record_path, std::ios::app);
    if (!*record) return Status::IoError("record file " + options.record_path + ": cannot open for writing");
  }
  auto impl =
      std::make_unique<Impl>(std::move(provider), std::move(options), std::move(cache), std::move(record));
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

void Client::Submit(ChatRequest request, ResponseCallback done) {
  impl_->Submit(std::move(request), std::move(done));
}

std::future<ChatResponse> Client::Complete(ChatRequest request) {
  auto promise = std::make_shared<std::promise<ChatResponse>>();
  std::future<ChatResponse> f = promise->get_future();
  Submit(std::move(request), [promise](ChatResponse r) { promise->set_value(std::move(r)); });
  return f;
}

std::vector<ChatResponse> Client::CompleteAll(std::vector<ChatRequest> requests) {
  std::vector<std::future<ChatResponse>> futures;
  futures.reserve(requests.size());
  for (ChatRequest& r : requests) futures.push_back(Complete(std::move(r)));
  std::vector<ChatResponse> out;
  out.reserve(futures.size());
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

void Client::Wait() { impl_->Wait(); }
Status Client::fatal_status() const { return impl_->fatal_status(); }
bool Client::budget_reached() const { return impl_->budget_reached(); }
ClientStats Client::stats() const { return impl_->stats(); }
std::string Client::Redact(std::string text) const { return impl_->Redact(std::move(text)); }

}  // namespace kforge::llm
