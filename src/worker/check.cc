// Candidate-versus-reference trials on the GPU (docs/worker.md, "The GPU check").
#include "worker/check.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <thread>
#include <variant>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"
#include "kforge/common/library_ops.h"
#include "kforge/cuda/kernel_library.h"
#include "kforge/cuda/owners.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/device_memory.h"
#include "kforge/reference/runner.h"
#include "worker/candidate_buffers.h"
#include "worker/trial_plan.h"

namespace kforge::worker {
namespace {

using common::SplitMix64;
using common::VerdictStatus;
using reference::Tensor;
using reference::TensorSet;

/// Poison bytes for successive runs: 0xFF is NaN in every float type; 0x5A is a finite wrong value.
constexpr uint8_t kPoisonPerRun[] = {0xFF, 0x5A};
/// Runs of the candidate on the first trial's inputs, to expose races.
constexpr int kRepeatsOnFirstTrial = 3;

/// Seed of one trial: the run seed, the solution and the trial, so that a candidate never sees the
/// inputs (or stale reference results) of an earlier solution in the same worker.
uint64_t TrialSeed(uint64_t run_seed, const std::string& solution_hash, int variant_index, int trial) {
  uint64_t h = std::stoull(common::Sha256Hex(solution_hash).substr(0, 15), nullptr, 16);
  return SplitMix64(run_seed ^ SplitMix64(h + static_cast<uint64_t>(variant_index) * 1000003 + trial));
}

/// Why a check stopped: the verdict status and message, and whether the worker must exit.
struct Failure {
  VerdictStatus status;
  std::string message;
  bool fatal = false;
};

Failure Harness(const Status& status) { return {VerdictStatus::kHarnessError, status.message()}; }

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

/// Wall time per phase of the check, in ms (each phase ends with the device idle).
class PhaseClock {
 public:
  explicit PhaseClock(std::map<std::string, double>& phases) : phases_(phases) {}
  /// Ends the phase running since the last call and charges it to `name`.
  void Charge(const char* name) {
    auto now = std::chrono::steady_clock::now();
    phases_[name] += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }
  void Restart() { last_ = std::chrono::steady_clock::now(); }

 private:
  std::map<std::string, double>& phases_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// One variant's trials: the candidate's buffers (the only copy of the inputs), its plan and the
/// reference, run in the order the check needs.
class VariantTrials {
 public:
  VariantTrials(const common::Task& task, const common::Variant& variant, PreparedCandidate& candidate,
                CandidateBuffers& buffers, reference::ReferenceProgram& program, bool& reference_keeps_inputs,
                cudaStream_t stream, std::chrono::milliseconds timeout, GpuCheckResult& result)
      : task_(task),
        variant_(variant),
        candidate_(candidate),
        buffers_(buffers),
        program_(program),
        reference_keeps_inputs_(reference_keeps_inputs),
        stream_(stream),
        timeout_(timeout),
        result_(result),
        clock_(result.phases_ms) {}

