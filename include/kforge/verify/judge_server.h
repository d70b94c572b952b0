// A warm judge: `kforge serve` keeps a VerifyService (its GPU workers, loaded references and compile
// cache) alive behind a Unix socket, and `kforge verify --server` sends it solutions instead of
// starting workers of its own. One JSON line per message; verdicts come back in the order the
// solutions were sent and are those a cold verify with the same options and seed gives. A second
// protocol (ServeProtocol: generate's completion judge for reinforcement learning) may share the
// server, and a TCP listener that asks every client for a bearer token may stand beside the socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/verify/service.h"

namespace kforge::verify {

/// The options a verdict depends on. A client and a server whose fingerprints differ are refused:
/// the server would judge with options the client did not ask for.
nlohmann::json JudgeFingerprint(const VerifyOptions& options);

/// A protocol the server speaks beside kforge.judge/1, chosen by the client's hello: after it, each
/// request line gets one reply line. Implemented above verify (generate's completion judge).
class ServeProtocol {
 public:
  virtual ~ServeProtocol() = default;
  /// The hello's "protocol" value that selects it ("kforge.rl/1").
  virtual std::string Name() const = 0;
  /// What the hello reply says of the server under "server" (limits, modes).
  virtual nlohmann::json About() const = 0;
  /// Longest request line it takes; a longer one is answered with an error and skipped.
  virtual size_t MaxRequestBytes() const = 0;
  /// The reply to one request (an object; errors are {"error": "..."}). `gone` turns true once the
  /// client has left: the work not yet started is then dropped. Thread-safe; may block.
  virtual nlohmann::json Answer(const nlohmann::json& request, const std::function<bool()>& gone) = 0;
};

/// Whether `given` is `expected`, in time that does not depend on where they differ.
bool TokenMatches(const std::string& given, const std::string& expected);

struct ServeOptions {
  /// Unix socket to listen on (owner-only); none when empty. At least one of socket and listen.
  std::filesystem::path socket;
  /// TCP address "HOST:PORT" to listen on as well, or "PORT" for 127.0.0.1:PORT (port 0: any free
  /// one, said in the listening line); none when empty. Every client of it must bring `token`.
  std::string listen;
  /// The bearer token a hello on the TCP listener must carry ("token"); never logged. Required
  /// with `listen`.
  std::string token;
  /// Where to write "HOST:PORT\n" once the TCP listener listens (HOST: this machine's name when it
  /// listens on every interface), for clients that find servers by their files (kforge slurm
  /// serve); removed on the way out. None when empty. Needs `listen`.
  std::filesystem::path address_file;
  /// The second protocol (not owned); none when null.
  ServeProtocol* extra = nullptr;
  /// Stop after this long with no request in flight and none received, whether or not clients are
  /// connected (an idle client's connection is closed). 0 = never.
  double idle_timeout_s = 900;
  /// Connections open at once; a client beyond them is refused with a line that says so. Default 32.
  int max_clients = 32;
  /// Where the server's own lines go (listening, stopping); none when empty.
  std::function<void(const std::string&)> say;
};

/// Refuses options that contradict each other, in one line naming the flag: nothing to listen on,
/// `listen` without a token, `address_file` without `listen`. RunJudgeServer checks them first.
Status CheckServeOptions(const ServeOptions& options);

/// Listens on `options.socket` (created owner-only; a stale socket is replaced, anything else at the
/// path refused) and on `options.listen`, and judges what clients send (on the socket: processes of
/// the same user; on TCP: clients with the token), until idle for the timeout or until
/// SIGINT/SIGTERM. Removes the socket on the way out. Errors are one line naming the path or address.
Status RunJudgeServer(VerifyService& service, const ServeOptions& options);

/// How long a client waits on a judge server.
struct JudgeServerTimeouts {
  /// For the server's answer to the hello (connecting included). Default 30 s.
  std::chrono::milliseconds hello{30000};
  /// For the next verdict, counted from when the oldest unanswered solution was sent or the last
  /// verdict came, whichever is later. Default ReplyTimeout(options).
  std::chrono::milliseconds reply{0};
};

/// The longest a client waits for a verdict: what the server's own deadlines allow one solution
/// (compile_timeout + check_allowance + kernel_timeout × (trials + 8)), plus 30 s.
std::chrono::milliseconds ReplyTimeout(const VerifyOptions& options);

/// One client's connection to a judge server.
class JudgeServerClient {
 public:
  /// Connects and compares fingerprints; the error says what differs, why it could not connect, or
  /// that no answer came in time. `timeouts`: JudgeServerTimeouts with ReplyTimeout(options) when not given.
  static StatusOr<std::unique_ptr<JudgeServerClient>> Open(const std::filesystem::path& socket,
                                                         const VerifyOptions& options,
                                                         std::optional<JudgeServerTimeouts> timeouts = std::nullopt);
  ~JudgeServerClient();
  JudgeServerClient(const JudgeServerClient&) = delete;
  JudgeServerClient& operator=(const JudgeServerClient&) = delete;

  /// Sends one solution to be judged with `seed`. Thread-safe; results come in submission order. A
  /// lost connection, or a server silent past the reply timeout, gives every unanswered solution a
  /// harness_error verdict that says so.
  std::future<Judged> Submit(SolutionInput input, uint64_t seed);

 private:
  struct Impl;
  explicit JudgeServerClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kforge::verify
