// `kforge serve`: a VerifyService behind a Unix socket, for clients of the same user.
#include "kforge/verify/judge_server.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/library_ops.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <thread>

#include "verify/judge_wire.h"

namespace kforge::verify {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

/// How long a new connection may take to say hello.
constexpr auto kHelloWait = std::chrono::seconds(10);
/// Bytes of one connection's requests held unanswered before the server stops reading from it.
constexpr size_t kMaxPendingBytes = 2 * kMaxRequestLine;

std::atomic<bool> g_stop{false};
void OnStopSignal(int) { g_stop = true; }

/// The socket address of `path`, or why it cannot be one.
StatusOr<sockaddr_un> AddressOf(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string text = path.string();
  if (text.empty() || text.size() >= sizeof(addr.sun_path))
    return Status::InvalidArgument("--socket " + text + ": a socket path must be 1 to " +
                                   std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  std::memcpy(addr.sun_path, text.c_str(), text.size() + 1);
  return addr;
}

/// Keys whose values differ between two fingerprints, as "key: server X, client Y" (a client's
/// values and keys cut short).
std::string Differences(const json& server, const json& client) {
  auto text = [](const json& value) { return common::JsonText(value).substr(0, 120); };
  std::string out;
  for (const auto& [key, value] : server.items()) {
    const json theirs = client.contains(key) ? client[key] : json();
    if (theirs != value) out += (out.empty() ? "" : "; ") + key + ": server " + text(value) + ", client " + text(theirs);
  }
  for (const auto& [key, value] : client.items())
    if (!server.contains(key)) out += (out.empty() ? "" : "; ") + common::KeyText(key.substr(0, 60)) + ": unknown to the server";
  if (out.size() > 2000) out = out.substr(0, 2000) + "...";
  return out;
}

/// What the connections share: the service, the limits, and when the server was last busy.
struct Shared {
  VerifyService& service;
  const json fingerprint;
  const ServeOptions& options;
  std::mutex mu;  // guards the two below
  Clock::time_point last_activity = Clock::now();
  int in_flight = 0;  ///< requests read and not yet answered, over every connection

  void Touch(int in_flight_change = 0) {
    std::lock_guard<std::mutex> lock(mu);
    last_activity = Clock::now();
    in_flight += in_flight_change;
  }
};

/// A verdict already decided (a request refused), as the future a submitted one gives.
std::future<Judged> Refused(const std::string& label, uint64_t seed, const std::string& message) {
  std::promise<Judged> refused;
  refused.set_value(HarnessFailure(label, seed, message));
  return refused.get_future();
}

/// The verdict of one request line (or of why the line could not be read), submitted to the service.
std::future<Judged> Submit(VerifyService& service, const StatusOr<std::optional<std::string>>& line,
                           int line_number) {
  const std::string where = "judge server: request line " + std::to_string(line_number) + ": ";
  if (!line.ok()) return Refused("", 0, where + line.status().message() + " (the server's limit for a request)");
  StatusOr<json> request = common::ParseJson(**line, "request");
  StatusOr<std::pair<SolutionInput, uint64_t>> parsed =
      request.ok() ? RequestFromJson(*request) : StatusOr<std::pair<SolutionInput, uint64_t>>(request.status());
  if (!parsed.ok()) {
    std::string label;
    if (request.ok() && request->is_object() && request->contains("label") && (*request)["label"].is_string())
      label = (*request)["label"].get<std::string>();
    return Refused(label, 0, where + parsed.status().message());
  }
  return service.Submit(std::move(parsed->first), parsed->second);
}

/// One client: its hello, then its requests judged and answered in order. Nothing a client sends
/// ends more than its own connection.
void Serve(Shared& shared, int fd) {
  LineReader reader(fd, kMaxRequestLine);
  const auto hello_by = Clock::now() + kHelloWait;
  auto hello_line = reader.Next([&] { return Clock::now() >= hello_by ? std::string("no hello") : std::string(); });
  if (!hello_line.ok() || !*hello_line) return;
  StatusOr<json> hello = common::ParseJson(**hello_line, "hello");
  StatusOr<json> fingerprint = hello.ok() ? HelloFromJson(*hello) : StatusOr<json>(hello.status());
  std::string refusal;
  if (!fingerprint.ok())
    refusal = std::string("expected a hello for protocol ") + kJudgeProtocol + " (" + fingerprint.status().message() + ")";
  else if (std::string diff = Differences(shared.fingerprint, *fingerprint); !diff.empty())
    refusal = "options differ from the server's (" + diff + "); start a server with the same options";
  if (!WriteLine(fd, json{{"ok", refusal.empty()}, {"message", refusal}}.dump()).ok() || !refusal.empty()) return;

  struct Pending {
    std::future<Judged> judged;
    size_t bytes;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> pending;
  size_t pending_bytes = 0;  // of the requests read and not yet answered: reading waits above the limit
  bool reading = true, writing = true;
  std::thread read_thread([&] {
    try {
      for (int line_number = 2;; ++line_number) {
        auto line = reader.Next();
        if (line.ok() && !*line) break;
        if (!line.ok() && line.status().code() != Status::Code::kResourceExhausted) break;
        const size_t bytes = line.ok() ? (*line)->size() : 0;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return !writing || pending_bytes == 0 || pending_bytes + bytes <= kMaxPendingBytes; });
          if (!writing) break;
        }
        shared.Touch(+1);
        std::future<Judged> judged;
        try {
          judged = Submit(shared.service, line, line_number);
        } catch (const std::exception& e) {
          judged = Refused("", 0, std::string("judge server: request line ") + std::to_string(line_number) + ": " + e.what());
        }
        std::lock_guard<std::mutex> lock(mu);
        pending.push_back({std::move(judged), bytes});
        pending_bytes += bytes;
        cv.notify_all();
      }
    } catch (const std::exception&) {  // only resources running out: this connection ends
    }
    std::lock_guard<std::mutex> lock(mu);
    reading = false;
    cv.notify_all();
  });
  bool writable = true;
  while (true) {
    Pending next;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !pending.empty() || !reading; });
      if (pending.empty()) break;
      next = std::move(pending.front());
      pending.pop_front();
    }
    std::string reply;
    try {
      reply = common::JsonText(JudgedToJson(next.judged.get()));  // judged even when the client left
    } catch (const std::exception& e) {
      reply = common::JsonText(JudgedToJson(HarnessFailure("", 0, std::string("judge server: ") + e.what())));
    }
    if (writable && !WriteLine(fd, reply).ok()) {
      writable = false;
      ::shutdown(fd, SHUT_RDWR);  // the reader stops too
    }
    shared.Touch(-1);
    std::lock_guard<std::mutex> lock(mu);
    pending_bytes -= next.bytes;
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    writing = false;
    cv.notify_all();
  }
  read_thread.join();
}

