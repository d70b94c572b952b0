// A candidate ready to run on one variant of a task, and the device memory that takes. One path for
// the GPU check and bench: plan environment, scratch, resolved plan, bound kernels, memory plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/plan_split.h"
#include "kforge/common/solution.h"
#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/common/verdict_parts.h"
#include "kforge/cuda/kernel_library.h"
#include "kforge/cuda/launch_plan.h"

namespace kforge::worker {

/// Device memory of one verification, in bytes. The footprint is what the task itself needs; the
/// budget adds what judging needs on top (docs/worker.md, "Memory"):
///   budget = footprint + params + outputs + guards + workspace
/// (the candidate's copy of the params, the reference's outputs beside the candidate's, 8 KiB of guard
/// bands per buffer, and a fixed workspace for the reference's temporaries and input generation).
struct MemoryPlan {
  int64_t inputs = 0;
  int64_t params = 0;
  int64_t outputs = 0;
  int64_t scratch = 0;
  int64_t guards = 0;
  /// Outputs kept beyond the reference's (bench keeps the expected outputs for its timed-run checks).
  int64_t kept_outputs = 0;
  /// Fixed allowance: the reference's own temporaries, input generation in chunks, compare workspace.
  static constexpr int64_t kWorkspace = int64_t{1} << 30;

  int64_t footprint() const { return inputs + params + outputs + scratch; }
  int64_t budget() const { return footprint() + params + outputs + kept_outputs + guards + kWorkspace; }
  /// The record form, with the measured `peak_device_bytes` when there is one.
  common::MemoryRecord Record(std::optional<int64_t> peak_device_bytes) const;
};

/// Sizes of the tensors of `env` (scratch included) by role.
MemoryPlan PlanMemory(const common::Task& task, const cuda::PlanEnv& env);

/// "6.40 GiB".
std::string FormatBytes(int64_t bytes);

/// Runs a plan's library-op and fill steps with LibTorch on the worker's device.
class TorchOpRunner : public cuda::OpRunner {
 public:
  explicit TorchOpRunner(int device) : device_(device) {}
  Status Run(const cuda::ResolvedStep& step, const std::map<std::string, void*>& pointers,
             cudaStream_t stream) const override;

 private:
  int device_;
};

struct PreparedCandidate {
  cuda::PlanEnv env;  ///< Every tensor the plan names, scratch included (views are not: they own nothing).
  cuda::BoundPlan plan;
  MemoryPlan memory;
  TorchOpRunner ops;
  const cuda::KernelLibrary* library = nullptr;  ///< the loaded CUBIN the plan's kernels are bound to

  /// Enqueues on `stream` the restore of the CUBIN's writable globals to their image at load: before
  /// every run, outside any timed region, so that nothing a run leaves there reaches the next.
  Status ResetState(cudaStream_t stream) const { return library->RestoreGlobals(stream); }
  /// Enqueues the whole plan on `stream` over the tensors at `pointers`.
  Status Run(cudaStream_t stream, const std::map<std::string, void*>& pointers) const {
    return plan.Run(stream, pointers, &ops);
  }
};

/// How the plan's GPU time splits between kforge-compiled kernels and library ops, from one run timed
/// step by step. None when the plan has no library steps or the run failed.
std::optional<common::PlanSplit> TimePlanSplit(const PreparedCandidate& candidate, const std::map<std::string, void*>& pointers,
                             cudaStream_t stream);

/// Resolves and binds `solution` for `variant`. Every error is the solution's (invalid_solution).
StatusOr<PreparedCandidate> PrepareCandidate(const common::Task& task, const common::Variant& variant,
                                             const common::Solution& solution, const cuda::KernelLibrary& library,
                                             const cuda::LaunchLimits& limits, int device);

}  // namespace kforge::worker
