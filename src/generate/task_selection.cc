// The tasks of a generate run (generate/task_selection.h).
#include "generate/task_selection.h"

#include <fnmatch.h>

#include <spdlog/spdlog.h>

#include "generate/task_view.h"

namespace kforge::generate {
namespace {

/// One warning for the tasks the filter matched that no kernel can be judged on, by reason.
void WarnUnjudgeable(const std::map<std::string, int>& unjudgeable) {
  if (unjudgeable.empty()) return;
  std::string counts;
  int total = 0;
  for (const auto& [reason, n] : unjudgeable) {
    counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + reason;
    total += n;
  }
  spdlog::warn(
      "generate: left out {} task{} that no kernel can be judged on ({}); --include-degenerate runs them",
      total, total == 1 ? "" : "s", counts);
}

}  // namespace

bool MatchesFilter(const std::string& filter, const std::string& id) {
  if (filter.empty()) return true;
  size_t start = 0;
  while (start <= filter.size()) {
    size_t comma = std::min(filter.find(',', start), filter.size());
    std::string glob = filter.substr(start, comma - start);
    if (!glob.empty() && fnmatch(glob.c_str(), id.c_str(), 0) == 0) return true;
    start = comma + 1;
  }
  return false;
}

StatusOr<TaskSelection> SelectTasks(const GenerateOptions& options,
                                    const std::vector<common::Task>& all_tasks) {
  std::vector<const common::Task*> tasks;
  std::map<std::string, int> unjudgeable;  // by reason, tasks left out
  for (const common::Task& task : all_tasks) {
    if (!MatchesFilter(options.filter, task.id)) continue;
    if (task.Unjudgeable() && !options.include_unjudgeable) {
      ++unjudgeable[std::string(task.UnjudgeableReason())];
      continue;
    }
    tasks.push_back(&task);
  }
  WarnUnjudgeable(unjudgeable);
  TaskSelection selection;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (static_cast<int>(i % options.shard_count) == options.shard_index) selection.shard.push_back(tasks[i]);
  if (tasks.empty())
    return Status::InvalidArgument("no task under " + options.tasks_root.string() +
                                   (options.filter.empty() ? "" : " matches --filter " + options.filter));
  if (selection.shard
          .empty()) {  // more shards than tasks (a job array sized for a larger set): nothing to do
    spdlog::warn("generate: shard {}/{} holds none of the {} tasks; nothing to do", options.shard_index,
                 options.shard_count, tasks.size());
    return selection;
  }
  for (const common::Task* task : selection.shard) {
    size_t total = 0;
    KFORGE_ASSIGN_OR_RETURN(std::string text, ReadTaskReference(*task, total));
    if (total > kMaxReferenceBytes)
      spdlog::warn("generate: {}: its reference is {} bytes; the teacher sees the first {} KiB", task->id,
                   total, kMaxReferenceBytes >> 10);
    selection.references[task->id] = std::move(text);
  }
  return selection;
}

}  // namespace kforge::generate
