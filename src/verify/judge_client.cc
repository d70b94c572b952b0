// `kforge verify --server`: solutions sent to a judge server, verdicts read back in order.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "kforge/common/json_fields.h"
#include "kforge/verify/judge_server.h"
#include "verify/judge_wire.h"

namespace kforge::verify {

using nlohmann::json;

struct JudgeConnection::Impl {
  struct Waiting {
    std::string label;
    uint64_t seed;
    std::promise<Judged> promise;
  };

  int fd = -1;
  std::mutex mu;  // guards `waiting`, `lost` and writes to fd
  std::deque<Waiting> waiting;
  std::string lost;  // why the connection ended, once it has
  std::thread reader;

  ~Impl() {
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    if (reader.joinable()) reader.join();
    if (fd >= 0) ::close(fd);
  }

  /// Answers every waiting solution in order; on a lost connection, with a harness_error each.
  void ReadReplies(LineReader lines) {
    while (true) {
      auto line = lines.Next();
      std::string problem;
      std::optional<Judged> judged;
      if (!line.ok()) {
        problem = line.status().message();
      } else if (!*line) {
        problem = "the server closed the connection";
      } else if (auto parsed = JudgedFromJson(json::parse(**line, nullptr, false)); !parsed.ok()) {
        problem = "an unreadable reply: " + parsed.status().message();
      } else {
        judged = std::move(*parsed);
      }
      std::lock_guard<std::mutex> lock(mu);
      if (judged && !waiting.empty()) {
        waiting.front().promise.set_value(std::move(*judged));
        waiting.pop_front();
        continue;
      }
      if (problem.empty()) problem = "a reply nothing was waiting for";
      lost = "judge server: " + problem;
      for (Waiting& w : waiting) w.promise.set_value(HarnessFailure(w.label, w.seed, lost));
      waiting.clear();
      return;
    }
  }
};

JudgeConnection::JudgeConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JudgeConnection::~JudgeConnection() = default;

StatusOr<std::unique_ptr<JudgeConnection>> JudgeConnection::Open(const std::filesystem::path& socket,
                                                                 const VerifyOptions& options) {
  const std::string path = socket.string();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    return Status::InvalidArgument("--server " + path + ": not a socket path");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  auto impl = std::make_unique<Impl>();
  impl->fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (impl->fd < 0 || ::connect(impl->fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return Status::Unavailable("--server " + path + ": no judge server there (" + std::strerror(errno) +
                               "); start one with kforge serve --socket " + path);
  json hello = {{"protocol", kJudgeProtocol}, {"fingerprint", JudgeFingerprint(options)}};
  KFORGE_RETURN_IF_ERROR(WriteLine(impl->fd, hello.dump()));
  pollfd pfd{impl->fd, POLLIN, 0};
  if (::poll(&pfd, 1, 30000) <= 0) return Status::Unavailable("--server " + path + ": no answer to the hello in 30 s");
  LineReader lines(impl->fd);
  auto answer = lines.Next();
  if (!answer.ok() || !*answer) return Status::Unavailable("--server " + path + ": the server hung up");
  json reply = json::parse(**answer, nullptr, false);
  if (!reply.is_object() || !reply.value("ok", false))
    return Status::InvalidArgument("--server " + path + ": " +
                                   (reply.is_object() ? reply.value("message", "refused") : "an unreadable answer"));
  Impl* raw = impl.get();
  impl->reader = std::thread([raw, lines = std::move(lines)]() mutable { raw->ReadReplies(std::move(lines)); });
  return std::unique_ptr<JudgeConnection>(new JudgeConnection(std::move(impl)));
}

std::future<Judged> JudgeConnection::Submit(SolutionInput input, uint64_t seed) {
  const std::string line = common::JsonText(RequestToJson(input, seed));
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Waiting& w = impl_->waiting.emplace_back();
  w.label = input.label;
  w.seed = seed;
  std::future<Judged> result = w.promise.get_future();
  if (!impl_->lost.empty()) {
    w.promise.set_value(HarnessFailure(w.label, seed, impl_->lost));
    impl_->waiting.pop_back();
  } else if (!WriteLine(impl_->fd, line).ok()) {
    ::shutdown(impl_->fd, SHUT_RDWR);  // the reader answers everything waiting, this one included
  }
  return result;
}

}  // namespace kforge::verify
