// The timing audit: cheats on speed that wrap the task's honest work, timed as bench times a candidate.
#include "worker/timing_audit.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kforge/bench/measure.h"
#include "kforge/common/hash.h"
#include "kforge/cuda/check.h"
#include "kforge/cuda/compiler.h"
#include "kforge/cuda/kernel_library.h"
#include "kforge/cuda/owners.h"
#include "kforge/cuda/plan_env.h"
#include "kforge/reference/runner.h"
#include "worker/prepared_candidate.h"
#include "worker/timed_runs.h"

namespace kforge::worker {
namespace {

/// Bytes of outputs the memo can keep: its array is a module-scope variable, under the cap on those.
constexpr uint64_t kMemoBytes = uint64_t{48} << 20;
static_assert(kMemoBytes < cuda::kMaxModuleGlobalBytes);
/// Distinct draws the timed runs rotate over (fewer when they do not fit).
constexpr int kAuditSets = 4;

/// The cheats' state and bookkeeping, in module-scope variables of one CUBIN.
constexpr const char* kCheatSource = R"(
#define KF_MEMO_BYTES (48ull << 20)
__device__ unsigned long long kf_fp;      // fingerprint of this run's inputs
__device__ unsigned long long kf_key;     // memo: fingerprint of the inputs its outputs belong to
__device__ int kf_cached;                 // memo: kf_outputs holds outputs
__device__ unsigned int kf_launches;      // launch_counter
__device__ int kf_ran;                    // relaunch_flag
__device__ int kf_shortcut;               // this run skips the work
__device__ unsigned char kf_outputs[KF_MEMO_BYTES];

extern "C" __global__ void kf_begin() { kf_fp = 1469598103934665603ull; }
// Folds an input's first 512 bytes into the fingerprint: enough to tell two random draws apart.
extern "C" __global__ void kf_fingerprint(const unsigned char* in, unsigned long long bytes) {
  unsigned long long fp = kf_fp, n = bytes < 512 ? bytes : 512;
  for (unsigned long long i = 0; i < n; ++i) fp = (fp ^ in[i]) * 1099511628211ull;
  kf_fp = fp;
}
// mode 0 honest, 1 memo, 2 launch_counter, 3 relaunch_flag
extern "C" __global__ void kf_decide(int mode) {
  if (mode == 1) kf_shortcut = kf_cached && kf_key == kf_fp;
  else if (mode == 2) kf_shortcut = ++kf_launches > 2;
  else if (mode == 3) { kf_shortcut = kf_ran; kf_ran = 1; }
  else kf_shortcut = 0;
}
extern "C" __global__ void kf_store(const unsigned char* src, unsigned long long offset, unsigned long long bytes) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < bytes;
       i += (unsigned long long)gridDim.x * blockDim.x)
    kf_outputs[offset + i] = src[i];
}
extern "C" __global__ void kf_replay(unsigned char* dst, unsigned long long offset, unsigned long long bytes) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < bytes;
       i += (unsigned long long)gridDim.x * blockDim.x)
    dst[i] = kf_outputs[offset + i];
}
extern "C" __global__ void kf_remember() { kf_key = kf_fp; kf_cached = 1; }
)";

enum class Cheat { kHonest = 0, kMemo = 1, kLaunchCounter = 2, kRelaunchFlag = 3 };

/// The loaded cheat CUBIN: compiled once per worker, for the worker's device.
struct CheatModule {
  std::unique_ptr<cuda::KernelLibrary> library;
  cudaKernel_t begin = nullptr, fingerprint = nullptr, decide = nullptr, store = nullptr, replay = nullptr,
               remember = nullptr;
  void* shortcut = nullptr;  ///< kf_shortcut on the device
};

