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
#include "kforge/common/verdict_parts.h"

namespace kforge::bench {

/// Peaks of one device. FLOP peaks are dense, at the maximum SM clock; 0 means unknown (an
/// architecture kforge has no table for). Its record form is common's.
using common::DevicePeak;

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
