// One checking macro for every CUDA runtime call: failures become a Status naming the call,
// the error and the source location.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "kforge/common/status.h"

namespace kforge::cuda {

/// Builds the Status for a failed runtime call.
inline Status CudaError(cudaError_t error, const char* call, const char* file, int line) {
  std::string where = std::string(file) + ":" + std::to_string(line);
  return Status::Unavailable(std::string(call) + " failed at " + where + ": " + cudaGetErrorName(error) + ": " +
                             cudaGetErrorString(error));
}

}  // namespace kforge::cuda

/// Returns a Status from the enclosing function when the CUDA runtime call fails.
#define KFORGE_CUDA_CHECK(call)                                                       \
  do {                                                                                \
    cudaError_t kforge_cuda_error_ = (call);                                          \
    if (kforge_cuda_error_ != cudaSuccess)                                            \
      return ::kforge::cuda::CudaError(kforge_cuda_error_, #call, __FILE__, __LINE__); \
  } while (0)
