// posix_spawn with pipes, killing and reaping.
#include "kforge/common/subprocess.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

extern char** environ;

namespace kforge::common {
namespace {

/// Both ends of a pipe, closed unless released; close-on-exec, so that no other child inherits them.
struct Pipe {
  int fds[2] = {-1, -1};
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) close(fd);
  }
  int Take(int end) { return std::exchange(fds[end], -1); }
};

/// RAII for the spawn attributes and file actions.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
};

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

/// The process groups of running children started with own_process_group, for the signal handler
/// (a fixed table of atomics: a handler may not lock).
constexpr size_t kGroupSlots = 4096;
std::atomic<pid_t> g_groups[kGroupSlots];
constexpr int kGroupSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[std::size(kGroupSignals)];

void AddGroup(pid_t group) {
  for (std::atomic<pid_t>& slot : g_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, group)) return;
  }
}

void RemoveGroup(pid_t group) {
  for (std::atomic<pid_t>& slot : g_groups) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

/// Children in groups of their own do not get the terminal's SIGINT: kill their groups, then do what
/// the signal did before.
void KillGroupsOnSignal(int sig) {
  for (std::atomic<pid_t>& slot : g_groups)
    if (pid_t group = slot.load(); group > 0) kill(-group, SIGKILL);
  for (size_t i = 0; i < std::size(kGroupSignals); ++i) {
    if (kGroupSignals[i] != sig) continue;
    const struct sigaction& previous = g_previous[i];
    if (previous.sa_handler == SIG_IGN) return;
    if (previous.sa_handler != SIG_DFL && !(previous.sa_flags & SA_SIGINFO)) {
      previous.sa_handler(sig);
      return;
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallGroupKiller() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action = {};
    action.sa_handler = KillGroupsOnSignal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kGroupSignals); ++i)
      sigaction(kGroupSignals[i], &action, &g_previous[i]);
  });
}

/// The child ForwardSignals passes signals to; 0 when none.
volatile sig_atomic_t g_forward_to = 0;
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};  // then SIGPIPE, ignored

void ForwardSignal(int sig) {
  if (g_forward_to > 0) kill(static_cast<pid_t>(g_forward_to), sig);
}

bool LooksSecret(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  for (std::string_view suffix : {"_API_KEY", "APIKEY", "_TOKEN", "_SECRET", "_PASSWORD", "_ACCESS_KEY",
                                  "_KEY_ID", "_SECRET_KEY", "_CREDENTIALS"})
    if (name.size() >= suffix.size() && std::string_view(name).substr(name.size() - suffix.size()) == suffix)
      return true;
  return false;
}

/// The path PATH gives `program` (itself when it holds a '/'), or "" when none runs.
std::string SearchPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  const std::string folders = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= folders.size();) {
    const size_t end = std::min(folders.find(':', start), folders.size());
    const std::string folder = folders.substr(start, end - start);
    const std::string candidate = (folder.empty() ? "." : folder) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

/// What the vfork child of Spawn (die_with_parent) does before execve: async-signal-safe calls only, on
/// memory it shares with the parent until then.
struct ChildPlan {
  const char* path;
  char* const* argv;
  char* const* envp;
  int dup_from[4] = {-1, -1, -1, -1};  // the child's fds 0..3 from these, when >= 0
  bool null_fd[3] = {false, false, false};
  bool own_process_group = false;
  const sigset_t* mask = nullptr;  // the child's signal mask
  const std::vector<int>* default_signals = nullptr;
  pid_t parent = 0;
  volatile int exec_errno = 0;  // set by the child when execve failed
};

[[noreturn]] void RunChild(ChildPlan& plan) {
  // Handlers of the parent's are not the child's: back to the default, except what is ignored.
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) != 0) continue;
    const bool reset = current.sa_handler != SIG_IGN && current.sa_handler != SIG_DFL;
    bool named = false;
    for (int s : *plan.default_signals) named = named || s == sig;
    if (reset || named) signal(sig, SIG_DFL);
  }
  // The kernel sends SIGKILL when the thread that spawned us ends; a parent gone already is seen here.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != plan.parent) _exit(127);
  if (plan.own_process_group && setpgid(0, 0) != 0) _exit(127);
  for (int fd = 0; fd < 3; ++fd) {
    if (!plan.null_fd[fd]) continue;
    const int opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened < 0) _exit(127);
    if (opened != fd) dup2(opened, fd), close(opened);
  }
  for (int fd = 0; fd < 4; ++fd) {
    const int from = plan.dup_from[fd];
    if (from < 0) continue;
    if (from == fd) {
      fcntl(fd, F_SETFD, 0);
    } else if (dup2(from, fd) < 0) {
      _exit(127);
    }
  }
  if (plan.dup_from[3] >= 0) close_range(4, ~0U, CLOSE_RANGE_CLOEXEC);
  sigprocmask(SIG_SETMASK, plan.mask, nullptr);
  execve(plan.path, plan.argv, plan.envp);
  plan.exec_errno = errno;
  _exit(127);
}

}  // namespace

