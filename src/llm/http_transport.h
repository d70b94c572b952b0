// HttpTransport: many HTTP requests in flight on one libcurl multi handle driven by one thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kforge::llm {

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  ///< POSTed when non-empty, else GET
  double timeout_s = 600;
  double connect_timeout_s = 20;
};

struct HttpResult {
  int status = 0;                              ///< 0 when no status line arrived
  std::map<std::string, std::string> headers;  ///< names lowercased; last value wins
  std::string body;
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
