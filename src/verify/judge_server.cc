// `kforge serve`: a VerifyService behind a Unix socket, for clients of the same user, and behind a TCP
// listener, for clients with the bearer token; a second protocol (ServeProtocol) beside it.
#include "kforge/verify/judge_server.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/library_ops.h"

#include <netdb.h>
#include <netinet/in.h>
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
#include <fstream>
#include <list>
#include <mutex>
#include <thread>
#include <tuple>

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
    if (theirs != value)
      out += (out.empty() ? "" : "; ") + key + ": server " + text(value) + ", client " + text(theirs);
  }
  for (const auto& [key, value] : client.items())
    if (!server.contains(key))
      out += (out.empty() ? "" : "; ") + common::KeyText(key.substr(0, 60)) + ": unknown to the server";
  if (out.size() > 2000) out = out.substr(0, 2000) + "...";
  return out;
}

/// A listening TCP socket at "HOST:PORT", or "PORT" on loopback (port 0: any free one), and the
/// address it got, as text.
StatusOr<std::pair<int, std::string>> ListenTcp(const std::string& given) {
  // A bare port is on loopback: another interface must be named.
  const bool bare_port = !given.empty() && given.find_first_not_of("0123456789") == std::string::npos;
  const std::string where = bare_port ? "127.0.0.1:" + given : given;
  const size_t colon = where.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == where.size())
    return Status::InvalidArgument("--listen " + where.substr(0, 100) +
                                   ": expected HOST:PORT (127.0.0.1:8765)");
  std::string host = where.substr(0, colon), port = where.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoi(port) > 65535)
    return Status::InvalidArgument("--listen " + where.substr(0, 100) +
                                   ": the port must be a number from 0 to 65535");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return Status::InvalidArgument("--listen " + where.substr(0, 100) + ": " + ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, ::freeaddrinfo);
  int listener = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listener, found->ai_addr, found->ai_addrlen) != 0 || ::listen(listener, 64) != 0) {
    Status failed = Status::IoError("--listen " + where.substr(0, 100) + ": " + std::strerror(errno));
    ::close(listener);
    return failed;
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &len);
  char name[NI_MAXHOST] = "", service[NI_MAXSERV] = "";
  ::getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, name, sizeof(name), service, sizeof(service),
                NI_NUMERICHOST | NI_NUMERICSERV);
  const std::string shown = bound.ss_family == AF_INET6 ? "[" + std::string(name) + "]" : std::string(name);
  return std::make_pair(listener, shown + ":" + service);
}

/// The address clients reach `bound` ("0.0.0.0:8765") at: this machine's name for a wildcard address.
std::string ReachableAddress(const std::string& bound) {
  const size_t colon = bound.rfind(':');
  const std::string host = bound.substr(0, colon);
  if (host != "0.0.0.0" && host != "[::]") return bound;
  char name[256] = "";
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return bound;
  return std::string(name) + bound.substr(colon);
}

/// Writes `text` into `path` through a temporary file beside it, so that a reader sees all or nothing.
Status WriteWhole(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out.flush()) return Status::IoError("--address-file " + path.string() + ": cannot write");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) return Status::IoError("--address-file " + path.string() + ": " + ec.message());
  return Status::Ok();
}

/// What the connections share: the service, the limits, and when the server was last busy.
struct Shared {
  Shared(VerifyService& service, json fingerprint, const ServeOptions& options)
      : service(service), fingerprint(std::move(fingerprint)), options(options) {}

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
  if (!line.ok())
    return Refused("", 0, where + line.status().message() + " (the server's limit for a request)");
  StatusOr<json> request = common::ParseJson(**line, "request");
  StatusOr<std::pair<SolutionInput, uint64_t>> parsed =
      request.ok() ? RequestFromJson(*request)
                   : StatusOr<std::pair<SolutionInput, uint64_t>>(request.status());
  if (!parsed.ok()) {
    std::string label;
    if (request.ok() && request->is_object() && request->contains("label") && (*request)["label"].is_string())
      label = (*request)["label"].get<std::string>();
    return Refused(label, 0, where + parsed.status().message());
  }
  return service.Submit(std::move(parsed->first), parsed->second);
}