std::vector<std::string> EnvironmentWithoutSecrets() {
  std::vector<std::string> kept;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    size_t equals = text.find('=');
    if (equals == std::string::npos || LooksSecret(text.substr(0, equals))) continue;
    kept.push_back(std::move(text));
  }
  return kept;
}

std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides) {
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> merged;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text = *entry;
    const bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                      [&](const std::string& o) { return name_of(o) == name_of(text); });
    if (!replaced) merged.emplace_back(text);
  }
  merged.insert(merged.end(), overrides.begin(), overrides.end());
  return merged;
}

bool OnPath(const std::string& program) {
  const std::string path = SearchPath(program);
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

namespace {

using Stream = SpawnOptions::Stream;

/// The pipes `modes` ask for, and posix_spawn's plan for the child: its streams, fd 3 and its signals.
Status PrepareSpawn(const std::string& program, const SpawnOptions& options, const Stream (&modes)[3],
                    Pipe (&pipes)[3], SpawnSetup& setup) {
  for (int fd = 0; fd < 3; ++fd) {
    if (modes[fd] == Stream::kPipe) {
      if (pipe2(pipes[fd].fds, O_CLOEXEC) != 0)
        return Status::Unavailable("cannot start " + program + ": pipe: " + strerror(errno));
      // The child reads its stdin from the read end and writes its output to the write end.
      posix_spawn_file_actions_adddup2(&setup.actions, pipes[fd].fds[fd == 0 ? 0 : 1], fd);
    } else if (modes[fd] == Stream::kNull) {
      posix_spawn_file_actions_addopen(&setup.actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  if (options.fd3 >= 0) {
    posix_spawn_file_actions_adddup2(&setup.actions, options.fd3, 3);
    posix_spawn_file_actions_addclosefrom_np(&setup.actions, 4);
  }
  short flags = 0;
  if (options.unblock_signals) {
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&setup.attr, &none);
    flags |= POSIX_SPAWN_SETSIGMASK;
  }
  if (!options.default_signals.empty()) {
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int signal : options.default_signals) sigaddset(&defaults, signal);
    posix_spawnattr_setsigdefault(&setup.attr, &defaults);
    flags |= POSIX_SPAWN_SETSIGDEF;
  }
  if (options.own_process_group) {
    posix_spawnattr_setpgroup(&setup.attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
    InstallGroupKiller();
  }
  posix_spawnattr_setflags(&setup.attr, flags);
  return Status::Ok();
}

/// Starts `path` through vfork, the child doing only what RunChild does before execve: posix_spawn
/// cannot ask for PR_SET_PDEATHSIG. Returns 0, or the errno of the fork or of execve (the child reaped).
int SpawnDyingWithParent(const std::string& path, char** argv, char** envp, const SpawnOptions& options,
                         const Stream (&modes)[3], Pipe (&pipes)[3], pid_t& pid) {
  ChildPlan plan;
  plan.path = path.c_str();
  plan.argv = argv;
  plan.envp = envp;
  for (int fd = 0; fd < 3; ++fd) {
    if (modes[fd] == Stream::kPipe) plan.dup_from[fd] = pipes[fd].fds[fd == 0 ? 0 : 1];
    plan.null_fd[fd] = modes[fd] == Stream::kNull;
  }
  plan.dup_from[3] = options.fd3;
  plan.own_process_group = options.own_process_group;
  plan.default_signals = &options.default_signals;
  plan.parent = getpid();
  sigset_t all, before, child_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);  // no handler of ours runs in the child
  if (options.unblock_signals) {
    sigemptyset(&child_mask);
  } else {
    child_mask = before;
  }
  plan.mask = &child_mask;
  if (options.own_process_group) InstallGroupKiller();
  pid = vfork();
  if (pid == 0) RunChild(plan);
  const int rc = pid < 0 ? errno : plan.exec_errno;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid > 0 && rc != 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  return rc;
}

}  // namespace

StatusOr<Subprocess> Subprocess::Spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("cannot start a program without a name");
  const std::string& program = argv.front();
  const Stream modes[3] = {options.stdin_mode, options.stdout_mode, options.stderr_mode};
  Pipe pipes[3];
  SpawnSetup setup;
  KFORGE_RETURN_IF_ERROR(PrepareSpawn(program, options, modes, pipes, setup));

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  if (options.environment) {
    for (const std::string& e : *options.environment) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);
  }
  char** child_env = options.environment ? env.data() : environ;
  pid_t pid = -1;
  int rc = 0;
  if (options.die_with_parent) {
    const std::string path = options.search_path ? SearchPath(program) : program;
    if (path.empty()) return Status::Unavailable("cannot start " + program + ": " + strerror(ENOENT));
    rc = SpawnDyingWithParent(path, args.data(), child_env, options, modes, pipes, pid);
  } else {
    rc = options.search_path
             ? posix_spawnp(&pid, program.c_str(), &setup.actions, &setup.attr, args.data(), child_env)
             : posix_spawn(&pid, program.c_str(), &setup.actions, &setup.attr, args.data(), child_env);
  }
  if (rc != 0) return Status::Unavailable("cannot start " + program + ": " + strerror(rc));
  Subprocess child;
  child.pid_ = pid;
  child.own_group_ = options.own_process_group;
  if (child.own_group_) AddGroup(pid);
  child.stdin_fd_ = pipes[0].Take(1);
  child.stdout_fd_ = pipes[1].Take(0);
  child.stderr_fd_ = pipes[2].Take(0);
  return child;  // the child's ends close with `pipes`
}

