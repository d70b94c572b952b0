// Device buffers handed to candidate kernels: guard bands on both sides catch out-of-bounds
// writes, and the user region can be poisoned so that output never written shows up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kforge/common/status.h"

namespace kforge::cuda {

/// Where guarded buffers get device memory: cudaMalloc/cudaFree unless a process installs another
/// allocator (the worker routes them through LibTorch's caching allocator, so that one place counts
/// every byte a verification uses). `allocate` returns nullptr when out of memory.
struct DeviceAllocator {
  void* (*allocate)(size_t bytes) = nullptr;
  void (*free)(void* ptr) = nullptr;
};
/// Installs `allocator` for buffers allocated from now on; call before any buffer exists.
void SetDeviceAllocator(DeviceAllocator allocator);

class GuardedBuffer {
 public:
  /// Bytes of guard band on each side; a multiple of 256 so the user region stays aligned.
  static constexpr size_t kGuardBytes = 4096;
  static constexpr uint8_t kGuardPattern = 0xA5;

  /// Allocates `bytes` (may be 0) plus both guards, and arms the guards.
  static StatusOr<std::unique_ptr<GuardedBuffer>> Allocate(size_t bytes);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  /// Start of the user region (what the candidate gets).
  void* data() const { return base_ + kGuardBytes; }
  size_t bytes() const { return bytes_; }

  /// Fills the user region with `byte` (0xFF makes every float type NaN).
  Status Fill(uint8_t byte);
  /// Copies `bytes()` bytes from device memory at `src`.
  Status CopyFrom(const void* src);
  /// Re-writes the guard pattern.
  Status ArmGuards();
  /// Ok when both guards still hold the pattern; otherwise says which side and the first bad offset.
  Status CheckGuards() const;

 private:
  GuardedBuffer(uint8_t* base, size_t bytes) : base_(base), bytes_(bytes) {}
  uint8_t* base_;
  size_t bytes_;
};

}  // namespace kforge::cuda