/// The second protocol's connection: one reply line per request line, each answered before the next
/// is read. A client that leaves mid-request has the work not yet started dropped.
void ServeExtra(Shared& shared, int fd, LineReader& reader) {
  ServeProtocol& protocol = *shared.options.extra;
  reader.set_max_line(protocol.MaxRequestBytes());
  auto gone = [fd] {
    pollfd pfd{fd, POLLRDHUP, 0};
    return ::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  };
  for (int line_number = 2;; ++line_number) {
    auto line = reader.Next();
    if (line.ok() && !*line) return;
    if (!line.ok() && line.status().code() != Status::Code::kResourceExhausted) return;
    shared.Touch(+1);
    json reply;
    const std::string where = "request line " + std::to_string(line_number) + ": ";
    if (!line.ok()) {
      reply = {{"error", where + line.status().message() + " (the server's limit for a request)"}};
    } else if (StatusOr<json> request = common::ParseJson(**line, "request"); !request.ok()) {
      reply = {{"error", where + request.status().message()}};
    } else {
      try {
        reply = protocol.Answer(*request, gone);
      } catch (const std::exception& e) {
        reply = {{"error", where + "the server failed: " + std::string(e.what()).substr(0, 300)}};
      }
    }
    shared.Touch(-1);
    if (reply.contains("abandoned") && shared.options.say)
      shared.options.say("serve: a client left mid-request; " + reply["abandoned"].dump() + " of " +
                         reply.value("of", json(0)).dump() + " completions not judged");
    if (!WriteLine(fd, common::JsonText(reply)).ok()) return;
  }
}

/// What a client's hello asked for.
enum class Greeting { kJudge, kExtra, kRefused };

/// Reads a client's hello and answers it: refused (no hello in time, a TCP client without the token,
/// another protocol, other options), the judge protocol, or the second protocol.
Greeting Greet(Shared& shared, int fd, LineReader& reader, bool needs_token) {
  const auto hello_by = Clock::now() + kHelloWait;
  auto hello_line =
      reader.Next([&] { return Clock::now() >= hello_by ? std::string("no hello") : std::string(); });
  if (!hello_line.ok() || !*hello_line) return Greeting::kRefused;
  StatusOr<json> hello = common::ParseJson(**hello_line, "hello");
  if (needs_token) {
    const bool has_token =
        hello.ok() && hello->is_object() && hello->contains("token") && (*hello)["token"].is_string();
    if (!has_token || !TokenMatches((*hello)["token"].get<std::string>(), shared.options.token)) {
      (void)WriteLine(fd,
                      json{{"ok", false},
                           {"message", has_token ? "refused: wrong token"
                                                 : "refused: a client of the TCP listener needs the server's "
                                                   "token (\"token\" in its hello)"}}
                          .dump());
      return Greeting::kRefused;
    }
  }
  if (hello.ok() && hello->is_object()) hello->erase("token");
  if (shared.options.extra && hello.ok() && hello->is_object() && hello->contains("protocol") &&
      (*hello)["protocol"] == shared.options.extra->Name()) {
    const bool sent =
        WriteLine(fd, json{{"ok", true}, {"message", ""}, {"server", shared.options.extra->About()}}.dump())
            .ok();
    return sent ? Greeting::kExtra : Greeting::kRefused;
  }
  StatusOr<json> fingerprint = hello.ok() ? HelloFromJson(*hello) : StatusOr<json>(hello.status());
  std::string refusal;
  if (!fingerprint.ok())
    refusal = std::string("expected a hello for protocol ") + kJudgeProtocol +
              (shared.options.extra ? " or " + shared.options.extra->Name() : std::string()) + " (" +
              fingerprint.status().message() + ")";
  else if (std::string diff = Differences(shared.fingerprint, *fingerprint); !diff.empty())
    refusal = "options differ from the server's (" + diff + "); start a server with the same options";
  const bool sent = WriteLine(fd, json{{"ok", refusal.empty()}, {"message", refusal}}.dump()).ok();
  return sent && refusal.empty() ? Greeting::kJudge : Greeting::kRefused;
}