  /// Trial `t` on inputs drawn from `seed` and distribution `dist` of `draws` (the task, or a copy
  /// whose inits are one of its measured domains, named `domain`); `repeats` candidate runs.
  std::optional<Failure> Run(int t, uint64_t seed, int dist, const common::Task& draws, const std::string& domain,
                             int repeats, bool& deterministic) {
    clock_.Restart();
    draws_ = &draws;
    // The inputs' digests come with the draw (float32 inputs are digested as they are written).
    std::map<std::string, uint64_t> drawn_digests;
    if (Status drawn = reference::GenerateInputsInto(draws, variant_.name, seed, dist, buffers_.inputs(),
                                                     &drawn_digests);
        !drawn.ok())
      return Harness(drawn.WithContext("input generation"));
    cudaDeviceSynchronize();
    clock_.Charge("inputs");
    auto before = buffers_.DigestReadOnly(drawn_digests);
    if (!before.ok()) return Harness(before.status());
    clock_.Charge("digest");
    common::TrialRecord record;
    record.variant = variant_.name;
    record.trial = t;
    record.distribution = dist;
    record.seed = seed;
    record.runs = repeats;
    if (!domain.empty()) record.domain = domain;
    std::optional<TensorSet> expected;
    std::map<std::string, uint64_t> first_outputs;
    for (int r = 0; r < repeats; ++r) {
      // Inputs are checked after the first run (the reference runs next, on them) and after the last;
      // a change made in between persists to the last check.
      bool check_inputs = r == 0 || r == repeats - 1;
      if (auto failure = RunCandidate(r, *before, check_inputs)) return failure;
      auto outputs = OutputViews();
      if (!outputs.ok()) return Harness(outputs.status());
      std::map<std::string, uint64_t> digests;  // only needed to tell repeated runs apart
      for (const auto& [name, tensor] : outputs->items()) {
        if (repeats == 1) break;
        auto digest = reference::Digest(tensor);
        if (!digest.ok()) return Harness(digest.status());
        digests[name] = *digest;
      }
      clock_.Charge("digest");
      if (r > 0 && digests == first_outputs) continue;  // bit-identical to the run already judged
      if (r > 0) deterministic = false;
      if (r == 0) {
        first_outputs = digests;
        // The reference runs only now, after the candidate, on the same inputs.
        auto ran = RunReference(seed, dist, *before, /*inputs_reused=*/repeats > 1);
        if (!ran.ok()) return Harness(ran.status());
        expected = std::move(*ran);
      }
      auto compared = reference::CompareAll(*expected, *outputs, task_.tolerance);
      if (!compared.ok()) return Harness(compared.status());
      clock_.Charge("compare");
      if (r == 0) {
        for (const auto& c : *compared) record.outputs.push_back(OutputRecord(c));
      }
      if (auto problem = CheckOutputs(*compared, OutputRules::For(task_), result_.checks)) {
        if (repeats > 1) *problem += " on run " + std::to_string(r + 1) + " of " + std::to_string(repeats);
        result_.trials.push_back(record);
        if (r > 0) result_.checks.repeat_runs = common::RepeatRuns{.failed = true};
        return Failure{VerdictStatus::kMismatch, *problem + " in trial " + std::to_string(t)};
      }
    }
    result_.trials.push_back(record);
    return std::nullopt;
  }

 private:
  /// One run of the plan from poisoned outputs, then the guard and inputs-unchanged checks.
  std::optional<Failure> RunCandidate(int repeat, const std::map<std::string, uint64_t>& before,
                                      bool check_inputs) {
    if (Status poisoned = buffers_.Poison(candidate_.env, kPoisonPerRun[repeat % 2]); !poisoned.ok())
      return Failure{VerdictStatus::kCrash, poisoned.message(), true};
    if (Status reset = candidate_.ResetState(stream_); !reset.ok())
      return Failure{VerdictStatus::kCrash, "restoring the module's globals: " + reset.message(), true};
    if (cudaDeviceSynchronize() != cudaSuccess)
      return Failure{VerdictStatus::kCrash, "device error before launch", true};
    clock_.Charge("poison");
    if (Status launched = candidate_.Run(stream_, buffers_.pointers()); !launched.ok()) {
      cudaGetLastError();
      bool healthy = cudaDeviceSynchronize() == cudaSuccess;
      return Failure{healthy ? VerdictStatus::kLaunchError : VerdictStatus::kCrash, launched.message(),
                     !healthy};
    }
    if (auto failure = WaitForStream(stream_, timeout_)) return failure;
    clock_.Charge("candidate");
    if (Status guards = buffers_.CheckGuards(); !guards.ok()) {
      result_.checks.guard_regions = common::CheckOutcome::kFail;
      return Failure{VerdictStatus::kMismatch, guards.message()};
    }
    if (!check_inputs) return std::nullopt;
    auto after = buffers_.DigestReadOnly();
    if (!after.ok()) return Failure{VerdictStatus::kCrash, after.status().message(), true};
    clock_.Charge("digest");
    for (const auto& [name, digest] : *after) {
      if (before.at(name) != digest) {
        result_.checks.inputs_unchanged = common::CheckOutcome::kFail;
        return Failure{VerdictStatus::kMismatch, "the candidate modified input \"" + name + "\""};
      }
    }
    return std::nullopt;
  }