/// Tells a client it was not let in, without waiting on it, and closes its connection.
void Turn(int fd, const std::string& why) {
  const std::string line = json{{"ok", false}, {"message", why}}.dump() + "\n";
  (void)::send(fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::close(fd);
}

/// A listening socket at `path`: a stale socket there is replaced, a live one or another file refused.
StatusOr<int> Listen(const sockaddr_un& addr, const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return Status::InvalidArgument("--socket " + path + ": exists and is not a socket");
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(probe);
    if (live) return Status::InvalidArgument("--socket " + path + ": a judge server already listens there");
    ::unlink(path.c_str());  // stale: its server is gone
  }
  int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
  const mode_t old_mask = ::umask(0177);  // owner-only from the moment it exists
  const int bound = ::bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  ::umask(old_mask);
  if (bound != 0 || ::listen(listener, 64) != 0) {
    Status failed = Status::IoError("--socket " + path + ": " + std::strerror(errno));
    ::close(listener);
    return failed;
  }
  ::chmod(path.c_str(), 0600);
  return listener;
}

}  // namespace

nlohmann::json JudgeFingerprint(const VerifyOptions& o) {
  std::error_code ec;
  std::filesystem::path root = std::filesystem::weakly_canonical(std::filesystem::absolute(o.tasks_root), ec);
  return {{"tasks_root", (ec ? o.tasks_root : root).string()},
          {"task", o.task},
          {"trials", o.trials},
          {"compile_only", o.compile_only},
          {"gpu_check", o.gpu_check},
          {"arch", o.arch},
          {"op_policy", std::string(common::kOpPolicyNames.Name(o.op_policy))},
          {"kernel_timeout_ms", o.kernel_timeout.count()},
          {"check_allowance_ms", o.check_allowance.count()},
          {"compile_timeout_ms", o.compile_timeout.count()}};
}

