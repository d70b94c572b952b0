// The sampling loop's decisions, kept apart from the CUDA calls so that they are CPU-testable:
// clock probe arithmetic, throttle classification, the stopping rule and hot batch sizing.
#pragma once

#include <cstdint>
#include <vector>

#include "kforge/bench/measure.h"
#include "kforge/bench/stats.h"

namespace kforge::bench::internal {

/// Spin time of the clock probe after each sample.
inline constexpr uint64_t kProbeSpinNs = 20'000;
/// A hot batch is sized to take at least this long.
inline constexpr double kHotBatchTargetMs = 0.5;
/// Upper bound of a hot batch.
inline constexpr int kMaxHotBatch = 10'000;
/// Bounds of the spin that lets the host enqueue a sample's timed work ahead of the GPU.
inline constexpr uint64_t kMinLeadInNs = 20'000;
inline constexpr uint64_t kMaxLeadInNs = 20'000'000;

/// SM clock in MHz from a probe's %clock64 and %globaltimer deltas; NaN when `ns_delta` is 0.
double ProbeClockMhz(uint64_t clock_delta, uint64_t ns_delta);

/// Whether a sample taken at `sm_clock_mhz` is dropped: the clock is below threshold x max. Never
/// when the maximum is unknown (<= 0), the threshold is 0 or the reading is not a number.
bool IsThrottled(double sm_clock_mhz, double max_sm_clock_mhz, double threshold);

/// Half-width of the median's confidence interval over the median; +infinity when there is no
/// interval (fewer than six samples) or the median is not positive.
double RelativeHalfWidth(const SampleStats& stats);

enum class StopDecision {
  kContinue,
  kConverged,    // every median is within max_noise, after min_samples and min_seconds
  kUnconverged,  // max_samples or max_seconds reached first
};

/// The stopping rule, checked after each round. `rounds` counts rounds taken (dropped samples
/// included); `wall_seconds` is the time since the measurement began. At max_samples or
/// max_seconds, the decision is kConverged if every median is already within max_noise.
StopDecision DecideStop(const MeasureOptions& options, const std::vector<SubjectSamples>& subjects,
                        int rounds, double wall_seconds);

/// Runs per hot sample for a run of `run_ms`: enough for kHotBatchTargetMs, within [1, kMaxHotBatch].
int HotBatch(double run_ms);

/// Spin before a timed region so that the host enqueues `batch` runs of `enqueue_seconds` each while
/// the GPU waits: 1.25 x the enqueue time plus kMinLeadInNs, at most kMaxLeadInNs.
uint64_t LeadInNs(double enqueue_seconds, int batch);

}  // namespace kforge::bench::internal
