// Child processes, written once: posix_spawn (never fork, which is unsafe once CUDA or threads are
// up) with pipes for the streams the caller wants, killing and reaping, and how a child ended.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::common {

struct SpawnOptions {
  enum class Stream {
    kInherit,  // the parent's
    kPipe,     // a pipe whose other end the parent holds (Subprocess::stdin_fd() ...)
    kNull,     // /dev/null
  };
  /// The child's standard streams. Default: the parent's.
  Stream stdin_mode = Stream::kInherit;
  Stream stdout_mode = Stream::kInherit;
  Stream stderr_mode = Stream::kInherit;
  /// A descriptor the child gets as its fd 3, every descriptor above 3 closed. Default none (-1).
  int fd3 = -1;
  /// Start the child with no signal blocked (the parent's threads may block some, e.g. SIGPIPE).
  /// Default false: the child inherits the spawning thread's mask.
  bool unblock_signals = false;
  /// Signals set back to their default action in the child. Default none.
  std::vector<int> default_signals;
  /// Look argv[0] up in PATH. Default false: argv[0] is a path.
  bool search_path = false;
  /// Start the child in a process group of its own: Kill() and the SIGINT/SIGTERM/SIGHUP handler
  /// installed on the first such spawn end the child and everything it started. Default false.
  bool own_process_group = false;
  /// The child gets SIGKILL when the parent dies, even by SIGKILL (PR_SET_PDEATHSIG), rather than
  /// running on unowned. The kernel sends it when the *thread* that spawned the child ends: spawn
  /// from a thread that outlives the child. What the child starts is not covered. Default false.
  bool die_with_parent = false;
  /// The child's environment as NAME=VALUE entries; default (nullopt): the parent's.
  std::optional<std::vector<std::string>> environment;
};

/// The parent's environment without what looks like a credential: variables whose name ends (in any
/// case) in _API_KEY, APIKEY, _TOKEN, _SECRET, _SECRET_KEY, _PASSWORD, _ACCESS_KEY, _KEY_ID or
/// _CREDENTIALS.
std::vector<std::string> EnvironmentWithoutSecrets();

/// The parent's environment with `overrides` ("NAME=value") set on top: each replaces the parent's
/// variable of its name or is added after them.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides);

/// Whether `program` runs: an executable file on PATH, or at that path when it holds a '/'. An empty
/// folder in PATH is the current one.
bool OnPath(const std::string& program);

/// One child process and the parent's ends of its pipes. Move-only; destroying one that is still
/// running kills and reaps it.
class Subprocess {
 public:
  /// Starts argv[0] with `argv` and the parent's environment. Fails (Unavailable, "cannot start
  /// PROGRAM: why") when the program cannot be run or a pipe cannot be made.
  static StatusOr<Subprocess> Spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

  Subprocess() = default;
  ~Subprocess();
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /// The child's pid while it has not been reaped, else -1.
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  /// The parent's ends of the pipes (write to stdin, read from stdout and stderr); -1 when that
  /// stream is not a pipe or was closed.
  int stdin_fd() const { return stdin_fd_; }
  int stdout_fd() const { return stdout_fd_; }
  int stderr_fd() const { return stderr_fd_; }
  /// Closes one of the parent's ends (closing stdin is the child's end of input).
  void CloseStdin();
  void CloseStdout();
  void CloseStderr();

  /// Waits for the child to exit and reaps it (with its own process group, whatever it left running
  /// there is killed). Returns its wait status, or -1 when there was no child to wait for; see
  /// DescribeExit.
  int Wait();
  /// Wait() for at most `seconds`; nullopt when the child is still running then.
  std::optional<int> WaitFor(double seconds);
  /// Sends SIGKILL (to its whole process group when it has one of its own) and reaps the child;
  /// returns its wait status as Wait does.
  int Kill();

  /// Reads the stdout and stderr pipes (those that are pipes) until both are closed by the child,
  /// handing each piece to `sink` with the stream it came from (1: stdout, 2: stderr), then closes
  /// the parent's ends. Does not wait for the child.
  using OutputSink = std::function<void(int stream, const char* data, size_t size)>;
  void ReadOutput(const OutputSink& sink);

 private:
  void Release();

  pid_t pid_ = -1;
  bool own_group_ = false;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
};

/// While one lives, SIGINT, SIGTERM and SIGHUP sent to this process go to `child` instead (a child in
/// a process group of its own does not get the terminal's), so that the parent outlives the child and
/// sees how it ended; SIGPIPE is ignored. The handlers before it come back when it is destroyed. One
/// at a time.
class ForwardSignals {
 public:
  explicit ForwardSignals(pid_t child);
  ~ForwardSignals();
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

 private:
  struct sigaction saved_[4];  // SIGINT's, SIGTERM's, SIGHUP's and SIGPIPE's handlers before
};

/// Makes this process the reaper of its orphaned descendants (PR_SET_CHILD_SUBREAPER): what a child
/// starts and leaves behind, even in a session of its own, becomes this process's child, for
/// KillAdoptedOrphans. Call it before spawning, from a process that has no other children to keep.
void AdoptOrphans();
/// SIGKILLs and reaps every child of this process (the orphans AdoptOrphans gave it, and their own
/// children as they are orphaned in turn); how many it ended.
int KillAdoptedOrphans();

/// How a child ended, from a wait status: "exit code 3", "killed by SIGSEGV" ("killed by signal 40"
/// for a signal without a name); "lost" for -1 (Wait found no child).
std::string DescribeExit(int wait_status);

}  // namespace kforge::common
