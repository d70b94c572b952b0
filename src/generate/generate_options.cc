// The checks of GenerateOptions that span several fields, done before a run starts anything.
#include <algorithm>
#include <string>

#include "generate/teacher_setup.h"
#include "kforge/common/files.h"
#include "kforge/generate/generate.h"

namespace kforge::generate {

Status CheckGenerateOptions(const GenerateOptions& o) {
  if (!o.teacher)
    return Status::InvalidArgument("--teacher is required (anthropic, openai, replay:FILE, exec:CMD)");
  if (o.out.empty()) return Status::InvalidArgument("--out is required");
  if (o.views.empty()) return Status::InvalidArgument("--views: name at least one view");
  for (size_t i = 0; i < o.views.size(); ++i) {
    if (std::find(o.views.begin(), o.views.begin() + static_cast<std::ptrdiff_t>(i), o.views[i]) !=
        o.views.begin() + static_cast<std::ptrdiff_t>(i))
      return Status::InvalidArgument("--views: " + std::string(ViewName(o.views[i])) + " is named twice");
  }
  if (o.samples < 1) return Status::InvalidArgument("--samples must be at least 1");
  if (o.concurrency < 1) return Status::InvalidArgument("--concurrency must be at least 1");
  if (!(o.cache_warmup_s >= 0)) return Status::InvalidArgument("--cache-warmup must be >= 0 seconds");
  if (o.max_turns < 1) return Status::InvalidArgument("--max-turns must be at least 1");
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    return Status::InvalidArgument("--shard i/n needs 0 <= i < n");
  if (o.max_cost_usd && !(*o.max_cost_usd >= 0)) return Status::InvalidArgument("--max-cost must be >= 0");
  for (size_t i = 0; i < o.skills.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (o.skills[i].name == o.skills[j].name)
        return Status::InvalidArgument("--skill: two skills are named " + o.skills[i].name);
  // --record appends: never to what the run reads (a replayed cassette) nor inside the run folder it
  // keeps, compared by name (a file not created yet counts) and by device and inode.
  if (!o.client.record_path.empty()) {
    if (common::IsInside(o.client.record_path, o.out))
      return Status::InvalidArgument("--record " + o.client.record_path + " is inside the run folder " +
                                     o.out.string() + ", which this run keeps; record to a file outside it");
    if (o.teacher->kind == llm::ProviderKind::kReplay &&
        common::SameFile(o.client.record_path, o.teacher->argument))
      return Status::InvalidArgument("--record " + o.client.record_path + " is " + o.teacher->argument +
                                     ", which this run reads; record to another file");
  }
  return CheckTeacherOptions(o);
}

}  // namespace kforge::generate
