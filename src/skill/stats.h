// The statistics of a skill's lift, over tasks paired between two arms: a bootstrap interval of the
// mean per-task difference, an exact McNemar test on paired correctness, Holm's correction across
// models and the minimum detectable effect (docs/skills.md, "The statistics").
#pragma once

#include <cstdint>
#include <vector>

namespace kforge::skill {

/// Two-sided exact McNemar test: `b` pairs right only in the second arm, `c` right only in the first.
/// The binomial(b + c, 1/2) probability of a split at least as uneven; 1 when there is no discordant pair.
double McNemarExactP(int b, int c);

/// Holm's step-down adjustment of `p` (family-wise error), in the order given; each in [0, 1].
std::vector<double> HolmAdjust(const std::vector<double>& p);

struct Interval {
  double mean = 0;
  double low = 0, high = 0;  ///< 95% percentile bootstrap interval of the mean
};

/// The mean of `differences` (one per task) and its 95% bootstrap interval: `resamples` resamples of
/// the tasks with replacement, drawn from a generator seeded with `seed` (the same inputs give the
/// same interval). An empty input gives {0, 0, 0}.
Interval PairedBootstrap(const std::vector<double>& differences, int resamples, uint64_t seed);

/// The smallest mean difference a two-sided test at 5% finds with 80% power over these tasks:
/// (1.96 + 0.84) * s / sqrt(n), where s is the standard deviation of the per-task differences, and
/// at least the noise of two rates of `samples` draws at 1/2 (sqrt(0.5 / samples)), so that a run
/// whose tasks happen to agree does not claim a precision it has not. Infinite for n < 2.
double MinimumDetectableEffect(const std::vector<double>& differences, int samples);

}  // namespace kforge::skill
