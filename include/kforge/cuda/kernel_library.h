// A loaded CUBIN and the kernels in it (CUDA runtime library API; needs a GPU).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::cuda {

/// The most bytes a candidate's writable module-scope variables (`__device__`, `__managed__`) may take
/// together: each is restored to its image at load before every run, so that no state survives from one
/// run to the next (docs/worker.md, "State between runs").
inline constexpr uint64_t kMaxModuleGlobalBytes = uint64_t{64} << 20;

class KernelLibrary {
 public:
  /// Loads CUBIN bytes into the current device's context and snapshots its writable globals.
  /// InvalidArgument (the candidate's fault) when they take more than kMaxModuleGlobalBytes; other
  /// errors are the loader's.
  static StatusOr<std::unique_ptr<KernelLibrary>> Load(std::string_view cubin);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  /// The kernel whose symbol is `name` (an extern "C" name, or a mangled one: see FindKernel in
  /// compiler.h); NotFound otherwise.
  StatusOr<cudaKernel_t> Kernel(const std::string& name) const;
  /// Size in bytes of each parameter, in order.
  StatusOr<std::vector<size_t>> ParamSizes(cudaKernel_t kernel) const;

  /// Enqueues on `stream` the copy of every writable global back to its image at load. Call it before
  /// each run of the candidate, outside any timed region.
  Status RestoreGlobals(cudaStream_t stream) const;
  /// The device address of the global whose symbol is `name`; NotFound when there is none.
  StatusOr<void*> GlobalAddress(const std::string& name) const;
  /// Bytes of the writable globals (0 for most kernels).
  uint64_t global_bytes() const { return image_.size(); }

 private:
  /// One global: where it lives on the device and where its bytes start in `image_`.
  struct Global {
    void* device = nullptr;
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };

  explicit KernelLibrary(cudaLibrary_t library) : library_(library) {}
  Status SnapshotGlobals(std::string_view cubin);

  cudaLibrary_t library_;
  std::vector<Global> globals_;
  std::vector<uint8_t> image_;  ///< every global's bytes at load, one after another
  void* image_device_ = nullptr;  ///< the same bytes on the device, which restores copy from
};

}  // namespace kforge::cuda
