// Bench inside the worker: the candidate prepared as for the GPU check, inputs drawn into its buffers
// (the reference reads the same buffers), expected outputs once, then bench::Measure. Every timed
// candidate run starts from poisoned outputs and restored globals, is compared with the expected outputs and
// must leave its inputs as they were, so a kernel that changes behaviour after its first launches fails. A
// plan with library ops then runs once more, step by step, for the split of its GPU time (TimePlanSplit, as
// the GPU check does).
#include "worker/bench_op.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kforge/bench/measure.h"
#include "kforge/bench/peak.h"
#include "kforge/bench/wire.h"
#include "kforge/common/hash.h"
#include "kforge/common/verdict.h"
#include "kforge/cuda/kernel_library.h"
#include "kforge/cuda/launch_plan.h"
#include "kforge/cuda/owners.h"
#include "kforge/cuda/plan_env.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/device_memory.h"
#include "kforge/reference/runner.h"
#include "worker/prepared_candidate.h"
#include "worker/timed_runs.h"

namespace kforge::worker {
namespace {

using common::VerdictStatus;

/// Copies of the inputs (and of the candidate's buffers) that successive samples rotate through, so
/// that a median does not hang on where one allocation happened to land in memory (L2 slices, DRAM
/// channels); fewer when they would take more than a quarter of the free device memory. On µs-scale
/// kernels the largest run-to-run spread of a median was 3.3% with one placement, 2.5% with 4, 2.1% with 16.
constexpr int kPlacements = 16;

bench::BenchReply Fail(VerdictStatus status, const std::string& message, bool exiting = false) {
  bench::BenchReply reply;
  reply.status = status;
  reply.message = message;
  reply.exiting = exiting;
  return reply;
}

/// Inputs of the reference alone (no candidate): plain tensors, one copy per placement.
StatusOr<std::vector<reference::TensorSet>> ReferenceInputs(const common::Task& task,
                                                            const std::string& variant, uint64_t seed,
                                                            int device, int64_t bytes) {
  std::vector<reference::TensorSet> sets;
  KFORGE_ASSIGN_OR_RETURN(reference::TensorSet first,
                          reference::GenerateInputs(task, variant, seed, 0, reference::Device::Cuda(device)));
  sets.push_back(std::move(first));
  int placements = SetsThatFit(kPlacements, device, bytes);
  for (int k = 1; k < placements; ++k) {
    reference::TensorSet copy;
    for (const auto& [name, tensor] : sets.front().items()) copy.Set(name, tensor.Clone());
    sets.push_back(std::move(copy));
  }
  return sets;
}

/// What a bench times: the candidate's plan (when there is a solution), and the memory it needs.
struct BenchPlan {
  std::unique_ptr<cuda::KernelLibrary> library;
  std::optional<PreparedCandidate> prepared;
  MemoryPlan memory;
};

/// The plan for `request` on the task's first variant: the candidate's, or the task's tensors alone for
/// the reference. The reply that refuses it when it cannot be made.
std::optional<bench::BenchReply> PlanBench(const cuda::DeviceInfo& device, const common::Task& task,
                                           const bench::BenchRequest& request, BenchPlan& plan) {
  const common::Variant& variant = task.variants.front();
  if (!request.solution) {
    auto env = cuda::PlanEnvFor(task, variant);
    if (!env.ok()) return Fail(VerdictStatus::kHarnessError, env.status().message());
    plan.memory = PlanMemory(task, *env);
    return std::nullopt;
  }
  auto loaded = cuda::KernelLibrary::Load(request.cubin);
  if (!loaded.ok() && loaded.status().code() == Status::Code::kInvalidArgument)
    return Fail(VerdictStatus::kInvalidSolution, loaded.status().message());
  if (!loaded.ok())
    return Fail(VerdictStatus::kLaunchError, "cannot load the CUBIN: " + loaded.status().message());
  plan.library = std::move(*loaded);
  auto ready = PrepareCandidate(task, variant, *request.solution, *plan.library, cuda::LimitsFor(device),
                                device.index);
  if (!ready.ok()) return Fail(VerdictStatus::kInvalidSolution, ready.status().message());
  plan.prepared = std::move(*ready);
  plan.memory = plan.prepared->memory;
  plan.memory.kept_outputs = plan.memory.outputs;
  return std::nullopt;
}

/// The candidate's input sets (`placements` of them, fewer when they do not fit), each with its draw's
/// expected outputs, and its subject. Each run starts from the CUBIN's globals as loaded, outside the timed
/// region: nothing the last run left there reaches this one.
Status AddCandidate(const PreparedCandidate& candidate, reference::ReferenceProgram& program,
                    const std::string& variant, uint64_t seed, int device, TimedRuns& timed, int& placements,
                    std::vector<bench::Subject>& subjects) {
  // The first set is in the budget; each further one (its buffers, its draw's expected outputs) takes a
  // quarter of what is free at most, so fewer draws are made when they do not fit.
  KFORGE_RETURN_IF_ERROR(timed.AddSet(program, variant, seed, device));
  placements = SetsThatFit(kPlacements, device,
                           candidate.memory.inputs + 2 * candidate.memory.outputs + candidate.memory.scratch +
                               (int64_t{64} << 20));
  for (int k = 1; k < placements; ++k) {
    const uint64_t draw_seed = common::SplitMix64(seed + static_cast<uint64_t>(k));
    KFORGE_RETURN_IF_ERROR(timed.AddSet(program, variant, draw_seed, device));
  }
  TimedRuns* t = &timed;
  const PreparedCandidate* c = &candidate;
  subjects.push_back({"candidate", [c](cudaStream_t s) { return c->ResetState(s); },
                      [c, t](cudaStream_t s) { return c->Run(s, t->pointers()); },
                      [t](cudaStream_t s) { return t->Check(s); }});
  return Status::Ok();
}

/// The reply to a measurement that failed: a timed run's wrong output, the device's memory, or a launch
/// that failed (a faulting kernel leaves the context unusable; the parent starts a fresh worker).
bench::BenchReply MeasureFailed(const Status& status, const TimedRuns* timed) {
  if (timed && timed->mismatched()) return Fail(VerdictStatus::kMismatch, "timed run: " + status.message());
  if (status.code() == Status::Code::kResourceExhausted)
    return Fail(VerdictStatus::kHarnessError, "bench: " + status.message());
  bool healthy = cudaDeviceSynchronize() == cudaSuccess;
  return Fail(healthy ? VerdictStatus::kLaunchError : VerdictStatus::kCrash, "bench: " + status.message(),
              /*exiting=*/!healthy);
}

/// RunBench without the exception boundary.
bench::BenchReply RunBenchOrFail(GpuChecker& state, const bench::BenchRequest& request) {
  const cuda::DeviceInfo& device = state.device();
  auto task_or = state.TaskFor(request.task_dir);
  if (!task_or.ok()) return Fail(VerdictStatus::kHarnessError, task_or.status().message());
  const common::Task& task = **task_or;
  const common::Variant& variant = task.variants.front();
  const uint64_t seed = request.seed;

  BenchPlan plan;
  if (std::optional<bench::BenchReply> refused = PlanBench(device, task, request, plan)) return *refused;
  bool scratch_only = false;
  if (Status room = state.ReserveFor(task, plan.memory, scratch_only); !room.ok()) {
    if (scratch_only) return Fail(VerdictStatus::kInvalidSolution, "scratch does not fit: " + room.message());
    return Fail(VerdictStatus::kHarnessError, "task " + task.id + ": " + room.message());
  }
  auto program = state.ProgramFor(task, variant.name);
  if (!program.ok()) return Fail(VerdictStatus::kHarnessError, "reference: " + program.status().message());
  auto stream = cuda::CreateStream();
  if (!stream.ok()) return Fail(VerdictStatus::kCrash, stream.status().message());

  std::vector<reference::TensorSet> reference_sets;  // the reference's inputs when there is no candidate
  std::unique_ptr<TimedRuns> timed;
  std::vector<bench::Subject> subjects;
  int placements = 1;
  if (plan.prepared) {
    timed = std::make_unique<TimedRuns>(task, plan.prepared->env);
    if (Status added = AddCandidate(*plan.prepared, **program, variant.name, seed, device.index, *timed,
                                    placements, subjects);
        !added.ok())
      return Fail(VerdictStatus::kHarnessError, added.message());
  } else {
    auto sets =
        ReferenceInputs(task, variant.name, seed, device.index, plan.memory.inputs + (int64_t{64} << 20));
    if (!sets.ok()) return Fail(VerdictStatus::kHarnessError, "input generation: " + sets.status().message());
    reference_sets = std::move(*sets);
    placements = static_cast<int>(reference_sets.size());
  }
  reference::ReferenceProgram* reference_program = *program;
  int device_index = device.index;
  size_t reference_next = 0;  // the reference rotates through the input sets like the candidate
  auto reference_inputs = [&](size_t k) -> const reference::TensorSet& {
    return timed ? timed->inputs_of(k) : reference_sets[k];
  };
  subjects.push_back({"reference", nullptr,
                      [&, reference_program, device_index](cudaStream_t s) -> Status {
                        reference::CudaStreamScope scope(s, device_index);
                        return reference_program->Execute(reference_inputs(reference_next));
                      },
                      [&](cudaStream_t) {
                        if (timed) KFORGE_RETURN_IF_ERROR(timed->RedigestAfterReference(reference_next));
                        reference_next = (reference_next + 1) % static_cast<size_t>(placements);
                        return Status::Ok();
                      }});

  auto measured = bench::Measure(subjects, request.measure, stream->get());
  if (!measured.ok()) return MeasureFailed(measured.status(), timed.get());
  // Where the candidate's GPU time goes: one more run, timed step by step, after the timed runs.
  std::optional<common::PlanSplit> plan_split =
      plan.prepared ? TimePlanSplit(*plan.prepared, timed->first_pointers(), stream->get()) : std::nullopt;
  if (plan.prepared && cudaDeviceSynchronize() != cudaSuccess)
    return Fail(VerdictStatus::kCrash, "bench: the plan faulted when run step by step", /*exiting=*/true);
  bench::BenchReply reply;
  reply.measurement = std::move(*measured);
  reply.plan_split = std::move(plan_split);
  reply.checked_runs = timed ? timed->checked() : 0;
  reply.placements = placements;
  reply.memory = plan.memory.Record(std::nullopt);
  reply.device = device.Record();
  if (auto peak = bench::LoadOrMeasurePeak(device.index, bench::DefaultCacheDir()); peak.ok())
    reply.peak = *peak;
  return reply;
}

}  // namespace

bench::BenchReply RunBench(GpuChecker& state, const bench::BenchRequest& request) {
  try {
    return RunBenchOrFail(state, request);
  } catch (const std::exception& e) {
    std::string text = e.what();
    std::string log = LogFailure(text);
    return Fail(VerdictStatus::kHarnessError,
                "worker: " + text.substr(0, std::min<size_t>(text.find('\n'), 300)) +
                    (log.empty() ? "" : " (details in " + log + ")"),
                /*exiting=*/cudaDeviceSynchronize() != cudaSuccess);
  }
}

}  // namespace kforge::worker
