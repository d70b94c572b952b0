// Device identity, the DRAM bandwidth measurement and its cache.
#include "kforge/bench/peak.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>

#include "bench/peak_model.h"
#include "kforge/cuda/check.h"
#include "kforge/cuda/owners.h"

namespace kforge::bench {
namespace {

constexpr uint64_t kCopyBytes = uint64_t{1} << 30;
constexpr uint64_t kMinCopyBytes = uint64_t{64} << 20;
constexpr uint64_t kFreeMemoryMargin = uint64_t{256} << 20;
constexpr int kTimedCopies = 10;

// Makes a device current and restores the previous one when it goes out of scope.
class DeviceScope {
 public:
  DeviceScope() = default;
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

  Status Enter(int device) {
    int previous = 0;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaGetDevice(&previous));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    previous_ = previous;
    return Status::Ok();
  }

 private:
  int previous_ = -1;
};

StatusOr<DevicePeak> ReadIdentity(int device) {
  cudaDeviceProp prop{};
  KFORGE_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device));
  int clock_khz = 0, driver = 0;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  KFORGE_CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&driver));
  DevicePeak peak;
  peak.device = prop.name;
  unsigned char uuid[16];
  std::copy(prop.uuid.bytes, prop.uuid.bytes + 16, uuid);
  peak.uuid = internal::FormatUuid(uuid);
  peak.driver_version = driver;
  peak.cc_major = prop.major;
  peak.cc_minor = prop.minor;
  peak.sm_count = prop.multiProcessorCount;
  peak.sm_clock_mhz = clock_khz / 1000.0;
  internal::SetFlopPeaks(peak);
  return peak;
}

// Best of kTimedCopies device-to-device copies on the current device, bytes read + written per
// second, and the copy size used: 1 GiB, halved while two buffers would not fit in free memory.
Status MeasureDramBandwidth(DevicePeak& peak) {
  size_t free_bytes = 0, total_bytes = 0;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  uint64_t bytes = kCopyBytes;
  while (bytes > kMinCopyBytes && 2 * bytes + kFreeMemoryMargin > free_bytes) bytes /= 2;
  KFORGE_ASSIGN_OR_RETURN(cuda::DeviceMemory src, cuda::AllocateDevice(bytes));
  KFORGE_ASSIGN_OR_RETURN(cuda::DeviceMemory dst, cuda::AllocateDevice(bytes));
  KFORGE_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::CreateStream());
  KFORGE_ASSIGN_OR_RETURN(cuda::Event start, cuda::CreateEvent());
  KFORGE_ASSIGN_OR_RETURN(cuda::Event stop, cuda::CreateEvent());
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(src.get(), 1, bytes, stream.get()));
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dst.get(), 0, bytes, stream.get()));
  KFORGE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
  float best_ms = std::numeric_limits<float>::infinity();
  for (int i = 0; i < kTimedCopies; ++i) {
    KFORGE_CUDA_RETURN_IF_ERROR(cudaEventRecord(start.get(), stream.get()));
    KFORGE_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop.get(), stream.get()));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop.get()));
    float ms = 0;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    best_ms = std::min(best_ms, ms);
  }
  if (!(best_ms > 0)) return Status::Internal("device-to-device copy timed at 0 ms");
  peak.copy_bytes = bytes;
  peak.dram_gbps = 2.0 * static_cast<double>(bytes) / (best_ms * 1e6);
  return Status::Ok();
}

}  // namespace

StatusOr<DevicePeak> LoadOrMeasurePeak(int device, const std::filesystem::path& cache_dir) {
  DeviceScope scope;
  KFORGE_RETURN_IF_ERROR(scope.Enter(device));
  KFORGE_ASSIGN_OR_RETURN(DevicePeak peak, ReadIdentity(device));
  std::filesystem::path cache_file;
  if (!cache_dir.empty()) {
    cache_file = internal::PeakCachePath(cache_dir, peak);
    if (const auto cached = internal::ReadPeakCache(cache_file, peak)) {
      peak.dram_gbps = cached->dram_gbps;
      peak.copy_bytes = cached->copy_bytes;
      peak.cached = true;
      return peak;
    }
  }
  KFORGE_RETURN_IF_ERROR(MeasureDramBandwidth(peak));
  if (!cache_file.empty()) internal::WritePeakCache(cache_file, peak);
  return peak;
}

}  // namespace kforge::bench
