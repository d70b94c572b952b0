// Device memory through LibTorch's caching allocator (kforge/reference/device_memory.h).
#include "kforge/reference/device_memory.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>

namespace kforge::reference {

namespace allocator = c10::cuda::CUDACachingAllocator;

void* AllocateDeviceMemory(size_t bytes) {
  try {
    return allocator::raw_alloc(bytes);
  } catch (const std::exception&) {  // c10::OutOfMemoryError
    return nullptr;
  }
}

void FreeDeviceMemory(void* ptr) { allocator::raw_delete(ptr); }

DeviceMemoryUse DeviceMemoryOf(int device) {
  DeviceMemoryUse use;
  auto stats = allocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  const auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  use.allocated_bytes = stats.allocated_bytes[aggregate].current;
  use.peak_bytes = stats.allocated_bytes[aggregate].peak;
  int64_t cached_unused = stats.reserved_bytes[aggregate].current - use.allocated_bytes;
  size_t free_bytes = 0, total_bytes = 0;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device);
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
  cudaSetDevice(previous);
  use.free_bytes = static_cast<int64_t>(free_bytes) + cached_unused;
  use.total_bytes = static_cast<int64_t>(total_bytes);
  return use;
}

void ResetPeakDeviceMemory(int device) {
  allocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
}

void ReleaseCachedDeviceMemory() { allocator::emptyCache(); }

}  // namespace kforge::reference
