// The worker protocol, kforge.worker/1 (docs/worker.md): the requests the parent writes to
// `kforge worker` and the replies it reads back, one JSON object per line. Both sides use these
// structs, so each message has one writer and one reader, and each default is written once, here.
// The bench request and reply carry bench's types and live beside them (bench/wire.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/names.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/solution.h"
#include "kforge/common/status.h"
#include "kforge/common/verdict.h"
#include "kforge/common/verdict_parts.h"

namespace kforge::verify {

inline constexpr std::string_view kWorkerProtocol = "kforge.worker/1";

/// Trials of a check on the default variant (each further variant gets one). Default of
/// CheckRequest::trials and VerifyOptions::trials.
inline constexpr int kDefaultTrials = 5;
/// Longest a candidate's launches may run once. Default of CheckRequest::kernel_timeout and
/// VerifyOptions::kernel_timeout.
inline constexpr std::chrono::milliseconds kDefaultKernelTimeout{10000};

/// What a request asks the worker to do: its "op".
enum class WorkerOp {
  kHello,      ///< HelloRequest
  kCheck,      ///< CheckRequest
  kBench,      ///< bench::BenchRequest (bench/wire.h)
  kTaskCheck,  ///< TaskCheckRequest
  kTaskAudit,  ///< TaskAuditRequest
};
inline constexpr common::NameTable<WorkerOp, 5> kWorkerOpNames = {{{WorkerOp::kHello, "hello"},
                                                                   {WorkerOp::kCheck, "check"},
                                                                   {WorkerOp::kBench, "bench"},
                                                                   {WorkerOp::kTaskCheck, "task_check"},
                                                                   {WorkerOp::kTaskAudit, "task_audit"}}};
static_assert(kWorkerOpNames.MatchesEnum());
inline std::string_view WorkerOpName(WorkerOp op) { return kWorkerOpNames.Name(op); }

/// The "op" of a request object as written; "" when it has none (or one that is not a string).
std::string RequestOpText(const nlohmann::json& request);
/// The op of a request object; nullopt when it has none or one outside kWorkerOpNames.
std::optional<WorkerOp> RequestOp(const nlohmann::json& request);

/// The reply to a request the worker could not serve as asked: no GPU, a malformed request, an
/// exception. `{"status", "message"}`; every reply type reads it, its other fields left at their
/// defaults.
nlohmann::json FailureReplyJson(common::VerdictStatus status, const std::string& message);

/// {"op": "hello", "peak"}: is there a device, and which.
struct HelloRequest {
  /// Measure (or read from the cache) the device's peak bandwidth and FLOP/s. Default false.
  bool peak = false;

  nlohmann::json ToJson() const;
  static StatusOr<HelloRequest> FromJson(const nlohmann::json& json);
};

struct HelloReply {
  /// ok, no_gpu (no usable device) or harness_error (the worker did not start).
  common::VerdictStatus status = common::VerdictStatus::kOk;
  std::string message;
  /// The worker's device; none unless ok.
  std::optional<common::DeviceRecord> device;
  /// Whether the request asked for the device's peaks: the reply then has "peak", null when unknown.
  bool peak_asked = false;
  /// The device's peaks, when asked for and known.
  std::optional<common::DevicePeak> peak;

  nlohmann::json ToJson() const;
  static StatusOr<HelloReply> FromJson(const nlohmann::json& json);
};

/// {"op": "check", ...}: the GPU check of one compiled candidate against its task's reference.
struct CheckRequest {
  /// The task's folder (task.json and the exported reference). Required.
  std::filesystem::path task_dir;
  /// The candidate; each kernel step names the CUBIN's symbol. Required.
  common::Solution solution;
  /// The CUBIN image (base64 on the wire, "cubin_b64"). Required.
  std::string cubin;
  /// Trials on the default variant; each further variant gets one.
  int trials = kDefaultTrials;
  /// Run seed; trial inputs also depend on the solution's hash. Default 0.
  uint64_t seed = 0;
  /// Longest the candidate's launches may run once ("kernel_timeout_ms").
  std::chrono::milliseconds kernel_timeout = kDefaultKernelTimeout;

  nlohmann::json ToJson() const;
  static StatusOr<CheckRequest> FromJson(const nlohmann::json& json);
};

/// Where a check's time went, in wall milliseconds.
struct CheckTiming {
  /// The whole request in the worker.
  double gpu_ms = 0;
  /// Loading reference programs (0 when all were loaded already).
  double reference_load_ms = 0;
  /// Per phase of the trials: inputs, digest, poison, candidate, reference, compare.
  std::map<std::string, double> phases_ms;
  /// Of a plan with library ops; absent (and not written) otherwise.
  std::optional<common::PlanSplit> plan_split;

  /// The verdict's timing: these figures, each measured.
  common::VerdictTiming Record() const;
  nlohmann::json ToJson() const;
  static StatusOr<CheckTiming> FromJson(const nlohmann::json& json);
};

/// The GPU part of a verdict.
struct CheckReply {
  common::VerdictStatus status = common::VerdictStatus::kOk;
  std::string message;
  /// One record per trial run (common::Verdict::trials).
  std::vector<common::TrialRecord> trials;
  /// Named checks and their outcomes (common::Verdict::checks).
  common::Checks checks;
  /// The worker's device; null in a failure reply.
  std::optional<common::DeviceRecord> device;
  /// Absent in a failure reply.
  std::optional<CheckTiming> timing;
  /// The memory plan of the largest variant with peak_device_bytes; null before any ran.
  std::optional<common::MemoryRecord> memory;
  /// The worker exits after this reply (its CUDA context is unusable); the parent starts another.
  bool exiting = false;

