// The sampling loop: times subjects (a candidate, its reference) interleaved on a stream the caller
// owns, cold (L2 flushed before each sample) or hot (back-to-back runs), drops samples taken while
// the SM clock was throttled, and stops when the medians are precise enough. Needs a GPU to run.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/bench_record.h"
#include "kforge/common/status.h"

// The CUDA runtime's stream handle, declared as the runtime does, so that this header (and whoever
// includes it) does not pull in the CUDA runtime headers.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

namespace kforge::bench {

using Mode = common::TimingMode;

/// Its names ("cold", "hot") are common::kTimingModeNames.

struct MeasureOptions {
  /// Cold or hot measurement. Default cold.
  Mode mode = Mode::kCold;
  /// Stop once every subject's median 95% confidence interval has half-width / median <= this.
  /// Default 0.005 (0.5%).
  double max_noise = 0.005;
  /// Kept samples every subject needs before the noise may stop the measurement. Default 10.
  int min_samples = 10;
  /// Rounds (samples per subject, dropped ones included) after which the measurement stops
  /// unconverged. Default 2000.
  int max_samples = 2000;
  /// GPU time of all kept samples of all subjects needed before the noise may stop the measurement.
  /// Default 0.05 s.
  double min_seconds = 0.05;
  /// Wall-clock time, warm-up included, after which the measurement stops unconverged. Default 10 s.
  double max_seconds = 10.0;
  /// Untimed runs of every subject before the first sample (hot mode does at least one, to size its
  /// batches). Default 3.
  int warmup_runs = 3;
  /// Warm-up goes on, in rounds, until this much wall-clock time has passed (at most half of
  /// max_seconds), so that the GPU's clocks have left their idle state. Default 0.1 s.
  double warmup_seconds = 0.1;
  /// A sample whose SM clock is below this fraction of the device's maximum SM clock is dropped.
  /// Default 0.75; 0 keeps every sample.
  double throttle_threshold = 0.75;
};

/// Checks the ranges: 1 <= min_samples <= max_samples, times and max_noise >= 0 (max_seconds > 0),
/// warmup_runs >= 0, throttle_threshold in [0, 1].
Status ValidateMeasureOptions(const MeasureOptions& options);

/// One thing timed (the candidate, the reference). The callbacks enqueue work on the stream they get
/// and must not synchronize it unless noted.
struct Subject {
  /// Shown in records and errors.
  std::string name;
  /// Before each sample (and warm-up run), outside the timed region; may be empty. In cold mode it
  /// runs after the L2 flush, so what it touches may be in L2 when the timed run starts.
  std::function<Status(cudaStream_t)> prepare;
  /// The timed work, enqueued on the stream. Required.
  std::function<Status(cudaStream_t)> run;
  /// After each sample (and warm-up run), outside the timed region, once the stream has finished the
  /// sample; may synchronize. May be empty. A non-ok status ends the measurement with that status.
  std::function<Status(cudaStream_t)> check;
};

/// What was kept of one subject.
struct SubjectSamples {
  std::string name;
  /// Kept samples in the order taken, in milliseconds per run (a hot batch's time / batch).
  std::vector<double> ms;
  /// Samples dropped because the SM clock was throttled.
  int throttled = 0;
  /// Runs per sample: 1 in cold mode; in hot mode chosen from the warm-up so that a batch takes
  /// at least ~0.5 ms.
  int batch = 1;
  /// Timed GPU time of the kept samples (whole batches), in seconds.
  double gpu_seconds = 0;
};

struct Measurement {
  Mode mode = Mode::kCold;
  /// In the order of the subjects measured.
  std::vector<SubjectSamples> subjects;
  /// True when every subject's median met MeasureOptions::max_noise at the stop.
  bool converged = false;
  /// Rounds taken; a round takes one sample of every subject.
  int rounds = 0;
  /// Wall-clock time of Measure, warm-up included.
  double wall_seconds = 0;
  /// Median SM clock over every sample's probe (dropped samples included), in MHz.
  double sm_clock_mhz = 0;
  /// The device's maximum SM clock (cudaDevAttrClockRate), in MHz; 0 when the device does not report
  /// one, and then no sample is dropped.
  double max_sm_clock_mhz = 0;
  /// Bytes written to flush L2 before each cold sample (2x the device's L2); 0 in hot mode.
  size_t l2_flush_bytes = 0;
};

/// Times `subjects` on `stream`, which must belong to the current device and which the caller owns
/// and does not use meanwhile. Warm-up runs come first; then each round takes one sample of every
/// subject, in the given order in even rounds and in reverse order in odd rounds.
///
/// A sample is: (cold: flush L2 ->) prepare -> a short spin kernel that lets the host enqueue the
/// timed work before the GPU reaches it -> event -> run (hot: `batch` times) -> event -> clock probe
/// -> synchronize -> check. A sample whose probe reads an SM clock below throttle_threshold x the
/// maximum is dropped and counted.
///
/// Stops converged once every subject has min_samples kept samples, the kept samples total
/// min_seconds of GPU time and every median is within max_noise; stops at max_samples rounds or
/// max_seconds of wall-clock time otherwise (converged if the medians are precise enough by then).
///
/// Returns the first non-ok status of a callback, InvalidArgument for bad options or subjects, and
/// Unavailable for a failed CUDA call. Allocates its flush buffer and loads its probe kernel once per
/// call, and frees them before returning.
StatusOr<Measurement> Measure(std::vector<Subject>& subjects, const MeasureOptions& options,
                              cudaStream_t stream);

}  // namespace kforge::bench
