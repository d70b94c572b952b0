// A worker session: the worker's command line, the hello, the typed calls and how a failed call reads.
#include "kforge/verify/worker_session.h"

#include <fstream>
#include <utility>
#include <vector>

#include "verify/worker_client.h"

namespace kforge::verify {
namespace {

/// compute-sanitizer's exit code when it found errors.
constexpr int kSanitizerExitCode = 86;

std::vector<std::string> WorkerArgv(const WorkerSessionOptions& options) {
  std::vector<std::string> argv;
  if (options.sanitize) {
    // API errors are not reported: every CUDA call is checked, and some fail on purpose
    // (cudaFuncGetParamInfo past the last parameter counts the parameters).
    argv = {"/usr/local/cuda/bin/compute-sanitizer",
            "--tool",
            "memcheck",
            "--report-api-errors",
            "no",
            "--error-exitcode",
            std::to_string(kSanitizerExitCode),
            "--log-file",
            options.sanitizer_log.string()};
  }
  argv.insert(argv.end(), {options.program.string(), "worker", "--device", std::to_string(options.device)});
  if (options.sanitize) argv.push_back("--orderly-exit");
  return argv;
}

/// The first error line of compute-sanitizer's log, or where the log is.
std::string SanitizerSummary(const std::filesystem::path& log_path) {
  std::ifstream in(log_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Invalid") != std::string::npos || line.find("Error") != std::string::npos ||
        line.find("Race") != std::string::npos) {
      size_t start = line.find_first_not_of("= ");
      return line.substr(start == std::string::npos ? 0 : start, 200);
    }
  }
  return "see " + log_path.string();
}

/// The reply of a call that failed, for messages whose failure is harness_error whatever the kind
/// (a hello, a task check, a task audit).
template <typename Reply, typename Status>
Reply OrHarnessError(std::variant<Reply, WorkerFailure> got, Status harness_error) {
  if (auto* reply = std::get_if<Reply>(&got)) return std::move(*reply);
  Reply reply;
  reply.status = harness_error;
  reply.message = std::get<WorkerFailure>(got).Message();
  return reply;
}

}  // namespace

common::VerdictStatus WorkerFailure::VerdictStatus() const {
  return kind == Kind::kTimedOut ? common::VerdictStatus::kTimeout : common::VerdictStatus::kHarnessError;
}

std::string WorkerFailure::VerdictMessage() const {
  // Candidate faults are answered in-band before the worker exits; a worker that dies without
  // answering is kforge's failure.
  return kind == Kind::kDied ? "worker died: " + detail : Message();
}

WorkerSession::WorkerSession(WorkerSessionOptions options)
    : options_(std::move(options)), client_(std::make_unique<WorkerClient>(WorkerArgv(options_))) {}

WorkerSession::~WorkerSession() = default;

int WorkerSession::spawn_count() const { return client_->spawn_count(); }

std::optional<WorkerFailure> WorkerSession::Send(const nlohmann::json& request,
                                                 std::chrono::milliseconds deadline, nlohmann::json& body) {
  WorkerClient::Reply raw = client_->Call(request, deadline);
  switch (raw.kind) {
    case WorkerClient::Reply::Kind::kOk:
      body = std::move(raw.body);
      return std::nullopt;
    case WorkerClient::Reply::Kind::kTimeout:
      return WorkerFailure{WorkerFailure::Kind::kTimedOut, std::move(raw.detail)};
    case WorkerClient::Reply::Kind::kDied:
      return WorkerFailure{WorkerFailure::Kind::kDied, std::move(raw.detail)};
  }
  return WorkerFailure{WorkerFailure::Kind::kDied, "unknown reply kind"};
}

const HelloReply& WorkerSession::Hello() {
  if (hello_) return *hello_;
  auto start = std::chrono::steady_clock::now();
  HelloRequest request;
  request.peak = options_.peak;
  hello_ = OrHarnessError(Exchange<HelloReply>(request.ToJson(), options_.hello_timeout),
                          common::VerdictStatus::kHarnessError);
  hello_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return *hello_;
}

CheckReply WorkerSession::Check(const CheckRequest& request, std::chrono::milliseconds deadline) {
  return Call<CheckReply>(request, deadline);
}

TaskCheckReply WorkerSession::TaskCheck(const TaskCheckRequest& request, std::chrono::milliseconds deadline) {
  return OrHarnessError(Exchange<TaskCheckReply>(request.ToJson(), deadline), TaskCheckStatus::kHarnessError);
}

TaskAuditReply WorkerSession::TaskAudit(const TaskAuditRequest& request, std::chrono::milliseconds deadline) {
  return OrHarnessError(Exchange<TaskAuditReply>(request.ToJson(), deadline), TaskAuditStatus::kHarnessError);
}

std::optional<std::string> WorkerSession::EndSanitized() {
  std::string ended = client_->Shutdown();
  if (ended != "exit code " + std::to_string(kSanitizerExitCode)) return std::nullopt;
  return SanitizerSummary(options_.sanitizer_log);
}

}  // namespace kforge::verify
