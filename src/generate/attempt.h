// One candidate judged into an attempt, and the feedback on it: the steps of generate's loop that
// its episodes and the completion judge (completion_judge.cc) share, so that reinforcement learning
// sees the verdicts and feedback that fine-tuning data was made from.
#pragma once

#include <string>

#include "generate/prompts.h"
#include "generate/reply.h"
#include "kforge/bench/judge.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::generate {

/// Candidates of one reply judged at most (a reply may ask for a thousand `run` calls).
inline constexpr size_t kMaxCandidatesPerReply = 8;

/// The attempt of `candidate` before it is judged: "no_solution" with the parse error when it has
/// no solution (nothing to judge), else its solution.
dataset::Attempt StartAttempt(const Candidate& candidate, int turn);

/// Fills `attempt` from its judgment: status, compiled, correct, and for a timed correct one its
/// bench record, speedup and any refused timing.
void FinishAttempt(dataset::Attempt& attempt, bench::Judgment judged, bool compile_only);

/// Whether the attempt has what an episode comes for: compile-only, a clean compile; otherwise
/// correct and at least `target_speedup` times faster than the reference.
bool ReachedTarget(const dataset::Attempt& attempt, bool compile_only, double target_speedup);

/// The feedback the teacher gets on `attempt` (feedback.md with the result and the next step; "Done."
/// as the next step when the episode ends with it).
std::string AttemptFeedback(const PromptSet& prompts, const dataset::Attempt& attempt, bool done,
                            double target_speedup, bool compile_only);

}  // namespace kforge::generate
