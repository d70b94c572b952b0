// The parts of the peak model that need no GPU: the per-architecture FLOP table, the cache key and
// the cache file format (schema kforge.peak_cache/1).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "kforge/bench/peak.h"

namespace kforge::bench::internal {

/// Dense FLOP per clock per SM.
struct SmFlopsPerClock {
  double fp32 = 0;  ///< CUDA cores, FMA counted as 2.
  double fp16 = 0;  ///< Tensor cores, FP32 accumulate.
  double bf16 = 0;
  double tf32 = 0;
};

/// sm_80 (A100) and sm_90 (H100, H200); all 0 for any other compute capability.
SmFlopsPerClock FlopsPerClock(int cc_major, int cc_minor);

/// Sets the FLOP peaks from cc, sm_count and sm_clock_mhz.
void SetFlopPeaks(DevicePeak& peak);

/// "GPU-" and the 16 bytes as 8-4-4-4-12 lowercase hex digits.
std::string FormatUuid(const unsigned char (&bytes)[16]);

/// The cache file for the device that `peak` names: `dir`/peak-<16 hex digits of the SHA-256 of
/// name, UUID and driver version>.json.
std::filesystem::path PeakCachePath(const std::filesystem::path& dir, const DevicePeak& peak);

/// The cached bandwidth and copy size, when `path` holds a valid record for the same device name,
/// UUID and driver version as `peak`; nullopt otherwise (missing, unreadable, other schema, other
/// device).
struct CachedBandwidth {
  double dram_gbps = 0;
  uint64_t copy_bytes = 0;
};
std::optional<CachedBandwidth> ReadPeakCache(const std::filesystem::path& path, const DevicePeak& peak);

/// Writes `peak`'s identity and bandwidth to `path` atomically (creating its folder); false on failure.
bool WritePeakCache(const std::filesystem::path& path, const DevicePeak& peak);

}  // namespace kforge::bench::internal