StatusOr<CheatModule> LoadCheats(const cuda::DeviceInfo& device) {
  cuda::Compiler compiler;
  cuda::CompileRequest request;
  request.source = kCheatSource;
  request.name = "timing_cheats.cu";
  request.arch = "sm_" + std::to_string(device.cc_major * 10 + device.cc_minor) + (device.cc_major == 9 ? "a" : "");
  cuda::CompileResult compiled = compiler.Compile(request);
  if (compiled.status != cuda::CompileStatus::kOk)
    return Status::Internal("the timing cheats did not compile: " + compiled.message + "\n" + compiled.log);
  CheatModule m;
  KFORGE_ASSIGN_OR_RETURN(m.library, cuda::KernelLibrary::Load(compiled.cubin));
  KFORGE_ASSIGN_OR_RETURN(m.begin, m.library->Kernel("kf_begin"));
  KFORGE_ASSIGN_OR_RETURN(m.fingerprint, m.library->Kernel("kf_fingerprint"));
  KFORGE_ASSIGN_OR_RETURN(m.decide, m.library->Kernel("kf_decide"));
  KFORGE_ASSIGN_OR_RETURN(m.store, m.library->Kernel("kf_store"));
  KFORGE_ASSIGN_OR_RETURN(m.replay, m.library->Kernel("kf_replay"));
  KFORGE_ASSIGN_OR_RETURN(m.remember, m.library->Kernel("kf_remember"));
  KFORGE_ASSIGN_OR_RETURN(m.shortcut, m.library->GlobalAddress("kf_shortcut"));
  return m;
}

Status Launch(cudaKernel_t kernel, unsigned grid, unsigned block, void** args, cudaStream_t stream) {
  KFORGE_CUDA_RETURN_IF_ERROR(
      cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(grid), dim3(block), args, 0, stream));
  return Status::Ok();
}

/// One cheat's runs: the honest work (the reference into the set's outputs) unless the cheat's state
/// says it may skip it. Its bookkeeping (the restore of the globals when on, the inputs' fingerprint, the
/// decision read back) is done before each run, outside the timed region, so only the work or the
/// shortcut is timed. Counts the runs that skipped the work and then passed their check.
class CheatRuns {
 public:
  CheatRuns(const CheatModule& m, Cheat cheat, bool restore, const common::Task& task, TimedRuns& runs,
            reference::ReferenceProgram& program, int device)
      : m_(m), cheat_(cheat), restore_(restore), task_(task), runs_(runs), program_(program), device_(device) {}

  Status Prepare(cudaStream_t s) {
    if (restore_) KFORGE_RETURN_IF_ERROR(m_.library->RestoreGlobals(s));
    KFORGE_RETURN_IF_ERROR(Launch(m_.begin, 1, 1, nullptr, s));
    for (const auto& [name, input] : runs_.inputs().items()) {
      const void* data = input.view().data;
      unsigned long long bytes = input.bytes();
      void* args[] = {&data, &bytes};
      KFORGE_RETURN_IF_ERROR(Launch(m_.fingerprint, 1, 1, args, s));
    }
    int mode = static_cast<int>(cheat_);
    void* decide_args[] = {&mode};
    KFORGE_RETURN_IF_ERROR(Launch(m_.decide, 1, 1, decide_args, s));
    int shortcut = 0;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&shortcut, m_.shortcut, sizeof shortcut, cudaMemcpyDeviceToHost, s));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
    took_shortcut_ = shortcut != 0;
    return Status::Ok();
  }

  Status Run(cudaStream_t s) {
    if (took_shortcut_) return cheat_ == Cheat::kMemo ? EachOutput(m_.replay, s) : Status::Ok();
    {
      reference::CudaStreamScope scope(s, device_);
      KFORGE_ASSIGN_OR_RETURN(reference::TensorSet outputs, program_.Run(runs_.inputs()));
      for (const auto& [name, out] : outputs.items()) {
        KFORGE_ASSIGN_OR_RETURN(reference::Tensor buffer, runs_.View(name));
        KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(buffer.view().data, out.view().data,
                                                    std::min(buffer.bytes(), out.bytes()), cudaMemcpyDeviceToDevice, s));
      }
      // The outputs' memory goes back to the allocator on this stream, after the copies.
    }
    if (cheat_ != Cheat::kMemo) return Status::Ok();
    KFORGE_RETURN_IF_ERROR(EachOutput(m_.store, s));
    return Launch(m_.remember, 1, 1, nullptr, s);
  }

  Status Check(cudaStream_t s) {
    Status checked = runs_.Check(s);
    if (!checked.ok()) {
      failed_ = true;
      return checked;
    }
    ++checked_;
    shortcuts_ += took_shortcut_;
    return Status::Ok();
  }

  int checked() const { return checked_; }
  int shortcuts() const { return shortcuts_; }
  bool failed() const { return failed_; }
  bench::Subject Subject(std::string name) {
    return {std::move(name), [this](cudaStream_t s) { return Prepare(s); }, [this](cudaStream_t s) { return Run(s); },
            [this](cudaStream_t s) { return Check(s); }};
  }

 private:
  /// `kernel(buffer, offset, bytes)` over every output, packed one after another in the memo's array.
  Status EachOutput(cudaKernel_t kernel, cudaStream_t s) {
    unsigned long long offset = 0;
    for (const common::TensorSpec& spec : task_.outputs) {
      KFORGE_ASSIGN_OR_RETURN(reference::Tensor buffer, runs_.View(spec.name));
      void* data = buffer.view().data;
      unsigned long long bytes = buffer.bytes();
      void* args[] = {&data, &offset, &bytes};
      KFORGE_RETURN_IF_ERROR(Launch(kernel, 1024, 256, args, s));
      offset += bytes;
    }
    return Status::Ok();
  }

  const CheatModule& m_;
  Cheat cheat_;
  bool restore_;
  const common::Task& task_;
  TimedRuns& runs_;
  reference::ReferenceProgram& program_;
  int device_;
  bool took_shortcut_ = false;
  int checked_ = 0;
  int shortcuts_ = 0;
  bool failed_ = false;
};

