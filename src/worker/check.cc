// Candidate-versus-reference trials on the GPU (DESIGN.md, "Verification").
#include "worker/check.h"

#include <cuda_runtime_api.h>
#include <cstdint>

#include <cmath>
#include <cstring>
#include <thread>

#include "kforge/common/hash.h"
#include "kforge/cuda/guarded_buffer.h"
#include "kforge/cuda/kernel_library.h"
#include "kforge/cuda/launch_plan.h"
#include "kforge/cuda/owners.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/runner.h"
#include "kforge/verify/plan_env.h"
#include "worker/candidate_buffers.h"

namespace kforge::worker {
namespace {

using common::VerdictStatus;
using reference::Tensor;
using reference::TensorSet;

/// Poison bytes for successive runs: 0xFF is NaN in every float type; 0x5A is a finite wrong value.
constexpr uint8_t kPoison[] = {0xFF, 0x5A};
/// Runs of the candidate on the first trial's inputs, to expose races.
constexpr int kRepeatsOnFirstTrial = 3;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Seed of one trial: the run seed, the solution and the trial, so that a candidate never sees the
/// inputs (or stale reference results) of an earlier solution in the same worker.
uint64_t TrialSeed(uint64_t run_seed, const std::string& solution_hash, int variant_index, int trial) {
  uint64_t h = std::stoull(common::Sha256Hex(solution_hash).substr(0, 15), nullptr, 16);
  return SplitMix64(run_seed ^ SplitMix64(h + static_cast<uint64_t>(variant_index) * 1000003 + trial));
}

struct Failure {
  VerdictStatus status;
  std::string message;
  bool fatal = false;
};

/// Waits for `stream` up to `timeout`. A kernel still running is a timeout; any error is sticky.
std::optional<Failure> WaitForStream(cudaStream_t stream, std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (true) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return std::nullopt;
    if (e != cudaErrorNotReady) {
      return Failure{VerdictStatus::kCrash,
                     std::string("kernel faulted: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e),
                     true};
    }
    if (std::chrono::steady_clock::now() > end) {
      return Failure{VerdictStatus::kTimeout,
                     "kernel still running after " + std::to_string(timeout.count()) + " ms", true};
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

class Trial {
 public:
  Trial(const cuda::PlanEnv& env, const cuda::BoundPlan& plan, cudaStream_t stream,
        std::chrono::milliseconds timeout)
      : env_(env), plan_(plan), stream_(stream), timeout_(timeout) {}

  /// Allocates guarded buffers: copies of the inputs and params, outputs and scratch.
  Status Prepare(const TensorSet& inputs, const TensorSet& params) {
    KFORGE_ASSIGN_OR_RETURN(bufs_, CandidateBuffers::Allocate(env_, inputs, params));
    return Status::Ok();
  }

  /// One run of the plan from poisoned outputs; returns the outputs, or why the run failed.
  /// Leaks the buffers: after a fatal failure the worker exits, and freeing memory that a still
  /// running kernel uses would block until that kernel ends.
  void Abandon() { bufs_.Abandon(); }

  std::variant<TensorSet, Failure> Run(int repeat, const TensorSet& output_like) {
    Status poisoned = bufs_.Poison(env_, kPoison[repeat % 2]);
    if (!poisoned.ok()) return Failure{VerdictStatus::kCrash, poisoned.message(), true};
    if (cudaDeviceSynchronize() != cudaSuccess) {
      return Failure{VerdictStatus::kCrash, "device error before launch", true};
    }
    Status launched = plan_.Run(stream_, bufs_.pointers());
    if (!launched.ok()) {
      cudaGetLastError();
      bool healthy = cudaDeviceSynchronize() == cudaSuccess;
      return Failure{healthy ? VerdictStatus::kLaunchError : VerdictStatus::kCrash, launched.message(),
                     !healthy};
    }
    if (auto failure = WaitForStream(stream_, timeout_)) return *failure;
    if (Status guards = bufs_.CheckGuards(); !guards.ok())
      return Failure{VerdictStatus::kMismatch, guards.message()};
    for (const auto& [name, original] : bufs_.originals().items()) {
      auto now = bufs_.Read(name, original);
      if (!now.ok()) return Failure{VerdictStatus::kCrash, now.status().message(), true};
      if (!reference::BitwiseEqual(*now, original)) {
        return Failure{VerdictStatus::kMismatch, "the candidate modified input \"" + name + "\""};
      }
    }
    TensorSet outputs;
    for (const auto& [name, like] : output_like.items()) {
      auto out = bufs_.Read(name, like);
      if (!out.ok()) return Failure{VerdictStatus::kCrash, out.status().message(), true};
      outputs.Set(name, *out);
    }
    return outputs;
  }

 private:
  const cuda::PlanEnv& env_;
  const cuda::BoundPlan& plan_;
  cudaStream_t stream_;
  std::chrono::milliseconds timeout_;
  CandidateBuffers bufs_;
};

/// True when a candidate value is one of the poison patterns (an element never written).
bool LooksPoisoned(double value) {
  float poison_5a;
  uint32_t bits = 0x5A5A5A5Au;
  std::memcpy(&poison_5a, &bits, sizeof bits);
  return std::isnan(value) || value == static_cast<double>(poison_5a);
}

/// Relative L2 error allowed on every output: ten times the element rtol, at least 1e-3.
double RelL2Bound(const common::Tolerance& tol) { return std::max(10 * tol.rtol, 1e-3); }

/// True when a constant could match the whole reference output within tolerance.
bool NearConstant(const reference::CompareResult& r, const common::Tolerance& tol) {
  return r.ref_std <= tol.atol + tol.rtol * r.ref_max_abs;
}

nlohmann::json OutputJson(const reference::CompareResult& r) {
  return {
      {"name", r.name},
      {"max_abs_err", std::isfinite(r.max_abs_err) ? nlohmann::json(r.max_abs_err) : nlohmann::json("inf")},
      {"max_rel_err", std::isfinite(r.max_rel_err) ? nlohmann::json(r.max_rel_err) : nlohmann::json("inf")},
      {"rel_l2_err", std::isfinite(r.rel_l2_err) ? nlohmann::json(r.rel_l2_err) : nlohmann::json("inf")},
      {"mismatches", r.mismatches},
      {"numel", r.numel},
      {"first_mismatch", r.first_mismatch < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.first_mismatch)}};
}

}  // namespace

std::optional<std::string> JudgeOutputs(const std::vector<reference::CompareResult>& results,
                                        const common::Tolerance& tol, nlohmann::json& checks) {
  for (const reference::CompareResult& r : results) {
    if (NearConstant(r, tol))
      checks["degenerate_reference"] = r.name + " is near-constant; norm check applied";
    if (!r.ok()) {
      if (LooksPoisoned(r.cand_at_first)) checks["poisoned_outputs"] = "fail";
      return r.name + ": " + std::to_string(r.mismatches) + " of " + std::to_string(r.numel) +
             " elements differ (first at index " + std::to_string(r.first_mismatch) + ": got " +
             std::to_string(r.cand_at_first) + ", expected " + std::to_string(r.ref_at_first) + ")";
    }
    if (r.rel_l2_err > RelL2Bound(tol)) {
      return r.name + ": relative L2 error " + std::to_string(r.rel_l2_err) + " exceeds " +
             std::to_string(RelL2Bound(tol));
    }
  }
  return std::nullopt;
}

GpuChecker::GpuChecker(cuda::DeviceInfo device) : device_(std::move(device)) {}
GpuChecker::~GpuChecker() = default;

StatusOr<const common::Task*> GpuChecker::TaskFor(const std::filesystem::path& dir) {
  auto it = tasks_.find(dir);
  if (it != tasks_.end()) return it->second.get();
  KFORGE_ASSIGN_OR_RETURN(common::Task task, common::LoadTask(dir));
  auto& slot = tasks_[dir];
  slot = std::make_unique<common::Task>(std::move(task));
  return slot.get();
}

StatusOr<reference::ReferenceProgram*> GpuChecker::ProgramFor(const common::Task& task,
                                                              const std::string& variant) {
  std::string key = task.dir.string() + "#" + variant;
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second.get();
  KFORGE_ASSIGN_OR_RETURN(
      auto program, reference::ReferenceProgram::Load(task, variant, reference::Device::Cuda(device_.index)));
  auto& slot = programs_[key];
  slot = std::move(program);
  return slot.get();
}

GpuCheckResult GpuChecker::Check(const GpuCheckRequest& request) {
  GpuCheckResult result;
  auto fail = [&](VerdictStatus status, const std::string& message, bool fatal = false) {
    result.status = status;
    result.message = message;
    result.worker_must_exit = fatal;
    return result;
  };
  auto task_or = TaskFor(request.task_dir);
  if (!task_or.ok()) return fail(VerdictStatus::kInvalidSolution, task_or.status().message());
  const common::Task& task = **task_or;

  auto library = cuda::KernelLibrary::Load(request.cubin);
  if (!library.ok())
    return fail(VerdictStatus::kLaunchError, "cannot load the CUBIN: " + library.status().message());
  auto owned_stream = cuda::CreateStream();
  if (!owned_stream.ok()) return fail(VerdictStatus::kCrash, owned_stream.status().message(), true);
  cudaStream_t stream = owned_stream->get();

  std::string solution_hash = common::SolutionHash(request.solution);
  cuda::LaunchLimits limits = cuda::LimitsFor(device_);
  result.checks["poisoned_outputs"] = "pass";
  result.checks["guard_regions"] = "pass";
  result.checks["inputs_unchanged"] = "pass";
  result.checks["repeat_runs"] = kRepeatsOnFirstTrial;
  bool deterministic = true;

  for (size_t v = 0; v < task.variants.size(); ++v) {
    const common::Variant& variant = task.variants[v];
    auto env_or = verify::PlanEnvFor(task, variant);
    if (!env_or.ok()) return fail(VerdictStatus::kInvalidSolution, env_or.status().message());
    cuda::PlanEnv& env = *env_or;
    std::string where = task.variants.size() > 1 ? " (variant " + variant.name + ")" : "";
    Status scratch = cuda::AddScratch(request.solution, limits, env);
    if (!scratch.ok()) return fail(VerdictStatus::kInvalidSolution, scratch.message() + where);
    auto resolved = cuda::ResolvePlan(request.solution, env, limits);
    if (!resolved.ok()) return fail(VerdictStatus::kInvalidSolution, resolved.status().message() + where);
    auto bound = cuda::BoundPlan::Bind(*resolved, **library);
    if (!bound.ok()) return fail(VerdictStatus::kInvalidSolution, bound.status().message() + where);
    auto load_start = std::chrono::steady_clock::now();
    auto program = ProgramFor(task, variant.name);
    result.reference_load_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
    if (!program.ok())
      return fail(VerdictStatus::kInvalidSolution, "reference: " + program.status().message());

    int trials = v == 0 ? request.trials : 1;
    for (int t = 0; t < trials; ++t) {
      int dist = t % reference::kNumDistributions;
      uint64_t seed = TrialSeed(request.seed, solution_hash, static_cast<int>(v), t);
      auto inputs =
          reference::GenerateInputs(task, variant.name, seed, dist, reference::Device::Cuda(device_.index));
      if (!inputs.ok())
        return fail(VerdictStatus::kCrash, "input generation: " + inputs.status().message(), true);
      auto outputs_like =
          reference::AllocateOutputs(task, variant.name, reference::Device::Cuda(device_.index));
      if (!outputs_like.ok()) return fail(VerdictStatus::kCrash, outputs_like.status().message(), true);

      Trial trial(env, *bound, stream, request.kernel_timeout);
      Status prepared = trial.Prepare(*inputs, (*program)->params());
      if (!prepared.ok()) return fail(VerdictStatus::kCrash, prepared.message(), true);
      int repeats = t == 0 && v == 0 ? kRepeatsOnFirstTrial : 1;
      std::vector<TensorSet> runs;
      for (int r = 0; r < repeats; ++r) {
        auto run = trial.Run(r, *outputs_like);
        if (auto* failure = std::get_if<Failure>(&run)) {
          if (failure->message.find("out of bounds") != std::string::npos)
            result.checks["guard_regions"] = "fail";
          if (failure->message.find("modified input") != std::string::npos)
            result.checks["inputs_unchanged"] = "fail";
          if (failure->fatal) {
            trial.Abandon();
            library->release();
          }
          return fail(failure->status, failure->message + where, failure->fatal);
        }
        runs.push_back(std::move(std::get<TensorSet>(run)));
      }
      // The reference runs only now, after the candidate, on the same inputs.
      auto expected = (*program)->Run(*inputs);
      if (!expected.ok())
        return fail(VerdictStatus::kCrash, "reference: " + expected.status().message(), true);

      nlohmann::json record = {
          {"variant", variant.name}, {"trial", t}, {"distribution", dist}, {"seed", seed}, {"runs", repeats}};
      for (int r = 0; r < repeats; ++r) {
        auto compared = reference::CompareAll(*expected, runs[r], task.tolerance);
        if (!compared.ok()) return fail(VerdictStatus::kCrash, compared.status().message(), true);
        if (r == 0) {
          record["outputs"] = nlohmann::json::array();
          for (const auto& c : *compared) record["outputs"].push_back(OutputJson(c));
        }
        if (r > 0) {
          for (const auto& [name, tensor] : runs[r].items()) {
            if (!reference::BitwiseEqual(tensor, *runs[0].Find(name))) deterministic = false;
          }
        }
        if (auto problem = JudgeOutputs(*compared, task.tolerance, result.checks)) {
          if (repeats > 1) *problem += " on run " + std::to_string(r + 1) + " of " + std::to_string(repeats);
          result.trials.push_back(record);
          if (r > 0) result.checks["repeat_runs"] = "fail";
          return fail(VerdictStatus::kMismatch, *problem + " in trial " + std::to_string(t) + where);
        }
      }
      result.trials.push_back(record);
    }
  }
  result.checks["bitwise_deterministic"] = deterministic;
  return result;
}

}  // namespace kforge::worker
