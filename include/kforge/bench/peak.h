// What the device can do at best: measured DRAM bandwidth (cached per device and driver) and
// FLOP peaks from the architecture, and the roofline figures of a timed kernel against them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/bench_record.h"
#include "kforge/common/dtype.h"
#include "kforge/common/status.h"

namespace kforge::bench {

/// Peaks of one device. FLOP peaks are dense, at the maximum SM clock; 0 means unknown (an
/// architecture kforge has no table for).
struct DevicePeak {
  std::string device;      ///< cudaDeviceProp::name, e.g. "NVIDIA H200".
  std::string uuid;        ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it.
  int driver_version = 0;  ///< cudaDriverGetVersion, e.g. 13000.
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_mhz = 0;  ///< Maximum SM clock (cudaDevAttrClockRate).
  /// Achievable DRAM bandwidth, measured: the best of several device-to-device copies of
  /// `copy_bytes`, counting the bytes read and written.
  double dram_gbps = 0;
  uint64_t copy_bytes = 0;
  double fp32_tflops = 0;  ///< FP32 FMA on the CUDA cores.
  double fp16_tflops = 0;  ///< Tensor cores, dense, FP32 accumulate.
  double bf16_tflops = 0;
  double tf32_tflops = 0;
  bool cached = false;  ///< True when dram_gbps came from the cache.

  /// {device, uuid, driver_version, cc, sm_count, sm_clock_mhz, dram_gbps, copy_bytes, fp32_tflops,
  /// fp16_tflops, bf16_tflops, tf32_tflops}; unknown peaks are null.
  nlohmann::json ToJson() const;
};

/// $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else ~/.cache/kforge.
std::filesystem::path DefaultCacheDir();

/// The peaks of `device`. The bandwidth is read from `cache_dir`/peak-<key>.json when a file there
/// matches the device's name, UUID and driver version; otherwise it is measured (about a second,
/// with two 1 GiB buffers, or less memory on a small device) and written there. An empty `cache_dir`
/// measures every time; a cache that cannot be read or written is measured over, not an error.
/// The current device is restored before returning.
StatusOr<DevicePeak> LoadOrMeasurePeak(int device, const std::filesystem::path& cache_dir);

/// The FLOP peak that bounds work in `dtype`, in TFLOP/s; 0 when unknown. float32 is bounded by TF32
/// tensor cores where they are faster (a float32 kernel may use them and still pass its tolerance),
/// float16 and bfloat16 by their tensor cores; float64 and integer types are unknown.
double PeakTflops(const DevicePeak& peak, common::DType dtype);

/// A task's cost for one run, from its cost formulas (common::EvalCost); 0 means not given.
struct TaskCost {
  double flops = 0;
  double bytes = 0;
  common::DType dtype = common::DType::kFloat32;  ///< The dtype whose FLOP peak applies.
};

using common::Roofline;

/// The roofline of a kernel taking `ms` per run.
Roofline ComputeRoofline(const TaskCost& cost, const DevicePeak& peak, double ms);

}  // namespace kforge::bench
