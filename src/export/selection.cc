// Dedup, per-task caps and balance over candidate summaries.
#include "export/selection.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "kforge/export/split.h"

namespace kforge::exporter {
namespace {

std::string GroupOf(const TaskEntry& task, Balance balance) {
  if (balance == Balance::kTag) return task.group_tag;
  return task.level ? "level " + std::to_string(*task.level) : "no level";
}

}  // namespace

bool Better(const Candidate& a, uint32_t ai, const Candidate& b, uint32_t bi) {
  if (a.correct != b.correct) return a.correct;
  bool a_timed = !std::isnan(a.speedup), b_timed = !std::isnan(b.speedup);
  if (a_timed != b_timed) return a_timed;
  if (a_timed && a.speedup != b.speedup) return a.speedup > b.speedup;
  if (a.turns != b.turns) return a.turns < b.turns;
  return ai < bi;
}

namespace {

/// Caps every --balance group at the smallest group's size (or --balance-cap), taking each task's best
/// kept records in turns; what no longer fits is counted as dropped for "balance".
void BalanceGroups(const std::vector<TaskEntry>& tasks, const SelectionOptions& options,
                   std::vector<std::vector<uint32_t>>& by_task, Selection& result) {
  // Group -> its tasks' kept lists, best first; tasks in a stable pseudo-random order.
  std::map<std::string, std::vector<uint32_t>> groups;
  for (uint32_t t = 0; t < tasks.size(); ++t)
    if (!by_task[t].empty()) groups[GroupOf(tasks[t], options.balance)].push_back(t);
  int64_t cap = std::numeric_limits<int64_t>::max();
  if (options.balance_cap) {
    cap = *options.balance_cap;
  } else {
    for (const auto& [name, members] : groups) {
      int64_t size = 0;
      for (uint32_t t : members) size += static_cast<int64_t>(by_task[t].size());
      cap = std::min(cap, size);
    }
  }
  for (auto& [name, members] : groups) {
    std::vector<std::pair<double, uint32_t>> order;
    for (uint32_t t : members) order.emplace_back(TaskFraction(tasks[t].id), t);
    std::sort(order.begin(), order.end());
    for (size_t m = 0; m < members.size(); ++m) members[m] = order[m].second;
    // Round robin: every task's best, then every task's second best, ...
    std::vector<std::vector<uint32_t>> taken(members.size());
    int64_t count = 0;
    for (size_t rank = 0;; ++rank) {
      bool any = false;
      for (size_t m = 0; m < members.size(); ++m) {
        const std::vector<uint32_t>& list = by_task[members[m]];
        if (rank >= list.size()) continue;
        any = true;
        if (count < cap) {
          taken[m].push_back(list[rank]);
          ++count;
        } else {
          ++result.dropped["balance"];
        }
      }
      if (!any) break;
    }
    for (size_t m = 0; m < members.size(); ++m) by_task[members[m]] = std::move(taken[m]);
  }
}

}  // namespace

Selection Select(const std::vector<TaskEntry>& tasks, const std::vector<Candidate>& candidates,
                 const std::vector<CompactMinHash>& signatures, const SelectionOptions& options) {
  Selection result;
  std::vector<std::vector<uint32_t>> by_task(tasks.size());
  for (uint32_t i = 0; i < candidates.size(); ++i) {
    if (tasks[candidates[i].task].held_out) {
      ++result.dropped["holdout_similar"];
      continue;
    }
    by_task[candidates[i].task].push_back(i);
  }
  bool near = options.near_dup.has_value() && signatures.size() == candidates.size();
  for (std::vector<uint32_t>& list : by_task) {
    std::sort(list.begin(), list.end(),
              [&](uint32_t a, uint32_t b) { return Better(candidates[a], a, candidates[b], b); });
    std::unordered_set<uint64_t> keys;
    std::vector<uint32_t> kept;
    for (uint32_t i : list) {
      if (!keys.insert(candidates[i].key).second) {
        ++result.dropped["duplicate"];
        continue;
      }
      if (near && candidates[i].has_solution && std::any_of(kept.begin(), kept.end(), [&](uint32_t k) {
            return candidates[k].has_solution &&
                   Similarity(signatures[i], signatures[k]) >= *options.near_dup;
          })) {
        ++result.dropped["near_duplicate"];
        continue;
      }
      if (options.per_task && static_cast<int64_t>(kept.size()) >= *options.per_task) {
        ++result.dropped["per_task"];
        continue;
      }
      kept.push_back(i);
    }
    list = std::move(kept);
  }

  if (options.balance != Balance::kNone) BalanceGroups(tasks, options, by_task, result);
  for (const std::vector<uint32_t>& list : by_task)
    result.kept.insert(result.kept.end(), list.begin(), list.end());
  std::sort(result.kept.begin(), result.kept.end());
  return result;
}

}  // namespace kforge::exporter
