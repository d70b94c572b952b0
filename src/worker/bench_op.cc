// Bench inside the worker: inputs, expected outputs, the candidate in guarded buffers, the reference
// on kforge's stream, then bench::Measure. Every timed candidate run starts from poisoned outputs and
// is compared with the reference, so a kernel that changes behaviour after its first launches fails.
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
#include "kforge/common/base64.h"
#include "kforge/common/verdict.h"
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

/// Poison for timed runs: NaN in every float type.
constexpr uint8_t kPoison = 0xFF;
/// Copies of the inputs (and of the candidate's buffers) that successive samples rotate through, so
/// that a median does not hang on where one allocation happened to land in memory (L2 slices, DRAM
/// channels); fewer when they would take more than a quarter of the free device memory. On µs-scale
/// kernels the largest run-to-run spread of a median was 3.3% with one placement, 2.5% with 4, 2.1% with 16.
constexpr int kPlacements = 16;

/// How many placements fit: each takes `bytes`.
int PlacementsFor(size_t bytes) {
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess || bytes == 0) return 1;
  size_t fit = free_bytes / 4 / bytes;
  return static_cast<int>(std::clamp<size_t>(fit, 1, kPlacements));
}

/// A device copy of every tensor in `set`.
StatusOr<reference::TensorSet> Clone(const reference::TensorSet& set) {
  reference::TensorSet copy;
  for (const auto& [name, tensor] : set.items()) {
    KFORGE_ASSIGN_OR_RETURN(reference::Tensor out, reference::EmptyLike(tensor));
    if (cudaMemcpy(out.view().data, tensor.view().data, tensor.bytes(), cudaMemcpyDeviceToDevice) !=
        cudaSuccess)
      return Status::Unavailable("copy of input " + name + " failed");
    copy.Set(name, std::move(out));
  }
  return copy;
}

size_t BytesOf(const reference::TensorSet& set) {
  size_t bytes = 0;
  for (const auto& [name, tensor] : set.items()) bytes += tensor.bytes();
  return bytes;
}

nlohmann::json Fail(VerdictStatus status, const std::string& message) {
  return {{"status", common::VerdictStatusName(status)}, {"message", message}};
}

/// The candidate's side of a bench: its buffer sets (one per placement), bound plan and the expected
/// outputs. A sample runs on one set; its check moves on to the next.
class TimedCandidate {
 public:
  TimedCandidate(const cuda::PlanEnv& env, cuda::BoundPlan plan, const reference::TensorSet& expected,
                 const common::Tolerance& tolerance)
      : env_(env), plan_(std::move(plan)), expected_(expected), tolerance_(tolerance) {}

  /// Guarded copies of one set of inputs and the params; outputs and scratch poisoned.
  Status AddPlacement(const reference::TensorSet& inputs, const reference::TensorSet& params) {
    KFORGE_ASSIGN_OR_RETURN(CandidateBuffers buffers, CandidateBuffers::Allocate(env_, inputs, params));
    KFORGE_RETURN_IF_ERROR(buffers.Poison(env_, kPoison));
    sets_.push_back(std::move(buffers));
    return Status::Ok();
  }

  Status Run(cudaStream_t stream) { return plan_.Run(stream, sets_[next_].pointers()); }

  /// Guards intact and outputs within tolerance; then poisons the outputs for the next run.
  Status Check(cudaStream_t stream) {
    if (cudaStreamSynchronize(stream) != cudaSuccess)
      return Status::Unavailable(std::string("kernel faulted: ") + cudaGetErrorName(cudaGetLastError()));
    CandidateBuffers& buffers = sets_[next_];
    if (Status guards = buffers.CheckGuards(); !guards.ok()) return Mismatch(guards.message());
    reference::TensorSet outputs;
    for (const auto& [name, like] : expected_.items()) {
      KFORGE_ASSIGN_OR_RETURN(reference::Tensor out, buffers.Read(name, like));
      outputs.Set(name, std::move(out));
    }
    KFORGE_ASSIGN_OR_RETURN(auto compared, reference::CompareAll(expected_, outputs, tolerance_));
    nlohmann::json checks;
    if (auto problem = JudgeOutputs(compared, tolerance_, checks)) {
      return Mismatch(*problem + " on timed run " + std::to_string(checked_ + 1));
    }
    ++checked_;
    KFORGE_RETURN_IF_ERROR(buffers.Poison(env_, kPoison));
    if (cudaDeviceSynchronize() != cudaSuccess) return Status::Unavailable("device error after poisoning");
    next_ = (next_ + 1) % sets_.size();
    return Status::Ok();
  }

  int checked() const { return checked_; }
  bool mismatched() const { return mismatched_; }

 private:
  Status Mismatch(const std::string& message) {
    mismatched_ = true;
    return Status::InvalidArgument(message);
  }

  const cuda::PlanEnv& env_;
  cuda::BoundPlan plan_;
  const reference::TensorSet& expected_;
  common::Tolerance tolerance_;
  std::vector<CandidateBuffers> sets_;
  size_t next_ = 0;
  int checked_ = 0;
  bool mismatched_ = false;
};

}  // namespace

