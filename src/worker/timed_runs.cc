// Checked timed runs over buffer sets of distinct draws.
#include "worker/timed_runs.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "kforge/common/verdict_parts.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/device_memory.h"
#include "worker/judge.h"

namespace kforge::worker {

int SetsThatFit(int most, int device, int64_t bytes) {
  reference::DeviceMemoryUse use = reference::DeviceMemoryOf(device);
  if (bytes <= 0) return 1;
  return static_cast<int>(std::clamp<int64_t>(1 + use.free_bytes / 4 / bytes, 1, most));
}

Status TimedRuns::AddSet(reference::ReferenceProgram& program, const std::string& variant, uint64_t seed,
                         int device) {
  KFORGE_ASSIGN_OR_RETURN(CandidateBuffers buffers, CandidateBuffers::Allocate(env_, program.params(), device));
  if (Status drawn = reference::GenerateInputsInto(task_, variant, seed, 0, buffers.inputs()); !drawn.ok())
    return Status::Unavailable("input generation: " + drawn.message());
  KFORGE_ASSIGN_OR_RETURN(reference::TensorSet expected, program.Run(buffers.inputs()));
  KFORGE_ASSIGN_OR_RETURN(auto digests, buffers.DigestReadOnly());
  KFORGE_RETURN_IF_ERROR(buffers.Poison(env_, kTimingPoison));
  expected_.push_back(std::move(expected));
  read_only_.push_back(std::move(digests));
  sets_.push_back(std::move(buffers));
  rotation_ = sets_.size();
  return Status::Ok();
}

Status TimedRuns::Restart(size_t count) {
  rotation_ = count == 0 || count > sets_.size() ? sets_.size() : count;
  next_ = 0;
  checked_ = 0;
  mismatched_ = false;
  for (CandidateBuffers& set : sets_) KFORGE_RETURN_IF_ERROR(set.Poison(env_, kTimingPoison));
  return Status::Ok();
}

Status TimedRuns::RedigestAfterReference(size_t k) {
  KFORGE_ASSIGN_OR_RETURN(read_only_[k], sets_[k].DigestReadOnly());
  return Status::Ok();
}

Status TimedRuns::Check(cudaStream_t stream) {
  if (cudaStreamSynchronize(stream) != cudaSuccess)
    return Status::Unavailable(std::string("kernel faulted: ") + cudaGetErrorName(cudaGetLastError()));
  CandidateBuffers& buffers = sets_[next_];
  const reference::TensorSet& expected = expected_[next_];
  if (Status guards = buffers.CheckGuards(); !guards.ok()) return Mismatch(guards.message());
  // An input the run wrote could hold a replayed output that outlives the run.
  KFORGE_ASSIGN_OR_RETURN(auto read_only, buffers.DigestReadOnly());
  for (const auto& [name, digest] : read_only) {
    if (read_only_[next_].at(name) != digest)
      return Mismatch("the candidate modified input \"" + name + "\" on timed run " + std::to_string(checked_ + 1));
  }
  reference::TensorSet outputs;
  for (const auto& [name, like] : expected.items()) {
    KFORGE_ASSIGN_OR_RETURN(reference::Tensor out, buffers.View(name));
    outputs.Set(name, std::move(out));
  }
  KFORGE_ASSIGN_OR_RETURN(auto compared, reference::CompareAll(expected, outputs, task_.tolerance));
  common::Checks checks;
  if (auto problem = CheckOutputs(compared, OutputRules::For(task_), checks)) {
    return Mismatch(*problem + " on timed run " + std::to_string(checked_ + 1));
  }
  ++checked_;
  KFORGE_RETURN_IF_ERROR(buffers.Poison(env_, kTimingPoison));
  if (cudaDeviceSynchronize() != cudaSuccess) return Status::Unavailable("device error after poisoning");
  next_ = (next_ + 1) % rotation_;
  return Status::Ok();
}

Status TimedRuns::Mismatch(const std::string& message) {
  mismatched_ = true;
  return Status::InvalidArgument(message);
}

}  // namespace kforge::worker
