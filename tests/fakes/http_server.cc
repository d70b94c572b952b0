// FakeHttpServer implementation: blocking sockets, a thread per connection.
#include "fakes/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace kforge::fakes {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 529:
      return "Overloaded";
    default:
      return "Status";
  }
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

FakeReply FakeReply::Json(int status, std::string body,
                          std::vector<std::pair<std::string, std::string>> headers) {
  FakeReply r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  r.headers.emplace_back("content-type", "application/json");
  return r;
}

FakeReply FakeReply::Sse(std::vector<std::string> events, int gap_ms) {
  FakeReply r;
  r.headers = {{"content-type", "text/event-stream"}, {"cache-control", "no-cache"}};
  for (std::string& e : events) r.chunks.push_back(FakeChunk{gap_ms, std::move(e)});
  return r;
}

FakeHttpServer::FakeHttpServer(Handler fallback) : fallback_(std::move(fallback)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("fake server: socket failed");
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 256) != 0)
    throw std::runtime_error("fake server: bind/listen failed");
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeHttpServer::~FakeHttpServer() {
  stop_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
  }
  stop_cv_.notify_all();
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

std::string FakeHttpServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void FakeHttpServer::Enqueue(FakeReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  script_.push_back(std::move(reply));
}

std::vector<HttpExchange> FakeHttpServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

int FakeHttpServer::request_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(log_.size());
}

void FakeHttpServer::AcceptLoop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ++connections_;
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) {
      close(fd);
      break;
    }
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

FakeReply FakeHttpServer::Next(const HttpExchange& exchange) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back(exchange);
    if (!script_.empty()) {
      FakeReply r = std::move(script_.front());
      script_.pop_front();
      return r;
    }
  }
  if (fallback_) return fallback_(exchange);
  return FakeReply::Json(500, R"({"error":{"type":"api_error","message":"no scripted reply"}})");
}

void FakeHttpServer::Serve(int fd) {
  std::string buffer;
  char chunk[16384];
  while (!stop_) {
    // Read one request: head, then Content-Length bytes of body.
    size_t head_end;
    while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) goto done;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    {
      HttpExchange ex;
      std::string head = buffer.substr(0, head_end);
      size_t line_end = head.find("\r\n");
      std::string request_line = head.substr(0, line_end);
      size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
      ex.method = request_line.substr(0, sp1);
      ex.path = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
      size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
      while (pos < head.size()) {
        size_t eol = head.find("\r\n", pos);
        if (eol == std::string::npos) eol = head.size();
        std::string line = head.substr(pos, eol - pos);
        size_t colon = line.find(':');
        if (colon != std::string::npos) {
          std::string name = line.substr(0, colon);
          std::transform(name.begin(), name.end(), name.begin(),
                         [](unsigned char c) { return std::tolower(c); });
          size_t v = line.find_first_not_of(' ', colon + 1);
          ex.headers[name] = v == std::string::npos ? "" : line.substr(v);
        }
        pos = eol + 2;
      }
      if (ex.headers.count("expect") && !SendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n")) goto done;
      size_t length = ex.headers.count("content-length") ? std::stoul(ex.headers["content-length"]) : 0;
      buffer.erase(0, head_end + 4);
      while (buffer.size() < length) {
        ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) goto done;
        buffer.append(chunk, static_cast<size_t>(n));
      }
      ex.body = buffer.substr(0, length);
      buffer.erase(0, length);

      FakeReply reply = Next(ex);
      if (reply.delay_ms > 0) {
        std::unique_lock<std::mutex> lock(mu_);
        stop_cv_.wait_for(lock, std::chrono::milliseconds(reply.delay_ms), [this] { return stop_.load(); });
      }
      if ((reply.drop && reply.chunks.empty()) || stop_) goto done;
      std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + Reason(reply.status) + "\r\n";
      for (const auto& [name, value] : reply.headers) out += name + ": " + value + "\r\n";
      if (reply.chunks.empty()) {
        out += "content-length: " + std::to_string(reply.body.size()) + "\r\n\r\n" + reply.body;
        if (!SendAll(fd, out)) goto done;
        continue;
      }
      out += "transfer-encoding: chunked\r\n\r\n";
      if (!SendAll(fd, out)) goto done;
      if (!reply.body.empty()) reply.chunks.insert(reply.chunks.begin(), FakeChunk{0, reply.body});
      for (const FakeChunk& c : reply.chunks) {
        if (c.delay_ms > 0) {
          std::unique_lock<std::mutex> lock(mu_);
          stop_cv_.wait_for(lock, std::chrono::milliseconds(c.delay_ms), [this] { return stop_.load(); });
        }
        if (stop_) goto done;
        if (c.data.empty()) continue;  // an empty chunk would end the body
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", c.data.size());
        if (!SendAll(fd, size + c.data + "\r\n")) goto done;
      }
      if (reply.drop || !SendAll(fd, "0\r\n\r\n")) goto done;
    }
  }
done:
  std::lock_guard<std::mutex> lock(mu_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  close(fd);
}

}  // namespace kforge::fakes