/// The judge protocol after the hello: a reading thread submits each request line as it comes (up to
/// kMaxPendingBytes unanswered), and this thread answers them in order, each when judged.
void JudgeInOrder(Shared& shared, int fd, LineReader& reader) {
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
          cv.wait(lock, [&] {
            return !writing || pending_bytes == 0 || pending_bytes + bytes <= kMaxPendingBytes;
          });
          if (!writing) break;
        }
        shared.Touch(+1);
        std::future<Judged> judged;
        try {
          judged = Submit(shared.service, line, line_number);
        } catch (const std::exception& e) {
          judged = Refused(
              "", 0,
              std::string("judge server: request line ") + std::to_string(line_number) + ": " + e.what());
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

/// One client: its hello, then its requests judged and answered in order. Nothing a client sends
/// ends more than its own connection. A client of the TCP listener must bring the token.
void Serve(Shared& shared, int fd, bool needs_token) {
  LineReader reader(fd, kMaxRequestLine);
  switch (Greet(shared, fd, reader, needs_token)) {
    case Greeting::kJudge:
      return JudgeInOrder(shared, fd, reader);
    case Greeting::kExtra:
      return ServeExtra(shared, fd, reader);
    case Greeting::kRefused:
      return;
  }
}

/// Tells a client it was not let in, without waiting on it, and closes its connection.
void Turn(int fd, const std::string& why) {
  const std::string line = json{{"ok", false}, {"message", why}}.dump() + "\n";
  (void)::send(fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::close(fd);
}

/// A listening socket at `path`: a stale socket there is replaced, a live one or another file refused.
StatusOr<int> Listen(const sockaddr_un& addr, const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return Status::InvalidArgument("--socket " + path + ": exists and is not a socket");
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

/// The server's listeners: the Unix socket (with its identity, so that only this server's socket is
/// removed), the TCP listener and its address, and the line written into --address-file.
struct Listeners {
  int unix_fd = -1;
  std::string path;
  struct stat ours {};
  int tcp_fd = -1;
  std::string tcp_address;
  std::filesystem::path address_file;
  std::string address_line;

  /// Closes both, and removes the socket and the address file while they still name this server.
  void Close() {
    if (tcp_fd >= 0) ::close(tcp_fd);
    tcp_fd = -1;
    if (unix_fd >= 0) {
      ::close(unix_fd);
      struct stat now {};
      if (::stat(path.c_str(), &now) == 0 && now.st_ino == ours.st_ino && now.st_dev == ours.st_dev)
        ::unlink(path.c_str());
    }
    unix_fd = -1;
    if (!address_line.empty()) {
      std::ifstream in(address_file);
      std::string line;
      if (std::getline(in, line) && line + "\n" == address_line) ::unlink(address_file.c_str());
    }
    address_line.clear();
  }
};

/// The listeners `options` ask for, and the address file written; on failure, none is left open.
StatusOr<Listeners> OpenListeners(const ServeOptions& options) {
  Listeners listeners;
  listeners.path = options.socket.string();
  listeners.address_file = options.address_file;
  if (!options.socket.empty()) {
    KFORGE_ASSIGN_OR_RETURN(sockaddr_un addr, AddressOf(options.socket));
    KFORGE_ASSIGN_OR_RETURN(listeners.unix_fd, Listen(addr, listeners.path));
    ::stat(listeners.path.c_str(), &listeners.ours);
  }
  if (!options.listen.empty()) {
    StatusOr<std::pair<int, std::string>> tcp = ListenTcp(options.listen);
    if (!tcp.ok()) {
      listeners.Close();
      return tcp.status();
    }
    std::tie(listeners.tcp_fd, listeners.tcp_address) = *tcp;
  }
  if (!options.address_file.empty()) {
    const std::string line = ReachableAddress(listeners.tcp_address) + "\n";
    if (Status written = WriteWhole(options.address_file, line); !written.ok()) {
      listeners.Close();
      return written;
    }
    listeners.address_line = line;
  }
  return listeners;
}

/// The open connections, each served on its own thread.
class Connections {
 public:
  size_t size() const { return threads_.size(); }

  /// Serves the client on `fd` on a thread of its own, which closes `fd` when done.
  void Start(Shared& shared, int fd, bool needs_token) {
    shared.Touch();
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(fd);
    auto it = std::prev(open_fds_.end());
    Thread& t = threads_.emplace_back();
    t.thread = std::thread([this, &shared, fd, it, done = t.done, needs_token] {
      try {
        Serve(shared, fd, needs_token);
      } catch (const std::exception& e) {  // resources running out: this connection alone ends
        if (shared.options.say) shared.options.say(std::string("serve: a connection ended: ") + e.what());
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        open_fds_.erase(it);
      }
      ::close(fd);
      shared.Touch();
      *done = true;
    });
  }

  /// Joins the threads whose connections ended.
  void JoinEnded() {
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (!*it->done) {
        ++it;
        continue;
      }
      it->thread.join();
      it = threads_.erase(it);
    }
  }

  /// Shuts every open connection down and waits for its thread.
  void EndAll() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (Thread& t : threads_) t.thread.join();
    threads_.clear();
  }

 private:
  struct Thread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
  };
  std::mutex mu_;  // guards open_fds_, which the threads change
  std::list<int> open_fds_;
  std::list<Thread> threads_;  // the accepting thread's alone
};

