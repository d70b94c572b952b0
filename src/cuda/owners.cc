// Creation of the owned CUDA resources.
#include "kforge/cuda/owners.h"

#include "kforge/cuda/check.h"

namespace kforge::cuda {

StatusOr<Event> CreateEvent() {
  cudaEvent_t event = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&event));
  return Event(event);
}

StatusOr<Stream> CreateStream() {
  cudaStream_t stream = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return Stream(stream);
}

StatusOr<DeviceMemory> AllocateDevice(size_t bytes) {
  void* memory = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMalloc(&memory, bytes));
  return DeviceMemory(memory);
}

StatusOr<HostMemory> AllocateMappedHost(size_t bytes) {
  void* memory = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&memory, bytes, cudaHostAllocMapped));
  return HostMemory(memory);
}

}  // namespace kforge::cuda
