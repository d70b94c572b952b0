// The candidate's view of a task's tensors: one guarded buffer per tensor of a launch plan, inputs
// and params copied in, outputs and scratch to be poisoned. Shared by the GPU check and bench.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kforge/common/status.h"
#include "kforge/cuda/guarded_buffer.h"
#include "kforge/cuda/launch_plan.h"
#include "kforge/reference/tensor.h"

namespace kforge::worker {

class CandidateBuffers {
 public:
  /// A guarded buffer per tensor of `env`; inputs and params (found by name in `inputs`, then
  /// `params`) get copies of their values and are kept as originals.
  static StatusOr<CandidateBuffers> Allocate(const cuda::PlanEnv& env, const reference::TensorSet& inputs,
                                             const reference::TensorSet& params);

  /// Fills every writable buffer (outputs, scratch) with `byte` and re-arms every guard.
  Status Poison(const cuda::PlanEnv& env, uint8_t byte);
  /// The first buffer whose guard bands were written, as a status naming it.
  Status CheckGuards() const;
  /// A copy of buffer `name` as a tensor shaped like `like`.
  StatusOr<reference::Tensor> Read(const std::string& name, const reference::Tensor& like) const;
  /// Gives up ownership of the device memory (a kernel may still be using it; the process exits).
  void Abandon();

  /// Device addresses by tensor name, for BoundPlan::Run.
  const std::map<std::string, void*>& pointers() const { return pointers_; }
  /// The inputs and params as copied in.
  const reference::TensorSet& originals() const { return originals_; }

 private:
  std::map<std::string, std::unique_ptr<cuda::GuardedBuffer>> buffers_;
  std::map<std::string, void*> pointers_;
  reference::TensorSet originals_;
};

}  // namespace kforge::worker
