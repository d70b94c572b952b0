// Per-record export filters.
#include "kforge/export/filters.h"

#include <fnmatch.h>

#include <algorithm>
#include <sstream>

#include "export/episode.h"
#include "kforge/common/text.h"

namespace kforge::exporter {

std::optional<std::string_view> Reject(const dataset::Trajectory& t, const Filters& f) {
  if (t.truncated) return "truncated";  // cut to fit a line: not training data
  bool correct = t.correct();
  if (!t.task.unjudgeable.empty()) return "unjudgeable_task";
  if (!correct && Unjudged(t)) return "harness_error";
  if (!correct && !f.include_incorrect) return "incorrect";
  if (!f.include_suspect_timing && std::any_of(t.attempts.begin(), t.attempts.end(), [](const dataset::Attempt& a) {
        return !a.suspect_timing.empty();
      }))
    return "suspect_timing";
  if (f.require_general && correct && !t.attempts[*t.best].Generalises()) return "not_general";
  if (f.min_speedup && !(t.speedup().value_or(0.0) >= *f.min_speedup)) return "min_speedup";
  if (f.max_turns && t.turns() > *f.max_turns) return "max_turns";
  if (f.max_ops_fraction && LibraryOpsFraction(t).value_or(0) > *f.max_ops_fraction)
    return "max_ops_fraction";
  if (f.min_sol_pct && !(BestSolPct(t).kernel.value_or(0.0) >= *f.min_sol_pct)) return "min_sol";
  if (!f.levels.empty() &&
      (!t.task.level || std::find(f.levels.begin(), f.levels.end(), *t.task.level) == f.levels.end()))
    return "level";
  if (!f.tags.empty() && std::none_of(f.tags.begin(), f.tags.end(), [&](const std::string& tag) {
        return std::find(t.task.tags.begin(), t.task.tags.end(), tag) != t.task.tags.end();
      }))
    return "tag";
  if (!f.task_glob.empty() && fnmatch(f.task_glob.c_str(), t.task.id.c_str(), 0) != 0) return "filter";
  return std::nullopt;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

StatusOr<std::vector<int>> ParseLevels(const std::string& text) {
  std::vector<int> levels;
  for (const std::string& item : SplitList(text)) {
    if (item.size() > 3 || item.find_first_not_of("0123456789") != std::string::npos)
      return Status::InvalidArgument(common::Quote(item, 20) + " is not a level number");
    levels.push_back(std::stoi(item));
  }
  if (levels.empty()) return Status::InvalidArgument("no level given");
  return levels;
}

}  // namespace kforge::exporter