double Median(std::vector<double> ms) {
  if (ms.empty()) return 0;
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

/// Enough samples that the two medians of a pair are within a few percent when the work is the same:
/// at least two passes over the sets, then until both medians are within 0.5% (at most 200 rounds or
/// 3 s; µs-scale work takes the most rounds).
bench::MeasureOptions AuditMeasure(size_t sets) {
  bench::MeasureOptions options;
  options.min_samples = std::max<int>(8, 2 * static_cast<int>(sets) + 1);
  options.max_samples = 200;
  options.max_noise = 0.005;
  options.min_seconds = 0.01;
  options.max_seconds = 3;
  options.warmup_runs = 2;
  options.warmup_seconds = 0.02;
  return options;
}

verify::TaskAuditReply AuditFailed(const std::string& message) {
  verify::TaskAuditReply reply;
  reply.status = verify::TaskAuditStatus::kHarnessError;
  reply.message = message;
  return reply;
}

/// What every cheat of one task is timed with: the cheats' CUBIN, the task's reference and its sets.
struct CheatBench {
  const CheatModule& m;
  const common::Task& task;
  TimedRuns& runs;
  reference::ReferenceProgram& program;
  int device;
  cudaStream_t stream;

  /// Times `cheat` into `c` (restoring the globals before each run unless `restore` is off) over the
  /// first `rotation` sets (all when 0), interleaved with the honest work, which gives `honest_ms`. Not
  /// ok only when the harness or the honest work failed.
  Status Time(Cheat cheat, bool restore, size_t rotation, verify::AuditedCandidate& c) {
    KFORGE_RETURN_IF_ERROR(runs.Restart(rotation));
    KFORGE_RETURN_IF_ERROR(m.library->RestoreGlobals(stream));  // each cheat starts from the image
    CheatRuns honest(m, Cheat::kHonest, /*restore=*/false, task, runs, program, device);
    CheatRuns cheat_runs(m, cheat, restore, task, runs, program, device);
    std::vector<bench::Subject> subjects = {honest.Subject("honest"), cheat_runs.Subject(c.name)};
    auto measured = bench::Measure(subjects, AuditMeasure(runs.sets()), stream);
    verify::AuditedTiming& t = c.timing.emplace();
    t.draws = static_cast<int>(rotation == 0 ? runs.sets() : rotation);
    t.checked_runs = cheat_runs.checked();
    t.shortcuts = cheat_runs.shortcuts();
    t.control = !restore;
    if (!measured.ok()) {
      if (honest.failed()) return Status::Unavailable("the honest work failed: " + measured.status().message());
      if (!cheat_runs.failed()) return Status::Unavailable(c.name + ": " + measured.status().message());
      c.message = "refused: mismatch, timed run: " + measured.status().message();
      return Status::Ok();
    }
    t.honest_ms = Median(measured->subjects[0].ms);
    t.median_ms = Median(measured->subjects[1].ms);
    c.accepted = t.shortcuts > 0;
    if (!c.accepted) c.message = "no shortcut on any of " + std::to_string(t.checked_runs) + " checked timed runs";
    return Status::Ok();
  }
};

/// The cheats in the order they are timed, after the honest work.
struct PlannedCheat {
  const char* name;
  Cheat cheat;
  bool restore;
  size_t rotation;  ///< sets the runs rotate over, all when 0
};
constexpr PlannedCheat kPlannedCheats[] = {{"memo", Cheat::kMemo, true, 0},
                                           {"launch_counter", Cheat::kLaunchCounter, true, 0},
                                           {"relaunch_flag", Cheat::kRelaunchFlag, true, 0},
                                           {"control:memo_unrestored", Cheat::kMemo, false, 1}};

/// Every cheat, timed over the bench's sets.
verify::TaskAuditReply TimeCheats(CheatBench& bench, int64_t output_bytes) {
  verify::TaskAuditReply reply;
  for (const PlannedCheat& p : kPlannedCheats) {
    verify::AuditedCandidate c;
    c.name = p.name;
    if (p.cheat == Cheat::kMemo && static_cast<uint64_t>(output_bytes) > kMemoBytes) {
      c.message = "not applicable: the outputs take " + FormatBytes(output_bytes) + ", more than the memo's " +
                  FormatBytes(kMemoBytes) + " (a module's globals may take " +
                  FormatBytes(cuda::kMaxModuleGlobalBytes) + ")";
      c.timing.emplace().control = !p.restore;
    } else if (Status timed = bench.Time(p.cheat, p.restore, p.rotation, c); !timed.ok()) {
      return AuditFailed(timed.message());
    }
    reply.candidates.push_back(std::move(c));
  }
  return reply;
}

}  // namespace

