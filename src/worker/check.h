// The GPU half of verification, run inside the worker process: load the candidate's CUBIN, run its
// launch plan on fresh inputs in guarded, poisoned buffers, run the reference on the same buffers,
// compare in one fused pass. Device memory stays within the task's budget (prepared_candidate.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/solution.h"
#include "kforge/common/task.h"
#include "kforge/common/verdict.h"
#include "kforge/common/verdict_parts.h"
#include "kforge/cuda/device.h"
#include "kforge/verify/worker_protocol.h"
#include "worker/judge.h"
#include "worker/prepared_candidate.h"

namespace kforge::reference {
class ReferenceProgram;
struct CompareResult;
}  // namespace kforge::reference

namespace kforge::worker {

/// A check request as the parent sends it (kforge.worker/1).
using GpuCheckRequest = verify::CheckRequest;

struct GpuCheckResult {
  common::VerdictStatus status = common::VerdictStatus::kOk;
  std::string message;
  std::vector<common::TrialRecord> trials;
  common::Checks checks;
  /// The memory plan of the largest variant and the measured peak (peak_device_bytes); none before any.
  std::optional<common::MemoryRecord> memory;
  /// Milliseconds spent loading reference programs (0 when all were cached).
  double reference_load_ms = 0;
  /// Wall milliseconds per phase of the trials: inputs, digest, poison, candidate, reference, compare.
  std::map<std::string, double> phases_ms;
  /// The plan's GPU time in kernels and in library ops; none without library steps.
  std::optional<common::PlanSplit> plan_split;
  /// The CUDA context is unusable (sticky error) or a kernel is still running: the worker must exit.
  bool worker_must_exit = false;
};

/// Owns the device side of a worker: loaded tasks and reference programs are cached across requests.
class GpuChecker {
 public:
  explicit GpuChecker(cuda::DeviceInfo device);
  ~GpuChecker();
  GpuChecker(const GpuChecker&) = delete;
  GpuChecker& operator=(const GpuChecker&) = delete;

  /// Never throws: kforge's own failures become harness_error.
  GpuCheckResult Check(const GpuCheckRequest& request);
  const cuda::DeviceInfo& device() const { return device_; }

  /// The task in `dir`, loaded once per worker.
  StatusOr<const common::Task*> TaskFor(const std::filesystem::path& dir);
  /// The CUDA reference program of a task's variant, loaded once per worker.
  StatusOr<reference::ReferenceProgram*> ProgramFor(const common::Task& task, const std::string& variant);

  /// Makes room for `plan` on the device: drops the programs of other tasks and cached blocks when
  /// free memory is short. Fails (ResourceExhausted, one line) when the budget cannot fit; `scratch_only`
  /// is set when it would fit without the candidate's scratch.
  Status ReserveFor(const common::Task& task, const MemoryPlan& plan, bool& scratch_only);
  /// Device bytes held by the loaded programs of `task` (their params and buffers).
  int64_t ResidentBytes(const common::Task& task) const;

 private:
  /// One candidate on one task (check.cc).
  class CandidateCheck;
  GpuCheckResult CheckOrFail(const GpuCheckRequest& request);

  cuda::DeviceInfo device_;
  std::map<std::filesystem::path, std::unique_ptr<common::Task>> tasks_;
  std::map<std::string, std::unique_ptr<reference::ReferenceProgram>> programs_;
  /// Programs (keys of programs_) seen to leave their inputs unchanged: their inputs are not digested
  /// again after they run.
  std::set<std::string> references_keep_inputs_;
};

/// Where a worker writes the full text of exceptions it turns into one-line messages.
std::filesystem::path WorkerLogPath();
/// Appends `text` to WorkerLogPath(); returns the path, or "" when it cannot be written.
std::string LogFailure(const std::string& text);

}  // namespace kforge::worker
