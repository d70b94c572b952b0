// Version queries; none of these needs a GPU.
#include "kforge/cuda/versions.h"

#include <cuda_runtime_api.h>
#include <nvrtc.h>

namespace kforge::cuda {
namespace {

std::string FormatCudaVersion(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

std::string RuntimeVersion() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return "unknown";
  return FormatCudaVersion(v);
}

std::string DriverVersion() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess || v == 0) return "none";
  return FormatCudaVersion(v);
}

std::string NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace kforge::cuda
