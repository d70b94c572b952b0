// KernelBench's metrics over episodes (correctness, fast_p, geometric-mean speedup, pass@k), as
// KernelBench defines them, per level and overall, plus what KernelBench does not report: the
// speedup distribution, first-turn rates, repair turns, % of speed of light, tokens and cost per
// correct kernel. docs/export.md states every definition.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kforge::exporter {

struct Episode;  // one record's facts (src/export/episode.h)

/// The thresholds p of fast_p that reports show.
inline constexpr std::array<double, 4> kFastP = {0, 1, 1.5, 2};

/// The unbiased pass@k estimator of n samples of which c are correct: 1 - C(n-c, k) / C(n, k),
/// and 1 when n - c < k. Requires 0 <= c <= n and 1 <= k <= n.
double PassAtK(int64_t n, int64_t c, int64_t k);

/// Counts of one task's episodes: a per-task table row and the unit of bootstrap resampling.
struct TaskTally {
  std::optional<int> level;
  int64_t episodes = 0;  ///< judged
  int64_t correct = 0;
  int64_t timed = 0;  ///< correct with a speedup
  int64_t unjudged = 0;
  std::array<int64_t, kFastP.size()> fast{};  ///< correct and speedup > kFastP[i]
  int64_t mostly_library_ops = 0;             ///< correct, most GPU time in library ops
  double log_speedup_sum = 0;                 ///< over timed episodes
  std::optional<double> best_speedup;
  int64_t turns_sum = 0;
};

/// The quantiles of a speedup distribution.
struct Quantiles {
  double p10 = 0, p25 = 0, p50 = 0, p75 = 0, p90 = 0;
};

/// Every metric of one group of episodes (a level, or all). Rates are over `episodes`, the judged
/// ones; an optional is empty when its denominator is 0.
struct GroupMetrics {
  std::string name;  ///< "all", "level 1", ..., "no level"
  int64_t episodes = 0;
  int64_t correct = 0;
  int64_t timed = 0;
  int64_t unjudged = 0;    ///< harness errors, outside every rate
  int64_t llm_errors = 0;  ///< included in the rates (the teacher failed)
  int64_t tasks = 0;
  /// Correct in KernelBench's meaning: the best attempt is ok at the task's declared sizes.
  std::optional<double> correctness;
  /// Of `correct`, those that were also correct at the task's derived sizes (Episode::general), and
  /// their rate over `episodes`.
  int64_t correct_general = 0;
  std::optional<double> general_correctness;
  /// Correct episodes whose timing kforge refused (Episode::suspect_timing): not in fast_p's numerators,
  /// the geomean, the speedup quantiles or %SOL.
  int64_t suspect_timing = 0;
  std::array<std::optional<double>, kFastP.size()> fast_p;
  /// Correct episodes whose best attempt spent most of its GPU time in library ops
  /// (Episode::mostly_library_ops).
  int64_t mostly_library_ops = 0;
  /// fast_p with those episodes counted as not fast (still in the denominator): the speedups of
  /// kforge-compiled kernels only.
  std::array<std::optional<double>, kFastP.size()> fast_p_without_library_ops;
  std::optional<double> geomean_speedup;  ///< over timed correct episodes
  std::optional<Quantiles> speedup_quantiles;
  /// (k, mean pass@k over tasks with at least k episodes), for k in 1, 5, 10, 20, 50, 100 up to the
  /// largest number of episodes of a task; empty when no task has more than one.
  std::vector<std::pair<int, double>> pass_at_k;
  std::optional<double> first_turn_compile_rate;
  std::optional<double> first_turn_correct_rate;
  std::optional<double> mean_repair_turns;  ///< first correct turn - 1, over episodes with one
  std::optional<double> median_sol_pct;     ///< over correct episodes with a roofline
  /// Over the same episodes, the references' own % of speed of light (timed beside the kernel).
  std::optional<double> median_reference_sol_pct;
  std::optional<double> tokens_per_correct;
  std::optional<double> cost_per_correct;
  bool cost_known = true;  ///< false when some episode's cost was not known (then a lower bound)
  /// [t] = episodes whose first correct attempt came at turn t (index 0 unused).
  std::vector<int64_t> first_correct_turns;
  std::vector<float> speedups;  ///< of timed correct episodes, sorted ascending
};

/// Accumulates episodes one at a time (memory: a few numbers per episode's speedup, per task and
/// per level) and computes the metrics.
class MetricsBuilder {
 public:
  void Add(const Episode& episode);

  /// "all" first, then one group per level in order, "no level" last (only groups with episodes).
  std::vector<GroupMetrics> Groups() const;
  const std::map<std::string, TaskTally>& tasks() const { return tasks_; }

 private:
  struct Acc {
    int64_t episodes = 0, correct = 0, unjudged = 0, llm_errors = 0, general = 0, suspect_timing = 0;
    int64_t first_compiled = 0, first_correct = 0;
    int64_t repair_sum = 0, repaired = 0;
    int64_t tokens = 0;
    double cost = 0;
    bool cost_known = true;
    std::array<int64_t, kFastP.size()> fast{};
    std::array<int64_t, kFastP.size()> fast_own{};  ///< fast, not mostly library ops
    int64_t mostly_library_ops = 0;
    double log_speedup_sum = 0;
    std::vector<float> speedups;
    std::vector<float> sol_pcts;
    std::vector<float> reference_sol_pcts;
    std::vector<int64_t> first_correct_turns;
  };
  static void AddTo(Acc& acc, const Episode& episode);
  static GroupMetrics Finish(const std::string& name, const Acc& acc,
                             const std::vector<const TaskTally*>& tasks);

  Acc all_;
  std::map<std::optional<int>, Acc> levels_;
  std::map<std::string, TaskTally> tasks_;
};

/// A group's metrics computed from task tallies alone (the fast_p, correctness and geometric-mean
/// subset): used for bootstrap resamples.
struct TallyMetrics {
  int64_t episodes = 0;
  std::optional<double> correctness;
  std::array<std::optional<double>, kFastP.size()> fast_p;
  std::optional<double> geomean_speedup;
};
TallyMetrics FromTallies(const std::vector<const TaskTally*>& tallies);

}  // namespace kforge::exporter
