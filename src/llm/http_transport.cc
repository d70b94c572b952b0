// libcurl multi event loop behind HttpTransport.
#include "llm/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace kforge::llm {
namespace {

using Clock = std::chrono::steady_clock;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw std::runtime_error("curl_global_init failed");
  });
}

struct Transfer {
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  HttpRequest request;
  HttpResult result;
  std::function<void(HttpResult)> done;
  char error_buffer[CURL_ERROR_SIZE] = {};
  Clock::time_point last_byte = Clock::now();  // for the idle timeout
  bool body_started = false;
  size_t streamed_bytes = 0;
  bool too_large = false;  // the body passed request.max_body_bytes: the transfer was ended

  ~Transfer() {
    if (header_list) curl_slist_free_all(header_list);
    if (easy) curl_easy_cleanup(easy);
  }
};

bool IsEventStream(const HttpResult& r) {
  auto it = r.headers.find("content-type");
  return r.status >= 200 && r.status < 300 && it != r.headers.end() &&
         it->second.find("text/event-stream") != std::string::npos;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t bytes = size * n;
  t->last_byte = Clock::now();
  if (!t->body_started) {
    t->body_started = true;
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    t->result.status = static_cast<int>(status);
    t->result.streamed = t->request.on_stream_data && IsEventStream(t->result);
  }
  const size_t received = t->result.streamed ? t->streamed_bytes : t->result.body.size();
  if (received + bytes > t->request.max_body_bytes) {  // a broken or hostile server: end it
    t->too_large = true;
    return 0;  // aborts the transfer
  }
  if (t->result.streamed) {
    t->streamed_bytes += bytes;
    t->request.on_stream_data(std::string_view(data, bytes));
    return bytes;
  }
  t->result.body.append(data, bytes);
  return bytes;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t bytes = size * n;
  t->last_byte = Clock::now();
  std::string_view line(data, bytes);
  if (line.rfind("HTTP/", 0) == 0) {  // a new status line (after 100 Continue or a redirect)
    t->result.headers.clear();
    return bytes;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
    value.remove_suffix(1);
  t->result.headers[name] = std::string(value);
  return bytes;
}

}  // namespace

class HttpTransport::Impl {
 public:
  explicit Impl(int max_connections) {
    GlobalInit();
    multi_ = curl_multi_init();
    if (!multi_) throw std::runtime_error("curl_multi_init failed");
    long n = std::max(1, max_connections);
    curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, n);
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, n);
    thread_ = std::thread([this] { Loop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    curl_multi_wakeup(multi_);
    thread_.join();
    curl_multi_cleanup(multi_);
  }

  void Send(HttpRequest request, std::function<void(HttpResult)> done) {
    auto t = std::make_unique<Transfer>();
    t->request = std::move(request);
    t->done = std::move(done);
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.push_back(std::move(t));
    }
    curl_multi_wakeup(multi_);
  }

 private:
  void Start(std::unique_ptr<Transfer> t) {
    CURL* e = curl_easy_init();
    if (!e) {
      t->result.transport_error = "curl_easy_init failed";
      Finish(std::move(t));
      return;
    }
    t->easy = e;
    const HttpRequest& r = t->request;
    curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout_s * 1000));  // 0 = none
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error_buffer);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
    for (const auto& [name, value] : r.headers)
      t->header_list = curl_slist_append(t->header_list, (name + ": " + value).c_str());
    t->header_list = curl_slist_append(t->header_list, "Expect:");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->header_list);
    if (!r.body.empty()) {
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    }
    t->last_byte = Clock::now();
    curl_multi_add_handle(multi_, e);
    active_.push_back(std::move(t));
  }

  void Finish(std::unique_ptr<Transfer> t) {
    // A stream that ended before its first byte is still a stream (its assembler says "empty").
    if (!t->body_started && t->request.on_stream_data) t->result.streamed = IsEventStream(t->result);
    auto done = std::move(t->done);
    HttpResult result = std::move(t->result);
    t.reset();
    done(std::move(result));
  }

  /// Ends the transfers that received nothing for their idle timeout; returns the milliseconds
  /// until the next one could expire (at most `cap_ms`).
  long ExpireIdle(long cap_ms) {
    const Clock::time_point now = Clock::now();
    long next_ms = cap_ms;
    for (size_t i = 0; i < active_.size();) {
      Transfer& t = *active_[i];
      const double idle = t.request.idle_timeout_s;
      if (idle <= 0) {
        ++i;
        continue;
      }
      const double quiet = std::chrono::duration<double>(now - t.last_byte).count();
      if (quiet < idle) {
        next_ms = std::min(next_ms, static_cast<long>((idle - quiet) * 1000) + 1);
        ++i;
        continue;
      }
      std::unique_ptr<Transfer> expired = std::move(active_[i]);
      active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
      curl_multi_remove_handle(multi_, expired->easy);
      long status = 0;
      curl_easy_getinfo(expired->easy, CURLINFO_RESPONSE_CODE, &status);
      expired->result.status = static_cast<int>(status);
      expired->result.timed_out = true;
      char what[128];
      std::snprintf(what, sizeof what, "no data for %.1f s (idle timeout)", idle);
      expired->result.transport_error = what;
      Finish(std::move(expired));
    }
    return next_ms;
  }

  void Complete(CURL* easy, CURLcode code) {
    auto it = std::find_if(active_.begin(), active_.end(), [&](const auto& t) { return t->easy == easy; });
    if (it == active_.end()) return;
    std::unique_ptr<Transfer> t = std::move(*it);
    active_.erase(it);
    curl_multi_remove_handle(multi_, easy);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    t->result.status = static_cast<int>(status);
    if (t->too_large) {
      t->result.transport_error =
          "reply larger than " + std::to_string(t->request.max_body_bytes >> 20) + " MiB; ended";
    } else if (code != CURLE_OK) {
      t->result.timed_out = code == CURLE_OPERATION_TIMEDOUT;
      t->result.transport_error = t->error_buffer[0] ? t->error_buffer : curl_easy_strerror(code);
    }
    Finish(std::move(t));
  }

  void Loop() {
    for (;;) {
      std::deque<std::unique_ptr<Transfer>> incoming;
      bool stop;
      {
        std::lock_guard<std::mutex> lock(mu_);
        incoming.swap(pending_);
        stop = stop_;
      }
      for (auto& t : incoming) Start(std::move(t));
      if (stop) break;
      int running = 0;
      curl_multi_perform(multi_, &running);
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &queued))
        if (msg->msg == CURLMSG_DONE) Complete(msg->easy_handle, msg->data.result);
      const long wait_ms = ExpireIdle(1000);
      curl_multi_poll(multi_, nullptr, 0, static_cast<int>(std::max(1L, wait_ms)), nullptr);
    }
    // Shutting down: whatever is still active is abandoned, and its caller told so.
    while (!active_.empty()) {
      std::unique_ptr<Transfer> t = std::move(active_.back());
      active_.pop_back();
      curl_multi_remove_handle(multi_, t->easy);
      t->result.transport_error = "transport shut down";
      Finish(std::move(t));
    }
  }

  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::deque<std::unique_ptr<Transfer>> pending_;
  bool stop_ = false;
  std::vector<std::unique_ptr<Transfer>> active_;  // touched by the loop thread only
};

HttpTransport::HttpTransport(int max_connections) : impl_(std::make_unique<Impl>(max_connections)) {}
HttpTransport::~HttpTransport() = default;
void HttpTransport::Send(HttpRequest request, std::function<void(HttpResult)> done) {
  impl_->Send(std::move(request), std::move(done));
}

}  // namespace kforge::llm
