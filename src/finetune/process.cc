// The launch's probes and its trainer, run through common::Subprocess.
#include "finetune/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kforge/common/subprocess.h"

namespace kforge::finetune {
namespace {

constexpr size_t kCaptureLimit = size_t{16} << 20;
constexpr size_t kTailBytes = size_t{64} << 10;

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal or a full disk must not stop the trainer
    data += n;
    size -= static_cast<size_t>(n);
  }
}

/// What every child of a launch gets: argv[0] looked up on PATH, stdin from /dev/null, stdout and
/// stderr piped, no signal blocked, and the default actions of the signals kforge handles.
common::SpawnOptions LaunchSpawnOptions() {
  common::SpawnOptions options;
  options.search_path = true;
  options.stdin_mode = common::SpawnOptions::Stream::kNull;
  options.stdout_mode = options.stderr_mode = common::SpawnOptions::Stream::kPipe;
  options.unblock_signals = true;
  options.default_signals = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  return options;
}

/// Starts `argv`; a failure reads "cannot run PROGRAM: why", as finetune-launch has always said.
StatusOr<common::Subprocess> Start(const std::vector<std::string>& argv, const common::SpawnOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("no command");
  StatusOr<common::Subprocess> child = common::Subprocess::Spawn(argv, options);
  if (child.ok()) return child;
  const std::string started = "cannot start " + argv[0];
  std::string message = child.status().message();
  if (message.rfind(started, 0) == 0) message = "cannot run " + argv[0] + message.substr(started.size());
  return Status::Unavailable(message);
}

/// Waits for `child`; its exit code (128 + the signal when a signal ended it) and `out`.
ProcessResult Reap(common::Subprocess& child, std::string out) {
  const int status = child.Wait();
  ProcessResult result;
  result.out = std::move(out);
  if (status != -1 && WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  } else if (status != -1) {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace

StatusOr<ProcessResult> Capture(const std::vector<std::string>& argv) {
  KFORGE_ASSIGN_OR_RETURN(common::Subprocess child, Start(argv, LaunchSpawnOptions()));
  std::string out, err;
  child.ReadOutput([&](int stream, const char* data, size_t size) {
    std::string& sink = stream == STDOUT_FILENO ? out : err;
    if (sink.size() < kCaptureLimit) sink.append(data, size);
  });
  ProcessResult result = Reap(child, std::move(out));
  result.err = std::move(err);
  return result;
}

StatusOr<ProcessResult> RunLogged(const std::vector<std::string>& argv, const std::filesystem::path& log,
                                  const std::vector<std::string>& environment) {
  int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::IoError(log.string() + ": " + std::strerror(errno));
  common::SpawnOptions options = LaunchSpawnOptions();
  options.own_process_group = true;
  std::vector<std::string> overrides = environment;
  overrides.push_back("PYTHONUNBUFFERED=1");
  options.environment = common::EnvironmentWith(overrides);
  StatusOr<common::Subprocess> child = Start(argv, options);
  if (!child.ok()) {
    close(log_fd);
    return child.status();
  }
  common::ForwardSignals forward(child->pid());
  std::string tail;
  child->ReadOutput([&](int stream, const char* data, size_t size) {
    WriteAll(stream, data, size);
    WriteAll(log_fd, data, size);
    if (stream != STDOUT_FILENO) return;
    tail.append(data, size);
    if (tail.size() > 2 * kTailBytes) tail.erase(0, tail.size() - kTailBytes);
  });
  close(log_fd);
  if (tail.size() > kTailBytes) tail.erase(0, tail.size() - kTailBytes);
  return Reap(*child, std::move(tail));
}

}  // namespace kforge::finetune