nlohmann::json RunBench(GpuChecker& state, const nlohmann::json& request, bool& must_exit) {
  const cuda::DeviceInfo& device = state.device();
  auto options = bench::MeasureOptionsFromJson(request.value("measure", nlohmann::json::object()));
  if (!options.ok()) return Fail(VerdictStatus::kInvalidSolution, options.status().message());
  auto task_or = state.TaskFor(request.value("task_dir", ""));
  if (!task_or.ok()) return Fail(VerdictStatus::kInvalidSolution, task_or.status().message());
  const common::Task& task = **task_or;
  const common::Variant& variant = task.variants.front();
  auto program = state.ProgramFor(task, variant.name);
  if (!program.ok()) return Fail(VerdictStatus::kInvalidSolution, "reference: " + program.status().message());

  auto stream = cuda::CreateStream();
  if (!stream.ok()) return Fail(VerdictStatus::kCrash, stream.status().message());
  reference::Device cuda_device = reference::Device::Cuda(device.index);
  auto inputs =
      reference::GenerateInputs(task, variant.name, request.value("seed", uint64_t{0}), 0, cuda_device);
  if (!inputs.ok()) return Fail(VerdictStatus::kCrash, "input generation: " + inputs.status().message());
  auto expected = (*program)->Run(*inputs);
  if (!expected.ok()) return Fail(VerdictStatus::kCrash, "reference: " + expected.status().message());
  // Candidate sets hold inputs, outputs and scratch; a reference placement about as much.
  const int placements = PlacementsFor(2 * (BytesOf(*inputs) + BytesOf(*expected)) + (64u << 20));
  std::vector<reference::TensorSet> input_sets = {*inputs};
  for (int k = 1; k < placements; ++k) {
    auto copy = Clone(*inputs);
    if (!copy.ok()) return Fail(VerdictStatus::kCrash, copy.status().message());
    input_sets.push_back(std::move(*copy));
  }

  std::vector<bench::Subject> subjects;
  std::unique_ptr<cuda::KernelLibrary> library;
  std::unique_ptr<cuda::PlanEnv> env;
  std::unique_ptr<TimedCandidate> candidate;
  if (request.contains("solution")) {
    auto solution = common::SolutionFromJson(request["solution"], "request");
    auto cubin = common::Base64Decode(request.value("cubin_b64", ""));
    if (!solution.ok() || !cubin.ok()) return Fail(VerdictStatus::kCrash, "worker: bad bench request");
    auto loaded = cuda::KernelLibrary::Load(*cubin);
    if (!loaded.ok())
      return Fail(VerdictStatus::kLaunchError, "cannot load the CUBIN: " + loaded.status().message());
    library = std::move(*loaded);
    auto env_or = verify::PlanEnvFor(task, variant);
    if (!env_or.ok()) return Fail(VerdictStatus::kInvalidSolution, env_or.status().message());
    env = std::make_unique<cuda::PlanEnv>(std::move(*env_or));
    cuda::LaunchLimits limits = cuda::LimitsFor(device);
    Status scratch = cuda::AddScratch(*solution, limits, *env);
    if (!scratch.ok()) return Fail(VerdictStatus::kInvalidSolution, scratch.message());
    auto resolved = cuda::ResolvePlan(*solution, *env, limits);
    if (!resolved.ok()) return Fail(VerdictStatus::kInvalidSolution, resolved.status().message());
    auto bound = cuda::BoundPlan::Bind(*resolved, *library);
    if (!bound.ok()) return Fail(VerdictStatus::kInvalidSolution, bound.status().message());
    candidate = std::make_unique<TimedCandidate>(*env, std::move(*bound), *expected, task.tolerance);
    for (const reference::TensorSet& set : input_sets) {
      Status prepared = candidate->AddPlacement(set, (*program)->params());
      if (!prepared.ok()) return Fail(VerdictStatus::kCrash, prepared.message());
    }
    TimedCandidate* c = candidate.get();
    subjects.push_back({"candidate", nullptr, [c](cudaStream_t s) { return c->Run(s); },
                        [c](cudaStream_t s) { return c->Check(s); }});
  }
  reference::ReferenceProgram* reference_program = *program;
  int device_index = device.index;
  size_t reference_next = 0;  // the reference rotates through the input sets like the candidate
  subjects.push_back({"reference", nullptr,
                      [&, reference_program, device_index](cudaStream_t s) -> Status {
                        reference::CudaStreamScope scope(s, device_index);
                        return reference_program->Execute(input_sets[reference_next]);
                      },
                      [&](cudaStream_t) {
                        reference_next = (reference_next + 1) % input_sets.size();
                        return Status::Ok();
                      }});

  auto measured = bench::Measure(subjects, *options, stream->get());
  if (!measured.ok()) {
    if (candidate && candidate->mismatched())
      return Fail(VerdictStatus::kMismatch, "timed run: " + measured.status().message());
    // A faulting kernel leaves the context unusable; the parent starts a fresh worker.
    bool healthy = cudaDeviceSynchronize() == cudaSuccess;
    must_exit = !healthy;
    return Fail(healthy ? VerdictStatus::kLaunchError : VerdictStatus::kCrash,
                "bench: " + measured.status().message());
  }
  nlohmann::json reply = {{"status", "ok"},
                          {"message", ""},
                          {"measurement", bench::MeasurementToJson(*measured)},
                          {"checked_runs", candidate ? candidate->checked() : 0},
                          {"placements", placements},
                          {"device", device.ToJson()}};
  auto peak = bench::LoadOrMeasurePeak(device.index, bench::DefaultCacheDir());
  reply["peak"] = peak.ok() ? peak->ToJson() : nlohmann::json(nullptr);
  return reply;
}

}  // namespace kforge::worker
