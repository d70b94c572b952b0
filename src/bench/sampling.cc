// See sampling.h.
#include "bench/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kforge::bench::internal {

double ProbeClockMhz(uint64_t clock_delta, uint64_t ns_delta) {
  if (ns_delta == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(clock_delta) / static_cast<double>(ns_delta) * 1000.0;
}

bool IsThrottled(double sm_clock_mhz, double max_sm_clock_mhz, double threshold) {
  if (!(max_sm_clock_mhz > 0) || !(threshold > 0) || std::isnan(sm_clock_mhz)) return false;
  return sm_clock_mhz < threshold * max_sm_clock_mhz;
}

double RelativeHalfWidth(const SampleStats& stats) {
  const double half = (stats.median_hi - stats.median_lo) / 2;
  if (std::isnan(half) || !(stats.median > 0)) return std::numeric_limits<double>::infinity();
  return half / stats.median;
}

StopDecision DecideStop(const MeasureOptions& options, const std::vector<SubjectSamples>& subjects,
                        int rounds, double wall_seconds) {
  bool precise = true, enough_samples = true;
  double gpu_seconds = 0;
  for (const SubjectSamples& s : subjects) {
    if (static_cast<int>(s.ms.size()) < options.min_samples) enough_samples = false;
    gpu_seconds += s.gpu_seconds;
    if (precise && !(RelativeHalfWidth(Summarize(s.ms)) <= options.max_noise)) precise = false;
  }
  if (precise && enough_samples && gpu_seconds >= options.min_seconds) return StopDecision::kConverged;
  if (rounds >= options.max_samples || wall_seconds >= options.max_seconds) {
    return precise ? StopDecision::kConverged : StopDecision::kUnconverged;
  }
  return StopDecision::kContinue;
}

int HotBatch(double run_ms) {
  if (!(run_ms > 0)) return kMaxHotBatch;
  const double batch = std::ceil(kHotBatchTargetMs / run_ms);
  return static_cast<int>(std::clamp(batch, 1.0, static_cast<double>(kMaxHotBatch)));
}

uint64_t LeadInNs(double enqueue_seconds, int batch) {
  const double ns = 1.25 * std::max(enqueue_seconds, 0.0) * std::max(batch, 1) * 1e9 + kMinLeadInNs;
  return static_cast<uint64_t>(std::min(ns, static_cast<double>(kMaxLeadInNs)));
}

}  // namespace kforge::bench::internal
