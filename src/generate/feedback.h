// Feedback for the teacher after an attempt, as a kernel engineer wants it: the compile log with
// source lines, where the output first went wrong and by how much, registers and spills, and the
// timing against the reference with speedup, GB/s and % of speed of light.
#pragma once

#include <string>

#include "kforge/dataset/trajectory.h"

namespace kforge::generate {

/// Longest compile log passed back, in bytes (the head and the tail are kept).
inline constexpr size_t kMaxFeedbackLog = 6000;

/// The result of `attempt` in a few lines, from its verdict and bench record.
std::string DescribeAttempt(const dataset::Attempt& attempt, const std::string& source);

/// What to do next, given the attempt and whether the episode goes on.
std::string NextStep(const dataset::Attempt& attempt, double target_speedup, bool compile_only);

}  // namespace kforge::generate
