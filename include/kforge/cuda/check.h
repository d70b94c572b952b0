// Checks for NVRTC and CUDA runtime calls, naming the call text, the error and file:line: the one
// macro every module that calls CUDA (cuda, bench) checks its calls with.
// The CHECK macros throw std::runtime_error (a broken environment or a bug); RETURN_IF_ERROR
// returns a Status instead, for code whose callers turn device failures into verdicts.
#pragma once

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <initializer_list>
#include <stdexcept>

#include <string>
#include "kforge/common/status.h"

namespace kforge::cuda::internal {

/// "<call> failed: <error> at <file>:<line>".
std::string FormatCallFailure(const char* call, const char* error, const char* file, int line);

inline nvrtcResult CheckNvrtc(nvrtcResult result, const char* call, const char* file, int line,
                              std::initializer_list<nvrtcResult> accepted = {}) {
  if (result == NVRTC_SUCCESS) return result;
  for (const nvrtcResult a : accepted) {
    if (result == a) return result;
  }
  throw std::runtime_error(FormatCallFailure(call, nvrtcGetErrorString(result), file, line));
}

inline cudaError_t CheckCuda(cudaError_t result, const char* call, const char* file, int line,
                             std::initializer_list<cudaError_t> accepted = {}) {
  if (result == cudaSuccess) return result;
  for (const cudaError_t a : accepted) {
    if (result == a) return result;
  }
  throw std::runtime_error(FormatCallFailure(call, cudaGetErrorName(result), file, line));
}

inline ::kforge::Status CudaStatus(cudaError_t result, const char* call, const char* file, int line) {
  return ::kforge::Status::Unavailable(FormatCallFailure(call, cudaGetErrorName(result), file, line) + " (" +
                                       cudaGetErrorString(result) + ")");
}

}  // namespace kforge::cuda::internal

/// Throws unless `expr` returns NVRTC_SUCCESS.
#define KFORGE_NVRTC_CHECK(expr) ::kforge::cuda::internal::CheckNvrtc((expr), #expr, __FILE__, __LINE__)
/// Returns the nvrtcResult of `expr`; throws unless it is NVRTC_SUCCESS or one of the listed results.
#define KFORGE_NVRTC_CHECK_ALLOW(expr, ...) \
  ::kforge::cuda::internal::CheckNvrtc((expr), #expr, __FILE__, __LINE__, {__VA_ARGS__})
/// Throws unless `expr` returns cudaSuccess.
#define KFORGE_CUDA_CHECK(expr) ::kforge::cuda::internal::CheckCuda((expr), #expr, __FILE__, __LINE__)
/// Returns the cudaError_t of `expr`; throws unless it is cudaSuccess or one of the listed errors.
#define KFORGE_CUDA_CHECK_ALLOW(expr, ...) \
  ::kforge::cuda::internal::CheckCuda((expr), #expr, __FILE__, __LINE__, {__VA_ARGS__})
/// Returns a Status from the enclosing function unless `expr` returns cudaSuccess.
#define KFORGE_CUDA_RETURN_IF_ERROR(expr)                                                          \
  do {                                                                                             \
    cudaError_t kforge_cuda_result_ = (expr);                                                      \
    if (kforge_cuda_result_ != cudaSuccess)                                                        \
      return ::kforge::cuda::internal::CudaStatus(kforge_cuda_result_, #expr, __FILE__, __LINE__); \
  } while (0)