Status ServeJudge(VerifyService& service, const ServeOptions& options) {
  KFORGE_ASSIGN_OR_RETURN(sockaddr_un addr, AddressOf(options.socket));
  const std::string path = options.socket.string();
  KFORGE_ASSIGN_OR_RETURN(int listener, Listen(addr, path));
  struct stat ours{};
  ::stat(path.c_str(), &ours);

  g_stop = false;
  struct sigaction action{}, old_int{}, old_term{};
  action.sa_handler = OnStopSignal;
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);

  Shared shared{service, JudgeFingerprint(service.options()), options};
  std::mutex mu;
  std::list<int> open_fds;
  struct Connection {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
  };
  std::list<Connection> connections;
  if (options.say) options.say("serve: listening on " + path + " (pid " + std::to_string(::getpid()) + ")");
  while (!g_stop) {
    for (auto it = connections.begin(); it != connections.end();) {  // join those that ended
      if (!*it->done) {
        ++it;
        continue;
      }
      it->thread.join();
      it = connections.erase(it);
    }
    pollfd pfd{listener, POLLIN, 0};
    int ready = ::poll(&pfd, 1, 200);
    if (ready > 0 && (pfd.revents & POLLIN)) {
      int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ucred peer{};
      socklen_t len = sizeof(peer);
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != ::getuid()) {
        ::close(fd);  // another user's process: the socket's mode should have kept it out
        continue;
      }
      if (connections.size() >= static_cast<size_t>(options.max_clients)) {
        Turn(fd, "the judge server has " + std::to_string(options.max_clients) +
                     " clients already (kforge serve --max-clients); try again when one is done");
        continue;
      }
      shared.Touch();
      std::lock_guard<std::mutex> lock(mu);
      open_fds.push_back(fd);
      auto it = std::prev(open_fds.end());
      Connection& c = connections.emplace_back();
      c.thread = std::thread([&, fd, it, done = c.done] {
        try {
          Serve(shared, fd);
        } catch (const std::exception& e) {  // resources running out: this connection alone ends
          if (options.say) options.say(std::string("serve: a connection ended: ") + e.what());
        }
        {
          std::lock_guard<std::mutex> lock(mu);
          open_fds.erase(it);
        }
        ::close(fd);
        shared.Touch();
        *done = true;
      });
      continue;
    }
    std::lock_guard<std::mutex> lock(shared.mu);
    const double idle = std::chrono::duration<double>(Clock::now() - shared.last_activity).count();
    if (options.idle_timeout_s > 0 && shared.in_flight == 0 && idle >= options.idle_timeout_s) {
      if (options.say)
        options.say("serve: idle for " + std::to_string(static_cast<int>(idle)) + " s" +
                    (connections.empty() ? "" : " (" + std::to_string(connections.size()) + " idle connections closed)") +
                    "; stopping");
      break;
    }
  }
  ::close(listener);
  if (g_stop && options.say) options.say("serve: stopped by a signal");
  struct stat now{};
  if (::stat(path.c_str(), &now) == 0 && now.st_ino == ours.st_ino && now.st_dev == ours.st_dev) ::unlink(path.c_str());
  {
    std::lock_guard<std::mutex> lock(mu);
    for (int fd : open_fds) ::shutdown(fd, SHUT_RDWR);
  }
  for (Connection& c : connections) c.thread.join();
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return Status::Ok();
}

}  // namespace kforge::verify
