// Per-record facts for metrics.
#include "export/episode.h"

#include "kforge/common/library_ops.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/verdict.h"

namespace kforge::exporter {

bool Unjudged(const dataset::Trajectory& t) {
  if (!t.task.unjudgeable.empty()) return true;  // the task itself cannot tell a kernel from a no-op
  if (t.first_correct_turn()) return false;
  if (t.stop == dataset::StopReason::kHarnessError) return true;
  for (const dataset::Attempt& a : t.attempts)
    if (a.Is(common::VerdictStatus::kHarnessError)) return true;
  return false;
}

std::optional<double> LibraryOpsFraction(const dataset::Trajectory& t) {
  if (!t.best) return std::nullopt;
  const dataset::Attempt& best = t.attempts[*t.best];
  std::optional<common::PlanSplit> split = best.bench ? best.bench->plan_split : std::nullopt;
  if (!split && best.verdict) split = best.verdict->timing.plan_split;
  if (!split) return std::nullopt;
  return split->ops_fraction;
}

BestSol BestSolPct(const dataset::Trajectory& t) {
  BestSol sol;
  if (!t.correct() || !t.best || !t.attempts[*t.best].suspect_timing.empty()) return sol;
  const std::optional<common::BenchResult>& bench = t.attempts[*t.best].bench;
  if (!bench || !bench->roofline) return sol;
  if (bench->roofline->sol_pct > 0) sol.kernel = bench->roofline->sol_pct;  // 0: unknown
  if (bench->roofline->reference_sol_pct > 0) sol.reference = bench->roofline->reference_sol_pct;
  return sol;
}

Episode Summarize(const dataset::Trajectory& t) {
  Episode e;
  e.task_id = t.task.id;
  e.level = t.task.level;
  e.unjudged = Unjudged(t);
  e.llm_error = t.stop == dataset::StopReason::kLlmError;
  e.correct = t.correct();
  e.speedup = t.speedup();
  if (e.correct) {
    const dataset::Attempt& best = t.attempts[*t.best];
    e.general = best.Generalises();
    e.suspect_timing = !best.suspect_timing.empty();
  }
  e.mostly_library_ops = e.correct && LibraryOpsFraction(t).value_or(0) > common::kMostlyLibraryOps;
  for (const dataset::Attempt& a : t.attempts) {
    if (a.turn != 1) continue;
    e.first_turn_compiled = e.first_turn_compiled || a.compiled;
    e.first_turn_correct = e.first_turn_correct || a.correct;
  }
  e.first_correct_turn = t.first_correct_turn();
  e.turns = t.turns();
  const BestSol sol = BestSolPct(t);
  e.sol_pct = sol.kernel;
  e.reference_sol_pct = sol.reference;
  const dataset::UsageInfo& u = t.usage;
  e.tokens = u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;
  e.cost_usd = u.cost_usd;
  e.cost_known = u.cost_known;
  return e;
}

}  // namespace kforge::exporter
