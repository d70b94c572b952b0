// Statistics of timing samples: order statistics, noise, the median's confidence interval and a
// bootstrap interval for the speedup of one subject over another. Pure CPU code.
#pragma once

#include <cstdint>
#include <vector>

namespace kforge::bench {

/// Summary of one subject's samples, in the samples' unit (milliseconds throughout kforge).
/// Quantities that the samples do not determine are NaN.
struct SampleStats {
  int count = 0;
  double median = 0;
  double p10 = 0;  ///< Percentiles interpolate linearly between order statistics (numpy's default).
  double p90 = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  /// Relative standard deviation: sample standard deviation (n - 1) / mean, as nvbench reports it.
  /// NaN below two samples.
  double noise = 0;
  /// Distribution-free 95% confidence interval of the median: the order statistics x(j) and
  /// x(n + 1 - j) for the largest j whose binomial coverage is at least 95%. NaN below six samples,
  /// where no such pair exists.
  double median_lo = 0;
  double median_hi = 0;
};

/// Summarizes `ms` (any order). All fields are NaN, and count 0, when `ms` is empty.
SampleStats Summarize(std::vector<double> ms);

/// The speedup of a candidate over a reference, with a percentile bootstrap interval.
struct SpeedupEstimate {
  double ratio = 0;  ///< median(reference) / median(candidate); NaN when either set is empty.
  double lo = 0;     ///< Bootstrap interval at `confidence`; NaN when it cannot be computed.
  double hi = 0;
  double confidence = 0;
  int iterations = 0;
};

/// Resamples both sets with replacement `iterations` times and takes the (1 - confidence) / 2 and
/// (1 + confidence) / 2 percentiles of the resampled median ratios. The same inputs and `seed` give
/// the same interval on every platform (the resampling does not use std:: distributions).
SpeedupEstimate BootstrapSpeedup(const std::vector<double>& reference_ms,
                                 const std::vector<double>& candidate_ms, uint64_t seed,
                                 int iterations = 2000, double confidence = 0.95);

}  // namespace kforge::bench
