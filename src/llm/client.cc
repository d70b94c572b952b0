// Client: scheduling (in-flight cap, pacing, backoff), cache, cassette recording and accounting.
#include "kforge/llm/client.h"
#include "kforge/common/json_fields.h"

#include <spdlog/spdlog.h>
#include <cstdint>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cctype>
#include <cstdio>
#include <deque>
#include <atomic>
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

/// `message` with every id-like word (8 or more letters, digits, '_' and '-', with a digit and a
/// letter: a request id, a UUID) as "#": errors that differ only by the request they name are the same
/// error for the circuit breaker, while counts ("prompt is too long: 200001 tokens") still differ.
std::string WithoutIds(const std::string& message) {
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  std::string out;
  for (size_t i = 0; i < message.size();) {
    if (!word_char(message[i])) {
      out.push_back(message[i++]);
      continue;
    }
    size_t end = i;
    bool digit = false, letter = false;
    for (; end < message.size() && word_char(message[end]); ++end) {
      digit |= std::isdigit(static_cast<unsigned char>(message[end])) != 0;
      letter |= std::isalpha(static_cast<unsigned char>(message[end])) != 0;
    }
    out += end - i >= 8 && digit && letter ? std::string("#") : message.substr(i, end - i);
    i = end;
  }
  return out;
}

ChatResponse Aborted(const Status& why) {
  ChatResponse r;
  r.error = ErrorInfo{ErrorKind::kAborted, 0, "not sent: " + why.message()};
  return r;
}

