// Worker process management: spawn, line exchange with deadlines, reaping.
#include "verify/worker_client.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <spdlog/spdlog.h>

namespace kforge::verify {
namespace {

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

WorkerClient::WorkerClient(std::vector<std::string> argv) : argv_(std::move(argv)) {
  // A worker that dies mid-write must not kill the parent.
  signal(SIGPIPE, SIG_IGN);
}

// A worker keeps nothing worth an orderly exit, and tearing down LibTorch and the CUDA context
// takes longer than the kill. Shutdown() is the orderly way (compute-sanitizer reports at exit).
WorkerClient::~WorkerClient() { Stop(); }

std::string WorkerClient::Shutdown() {
  if (!worker_.running()) return "not running";
  worker_.CloseStdin();
  std::string detail = common::DescribeExit(worker_.Wait());
  worker_ = common::Subprocess();
  return detail;
}

std::string WorkerClient::Stop() {
  if (!worker_.running()) return "not running";
  worker_.CloseStdin();
  std::string detail = common::DescribeExit(worker_.Kill());
  worker_ = common::Subprocess();
  return detail;
}

WorkerClient::Reply WorkerClient::Call(const nlohmann::json& request, std::chrono::milliseconds deadline) {
  Reply reply;
  if (!worker_.running()) {
    common::SpawnOptions options;
    options.stdin_mode = options.stdout_mode = common::SpawnOptions::Stream::kPipe;
    auto started = common::Subprocess::Spawn(argv_, options);
    if (!started.ok()) {
      reply.kind = Reply::Kind::kDied;
      reply.detail = started.status().message();
      return reply;
    }
    worker_ = std::move(*started);
    buffer_.clear();
    ++spawn_count_;
    if (spdlog::should_log(spdlog::level::debug)) {
      std::string command;
      for (const std::string& arg : argv_) command += (command.empty() ? "" : " ") + arg;
      spdlog::debug("worker: started {} (pid {}, start {})", command, worker_.pid(), spawn_count_);
    }
  }
  auto died = [&]() {
    reply.kind = Reply::Kind::kDied;
    reply.detail = Shutdown();
    spdlog::debug("worker: died without answering ({})", reply.detail);
    return reply;
  };
  if (!WriteAll(worker_.stdin_fd(), request.dump() + "\n")) return died();

  auto end = std::chrono::steady_clock::now() + deadline;
  while (true) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      try {
        reply.body = nlohmann::json::parse(line);
        if (reply.body.is_object() && reply.body.value("exiting", false)) Stop();
        return reply;
      } catch (const nlohmann::json::exception&) {  // malformed, or a number out of range
        Stop();
        reply.kind = Reply::Kind::kDied;
        reply.detail = "worker wrote a malformed reply";
        return reply;
      }
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      spdlog::debug("worker: no reply within {} ms; killed ({})", deadline.count(), Stop());
      reply.kind = Reply::Kind::kTimeout;
      reply.detail = "no reply within " + std::to_string(deadline.count()) + " ms; worker killed";
      return reply;
    }
    pollfd fd{worker_.stdout_fd(), POLLIN, 0};
    int ready = poll(&fd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[65536];
    ssize_t n = read(worker_.stdout_fd(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return died();
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace kforge::verify
