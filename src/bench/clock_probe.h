// The clock probe: a one-thread PTX kernel that spins on %globaltimer and reports how many SM clock
// cycles passed, for throttle detection without NVML. The same kernel, told to record nothing,
// holds the GPU back while the host enqueues a sample's timed work.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string_view>

#include "kforge/common/status.h"
#include "kforge/cuda/owners.h"

namespace kforge::bench::internal {

/// PTX of `kforge_clock_probe(u64* out, u64 spin_ns)`: waits for a %globaltimer tick, spins until
/// `spin_ns` nanoseconds have passed since it, and stores {%clock64 delta, %globaltimer delta} to
/// `out` unless `out` is null.
std::string_view ClockProbePtx();

/// The probe kernel loaded into the current device's context, and its mapped result slot.
class ClockProbe {
 public:
  /// Loads the PTX (the driver JIT-compiles it) and allocates the result slot.
  static StatusOr<ClockProbe> Load();

  /// Enqueues a probe spinning `spin_ns` that records its deltas.
  Status Enqueue(cudaStream_t stream, uint64_t spin_ns);
  /// Enqueues a spin of `spin_ns` that records nothing.
  Status EnqueueSpin(cudaStream_t stream, uint64_t spin_ns);
  /// The SM clock in MHz read by the last Enqueue; valid once the stream has finished it.
  double LastClockMhz() const;

 private:
  ClockProbe(cuda::Library library, cudaKernel_t kernel, cuda::HostMemory slot, void* device_slot)
      : library_(std::move(library)), kernel_(kernel), slot_(std::move(slot)), device_slot_(device_slot) {}
  Status Launch(cudaStream_t stream, void* out, uint64_t spin_ns);

  cuda::Library library_;
  cudaKernel_t kernel_;
  cuda::HostMemory slot_;  // two uint64_t: clock delta, ns delta
  void* device_slot_;
};

}  // namespace kforge::bench::internal
