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

/// Keys whose values differ between two fingerprints, as "key: server X, client Y".
std::string Differences(const json& server, const json& client) {
  std::string out;
  for (const auto& [key, value] : server.items()) {
    const json theirs = client.contains(key) ? client[key] : json();
    if (theirs != value) out += (out.empty() ? "" : "; ") + key + ": server " + value.dump() + ", client " + theirs.dump();
  }
  for (const auto& [key, value] : client.items())
    if (!server.contains(key)) out += (out.empty() ? "" : "; ") + key + ": unknown to the server";
  return out;
}

/// One client: its hello, then its requests judged and answered in order.
void Serve(VerifyService& service, int fd, const json& fingerprint) {
  LineReader reader(fd);
  auto hello_line = reader.Next();
  if (!hello_line.ok() || !*hello_line) return;
  json hello = json::parse(**hello_line, nullptr, false);
  std::string refusal;
  if (!hello.is_object() || hello.value("protocol", "") != kJudgeProtocol)
    refusal = std::string("expected a hello for protocol ") + kJudgeProtocol;
  else if (std::string diff = Differences(fingerprint, hello.value("fingerprint", json::object())); !diff.empty())
    refusal = "options differ from the server's (" + diff + "); start a server with the same options";
  if (!WriteLine(fd, json{{"ok", refusal.empty()}, {"message", refusal}}.dump()).ok() || !refusal.empty()) return;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::future<Judged>> pending;
  bool reading = true;
  std::thread read_thread([&] {
    for (int line_number = 2;; ++line_number) {
      auto line = reader.Next();
      if (!line.ok() || !*line) break;
      json request = json::parse(**line, nullptr, false);
      auto parsed = RequestFromJson(request);
      std::future<Judged> result;
      if (parsed.ok()) {
        result = service.Submit(std::move(parsed->first), parsed->second);
      } else {
        std::promise<Judged> refused;
        refused.set_value(HarnessFailure(request.is_object() ? request.value("label", "?") : "?", 0,
                                         "judge server: request line " + std::to_string(line_number) + ": " +
                                             parsed.status().message()));
        result = refused.get_future();
      }
      std::lock_guard<std::mutex> lock(mu);
      pending.push_back(std::move(result));
      cv.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu);
    reading = false;
    cv.notify_all();
  });
  bool writable = true;
  while (true) {
    std::future<Judged> next;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !pending.empty() || !reading; });
      if (pending.empty()) break;
      next = std::move(pending.front());
      pending.pop_front();
    }
    Judged judged = next.get();  // judged even when the client left: the service owns the job
    if (writable && !WriteLine(fd, common::JsonText(JudgedToJson(judged))).ok()) {
      writable = false;
      ::shutdown(fd, SHUT_RDWR);  // the reader stops too
    }
  }
  read_thread.join();
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

  const json fingerprint = JudgeFingerprint(service.options());
  std::mutex mu;
  std::list<int> open_fds;
  struct Connection {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
  };
  std::list<Connection> connections;
  std::atomic<int> active{0};
  auto last_activity = Clock::now();
  std::mutex activity_mu;
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
      ++active;
      std::lock_guard<std::mutex> lock(mu);
      open_fds.push_back(fd);
      auto it = std::prev(open_fds.end());
      Connection& c = connections.emplace_back();
      c.thread = std::thread([&, fd, it, done = c.done] {
        Serve(service, fd, fingerprint);
        {
          std::lock_guard<std::mutex> lock(mu);
          open_fds.erase(it);
        }
        ::close(fd);
        std::lock_guard<std::mutex> lock(activity_mu);
        last_activity = Clock::now();
        --active;
        *done = true;
      });
      continue;
    }
    std::lock_guard<std::mutex> lock(activity_mu);
    const double idle = std::chrono::duration<double>(Clock::now() - last_activity).count();
    if (options.idle_timeout_s > 0 && active == 0 && idle >= options.idle_timeout_s) {
      if (options.say) options.say("serve: idle for " + std::to_string(static_cast<int>(idle)) + " s; stopping");
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
