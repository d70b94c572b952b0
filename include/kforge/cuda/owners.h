// RAII owners of CUDA resources: events, streams, device and mapped host memory, libraries.
// Movable; copying is deleted.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "kforge/common/status.h"

namespace kforge::cuda {

/// Owns `Handle` and releases it with `kRelease` (whose error, at destruction, is ignored).
template <class Handle, cudaError_t (*kRelease)(Handle)>
class CudaOwner {
 public:
  CudaOwner() = default;
  explicit CudaOwner(Handle handle) : handle_(handle) {}
  ~CudaOwner() { Reset(); }
  CudaOwner(CudaOwner&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  CudaOwner& operator=(CudaOwner&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  CudaOwner(const CudaOwner&) = delete;
  CudaOwner& operator=(const CudaOwner&) = delete;

  Handle get() const { return handle_; }

 private:
  void Reset() {
    if (handle_ != nullptr) kRelease(std::exchange(handle_, nullptr));
  }
  Handle handle_ = nullptr;
};

using Event = CudaOwner<cudaEvent_t, cudaEventDestroy>;
using Stream = CudaOwner<cudaStream_t, cudaStreamDestroy>;
using DeviceMemory = CudaOwner<void*, cudaFree>;
using HostMemory = CudaOwner<void*, cudaFreeHost>;
using Library = CudaOwner<cudaLibrary_t, cudaLibraryUnload>;

/// A timing event on the current device.
StatusOr<Event> CreateEvent();
/// A non-blocking stream on the current device.
StatusOr<Stream> CreateStream();
/// `bytes` of device memory on the current device.
StatusOr<DeviceMemory> AllocateDevice(size_t bytes);
/// `bytes` of pinned host memory mapped into the device's address space (cudaHostAllocMapped).
StatusOr<HostMemory> AllocateMappedHost(size_t bytes);

}  // namespace kforge::cuda
