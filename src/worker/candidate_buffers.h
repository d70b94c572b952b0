// The candidate's view of a task's tensors: one guarded buffer per tensor of a launch plan. The input
// buffers are the only copy of the inputs (drawn into them, and lent to the reference as borrowed
// tensors), params are copied in, outputs and scratch are poisoned. Shared by the GPU check and bench.
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
  /// A guarded buffer per tensor of `env` on `device`. Read-only tensors found in `params` get a copy
  /// of their values; the other read-only tensors are inputs, to be filled through inputs().
  /// Out of memory is ResourceExhausted.
  static StatusOr<CandidateBuffers> Allocate(const cuda::PlanEnv& env, const reference::TensorSet& params,
                                             int device);

  /// Borrowed tensors over the input buffers: fill them (GenerateInputsInto), lend them to the reference.
  reference::TensorSet& inputs() { return inputs_; }
  /// A borrowed tensor over buffer `name` (an output, say) with the plan's dtype and shape.
  StatusOr<reference::Tensor> View(const std::string& name) const;

  /// Fills every writable buffer (outputs, scratch) with `byte` and re-arms every guard.
  Status Poison(const cuda::PlanEnv& env, uint8_t byte);
  /// The first buffer whose guard bands were written, as a status naming it.
  Status CheckGuards() const;
  /// A digest of every read-only buffer (inputs and params), by name: one pass each, no copy. Those in
  /// `known` (digested as they were drawn) are taken from there.
  StatusOr<std::map<std::string, uint64_t>> DigestReadOnly(
      const std::map<std::string, uint64_t>& known = {}) const;
  /// Gives up ownership of the device memory (a kernel may still be using it; the process exits).
  void Abandon();

  /// Device addresses by tensor name, for BoundPlan::Run.
  const std::map<std::string, void*>& pointers() const { return pointers_; }

 private:
  struct Entry {
    std::unique_ptr<cuda::GuardedBuffer> buffer;
    cuda::PlanTensor spec;
  };
  std::map<std::string, Entry> buffers_;
  std::map<std::string, void*> pointers_;
  reference::TensorSet inputs_;
  int device_ = 0;
};

}  // namespace kforge::worker
