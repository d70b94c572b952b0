// Attempts from candidates and judgments, and the feedback on them.
#include "generate/attempt.h"

#include <cmath>
#include <utility>

#include "generate/feedback.h"
#include "kforge/common/verdict.h"

namespace kforge::generate {
namespace {

/// The bench record as kept in a trajectory: without the raw samples, which only bench users need.
common::BenchResult CompactBench(common::BenchResult bench) {
  bench.candidate.samples_ms.clear();
  if (bench.reference) bench.reference->samples_ms.clear();
  return bench;
}

}  // namespace

dataset::Attempt StartAttempt(const Candidate& candidate, int turn) {
  dataset::Attempt attempt;
  attempt.turn = turn;
  attempt.tool_call_id = candidate.tool_call_id;
  if (!candidate.solution.ok()) {
    attempt.status = std::nullopt;  // no solution
    attempt.parse_error = candidate.solution.status().message();
  } else {
    attempt.solution = *candidate.solution;
  }
  return attempt;
}

void FinishAttempt(dataset::Attempt& attempt, bench::Judgment judged, bool compile_only) {
  const common::Verdict& verdict = judged.verdict;
  attempt.verdict = verdict;
  attempt.status = verdict.status;
  attempt.compiled = common::Compiled(verdict.status) && verdict.compile.has_value();
  attempt.correct = !compile_only && verdict.status == common::VerdictStatus::kOk;
  if (attempt.correct && judged.bench) {
    const bench::BenchResult& timed = *judged.bench;
    attempt.bench = CompactBench(timed);
    if (timed.status == common::VerdictStatus::kOk) {
      attempt.suspect_timing = common::SuspectTiming(timed);
      // A refused timing is no speedup: the episode does not count it as faster.
      if (std::isfinite(timed.speedup.ratio) && attempt.suspect_timing.empty())
        attempt.speedup = timed.speedup.ratio;
    } else if (timed.status != common::VerdictStatus::kHarnessError) {
      attempt.correct = false;  // the timed runs are checked too: a fault there is the candidate's
      attempt.status = timed.status;
    }
  }
}

bool ReachedTarget(const dataset::Attempt& attempt, bool compile_only, double target_speedup) {
  if (compile_only) return attempt.Is(common::VerdictStatus::kOk);
  return attempt.correct && attempt.speedup && *attempt.speedup >= target_speedup;
}

std::string AttemptFeedback(const PromptSet& prompts, const dataset::Attempt& attempt, bool done,
                            double target_speedup, bool compile_only) {
  const std::string source = attempt.solution ? attempt.solution->source : "";
  const std::string result = DescribeAttempt(attempt, source);
  auto text =
      Render(prompts.feedback,
             {{"result", result},
              {"next_step", done ? std::string("Done.") : NextStep(attempt, target_speedup, compile_only)}},
             "feedback.md");
  return text.ok() ? *text : result;
}

}  // namespace kforge::generate
