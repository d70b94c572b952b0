// A loaded CUBIN and the kernels in it (CUDA runtime library API; needs a GPU).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::cuda {

class KernelLibrary {
 public:
  /// Loads CUBIN bytes into the current device's context.
  static StatusOr<std::unique_ptr<KernelLibrary>> Load(std::string_view cubin);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  /// The kernel whose symbol is `name` (an extern "C" name, or a mangled one: see FindKernel in
  /// compiler.h); NotFound otherwise.
  StatusOr<cudaKernel_t> Kernel(const std::string& name) const;
  /// Size in bytes of each parameter, in order.
  StatusOr<std::vector<size_t>> ParamSizes(cudaKernel_t kernel) const;

 private:
  explicit KernelLibrary(cudaLibrary_t library) : library_(library) {}
  cudaLibrary_t library_;
};

}  // namespace kforge::cuda
