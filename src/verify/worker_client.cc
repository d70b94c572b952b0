// Worker process management: spawn, line exchange with deadlines, reaping.
#include "kforge/verify/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdint>

#include <cerrno>

extern char** environ;

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
WorkerClient::~WorkerClient() { Stop(true); }

bool WorkerClient::Start(std::string& error) {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + strerror(errno);
    return false;
  }
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + strerror(errno);
    close(in_pipe[0]);
    close(in_pipe[1]);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (std::string& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    error = "cannot start " + argv_[0] + ": " + strerror(rc);
    return false;
  }
  pid_ = pid;
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  buffer_.clear();
  ++spawn_count_;
  return true;
}

std::string WorkerClient::Reap() {
  if (pid_ < 0) return "not running";
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  pid_ = -1;
  if (r < 0) return "lost";
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return std::string("killed by SIG") + (name ? name : std::to_string(WTERMSIG(status)).c_str());
  }
  return "exit code " + std::to_string(WEXITSTATUS(status));
}

std::string WorkerClient::Shutdown() {
  if (pid_ < 0) return "not running";
  close(to_child_);
  to_child_ = -1;
  std::string detail = Reap();
  close(from_child_);
  from_child_ = -1;
  return detail;
}

void WorkerClient::Stop(bool kill_first) {
  if (to_child_ >= 0) close(to_child_);
  to_child_ = -1;
  if (pid_ > 0 && kill_first) kill(pid_, SIGKILL);
  if (pid_ > 0) Reap();
  if (from_child_ >= 0) close(from_child_);
  from_child_ = -1;
}

WorkerClient::Reply WorkerClient::Call(const nlohmann::json& request, std::chrono::milliseconds deadline) {
  Reply reply;
  if (pid_ < 0) {
    std::string error;
    if (!Start(error)) {
      reply.kind = Reply::Kind::kDied;
      reply.detail = error;
      return reply;
    }
  }
  auto died = [&]() {
    close(to_child_);
    to_child_ = -1;
    reply.kind = Reply::Kind::kDied;
    reply.detail = Reap();
    close(from_child_);
    from_child_ = -1;
    return reply;
  };
  if (!WriteAll(to_child_, request.dump() + "\n")) return died();

  auto end = std::chrono::steady_clock::now() + deadline;
  while (true) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      try {
        reply.body = nlohmann::json::parse(line);
        if (reply.body.is_object() && reply.body.value("exiting", false)) Stop(true);
        return reply;
      } catch (const nlohmann::json::exception&) {  // malformed, or a number out of range
        Stop(true);
        reply.kind = Reply::Kind::kDied;
        reply.detail = "worker wrote a malformed reply";
        return reply;
      }
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      Stop(true);
      reply.kind = Reply::Kind::kTimeout;
      reply.detail = "no reply within " + std::to_string(deadline.count()) + " ms; worker killed";
      return reply;
    }
    pollfd fd{from_child_, POLLIN, 0};
    int ready = poll(&fd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[65536];
    ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return died();
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace kforge::verify
