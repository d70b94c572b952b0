// Statistics of timing samples: order statistics, noise, the median's confidence interval and a
// bootstrap interval for the speedup of one subject over another. Pure CPU code.
#pragma once

#include <cstdint>
#include <vector>

#include "kforge/common/bench_record.h"

namespace kforge::bench {

using common::SampleStats;
using common::SpeedupEstimate;

/// Summarizes `ms` (any order). All fields are NaN, and count 0, when `ms` is empty.
SampleStats Summarize(std::vector<double> ms);

/// Resamples both sets with replacement `iterations` times and takes the (1 - confidence) / 2 and
/// (1 + confidence) / 2 percentiles of the resampled median ratios. The same inputs and `seed` give
/// the same interval on every platform (the resampling does not use std:: distributions).
SpeedupEstimate BootstrapSpeedup(const std::vector<double>& reference_ms,
                                 const std::vector<double>& candidate_ms, uint64_t seed,
                                 int iterations = 2000, double confidence = 0.95);

}  // namespace kforge::bench
