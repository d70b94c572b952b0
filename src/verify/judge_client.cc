// `kforge verify --server`: solutions sent to a judge server, verdicts read back in order.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "kforge/common/json_fields.h"
#include "kforge/verify/judge_server.h"
#include "verify/judge_wire.h"

namespace kforge::verify {

using nlohmann::json;

namespace {

/// "0.7 s", "310 s".
std::string SecondsText(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms.count() % 1000 == 0 ? "%.0f s" : "%.1f s", ms.count() / 1000.0);
  return text;
}

}  // namespace

std::chrono::milliseconds ReplyTimeout(const VerifyOptions& o) {
  return o.compile_timeout + o.check_allowance + o.kernel_timeout * (o.trials + 8) + std::chrono::seconds(30);
}

struct JudgeServerClient::Impl {
  struct Waiting {
    std::string label;
    uint64_t seed;
    std::promise<Judged> promise;
    std::chrono::steady_clock::time_point sent;
  };

  int fd = -1;
  std::chrono::milliseconds reply_timeout{0};
  std::mutex write_mu;  // held while a request is written, so that requests go out in `waiting`'s order
  std::mutex mu;        // guards `waiting`, `lost` and `last_reply`
  std::deque<Waiting> waiting;
  std::string lost;  // why the connection ended, once it has
  std::chrono::steady_clock::time_point last_reply;
  std::thread reader;

  ~Impl() {
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    if (reader.joinable()) reader.join();
    if (fd >= 0) ::close(fd);
  }

  /// Why to stop waiting for the next reply: a solution has waited reply_timeout since it was sent
  /// and since the last reply came. "" while nothing waits or there is time left.
  std::string Overdue() {
    std::lock_guard<std::mutex> lock(mu);
    if (waiting.empty()) return "";
    const auto since = std::max(waiting.front().sent, last_reply);
    if (std::chrono::steady_clock::now() - since < reply_timeout) return "";
    return "no verdict in " + SecondsText(reply_timeout) +
           " (the compile and check timeouts, plus 30 s); the server is stopped or stuck";
  }

  /// Answers every waiting solution in order; on a lost connection, with a harness_error each.
  void ReadReplies(LineReader lines) {
    while (true) {
      auto line = lines.Next([this] { return Overdue(); });
      std::string problem;
      std::optional<Judged> judged;
      if (!line.ok()) {
        problem = line.status().message();
      } else if (!*line) {
        problem = "the server closed the connection";
      } else if (auto reply = common::ParseJson(**line, "reply"); !reply.ok()) {
        problem = "an unreadable reply: " + reply.status().message();
      } else if (auto parsed = JudgedFromJson(*reply); !parsed.ok()) {
        problem = "an unreadable reply: " + parsed.status().message();
      } else {
        judged = std::move(*parsed);
      }
      std::lock_guard<std::mutex> lock(mu);
      if (judged && !waiting.empty()) {
        if (judged->verdict.solution.empty()) judged->verdict.solution = waiting.front().label;
        waiting.front().promise.set_value(std::move(*judged));
        waiting.pop_front();
        last_reply = std::chrono::steady_clock::now();
        continue;
      }
      if (problem.empty()) problem = "a reply nothing was waiting for";
      lost = "judge server: " + problem;
      for (Waiting& w : waiting) w.promise.set_value(HarnessFailure(w.label, w.seed, lost));
      waiting.clear();
      ::shutdown(fd, SHUT_RDWR);  // a writer blocked on a stopped server returns
      return;
    }
  }
};

JudgeServerClient::JudgeServerClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JudgeServerClient::~JudgeServerClient() = default;

StatusOr<std::unique_ptr<JudgeServerClient>> JudgeServerClient::Open(const std::filesystem::path& socket,
                                                                 const VerifyOptions& options,
                                                                 std::optional<JudgeServerTimeouts> timeouts) {
  const JudgeServerTimeouts limits = timeouts.value_or(JudgeServerTimeouts{std::chrono::seconds(30), ReplyTimeout(options)});
  const std::string path = socket.string();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    return Status::InvalidArgument("--server " + path + ": not a socket path");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  auto impl = std::make_unique<Impl>();
  impl->reply_timeout = limits.reply;
  const auto hello_by = std::chrono::steady_clock::now() + limits.hello;
  const std::string no_answer =
      "--server " + path + ": no answer to the hello in " + SecondsText(limits.hello) + "; is the server stopped?";
  // Non-blocking, so that a server that stopped accepting (its backlog full) cannot hold connect().
  impl->fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int connected = -1;
  while (impl->fd >= 0 && (connected = ::connect(impl->fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr))) != 0 &&
         errno == EAGAIN && std::chrono::steady_clock::now() < hello_by)
    usleep(20000);
  if (impl->fd >= 0 && connected != 0 && errno == EAGAIN) return Status::Unavailable(no_answer);
  if (impl->fd < 0 || connected != 0)
    return Status::Unavailable("--server " + path + ": no judge server there (" + std::strerror(errno) +
                               "); start one with kforge serve --socket " + path);
  ::fcntl(impl->fd, F_SETFL, ::fcntl(impl->fd, F_GETFL) & ~O_NONBLOCK);
  // A server that turns the client away may have closed already: its answer is still read.
  Status sent = WriteLine(impl->fd, HelloToJson(JudgeFingerprint(options)).dump());
  LineReader lines(impl->fd);
  auto answer = lines.Next([&] { return std::chrono::steady_clock::now() >= hello_by ? no_answer : std::string(); });
  if (!answer.ok()) return Status::Unavailable(answer.status().message());
  if (!*answer) return Status::Unavailable("--server " + path + ": the server hung up" + (sent.ok() ? "" : " (" + sent.message() + ")"));
  json reply = json::parse(**answer, nullptr, false);
  if (!reply.is_object() || !reply.value("ok", false))
    return Status::InvalidArgument("--server " + path + ": " +
                                   (reply.is_object() && reply.contains("message") && reply["message"].is_string()
                                        ? reply["message"].get<std::string>()
                                        : std::string("an unreadable answer")));
  Impl* raw = impl.get();
  impl->last_reply = std::chrono::steady_clock::now();
  impl->reader = std::thread([raw, lines = std::move(lines)]() mutable { raw->ReadReplies(std::move(lines)); });
  return std::unique_ptr<JudgeServerClient>(new JudgeServerClient(std::move(impl)));
}

std::future<Judged> JudgeServerClient::Submit(SolutionInput input, uint64_t seed) {
  const std::string line = common::JsonText(RequestToJson(input, seed));
  std::lock_guard<std::mutex> writing(impl_->write_mu);
  std::future<Judged> result;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    Impl::Waiting& w = impl_->waiting.emplace_back();
    w.label = input.label;
    w.seed = seed;
    w.sent = std::chrono::steady_clock::now();
    result = w.promise.get_future();
    if (!impl_->lost.empty()) {
      w.promise.set_value(HarnessFailure(w.label, seed, impl_->lost));
      impl_->waiting.pop_back();
      return result;
    }
  }
  // Not under `mu`: the reader goes on answering while a server that reads slowly holds this write.
  if (!WriteLine(impl_->fd, line).ok()) ::shutdown(impl_->fd, SHUT_RDWR);  // the reader answers what waits
  return result;
}

}  // namespace kforge::verify