  /// The reference's outputs on the candidate's input buffers. When the candidate runs again on the
  /// same inputs (`inputs_reused`), a reference that wrote its inputs gets them drawn again.
  StatusOr<TensorSet> RunReference(uint64_t seed, int dist, const std::map<std::string, uint64_t>& before,
                                   bool inputs_reused) {
    KFORGE_ASSIGN_OR_RETURN(TensorSet expected, program_.Run(buffers_.inputs()));
    cudaDeviceSynchronize();
    clock_.Charge("reference");
    if (!inputs_reused || reference_keeps_inputs_) return expected;
    KFORGE_ASSIGN_OR_RETURN(auto after, buffers_.DigestReadOnly());
    clock_.Charge("digest");
    if (after != before) {
      KFORGE_RETURN_IF_ERROR(
          reference::GenerateInputsInto(*draws_, variant_.name, seed, dist, buffers_.inputs()));
      KFORGE_ASSIGN_OR_RETURN(after, buffers_.DigestReadOnly());
      if (after != before) return Status::Internal("the reference modifies its params");
    } else {
      reference_keeps_inputs_ = true;
    }
    return expected;
  }

  StatusOr<TensorSet> OutputViews() const {
    TensorSet outputs;
    for (const common::TensorSpec& spec : task_.outputs) {
      KFORGE_ASSIGN_OR_RETURN(Tensor view, buffers_.View(spec.name));
      outputs.Set(spec.name, std::move(view));
    }
    return outputs;
  }