/// Whether the server has been idle (no request in flight) for --idle-timeout; says so when it has.
bool IdleTooLong(Shared& shared, size_t connections) {
  const ServeOptions& options = shared.options;
  std::lock_guard<std::mutex> lock(shared.mu);
  const double idle = std::chrono::duration<double>(Clock::now() - shared.last_activity).count();
  if (options.idle_timeout_s <= 0 || shared.in_flight != 0 || idle < options.idle_timeout_s) return false;
  if (options.say)
    options.say("serve: idle for " + std::to_string(static_cast<int>(idle)) + " s" +
                (connections == 0 ? "" : " (" + std::to_string(connections) + " idle connections closed)") +
                "; stopping");
  return true;
}

}  // namespace

bool TokenMatches(const std::string& given, const std::string& expected) {
  // Every byte of the longer one is looked at, whatever the first difference.
  const size_t n = std::max(given.size(), expected.size());
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char a = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    const unsigned char b = i < expected.size() ? static_cast<unsigned char>(expected[i]) : 0;
    diff |= a ^ b;
  }
  return diff == 0 && !expected.empty();
}

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

Status CheckServeOptions(const ServeOptions& options) {
  if (options.socket.empty() && options.listen.empty())
    return Status::InvalidArgument("give --socket PATH, --listen HOST:PORT or both");
  if (!options.listen.empty() && options.token.empty())
    return Status::InvalidArgument("--listen needs --token-file: every TCP client must bring the token");
  if (!options.address_file.empty() && options.listen.empty())
    return Status::InvalidArgument("--address-file needs --listen");
  return Status::Ok();
}

Status RunJudgeServer(VerifyService& service, const ServeOptions& options) {
  KFORGE_RETURN_IF_ERROR(CheckServeOptions(options));
  KFORGE_ASSIGN_OR_RETURN(Listeners listeners, OpenListeners(options));

  g_stop = false;
  struct sigaction action {
  }, old_int{}, old_term{};
  action.sa_handler = OnStopSignal;
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);

  Shared shared{service, JudgeFingerprint(service.options()), options};
  Connections connections;
  if (options.say) {
    std::string where = listeners.path;
    if (!listeners.tcp_address.empty())
      where +=
          (where.empty() ? "" : " and ") + std::string("tcp ") + listeners.tcp_address + " (token required)";
    options.say("serve: listening on " + where + " (pid " + std::to_string(::getpid()) + ")");
  }
  while (!g_stop) {
    connections.JoinEnded();
    pollfd pfds[2] = {{listeners.unix_fd, POLLIN, 0},
                      {listeners.tcp_fd, POLLIN, 0}};  // a negative fd is skipped
    int ready = ::poll(pfds, 2, 200);
    const bool on_socket = ready > 0 && (pfds[0].revents & POLLIN);
    const bool on_tcp = ready > 0 && !on_socket && (pfds[1].revents & POLLIN);
    if (on_socket || on_tcp) {
      int fd = ::accept4(on_socket ? listeners.unix_fd : listeners.tcp_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ucred peer{};
      socklen_t len = sizeof(peer);
      if (on_socket &&
          (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != ::getuid())) {
        ::close(fd);  // another user's process: the socket's mode should have kept it out
        continue;
      }
      if (connections.size() >= static_cast<size_t>(options.max_clients)) {
        Turn(fd, "the judge server has " + std::to_string(options.max_clients) +
                     " clients already (kforge serve --max-clients); try again when one is done");
        continue;
      }
      connections.Start(shared, fd, /*needs_token=*/on_tcp);
      continue;
    }
    if (IdleTooLong(shared, connections.size())) break;
  }
  listeners.Close();
  if (g_stop && options.say) options.say("serve: stopped by a signal");
  connections.EndAll();
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return Status::Ok();
}

}  // namespace kforge::verify
