// Which tasks a generate run takes: those its filter matches (without the unjudgeable ones, unless
// asked), then its shard of them, each with the reference program the teacher is sent.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/generate/generate.h"

namespace kforge::generate {

struct TaskSelection {
  /// The run's shard of the selected tasks, in task-tree order; points into the tree passed in.
  std::vector<const common::Task*> shard;
  /// Task id -> its reference program as the teacher sees it (cut when long).
  std::map<std::string, std::string> references;
};

/// Whether `id` matches one of the comma-separated globs of `filter` (all ids when it is empty).
bool MatchesFilter(const std::string& filter, const std::string& id);

/// Selects and shards `tasks` by `options` and reads their references, warning about tasks left out
/// and long references. InvalidArgument when no task matches; an empty shard (more shards than
/// tasks) is a warning and an empty selection.
StatusOr<TaskSelection> SelectTasks(const GenerateOptions& options, const std::vector<common::Task>& tasks);

}  // namespace kforge::generate
