// Episode: the facts of one trajectory record that metrics need, small enough to keep for every
// record of a large run. Also the one definition of a record kforge could not judge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kforge/dataset/trajectory.h"

namespace kforge::exporter {

/// True when kforge could not judge the episode: its task was found unjudgeable at import
/// (degenerate, nondeterministic, ill-conditioned), or it stopped on a harness error or an attempt's
/// status is `harness_error` and no attempt was correct. Such a record is never a negative (nor a
/// positive): report counts it apart and export leaves it out.
bool Unjudged(const dataset::Trajectory& trajectory);

/// The share of the best attempt's GPU time that went to library ops (plan v2 `op` and `fill` steps):
/// `plan_split.ops_fraction` of its bench record, else of its verdict's timing; nullopt when its plan
/// has no library ops or never ran on a GPU.
std::optional<double> LibraryOpsFraction(const dataset::Trajectory& trajectory);

/// `roofline.sol_pct` and `roofline.reference_sol_pct` of the best attempt's bench record.
struct BestSol {
  std::optional<double> kernel;     ///< the kernel's % of speed of light
  std::optional<double> reference;  ///< the reference's, timed beside it
};
/// The best attempt's roofline figures, when it is correct and its task has a cost.
BestSol BestSolPct(const dataset::Trajectory& trajectory);

struct Episode {
  std::string task_id;
  std::optional<int> level;
  bool unjudged = false;   ///< see Unjudged(); not counted in the rates
  bool llm_error = false;  ///< stopped on the teacher's error
  bool correct = false;    ///< the best attempt is correct
  /// Correct and, where its task has derived sizes, correct at those too (common::Generalises).
  bool general = false;
  /// Speedup of the best attempt, when it is correct and was timed, and the timing was believed.
  std::optional<double> speedup;
  /// The best attempt is correct but kforge refused its timing (Attempt::suspect_timing): no speedup
  /// or %SOL of it counts anywhere.
  bool suspect_timing = false;
  /// The best attempt is correct and spent most of its GPU time in library ops (LibraryOpsFraction
  /// above common::kMostlyLibraryOps): its speed is the library's, not its kernels'.
  bool mostly_library_ops = false;
  /// The attempt of assistant turn 1 compiled / was correct (false when turn 1 gave none).
  bool first_turn_compiled = false;
  bool first_turn_correct = false;
  std::optional<int> first_correct_turn;  ///< 1-based
  int turns = 0;                          ///< assistant turns
  /// `roofline.sol_pct` of the best attempt's bench record, when correct and known.
  std::optional<double> sol_pct;
  /// `roofline.reference_sol_pct` of the same record: how close the reference itself came.
  std::optional<double> reference_sol_pct;
  int64_t tokens = 0;  ///< input, output and cache tokens of the episode
  double cost_usd = 0;
  bool cost_known = true;
};

Episode Summarize(const dataset::Trajectory& trajectory);

}  // namespace kforge::exporter