/// A server's token counts are input: negative ones count 0, output at most the request's max_tokens
/// and each prompt count at most twice the request's bytes (plus room for the API's own framing), so
/// that costs stay sums of non-negative prices and an absurd count never makes a phantom charge.
/// Returns whether a count was cut.
bool ClampUsage(Usage& u, const ChatRequest& request) {
  constexpr int64_t kMaxTokens = 100'000'000;
  const int64_t output_cap = request.max_tokens > 0 ? std::min<int64_t>(request.max_tokens, kMaxTokens) : kMaxTokens;
  const int64_t prompt_cap = std::min<int64_t>(static_cast<int64_t>(2 * RequestBytes(request)) + 65536, kMaxTokens);
  const Usage before = u;
  for (int64_t* n : {&u.input_tokens, &u.cache_read_tokens, &u.cache_write_tokens})
    *n = std::clamp<int64_t>(*n, 0, prompt_cap);
  u.output_tokens = std::clamp<int64_t>(u.output_tokens, 0, output_cap);
  u.reasoning_tokens = std::clamp<int64_t>(u.reasoning_tokens, 0, u.output_tokens);
  return before.input_tokens != u.input_tokens || before.output_tokens != u.output_tokens ||
         before.cache_read_tokens != u.cache_read_tokens || before.cache_write_tokens != u.cache_write_tokens ||
         before.reasoning_tokens != u.reasoning_tokens;
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
        hit->cost_usd = 0;  // paid by the run that stored it, not again
        hit->cost_known = true;
        return Finish(job, std::move(*hit), /*paid=*/false);
      }
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      job->worst = WorstCaseCost(job->request);
      if (options_.max_cost_usd && !Fits(job->worst)) {
        if (reserving_ > 0) {  // requests in flight give their reservations back as they finish
          budget_waiting_.push_back(job);
          return;
        }
        budget_reached_ = true;
        const Status why = BudgetRefusal(*job);
        lock.unlock();
        return Finish(job, Aborted(why), /*paid=*/false);
      }
      Enqueue(job);
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
    double worst = 0;     ///< the request's worst-case cost, USD
    double reserved = 0;  ///< USD held against max_cost_usd until the request finishes
    bool holds_reservation = false;
    uint64_t seq = 0;
    int attempts = 0;
    Usage billed;           ///< over every attempt
    double billed_usd = 0;  ///< over every attempt
    bool cost_known = true;
  };

  /// Whether a request of worst case `worst` fits under max_cost_usd beside what is spent and reserved.
  bool Fits(double worst) const {
    const double committed =
        options_.spent_before_usd + stats_.cost_usd + stats_.usage_missing_worst_usd + reserved_;
    return committed + worst <= *options_.max_cost_usd;
  }

  /// Why `job` is not sent: nothing is in flight, and its worst case would still pass the cap.
  Status BudgetRefusal(const Job& job) const {
    char why[400];
    std::snprintf(why, sizeof why,
                  "the spending cap of $%.4f: $%.4f spent%s, nothing in flight, and this request reserves its "
                  "worst case, $%.4f (max_tokens %d of output and ~%.0f tokens of input)",
                  *options_.max_cost_usd, options_.spent_before_usd + stats_.cost_usd + stats_.usage_missing_worst_usd,
                  stats_.usage_missing_worst_usd > 0 ? " (worst cases of replies without a usage included)" : "",
                  job.worst, job.request.max_tokens, RequestBytes(job.request) / 3);
    return Status::ResourceExhausted(why);
  }

  /// Under mu_: reserves `job`'s worst case (with a cap) and queues it.
  void Enqueue(const std::shared_ptr<Job>& job) {
    if (options_.max_cost_usd) {
      job->reserved = job->worst;
      job->holds_reservation = true;
      reserved_ += job->worst;
      ++reserving_;
    }
    job->ready_at = std::max(job->submitted, Now());
    job->seq = next_seq_++;
    queue_.emplace(std::make_pair(job->ready_at, job->seq), job);
  }

  /// Under mu_, after a reservation came back: queues the waiting requests that fit now, in order;
  /// once nothing is in flight, a request that still does not fit is refused (into `refused`).
  void AdmitWaiting(std::vector<std::pair<std::shared_ptr<Job>, Status>>& refused) {
    while (!budget_waiting_.empty()) {
      std::shared_ptr<Job> job = budget_waiting_.front();
      if (Fits(job->worst)) {
        Enqueue(job);
      } else if (reserving_ == 0) {
        budget_reached_ = true;
        refused.emplace_back(job, BudgetRefusal(*job));
      } else {
        return;
      }
      budget_waiting_.pop_front();
      cv_.notify_all();
    }
  }

  /// Under mu_: counts what one attempt was billed, into the request's totals and the stats.
  void Charge(Job& job, const ChatResponse& r, bool usage_missing) {
    if (!r.ok() && !HasUsage(r.usage) && !usage_missing) return;  // refused before any work: not billed
    const std::string provider = provider_->Name();
    std::optional<double> cost = options_.prices.Cost(provider, job.request.model, r.usage);
    if (!cost && !r.model.empty()) cost = options_.prices.Cost(provider, r.model, r.usage);
    const double usd = cost.value_or(0) * provider_->PriceFactor();
    job.billed += r.usage;
    job.billed_usd += usd;
    stats_.usage += r.usage;
    stats_.cost_usd += usd;
    if (!cost) job.cost_known = false;
    if (usage_missing) {
      job.cost_known = false;
      ++stats_.usage_missing;
      stats_.usage_missing_worst_usd += job.worst;
    }
  }
  using QueueKey = std::pair<double, uint64_t>;  // (ready_at, seq): earliest first, FIFO on ties

  void Schedule() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      // On time, not when a retry waiting out its backoff fails (a request not tried yet gets its try).
      if (OutageDue(Now()) &&
          std::any_of(queue_.begin(), queue_.end(), [](const auto& queued) { return queued.second->attempts > 0; })) {
        std::vector<std::shared_ptr<Job>> aborted;
        Trip(OutageStatus(Now()), aborted);
        const Status fatal = fatal_;
        lock.unlock();
        spdlog::error("llm: {}", fatal.message());
        for (auto& job : aborted) Finish(job, Aborted(fatal), /*paid=*/false);
        lock.lock();
        continue;
      }
      if (queue_.empty() || in_flight_ >= options_.max_in_flight) {
        cv_.wait(lock);
        continue;
      }
      auto it = queue_.begin();
      const double now = Now();
      if (it->first.first > now) {
        double wait = it->first.first - now;
        if (outage_since_ && options_.outage_s > 0 && fatal_.ok())
          wait = std::min(wait, std::max(0.0, *outage_since_ + options_.outage_s * options_.time_scale - now));
        cv_.wait_for(lock, std::chrono::duration<double>(wait));
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

  /// Under mu_: transient failures have gone on for outage_s without a success, and nothing stopped yet.
  bool OutageDue(double now) const {
    return options_.outage_s > 0 && outage_since_ && fatal_.ok() &&
           now - *outage_since_ >= options_.outage_s * options_.time_scale;
  }

  Status OutageStatus(double now) const {
    char text[120];
    std::snprintf(text, sizeof text,
                  "batch stopped: the teacher failed on transient errors for %.0f s without a success (",
                  (now - *outage_since_) / options_.time_scale);
    return Status::Unavailable(provider_->Redact(text + last_transient_ +
                                                 "); rerun the same command once it answers again"));
  }

  /// Stops the batch (under mu_): sets fatal_ and takes every queued job out, to be aborted.
  void Trip(Status why, std::vector<std::shared_ptr<Job>>& aborted) {
    if (!fatal_.ok()) return;
    fatal_ = std::move(why);
    for (auto& [key, queued] : queue_) aborted.push_back(queued);
    queue_.clear();
    for (auto& waiting : budget_waiting_) aborted.push_back(waiting);
    budget_waiting_.clear();
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

  /// A failed request that is not retried (under mu_): its error says why, and a fatal error or the
  /// same error too many times in a row stops the batch (the jobs it aborts go to `aborted`).
  void GiveUp(const Job& job, const Attempt& a, const std::string& why_not, ChatResponse& r,
              std::vector<std::shared_ptr<Job>>& aborted) {
    const ErrorKind kind = r.error.kind;
    if (!why_not.empty()) {
      r.error.message += why_not;
    } else if (job.attempts > 1 && (a.should_retry.value_or(IsRetryable(kind)))) {
      r.error.message = "gave up after " + std::to_string(job.attempts) + " attempts: " + r.error.message;
    }
    if (IsFatal(kind) && fatal_.ok()) {
      const std::string hint = FatalHint(kind);
      Trip(Status::Unavailable(provider_->Redact("batch stopped: " + provider_->Name() + " " + ErrorKindName(kind) +
                                                 " error (" + r.error.message + ")" +
                                                 (hint.empty() ? "" : "; " + hint))),
           aborted);
    } else if (!IsRetryable(kind) && kind != ErrorKind::kAborted && options_.max_identical_errors > 0) {
      // Kind, status and the message (which names the error's type) with ids left out.
      const std::string said = std::string(ErrorKindName(kind)) + " " + std::to_string(r.error.http_status) + ": ";
      std::string signature = said + WithoutIds(r.error.message);
      identical_errors_ = signature == last_error_ ? identical_errors_ + 1 : 1;
      last_error_ = std::move(signature);
      if (identical_errors_ >= options_.max_identical_errors)
        Trip(Status::Unavailable(provider_->Redact("batch stopped: " + std::to_string(identical_errors_) +
                                                   " requests in a row failed with the same error (" + said +
                                                   r.error.message + ")")),
             aborted);
    }
  }

  void OnAttempt(const std::shared_ptr<Job>& job, Attempt a) {
    ChatResponse r = std::move(a.response);
    const Usage reported = r.usage;
    if (ClampUsage(r.usage, job->request) && !usage_clamp_said_.exchange(true))
      spdlog::warn("llm: the server reported a usage of {} input, {} output tokens for a request of max_tokens {}; "
                   "counted as {} and {}",
                   reported.input_tokens, reported.output_tokens, job->request.max_tokens, r.usage.input_tokens,
                   r.usage.output_tokens);
    // A timeout leaves the server's work unknown: it may have been billed.
    const bool usage_missing =
        a.usage_missing || (r.error.kind == ErrorKind::kTimeout && !HasUsage(r.usage));
    std::vector<std::shared_ptr<Job>> aborted;
    Status fatal;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const double now = Now();
      --in_flight_;
      ++stats_.attempts;
      limiter_.Observe(a.limits, now);
      Charge(*job, r, usage_missing);
      const ErrorKind kind = r.error.kind;
      if (r.ok()) {
        identical_errors_ = 0;
        outage_since_.reset();
      } else if (IsRetryable(kind)) {
        if (!outage_since_) outage_since_ = now;
        last_transient_ = std::string(ErrorKindName(kind)) + ": " + r.error.message;
        if (OutageDue(now)) Trip(OutageStatus(now), aborted);
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
        GiveUp(*job, a, why_not, r, aborted);
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

  /// Sets the cost of a final response (what every attempt was billed), caches, records and delivers
  /// it, then counts the request done.
  void Finish(const std::shared_ptr<Job>& job, ChatResponse r, bool paid) {
    if (paid) {  // every attempt, the failed ones that were billed (a stream cut after its usage) too
      r.usage = job->billed;
      r.cost_usd = job->billed_usd;
      r.cost_known = job->cost_known;
    } else if (!r.from_cache) {  // not sent
      r.cost_usd = 0;
      r.cost_known = true;
    }
    if (r.ok() && !r.from_cache && cache_)
      if (Status s = cache_->Put(job->cache_key, r); !s.ok()) spdlog::warn("llm: {}", s.ToString());
    if (r.ok() && record_) Record(job->request, r);
    std::vector<std::pair<std::shared_ptr<Job>, Status>> refused;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.requests;
      ++(r.ok() ? stats_.succeeded : stats_.failed);
      if (r.from_cache) ++stats_.cache_hits;
      if (job->holds_reservation) {
        reserved_ -= job->reserved;
        --reserving_;
        job->reserved = 0;
        job->holds_reservation = false;
        if (reserving_ == 0) reserved_ = 0;  // no rounding left behind
      }
      if (options_.max_cost_usd) AdmitWaiting(refused);
    }
    if (job->done) job->done(std::move(r));
    for (auto& [waiting, why] : refused) Finish(waiting, Aborted(why), /*paid=*/false);
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
  int reserving_ = 0;    // requests holding a reservation
  std::deque<std::shared_ptr<Job>> budget_waiting_;  // requests waiting for reservations to come back
  std::atomic<bool> usage_clamp_said_{false};
  bool budget_reached_ = false;
  int identical_errors_ = 0;            // requests in a row that failed with last_error_
  std::string last_error_;
  std::optional<double> outage_since_;  // first transient failure since the last success
  std::string last_transient_;          // "kind: message" of the latest transient failure
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
