// HttpTransport: many HTTP requests in flight on one libcurl multi handle driven by one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kforge::llm {

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;        ///< POSTed when non-empty, else GET
  double timeout_s = 600;  ///< whole transfer; 0 = none
  double connect_timeout_s = 20;
  /// The transfer fails (timed_out) when no byte arrived for this long; 0 = no idle limit.
  double idle_timeout_s = 0;
  /// Body bytes (streamed or not) read at most; more ends the transfer with "reply larger than ...".
  size_t max_body_bytes = size_t{64} << 20;
  /// When set, the body of a 2xx text/event-stream reply goes here as it arrives (on the transport
  /// thread) instead of into HttpResult::body. Other replies (errors) are collected as usual.
  std::function<void(std::string_view)> on_stream_data;
};

struct HttpResult {
  int status = 0;                              ///< 0 when no status line arrived
  std::map<std::string, std::string> headers;  ///< names lowercased; last value wins
  std::string body;
  bool streamed = false;  ///< the body went to on_stream_data
  bool timed_out = false;
  std::string transport_error;  ///< non-empty on a transport failure (curl's message)
};

class HttpTransport {
 public:
  /// `max_connections` bounds concurrent transfers and kept-alive connections.
  explicit HttpTransport(int max_connections);
  /// Finishes transfers in progress (their callbacks run) and stops the thread.
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  /// Thread-safe. `done` runs once on the transport thread.
  void Send(HttpRequest request, std::function<void(HttpResult)> done);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kforge::llm