  const common::Task& task_;
  const common::Variant& variant_;
  PreparedCandidate& candidate_;
  CandidateBuffers& buffers_;
  reference::ReferenceProgram& program_;
  bool& reference_keeps_inputs_;
  cudaStream_t stream_;
  std::chrono::milliseconds timeout_;
  GpuCheckResult& result_;
  PhaseClock clock_;
  const common::Task* draws_ = &task_;
};

}  // namespace

std::filesystem::path WorkerLogPath() {
  return common::CacheRoot() / "logs" / ("worker-" + std::to_string(getpid()) + ".log");
}

std::string LogFailure(const std::string& text) {
  std::filesystem::path path = WorkerLogPath();
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::app);
  if (!out) return "";
  out << text << "\n";
  return out ? path.string() : "";
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

int64_t GpuChecker::ResidentBytes(const common::Task& task) const {
  int64_t bytes = 0;
  std::string prefix = task.dir.string() + "#";
  for (const auto& [key, program] : programs_) {
    if (key.rfind(prefix, 0) != 0) continue;
    for (const auto& [name, tensor] : program->params().items())
      bytes += static_cast<int64_t>(tensor.bytes());
  }
  return bytes;
}

Status GpuChecker::ReserveFor(const common::Task& task, const MemoryPlan& plan, bool& scratch_only) {
  scratch_only = false;
  reference::DeviceMemoryUse use = reference::DeviceMemoryOf(device_.index);
  // Once the reference is loaded its params are resident; everything else of the budget is to come.
  int64_t needed = plan.budget() - std::min(plan.params, ResidentBytes(task));
  if (plan.budget() > use.total_bytes) {
    scratch_only = plan.budget() - plan.scratch <= use.total_bytes;
    return Status::ResourceExhausted("needs " + FormatBytes(plan.budget()) + " of device memory (footprint " +
                                     FormatBytes(plan.footprint()) + " plus judging), the device has " +
                                     FormatBytes(use.total_bytes));
  }
  if (needed <= use.free_bytes) return Status::Ok();
  std::string prefix = task.dir.string() + "#";
  for (auto it = programs_.begin(); it != programs_.end();) {
    it = it->first.rfind(prefix, 0) == 0 ? std::next(it) : programs_.erase(it);
  }
  reference::ReleaseCachedDeviceMemory();
  use = reference::DeviceMemoryOf(device_.index);
  if (needed <= use.free_bytes) return Status::Ok();
  scratch_only = needed - plan.scratch <= use.free_bytes;
  return Status::ResourceExhausted("needs " + FormatBytes(needed) + " more device memory, " +
                                   FormatBytes(use.free_bytes) + " free");
}

GpuCheckResult GpuChecker::Check(const GpuCheckRequest& request) {
  try {
    return CheckOrFail(request);
  } catch (const std::exception& e) {
    std::string text = e.what();
    std::string log = LogFailure(text);
    GpuCheckResult result;
    result.status = VerdictStatus::kHarnessError;
    result.message = "worker: " + text.substr(0, std::min<size_t>(text.find('\n'), 300)) +
                     (log.empty() ? "" : " (details in " + log + ")");
    result.worker_must_exit = cudaDeviceSynchronize() != cudaSuccess;
    return result;
  }
}

GpuCheckResult GpuChecker::CheckOrFail(const GpuCheckRequest& request) {
  GpuCheckResult result;
  auto fail = [&](const Failure& failure, const std::string& where = "") {
    result.status = failure.status;
    result.message = failure.message + where;
    result.worker_must_exit = failure.fatal;
    return result;
  };
  auto task_or = TaskFor(request.task_dir);
  if (!task_or.ok()) return fail(Harness(task_or.status()));
  const common::Task& task = **task_or;

  auto library = cuda::KernelLibrary::Load(request.cubin);
  if (!library.ok() && library.status().code() == Status::Code::kInvalidArgument)
    return fail({VerdictStatus::kInvalidSolution, library.status().message()});
  if (!library.ok())
    return fail({VerdictStatus::kLaunchError, "cannot load the CUBIN: " + library.status().message()});
  auto owned_stream = cuda::CreateStream();
  if (!owned_stream.ok()) return fail({VerdictStatus::kCrash, owned_stream.status().message(), true});

  std::string solution_hash = common::SolutionHash(request.solution);
  cuda::LaunchLimits limits = cuda::LimitsFor(device_);
  result.checks.poisoned_outputs = common::CheckOutcome::kPass;
  result.checks.guard_regions = common::CheckOutcome::kPass;
  result.checks.inputs_unchanged = common::CheckOutcome::kPass;
  result.checks.repeat_runs = common::RepeatRuns{.count = kRepeatsOnFirstTrial};
  bool deterministic = true;
  int64_t peak = 0;
  std::vector<common::Task> domain_tasks;
  for (const common::InputDomain& domain : task.domains) domain_tasks.push_back(WithDomain(task, domain));

  // One variant's trials; the failure that stopped them, if any.
  auto check_variant = [&](size_t v) -> std::optional<Failure> {
    const common::Variant& variant = task.variants[v];
    auto prepared = PrepareCandidate(task, variant, request.solution, **library, limits, device_.index);
    if (!prepared.ok()) return Failure{VerdictStatus::kInvalidSolution, prepared.status().message()};

    bool scratch_only = false;
    if (Status room = ReserveFor(task, prepared->memory, scratch_only); !room.ok()) {
      if (scratch_only)
        return Failure{VerdictStatus::kInvalidSolution,
                       "scratch of " + FormatBytes(prepared->memory.scratch) + " does not fit: " + room.message()};
      return Harness(room.WithContext("task " + task.id));
    }
    auto load_start = std::chrono::steady_clock::now();
    auto program = ProgramFor(task, variant.name);
    result.reference_load_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
    if (!program.ok()) return Harness(program.status().WithContext("reference"));

    reference::DeviceMemoryUse start = reference::DeviceMemoryOf(device_.index);
    const int64_t baseline = start.allocated_bytes - ResidentBytes(task);
    reference::ResetPeakDeviceMemory(device_.index);
    {
      auto buffers = CandidateBuffers::Allocate(prepared->env, (*program)->params(), device_.index);
      if (!buffers.ok()) {
        if (buffers.status().code() == Status::Code::kResourceExhausted && prepared->memory.scratch > 0)
          return Failure{VerdictStatus::kInvalidSolution, "scratch of " + FormatBytes(prepared->memory.scratch) +
                                                              " does not fit: " + buffers.status().message()};
        return Harness(buffers.status());
      }
      const std::string program_key = task.dir.string() + "#" + variant.name;
      bool reference_keeps_inputs = references_keep_inputs_.count(program_key) > 0;
      VariantTrials trials(task, variant, *prepared, *buffers, **program, reference_keeps_inputs,
                           owned_stream->get(), request.kernel_timeout, result);
      int count = v == 0 ? request.trials : 1;
      for (int t = 0; t < count; ++t) {
        TrialDraw draw = TrialDrawFor(v, t, count, static_cast<int>(domain_tasks.size()));
        const common::Task& draws = draw.domain >= 0 ? domain_tasks[draw.domain] : task;
        const std::string domain_name = draw.domain >= 0 ? task.domains[draw.domain].name : "";
        const int dist = draw.dist;
        uint64_t seed = TrialSeed(request.seed, solution_hash, static_cast<int>(v), t);
        int repeats = t == 0 && v == 0 ? kRepeatsOnFirstTrial : 1;
        if (auto failure = trials.Run(t, seed, dist, draws, domain_name, repeats, deterministic)) {
          if (failure->fatal) {
            buffers->Abandon();
            library->release();
          }
          return failure;
        }
      }
      if (reference_keeps_inputs) references_keep_inputs_.insert(program_key);
      if (v == 0) {
        result.plan_split = TimePlanSplit(*prepared, buffers->pointers(), owned_stream->get());
        // Library ops that do all the work are PyTorch again, not a kernel: say so.
        if (result.plan_split)
          result.checks.library_ops = std::string(common::LibraryOpsShare(result.plan_split->ops_fraction));
      }
    }
    int64_t variant_peak = reference::DeviceMemoryOf(device_.index).peak_bytes - baseline;
    if (v == 0 || !result.memory || prepared->memory.budget() > result.memory->budget_bytes)
      result.memory = prepared->memory.Record(0);
    peak = std::max(peak, variant_peak);
    result.memory->peak_device_bytes = peak;
    return std::nullopt;
  };

  // The declared variants decide the verdict; the derived ones (sizes the problem never asked for) run
  // after them and are reported as the shape_general check. Their first failure ends them.
  for (common::VariantKind kind : {common::VariantKind::kDeclared, common::VariantKind::kDerived}) {
    for (size_t v = 0; v < task.variants.size(); ++v) {
      const common::Variant& variant = task.variants[v];
      if (variant.kind != kind) continue;
      std::string where = task.variants.size() > 1 ? " (variant " + variant.name + ")" : "";
      const common::Checks checks_before = result.checks;  // a derived variant's failure marks none of them
      std::optional<Failure> failure = check_variant(v);
      if (kind == common::VariantKind::kDeclared) {
        if (failure) return fail(*failure, where);
        continue;
      }
      if (!failure) {
        result.checks.shape_general = common::CheckOutcome::kPass;
        continue;
      }
      result.checks = checks_before;
      result.checks.shape_general = failure->status == VerdictStatus::kHarnessError
                                        ? common::CheckOutcome::kNotRun
                                        : common::CheckOutcome::kFail;
      result.checks.shape_general_detail =
          std::string(common::VerdictStatusName(failure->status)) + ": " + failure->message + where;
      result.worker_must_exit = failure->fatal;
      break;
    }
  }
  result.checks.bitwise_deterministic = deterministic;
  return result;
}

}  // namespace kforge::worker
