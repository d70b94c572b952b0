// posix_spawn with pipes, for the launch's probes and its trainer.
#include "finetune/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>

extern char** environ;

namespace kforge::finetune {
namespace {

constexpr size_t kCaptureLimit = size_t{16} << 20;
constexpr size_t kTailBytes = size_t{64} << 10;
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

volatile sig_atomic_t g_child = 0;

void ForwardSignal(int sig) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal or a full disk must not stop the trainer
    data += n;
    size -= static_cast<size_t>(n);
  }
}

struct Child {
  pid_t pid = -1;
  int out = -1;  ///< read end of its stdout
  int err = -1;  ///< read end of its stderr, when piped
};

struct SpawnSpec {
  bool pipe_stderr = false;
  bool own_group = false;
  bool null_stdin = false;
  std::vector<std::string> extra_env;
};

StatusOr<Child> Spawn(const std::vector<std::string>& argv, const SpawnSpec& spec) {
  if (argv.empty()) return Status::InvalidArgument("no command");
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0)
    return Status::Unavailable(std::string("pipe: ") + std::strerror(errno));
  if (spec.pipe_stderr && pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]), close(out_pipe[1]);
    return Status::Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  if (spec.pipe_stderr) posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  if (spec.null_stdin) posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : kForwarded) sigaddset(&defaults, sig);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);

  std::vector<std::string> args = argv;
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  arg_ptrs.push_back(nullptr);
  std::vector<std::string> extra = spec.extra_env;
  std::vector<char*> env_ptrs;
  for (char** e = environ; *e != nullptr; ++e) {
    bool replaced = false;
    for (const std::string& var : extra)
      replaced = replaced || std::strncmp(*e, var.c_str(), var.find('=') + 1) == 0;
    if (!replaced) env_ptrs.push_back(*e);
  }
  for (std::string& var : extra) env_ptrs.push_back(var.data());
  env_ptrs.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, arg_ptrs[0], &actions, &attr, arg_ptrs.data(), env_ptrs.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out_pipe[1]);
  if (spec.pipe_stderr) close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    if (spec.pipe_stderr) close(err_pipe[0]);
    return Status::Unavailable("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  return Child{pid, out_pipe[0], spec.pipe_stderr ? err_pipe[0] : -1};
}

/// Reads the child's stdout and stderr until both close, handing each piece to `sink` with the
/// stream it came from (STDOUT_FILENO or STDERR_FILENO); closes both.
void Pump(Child& child, const std::function<void(int, const char*, size_t)>& sink) {
  int fds[2] = {child.out, child.err};
  char buffer[65536];
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd polled[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    if (poll(polled, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (fds[k] < 0 || !(polled[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[k], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[k]);
        fds[k] = -1;
        continue;
      }
      sink(k == 0 ? STDOUT_FILENO : STDERR_FILENO, buffer, static_cast<size_t>(n));
    }
  }
  for (int fd : fds)
    if (fd >= 0) close(fd);
  child.out = child.err = -1;
}

ProcessResult Reap(pid_t pid, std::string out) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessResult result;
  result.out = std::move(out);
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

/// Installs ForwardSignal for kForwarded and ignores SIGPIPE; restores the old handlers when gone.
class ForwardSignals {
 public:
  explicit ForwardSignals(pid_t child) {
    g_child = child;
    struct sigaction forward = {};
    forward.sa_handler = ForwardSignal;
    sigemptyset(&forward.sa_mask);
    for (size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &forward, &saved_[i]);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &saved_pipe_);
  }
  ~ForwardSignals() {
    for (size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &saved_[i], nullptr);
    sigaction(SIGPIPE, &saved_pipe_, nullptr);
    g_child = 0;
  }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

 private:
  struct sigaction saved_[std::size(kForwarded)];
  struct sigaction saved_pipe_;
};

}  // namespace

StatusOr<ProcessResult> Capture(const std::vector<std::string>& argv) {
  SpawnSpec spec;
  spec.pipe_stderr = true;
  spec.null_stdin = true;
  KFORGE_ASSIGN_OR_RETURN(Child child, Spawn(argv, spec));
  std::string out, err;
  Pump(child, [&](int stream, const char* data, size_t size) {
    std::string& sink = stream == STDOUT_FILENO ? out : err;
    if (sink.size() < kCaptureLimit) sink.append(data, size);
  });
  ProcessResult result = Reap(child.pid, std::move(out));
  result.err = std::move(err);
  return result;
}

StatusOr<ProcessResult> RunLogged(const std::vector<std::string>& argv, const std::filesystem::path& log,
                                  const std::vector<std::string>& environment) {
  int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::IoError(log.string() + ": " + std::strerror(errno));
  SpawnSpec spec;
  spec.pipe_stderr = true;
  spec.own_group = true;
  spec.null_stdin = true;
  spec.extra_env = environment;
  spec.extra_env.push_back("PYTHONUNBUFFERED=1");
  auto child = Spawn(argv, spec);
  if (!child.ok()) {
    close(log_fd);
    return child.status();
  }
  ForwardSignals forward(child->pid);
  std::string tail;
  Pump(*child, [&](int stream, const char* data, size_t size) {
    WriteAll(stream, data, size);
    WriteAll(log_fd, data, size);
    if (stream != STDOUT_FILENO) return;
    tail.append(data, size);
    if (tail.size() > 2 * kTailBytes) tail.erase(0, tail.size() - kTailBytes);
  });
  close(log_fd);
  if (tail.size() > kTailBytes) tail.erase(0, tail.size() - kTailBytes);
  return Reap(child->pid, std::move(tail));
}

bool OnPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, end - start);
    if (access(((dir.empty() ? "." : dir) + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace kforge::finetune
