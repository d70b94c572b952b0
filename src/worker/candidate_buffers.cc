// Guarded buffers for a candidate's launch plan.
#include "worker/candidate_buffers.h"

#include <cuda_runtime_api.h>

#include "kforge/reference/compare.h"

namespace kforge::worker {

StatusOr<CandidateBuffers> CandidateBuffers::Allocate(const cuda::PlanEnv& env,
                                                      const reference::TensorSet& params, int device) {
  CandidateBuffers set;
  set.device_ = device;
  for (const auto& [name, spec] : env.tensors) {
    KFORGE_ASSIGN_OR_RETURN(auto buffer, cuda::GuardedBuffer::Allocate(spec.bytes()));
    set.pointers_[name] = buffer->data();
    set.buffers_[name] = Entry{std::move(buffer), spec};
    if (spec.writable) continue;
    if (const reference::Tensor* source = params.Find(name)) {
      if (source->bytes() != spec.bytes()) {
        return Status::Internal("param " + name + " has " + std::to_string(source->bytes()) +
                                " bytes, expected " + std::to_string(spec.bytes()));
      }
      KFORGE_RETURN_IF_ERROR(set.buffers_[name].buffer->CopyFrom(source->view().data));
    } else {
      KFORGE_ASSIGN_OR_RETURN(reference::Tensor view, set.View(name));
      set.inputs_.Set(name, std::move(view));
    }
  }
  return set;
}

StatusOr<reference::Tensor> CandidateBuffers::View(const std::string& name) const {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) return Status::Internal("no buffer \"" + name + "\"");
  reference::TensorView view;
  view.data = it->second.buffer->data();
  view.dtype = it->second.spec.dtype;
  view.shape = it->second.spec.shape;
  view.device = reference::Device::Cuda(device_);
  view.bytes = it->second.buffer->bytes();
  return reference::Tensor::Borrow(view);
}

Status CandidateBuffers::Poison(const cuda::PlanEnv& env, uint8_t byte) {
  for (auto& [name, entry] : buffers_) {
    if (env.tensors.at(name).writable) KFORGE_RETURN_IF_ERROR(entry.buffer->Fill(byte));
    KFORGE_RETURN_IF_ERROR(entry.buffer->ArmGuards());
  }
  return Status::Ok();
}

Status CandidateBuffers::CheckGuards() const {
  for (const auto& [name, entry] : buffers_) {
    Status guards = entry.buffer->CheckGuards();
    if (!guards.ok()) return Status::InvalidArgument(name + ": " + guards.message());
  }
  return Status::Ok();
}

StatusOr<std::map<std::string, uint64_t>> CandidateBuffers::DigestReadOnly(
    const std::map<std::string, uint64_t>& known) const {
  std::map<std::string, uint64_t> digests;
  for (const auto& [name, entry] : buffers_) {
    if (entry.spec.writable) continue;
    if (auto it = known.find(name); it != known.end()) {
      digests[name] = it->second;
      continue;
    }
    KFORGE_ASSIGN_OR_RETURN(reference::Tensor view, View(name));
    KFORGE_ASSIGN_OR_RETURN(digests[name], reference::Digest(view));
  }
  return digests;
}

void CandidateBuffers::Abandon() {
  for (auto& [name, entry] : buffers_) entry.buffer.release();
}

}  // namespace kforge::worker
