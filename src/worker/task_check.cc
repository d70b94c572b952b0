// Tasks checked against the harness: inputs drawn as for candidates, the reference run twice and
// compared with itself, and with the golden file where the task has one.
#include "worker/task_check.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "kforge/common/verdict.h"
#include "kforge/cuda/plan_env.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/device_memory.h"
#include "kforge/reference/runner.h"

namespace kforge::worker {
namespace {

using reference::TensorSet;

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// The reference's outputs on `inputs`, with the time of the run (synchronised).
StatusOr<TensorSet> TimedRun(reference::ReferenceProgram& program, const TensorSet& inputs, double& ms) {
  auto start = std::chrono::steady_clock::now();
  auto outputs = program.Run(inputs);
  cudaDeviceSynchronize();
  ms = MsSince(start);
  return outputs;
}

/// Empty when `got` matches `want` within the task's tolerance; else the first problem. Notes a
/// near-constant output of `want` in `checks` (degenerate_reference).
std::string Disagreement(const TensorSet& want, const TensorSet& got, const common::Task& task,
                         common::Checks& checks) {
  auto compared = reference::CompareAll(want, got, task.tolerance);
  if (!compared.ok()) return compared.status().message();
  auto problem = CheckOutputs(*compared, OutputRules::For(task), checks);
  return problem ? *problem : "";
}

using verify::TaskCheckStatus;

verify::TaskCheckReply Reply(TaskCheckStatus status, const std::string& message,
                             std::vector<verify::TaskCheckVariant> variants) {
  return {status, message, std::move(variants)};
}

}  // namespace

verify::TaskCheckReply RunTaskCheck(GpuChecker& checker, const verify::TaskCheckRequest& request) {
  auto task_or = checker.TaskFor(request.task_dir);
  if (!task_or.ok()) return Reply(TaskCheckStatus::kFail, task_or.status().message(), {});
  const common::Task& task = **task_or;
  const uint64_t seed = request.seed;
  const int device = checker.device().index;
  std::vector<verify::TaskCheckVariant> variants;
  for (const common::Variant& variant : task.variants) {
    verify::TaskCheckVariant record;
    record.variant = variant.name;
    auto env = cuda::PlanEnvFor(task, variant);
    if (!env.ok()) return Reply(TaskCheckStatus::kFail, env.status().message(), variants);
    MemoryPlan memory = PlanMemory(task, *env);
    bool scratch_only = false;
    if (Status room = checker.ReserveFor(task, memory, scratch_only); !room.ok())
      return Reply(TaskCheckStatus::kHarnessError, room.message(), variants);
    auto load_start = std::chrono::steady_clock::now();
    auto program = checker.ProgramFor(task, variant.name);
    record.load_ms = MsSince(load_start);
    if (!program.ok()) return Reply(TaskCheckStatus::kFail, "reference: " + program.status().message(), variants);

    const int64_t baseline = reference::DeviceMemoryOf(device).allocated_bytes - checker.ResidentBytes(task);
    reference::ResetPeakDeviceMemory(device);
    std::string problem;
    {
      auto inputs = reference::GenerateInputs(task, variant.name, seed, 0, reference::Device::Cuda(device));
      if (!inputs.ok()) return Reply(TaskCheckStatus::kHarnessError, "input generation: " + inputs.status().message(), variants);
      double first_ms = 0, second_ms = 0;
      auto first = TimedRun(**program, *inputs, first_ms);
      if (!first.ok()) {
        bool oom = first.status().code() == Status::Code::kResourceExhausted;
        return Reply(oom ? TaskCheckStatus::kHarnessError : TaskCheckStatus::kFail, first.status().message(), variants);
      }
      auto second = TimedRun(**program, *inputs, second_ms);
      if (!second.ok()) return Reply(TaskCheckStatus::kFail, "second run: " + second.status().message(), variants);
      record.first_run_ms = first_ms;
      record.reference_ms = second_ms;
      std::string rerun = Disagreement(*first, *second, task, record.checks);
      record.checks.rerun = rerun.empty() ? common::CheckOutcome::kPass : common::CheckOutcome::kFail;
      if (!rerun.empty()) problem = "the reference disagrees with itself: " + rerun;
    }
    if (problem.empty() && task.artifacts.golden && task.artifacts.golden->variant == variant.name) {
      reference::Device cuda = reference::Device::Cuda(device);
      auto golden_in = reference::LoadTensors(task.artifacts.golden->file, "input.", cuda);
      auto golden_out = reference::LoadTensors(task.artifacts.golden->file, "output.", cuda);
      if (!golden_in.ok() || !golden_out.ok()) {
        problem = "golden file: " + (golden_in.ok() ? golden_out.status() : golden_in.status()).message();
      } else {
        double ms = 0;
        auto out = TimedRun(**program, *golden_in, ms);
        problem = out.ok() ? Disagreement(*golden_out, *out, task, record.checks) : out.status().message();
        if (!problem.empty()) problem = "golden outputs: " + problem;
      }
      record.checks.golden = problem.empty() ? common::CheckOutcome::kPass : common::CheckOutcome::kFail;
    }
    record.memory = memory.Record(reference::DeviceMemoryOf(device).peak_bytes - baseline);
    variants.push_back(record);
    if (!problem.empty()) return Reply(TaskCheckStatus::kFail, problem + (task.variants.size() > 1 ? " (variant " + variant.name + ")" : ""), variants);
  }
  return Reply(TaskCheckStatus::kOk, "", variants);
}

}  // namespace kforge::worker