Subprocess::~Subprocess() {
  if (running()) Kill();
  Release();
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      own_group_(std::exchange(other.own_group_, false)),
      stdin_fd_(std::exchange(other.stdin_fd_, -1)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)),
      stderr_fd_(std::exchange(other.stderr_fd_, -1)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (running()) Kill();
    Release();
    pid_ = std::exchange(other.pid_, -1);
    own_group_ = std::exchange(other.own_group_, false);
    stdin_fd_ = std::exchange(other.stdin_fd_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    stderr_fd_ = std::exchange(other.stderr_fd_, -1);
  }
  return *this;
}

void Subprocess::Release() {
  CloseStdin();
  CloseStdout();
  CloseStderr();
}

void Subprocess::CloseStdin() { CloseFd(stdin_fd_); }
void Subprocess::CloseStdout() { CloseFd(stdout_fd_); }
void Subprocess::CloseStderr() { CloseFd(stderr_fd_); }

int Subprocess::Wait() {
  if (pid_ <= 0) return -1;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (own_group_) {
    kill(-pid_, SIGKILL);  // what the child left running in its group ends with it
    RemoveGroup(pid_);
  }
  pid_ = -1;
  return r < 0 ? -1 : status;
}

std::optional<int> Subprocess::WaitFor(double seconds) {
  if (pid_ <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      if (own_group_) {
        kill(-pid_, SIGKILL);
        RemoveGroup(pid_);
      }
      pid_ = -1;
      return r < 0 ? -1 : status;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int Subprocess::Kill() {
  if (pid_ <= 0) return -1;
  kill(own_group_ ? -pid_ : pid_, SIGKILL);
  return Wait();
}

void Subprocess::ReadOutput(const OutputSink& sink) {
  int* ends[2] = {&stdout_fd_, &stderr_fd_};
  char buffer[65536];
  while (stdout_fd_ >= 0 || stderr_fd_ >= 0) {
    pollfd polled[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};  // poll skips -1
    if (poll(polled, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (*ends[k] < 0 || !(polled[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(*ends[k], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        CloseFd(*ends[k]);
        continue;
      }
      sink(k + 1, buffer, static_cast<size_t>(n));
    }
  }
  CloseStdout();
  CloseStderr();
}

ForwardSignals::ForwardSignals(pid_t child) {
  static_assert(std::size(kForwardedSignals) + 1 == sizeof(saved_) / sizeof(saved_[0]));
  g_forward_to = child;
  struct sigaction forward = {};
  forward.sa_handler = ForwardSignal;
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i)
    sigaction(kForwardedSignals[i], &forward, &saved_[i]);
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &saved_[std::size(kForwardedSignals)]);
}

ForwardSignals::~ForwardSignals() {
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i)
    sigaction(kForwardedSignals[i], &saved_[i], nullptr);
  sigaction(SIGPIPE, &saved_[std::size(kForwardedSignals)], nullptr);
  g_forward_to = 0;
}

void AdoptOrphans() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

int KillAdoptedOrphans() {
  int killed = 0;
  for (int round = 0; round < 100; ++round) {  // each round's victims may leave children of their own
    std::vector<pid_t> children;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
      std::ifstream in(task.path() / "children");
      for (long pid; in >> pid;) children.push_back(static_cast<pid_t>(pid));
    }
    if (children.empty()) break;
    for (pid_t pid : children) {
      kill(pid, SIGKILL);
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      ++killed;
    }
  }
  return killed;
}

std::string DescribeExit(int wait_status) {
  if (wait_status == -1) return "lost";
  if (WIFSIGNALED(wait_status)) {
    const char* name = sigabbrev_np(WTERMSIG(wait_status));
    return name != nullptr ? std::string("killed by SIG") + name
                           : "killed by signal " + std::to_string(WTERMSIG(wait_status));
  }
  return "exit code " + std::to_string(WEXITSTATUS(wait_status));
}

}  // namespace kforge::common
