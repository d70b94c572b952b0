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
  std::optional<Failure> Run(int t, uint64_t seed, int dist, const common::Task& draws,
                             const std::string& domain, int repeats, bool& deterministic) {
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

/// One candidate on one task: what its variants' trials share (the loaded CUBIN, the stream, the
/// draws of the task's measured domains), and the result they fill in.
class GpuChecker::CandidateCheck {
 public:
  CandidateCheck(GpuChecker& checker, const GpuCheckRequest& request, const common::Task& task,
                 std::unique_ptr<cuda::KernelLibrary>& library, cudaStream_t stream, GpuCheckResult& result)
      : checker_(checker),
        request_(request),
        task_(task),
        library_(library),
        stream_(stream),
        result_(result),
        solution_hash_(common::SolutionHash(request.solution)),
        limits_(cuda::LimitsFor(checker.device_)) {
    for (const common::InputDomain& domain : task.domains) domain_tasks_.push_back(WithDomain(task, domain));
  }

  /// The declared variants, which decide the verdict; the first failure, with its variant named.
  std::optional<Failure> RunDeclaredVariants() {
    for (size_t v = 0; v < task_.variants.size(); ++v) {
      if (task_.variants[v].kind != common::VariantKind::kDeclared) continue;
      if (std::optional<Failure> failure = RunVariant(v)) {
        failure->message += Where(v);
        return failure;
      }
    }
    return std::nullopt;
  }

  /// The derived variants (sizes the problem never asked for), reported as the shape_general check. Their
  /// first failure ends them, and marks none of the other checks.
  void RunDerivedVariants() {
    for (size_t v = 0; v < task_.variants.size(); ++v) {
      if (task_.variants[v].kind != common::VariantKind::kDerived) continue;
      const common::Checks checks_before = result_.checks;
      std::optional<Failure> failure = RunVariant(v);
      if (!failure) {
        result_.checks.shape_general = common::CheckOutcome::kPass;
        continue;
      }
      result_.checks = checks_before;
      result_.checks.shape_general = failure->status == VerdictStatus::kHarnessError
                                         ? common::CheckOutcome::kNotRun
                                         : common::CheckOutcome::kFail;
      result_.checks.shape_general_detail =
          std::string(common::VerdictStatusName(failure->status)) + ": " + failure->message + Where(v);
      result_.worker_must_exit = failure->fatal;
      return;
    }
  }

  bool deterministic() const { return deterministic_; }

 private:
  std::string Where(size_t v) const {
    return task_.variants.size() > 1 ? " (variant " + task_.variants[v].name + ")" : "";
  }

  /// Variant `v`: the candidate prepared for its sizes, room made for it, the reference loaded, then its
  /// trials; the device memory it used goes into the result.
  std::optional<Failure> RunVariant(size_t v) {
    const common::Variant& variant = task_.variants[v];
    auto prepared =
        PrepareCandidate(task_, variant, request_.solution, *library_, limits_, checker_.device_.index);
    if (!prepared.ok()) return Failure{VerdictStatus::kInvalidSolution, prepared.status().message()};

    bool scratch_only = false;
    if (Status room = checker_.ReserveFor(task_, prepared->memory, scratch_only); !room.ok()) {
      if (scratch_only)
        return Failure{
            VerdictStatus::kInvalidSolution,
            "scratch of " + FormatBytes(prepared->memory.scratch) + " does not fit: " + room.message()};
      return Harness(room.WithContext("task " + task_.id));
    }
    auto load_start = std::chrono::steady_clock::now();
    auto program = checker_.ProgramFor(task_, variant.name);
    result_.reference_load_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
    if (!program.ok()) return Harness(program.status().WithContext("reference"));

    const int device = checker_.device_.index;
    const int64_t baseline =
        reference::DeviceMemoryOf(device).allocated_bytes - checker_.ResidentBytes(task_);
    reference::ResetPeakDeviceMemory(device);
    if (std::optional<Failure> failure = RunTrials(v, *prepared, **program)) return failure;
    const int64_t variant_peak = reference::DeviceMemoryOf(device).peak_bytes - baseline;
    if (v == 0 || !result_.memory || prepared->memory.budget() > result_.memory->budget_bytes)
      result_.memory = prepared->memory.Record(0);
    peak_ = std::max(peak_, variant_peak);
    result_.memory->peak_device_bytes = peak_;
    return std::nullopt;
  }

  /// Variant `v`'s trials in buffers of their own: all of request.trials for the first variant, one for
  /// the others. The first variant also times the plan's split between kernels and library ops.
  std::optional<Failure> RunTrials(size_t v, PreparedCandidate& prepared,
                                   reference::ReferenceProgram& program) {
    const common::Variant& variant = task_.variants[v];
    auto buffers = CandidateBuffers::Allocate(prepared.env, program.params(), checker_.device_.index);
    if (!buffers.ok()) {
      if (buffers.status().code() == Status::Code::kResourceExhausted && prepared.memory.scratch > 0)
        return Failure{VerdictStatus::kInvalidSolution, "scratch of " + FormatBytes(prepared.memory.scratch) +
                                                            " does not fit: " + buffers.status().message()};
      return Harness(buffers.status());
    }
    const std::string program_key = task_.dir.string() + "#" + variant.name;
    bool reference_keeps_inputs = checker_.references_keep_inputs_.count(program_key) > 0;
    VariantTrials trials(task_, variant, prepared, *buffers, program, reference_keeps_inputs, stream_,
                         request_.kernel_timeout, result_);
    const int count = v == 0 ? request_.trials : 1;
    for (int t = 0; t < count; ++t) {
      TrialDraw draw = TrialDrawFor(v, t, count, static_cast<int>(domain_tasks_.size()));
      const common::Task& draws = draw.domain >= 0 ? domain_tasks_[draw.domain] : task_;
      const std::string domain_name = draw.domain >= 0 ? task_.domains[draw.domain].name : "";
      uint64_t seed = TrialSeed(request_.seed, solution_hash_, static_cast<int>(v), t);
      int repeats = t == 0 && v == 0 ? kRepeatsOnFirstTrial : 1;
      if (auto failure = trials.Run(t, seed, draw.dist, draws, domain_name, repeats, deterministic_)) {
        if (failure->fatal) {  // the context is broken: nothing of it may be freed
          buffers->Abandon();
          library_.release();
        }
        return failure;
      }
    }
    if (reference_keeps_inputs) checker_.references_keep_inputs_.insert(program_key);
    if (v == 0) {
      result_.plan_split = TimePlanSplit(prepared, buffers->pointers(), stream_);
      // Library ops that do all the work are PyTorch again, not a kernel: say so.
      if (result_.plan_split)
        result_.checks.library_ops = std::string(common::LibraryOpsShare(result_.plan_split->ops_fraction));
    }
    return std::nullopt;
  }

  GpuChecker& checker_;
  const GpuCheckRequest& request_;
  const common::Task& task_;
  std::unique_ptr<cuda::KernelLibrary>& library_;
  cudaStream_t stream_;
  GpuCheckResult& result_;
  const std::string solution_hash_;
  const cuda::LaunchLimits limits_;
  std::vector<common::Task> domain_tasks_;
  bool deterministic_ = true;
  int64_t peak_ = 0;
};

GpuCheckResult GpuChecker::CheckOrFail(const GpuCheckRequest& request) {
  GpuCheckResult result;
  auto fail = [&](const Failure& failure) {
    result.status = failure.status;
    result.message = failure.message;
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

  result.checks.poisoned_outputs = common::CheckOutcome::kPass;
  result.checks.guard_regions = common::CheckOutcome::kPass;
  result.checks.inputs_unchanged = common::CheckOutcome::kPass;
  result.checks.repeat_runs = common::RepeatRuns{.count = kRepeatsOnFirstTrial};
  CandidateCheck check(*this, request, task, *library, owned_stream->get(), result);
  if (std::optional<Failure> failure = check.RunDeclaredVariants()) return fail(*failure);
  check.RunDerivedVariants();
  result.checks.bitwise_deterministic = check.deterministic();
  return result;
}

}  // namespace kforge::worker
