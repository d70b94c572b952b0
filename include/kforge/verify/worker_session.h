// One GPU worker process (`kforge worker`) and the conversation with it, for every command that talks
// to a worker: the verify service, bench's reference timing and `kforge tasks check`/`audit`. The
// worker starts at the first request, says hello once, answers typed requests, and starts again after
// it died or was killed. A call that times out, finds the worker dead or cannot read its reply becomes
// a reply whose status says so (WorkerFailure), here and nowhere else.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "kforge/common/verdict.h"
#include "kforge/verify/worker_protocol.h"

namespace kforge::verify {

class WorkerClient;

struct WorkerSessionOptions {
  /// The executable that serves `worker` (kforge, or the fake worker of the tests). Required.
  std::filesystem::path program;
  /// The device the worker opens (`--device N`). Default 0.
  int device = 0;
  /// Run the worker under compute-sanitizer (memcheck), writing its log to `sanitizer_log`, with an
  /// orderly exit so that it reports (EndSanitized). Default false.
  bool sanitize = false;
  /// compute-sanitizer's log file (with `sanitize`).
  std::filesystem::path sanitizer_log;
  /// Hello asks for the device's peak bandwidth and FLOP/s (measured, or read from the cache). Default
  /// false.
  bool peak = false;
  /// Longest hello may take (the worker's start: CUDA, LibTorch, a peak measurement). Default 300 s.
  std::chrono::milliseconds hello_timeout{300000};
};

/// How a call to the worker ended without a reply that could be read.
struct WorkerFailure {
  enum class Kind {
    kTimedOut,    ///< no reply by the deadline: the worker was killed
    kDied,        ///< the worker ended (or could not start) without answering
    kUnreadable,  ///< the reply is not the message asked for
  };
  Kind kind = Kind::kDied;
  /// "no reply within 450 ms; worker killed", "exit code 3", "check reply: trials: expected ...".
  std::string detail;

  /// The status of a verdict or a timing this failure ends: timeout when timed out, else harness_error.
  common::VerdictStatus VerdictStatus() const;
  /// "worker died: DETAIL" for a death, else "worker: DETAIL": what a verdict or a timing says.
  std::string VerdictMessage() const;
  /// "worker: DETAIL": what a hello, a task check or a task audit says (harness_error, whatever the kind).
  std::string Message() const { return "worker: " + detail; }
};

class WorkerSession {
 public:
  /// Starts nothing: the worker starts at the first request.
  explicit WorkerSession(WorkerSessionOptions options);
  /// Kills a worker still running.
  ~WorkerSession();
  WorkerSession(const WorkerSession&) = delete;
  WorkerSession& operator=(const WorkerSession&) = delete;

  /// Says hello the first time (starting the worker) and keeps the reply: ok with the device (and its
  /// peaks when asked), no_gpu, or harness_error when the worker could not start or answer.
  const HelloReply& Hello();
  /// Wall milliseconds the hello took (the worker's start); nullopt before the hello.
  std::optional<double> hello_ms() const { return hello_ms_; }

  /// The GPU check of a compiled candidate; a failed call is timeout or harness_error (VerdictMessage).
  CheckReply Check(const CheckRequest& request, std::chrono::milliseconds deadline);
  /// A task's reference through the harness; a failed call is harness_error (Message).
  TaskCheckReply TaskCheck(const TaskCheckRequest& request, std::chrono::milliseconds deadline);
  /// The no-work candidates of a task audit; a failed call is harness_error (Message).
  TaskAuditReply TaskAudit(const TaskAuditRequest& request, std::chrono::milliseconds deadline);
  /// A request whose messages another module owns (bench's BenchRequest and BenchReply): `Reply` has
  /// FromJson, a common::VerdictStatus `status` and a `message`; a failed call is as Check's.
  template <typename Reply, typename Request>
  Reply Call(const Request& request, std::chrono::milliseconds deadline) {
    std::variant<Reply, WorkerFailure> got = Exchange<Reply>(request.ToJson(), deadline);
    if (auto* reply = std::get_if<Reply>(&got)) return std::move(*reply);
    const auto& failure = std::get<WorkerFailure>(got);
    Reply reply;
    reply.status = failure.VerdictStatus();
    reply.message = failure.VerdictMessage();
    return reply;
  }

  /// How the last call failed; nullopt when its reply was read.
  const std::optional<WorkerFailure>& last_failure() const { return last_failure_; }
  /// With `sanitize`: ends the worker in order (the next request starts another) and returns
  /// compute-sanitizer's first error line (or where its log is) when it found errors; nullopt otherwise.
  std::optional<std::string> EndSanitized();

  /// Times a worker was started.
  int spawn_count() const;

 private:
  /// Sends `request`; the reply line as JSON in `body`, or how the call failed.
  std::optional<WorkerFailure> Send(const nlohmann::json& request, std::chrono::milliseconds deadline,
                                    nlohmann::json& body);
  /// Sends `request`; its reply read as `Reply`, or how the call failed.
  template <typename Reply>
  std::variant<Reply, WorkerFailure> Exchange(const nlohmann::json& request,
                                              std::chrono::milliseconds deadline) {
    nlohmann::json body;
    last_failure_ = Send(request, deadline, body);
    if (!last_failure_) {
      StatusOr<Reply> parsed = Reply::FromJson(body);
      if (parsed.ok()) return std::move(*parsed);
      last_failure_ = WorkerFailure{WorkerFailure::Kind::kUnreadable, parsed.status().message()};
    }
    return *last_failure_;
  }

  WorkerSessionOptions options_;
  std::unique_ptr<WorkerClient> client_;
  std::optional<HelloReply> hello_;
  std::optional<double> hello_ms_;
  std::optional<WorkerFailure> last_failure_;
};

}  // namespace kforge::verify
