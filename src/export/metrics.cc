// KernelBench metrics and kforge's additions, from episodes.
#include "kforge/export/metrics.h"

#include <algorithm>
#include <cmath>

#include "export/episode.h"

namespace kforge::exporter {
namespace {

constexpr int kPassK[] = {1, 5, 10, 20, 50, 100};

std::optional<double> Rate(int64_t count, int64_t of) {
  if (of <= 0) return std::nullopt;
  return static_cast<double>(count) / static_cast<double>(of);
}

/// Linear interpolation between order statistics (numpy's default).
double Quantile(const std::vector<float>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (static_cast<double>(sorted[hi]) - sorted[lo]) * frac;
}

}  // namespace

double PassAtK(int64_t n, int64_t c, int64_t k) {
  if (n - c < k) return 1.0;
  // 1 - prod_{i = n-c+1}^{n} (1 - k / i), as HumanEval and KernelBench compute it.
  double miss = 1.0;
  for (int64_t i = n - c + 1; i <= n; ++i) miss *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  return 1.0 - miss;
}

void MetricsBuilder::AddTo(Acc& acc, const Episode& e) {
  if (e.unjudged) {
    ++acc.unjudged;
    return;
  }
  ++acc.episodes;
  acc.llm_errors += e.llm_error;
  acc.first_compiled += e.first_turn_compiled;
  acc.first_correct += e.first_turn_correct;
  acc.tokens += e.tokens;
  acc.cost += e.cost_usd;
  acc.cost_known = acc.cost_known && e.cost_known;
  if (e.first_correct_turn) {
    acc.repair_sum += *e.first_correct_turn - 1;
    ++acc.repaired;
    size_t turn = static_cast<size_t>(std::max(*e.first_correct_turn, 0));
    if (acc.first_correct_turns.size() <= turn) acc.first_correct_turns.resize(turn + 1);
    ++acc.first_correct_turns[turn];
  }
  if (!e.correct) return;
  ++acc.correct;
  acc.general += e.general;
  acc.suspect_timing += e.suspect_timing;
  acc.mostly_library_ops += e.mostly_library_ops;
  if (e.sol_pct) acc.sol_pcts.push_back(static_cast<float>(*e.sol_pct));
  if (e.sol_pct && e.reference_sol_pct) acc.reference_sol_pcts.push_back(static_cast<float>(*e.reference_sol_pct));
  if (!e.speedup || !(*e.speedup > 0)) return;
  acc.speedups.push_back(static_cast<float>(*e.speedup));
  acc.log_speedup_sum += std::log(*e.speedup);
  for (size_t i = 0; i < kFastP.size(); ++i) {
    acc.fast[i] += *e.speedup > kFastP[i];
    acc.fast_own[i] += *e.speedup > kFastP[i] && !e.mostly_library_ops;
  }
}

void MetricsBuilder::Add(const Episode& e) {
  AddTo(all_, e);
  AddTo(levels_[e.level], e);
  TaskTally& t = tasks_[e.task_id];
  t.level = e.level;
  if (e.unjudged) {
    ++t.unjudged;
    return;
  }
  ++t.episodes;
  t.turns_sum += e.turns;
  if (!e.correct) return;
  ++t.correct;
  t.mostly_library_ops += e.mostly_library_ops;
  if (!e.speedup || !(*e.speedup > 0)) return;
  ++t.timed;
  t.log_speedup_sum += std::log(*e.speedup);
  for (size_t i = 0; i < kFastP.size(); ++i) t.fast[i] += *e.speedup > kFastP[i];
  t.best_speedup = std::max(t.best_speedup.value_or(0.0), *e.speedup);
}

GroupMetrics MetricsBuilder::Finish(const std::string& name, const Acc& acc,
                                    const std::vector<const TaskTally*>& tasks) {
  GroupMetrics g;
  g.name = name;
  g.episodes = acc.episodes;
  g.correct = acc.correct;
  g.timed = static_cast<int64_t>(acc.speedups.size());
  g.unjudged = acc.unjudged;
  g.llm_errors = acc.llm_errors;
  g.correctness = Rate(acc.correct, acc.episodes);
  g.correct_general = acc.general;
  g.general_correctness = Rate(acc.general, acc.episodes);
  g.suspect_timing = acc.suspect_timing;
  for (size_t i = 0; i < kFastP.size(); ++i) g.fast_p[i] = Rate(acc.fast[i], acc.episodes);
  g.mostly_library_ops = acc.mostly_library_ops;
  for (size_t i = 0; i < kFastP.size(); ++i)
    g.fast_p_without_library_ops[i] = Rate(acc.fast_own[i], acc.episodes);
  if (g.timed > 0) g.geomean_speedup = std::exp(acc.log_speedup_sum / static_cast<double>(g.timed));
  g.speedups = acc.speedups;
  std::sort(g.speedups.begin(), g.speedups.end());
  if (!g.speedups.empty()) {
    const auto& s = g.speedups;
    g.speedup_quantiles =
        Quantiles{Quantile(s, 0.1), Quantile(s, 0.25), Quantile(s, 0.5), Quantile(s, 0.75), Quantile(s, 0.9)};
  }
  int64_t most = 0;
  for (const TaskTally* t : tasks) {
    most = std::max(most, t->episodes);
    g.tasks += t->episodes + t->unjudged > 0;
  }
  if (most > 1) {
    for (int k : kPassK) {
      if (k > most) break;
      double sum = 0;
      int64_t counted = 0;
      for (const TaskTally* t : tasks) {
        if (t->episodes < k) continue;
        sum += PassAtK(t->episodes, t->correct, k);
        ++counted;
      }
      g.pass_at_k.emplace_back(k, sum / static_cast<double>(counted));
    }
  }
  g.first_turn_compile_rate = Rate(acc.first_compiled, acc.episodes);
  g.first_turn_correct_rate = Rate(acc.first_correct, acc.episodes);
  if (acc.repaired > 0)
    g.mean_repair_turns = static_cast<double>(acc.repair_sum) / static_cast<double>(acc.repaired);
  if (!acc.sol_pcts.empty()) {
    std::vector<float> sol = acc.sol_pcts;
    std::sort(sol.begin(), sol.end());
    g.median_sol_pct = Quantile(sol, 0.5);
  }
  if (!acc.reference_sol_pcts.empty()) {
    std::vector<float> sol = acc.reference_sol_pcts;
    std::sort(sol.begin(), sol.end());
    g.median_reference_sol_pct = Quantile(sol, 0.5);
  }
  if (acc.correct > 0) {
    g.tokens_per_correct = static_cast<double>(acc.tokens) / static_cast<double>(acc.correct);
    g.cost_per_correct = acc.cost / static_cast<double>(acc.correct);
  }
  g.cost_known = acc.cost_known;
  g.first_correct_turns = acc.first_correct_turns;
  return g;
}

std::vector<GroupMetrics> MetricsBuilder::Groups() const {
  std::vector<const TaskTally*> all;
  std::map<std::optional<int>, std::vector<const TaskTally*>> by_level;
  for (const auto& [id, t] : tasks_) {
    all.push_back(&t);
    by_level[t.level].push_back(&t);
  }
  std::vector<GroupMetrics> groups = {Finish("all", all_, all)};
  // std::map orders nullopt first; "no level" goes last.
  for (const auto& [level, acc] : levels_)
    if (level) groups.push_back(Finish("level " + std::to_string(*level), acc, by_level[level]));
  if (auto it = levels_.find(std::nullopt); it != levels_.end())
    groups.push_back(Finish("no level", it->second, by_level[std::nullopt]));
  return groups;
}

TallyMetrics FromTallies(const std::vector<const TaskTally*>& tallies) {
  TallyMetrics m;
  int64_t correct = 0, timed = 0;
  std::array<int64_t, kFastP.size()> fast{};
  double log_sum = 0;
  for (const TaskTally* t : tallies) {
    m.episodes += t->episodes;
    correct += t->correct;
    timed += t->timed;
    log_sum += t->log_speedup_sum;
    for (size_t i = 0; i < kFastP.size(); ++i) fast[i] += t->fast[i];
  }
  m.correctness = Rate(correct, m.episodes);
  for (size_t i = 0; i < kFastP.size(); ++i) m.fast_p[i] = Rate(fast[i], m.episodes);
  if (timed > 0) m.geomean_speedup = std::exp(log_sum / static_cast<double>(timed));
  return m;
}

}  // namespace kforge::exporter
