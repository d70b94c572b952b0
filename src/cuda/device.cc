// Device discovery.
#include "kforge/cuda/device.h"

#include <cuda_runtime_api.h>

#include "kforge/cuda/check.h"

namespace kforge::cuda {

int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

StatusOr<DeviceInfo> OpenDevice(int index) {
  KFORGE_CUDA_RETURN_IF_ERROR(cudaSetDevice(index));
  cudaDeviceProp prop{};
  KFORGE_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, index));
  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.max_threads_per_block = prop.maxThreadsPerBlock;
  for (int i = 0; i < 3; ++i) {
    info.max_block_dims[i] = prop.maxThreadsDim[i];
    info.max_grid_dims[i] = prop.maxGridSize[i];
  }
  info.shared_per_block = prop.sharedMemPerBlock;
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  info.total_memory = prop.totalGlobalMem;
  info.l2_bytes = prop.l2CacheSize;
  return info;
}

common::DeviceRecord DeviceInfo::Record() const {
  common::DeviceRecord record;
  record.index = index;
  record.name = name;
  record.cc = std::to_string(cc_major) + "." + std::to_string(cc_minor);
  record.sm_count = sm_count;
  record.memory_bytes = total_memory;
  record.l2_bytes = l2_bytes;
  return record;
}

}  // namespace kforge::cuda
