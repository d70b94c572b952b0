// FakeHttpServer: a real HTTP/1.1 server on 127.0.0.1 (ephemeral port) for tests and benchmarks.
// Each reply is scripted: status, headers, body, a delay, a dropped connection, or a body sent in
// timed chunks (server-sent events, stalls). One thread per connection, keep-alive, so many
// requests can be in flight.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kforge::fakes {

struct HttpExchange {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  ///< names lowercased
  std::string body;
};

/// A piece of a chunked body, sent after a pause.
struct FakeChunk {
  int delay_ms = 0;  ///< wait before sending (cut short when the server stops)
  std::string data;
};

struct FakeReply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int delay_ms = 0;  ///< wait before answering (cut short when the server stops)
  /// Close the connection without answering; with `chunks`, after the last chunk instead of
  /// ending the body (a stream cut off).
  bool drop = false;
  /// When not empty the reply is sent with chunked transfer encoding: `body` first (if any), then
  /// each chunk after its delay.
  std::vector<FakeChunk> chunks;

  static FakeReply Json(int status, std::string body,
                        std::vector<std::pair<std::string, std::string>> headers = {});
  /// A 200 text/event-stream reply: each event (already formatted, e.g. "event: x\ndata: {...}\n\n")
  /// is one chunk, sent `gap_ms` after the previous one.
  static FakeReply Sse(std::vector<std::string> events, int gap_ms = 0);
};

class FakeHttpServer {
 public:
  using Handler = std::function<FakeReply(const HttpExchange&)>;

  /// Listens on 127.0.0.1:0. `fallback` answers when no scripted reply is queued (default: 500).
  explicit FakeHttpServer(Handler fallback = {});
  /// Closes every connection and joins every thread.
  ~FakeHttpServer();
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  int port() const { return port_; }
  /// "http://127.0.0.1:PORT"
  std::string url() const;
  /// Replies served in order, one per request, before the fallback handler.
  void Enqueue(FakeReply reply);
  /// Requests received so far (dropped ones included).
  std::vector<HttpExchange> requests() const;
  int request_count() const;
  /// Connections accepted so far.
  int connection_count() const { return connections_.load(); }

 private:
  void AcceptLoop();
  void Serve(int fd);
  FakeReply Next(const HttpExchange& exchange);

  Handler fallback_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  std::deque<FakeReply> script_;
  std::vector<HttpExchange> log_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace kforge::fakes
