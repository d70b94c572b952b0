// Guarded copies of a task's tensors for a candidate's launch plan.
#include "worker/candidate_buffers.h"

#include <cuda_runtime_api.h>

namespace kforge::worker {

StatusOr<CandidateBuffers> CandidateBuffers::Allocate(const cuda::PlanEnv& env,
                                                      const reference::TensorSet& inputs,
                                                      const reference::TensorSet& params) {
  CandidateBuffers set;
  for (const auto& [name, spec] : env.tensors) {
    KFORGE_ASSIGN_OR_RETURN(auto buffer, cuda::GuardedBuffer::Allocate(spec.bytes()));
    const reference::Tensor* source = inputs.Find(name);
    if (source == nullptr) source = params.Find(name);
    if (source != nullptr) {
      if (source->bytes() != spec.bytes()) {
        return Status::Internal("tensor " + name + " has " + std::to_string(source->bytes()) +
                                " bytes, expected " + std::to_string(spec.bytes()));
      }
      KFORGE_RETURN_IF_ERROR(buffer->CopyFrom(source->view().data));
      set.originals_.Set(name, *source);
    }
    set.pointers_[name] = buffer->data();
    set.buffers_[name] = std::move(buffer);
  }
  return set;
}

Status CandidateBuffers::Poison(const cuda::PlanEnv& env, uint8_t byte) {
  for (auto& [name, buffer] : buffers_) {
    if (env.tensors.at(name).writable) KFORGE_RETURN_IF_ERROR(buffer->Fill(byte));
    KFORGE_RETURN_IF_ERROR(buffer->ArmGuards());
  }
  return Status::Ok();
}

Status CandidateBuffers::CheckGuards() const {
  for (const auto& [name, buffer] : buffers_) {
    Status guards = buffer->CheckGuards();
    if (!guards.ok()) return Status::InvalidArgument(name + ": " + guards.message());
  }
  return Status::Ok();
}

StatusOr<reference::Tensor> CandidateBuffers::Read(const std::string& name,
                                                   const reference::Tensor& like) const {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) return Status::Internal("no buffer \"" + name + "\"");
  KFORGE_ASSIGN_OR_RETURN(reference::Tensor out, reference::EmptyLike(like));
  if (out.bytes() != it->second->bytes()) return Status::Internal("buffer \"" + name + "\" has another size");
  if (cudaMemcpy(out.view().data, it->second->data(), out.bytes(), cudaMemcpyDeviceToDevice) != cudaSuccess) {
    return Status::Unavailable(std::string("copy failed: ") + cudaGetErrorName(cudaGetLastError()));
  }
  return out;
}

void CandidateBuffers::Abandon() {
  for (auto& [name, buffer] : buffers_) buffer.release();
}

}  // namespace kforge::worker
