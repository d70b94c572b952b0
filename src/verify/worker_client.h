// Parent side of a GPU worker process: spawns it with posix_spawn, exchanges JSON lines over
// pipes, enforces a deadline per request, and respawns it after it dies. WorkerSession
// (kforge/verify/worker_session.h) owns one and gives its lines their types.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/subprocess.h"

namespace kforge::verify {

class WorkerClient {
 public:
  /// `argv[0]` is the program to run (absolute path); nothing is started until the first Call.
  explicit WorkerClient(std::vector<std::string> argv);
  /// Kills a worker still running (see Shutdown for an orderly exit).
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  struct Reply {
    enum class Kind { kOk, kTimeout, kDied };
    Kind kind = Kind::kOk;
    nlohmann::json body;  ///< The reply line (kOk).
    std::string detail;   ///< How the worker ended (kTimeout, kDied): "killed by SIGSEGV", "exit code 3".
  };

  /// Sends one request line and waits up to `deadline` for one reply line. On a timeout the worker
  /// is killed; on a timeout or death the next Call starts a fresh worker.
  Reply Call(const nlohmann::json& request, std::chrono::milliseconds deadline);

  /// Closes the worker's stdin and waits for it to exit; returns how it ended ("exit code 0").
  std::string Shutdown();

  /// Times a worker was started (for reports and tests).
  int spawn_count() const { return spawn_count_; }

 private:
  /// Kills the worker (when it still runs) and reaps it; returns how it ended.
  std::string Stop();

  std::vector<std::string> argv_;
  common::Subprocess worker_;
  std::string buffer_;
  int spawn_count_ = 0;
};

}  // namespace kforge::verify