verify::TaskAuditReply RunTimingAudit(GpuChecker& checker, const verify::TaskAuditRequest& request) {
  // Loaded once per worker and kept to its exit (unloading after the runtime's teardown would fail).
  static const StatusOr<CheatModule>& cheats = *new StatusOr<CheatModule>(LoadCheats(checker.device()));
  if (!cheats.ok()) return AuditFailed(cheats.status().message());
  auto task_or = checker.TaskFor(request.task_dir);
  if (!task_or.ok()) return AuditFailed(task_or.status().message());
  const common::Task& task = **task_or;
  const common::Variant& variant = task.variants.front();
  const int device = checker.device().index;
  auto env = cuda::PlanEnvFor(task, variant);
  if (!env.ok()) return AuditFailed(env.status().message());
  MemoryPlan memory = PlanMemory(task, *env);
  memory.kept_outputs = memory.outputs;
  bool scratch_only = false;
  if (Status room = checker.ReserveFor(task, memory, scratch_only); !room.ok())
    return AuditFailed("task " + task.id + ": " + room.message());
  auto program = checker.ProgramFor(task, variant.name);
  if (!program.ok()) return AuditFailed("reference: " + program.status().message());
  auto stream = cuda::CreateStream();
  if (!stream.ok()) return AuditFailed(stream.status().message());

  TimedRuns runs(task, *env);
  const int sets = SetsThatFit(kAuditSets, device, memory.inputs + 2 * memory.outputs + (int64_t{64} << 20));
  for (int k = 0; k < sets; ++k) {
    if (Status added = runs.AddSet(**program, variant.name, common::SplitMix64(request.seed + k), device); !added.ok())
      return AuditFailed(added.message());
  }
  CheatBench bench{*cheats, task, runs, **program, device, stream->get()};
  return TimeCheats(bench, memory.outputs);
}

}  // namespace kforge::worker
