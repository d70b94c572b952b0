// Roofline figures of a timed kernel.
#include <algorithm>

#include "kforge/bench/peak.h"

namespace kforge::bench {

Roofline ComputeRoofline(const TaskCost& cost, const DevicePeak& peak, double ms) {
  Roofline r;
  r.flops = std::max(cost.flops, 0.0);
  r.bytes = std::max(cost.bytes, 0.0);
  r.peak_gbps = std::max(peak.dram_gbps, 0.0);
  r.peak_tflops = std::max(PeakTflops(peak, cost.dtype), 0.0);
  // 1 GB/s moves 1e6 bytes per ms; 1 TFLOP/s does 1e9 FLOP per ms.
  const double memory_ms = r.bytes > 0 && r.peak_gbps > 0 ? r.bytes / (r.peak_gbps * 1e6) : 0;
  const double compute_ms = r.flops > 0 && r.peak_tflops > 0 ? r.flops / (r.peak_tflops * 1e9) : 0;
  r.sol_ms = std::max(memory_ms, compute_ms);
  if (!(ms > 0)) return r;
  r.achieved_gbps = r.bytes / (ms * 1e6);
  r.achieved_tflops = r.flops / (ms * 1e9);
  if (r.peak_gbps > 0) r.bandwidth_pct = r.achieved_gbps / r.peak_gbps * 100;
  if (r.peak_tflops > 0) r.flops_pct = r.achieved_tflops / r.peak_tflops * 100;
  r.sol_pct = r.sol_ms / ms * 100;
  return r;
}

}  // namespace kforge::bench
