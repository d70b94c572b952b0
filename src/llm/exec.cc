// The exec provider: runs `/bin/sh -c CMD` per request with the canonical request JSON on stdin.
// stdout is a canonical response ({"message": ...}), an OpenAI or Anthropic reply body, or plain
// text (taken as the assistant's text).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "kforge/common/json_fields.h"
#include "kforge/common/subprocess.h"
#include "kforge/common/thread_pool.h"
#include "llm/providers.h"
#include "llm/wire.h"

namespace kforge::llm {
namespace {

/// What a teacher may print on each of stdout and stderr; one that prints more is killed.
constexpr size_t kMaxOutputBytes = size_t{64} << 20;

struct RunResult {
  int exit_status = -1;  // waitpid status
  bool timed_out = false;
  int over_cap = 0;  // the stream (1: stdout, 2: stderr) that passed kMaxOutputBytes, when one did
  std::string out, err;
  std::string spawn_error;  // "cannot start PROGRAM: why"
};

RunResult RunCommand(const std::string& command, const std::string& input, double timeout_s) {
  RunResult r;
  common::SpawnOptions options;
  options.stdin_mode = options.stdout_mode = options.stderr_mode = common::SpawnOptions::Stream::kPipe;
  options.unblock_signals = true;  // the pool's threads block SIGPIPE
  options.own_process_group = true;  // a timeout or a signal ends the teacher and all it started
  options.die_with_parent =
      true;  // and so does kforge's end, even by SIGKILL (the pool's threads outlive it)
  auto started = common::Subprocess::Spawn({"/bin/sh", "-c", command}, options);
  if (!started.ok()) {
    r.spawn_error = started.status().message();
    return r;
  }
  common::Subprocess& child = *started;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int in_fd = child.stdin_fd();
  fcntl(in_fd, F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (input.empty()) child.CloseStdin(), in_fd = -1;
  int out_fd = child.stdout_fd(), err_fd = child.stderr_fd();
  while (out_fd >= 0 || err_fd >= 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      r.exit_status = child.Kill();
      return r;
    }
    pollfd fds[3] = {{in_fd, POLLOUT, 0}, {out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    if (poll(fds, 3, static_cast<int>(std::min<long long>(left.count(), 1000))) < 0 && errno != EINTR) break;
    if (in_fd >= 0 && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // reader gone
      if (written == input.size()) child.CloseStdin(), in_fd = -1;
    }
    for (int k : {1, 2}) {
      int& fd = k == 1 ? out_fd : err_fd;
      if (fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        std::string& sink = k == 1 ? r.out : r.err;
        if (sink.size() + static_cast<size_t>(n) > kMaxOutputBytes) {
          r.over_cap = k;
          r.exit_status = child.Kill();
          return r;
        }
        sink.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        fd = -1;  // closed with `child`
      }
    }
  }
  child.CloseStdin();
  r.exit_status = child.Wait();
  return r;
}

Attempt ParseExecReply(const std::string& out, const Secrets& secrets) {
  Attempt a;
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_object() && j.contains("message")) {
    StatusOr<ChatResponse> r = ChatResponseFromJson(j);
    if (r.ok()) {
      a.response = std::move(*r);
      a.response.attempts = 0;
      a.response.from_cache = false;
    } else {
      a.response.error = {ErrorKind::kMalformedResponse, 0, SanitizeMessage(r.status().message(), secrets)};
    }
    return a;
  }
  if (j.is_object() && (j.contains("choices") || (j.contains("content") && j["content"].is_array()))) {
    HttpResult http;
    http.status = 200;
    http.body = out;
    return j.contains("choices") ? OpenAiAttempt(http, std::time(nullptr), secrets)
                                 : AnthropicAttempt(http, std::time(nullptr), secrets);
  }
  a.response.message = Message::Assistant(out);
  a.response.stop_reason = StopReason::kEndTurn;
  a.response.raw_stop_reason = "exec";
  return a;
}

/// The keys the child inherits: its messages (stderr, command line) must not show them.
Secrets KeysInEnvironment(const ProviderOptions& o) {
  Secrets keys;
  for (const std::string& var :
       {std::string("ANTHROPIC_API_KEY"), std::string("OPENAI_API_KEY"), o.api_key_env}) {
    if (var.empty()) continue;
    const char* value = std::getenv(var.c_str());
    if (value && *value) keys.emplace_back(value);
  }
  return keys;
}

class ExecProvider : public Provider {
 public:
  ExecProvider(std::string command, const ProviderOptions& o)
      : command_(std::move(command)),
        timeout_s_(o.timeout_s),
        secrets_(KeysInEnvironment(o)),
        pool_(static_cast<size_t>(std::max(1, o.max_in_flight)), [] {
          sigset_t pipe_set;  // a child that exits early must not kill us with SIGPIPE
          sigemptyset(&pipe_set);
          sigaddset(&pipe_set, SIGPIPE);
          pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
        }) {}
  ProviderKind Kind() const override { return ProviderKind::kExec; }
  std::string Identity() const override { return "exec " + command_; }
  std::string Redact(std::string text) const override { return RedactSecrets(std::move(text), secrets_); }

  void Send(const ChatRequest& request, AttemptCallback done) override {
    std::string input = common::JsonText(ToJson(request)) + "\n";
    pool_.Post([this, input = std::move(input), done = std::move(done)] {
      RunResult run = RunCommand(command_, input, timeout_s_);
      Attempt a;
      if (!run.spawn_error.empty()) {
        a.response.error = {ErrorKind::kExecFailed, 0,
                            SanitizeMessage("'" + command_ + "': " + run.spawn_error, secrets_)};
      } else if (run.over_cap) {
        a.response.error = {
            ErrorKind::kExecFailed, 0,
            SanitizeMessage("'" + command_ + "' printed more than " + std::to_string(kMaxOutputBytes >> 20) +
                                " MiB on " + (run.over_cap == 1 ? "stdout" : "stderr") + ": killed",
                            secrets_)};
      } else if (run.timed_out) {
        a.response.error = {
            ErrorKind::kExecFailed, 0,
            SanitizeMessage("'" + command_ + "' timed out after " + std::to_string(timeout_s_) + " s",
                            secrets_)};
      } else if (!WIFEXITED(run.exit_status) || WEXITSTATUS(run.exit_status) != 0) {
        std::string how = WIFEXITED(run.exit_status)
                              ? "exited with status " + std::to_string(WEXITSTATUS(run.exit_status))
                              : "killed by signal " + std::to_string(WTERMSIG(run.exit_status));
        // The whole stderr is masked before its tail is cut, so a key straddling the cut is caught.
        std::string err = std::move(run.err);
        MaskSecrets(err, secrets_);
        std::string tail = err.size() > 200 ? err.substr(err.size() - 200) : err;
        a.response.error = {ErrorKind::kExecFailed, 0,
                            SanitizeMessage("'" + command_ + "' " + how + ": " + tail, secrets_)};
      } else {
        a = ParseExecReply(run.out, secrets_);
      }
      done(std::move(a));
    });
  }

 private:
  std::string command_;
  double timeout_s_;
  Secrets secrets_;
  common::ThreadPool pool_;  // last member: joined before the rest is destroyed
};

}  // namespace

std::unique_ptr<Provider> MakeExecProvider(std::string command, const ProviderOptions& o) {
  return std::make_unique<ExecProvider>(std::move(command), o);
}

}  // namespace kforge::llm
