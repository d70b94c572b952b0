// Device memory of a verification, counted in one place: LibTorch's caching allocator serves the
// reference's tensors, the generated inputs and (through cuda::SetDeviceAllocator) the candidate's
// guarded buffers, so its statistics are the peak of everything kforge holds on the device.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kforge::reference {

/// Device memory from the caching allocator on the current device; nullptr when out of memory.
void* AllocateDeviceMemory(size_t bytes);
/// Returns memory from AllocateDeviceMemory.
void FreeDeviceMemory(void* ptr);

struct DeviceMemoryUse {
  int64_t allocated_bytes = 0;  ///< live allocations now
  int64_t peak_bytes = 0;       ///< largest live total since the last ResetPeakDeviceMemory
  int64_t free_bytes = 0;       ///< free on the device plus cached but unused in the allocator
  int64_t total_bytes = 0;      ///< the device's memory
};

DeviceMemoryUse DeviceMemoryOf(int device);
void ResetPeakDeviceMemory(int device);
/// Returns cached, unused blocks to the device (before a large allocation after other tasks).
void ReleaseCachedDeviceMemory();

}  // namespace kforge::reference