  nlohmann::json ToJson() const;
  static StatusOr<CheckReply> FromJson(const nlohmann::json& json);
};

/// {"op": "task_check", "task_dir", "seed"}: a task's reference through the harness
/// (`kforge tasks check`).
struct TaskCheckRequest {
  /// The task's folder. Required.
  std::filesystem::path task_dir;
  /// Seed of the inputs. Default 1.
  uint64_t seed = 1;

  nlohmann::json ToJson() const;
  static StatusOr<TaskCheckRequest> FromJson(const nlohmann::json& json);
};

/// One variant of a task check.
struct TaskCheckVariant {
  std::string variant;
  /// Loading the reference program.
  double load_ms = 0;
  /// The first and the second run of the reference on the same inputs.
  double first_run_ms = 0;
  double reference_ms = 0;
  /// rerun, golden, degenerate_reference.
  common::Checks checks;
  /// The variant's memory plan with peak_device_bytes.
  common::MemoryRecord memory;

  nlohmann::json ToJson() const;
  static StatusOr<TaskCheckVariant> FromJson(const nlohmann::json& json, const std::string& path);
};

/// How a task check ended.
enum class TaskCheckStatus {
  kOk,            ///< the reference ran and passed every check
  kFail,          ///< the task's problem (its reference fails, disagrees with itself or its golden outputs)
  kHarnessError,  ///< kforge's own failure
  kNoGpu,
};
inline constexpr common::NameTable<TaskCheckStatus, 4> kTaskCheckStatusNames = {
    {{TaskCheckStatus::kOk, "ok"},
     {TaskCheckStatus::kFail, "fail"},
     {TaskCheckStatus::kHarnessError, "harness_error"},
     {TaskCheckStatus::kNoGpu, "no_gpu"}}};
static_assert(kTaskCheckStatusNames.MatchesEnum());
inline std::string_view TaskCheckStatusName(TaskCheckStatus status) { return kTaskCheckStatusNames.Name(status); }

struct TaskCheckReply {
  TaskCheckStatus status = TaskCheckStatus::kOk;
  std::string message;
  /// The variants checked in full, one that failed its checks included.
  std::vector<TaskCheckVariant> variants;

  nlohmann::json ToJson() const;
  static StatusOr<TaskCheckReply> FromJson(const nlohmann::json& json);
};

/// {"op": "task_audit", "task_dir", "seed", "trials"[, "timing": true]}: no-work candidates (zeros, a
/// byte pattern, a copy of each input, half the reference's outputs, the reference's outputs on other
/// inputs) judged against a task on the trials a check makes (`kforge tasks audit`); with `timing`,
/// correct candidates that cheat only on speed, through bench's checked timed runs instead
/// (`kforge tasks audit --timing`).
struct TaskAuditRequest {
  std::filesystem::path task_dir;  // required
  uint64_t seed = 1;
  int trials = kDefaultTrials;
  bool timing = false;

  nlohmann::json ToJson() const;
  static StatusOr<TaskAuditRequest> FromJson(const nlohmann::json& json);
};

/// How a timing candidate fared in its timed runs, beside the honest kernel it wraps.
struct AuditedTiming {
  int checked_runs = 0;    ///< the cheat's timed runs that passed their check
  int shortcuts = 0;       ///< of those, runs on which it skipped the work (a faked speed)
  double median_ms = 0;    ///< its median time per run
  double honest_ms = 0;    ///< the honest kernel's median, timed the same way just before
  int draws = 0;           ///< distinct input draws its timed runs rotated over
  bool control = false;    ///< run with the defence off, to show the cheat works: not a candidate
};

/// One audited candidate and what the judge said of it.
struct AuditedCandidate {
  /// No-work: "zeros", "byte_pattern", "copy:<input>", "first_half", "other_inputs"; timing: "memo",
  /// "launch_counter", "relaunch_flag", "control:memo_unrestored".
  std::string name;
  /// No-work: it passed every trial, so the judge could not tell it from a kernel. Timing: it passed
  /// every timed run's check and skipped the work on some, so its speed was faked and believed.
  bool accepted = false;
  std::string message;  // why it was refused or not applicable, empty when accepted
  std::optional<AuditedTiming> timing;  // timing candidates only
};

/// How a task audit ended.
enum class TaskAuditStatus {
  kOk,  ///< every candidate judged
  kHarnessError,
  kNoGpu,
};
inline constexpr common::NameTable<TaskAuditStatus, 3> kTaskAuditStatusNames = {
    {{TaskAuditStatus::kOk, "ok"}, {TaskAuditStatus::kHarnessError, "harness_error"}, {TaskAuditStatus::kNoGpu, "no_gpu"}}};
static_assert(kTaskAuditStatusNames.MatchesEnum());
inline std::string_view TaskAuditStatusName(TaskAuditStatus status) { return kTaskAuditStatusNames.Name(status); }

struct TaskAuditReply {
  TaskAuditStatus status = TaskAuditStatus::kOk;
  std::string message;
  std::vector<AuditedCandidate> candidates;

  nlohmann::json ToJson() const;
  static StatusOr<TaskAuditReply> FromJson(const nlohmann::json& json);
};

}  // namespace kforge::verify
